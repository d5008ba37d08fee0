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
