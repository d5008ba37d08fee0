"""Data types and the promotion rules between them.

Promotion follows a small lattice (bool < uint8 < int32 < int64 < float16 < float32), which agrees with numpy
for every pair of these types except int+float, where numpy would widen to float64: here the result is
float32, the default float. Python scalars are "weak": `int_tensor * 2.5` is float32, `half_tensor * 2.5`
stays float16.
"""
from __future__ import annotations
from dataclasses import dataclass
import math
import numpy as np

@dataclass(frozen=True, eq=True)
class DType:
  priority: int
  itemsize: int
  name: str
  fmt: str | None   # struct format character
  count: int = 1    # > 1 for vector types
  def __repr__(self): return f"dtypes.{self.name}"
  def __lt__(self, o: DType): return (self.priority, self.itemsize, self.name) < (o.priority, o.itemsize, o.name)
  def ptr(self) -> PtrDType: return PtrDType(self.priority, self.itemsize, self.name, self.fmt, self.count, self)
  @property
  def np(self): return _TO_NP.get(self.name)
  @property
  def scalar(self) -> DType: return self
  def vec(self, n: int) -> DType: return DType(self.priority, self.itemsize * n, f"{self.name}{n}", None, n)

@dataclass(frozen=True, eq=True)
class PtrDType(DType):
  base: DType = None  # type: ignore
  def __repr__(self): return f"{self.base!r}.ptr()"

class dtypes:
  void = DType(-1, 0, "void", None)
  bool = DType(0, 1, "bool", "?")
  uint8 = DType(1, 1, "uint8", "B")
  int32 = DType(5, 4, "int", "i")
  int64 = DType(7, 8, "long", "q")
  float16 = DType(9, 2, "half", "e")
  float32 = DType(11, 4, "float", "f")
  # aliases, tinygrad style
  int, long, uchar, half, float = int32, int64, uint8, float16, float32
  default_float: DType = float32
  default_int: DType = int32
  # index arithmetic inside kernels: exact (64-bit) while rewriting; a renderer writes it as `int` when every
  # index of the kernel fits in 32 bits, else as a 64-bit type
  index = DType(6, 8, "index", None)

  @staticmethod
  def is_float(x: DType) -> bool: return type(x) is DType and x.name in _FLOAT_NAMES  # by name: hot in the simplifier
  @staticmethod
  def is_int(x: DType) -> bool: return type(x) is DType and x.name in _INT_NAMES
  @staticmethod
  def is_unsigned(x: DType) -> bool: return x.scalar is dtypes.uint8
  @staticmethod
  def is_bool(x: DType) -> bool: return x.scalar is dtypes.bool
  @staticmethod
  def all() -> list[DType]: return [dtypes.bool, dtypes.uint8, dtypes.int32, dtypes.int64, dtypes.float16, dtypes.float32]
  @staticmethod
  def from_py(x) -> DType:
    if isinstance(x, (bool, np.bool_)): return dtypes.bool
    if isinstance(x, (int, np.integer)):
      return dtypes.default_int if -2**31 <= int(x) < 2**31 else dtypes.int64 if -2**63 <= int(x) < 2**63 else _too_big(x)
    if isinstance(x, np.floating): return dtypes.default_float
    if isinstance(x, float): return dtypes.default_float
    if isinstance(x, (list, tuple, np.ndarray)):
      return max((dtypes.from_py(v) for v in x), default=dtypes.default_float)
    raise TypeError(f"cannot infer a dtype for {type(x).__name__}: {x!r}")
  @staticmethod
  def from_np(x) -> DType:
    x = np.dtype(x)
    if x == np.float64: return dtypes.default_float
    for d in dtypes.all():
      if d.np == x: return d
    if x.kind == "u" and x.itemsize >= 4 or x.kind == "i" and x.itemsize >= 8: return dtypes.int64  # uint32 does not fit int32
    if x.kind in "iu": return dtypes.int32
    raise TypeError(f"lazynb has no dtype for numpy dtype {x}; supported: {', '.join(d.name for d in dtypes.all())} (float64 becomes float)")
  @staticmethod
  def min(d: DType):
    if d is dtypes.bool: return False
    if dtypes.is_int(d): return 0 if dtypes.is_unsigned(d) else -2**(8*d.itemsize-1)
    return -math.inf
  @staticmethod
  def max(d: DType):
    if d is dtypes.bool: return True
    if dtypes.is_int(d): return 2**(8*d.itemsize)-1 if dtypes.is_unsigned(d) else 2**(8*d.itemsize-1)-1
    return math.inf

def _too_big(x):
  raise OverflowError(f"{x} does not fit in a 64-bit integer")

_FLOAT_NAMES, _INT_NAMES = frozenset({"half", "float"}), frozenset({"uint8", "int", "long", "index"})
_TO_NP = {"bool": np.bool_, "uint8": np.uint8, "int": np.int32, "long": np.int64, "half": np.float16, "float": np.float32}
_BY_NAME = {d.name: d for d in dtypes.all()} | {"int32": dtypes.int32, "int64": dtypes.int64, "float16": dtypes.float16,
            "float32": dtypes.float32, "uchar": dtypes.uint8, "index": dtypes.index}

def to_dtype(x) -> DType:
  """Accept a DType, a name ("float32", "int") or a numpy dtype."""
  if isinstance(x, DType): return x
  if isinstance(x, str):
    if x in _BY_NAME: return _BY_NAME[x]
    raise TypeError(f"unknown dtype {x!r}; supported: {sorted(_BY_NAME)}")
  return dtypes.from_np(x)

# the promotion lattice: each type and the types it can widen to directly
_PARENTS = {dtypes.bool: [dtypes.uint8], dtypes.uint8: [dtypes.int32], dtypes.int32: [dtypes.int64],
            dtypes.int64: [dtypes.float16], dtypes.float16: [dtypes.float32], dtypes.float32: []}
def _upward(d: DType) -> set[DType]:
  out = {d}
  for p in _PARENTS[d]: out |= _upward(p)
  return out

def least_upper_dtype(*ds: DType) -> DType:
  common = set.intersection(*[_upward(d) for d in ds])
  return min(common)

def sum_acc_dtype(d: DType, n: int = 1) -> DType:
  """sum() of bools and small ints accumulates in the default int, as tinygrad does, as long as n terms of the largest
  value cannot overflow it; a bigger reduce widens to int64 (no tensor that fits in memory can overflow that)."""
  if dtypes.is_unsigned(d) or d is dtypes.bool:
    return d if d.itemsize >= 4 else dtypes.default_int if n * int(dtypes.max(d)) <= dtypes.max(dtypes.default_int) else dtypes.int64
  if dtypes.is_int(d): return least_upper_dtype(d, dtypes.default_int)
  return d

def int_fits(x, d: DType) -> bool:
  """Whether a Python int is a value of int dtype `d` (so making it a constant of `d` would not wrap around)."""
  return dtypes.min(d) <= x <= dtypes.max(d)

def truncate(d: DType, x):
  """Make a Python number behave like a value of dtype `d` (wraps ints, rounds halves)."""
  if d is dtypes.bool: return bool(x)
  if dtypes.is_int(d):
    x = int(x) & ((1 << (8*d.itemsize)) - 1)
    if not dtypes.is_unsigned(d) and x >= 1 << (8*d.itemsize-1): x -= 1 << (8*d.itemsize)
    return x
  if d is dtypes.float16: return float(np.float16(x))
  if d is dtypes.float32: return float(np.float32(x))
  return x
