"""Course Project 1: tensor basics and lazy evaluation, with every claim checked.

  python examples/project1_tensor_basics.py

1. make tensors with each factory method; check shapes, dtypes and values
2. (a + b).relu().sum() runs as ONE kernel (DEBUG=1 prints the realize line)
3. read that kernel's C source (DEBUG=3) and find the add, the relu and the sum in it
4. realize after every op instead: THREE kernels, more memory traffic, usually slower
5. .schedule() before and after a .realize(): what is left to run

The course writes `from tinygrad import Tensor`; here it is `from lazynb import Tensor`, and the CPU device is
called CPU (tinygrad's older name CLANG is accepted as an alias).
"""
from __future__ import annotations
import time
import numpy as np
from lazynb import Tensor, Device, Context, GlobalCounters, dtypes
from lazynb.trace import Recorder

def programs(rec: Recorder) -> list:
  """The ProgramSpecs (source, opts, launch sizes) of the kernels that ran while the recorder listened.
  (Read from the "exec" events: a kernel compiled earlier is not compiled again, but it still runs.)"""
  return [e.data["program"] for e in rec.of("exec") if e.data["kind"] == "kernel"]

def task1_factories():
  print("== 1. factory methods")
  print("default device:", Device.DEFAULT)
  cases = {
    "Tensor([1, 2, 3, 4])": (Tensor([1, 2, 3, 4]), (4,), dtypes.int32),
    "Tensor(np.array([[1., 2.], [3., 4.]]))": (Tensor(np.array([[1.0, 2.0], [3.0, 4.0]])), (2, 2), dtypes.float64),  # numpy keeps its dtype
    "Tensor.zeros(3, 4)": (Tensor.zeros(3, 4), (3, 4), dtypes.float32),
    "Tensor.ones(3, 4)": (Tensor.ones(3, 4), (3, 4), dtypes.float32),
    "Tensor.randn(3, 4)": (Tensor.randn(3, 4), (3, 4), dtypes.float32),
    "Tensor.rand(3, 4)": (Tensor.rand(3, 4), (3, 4), dtypes.float32),
    "Tensor.arange(0, 10, 2)": (Tensor.arange(0, 10, 2), (5,), dtypes.int32),
    "Tensor.eye(4)": (Tensor.eye(4), (4, 4), dtypes.float32),
  }
  for name, (t, shape, dtype) in cases.items():
    print(f"  {name:42s} shape={t.shape} dtype={t.dtype}")
    assert t.shape == shape and t.dtype == dtype, (name, t.shape, t.dtype)
  # a numpy float64 array stays float64 (as in tinygrad); Python floats become the default float, float32
  assert cases["Tensor.zeros(3, 4)"][0].numpy().sum() == 0 and cases["Tensor.ones(3, 4)"][0].numpy().sum() == 12
  r = cases["Tensor.rand(3, 4)"][0].numpy()
  assert ((r >= 0) & (r < 1)).all()
  assert cases["Tensor.arange(0, 10, 2)"][0].tolist() == [0, 2, 4, 6, 8]
  assert (cases["Tensor.eye(4)"][0].numpy() == np.eye(4)).all()
  # constant folding and hash-consing, from the course's introduction
  t = Tensor([1, 2, 3, 4])
  assert (t + 3 + 4).tolist() == [8, 9, 10, 11]
  assert (t * 4).uop is (t * 4).uop, "the same computation built twice is one graph node"

def make_inputs(n: int) -> tuple[Tensor, Tensor]:
  # Tensor.rand makes its data on the host; realizing now copies it over, so the kernels counted below
  # are only the ones for the expression itself
  return Tensor.rand(n, n).realize(), Tensor.rand(n, n).realize()

def task2_fused(n: int) -> tuple[float, int]:
  print("== 2. (a + b).relu().sum() is one kernel")
  a, b = make_inputs(n)
  out = (a + b).relu().sum()
  GlobalCounters.reset()
  assert GlobalCounters.kernel_count == 0, "building the expression runs nothing"
  with Context(DEBUG=1): out.realize()
  assert GlobalCounters.kernel_count == 1, GlobalCounters.kernel_count
  expect = np.maximum(a.numpy() + b.numpy(), 0).sum()
  assert np.isclose(out.item(), expect, rtol=1e-4), (out.item(), expect)
  return GlobalCounters.global_mem, GlobalCounters.kernel_count

def task3_source(n: int):
  print("== 3. the generated C (DEBUG=3 prints the same source)")
  a, b = make_inputs(n)
  with Recorder() as rec: (a + b).relu().sum().realize()
  (prg,) = programs(rec)
  print(prg.src)
  src = prg.src
  assert "+" in src, "ADD: the two loads are added"
  assert "<=0.0f))?" in src, "RELU: (x > 0 or NaN) ? x : 0 is a WHERE, written as C's ?: operator with !(x<=0.0f)"
  assert "acc0" in src and "for (" in src, "SUM: an accumulator updated inside a loop over the elements"

def task4_unfused(n: int, fused_mem: int):
  print("== 4. realize after every op: three kernels")
  a, b = make_inputs(n)
  GlobalCounters.reset()
  with Context(DEBUG=1):
    c = (a + b).realize()
    d = c.relu().realize()
    e = d.sum().realize()
  assert GlobalCounters.kernel_count == 3, GlobalCounters.kernel_count
  unfused_mem = GlobalCounters.global_mem
  print(f"  bytes moved: fused {fused_mem:,}  unfused {unfused_mem:,}")
  # fused reads a and b once; unfused also writes c and d to memory and reads them back
  assert unfused_mem >= 2 * fused_mem
  assert np.isclose(e.item(), np.maximum(a.numpy() + b.numpy(), 0).sum(), rtol=1e-4)
  # speed: time both after compiling (fresh inputs each run: equal graphs are cached once realized)
  def best_of(fn, reps=5) -> float:
    ts = []
    for _ in range(reps):
      x, y = make_inputs(n)
      st = time.perf_counter()
      fn(x, y)
      ts.append(time.perf_counter() - st)
    return min(ts)
  t_fused = best_of(lambda x, y: (x + y).relu().sum().realize())
  t_unfused = best_of(lambda x, y: (x + y).realize().relu().realize().sum().realize())
  print(f"  wall time per run: fused {t_fused * 1e3:.2f} ms, unfused {t_unfused * 1e3:.2f} ms ({t_unfused / t_fused:.1f}x)")

def task5_schedule(n: int):
  print("== 5. the schedule before and after a realize()")
  a, b = make_inputs(n)
  c = a + b
  before = c.relu().sum().schedule()
  print("  before:", before)
  assert len(before) == 1 and before[0].kind == "kernel"
  assert c.schedule() != [], "c is not computed yet"
  c.realize()
  assert c.schedule() == [], "a realized tensor has nothing left to run"
  after = c.relu().sum().schedule()
  print("  after: ", after)
  assert len(after) == 1
  # before: output, a, b. after: output, c (the kernel reads c's buffer instead of adding a and b again)
  assert len(before[0].bufs) == 3 and len(after[0].bufs) == 2
  assert after[0].bufs[1] is c._buffer()

def main():
  n = 128  # 16,384 numbers: past 65,536 a float sum adds in two stages (docs/fusion.md), which would be 2 kernels
  task1_factories()
  fused_mem, _ = task2_fused(n)
  task3_source(n)
  task4_unfused(n, fused_mem)
  task5_schedule(n)
  print("project 1: all checks passed")

if __name__ == "__main__":
  main()
