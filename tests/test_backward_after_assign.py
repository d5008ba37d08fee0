"""Gradients of values built on buffers that assign() writes: backward gives numpy's numbers, or a clear StaleReadError
when the value read memory an assign overwrote before the value was realized; never a false error (found by a fuzzer:
a value defined after two chained assigns raised StaleReadError in backward, because the check walked into the first
assign, realized already, and read its overwritten target as if the value still did)."""
import random
import numpy as np
import pytest
from lazynb import Tensor

def test_a_value_after_two_chained_assigns_has_a_gradient():
  b = Tensor(np.arange(3, dtype=np.float32)).contiguous().realize()
  p = Tensor(np.ones(3, np.float32), requires_grad=True)
  b.assign(b * 2)
  b.assign(b * 2)  # (the first, pending, runs first)
  v = b * 2 + 1
  (p * v).sum().backward()
  assert p.grad.tolist() == [1.0, 9.0, 17.0] and v.tolist() == [1.0, 9.0, 17.0] and b.tolist() == [0.0, 4.0, 8.0]

def program(seed: int) -> None:
  """Two buffers; a random run of assigns (chained, from the other buffer, from a value), values (lazy or realized, some
  with a parameter q in them), backwards of (p * value).sum() and reads, each checked against numpy."""
  rng = random.Random(seed)
  ref = [np.arange(3, dtype=np.float32) + i for i in range(2)]
  bufs = [Tensor(r.copy()).contiguous().realize() for r in ref]
  p, q = Tensor(np.ones(3, np.float32), requires_grad=True), Tensor(np.full(3, 0.5, np.float32), requires_grad=True)
  vals: list[Tensor] = []
  vref: list[tuple[np.ndarray, bool]] = []  # value, has q in it
  gp, gq = np.zeros(3, np.float32), np.zeros(3, np.float32)
  for _ in range(rng.randint(3, 9)):
    k, i = rng.choice("aaaavvvbbr"), rng.randrange(2)
    if k == "a":
      how = rng.choice(["self", "other", "value"] if vals else ["self", "other"])
      if how == "self": c = rng.choice([2.0, 0.5, -1.0]); bufs[i].assign(bufs[i] * c); ref[i] = ref[i] * c
      elif how == "other": bufs[i].assign(bufs[1 - i] + 1); ref[i] = ref[1 - i] + 1
      else:
        j = rng.randrange(len(vals))
        bufs[i].assign(vals[j].detach() + bufs[i]); ref[i] = vref[j][0] + ref[i]
    elif k == "v":
      with_q = rng.random() < 0.5
      v = bufs[i] * 2 + (q if with_q else 1)
      vals.append(v.realize() if rng.random() < 0.5 else v); vref.append((ref[i] * 2 + (0.5 if with_q else 1), with_q))
    elif k == "b" and vals:
      j = rng.randrange(len(vals))
      (p * vals[j]).sum().backward()
      gp += vref[j][0]; gq += 1 if vref[j][1] else 0
      np.testing.assert_allclose(p.grad.numpy(), gp, rtol=1e-6)
      if q.grad is not None: np.testing.assert_allclose(q.grad.numpy(), gq, rtol=1e-6)
    elif k == "r" and vals:
      j = rng.randrange(len(vals)); np.testing.assert_allclose(vals[j].numpy(), vref[j][0], rtol=1e-6)
  for b, r in zip(bufs, ref): np.testing.assert_allclose(b.numpy(), r, rtol=1e-6)
  for v, (r, _) in zip(vals, vref): np.testing.assert_allclose(v.numpy(), r, rtol=1e-6)

@pytest.mark.parametrize("seed", range(60))
def test_backward_among_assigns_fuzz_against_numpy(seed):
  program(seed)
