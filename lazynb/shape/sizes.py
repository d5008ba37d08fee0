"""Shape arguments as Tensor methods take them. A size is an int, or a symbolic one: a bound Variable
(`Variable("i", 1, 10).bind(3)`) or an expression of them (`i*4`, `i+1`), an int32 UOp."""
from __future__ import annotations
import numpy as np
from lazynb.dtype import dtypes
from lazynb.uop.ops import UOp, Ops, sym_eq, sym_ge  # noqa: F401

class ArgumentError(ValueError, RuntimeError, AssertionError):
  """Arguments that do not fit the op: shapes, axes or sizes (a matmul's inner sizes, a permutation, a gather's index),
  a clip with neither bound. ValueError is Python's class for a bad argument; tinygrad 0.10 raises RuntimeError or
  AssertionError there, and its tests check for those: this error is all three."""

def shape_arg(shape) -> tuple:
  if len(shape) == 1 and isinstance(shape[0], (tuple, list)): shape = tuple(shape[0])
  return tuple(shape)

def check_shape(shape: tuple) -> tuple:
  for s in shape:  # a size is an int, or a symbolic one (a bound Variable, or an expression of them)
    if isinstance(s, UOp) and s.dtype is dtypes.int32 and s.op is not Ops.DEFINE_VAR: continue
    if isinstance(s, UOp) and s.op is Ops.DEFINE_VAR: raise ValueError(f"variable {s.arg[0]!r} in shape {shape} has no value: use .bind(n)")
    if not isinstance(s, (int, np.integer)) or isinstance(s, bool) or s < 0: raise ValueError(f"invalid shape {shape}: sizes must be ints >= 0")
  return tuple(s if isinstance(s, UOp) else int(s) for s in shape)

def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
  n = max(len(s) for s in shapes)
  padded = [(1,) * (n - len(s)) + tuple(s) for s in shapes]
  out = []
  for dims in zip(*padded):
    sizes = {d for d in dims if d != 1}
    if len(sizes) > 1: raise ValueError(f"shapes {' and '.join(map(str, shapes))} cannot be broadcast together")
    out.append(sizes.pop() if sizes else 1)
  return tuple(out)
