"""Course Project 2: the three op types (elementwise, reduce, movement), checked.

  python examples/project2_op_types.py

1. elementwise: relu, x * 2, exp; find each in the C source (DEBUG=3 shows the same source)
2. reduce: sum and max(axis=0); the loop and the accumulator in the source
3. movement: reshape, permute, expand, slicing realize with 0 kernels (only the ShapeTracker changes)
4. mixed: (x.permute(1,0) @ y.reshape(4,4)).sum(axis=1): predicted and counted kernels
5. matmul by hand from expand + mul + sum equals @ (and is one kernel, like @)
"""
from __future__ import annotations
import numpy as np
from lazynb import Tensor, Context, GlobalCounters
from lazynb.trace import Recorder
from lazynb.uop import Ops

def run_and_get_source(t: Tensor) -> str:
  """Realize t and return the C source of the one kernel it ran."""
  with Recorder() as rec: t.realize()
  progs = [e.data["program"] for e in rec.of("exec") if e.data["kind"] == "kernel"]
  assert len(progs) == 1, f"expected one kernel, got {len(progs)}"
  return progs[0].src

def task1_elementwise(x: Tensor):
  print("== 1. elementwise ops: one output element per input element, no loops between elements")
  src = run_and_get_source(x.relu())
  print(src)
  assert "?" in src and "0.0f" in src, "relu is WHERE(x > 0, x, 0): C's ?: operator"
  src = run_and_get_source(x * 2)
  assert "*2.0f)" in src, "x * 2 is a MUL by the constant 2"
  src = run_and_get_source(x.exp())
  print(next(l for l in src.splitlines() if "exp2" in l))
  # exp(x) is built from the EXP2 primitive: 2 ** (x * log2(e))
  assert "exp2" in src and "1.44269" in src
  lazy = Tensor([1.0, 2.0]).exp()  # a graph not realized yet (a realized one is just its buffer)
  assert (lazy.uop.op, lazy.uop.src[0].op) == (Ops.EXP2, Ops.MUL)

def task2_reduce(x: Tensor):
  print("== 2. reduce ops: a loop that folds many elements into an accumulator")
  src = run_and_get_source(x.sum())
  print(src)
  assert "for (" in src and "acc0 = (" in src and "(acc0+" in src, "sum: acc0 += ... inside a loop"
  src = run_and_get_source(x.max(axis=0))
  print(src)
  assert "-__builtin_inff()" in src, "max starts from -infinity"
  # the larger value, (val<acc)?acc:val, behind a NaN test (acc==acc is false only for NaN): a NaN anywhere wins, as in numpy
  assert "<acc0)?acc0:" in src and "(acc0==acc0)" in src, "and keeps the larger value, a NaN included"
  assert np.allclose(x.max(axis=0).numpy(), x.numpy().max(axis=0))
  assert np.isclose(x.sum().item(), x.numpy().sum(), rtol=1e-5)

def task3_movement():
  print("== 3. movement ops: zero kernels")
  x = Tensor.rand(4, 8, 16).realize()
  GlobalCounters.reset()
  with Context(DEBUG=2):
    y = x.reshape(32, 16).realize()
    z = x.permute(2, 0, 1).realize()
    w = x.reshape(4, 8, 16, 1).expand(4, 8, 16, 3).realize()
    s = x[1:3, :, ::2].realize()
  print(f"  kernels run: {GlobalCounters.kernel_count}")
  assert GlobalCounters.kernel_count == 0
  xn = x.numpy()
  assert (y.numpy() == xn.reshape(32, 16)).all() and (z.numpy() == xn.transpose(2, 0, 1)).all()
  assert (w.numpy() == xn[..., None].repeat(3, axis=-1)).all() and (s.numpy() == xn[1:3, :, ::2]).all()
  # what changed is the view: shape and strides over the same 512 floats
  print("  expand's graph is still the original buffer under movement ops:")
  print("  ", [u.op.name for u in w.uop.toposort() if u.op in (Ops.BUFFER, Ops.RESHAPE, Ops.EXPAND)])
  assert w.uop.base.op is Ops.BUFFER and w.uop.base is x.uop.base
  from lazynb.shape import ShapeTracker
  st = ShapeTracker.from_shape((4, 8, 16)).permute((2, 0, 1))
  idx, valid = st.render()
  print("  permute(2,0,1) as index math:", idx, "valid:", valid)
  assert valid == "True"

def task4_mixed():
  print("== 4. (x.permute(1,0) @ y.reshape(4,4)).sum(axis=1)")
  x, y = Tensor.rand(4, 4).realize(), Tensor.rand(16).realize()
  out = (x.permute(1, 0) @ y.reshape(4, 4)).sum(axis=1)
  # prediction: the movement ops are free; the matmul is one reduce (a sum over k); the sum over axis 1 is a second
  # reduce read by nothing else, which the scheduler merges with the first into one sum over both (docs/fusion.md,
  # "A reduce of a reduce is one reduce"): 1 kernel (tinygrad 0.10 runs 2, one per reduce)
  predicted = 1
  sched = out.schedule()
  print("  schedule:", [(si.kind, si.reason) for si in sched])
  GlobalCounters.reset()
  with Context(DEBUG=1): out.realize()
  assert len(sched) == predicted and GlobalCounters.kernel_count == predicted
  assert np.allclose(out.numpy(), (x.numpy().T @ y.numpy().reshape(4, 4)).sum(axis=1), atol=1e-5)

def matmul_by_hand(a: Tensor, b: Tensor) -> Tensor:
  """(M,K) @ (K,N) as movement + elementwise + reduce: broadcast both to (M,K,N), multiply, sum over K."""
  (m, k), (_, n) = a.shape, b.shape
  return (a.reshape(m, k, 1).expand(m, k, n) * b.reshape(1, k, n).expand(m, k, n)).sum(axis=1)

def task5_manual_matmul():
  print("== 5. matmul from expand + mul + sum")
  a, b = Tensor.rand(8, 5).realize(), Tensor.rand(5, 3).realize()
  mine, ref = matmul_by_hand(a, b), a @ b
  assert len(mine.schedule()) == 1, "the expands cost nothing: one reduce kernel"
  assert np.allclose(mine.numpy(), ref.numpy(), atol=1e-6) and np.allclose(mine.numpy(), a.numpy() @ b.numpy(), atol=1e-5)
  print("  max |hand - @| =", float(np.abs(mine.numpy() - ref.numpy()).max()))

def main():
  x = Tensor.rand(16, 16).realize()
  task1_elementwise(x)
  task2_reduce(x)
  task3_movement()
  task4_mixed()
  task5_manual_matmul()
  print("project 2: all checks passed")

if __name__ == "__main__":
  main()
