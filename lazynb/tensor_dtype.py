"""Tensor methods about dtypes: casts, bitcasts, and questions about the dtype (functions of a Tensor: tensor.py
makes them its methods). This file's `int`, `float` and `bool` are Tensor.int and friends: Python's are `builtins.int`, ..."""
from __future__ import annotations
import builtins
from typing import TYPE_CHECKING
from lazynb.dtype import dtypes, to_dtype
from lazynb.uop.ops import UOp, Ops
if TYPE_CHECKING: from lazynb.tensor import Tensor

_UINTS = {1: dtypes.uint8, 2: dtypes.uint16, 4: dtypes.uint32, 8: dtypes.uint64}

def cast(self: Tensor, dtype):
  dt = to_dtype(dtype)
  return self if dt == self.dtype else type(self)(self.uop.cast(dt))
def float(self: Tensor): return self.cast(dtypes.float32)
def half(self: Tensor): return self.cast(dtypes.float16)
def int(self: Tensor): return self.cast(dtypes.int32)
def long(self: Tensor): return self.cast(dtypes.int64)
def bool(self: Tensor): return self.cast(dtypes.bool)
def element_size(self: Tensor) -> builtins.int: return self.dtype.itemsize
def nbytes(self: Tensor) -> builtins.int: return self.numel() * self.element_size()
def is_floating_point(self: Tensor) -> builtins.bool:
  """True for float64, float32, float16 and bfloat16 tensors."""
  return dtypes.is_float(self.dtype)

def bitcast(self: Tensor, dtype):
  """The same bytes read as another dtype. When the sizes differ, the last axis changes length (4 float32s are 8
  uint16s or 2 float64s, little-endian, as numpy's .view); its bytes must divide evenly. Has no gradient."""
  if self.requires_grad: raise RuntimeError("can't backprop through bitcast")
  dt, old = to_dtype(dtype), self.dtype
  if dt is dtypes.bool: return self if old is dt else self.bitcast(dtypes.uint8) != 0  # each byte: True if not 0
  if dt.itemsize == old.itemsize: return self if dt == old else type(self)(UOp(Ops.BITCAST, dt, (self.uop,)))
  if not self.shape or self.shape[-1] * old.itemsize % dt.itemsize: raise RuntimeError("unsupported size in bitcast")
  bits, wide = self.bitcast(_UINTS[old.itemsize]), _UINTS[dt.itemsize]
  if dt.itemsize > old.itemsize:  # k consecutive elements make one; the first is the lowest bits
    k = dt.itemsize // old.itemsize
    parts = [bits[..., i::k].cast(wide) << (8 * old.itemsize * i) for i in range(k)]
    out = parts[0]
    for p in parts[1:]: out = out | p
  else:  # one element splits into k, lowest bits first
    k = old.itemsize // dt.itemsize
    out = type(self).stack(*[(bits >> (8 * dt.itemsize * i)).cast(wide) for i in range(k)], dim=-1).flatten(-2)
  return out.bitcast(dt)
