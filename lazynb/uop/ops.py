"""The UOp IR: one node type for every stage, and the pattern matcher that rewrites it.

A `UOp(op, dtype, src, arg)` is immutable and hash-consed: building the same spec twice returns the same
Python object, so equal subgraphs are shared and `a is b` is a cheap equality test. The same class carries
the lazy tensor graph (BUFFER, RESHAPE, ADD, REDUCE_AXIS ...), kernel ASTs (LOAD, STORE, VIEW) and the
lowered program (RANGE, SPECIAL, DEFINE_ACC ...)."""
from __future__ import annotations
import collections, contextlib, contextvars, itertools, math, threading, weakref
from typing import Any, Callable, Iterator
from lazynb.dtype import DType, dtypes
from lazynb.helpers import postorder, prod, unwrap
from lazynb.runstate import state
# the kinds of op and the rewrite engine live in their own modules; `lazynb.uop.ops` (alias `lazynb.ops`, tinygrad 0.10's
# `tinygrad.ops`) names them too
from lazynb.uop.opcodes import Ops, GroupOp, python_alu, exec_alu, cast_scalar  # noqa: F401
from lazynb.uop.opmixin import OpMixin
from lazynb.uop.rewrite import (UPat, PatternMatcher, graph_rewrite, rewrite_hooks, STAGES, in_stage, current_stage,  # noqa: F401
                                tracking_rewrites, report_pass)

# ---------------------------------------------------------------- the UOp

class UOpMetaClass(type):
  """Hash-consing: building a UOp equal to a live one returns that one, so equal graphs are the same objects.
  BEAM renders kernels on threads, so the lookup-and-insert and the removal of a dead entry hold one lock (re-entrant:
  a dead UOp's callback can run inside __call__, when building a node frees another)."""
  cache: dict[tuple, weakref.ReferenceType] = {}
  lock = threading.RLock()
  def __call__(cls, op: Ops, dtype: DType = dtypes.void, src: tuple = (), arg: Any = None):
    # -0.0 == 0.0 (and hashes alike), but 1/x tells them apart: the sign is part of the key
    key = (op, dtype, src, arg, type(arg), math.copysign(1, arg) if type(arg) is float else 0)
    with UOpMetaClass.lock:
      if (ref := UOpMetaClass.cache.get(key)) is not None and (ret := ref()) is not None: return ret
      ret = super().__call__(op, dtype, src, arg)
      def _drop(r, key=key, cache=UOpMetaClass.cache, lock=UOpMetaClass.lock):  # (module globals are gone at interpreter exit)
        with lock:
          if cache.get(key) is r: del cache[key]
      UOpMetaClass.cache[key] = weakref.ref(ret, _drop)
      return ret

# the build track's seam: a learner's toposort in place of UOp.toposort, per thread (lazynb.notebook.build.mine sets it)
def is_contiguous_view_of_buffer(u: UOp) -> bool:
  """u reads a whole buffer in order (so its memory can be used as is)."""
  return u.base.op is Ops.BUFFER and (st := u.st).contiguous and st.size == u.base.size

class NoBufferError(RuntimeError, AssertionError):  # (an AssertionError too: tinygrad 0.10 asserts, and its code catches that)
  """.buffer of a node that has none."""
all_metadata = state.metadata  # tinygrad 0.10's name (the registry lives in runstate)
_toposort_fn: contextvars.ContextVar[Callable | None] = contextvars.ContextVar("lazynb_toposort", default=None)
@contextlib.contextmanager
def toposort_with(fn: Callable) -> Iterator[None]:
  """`with toposort_with(fn): ...`: every UOp.toposort() in this block (this thread) is fn(root)."""
  token = _toposort_fn.set(fn)
  try: yield
  finally: _toposort_fn.reset(token)

def track_rewrites(named: bool = False, name_fxn: Callable | None = None) -> Callable[[Callable], Callable]:
  """tinygrad 0.10's decorator that names a block of rewrites for its VIZ server. lazynb's trace bus records every
  graph_rewrite pass (named by its matcher) whether or not a function is decorated, so this returns the function."""
  return lambda fn: fn

_KERNEL_LEVEL = {Ops.RANGE, Ops.SPECIAL, Ops.DEFINE_GLOBAL, Ops.DEFINE_ACC, Ops.LOAD, Ops.INDEX, Ops.VIEW}

_unique_counter = itertools.count()

class UOp(OpMixin, metaclass=UOpMetaClass):
  __slots__ = ("op", "dtype", "src", "arg", "__weakref__", "_cache")
  _cache: dict[str, Any]  # shape, device, bounds, ... computed once
  def __init__(self, op: Ops, dtype: DType = dtypes.void, src: tuple = (), arg: Any = None):
    self.op, self.dtype, self.src, self.arg, self._cache = op, dtype, src, arg, {}
  def __reduce__(self): return UOp, (self.op, self.dtype, self.src, self.arg)
  def replace(self, **kw) -> UOp:
    op, dtype, src, arg = kw.get("op", self.op), kw.get("dtype", self.dtype), kw.get("src", self.src), kw.get("arg", self.arg)
    return UOp(op, dtype, tuple(src), arg)

  # ---- graph helpers
  def toposort(self) -> list[UOp]:
    """Every node reachable from self, each after all of its sources (fn(self) inside `with toposort_with(fn)`)."""
    if (fn := _toposort_fn.get()) is not None:
      token = _toposort_fn.set(None)  # fn's own calls (and the checks of its result) walk the graph lazynb's way
      try: return fn(self)
      finally: _toposort_fn.reset(token)
    return postorder([self], lambda n: n.src)
  def substitute(self, mapping: dict[UOp, UOp], memo: dict[UOp, UOp] | None = None) -> UOp:  # memo: gets every node -> its new one
    (memo := {} if memo is None else memo).update(mapping)
    for n in self.toposort():
      if n in memo: continue
      src = tuple(memo[s] for s in n.src)
      memo[n] = n if src == n.src else n.replace(src=src)
    return memo[self]
  def sink(*srcs: UOp) -> UOp: return UOp(Ops.SINK, dtypes.void, tuple(srcs))
  def contiguous(self) -> UOp: return UOp(Ops.CONTIGUOUS, self.dtype, (self, new_unique()))  # (as Tensor.contiguous: a buffer of its own)
  @property
  def metadata(self): return state.metadata.get(self)

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

  # ---- arithmetic (used for index math and by the pattern matcher): the operators come from OpMixin, through these hooks
  def alu(self, op: Ops, *src: UOp) -> UOp:
    dtype = dtypes.bool if op in GroupOp.Comparison else self.dtype
    return UOp(op, dtype, (self,) + src)
  def ufix(self, x) -> UOp: return x if isinstance(x, UOp) else self.const_like(x)
  _lift = ufix
  def _unary(self, op: Ops) -> UOp: return self.alu(op)
  # symbolic sizes are int UOps: x+0, x*1, x-c stay short (shapes stay readable: `i*4`, not `((1*i)*4)+0`)
  def _int(self, x) -> bool: return type(x) is int and dtypes.is_int(self.dtype)
  def _binop(self, op: Ops, x, reverse: bool = False) -> UOp:
    if self._int(x) and (op is Ops.ADD and x == 0 or op is Ops.MUL and x == 1): return self
    if reverse and not (self._int(x) and op in (Ops.ADD, Ops.MUL)): return self.ufix(x).alu(op, self)
    return self.alu(op, self.ufix(x))  # 2*i is i*2: the same node, so equal sizes compare equal
  def _negate(self, x) -> UOp: return -x if self._int(x) else -self.ufix(x)  # i - 1 is i + -1, not i + NEG(1)
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
  def size(self) -> int: return prod(unwrap(self.shape))
  @property
  def base(self) -> UOp:
    n = self
    while n.op in GroupOp.Movement: n = n.src[0]
    return n
  @property
  def st_arg(self):
    """A kernel's LOAD, STORE or CONST: the ShapeTracker of its VIEW source (tinygrad 0.10's)."""
    return next(s.arg for s in self.src if s.op is Ops.VIEW)
  @property
  def full_shape(self) -> tuple:
    """A kernel AST's full shape: the largest size of each axis over the views it reads and writes (tinygrad 0.10's)."""
    return tuple(max(x, key=smax) for x in zip(*[u.arg.shape for u in self.toposort() if u.op is Ops.VIEW]))
  @property
  def st(self):
    """The ShapeTracker of the movement ops down to the base, from its flat index (tinygrad 0.10's UOp.st)."""
    from lazynb.shape.shapetracker import ShapeTracker  # (upward: the shape layer is built on UOps)
    chain, n = [], self
    while n.op in GroupOp.Movement: chain.append(n); n = n.src[0]  # noqa: E702
    st = ShapeTracker.from_shape(unwrap(n.shape))
    for m in reversed(chain): st = st.movement(m.op, m.arg)
    return st
  @property
  def device(self) -> str:
    if "device" in self._cache: return self._cache["device"]
    if self.op is Ops.DEVICE: d = self.arg
    elif self.op is Ops.COPY: d = self.src[1].arg
    else: d = next((d for s in self.src if (d := s.device) is not None), None)
    self._cache["device"] = d
    return d
  @property
  def buffer(self):
    """The Buffer of a BUFFER node, or of a view that reads all of it in order (a realized tensor's node)."""
    if self.op is Ops.BUFFER: return state.buffers[self]
    if is_contiguous_view_of_buffer(self): return self.base.buffer
    raise NoBufferError(f"{self.op} has no buffer: .buffer must be BUFFER or a contiguous view of one (realize the value first)")
  @property
  def realized(self): return self.buffer if self.op is Ops.BUFFER and self in state.buffers and self.buffer.is_allocated() else None  # (tinygrad 0.10's)
  @property
  def is_realized(self) -> bool: return self.base.realized is not None

  # movement ops: return self when they would do nothing
  def reshape(self, shape: tuple[int, ...]) -> UOp: return self if self.shape == shape else UOp(Ops.RESHAPE, self.dtype, (self,), tuple(shape))
  def permute(self, order: tuple[int, ...]) -> UOp:
    return self if tuple(order) == tuple(range(len(order))) else UOp(Ops.PERMUTE, self.dtype, (self,), tuple(order))
  def expand(self, shape: tuple[int, ...]) -> UOp: return self if self.shape == shape else UOp(Ops.EXPAND, self.dtype, (self,), tuple(shape))
  def pad(self, arg: tuple[tuple[int, int], ...]) -> UOp:
    return self if all(p == (0, 0) for p in arg) else UOp(Ops.PAD, self.dtype, (self,), tuple(map(tuple, arg)))
  def shrink(self, arg: tuple[tuple[int, int], ...]) -> UOp:
    return self if all(a == (0, s) for a, s in zip(arg, unwrap(self.shape))) else UOp(Ops.SHRINK, self.dtype, (self,), tuple(map(tuple, arg)))
  def flip(self, arg: tuple[bool, ...]) -> UOp: return self if not any(arg) else UOp(Ops.FLIP, self.dtype, (self,), tuple(arg))
  def r(self, op: Ops, axes: tuple[int, ...]) -> UOp:
    axes = tuple(sorted(a for a in axes if unwrap(self.shape)[a] != 1))
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
  # (a kernel's SINK of STOREs has its stores' shape, as in tinygrad 0.10: the kernel's full iteration space with reduced axes 1)
  if op in (Ops.DEVICE, Ops.UNIQUE, Ops.KERNEL) or op is Ops.SINK and not all(s.op is Ops.STORE for s in u.src) or not u.src: return None
  for s in u.src:
    if s.op not in (Ops.DEVICE, Ops.UNIQUE) and (sh := s.shape) is not None: return sh
  return None

def _minmax(u: UOp) -> tuple:
  lo, hi = _minmax_raw(u)
  # arithmetic that can leave the dtype's range wraps around: then nothing is known
  return (dtypes.min(u.dtype), dtypes.max(u.dtype)) if dtypes.is_int(u.dtype) and (lo < dtypes.min(u.dtype) or hi > dtypes.max(u.dtype)) else (lo, hi)

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
      return (False, False) if s[0][0] >= s[1][1] else (False, True)
    if op is Ops.CMPNE:
      if s[0][1] < s[1][0] or s[0][0] > s[1][1]: return (True, True)
      return (False, False) if s[0][0] == s[0][1] == s[1][0] == s[1][1] else (False, True)
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
  """a >= b for every value of their variables (False when that depends on the values). With a max in them (a mask's
  bound clamped by a variable) the corners may miss the extremes: then by bounds (never wrong, maybe too cautious)."""
  if any(n.op is Ops.MAX for x in (a, b) if isinstance(x, UOp) for n in x.toposort()):
    return d.vmin >= 0 if isinstance(d := sym_canon(a - b), UOp) else d >= 0
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

def pretty(u: UOp, limit: int = 400) -> str:
  """A readable, nested print of a graph; shared nodes are named once (x3:=...) and referred to after."""
  counts = collections.Counter(s for n in u.toposort() for s in n.src)  # how many nodes read each
  names: dict[UOp, str] = {}
  lines: list[str] = []
  def walk(n: UOp, depth: int, prefix: str):
    if len(lines) > limit: return
    pad = "  " * depth
    if n in names: lines.append(f"{pad}{prefix}{names[n]},"); return  # noqa: E702
    tag = ""
    if counts.get(n, 0) > 1 and n.src: names[n] = f"x{len(names)}"; tag = f"{names[n]}:="  # noqa: E702
    head = f"{pad}{prefix}{tag}UOp({n.op}, {n.dtype}, arg={n.arg!r}, src=("
    if not n.src: lines.append(head + ")),"); return  # noqa: E702
    lines.append(head)
    for s in n.src: walk(s, depth + 1, "")
    lines[-1] += "))," if not lines[-1].endswith("...") else ""
  walk(u, 0, "")
  out = "\n".join(lines)
  if len(lines) > limit: out += f"\n  ... ({len(u.toposort())} nodes in all)"
  return out.rstrip(",")


def new_unique() -> UOp: return UOp(Ops.UNIQUE, dtypes.void, (), next(_unique_counter))
