"""One expression that reads a buffer both as it was before a pending assign and as the assign leaves it: the old reads
are computed before the write, whether the expression is realized or its schedule is run by hand (found by an outside
review: `(b + b * 2) + b.assign(b * 3)` and `old + b` after `b.assign(...)` read the new memory twice)."""
import random
import numpy as np
import pytest
from lazynb import Tensor
from lazynb.engine.realize import run_schedule

def test_the_reviews_cases():
  bn = np.arange(4, dtype=np.float32)
  b = Tensor(bn.copy()).realize()
  assert ((b + b * 2) + b.assign(b * 3)).tolist() == (6 * bn).tolist()
  b = Tensor(bn.copy()).realize()
  old = b * 2
  b.assign(b + 1)
  v = old + b
  del old
  assert v.tolist() == (3 * bn + 1).tolist()
  b = Tensor(bn.copy()).realize()
  v0 = b * 2
  v1 = b + v0
  b.assign(v0 + b)
  v2 = v1 + b
  run_schedule(v2.schedule())
  assert v2.tolist() == (6 * bn).tolist() and b.tolist() == (3 * bn).tolist()

@pytest.mark.parametrize("seed", range(40))
def test_old_and_new_reads_fuzz_against_numpy(seed):
  """Random values over one or two buffers, assigns left pending among them (their values read old memory, new memory or
  both), values built on both sides of each assign and dropped or kept; then realized, or scheduled and run by hand:
  every kept value, and every buffer, as numpy computes them eagerly."""
  rng, nr = random.Random(seed), np.random.default_rng(seed)
  bufs = [[Tensor(d).realize(), d.copy()] for d in nr.standard_normal((rng.randint(1, 2), 3, 4)).astype(np.float32)]
  kept: list = []
  tmp = None  # a value only a later value reads: no tensor holds it by the time anything runs
  for _ in range(rng.randint(3, 9)):
    pool = [(b[0], b[1]) for b in bufs] + kept[-4:]
    (t1, n1), (t2, n2) = rng.choice(pool), rng.choice(pool)
    k = rng.random()
    if k < 0.25 and tmp is None: tmp = (t1 * 2 - t2, n1 * 2 - n2)
    elif k < 0.55:
      if tmp is not None and rng.random() < 0.7: (t1, n1), tmp = tmp, None  # the old value, read with what is new now
      t, n = rng.choice([(t1 + t2 * 2, n1 + n2 * 2), (t1 * t2, n1 * n2), (t1.sum(1, keepdim=True) + t2, n1.sum(1, keepdims=True) + n2),
                         (t1.T.reshape(3, 4) - t2, n1.T.reshape(3, 4) - n2)])
      if rng.random() < 0.8: kept.append((t, n))
    elif k < 0.8:
      b = rng.choice(bufs)
      b[0].assign(t1 * 0.5 + t2)
      b[1] = (n1 * 0.5 + n2).astype(np.float32)
    elif kept:
      t = rng.choice(kept)[0]
      if rng.random() < 0.5: t.realize()
      else: run_schedule(t.schedule())
  del tmp, pool, t1, t2
  for t, n in kept + [tuple(b) for b in bufs]:
    np.testing.assert_allclose(t.numpy(), n, rtol=1e-4, atol=1e-4, err_msg=f"seed {seed}")

def test_a_gradient_through_old_and_new_reads_of_a_buffer():
  """d/dp sum(p * v3), v3 = b (after a pending assign) + v1 (b * 2, before it): the gradient is v3's value (found by an
  outside review: the memory the assign writes was traced back to the copy that first filled it, and read twice new)."""
  bn = np.arange(6, dtype=np.float32)
  b0 = Tensor(bn).realize()
  v1 = b0 * 2
  b0.assign(b0 + 100)
  v3 = b0 + v1
  p = Tensor(np.ones(6, np.float32), requires_grad=True)
  (p * v3).sum().backward()
  np.testing.assert_array_equal(p.grad.numpy(), bn + 100 + bn * 2)
  np.testing.assert_array_equal(v3.numpy(), bn + 100 + bn * 2)
  np.testing.assert_array_equal(b0.numpy(), bn + 100)
