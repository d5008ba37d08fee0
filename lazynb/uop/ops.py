"""The UOp IR: one node type for every stage, and the pattern matcher that rewrites it.

A `UOp(op, dtype, src, arg)` is immutable and hash-consed: building the same spec twice returns the same
Python object, so equal subgraphs are shared and `a is b` is a cheap equality test. The same class carries
the lazy tensor graph (BUFFER, RESHAPE, ADD, REDUCE_AXIS ...), kernel ASTs (LOAD, STORE, VIEW) and the
lowered program (RANGE, SPECIAL, DEFINE_ACC ...).
"""
from __future__ import annotations
import contextlib, enum, inspect, itertools, math, weakref
from typing import Any, Callable
from lazynb.dtype import DType, dtypes, truncate
from lazynb.helpers import prod, DEBUG

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
  WHERE = enum.auto(); MULACC = enum.auto()  # noqa: E702
  # kernel level
  DEFINE_GLOBAL = enum.auto(); DEFINE_LOCAL = enum.auto(); DEFINE_ACC = enum.auto()  # noqa: E702
  LOAD = enum.auto(); STORE = enum.auto(); INDEX = enum.auto(); RANGE = enum.auto(); ENDRANGE = enum.auto()  # noqa: E702
  SPECIAL = enum.auto(); IF = enum.auto(); ENDIF = enum.auto(); BARRIER = enum.auto(); NOOP = enum.auto()  # noqa: E702
  LANE = enum.auto()  # lowering's marker: LANE(ast node) = that node for one upcast/unroll lane (arg: ((axis, value), ...))
  def __repr__(self): return f"Ops.{self.name}"
  __hash__ = object.__hash__  # members are singletons; Enum's own hash is a Python call, and ops key every matcher lookup

class GroupOp:
  Unary = {Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIP, Ops.NEG, Ops.TRUNC}
  Binary = {Ops.ADD, Ops.MUL, Ops.IDIV, Ops.MOD, Ops.MAX, Ops.CMPLT, Ops.CMPNE, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR}
  Ternary = {Ops.WHERE, Ops.MULACC}
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
  Ops.WHERE: lambda c, a, b: a if c else b, Ops.MULACC: lambda a, b, c: a * b + c}

def exec_alu(op: Ops, dtype: DType, srcs: tuple) -> Any:
  """Evaluate one ALU op on Python numbers, with the wrap-around and rounding of `dtype`."""
  if op is Ops.CAST: return cast_scalar(srcs[0], dtype)
  if op in (Ops.ADD, Ops.MUL) and dtype is dtypes.bool: return bool(srcs[0] or srcs[1]) if op is Ops.ADD else bool(srcs[0] and srcs[1])
  ret = python_alu[op](*srcs)
  if isinstance(ret, float) and dtypes.is_int(dtype): ret = int(ret)
  return truncate(dtype, ret)

def cast_scalar(x, dtype: DType):
  """One value cast as a kernel casts it. float -> int saturates to the int range and sends NaN to 0 (C leaves these
  undefined; the C renderers write the same rule out); int -> int wraps around, as in C."""
  if dtype is dtypes.bool: return bool(x)
  if dtypes.is_int(dtype):
    if isinstance(x, float):
      return 0 if math.isnan(x) else dtypes.max(dtype) if x >= dtypes.max(dtype) else dtypes.min(dtype) if x <= dtypes.min(dtype) else int(x)
    return truncate(dtype, int(x))
  return truncate(dtype, float(x))

# ---------------------------------------------------------------- the UOp

class UOpMetaClass(type):
  cache: dict[tuple, weakref.ReferenceType] = {}
  def __call__(cls, op: Ops, dtype: DType = dtypes.void, src: tuple = (), arg: Any = None):
    key = (op, dtype, src, arg, type(arg))
    if (ref := UOpMetaClass.cache.get(key)) is not None and (ret := ref()) is not None: return ret
    ret = super().__call__(op, dtype, src, arg)
    def _drop(r, key=key, cache=UOpMetaClass.cache):  # (the dict itself: module globals are gone at interpreter exit)
      if cache.get(key) is r: del cache[key]
    UOpMetaClass.cache[key] = weakref.ref(ret, _drop)
    return ret

_KERNEL_LEVEL = {Ops.RANGE, Ops.SPECIAL, Ops.DEFINE_GLOBAL, Ops.DEFINE_ACC, Ops.LOAD, Ops.INDEX, Ops.VIEW}

# Buffer objects behind BUFFER uops live here (filled in by the device layer)
buffers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_unique_counter = itertools.count()

class UOp(metaclass=UOpMetaClass):
  __slots__ = ("op", "dtype", "src", "arg", "__weakref__", "_cache")
  def __init__(self, op: Ops, dtype: DType = dtypes.void, src: tuple = (), arg: Any = None):
    self.op, self.dtype, self.src, self.arg, self._cache = op, dtype, src, arg, {}
  def __reduce__(self): return UOp, (self.op, self.dtype, self.src, self.arg)
  def replace(self, **kw) -> UOp:
    op, dtype, src, arg = kw.get("op", self.op), kw.get("dtype", self.dtype), kw.get("src", self.src), kw.get("arg", self.arg)
    return UOp(op, dtype, tuple(src), arg)

  # ---- graph helpers
  def toposort(self) -> list[UOp]:
    """Every node reachable from self, each after all of its sources."""
    seen: set[UOp] = set()
    out: list[UOp] = []
    stack: list[tuple[UOp, bool]] = [(self, False)]
    while stack:
      n, done = stack.pop()
      if done: out.append(n); continue  # noqa: E702
      if n in seen: continue
      seen.add(n)
      stack.append((n, True))
      for s in reversed(n.src):
        if s not in seen: stack.append((s, False))
    return out
  def substitute(self, mapping: dict[UOp, UOp]) -> UOp:
    memo = dict(mapping)
    for n in self.toposort():
      if n in memo: continue
      src = tuple(memo[s] for s in n.src)
      memo[n] = n if src == n.src else n.replace(src=src)
    return memo[self]
  def sink(*srcs: UOp) -> UOp: return UOp(Ops.SINK, dtypes.void, tuple(srcs))

  # ---- constants
  @staticmethod
  def const(dtype: DType, b: Any, src: tuple = ()) -> UOp:
    if dtype is dtypes.index and type(b) is int and -2**63 <= b < 2**63: return UOp(Ops.CONST, dtype, src, b)  # the common case, fast
    if isinstance(b, UOp): return UOp(Ops.CONST, dtype, src, b)  # a symbolic size as a value: computed in the kernel
    return UOp(Ops.CONST, dtype, src, cast_scalar(b, dtype) if not (isinstance(b, float) and math.isnan(b) and dtypes.is_float(dtype)) else b)
  def const_like(self, b: Any) -> UOp:
    """A constant with self's dtype; in a tensor graph also on self's device and broadcast to self's shape."""
    if self.op in _KERNEL_LEVEL or (dev := self.device) is None or self.shape is None: return UOp.const(self.dtype, b)
    c = UOp.const(self.dtype, b, (UOp(Ops.DEVICE, dtypes.void, (), dev),))
    return c.reshape((1,) * len(self.shape)).expand(self.shape) if self.shape else c
  def is_const(self, v: Any = None) -> bool: return self.op is Ops.CONST and (v is None or self.arg == v)

  # ---- arithmetic (used for index math and by the pattern matcher)
  def alu(self, op: Ops, *src: UOp) -> UOp:
    dtype = dtypes.bool if op in GroupOp.Comparison else self.dtype
    return UOp(op, dtype, (self,) + src)
  def ufix(self, x) -> UOp: return x if isinstance(x, UOp) else self.const_like(x)
  # symbolic sizes are int UOps: x+0, x*1, x-c stay short (shapes stay readable: `i*4`, not `((1*i)*4)+0`)
  def _int(self, x) -> bool: return type(x) is int and dtypes.is_int(self.dtype)
  def __add__(self, x): return self if self._int(x) and x == 0 else self.alu(Ops.ADD, self.ufix(x))
  def __radd__(self, x): return self if self._int(x) and x == 0 else self.ufix(x).alu(Ops.ADD, self)
  def __sub__(self, x): return self + (-x) if self._int(x) else self + (-self.ufix(x))
  def __rsub__(self, x): return self.ufix(x) + (-self)
  def __mul__(self, x): return self if self._int(x) and x == 1 else self.alu(Ops.MUL, self.ufix(x))
  def __rmul__(self, x): return self if self._int(x) and x == 1 else self.ufix(x).alu(Ops.MUL, self)
  def __floordiv__(self, x): return self.alu(Ops.IDIV, self.ufix(x))
  def __mod__(self, x): return self.alu(Ops.MOD, self.ufix(x))
  def __neg__(self): return self.alu(Ops.NEG) if self.dtype is not dtypes.bool else self.alu(Ops.XOR, self.const_like(True))
  def __lt__(self, x): return self.alu(Ops.CMPLT, self.ufix(x))
  def __and__(self, x): return self.alu(Ops.AND, self.ufix(x))
  def __or__(self, x): return self.alu(Ops.OR, self.ufix(x))
  def __xor__(self, x): return self.alu(Ops.XOR, self.ufix(x))
  def ne(self, x): return self.alu(Ops.CMPNE, self.ufix(x))
  def eq(self, x): return self.ne(x) ^ True
  def maximum(self, x): return self.alu(Ops.MAX, self.ufix(x))
  def where(self, a, b): return UOp(Ops.WHERE, a.dtype if isinstance(a, UOp) else b.dtype, (self, *(a if isinstance(a, UOp) else b.const_like(a),
                                                                                                   b if isinstance(b, UOp) else a.const_like(b))))
  def cast(self, dtype: DType) -> UOp: return self if self.dtype == dtype else UOp(Ops.CAST, dtype, (self,))
  __hash__ = object.__hash__

  # ---- variables: symbolic sizes (one kernel for every sequence length)
  @staticmethod
  def variable(name: str, min_val: int, max_val: int, dtype: DType = dtypes.int32) -> UOp:
    """A named int in [min_val, max_val]; `.bind(value)` gives it a value. Used as a size in shapes."""
    if not isinstance(name, str) or not name.isidentifier(): raise ValueError(f"a variable's name must be an identifier, got {name!r}")
    return UOp(Ops.DEFINE_VAR, dtype, (), (name, int(min_val), int(max_val)))
  def bind(self, val: int) -> UOp:
    if self.op is not Ops.DEFINE_VAR: raise ValueError(f"only a variable (DEFINE_VAR) can be bound, not {self.op}")
    if not (self.arg[1] <= val <= self.arg[2]): raise VariableError(f"bind {val} not in range [{self.arg[1]}, {self.arg[2]}]")
    return UOp(Ops.BIND, self.dtype, (self, UOp.const(self.dtype, int(val))))
  def unbind(self) -> tuple[UOp, int]:
    if self.op is not Ops.BIND: raise ValueError(f"only a bound variable (BIND) can be unbound, not {self.op}")
    return self.src[0], self.src[1].arg
  @property
  def expr(self) -> str: return self.arg[0] if self.op is Ops.DEFINE_VAR else self.src[0].arg[0]

  # ---- symbolic bounds, used to simplify index math
  @property
  def vmin(self): return self._minmax()[0]
  @property
  def vmax(self): return self._minmax()[1]
  def _minmax(self) -> tuple:
    if (mm := self._cache.get("minmax")) is not None: return mm
    self._cache["minmax"] = mm = _minmax(self)
    return mm

  # ---- tensor-level properties
  @property
  def shape(self) -> tuple[int, ...] | None:
    if "shape" not in self._cache: self._cache["shape"] = _shape(self)
    return self._cache["shape"]
  @property
  def size(self) -> int: return prod(self.shape)
  @property
  def base(self) -> UOp:
    n = self
    while n.op in GroupOp.Movement: n = n.src[0]
    return n
  @property
  def device(self) -> str:
    if "device" in self._cache: return self._cache["device"]
    if self.op is Ops.DEVICE: d = self.arg
    elif self.op is Ops.COPY: d = self.src[1].arg
    else: d = next((d for s in self.src if (d := s.device) is not None), None)
    self._cache["device"] = d
    return d  # type: ignore
  @property
  def buffer(self):
    if self.op is not Ops.BUFFER: raise RuntimeError(f"{self.op} has no buffer")
    return buffers[self]
  @property
  def is_realized(self) -> bool: return self.base.op is Ops.BUFFER and self.base in buffers and buffers[self.base].is_allocated()

  # movement ops: return self when they would do nothing
  def reshape(self, shape: tuple[int, ...]) -> UOp: return self if self.shape == shape else UOp(Ops.RESHAPE, self.dtype, (self,), tuple(shape))
  def permute(self, order: tuple[int, ...]) -> UOp:
    return self if tuple(order) == tuple(range(len(order))) else UOp(Ops.PERMUTE, self.dtype, (self,), tuple(order))
  def expand(self, shape: tuple[int, ...]) -> UOp: return self if self.shape == shape else UOp(Ops.EXPAND, self.dtype, (self,), tuple(shape))
  def pad(self, arg: tuple[tuple[int, int], ...]) -> UOp:
    return self if all(p == (0, 0) for p in arg) else UOp(Ops.PAD, self.dtype, (self,), tuple(map(tuple, arg)))
  def shrink(self, arg: tuple[tuple[int, int], ...]) -> UOp:
    return self if all(a == (0, s) for a, s in zip(arg, self.shape)) else UOp(Ops.SHRINK, self.dtype, (self,), tuple(map(tuple, arg)))
  def flip(self, arg: tuple[bool, ...]) -> UOp: return self if not any(arg) else UOp(Ops.FLIP, self.dtype, (self,), tuple(arg))
  def r(self, op: Ops, axes: tuple[int, ...]) -> UOp:
    axes = tuple(sorted(a for a in axes if self.shape[a] != 1))
    return self if not axes else UOp(Ops.REDUCE_AXIS, self.dtype, (self,), (op, axes))

  def __repr__(self): return pretty(self)

def _shape(u: UOp) -> tuple[int, ...] | None:
  op, arg = u.op, u.arg
  if op is Ops.BUFFER: return (arg,)
  if op is Ops.CONST: return () if u.src else None
  if op is Ops.ARANGE: return (arg,) if u.src[0].op is Ops.DEVICE else ()
  if op is Ops.VIEW: return arg.shape
  if op is Ops.RESHAPE or op is Ops.EXPAND: return arg
  if op is Ops.PERMUTE: return tuple(u.src[0].shape[i] for i in arg)
  if op is Ops.PAD: return tuple(sym_canon(s + b + a) for s, (b, a) in zip(u.src[0].shape, arg))
  if op is Ops.SHRINK: return tuple(sym_canon(e - b) for b, e in arg)
  if op is Ops.REDUCE_AXIS: return tuple(1 if i in arg[1] else s for i, s in enumerate(u.src[0].shape))
  if op in (Ops.DEVICE, Ops.UNIQUE, Ops.KERNEL, Ops.SINK) or not u.src: return None
  for s in u.src:
    if s.op not in (Ops.DEVICE, Ops.UNIQUE) and (sh := s.shape) is not None: return sh
  return None

def _minmax(u: UOp) -> tuple:
  lo, hi = _minmax_raw(u)
  # arithmetic that can leave the dtype's range wraps around: then nothing is known
  if dtypes.is_int(u.dtype) and (lo < dtypes.min(u.dtype) or hi > dtypes.max(u.dtype)): return (dtypes.min(u.dtype), dtypes.max(u.dtype))
  return (lo, hi)

def _minmax_raw(u: UOp) -> tuple:
  dt, op = u.dtype, u.op
  if op is Ops.CONST: return (u.arg, u.arg)
  if op is Ops.RANGE or op is Ops.SPECIAL: return (0, smax(u.arg[1]) - 1)
  if op is Ops.DEFINE_VAR: return (u.arg[1], u.arg[2])
  if op is Ops.BIND: return u.src[0]._minmax()
  if op in GroupOp.ALU and dtypes.is_int(dt) or dt is dtypes.bool:
    s = [x._minmax() for x in u.src]
    if op is Ops.ADD: return (s[0][0] + s[1][0], s[0][1] + s[1][1])
    if op is Ops.MUL:
      vals = [a * b for a in s[0] for b in s[1]]
      return (min(vals), max(vals))
    if op is Ops.NEG: return (-s[0][1], -s[0][0])
    if op is Ops.MAX: return (max(s[0][0], s[1][0]), max(s[0][1], s[1][1]))
    if op is Ops.IDIV and s[1][0] == s[1][1] and s[1][0] > 0 and s[0][0] >= 0: return (s[0][0] // s[1][0], s[0][1] // s[1][0])
    if op is Ops.MOD and s[1][0] == s[1][1] and s[1][0] > 0:
      c = s[1][0]
      if s[0][0] >= 0: return (0, min(s[0][1], c - 1)) if s[0][1] - s[0][0] < c and s[0][0] % c <= s[0][1] % c else (0, c - 1) if s[0][1] >= c else (s[0][0], s[0][1])
      return (-(c - 1), c - 1)
    if op is Ops.CMPLT:
      if s[0][1] < s[1][0]: return (True, True)
      if s[0][0] >= s[1][1]: return (False, False)
      return (False, True)
    if op is Ops.CMPNE:
      if s[0][1] < s[1][0] or s[0][0] > s[1][1]: return (True, True)
      if s[0][0] == s[0][1] == s[1][0] == s[1][1]: return (False, False)
      return (False, True)
    if op is Ops.AND and dt is dtypes.bool: return (bool(s[0][0] and s[1][0]), bool(s[0][1] and s[1][1]))
    if op is Ops.OR and dt is dtypes.bool: return (bool(s[0][0] or s[1][0]), bool(s[0][1] or s[1][1]))
    if op is Ops.WHERE: return (min(s[1][0], s[2][0]), max(s[1][1], s[2][1]))
  if op is Ops.CAST and dtypes.is_int(dt) and dtypes.is_int(u.src[0].dtype) or (op is Ops.CAST and u.src[0].dtype is dtypes.bool):
    lo, hi = u.src[0]._minmax()
    if dtypes.min(dt) <= lo and hi <= dtypes.max(dt): return (int(lo), int(hi))
  return (dtypes.min(dt), dtypes.max(dt))

# ---------------------------------------------------------------- symbolic sizes: an int, or an int UOp of variables

class VariableError(ValueError, AssertionError):
  """A variable bound outside [min, max], or used without a value (tinygrad raises AssertionError here)."""

def smax(x) -> int: return x.vmax if isinstance(x, UOp) else x
def variables(x) -> list[UOp]:
  """The DEFINE_VARs and BINDs in a size (or a tuple of them)."""
  if isinstance(x, (tuple, list)): return [v for y in x for v in variables(y)]
  if not isinstance(x, UOp): return []
  topo = x.toposort()
  bound = {n.src[0] for n in topo if n.op is Ops.BIND}
  return [n for n in topo if n.op is Ops.BIND or n.op is Ops.DEFINE_VAR and n not in bound]
def sym_eval(x, vals: dict[str, int] | None = None):
  """The int a size stands for: bound variables take their value, others `vals[name]`."""
  if not isinstance(x, UOp): return x
  memo: dict[UOp, Any] = {}
  for n in x.toposort():
    if n.op is Ops.BIND: memo[n] = n.src[1].arg
    elif n.op is Ops.DEFINE_VAR: memo[n] = (vals or {}).get(n.arg[0])  # None: no value (fine under its BIND)
    elif n.op is Ops.CONST: memo[n] = n.arg
    else:
      if (free := next((s for s in n.src if memo[s] is None), None)) is not None:
        raise VariableError(f"variable {free.arg[0]!r} has no value: bind it (Variable(...).bind(n))")
      memo[n] = exec_alu(n.op, dtypes.int64 if n.dtype is not dtypes.bool else n.dtype, tuple(memo[s] for s in n.src))
  if memo[x] is None: raise VariableError(f"variable {x.arg[0]!r} has no value: bind it (Variable(...).bind(n))")
  return memo[x]
def _corners(*xs) -> list[tuple]:
  """Each size evaluated at every corner of its variables' box (each at its min or its max); bound ones keep their value
  when `bound`. For sizes built from +, *, // and max of variables (monotone in each one) the corners hold the extremes."""
  vs = sorted({v if v.op is Ops.DEFINE_VAR else v.src[0] for v in variables(xs)}, key=lambda v: v.arg[0])
  free = [x.substitute({n: n.src[0] for n in x.toposort() if n.op is Ops.BIND}) if isinstance(x, UOp) else x for x in xs]
  return [tuple(sym_eval(x, {v.arg[0]: v.arg[2 if (c >> k) & 1 else 1] for k, v in enumerate(vs)}) for x in free) for c in range(2 ** len(vs))]
def sym_canon(x):
  """A size in one canonical form: a sum of terms (coefficient x product of variables), sorted, the constant last;
  an int when the variables cancel. `(i+2) - i` is 2, `2 + i` and `i + 2` are one UOp, so shapes compare with ==."""
  if not isinstance(x, UOp) or not dtypes.is_int(x.dtype): return x
  poly: dict[UOp, dict[tuple, int]] = {}
  for n in x.toposort():
    if n.op is Ops.CONST: poly[n] = {(): n.arg}
    elif n.op is Ops.ADD: poly[n] = _poly_add(poly[n.src[0]], poly[n.src[1]])
    elif n.op is Ops.NEG: poly[n] = {k: -c for k, c in poly[n.src[0]].items()}
    elif n.op is Ops.MUL:
      poly[n] = {}
      for ka, ca in poly[n.src[0]].items():
        for kb, cb in poly[n.src[1]].items(): poly[n] = _poly_add(poly[n], {tuple(sorted(ka + kb, key=_atom_key)): ca * cb})
    else: poly[n] = {(n,): 1}  # a variable, or // max % of sizes: kept whole
  terms = sorted(((k, c) for k, c in poly[x].items() if c != 0), key=lambda kc: (len(kc[0]) == 0, [_atom_key(a) for a in kc[0]]))
  if not terms: return 0
  if len(terms) == 1 and terms[0][0] == (): return terms[0][1]
  out = None
  for atoms, c in terms:
    t = None
    for a in atoms: t = a if t is None else t * a
    t = x.const_like(c) if t is None else t * c
    out = t if out is None else out + t
  return out
def _atom_key(a: UOp) -> str: return f"{sym_str(a)}|{a.op.name}"
def _poly_add(p: dict, q: dict) -> dict:
  out = dict(p)
  for k, c in q.items(): out[k] = out.get(k, 0) + c
  return out
def sym_eq(a, b, bound: bool = False) -> bool:
  """Are two sizes equal for every value of their variables? (bound=True: for the bound values, when all are bound)"""
  if bound and all(v.op is Ops.BIND for v in variables((a, b))): return sym_eval(a) == sym_eval(b)
  return a is b or (a == b if not isinstance(a, UOp) and not isinstance(b, UOp) else all(x == y for x, y in _corners(a, b)))
def sym_ge(a, b) -> bool:
  """a >= b for every value of their variables (False when that depends on the values)."""
  return a is b or (a >= b if not isinstance(a, UOp) and not isinstance(b, UOp) else all(x >= y for x, y in _corners(a, b)))
def unbind(x, vals: dict[UOp, int]):
  """A size as kernel index math: every variable a DEFINE_VAR of dtype index; bound values are recorded in `vals`."""
  if not isinstance(x, UOp): return x
  memo: dict[UOp, UOp] = {}
  for n in x.toposort():
    if n.op in (Ops.DEFINE_VAR, Ops.BIND):
      v = UOp(Ops.DEFINE_VAR, dtypes.index, (), (n.arg if n.op is Ops.DEFINE_VAR else n.src[0].arg))
      if n.op is Ops.BIND:
        if vals.get(v, n.src[1].arg) != n.src[1].arg: raise VariableError(f"variable {v.arg[0]!r} is bound to {vals[v]} and {n.src[1].arg} at once")
        vals[v] = n.src[1].arg
      memo[n] = v
    elif n.op is Ops.CONST: memo[n] = UOp.const(dtypes.index if n.dtype is not dtypes.bool else n.dtype, n.arg)
    else: memo[n] = UOp(n.op, dtypes.bool if n.op in GroupOp.Comparison else dtypes.index, tuple(memo[s] for s in n.src), n.arg)
  return memo[x]
_SYM = {Ops.ADD: "+", Ops.MUL: "*", Ops.IDIV: "//", Ops.MOD: "%", Ops.CMPLT: "<", Ops.MAX: "max"}
def sym_str(x, c: bool = False) -> str:
  """A size as text: `i`, `(i*4)`, `(i+1)`; c=True writes C (`/` for //). Bound variables show only their name."""
  if not isinstance(x, UOp): return str(x)
  if x.op in (Ops.DEFINE_VAR, Ops.BIND): return x.expr
  if x.op is Ops.CONST: return str(x.arg)
  if x.op is Ops.NEG: return f"(-{sym_str(x.src[0], c)})"
  if x.op is Ops.CAST: return sym_str(x.src[0], c)
  a, b = (sym_str(s, c) for s in x.src[:2])
  if x.op is Ops.MAX: return f"(({a}>{b})?{a}:{b})" if c else f"max({a},{b})"
  return f"({a}{'/' if c and x.op is Ops.IDIV else _SYM[x.op]}{b})"

# ---------------------------------------------------------------- printing

def _short_arg(u: UOp) -> str:
  return repr(u.arg)

def pretty(u: UOp, limit: int = 400) -> str:
  """A readable, nested print of a graph; shared nodes are named once (x3:=...) and referred to after."""
  counts: dict[UOp, int] = {}
  for n in u.toposort():
    for s in n.src: counts[s] = counts.get(s, 0) + 1
  names: dict[UOp, str] = {}
  lines: list[str] = []
  def walk(n: UOp, depth: int, prefix: str):
    if len(lines) > limit: return
    pad = "  " * depth
    if n in names: lines.append(f"{pad}{prefix}{names[n]},"); return  # noqa: E702
    tag = ""
    if counts.get(n, 0) > 1 and n.src: names[n] = f"x{len(names)}"; tag = f"{names[n]}:="  # noqa: E702
    head = f"{pad}{prefix}{tag}UOp({n.op}, {n.dtype}, arg={_short_arg(n)}, src=("
    if not n.src: lines.append(head + ")),"); return  # noqa: E702
    lines.append(head)
    for s in n.src: walk(s, depth + 1, "")
    lines[-1] += "))," if not lines[-1].endswith("...") else ""
  walk(u, 0, "")
  out = "\n".join(lines)
  if len(lines) > limit: out += f"\n  ... ({len(u.toposort())} nodes in all)"
  return out.rstrip(",")

# ---------------------------------------------------------------- pattern matching

class UPat:
  """A pattern over UOps. `src` as a tuple matches in order, as a list in any order, as one UPat every source."""
  __slots__ = ("op", "dtype", "src", "arg", "name", "allow_any_len")
  def __init__(self, op: Ops | tuple | set | None = None, dtype: DType | tuple | None = None, src=None, arg: Any = None,
               name: str | None = None, allow_any_len: bool = False):
    self.op = None if op is None else (frozenset([op]) if isinstance(op, Ops) else frozenset(op))
    self.dtype = None if dtype is None else (frozenset([dtype]) if isinstance(dtype, DType) else frozenset(dtype))
    self.arg, self.name, self.allow_any_len = arg, name, allow_any_len
    if src is None: self.src = None
    elif isinstance(src, UPat): self.src = src  # every source matches this
    elif isinstance(src, list): self.src = [tuple(p) for p in itertools.permutations(src)]
    else: self.src = [tuple(src)]
  @staticmethod
  def var(name: str | None = None, dtype=None) -> UPat: return UPat(dtype=dtype, name=name)
  @staticmethod
  def cvar(name: str | None = None, dtype=None) -> UPat: return UPat(Ops.CONST, dtype, name=name)
  @staticmethod
  def const(dtype, b) -> UPat: return UPat(Ops.CONST, dtype, arg=b)
  def _bin(self, op: Ops, x, commutative: bool) -> UPat:
    x = x if isinstance(x, UPat) else UPat(Ops.CONST, arg=x)
    return UPat(op, src=[self, x] if commutative else (self, x))
  def __add__(self, x): return self._bin(Ops.ADD, x, True)
  def __radd__(self, x): return self._bin(Ops.ADD, x, True)
  def __mul__(self, x): return self._bin(Ops.MUL, x, True)
  def __rmul__(self, x): return self._bin(Ops.MUL, x, True)
  def __floordiv__(self, x): return self._bin(Ops.IDIV, x, False)
  def __mod__(self, x): return self._bin(Ops.MOD, x, False)
  def __lt__(self, x): return self._bin(Ops.CMPLT, x, False)
  def ne(self, x): return self._bin(Ops.CMPNE, x, True)
  def maximum(self, x): return self._bin(Ops.MAX, x, True)
  def __and__(self, x): return self._bin(Ops.AND, x, True)
  def __or__(self, x): return self._bin(Ops.OR, x, True)

  def match(self, u: UOp, store: dict) -> list[dict]:
    if self.op is not None and u.op not in self.op: return []
    if self.dtype is not None and u.dtype not in self.dtype: return []
    if self.arg is not None and u.arg != self.arg: return []
    if self.name is not None:
      if self.name in store and store[self.name] is not u: return []
      store = {**store, self.name: u}
    if self.src is None: return [store]
    if isinstance(self.src, UPat):
      outs = [store]
      for s in u.src: outs = [m for st in outs for m in self.src.match(s, st)]
      return outs
    res: list[dict] = []
    for alt in self.src:
      if len(alt) != len(u.src) and not (self.allow_any_len and len(u.src) >= len(alt)): continue
      outs = [store]
      for p, s in zip(alt, u.src):
        if p.src is None and len(outs) == 1:  # a leaf pattern (the common case): checked here, without a call
          st = outs[0]
          if p.op is not None and s.op not in p.op or p.dtype is not None and s.dtype not in p.dtype or p.arg is not None and s.arg != p.arg:
            outs = []
          elif p.name is not None:
            if p.name not in st: outs = [{**st, p.name: s}]
            elif st[p.name] is not s: outs = []
        else: outs = [m for st in outs for m in p.match(s, st)]
        if not outs: break
      res.extend(outs)
    return res
  def __repr__(self):
    ops = "|".join(o.name for o in self.op) if self.op else "*"
    name = f" {self.name!r}" if self.name else ""
    if self.src is None: return f"UPat({ops}{name})"
    srcs = repr(self.src) if isinstance(self.src, UPat) else ", ".join(map(repr, self.src[0]))
    return f"UPat({ops}{name}, src=({srcs}))"

class PatternMatcher:
  """An ordered list of (UPat, function) rules. The function gets the pattern's named nodes as keyword
  arguments, plus `ctx` (whatever graph_rewrite was given) and `ret` (the matched node) if it asks for them.
  It returns a replacement UOp, or None to leave the node alone."""
  def __init__(self, patterns: list[tuple[UPat, Callable]]):
    self.patterns = patterns
    by_op: dict[Ops | None, list] = {}
    for pat, fn in patterns:
      params = inspect.signature(fn).parameters
      entry = (pat, fn, "ctx" in params, "ret" in params and (pat.name != "ret"), _src_ops(pat))
      for op in (pat.op if pat.op is not None else [None]): by_op.setdefault(op, []).append(entry)
    # per op: its own rules, then the rules for any op (one list per op, built once)
    self.wild = by_op.get(None, [])
    self.by_op = {op: by_op.get(op, []) + self.wild for op in Ops}
  def __add__(self, other: PatternMatcher) -> PatternMatcher: return PatternMatcher(self.patterns + other.patterns)
  def rewrite(self, u: UOp, ctx=None) -> UOp | None:
    r = self.rewrite_with_pattern(u, ctx)
    return None if r is None else r[0]
  def rewrite_with_pattern(self, u: UOp, ctx=None) -> tuple[UOp, UPat] | None:
    for pat, fn, wants_ctx, wants_ret, (nsrc, first) in self.by_op[u.op]:
      # a cheap test first: the number of sources, and the first source's op
      if nsrc is not None and (len(u.src) != nsrc or first is not None and (not nsrc or u.src[0].op not in first)): continue
      for store in pat.match(u, {}):
        kw = {k: v for k, v in store.items()}
        if wants_ctx: kw["ctx"] = ctx
        if wants_ret: kw["ret"] = u
        if (ret := fn(**kw)) is not None and ret is not u: return ret, pat
    return None

def _src_ops(pat: UPat) -> tuple[int | None, frozenset | None]:
  """For a pattern whose sources are given in order (each alternative a tuple of the same length): how many sources a
  match has, and the ops its first source may have (None: any). A cheap test that rejects most nodes before the match."""
  if not isinstance(pat.src, list) or pat.allow_any_len or len({len(alt) for alt in pat.src}) != 1: return None, None
  firsts = [alt[0].op for alt in pat.src if alt]
  return len(pat.src[0]), (None if not firsts or any(o is None for o in firsts) else frozenset().union(*firsts))

# graph_rewrite reports each pass to whoever listens (the trace bus installs a hook). A hook may carry `wanted()`: it is
# asked before each pass (the DEBUG printer wants passes only at DEBUG>=4), so nobody listening costs nothing.
rewrite_hooks: list[Callable] = []

# The compiler's stages, in pipeline order. Every pass is tagged with one: given to graph_rewrite, or the stage the
# caller is in (`with in_stage("lowered"): ...`), so a helper's own rewrites (index simplification in a ShapeTracker)
# are shown under the stage that ran them.
STAGES = ("tensor graph", "kernels", "lowered", "simplified", "linearized")
_stage_stack: list[str] = []

@contextlib.contextmanager
def in_stage(stage: str):
  if stage not in STAGES: raise ValueError(f"unknown stage {stage!r}: one of {STAGES}")
  _stage_stack.append(stage)
  try: yield
  finally: _stage_stack.pop()

def current_stage() -> str | None: return _stage_stack[-1] if _stage_stack else None

def _tracking() -> bool: return any(getattr(h, "wanted", _always)() for h in rewrite_hooks)
def tracking_rewrites() -> bool:
  """Does a reader want passes reported now? (then a pass collects its steps)"""
  return bool(rewrite_hooks) and _tracking()
def _always() -> bool: return True

def report_pass(name: str, before: UOp, after: UOp, steps: list[tuple] | None = None, stage: str | None = None):
  """Report a step that is not a PatternMatcher (the linearizer's ordering) like a pass: its graph before and after."""
  if tracking_rewrites():
    for h in rewrite_hooks: h(name, before, after, list(steps or []), stage or current_stage())

def graph_rewrite(sink: UOp, pm: PatternMatcher, ctx=None, name: str | None = None, report_unchanged: bool = True,
                  stage: str | None = None, top_down: bool = False) -> UOp:
  """Rewrite a graph with `pm` until no pattern matches anywhere: sources first, then the node itself;
  a replacement is rewritten again in turn. `top_down=True`: a node is also tried before its sources, and when a rule
  replaces it the old sources are never visited (a rule that pushes a view down stops where it is turned into a load).
  `report_unchanged=False`: a pass that changed nothing is not reported. `stage`: the pipeline stage the pass belongs to."""
  if stage is not None and stage != current_stage():  # the rules' own rewrites (a ShapeTracker's index math) belong to this stage too
    with in_stage(stage): return graph_rewrite(sink, pm, ctx, name, report_unchanged, stage, top_down)
  track = tracking_rewrites()
  steps: list[tuple] = []
  done: dict[UOp, UOp] = {}
  stack: list[tuple] = [(sink, 0, None)]
  while stack:
    n, phase, aux = stack.pop()
    if n in done and phase != 2: continue
    if phase == 0:
      if top_down and pm.by_op[n.op] and (r := pm.rewrite_with_pattern(n, ctx)) is not None:
        if track: steps.append((n, r[0], r[1]))
        if r[0] in done: done[n] = done[r[0]]; continue  # noqa: E702
        stack.append((n, 2, r[0]))
        stack.append((r[0], 0, None))
        continue
      stack.append((n, 1, None))
      for s in reversed(n.src):
        if s not in done: stack.append((s, 0, None))
    elif phase == 1:
      src = tuple(done[s] for s in n.src)
      nn = n if src == n.src else UOp(n.op, n.dtype, src, n.arg)
      r = pm.rewrite_with_pattern(nn, ctx) if pm.by_op[nn.op] else None  # (no rule for this op: no call)
      if r is None:
        done[n] = nn
        continue
      if track: steps.append((nn, r[0], r[1]))
      if r[0] in done: done[n] = done[r[0]]; continue  # noqa: E702
      stack.append((n, 2, r[0]))
      stack.append((r[0], 0, None))
    else:
      done[n] = done[aux]
  ret = done[sink]
  if track and (steps or report_unchanged):
    for h in rewrite_hooks: h(name or "graph_rewrite", sink, ret, steps, stage or current_stage())
  if DEBUG >= 7 and steps: print(f"rewrite {name}: {len(steps)} steps")
  return ret

def new_unique() -> UOp: return UOp(Ops.UNIQUE, dtypes.void, (), next(_unique_counter))
