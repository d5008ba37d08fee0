"""The kinds of UOp (`Ops`), their groups (`GroupOp`), and what each ALU op computes on Python numbers (`exec_alu`, the
constant folder's and the PYTHON device's reference). The lowest part of the IR: it knows no UOp."""
from __future__ import annotations
import enum, math
from typing import Any, Callable
from lazynb.dtype import DType, dtypes, truncate

class Ops(enum.Enum):
  # graph structure
  SINK = enum.auto(); UNIQUE = enum.auto(); DEVICE = enum.auto(); BUFFER = enum.auto(); KERNEL = enum.auto()  # noqa: E702
  COPY = enum.auto(); CONST = enum.auto(); ASSIGN = enum.auto(); CONTIGUOUS = enum.auto(); DETACH = enum.auto()  # noqa: E702
  DEFINE_VAR = enum.auto(); BIND = enum.auto()  # a named int in [min, max] (symbolic shapes), and one with its value  # noqa: E702
  ARANGE = enum.auto()  # the number line 0, 1, ..., arg-1: a constant whose value is its own position (no memory)
  # movement ops: only change how indices map to memory (ShapeTracker)
  RESHAPE = enum.auto(); PERMUTE = enum.auto(); EXPAND = enum.auto(); PAD = enum.auto(); SHRINK = enum.auto(); FLIP = enum.auto()  # noqa: E702
  VIEW = enum.auto()
  # reduce
  REDUCE_AXIS = enum.auto(); REDUCE = enum.auto()
  # unary
  EXP2 = enum.auto(); LOG2 = enum.auto(); SIN = enum.auto(); SQRT = enum.auto(); RECIP = enum.auto(); NEG = enum.auto()  # noqa: E702
  CAST = enum.auto(); BITCAST = enum.auto(); TRUNC = enum.auto()  # noqa: E702
  # binary
  ADD = enum.auto(); MUL = enum.auto(); IDIV = enum.auto(); MOD = enum.auto(); MAX = enum.auto()  # noqa: E702
  CMPLT = enum.auto(); CMPNE = enum.auto(); AND = enum.auto(); OR = enum.auto(); XOR = enum.auto()  # noqa: E702
  SHL = enum.auto(); SHR = enum.auto()  # noqa: E702
  # ternary
  WHERE = enum.auto()
  # kernel level
  DEFINE_GLOBAL = enum.auto(); DEFINE_LOCAL = enum.auto(); DEFINE_ACC = enum.auto()  # noqa: E702
  LOAD = enum.auto(); STORE = enum.auto(); INDEX = enum.auto(); RANGE = enum.auto(); ENDRANGE = enum.auto()  # noqa: E702
  SPECIAL = enum.auto(); BARRIER = enum.auto()  # noqa: E702
  LANE = enum.auto()  # lowering's marker: LANE(ast node) = that node for one upcast/unroll lane (arg: ((axis, value), ...))
  def __repr__(self): return f"Ops.{self.name}"
  __hash__ = object.__hash__  # members are singletons; Enum's own hash is a Python call, and ops key every matcher lookup

class GroupOp:
  Unary = {Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIP, Ops.NEG, Ops.TRUNC}
  Binary = {Ops.ADD, Ops.MUL, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.CMPLT, Ops.CMPNE, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR}
  Ternary = {Ops.WHERE}
  ALU = Unary | Binary | Ternary
  Elementwise = ALU | {Ops.CAST, Ops.BITCAST}
  Movement = {Ops.RESHAPE, Ops.PERMUTE, Ops.EXPAND, Ops.PAD, Ops.SHRINK, Ops.FLIP}
  Commutative = {Ops.ADD, Ops.MUL, Ops.MAX, Ops.CMPNE, Ops.AND, Ops.OR, Ops.XOR}
  Comparison = {Ops.CMPLT, Ops.CMPNE}
  # f(0, 0, ...) != 0 for these: a padded (masked) view cannot be pushed through them
  UnsafePad = {Ops.EXP2, Ops.LOG2, Ops.RECIP, Ops.IDIV, Ops.MOD}

# ---------------------------------------------------------------- evaluating one ALU op in Python

def _idiv(a, b): return 0 if b == 0 else (abs(a) // abs(b)) * (1 if (a < 0) == (b < 0) else -1)
def _mod(a, b):
  """C's %: integers truncate (a - b*trunc(a/b), 0 for b == 0 here); floats are fmod, exact, NaN for b == 0."""
  if isinstance(a, float) or isinstance(b, float): return math.fmod(a, b) if b != 0 and not math.isinf(a) and not math.isnan(b) else math.nan
  return a - b * _idiv(a, b) if b else 0
def _safe(fn):
  def f(*a):
    try: return fn(*a)
    except (OverflowError, ValueError, ZeroDivisionError): return math.nan
  return f
def _exp2(x):
  try: return math.pow(2.0, x)
  except OverflowError: return math.inf
def _log2(x): return -math.inf if x == 0 else (math.nan if x < 0 or math.isnan(x) else (math.inf if x == math.inf else math.log2(x)))
def _recip(x): return (math.copysign(math.inf, x) if x == 0 else 1.0 / x)
def _sqrt(x): return math.nan if x < 0 or math.isnan(x) else math.sqrt(x)
def _sin(x): return math.nan if math.isinf(x) or math.isnan(x) else math.sin(x)
def _trunc(x): return x if math.isinf(x) or math.isnan(x) else float(math.trunc(x))

python_alu: dict[Ops, Callable] = {
  Ops.EXP2: _exp2, Ops.LOG2: _log2, Ops.SIN: _sin, Ops.SQRT: _sqrt, Ops.RECIP: _recip, Ops.NEG: lambda x: -x, Ops.TRUNC: _trunc,
  Ops.ADD: lambda a, b: a + b, Ops.MUL: lambda a, b: a * b, Ops.IDIV: _idiv, Ops.MOD: _mod,
  Ops.MAX: _safe(lambda a, b: a if (a >= b or math.isnan(a)) else b), Ops.CMPLT: lambda a, b: a < b, Ops.CMPNE: lambda a, b: a != b,
  Ops.AND: lambda a, b: a & b, Ops.OR: lambda a, b: a | b, Ops.XOR: lambda a, b: a ^ b,
  Ops.SHL: lambda a, b: a << b, Ops.SHR: lambda a, b: a >> b,
  Ops.WHERE: lambda c, a, b: a if c else b}

def exec_alu(op: Ops, dtype: DType, srcs: tuple, src_dtype: DType | None = None) -> Any:
  """Evaluate one ALU op on Python numbers, with the wrap-around and rounding of `dtype` (a CAST: from `src_dtype`)."""
  if op is Ops.CAST: return cast_scalar(srcs[0], dtype, src_dtype)
  if op in (Ops.ADD, Ops.MUL) and dtype is dtypes.bool: return bool(srcs[0] or srcs[1]) if op is Ops.ADD else bool(srcs[0] and srcs[1])
  ret = python_alu[op](*srcs)
  if isinstance(ret, float) and dtypes.is_int(dtype): ret = int(ret)
  return truncate(dtype, ret)

def cast_scalar(x, dtype: DType, src: DType | None = None):
  """One value cast as a kernel casts it. float -> int as x86 CPUs do (renderer/prerender.py: NaN, inf and values past a
  signed int's range -> its smallest value); int -> int wraps around, as in C."""
  if dtype is dtypes.bool: return bool(x)
  if dtypes.is_int(dtype):
    if not isinstance(x, float): return truncate(dtype, int(x))
    if dtype.itemsize < 4: return truncate(dtype, cast_scalar(x, dtypes.int32))  # through int32, wrapping (as prerender's rule)
    if dtype is dtypes.uint32 and src is dtypes.float16: return truncate(dtype, cast_scalar(x, dtypes.int64))  # (prerender's rule)
    if dtypes.is_unsigned(dtype):
      s = dtypes.int32 if dtype.itemsize == 4 else dtypes.int64
      top = 2.0 ** (8 * s.itemsize - 1)
      return truncate(dtype, cast_scalar(x, s) if not x >= top else cast_scalar(x - top, s) ^ dtypes.min(s))
    return int(x) if math.isfinite(x) and dtypes.min(dtype) <= math.trunc(x) <= dtypes.max(dtype) else dtypes.min(dtype)
  return truncate(dtype, float(x))
