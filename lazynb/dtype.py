"""Data types and the promotion rules between them: tinygrad 0.10's types and lattice (see _PARENTS). The types, where
promotion differs from numpy, weak Python scalars, bfloat16 in numpy and DEFAULT_FLOAT: docs/architecture.md, "Dtypes"."""
from __future__ import annotations
from dataclasses import dataclass, field, replace
import builtins, math, os
import numpy as np

@dataclass(frozen=True, eq=True)
class DType:
  priority: int
  itemsize: int
  name: str
  fmt: str | None   # struct format character
  count: int = 1    # > 1 for vector types
  _scalar: DType | None = None  # a vector type's element type
  # printed with the C names, as tinygrad 0.10 prints them (dtypes.uchar, dtypes.int, dtypes.half...); uint8 keeps its name inside
  def __repr__(self): return f"{self._scalar!r}.vec({self.vcount})" if self._scalar else f"dtypes.{'uchar' if self.name == 'uint8' else self.name}"
  def __lt__(self, o: DType): return (self.priority, self.itemsize, self.name) < (o.priority, o.itemsize, o.name)
  def ptr(self, size: int = -1, local: bool = False) -> PtrDType:
    return PtrDType(self.priority, self.itemsize, self.name, self.fmt, self.count, _base=self, size=size, local=local)
  @property
  def np(self): return _TO_NP.get(self.name)
  def scalar(self) -> DType: return self._scalar or self  # (a method, as tinygrad's)
  @property
  def base(self) -> DType: return self  # what a pointer points to; a value type is its own (as tinygrad)
  @property
  def vcount(self) -> int: return self.count  # how many values side by side (a pointer's: how many pointers)
  def vec(self, n: int) -> DType:
    if self.vcount != 1: raise TypeError(f"{self} is already a vector type; call vec() on its scalar type {self.scalar()}")
    if isinstance(self, PtrDType): return replace(self, _scalar=self, v=n)  # n pointers, each to what this one points to
    return DType(self.priority, self.itemsize * n, f"{self.name}{n}", None, n, self)

@dataclass(frozen=True, eq=True)
class PtrDType(DType):
  _base: DType = field(kw_only=True)
  size: int = field(default=-1, kw_only=True)  # how many elements it points to (-1: not said)
  local: bool = field(default=False, kw_only=True)  # to a workgroup's shared memory (tinygrad's DEFINE_LOCAL; lazynb's lowerer leaves it False)
  v: int = field(default=1, kw_only=True)  # > 1 for a vector of pointers
  @property
  def base(self) -> DType: return self._base
  @property
  def vcount(self) -> int: return self.v
  def __repr__(self): return super().__repr__() if self._scalar else f"{self.base!r}.ptr({self.size}{', local=True' if self.local else ''})"

@dataclass(frozen=True, eq=True)
class ImageDType(PtrDType):
  """tinygrad's texture types (dtypes.imagef, dtypes.imageh): float32 pixels in a shape. lazynb computes in none of them."""
  shape: tuple[int, ...] = field(default=(), kw_only=True)
  def __repr__(self): return super().__repr__() if self._scalar else f"dtypes.{self.name}({self.shape})"

class dtypes:
  void = DType(-1, 0, "void", None)
  bool = DType(0, 1, "bool", "?")
  int8 = DType(1, 1, "char", "b")
  uint8 = DType(2, 1, "uint8", "B")
  int16 = DType(3, 2, "short", "h")
  uint16 = DType(4, 2, "ushort", "H")
  int32 = DType(5, 4, "int", "i")
  uint32 = DType(6, 4, "uint", "I")
  int64 = DType(7, 8, "long", "q")
  uint64 = DType(8, 8, "ulong", "Q")
  fp8e4m3 = DType(9, 1, "float8_e4m3", None)  # 4 exponent bits, 3 mantissa bits, no inf (NVIDIA's e4m3fn)
  fp8e5m2 = DType(10, 1, "float8_e5m2", None)  # 5 exponent bits, 2 mantissa bits, with inf (IEEE-like)
  float16 = DType(11, 2, "half", "e")
  bfloat16 = DType(12, 2, "bfloat16", None)
  float32 = DType(13, 4, "float", "f")
  float64 = DType(14, 8, "double", "d")
  # aliases, tinygrad style
  char, uchar, short, ushort, int, uint, long, ulong = int8, uint8, int16, uint16, int32, uint32, int64, uint64
  half, float, double = float16, float32, float64
  default_float: DType = float32
  fp8s = (fp8e4m3, fp8e5m2)
  floats = fp8s + (float16, bfloat16, float32, float64)
  uints = (uint8, uint16, uint32, uint64)
  sints = (int8, int16, int32, int64)
  ints = uints + sints
  default_int: DType = int32
  # index arithmetic inside kernels: exact (64-bit) while rewriting; a renderer writes it as `int` when every
  # index of the kernel fits in 32 bits, else as a 64-bit type
  index = DType(6, 8, "index", None)
  # (from here on a bare `bool` or `int` in an annotation would be the dtype above: Python's are builtins.bool, builtins.int)

  @staticmethod
  def is_float(x: DType) -> builtins.bool: return type(x) is DType and (x._scalar or x).name in _FLOAT_NAMES  # by name: hot in the simplifier
  @staticmethod
  def is_int(x: DType) -> builtins.bool: return type(x) is DType and (x._scalar or x).name in _INT_NAMES
  @staticmethod
  def is_unsigned(x: DType) -> builtins.bool: return x.scalar() in _UNSIGNED
  @staticmethod
  def is_bool(x: DType) -> builtins.bool: return x.scalar() is dtypes.bool
  @staticmethod
  def imagef(shape: tuple[builtins.int, ...]) -> ImageDType: return ImageDType(100, 4, "imagef", "f", _base=dtypes.float32, size=math.prod(shape), shape=tuple(shape))
  @staticmethod
  def imageh(shape: tuple[builtins.int, ...]) -> ImageDType: return ImageDType(100, 2, "imageh", "e", _base=dtypes.float32, size=math.prod(shape), shape=tuple(shape))
  @staticmethod
  def all() -> list[DType]: return sorted(set(_FIELDS.values()))
  @staticmethod
  def fields() -> dict[str, DType]:
    """Every dtype by each of its names ("float32", "float", ...), as tinygrad's dtypes.fields()."""
    return dict(_FIELDS)
  @staticmethod
  def from_py(x) -> DType:
    if isinstance(x, np.ndarray): return dtypes.from_py(x.tolist())  # (a list of arrays, 0-d ones too)
    if isinstance(x, (bool, np.bool_)): return dtypes.bool
    if isinstance(x, (int, np.integer)):
      return dtypes.default_int if -2**31 <= int(x) < 2**31 else dtypes.int64 if -2**63 <= int(x) < 2**63 else _too_big(x)
    if isinstance(x, (float, np.floating)): return dtypes.default_float
    if isinstance(x, (list, tuple)): return max((dtypes.from_py(v) for v in x), default=dtypes.default_float)
    raise NoDTypeError(f"cannot infer a dtype for {type(x).__name__}: {x!r}; give numbers or bools (nested lists of them)")
  @staticmethod
  def from_np(x) -> DType:
    x = np.dtype(x)
    for d in dtypes.all():
      if d.np is not None and np.dtype(d.np) == x: return d
    raise TypeError(f"lazynb has no dtype for numpy dtype {x}; supported: {', '.join(str(np.dtype(d.np)) for d in dtypes.all() if d.np)}")
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
  @staticmethod
  def finfo(d: DType) -> tuple[builtins.int, builtins.int]:
    """(exponent bits, mantissa bits) of a float dtype."""
    if not dtypes.is_float(d): raise ValueError(f"{d} is not a floating point type")
    return {"float8_e4m3": (4, 3), "float8_e5m2": (5, 2), "half": (5, 10), "bfloat16": (8, 7), "float": (8, 23), "double": (11, 52)}[d.name]

def _too_big(x): raise OverflowError(f"{x} does not fit in a 64-bit integer")

_FLOAT_NAMES = frozenset({"float8_e4m3", "float8_e5m2", "half", "bfloat16", "float", "double"})
_INT_NAMES = frozenset({"char", "uint8", "short", "ushort", "int", "uint", "long", "ulong", "index"})
_UNSIGNED = frozenset({dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64})
_TO_NP = {"bool": np.bool_, "char": np.int8, "uint8": np.uint8, "short": np.int16, "ushort": np.uint16, "int": np.int32,
          "uint": np.uint32, "long": np.int64, "ulong": np.uint64, "half": np.float16, "float": np.float32, "double": np.float64}
_FIELDS = {n: getattr(dtypes, n) for n in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
           "bfloat16", "float32", "float64", "half", "float", "double", "fp8e4m3", "fp8e5m2", "uchar", "ushort", "uint", "ulong", "char", "short", "int", "long")}
_BY_NAME = _FIELDS | {d.name: d for d in _FIELDS.values()} | {"index": dtypes.index}

if (_env := os.environ.get("DEFAULT_FLOAT", "")):
  if not dtypes.is_float(_BY_NAME.get(_env.lower(), dtypes.void)): raise ValueError(f"DEFAULT_FLOAT={_env}: not a float dtype")
  dtypes.default_float = _BY_NAME[_env.lower()]

class NoDTypeError(TypeError, RuntimeError):
  """A Python value that has no dtype (None): a TypeError, and the RuntimeError tinygrad 0.10 raises there."""

class UnknownDTypeError(TypeError, AttributeError):
  """A dtype name lazynb does not know: a TypeError, and the AttributeError tinygrad 0.10 raises (it looks it up on `dtypes`)."""

class UnsupportedDTypeError(TypeError, RuntimeError):
  """An op given a dtype it is not defined for (a bitwise op on floats): a TypeError, and the RuntimeError of tinygrad 0.10."""

def to_dtype(x) -> DType:
  """Accept a DType, a name ("float32", "int", "HALF") or a numpy dtype: the dtype of a tensor, so never an image dtype."""
  if isinstance(x, ImageDType): raise UnsupportedDTypeError(f"lazynb computes no image dtypes ({x}); use dtypes.float or dtypes.half")
  if isinstance(x, DType): return x
  if isinstance(x, str):
    if x.lower() in _BY_NAME: return _BY_NAME[x.lower()]
    raise UnknownDTypeError(f"unknown dtype {x!r}; supported: {sorted(_BY_NAME)}")
  try: return dtypes.from_np(x)
  except TypeError as e: raise UnknownDTypeError(f"{x!r} is not a dtype: give a DType (dtypes.float32), its name or a numpy dtype") from e

def fp8_unsupported(d: DType) -> UnsupportedDTypeError:
  return UnsupportedDTypeError(f"lazynb's kernels do not compute in {d} yet; keep the tensor in half or bfloat16, or convert values on "
                               "the host with lazynb.dtype.float_to_fp8 / fp8_to_float")

def np_storage(d: DType):
  """The numpy type that holds d's bits in memory (bfloat16: uint16, the fp8s: uint8)."""
  return np.uint16 if d is dtypes.bfloat16 else np.uint8 if d in dtypes.fp8s else d.np

def to_storage(arr, d: DType) -> np.ndarray:
  """Values as d's in-memory bits. bfloat16 rounds float32 to the nearest even 16-bit value (NaN stays a quiet NaN)."""
  if d in dtypes.fp8s: return np.vectorize(lambda x: float_to_fp8(x, d), otypes=[np.uint8])(np.asarray(arr, dtype=np.float64))
  if d is not dtypes.bfloat16: return np.asarray(arr).astype(d.np)
  with np.errstate(over="ignore", invalid="ignore"): u = np.asarray(arr, dtype=np.float32).view(np.uint32).astype(np.uint64)
  rounded = (u + 0x7fff + ((u >> 16) & 1)) >> 16
  return np.where((u & 0x7fffffff) > 0x7f800000, (u >> 16) | 0x40, rounded).astype(np.uint16)

def from_storage(arr: np.ndarray, d: DType) -> np.ndarray:
  """d's in-memory bits as numpy values (bfloat16 and the fp8s -> float32)."""
  if d in dtypes.fp8s: return np.array([fp8_to_float(b, d) for b in range(256)], np.float32)[arr.astype(np.uint8)]
  return (arr.astype(np.uint32) << 16).view(np.float32) if d is dtypes.bfloat16 else arr

# the promotion lattice: each type and the types it can widen to directly
_PARENTS = {dtypes.bool: [dtypes.int8, dtypes.uint8], dtypes.int8: [dtypes.int16], dtypes.int16: [dtypes.int32],
            dtypes.int32: [dtypes.int64], dtypes.int64: [dtypes.float16, dtypes.bfloat16],
            dtypes.fp8e4m3: [dtypes.float16, dtypes.bfloat16], dtypes.fp8e5m2: [dtypes.float16, dtypes.bfloat16],
            dtypes.uint8: [dtypes.int16, dtypes.uint16], dtypes.uint16: [dtypes.int32, dtypes.uint32],
            dtypes.uint32: [dtypes.int64, dtypes.uint64], dtypes.uint64: [dtypes.float16, dtypes.bfloat16],
            dtypes.float16: [dtypes.float32], dtypes.bfloat16: [dtypes.float32], dtypes.float32: [dtypes.float64], dtypes.float64: []}
_UP: dict[DType, frozenset] = {}
def _upward(d: DType) -> frozenset:
  if d not in _UP: _UP[d] = frozenset({d}).union(*[_upward(p) for p in _PARENTS[d]])
  return _UP[d]

def least_upper_dtype(*ds: DType) -> DType: return min(frozenset.intersection(*[_upward(d) for d in ds]))

def least_upper_float(d: DType) -> DType:
  """d if it is a float, else the dtype an int or bool becomes in a float op (the default float, at least)."""
  return d if dtypes.is_float(d) else least_upper_dtype(d, dtypes.default_float)

def truncate_fp16(x) -> float:
  """x as a half would hold it (a Python float), inf where it overflows."""
  with np.errstate(over="ignore"): return float(np.float16(x))

def truncate_bf16(x) -> float:
  """x as bfloat16: a float32's low 16 bits cut (toward zero, as tinygrad's host conversion); inf on overflow."""
  with np.errstate(over="ignore"): f = np.float32(x)
  if abs(float(x)) > 3.3895313892515355e38: return math.copysign(math.inf, float(x))  # the largest finite bfloat16
  return float(np.array(np.array(f).view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32))

# fp8 <-> float on the host. Rounding is to the nearest value, ties to even (as ml_dtypes and CUDA's cvt); a value
# beyond the largest finite one, infinities included, saturates to it (CUDA's __NV_SATFINITE, what tinygrad does);
# NaN keeps its sign and becomes the type's NaN code (e4m3: 0x7f, e5m2: 0x7e).
# (exponent bias, mantissa bits, largest finite value, its code, NaN's code)
_FP8 = {"float8_e4m3": (7, 3, 448.0, 0x7e, 0x7f), "float8_e5m2": (15, 2, 57344.0, 0x7b, 0x7e)}

def _fp8_spec(d: DType):
  if d.name not in _FP8: raise TypeError(f"{d} is not an fp8 dtype; use dtypes.fp8e4m3 or dtypes.fp8e5m2")
  return _FP8[d.name]

def float_to_fp8(x: float, d: DType) -> int:
  """The byte (0..255) fp8 dtype d stores for the Python float x."""
  bias, m, top, top_code, nan = _fp8_spec(d)
  x = float(x)
  sign = 0x80 if math.copysign(1.0, x) < 0 else 0
  if math.isnan(x): return sign | nan
  a = abs(x)
  if a >= top: return sign | top_code  # saturate
  e = max(math.frexp(a)[1] - 1, 1 - bias)  # the exponent of a's binade; subnormals share the smallest normal one's
  n = round(a / 2.0 ** (e - m))           # a in units of the last mantissa bit: exact division, ties to even
  if n < 1 << m: return sign | n          # a subnormal (or zero): exponent field 0
  if n == 2 << m: e, n = e + 1, 1 << m    # rounding carried into the next binade
  return sign | (e + bias) << m | (n - (1 << m))

def fp8_to_float(b: int, d: DType) -> float:
  """The value of the byte b (0..255) read as fp8 dtype d."""
  bias, m, _, _, _ = _fp8_spec(d)
  sign, e, frac = -1.0 if b & 0x80 else 1.0, (b >> m) & ((0x80 >> m) - 1), b & ((1 << m) - 1)
  if d is dtypes.fp8e4m3 and e == 15 and frac == 7: return math.copysign(math.nan, sign)
  if d is dtypes.fp8e5m2 and e == 31: return math.copysign(math.nan, sign) if frac else sign * math.inf
  return sign * (frac if e == 0 else (1 << m) + frac) * 2.0 ** (max(e, 1) - bias - m)

def sum_acc_dtype(d: DType, n: int = 1) -> DType:
  """The dtype sum() accumulates in, as tinygrad: bools and signed ints at least int32, unsigned ints at least uint32.
  Where n terms of the largest value would overflow that (only possible for the widened small types), the 64-bit
  type of the same signedness. Floats keep their dtype (sum() itself adds halves and bfloat16s in float32)."""
  if dtypes.is_float(d): return d
  base = dtypes.uint32 if dtypes.is_unsigned(d) else dtypes.int32
  if d.itemsize >= 4: return least_upper_dtype(d, base)
  return base if n * int(dtypes.max(d)) <= dtypes.max(base) else dtypes.uint64 if base is dtypes.uint32 else dtypes.int64

def wrap_int(x: int, d: DType) -> int:
  """A Python int as int dtype d holds it after a C cast: its low bits, read signed or unsigned."""
  x %= 1 << 8 * d.itemsize
  return x - (1 << 8 * d.itemsize) if not dtypes.is_unsigned(d) and x >= 1 << (8 * d.itemsize - 1) else x

def int_fits(x, d: DType) -> bool:
  """Whether a Python int is a value of int dtype `d` (so making it a constant of `d` would not wrap around)."""
  return dtypes.min(d) <= x <= dtypes.max(d)

def _truncate(d: DType, x):
  """Make a Python number behave like a value of dtype `d` (wraps ints, rounds to the float's precision)."""
  if d is dtypes.bool: return bool(x)
  if dtypes.is_int(d): return wrap_int(int(x), d)
  with np.errstate(over="ignore"):
    if d is dtypes.float16: return float(np.float16(x))
    if d is dtypes.float32: return float(np.float32(x))
    if d is dtypes.bfloat16: return float(from_storage(to_storage(np.float32(x), d), d))
  return fp8_to_float(float_to_fp8(x, d), d) if d in dtypes.fp8s else float(x)

class _Truncator:
  """truncate(d, x), and truncate[d](x) as tinygrad 0.10 spells it (its truncate is a table of functions by dtype)."""
  def __call__(self, d: DType, x): return _truncate(d, x)
  def __getitem__(self, d: DType): return lambda x: _truncate(d, x)
truncate = _Truncator()

# tinygrad 0.10's tables of dtypes by name (its tests iterate over them): every concrete dtype, aliases included
DTYPES_DICT: dict[str, DType] = {k: v for k, v in vars(dtypes).items() if isinstance(v, DType) and not k.startswith(("default", "void", "index"))}
INVERSE_DTYPES_DICT: dict[str, str] = {**{v.name: k for k, v in DTYPES_DICT.items()}, "void": "void"}
