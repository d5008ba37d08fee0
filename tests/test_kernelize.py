"""kernelize(): the kernels are decided now and written into the graph as ASSIGN(BUFFER, KERNEL); realizing later runs
exactly those. A value kernelized, read by others, kernelized again and read again must keep its value, be computed
once, and never be taken for memory an assign overwrote (tinygrad 0.10's test_double_kerenlize found that last one)."""
import random
import numpy as np
import pytest
from lazynb import Tensor
from lazynb.engine.realize import run_schedule

def test_a_value_kernelized_twice_is_one_kernel_and_reads_as_itself():
  a, b = Tensor.rand(10).realize(), Tensor.rand(10).realize()
  c = a + b
  d = c.kernelize() + 2
  e = c.kernelize() + d.kernelize()
  sched = e.schedule()
  assert [si.kind for si in sched] == ["kernel"] * 3  # c, d, e: c once, though d and e both read it
  run_schedule(sched)
  want = a.numpy() + b.numpy()
  np.testing.assert_allclose(e.numpy(), 2 * want + 2, rtol=1e-6)
  np.testing.assert_allclose(c.numpy(), want, rtol=1e-6)
  np.testing.assert_allclose(d.numpy(), want + 2, rtol=1e-6)

def test_kernelize_after_an_assign_it_reads():
  x = Tensor.ones(6).contiguous().realize()
  y = (x * 3).kernelize()           # decided on the old x
  y.realize()
  x.assign(Tensor.full((6,), 5.0)).realize()
  z = (x + y).kernelize()           # the new x, and y's memory
  np.testing.assert_allclose(z.numpy(), [8.0] * 6)
  np.testing.assert_allclose(y.numpy(), [3.0] * 6)

# a differential fuzzer: random graphs of elementwise ops, reduces, flips and transposes over one shape, with kernelize,
# kernelize again, realize and schedule-then-run sprinkled in; every tensor's value against numpy at the end
BIN = [(lambda a, b: a + b, np.add), (lambda a, b: a * b, np.multiply), (lambda a, b: a.maximum(b), np.maximum),
       (lambda a, b: a - b, np.subtract)]
UN = [(lambda a: -a, np.negative), (lambda a: a.relu(), lambda a: np.maximum(a, 0)), (lambda a: a.flip(0), lambda a: a[::-1]),
      (lambda a: a.sum(1, keepdim=True).expand(4, 6), lambda a: np.broadcast_to(a.sum(1, keepdims=True), (4, 6))),
      (lambda a: a.max(0, keepdim=True).expand(4, 6), lambda a: np.broadcast_to(a.max(0, keepdims=True), (4, 6))),
      (lambda a: a.reshape(6, 4).T.reshape(4, 6), lambda a: a.reshape(6, 4).T.reshape(4, 6)), (lambda a: a * 0.5 + 1, lambda a: a * 0.5 + 1)]

@pytest.mark.parametrize("seed", range(80))
def test_kernelize_fuzz_against_numpy(seed):
  rng = random.Random(seed)
  data = np.random.default_rng(seed).standard_normal((3, 4, 6)).astype(np.float32)
  ts, ns = [Tensor(d).realize() for d in data], list(data)
  for _ in range(rng.randint(3, 9)):
    if rng.random() < 0.5:
      (f, g), i, j = rng.choice(BIN), rng.randrange(len(ts)), rng.randrange(len(ts))
      t, n = f(ts[i], ts[j]), g(ns[i], ns[j])
    else:
      (f, g), i = rng.choice(UN), rng.randrange(len(ts))
      t, n = f(ts[i]), g(ns[i])
    ts.append(t)
    ns.append(np.asarray(n, np.float32))
    for _ in range(rng.randint(0, 2)):  # something done to this value or an earlier one
      k, act = rng.randrange(len(ts)), rng.choice(["kernelize", "kernelize", "realize", "schedule", "none"])
      if act == "kernelize": ts[k].kernelize()
      elif act == "realize": ts[k].realize()
      elif act == "schedule": run_schedule(ts[k].schedule())
  for k, (t, n) in enumerate(zip(ts, ns)):
    np.testing.assert_allclose(t.numpy(), n, rtol=1e-5, atol=1e-5, err_msg=f"seed {seed}, tensor {k}")

def test_a_value_built_on_a_kernelized_value_before_it_was_kernelized():
  """v2 = v1 + 1 built before v1.kernelize(): v1's kernel runs once, and an assign to what v1 read, after v1 ran, leaves
  v2 reading v1's value (found by review: v1's kernel ran again, on the new memory)."""
  b = Tensor(np.arange(6, dtype=np.float32)).realize()
  v1 = b * b
  v2 = v1 + 1
  v1.kernelize()
  v1.realize()
  assert len(v2.schedule()) == 1  # v2's own kernel only
  b.assign(b + 100).realize()
  np.testing.assert_array_equal(v2.numpy(), np.arange(6) ** 2 + 1)

def test_kernelize_with_a_pending_assign():
  """A value kernelized while an assign it reads (or that overwrites what it reads) waits: each reads what it was defined
  on, and the assigned tensor can still be read (found by review: a wrong value, and StaleReadErrors)."""
  b = Tensor(np.array([1., 2., 3.], np.float32)).realize()
  v1 = b * b                 # reads b before the assign
  b.assign(b + 10)
  v1.kernelize()
  b.realize()
  assert v1.tolist() == [1.0, 4.0, 9.0] and b.tolist() == [11.0, 12.0, 13.0]
  b0, b1 = Tensor(np.ones((2, 3), np.float32)).realize(), Tensor(np.full((2, 3), 2.0, np.float32)).realize()
  old = b0 * 3
  b0.assign(b1 * 0.5 + b0)
  v0 = b0 + 1                # reads b0 after the assign
  v0.kernelize()
  Tensor.kernelize(v0, v0, old, old)  # (the same tensor twice: once)
  assert b0.tolist() == [[2.0] * 3] * 2 and v0.tolist() == [[3.0] * 3] * 2 and old.tolist() == [[3.0] * 3] * 2

@pytest.mark.parametrize("seed", range(60))
def test_kernelize_with_assigns_fuzz_never_a_wrong_value(seed):
  """Random programs of realized buffers, values built on them, assigns (left pending or run), kernelize of values and
  buffers (also twice, also two at once), realize and schedule: every value read is numpy's value at its definition. A
  StaleReadError (a value read after the memory it was defined on was overwritten) is allowed, a wrong value is not."""
  from lazynb.engine.schedule import StaleReadError
  rng, nr = random.Random(seed), np.random.default_rng(seed)
  bufs = [[Tensor(d).realize(), d.copy()] for d in nr.standard_normal((rng.randint(1, 3), 4, 6)).astype(np.float32)]
  vals: list = []
  for _ in range(rng.randint(4, 14)):
    pool = [(b[0], b[1]) for b in bufs] + vals[-6:]
    (t1, n1), (t2, n2) = rng.choice(pool), rng.choice(pool)
    k = rng.random()
    if k < 0.35: vals.append(rng.choice([(t1 + t2, n1 + n2), (t1 * t2, n1 * n2), (t1.reshape(6, 4).T.reshape(4, 6) - t2, n1.reshape(6, 4).T.reshape(4, 6) - n2),
                                         (t1.sum(1, keepdim=True).expand(4, 6) + t2, np.broadcast_to(n1.sum(1, keepdims=True), (4, 6)) + n2)]))
    elif k < 0.55:
      b = rng.choice(bufs)
      b[0].assign(t1 * 0.5 + b[0])
      b[1] = n1 * 0.5 + b[1]
    else:
      act = rng.choice(["kernelize", "kernelize_buf", "kernelize_two", "realize", "schedule"])
      t = rng.choice(vals)[0] if vals else rng.choice(bufs)[0]
      try:
        if act == "kernelize": t.kernelize()
        elif act == "kernelize_buf": rng.choice(bufs)[0].kernelize()
        elif act == "kernelize_two" and vals: Tensor.kernelize(rng.choice(vals)[0], rng.choice(vals)[0])
        elif act == "realize": t.realize()
        elif act == "schedule": run_schedule(t.schedule())
      except StaleReadError: pass
  for t, n in vals + [tuple(b) for b in bufs]:
    try: got = t.numpy()
    except StaleReadError: continue
    np.testing.assert_allclose(got, n, rtol=1e-4, atol=1e-4, err_msg=f"seed {seed}")
