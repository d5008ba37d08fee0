"""Reductions over axes: sum, prod, max, min, any, all, mean, var, std, softmax, logsumexp, argmax, cumsum, all built
on REDUCE_AXIS (an empty axis gives the reduce's identity). Functions of a Tensor: tensor.py makes them
its methods. This file's `sum`, `max`, `min`, `any` and `all` are Tensor's: Python's are `builtins.max`, ..."""
from __future__ import annotations
import builtins, math
from typing import Callable, TYPE_CHECKING
import numpy as np
from lazynb.dtype import dtypes, to_dtype, least_upper_dtype, sum_acc_dtype
from lazynb import helpers
from lazynb.uop.ops import UOp, Ops, smax
from lazynb.gradient import custom_gradient
if TYPE_CHECKING: from lazynb.tensor import Tensor


def _axes(self: Tensor, axis) -> tuple[int, ...]:
  if axis is None: return tuple(range(self.ndim))
  axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
  out = tuple(sorted({self._resolve_axis(a) for a in axes}))
  if len(out) != len(axes): raise ValueError(f"repeated axis in {axis}")
  return out if self.ndim else ()  # a 0-d tensor: axis 0 or -1 is its one element, and there is nothing to reduce
def _reduce(self: Tensor, op: Ops, axis, keepdim: bool) -> Tensor:
  axes = self._axes(axis)
  ret = type(self)(self.uop.r(op, axes)) if self.ndim else self
  return ret if keepdim else ret.reshape(tuple(s for i, s in enumerate(self.shape) if i not in axes))
def sum(self: Tensor, axis=None, keepdim: bool = False, dtype=None) -> Tensor:
  acc = to_dtype(dtype) if dtype is not None else sum_acc_dtype(self.dtype, smax(helpers.prod(self.shape[a] for a in self._axes(axis))))
  x = self.cast(acc) if acc not in (dtypes.float16, dtypes.bfloat16) else self.cast(dtypes.float32)
  ret = x._reduce(Ops.ADD, axis, keepdim)
  return ret.cast(acc)
def prod(self: Tensor, axis=None, keepdim: bool = False, dtype=None) -> Tensor:
  acc = to_dtype(dtype) if dtype is not None else sum_acc_dtype(self.dtype)
  return self.cast(acc)._reduce(Ops.MUL, axis, keepdim)
def max(self: Tensor, axis=None, keepdim: bool = False) -> Tensor:
  if self.dtype is dtypes.bool: return self.cast(dtypes.uint8)._reduce(Ops.MAX, axis, keepdim).cast(dtypes.bool)
  return self._reduce(Ops.MAX, axis, keepdim)
def min(self: Tensor, axis=None, keepdim: bool = False) -> Tensor: return self._flip_order().max(axis, keepdim)._flip_order()
def any(self: Tensor, axis=None, keepdim: bool = False) -> Tensor: return self.bool().max(axis, keepdim)
def all(self: Tensor, axis=None, keepdim: bool = False) -> Tensor: return self.logical_not().any(axis, keepdim).logical_not()
def mean(self: Tensor, axis=None, keepdim: bool = False) -> Tensor:
  x = self._float()
  n = helpers.prod(self.shape[a] for a in self._axes(axis))
  # a half mean can fit where the half sum would overflow; ints sum exactly (a float32 sum stops counting at 2**24)
  acc = least_upper_dtype(x.dtype, dtypes.float32)  # half and bfloat16 add up in float32, float64 in float64
  s = x.sum(axis, keepdim, dtype=acc) if x is self else self.sum(axis, keepdim, dtype=dtypes.int64).cast(acc)
  if isinstance(n, UOp): return (s / type(self)._sym_count(n, self.device)).cast(x.dtype)  # a variable count, computed in the kernel
  return (s * (1 / n) if n else s * math.nan).cast(x.dtype)
def var(self: Tensor, axis=None, keepdim: bool = False, correction: int = 1) -> Tensor:
  x = self._float()
  n = helpers.prod(self.shape[a] for a in self._axes(axis))
  d = (x - x.mean(axis, keepdim=True)).square().sum(axis, keepdim)
  # divided by max(0, n - correction), as torch: with no degrees of freedom left, inf (NaN where every value is the mean)
  if isinstance(n, UOp): return d / type(self)._sym_count(n - correction, self.device)  # a variable count
  return d / builtins.max(0, n - correction)
def std(self: Tensor, axis=None, keepdim: bool = False, correction: int = 1) -> Tensor: return self.var(axis, keepdim, correction).sqrt()
def _softmax(x: Tensor, axis: int) -> Tensor:
  e = (x - x.max(axis, keepdim=True)).exp()
  return e / e.sum(axis, keepdim=True)
def _log_softmax(x: Tensor, axis: int) -> Tensor:
  m = x - x.max(axis, keepdim=True)
  return m - m.exp().sum(axis, keepdim=True).log()
# their gradients as torch writes them: through the division the chain rule gives sum(s) - 1 (~1e-7, not 0) times s
# (the rules hold the Tensor class, never a tensor: a tensor kept alive by its rule stays a live lazy value, which a
# TinyJit capture computes on its own, one more kernel)
def _with_softmax_rule(t: Tensor, axis: int, dtype, name: str, fwd: Callable, rule: Callable) -> Tensor:
  """fwd(x, axis) (_softmax or _log_softmax) of t with its own gradient, rule(g, softmax(x)), named `name`."""
  T, x = type(t), (t.cast(dtype) if dtype is not None else t)._float()  # dtype: computed in it (as torch, cast first)
  ret = fwd(x, axis)
  def backward(grad, inputs, wanted): return rule(T(grad), _softmax(T(inputs[0]), axis)).uop if wanted[0] else None,
  custom_gradient(ret.uop, name, (x.uop,), backward)
  return ret
def softmax(self: Tensor, axis: int = -1, dtype=None) -> Tensor:
  return _with_softmax_rule(self, axis, dtype, "softmax", _softmax, lambda g, s: (g - (g * s).sum(axis, keepdim=True)) * s)
def log_softmax(self: Tensor, axis: int = -1, dtype=None) -> Tensor:
  return _with_softmax_rule(self, axis, dtype, "log_softmax", _log_softmax, lambda g, s: g - s * g.sum(axis, keepdim=True))
def logsumexp(self: Tensor, axis=None, keepdim: bool = False) -> Tensor:
  x = self._float()
  m = x.max(axis, keepdim=True).detach()  # (a constant to backward: its terms cancel, and the gradient is torch's exp(x - result))
  e, f = dtypes.finfo(x.dtype)  # all -inf: 0 (log(0) = -inf); an inf: the largest finite float (the others' exp(x - m) stay 0)
  m = m.eq(-math.inf).where(0.0, m.minimum((2 - 2.0 ** -f) * 2.0 ** (2 ** (e - 1) - 1)))
  ret = (x - m).exp().sum(axis, keepdim=True).log() + m
  return ret if keepdim else ret.reshape(tuple(s for i, s in enumerate(self.shape) if i not in self._axes(axis)))
def argmax(self: Tensor, axis=None, keepdim: bool = False) -> Tensor:
  """The first index of the largest value: (x == max) picks the candidates, a descending arange ranks them."""
  if axis is None: return self.flatten().argmax(0)
  if self.ndim == 0: return self._as_vector(lambda v: v.argmax(0), axis)
  a = self._resolve_axis(axis)
  n = self.shape[a]
  if n == 0: raise ValueError(f"argmax/argmin of an empty axis: dim {a} of {self.shape} has no elements (torch refuses it too)")
  is_max = self.eq(self.max(a, keepdim=True))
  if dtypes.is_float(self.dtype): is_max = is_max | self.isnan()  # a NaN max: the first NaN, as numpy (never the index n)
  rank = type(self).arange(n, 0, -1, device=self.device, dtype=dtypes.int32).reshape((n,) + (1,) * (self.ndim - a - 1))
  return (n - (is_max.where(rank, 0)).max(a, keepdim)).cast(dtypes.int32)
def argmin(self: Tensor, axis=None, keepdim: bool = False) -> Tensor: return self._flip_order().argmax(axis, keepdim)
def cumsum(self: Tensor, axis: int = 0) -> Tensor:
  """Prefix sums as a masked sum (tensor_math._cum): out[i] = sum_j [j <= i] x[j] (a where, not a multiply: inf * 0 would be NaN)."""
  return self._cum(axis, 0, "sum")
