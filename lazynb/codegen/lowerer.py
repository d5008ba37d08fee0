"""Lowering: a Kernel's AST (LOAD/STORE with ShapeTrackers) becomes explicit index math over loop variables.

Each axis of the full shape gets an index: a RANGE (a loop), a SPECIAL (a GPU work-item id) or, for upcast
and unrolled axes, a constant: the expression is built once per constant value, so an upcast of 4 yields
four loads and four stores, and an unroll of 4 yields four terms per accumulator update. A REDUCE node
stands for "accumulate this over these RANGEs"; the linearizer turns it into an accumulator and a loop.

Two passes, both PatternMatchers reported to the trace: `lower_kernel` ("lowered") rewrites LANE(ast node) markers, one
per store and upcast lane, top-down into index math (rules in `lowering`); `simplify` ("simplified") then runs the
symbolic rules over the result (`lower_rules`)."""
from __future__ import annotations
import itertools
from lazynb.dtype import dtypes
from lazynb.uop.ops import UOp, UPat, Ops, GroupOp, PatternMatcher, graph_rewrite, variables, in_stage
from lazynb.uop.symbolic import symbolic
from lazynb.codegen.kernel import Kernel, AxisType
from lazynb.shape.shapetracker import ShapeTracker
from lazynb.helpers import prod, dedup, unwrap
from lazynb.pipeline import implements

def reduce_identity(op: Ops, dtype):
  if op is Ops.ADD: return False if dtype is dtypes.bool else 0
  if op is Ops.MUL: return True if dtype is dtypes.bool else 1
  if op is Ops.MAX: return dtypes.min(dtype)
  raise ValueError(f"no identity for reduce op {op}")

def axis_indices(k: Kernel) -> list[UOp | None]:
  """One index UOp per axis (None for axes expanded into constants): loops are RANGEs, work-item and
  thread ids are SPECIALs. A device with work-item ids has at most 3 global ones: outer extras loop."""
  style = k.renderer.global_style
  globals_ = k.axes_of(AxisType.GLOBAL)
  looped = set(globals_) if style == "loop" else set(globals_[:max(0, len(globals_) - 3)])
  out: list[UOp | None] = []
  for i, (s, t, name) in enumerate(zip(k.full_shape, k.axis_types, k.axis_names())):
    if t in (AxisType.UPCAST, AxisType.UNROLL): out.append(None)
    elif t is AxisType.GLOBAL and i in looped or t is AxisType.REDUCE: out.append(UOp(Ops.RANGE, dtypes.index, (), (i, s, name)))
    else: out.append(UOp(Ops.SPECIAL, dtypes.index, (), (name, s)))
  return out

def lane(u: UOp, env: dict[int, int]) -> UOp:
  """u for one lane: each upcast/unroll axis in env stands for that constant."""
  return UOp(Ops.LANE, u.dtype, (u,), tuple(sorted(env.items())))

class Lowering:
  """What the lowering rules know about one Kernel: the index of each axis, and the work-group layout of a GROUP reduce."""
  def __init__(self, k: Kernel):
    self.k = k
    self.base = axis_indices(k)
    self.upcast, self.unroll = k.axes_of(AxisType.UPCAST), k.axes_of(AxisType.UNROLL)
    self.red_ranges = tuple(self.base[i] for i in k.axes_of(AxisType.REDUCE))
    self.group_axes = k.axes_of(AxisType.GROUP)
    self.local_axes = k.axes_of(AxisType.LOCAL, AxisType.GROUP)
    self.lsizes = [k.full_shape[a] for a in self.local_axes]
    self.smem: list[UOp] = []                 # the local-memory buffers GROUP reduces made
    self.free: dict[UOp, set[int]] = {}       # per view: the upcast/unroll axes its index and mask do not depend on
    self.group_first = UOp.const(dtypes.bool, True)  # after a GROUP reduce every work-item of the group has the answer: one stores it
    for a in self.group_axes: self.group_first = self.group_first & unwrap(self.base[a]).eq(0)  # (local and group axes have an index)
    # PADTO: the ops inside the reduce see every axis; after it, the reduce axes are gone (their index counts as 0: never padded)
    self.in_reduce = {n for r in k.ast.toposort() if r.op is Ops.REDUCE_AXIS for n in r.src[0].toposort()} if k.pad_st is not None else set()

  def index(self, view: UOp, env: dict[int, int]) -> tuple[UOp, UOp]:
    """The index and validity of a view (a VIEW of the kernel's AST) at a lane."""
    st: ShapeTracker = self.k.view_st(view)
    idxs = [UOp.const(dtypes.index, 0) if st.shape[i] == 1 else (b if (b := self.base[i]) is not None else UOp.const(dtypes.index, env.get(i, 0)))
            for i in range(len(self.k.full_shape))]
    return st.to_indexed_uops(idxs)

  def real(self, env: dict[int, int], reduce: bool | None) -> UOp:
    """Is this lane one PADTO did not add? Along the reduce axes only (reduce=True), the others only (False), or all (None).
    An axis left out counts as index 0, which padding never adds (it pads at the end)."""
    if (pad_st := self.k.pad_st) is None: return UOp.const(dtypes.bool, True)
    def idx(i: int) -> UOp:
      if pad_st.shape[i] == 1 or reduce is not None and self.k.axis_types[i].is_reduce != reduce: return UOp.const(dtypes.index, 0)
      return b if (b := self.base[i]) is not None else UOp.const(dtypes.index, env.get(i, 0))
    return graph_rewrite(pad_st.to_indexed_uops([idx(i) for i in range(len(self.k.full_shape))])[1], symbolic, name="lower: lanes PADTO added")

  def independent(self, view: UOp) -> set[int]:
    if view not in self.free:
      st = self.k.view_st(view)
      v = st.views[0]
      self.free[view] = {a for a in self.upcast + self.unroll if st.shape[a] == 1 or len(st.views) == 1 and v.strides[a] == 0 and
                         (v.mask is None or v.mask[a] == (0, v.shape[a]))}
    return self.free[view]

  def flat(self, idxs: list[UOp]) -> UOp:
    """A position in the work-group, row-major over the local (and group) axes."""
    out, acc = UOp.const(dtypes.index, 0), 1
    for i, s in reversed(list(zip(idxs, self.lsizes))): out, acc = out + i * acc, acc * s
    return out

  def group_reduce(self, partial: UOp, op: Ops) -> UOp:
    """GROUP: each work-item reduces its share; partials meet in local memory; one loop over them finishes the reduce."""
    buf = UOp(Ops.DEFINE_LOCAL, partial.dtype.ptr(), (), (f"temp{len(self.smem)}", prod(self.lsizes)))
    self.smem.append(buf)
    mine = UOp(Ops.INDEX, buf.dtype, (buf, self.flat([unwrap(self.base[a]) for a in self.local_axes])))  # this work-item's slot
    bar = UOp(Ops.BARRIER, dtypes.void, (UOp(Ops.STORE, dtypes.void, (mine, partial)),))
    gsizes = [self.k.full_shape[a] for a in self.group_axes]
    r2 = UOp(Ops.RANGE, dtypes.index, (), (len(self.k.full_shape), prod(gsizes), f"ridx{len(self.red_ranges)}"))  # one loop serves every partial
    digits, rem = {}, r2
    for a, s in reversed(list(zip(self.group_axes, gsizes))): digits[a], rem = rem % s, rem // s
    idx = self.flat([digits.get(a, unwrap(self.base[a])) for a in self.local_axes])
    return UOp(Ops.REDUCE, partial.dtype, (UOp(Ops.LOAD, partial.dtype, (UOp(Ops.INDEX, buf.dtype, (buf, idx)), bar)), r2), op)

# ---------------------------------------------------------------- the rules: LANE(ast node) -> index math

def _indexed(buf: UOp, idx: UOp, valid: UOp) -> UOp: return UOp(Ops.INDEX, buf.dtype, (buf, idx) if valid.is_const(True) else (buf, idx, valid))
def _masked(x: UOp, valid: UOp, fill=0) -> UOp: return x if valid.is_const(True) else valid.where(x, x.const_like(fill))  # fill outside the mask

def _drop_ignored_lanes(ctx: Lowering, l: UOp, u: UOp) -> UOp | None:
  """A lane the view ignores (a broadcast axis) reuses another lane's load: the lane forgets those axes."""
  if not l.arg or u.op is not Ops.LOAD and not u.src: return None
  skip = ctx.independent(u.src[-1] if u.op is Ops.LOAD else u.src[0])
  env = tuple((a, v) for a, v in l.arg if a not in skip)
  return None if env == l.arg else l.replace(arg=env)

def _load(ctx: Lowering, l: UOp, u: UOp) -> UOp:
  buf, view = u.src
  return UOp(Ops.LOAD, u.dtype, (_indexed(buf, *ctx.index(view, dict(l.arg))),))

def _const(ctx: Lowering, l: UOp, u: UOp) -> UOp:
  ret = u.arg.cast(u.dtype) if isinstance(u.arg, UOp) else UOp.const(u.dtype, u.arg)  # a size as a number (mean over i)
  return _masked(ret, ctx.index(u.src[0], dict(l.arg))[1]) if u.src else ret  # a masked constant: zero outside the mask

def _arange(ctx: Lowering, l: UOp, u: UOp) -> UOp:
  """The number line: its value is the position the view maps this index to."""
  idx, valid = ctx.index(u.src[0], dict(l.arg))
  return _masked(idx.cast(u.dtype), valid)

def _reduce(ctx: Lowering, l: UOp, u: UOp) -> UOp:
  """One update of the accumulator: the unrolled lanes combined, then REDUCE over the reduce loops."""
  op, env = u.arg[0], dict(l.arg)  # a loop of 0 steps reads nothing (its loads, hoisted out of it, would read past the end)
  if any(isinstance(n := ctx.k.full_shape[a], int) and n == 0 for a in ctx.k.axes_of(AxisType.REDUCE) + ctx.unroll): return UOp.const(u.dtype, reduce_identity(op, u.dtype))
  vals = []
  for combo in itertools.product(*[range(ctx.k.full_shape[a]) for a in ctx.unroll]):
    e = {**env, **dict(zip(ctx.unroll, combo))}
    v, real = lane(u.src[0], e), ctx.real(e, reduce=True)  # a position PADTO added adds the identity, whatever x computes there
    vals.append(_masked(v, real, reduce_identity(op, u.dtype)))
  acc = vals[0]
  for v in vals[1:]: acc = UOp(op, u.dtype, (acc, v))
  ret = UOp(Ops.REDUCE, u.dtype, (acc,) + ctx.red_ranges, op) if ctx.red_ranges else acc
  return ctx.group_reduce(ret, op) if ctx.group_axes else ret

def _store(ctx: Lowering, l: UOp, u: UOp) -> UOp:
  buf, view, val = u.src
  idx, valid = ctx.index(view, dict(l.arg))
  return UOp(Ops.STORE, dtypes.void, (_indexed(buf, idx, valid & ctx.group_first), lane(val, dict(l.arg))))

def _guard_divisor(ctx: Lowering, l: UOp, u: UOp) -> UOp | None:
  """An integer division in a lane PADTO added divides by 1: its loads read 0 and its constants may too, so the guard the
  Tensor put around the divisor (x // 0 is 0) can itself be 0 there, and C traps on / 0 (SIGFPE) even when nothing is stored."""
  d = u.src[1]
  if ctx.k.pad_st is None or not dtypes.is_int(u.dtype): return None
  if d.op is Ops.CONST and not d.src and isinstance(d.arg, int) and d.arg not in (0, -1): return None  # an unmasked constant: never 0
  real = ctx.real(dict(l.arg), reduce=None if u in ctx.in_reduce else False)
  if real.is_const(True): return None
  a, d = (lane(s, dict(l.arg)) for s in u.src)
  return UOp(u.op, u.dtype, (a, real.where(d, d.const_like(1))), u.arg)

def _cannot_lower(u: UOp): raise NotImplementedError(f"cannot lower {u.op}")

def _lane_of(op) -> UPat: return UPat(Ops.LANE, name="l", src=(UPat(op, name="u"),))
lowering = PatternMatcher([
  (_lane_of((Ops.LOAD, Ops.CONST, Ops.ARANGE)), _drop_ignored_lanes),
  (_lane_of(Ops.LOAD), _load),
  (_lane_of(Ops.CONST), _const),
  (_lane_of(Ops.ARANGE), _arange),
  (_lane_of(Ops.REDUCE_AXIS), _reduce),
  (_lane_of((Ops.IDIV, Ops.MOD)), _guard_divisor),
  (_lane_of(GroupOp.Elementwise), lambda l, u: UOp(u.op, u.dtype, tuple(UOp(Ops.LANE, s.dtype, (s,), l.arg) for s in u.src), u.arg)),
  (_lane_of(Ops.STORE), _store),
  (_lane_of(None), lambda l, u: _cannot_lower(u))])

@implements("lower")
def lower_kernel(k: Kernel) -> UOp:
  """The "lowered" pass: every store of the AST, once per upcast lane, rewritten into index math (not yet simplified)."""
  ctx = Lowering(k)
  lanes = [lane(store, dict(zip(ctx.upcast, combo))) for store in k.ast.src
           for combo in itertools.product(*[range(k.full_shape[a]) for a in ctx.upcast])]
  # every buffer stays a parameter, even one whose loads folded away: the runtime passes them all, in order; so does every variable
  with in_stage("lowered"):
    return graph_rewrite(UOp.sink(*lanes, *k.bufs, *kernel_vars(k)), lowering, ctx=ctx, name="lower: views to index math", bottom_up=True)

@implements("simplify")
def simplify(lowered: UOp) -> UOp:
  """The "simplified" pass: symbolic rules over the index math, gates that became True dropped, one-hot sums folded."""
  with in_stage("simplified"): return graph_rewrite(lowered, lower_rules, name="simplify: index math")

def lower(k: Kernel) -> UOp: return simplify(lower_kernel(k))

def kernel_vars(k: Kernel) -> list[UOp]:
  """The kernel's variables (symbolic sizes), by name: each becomes an int argument."""
  consts = [v for u in k.ast.toposort() if u.op is Ops.CONST and isinstance(u.arg, UOp) for v in variables(u.arg)]
  return sorted(dedup([v for st in k.sts for v in st.vars()] + consts), key=lambda v: v.arg[0])

def fold_onehot(red: UOp) -> UOp | None:
  """sum over r of where(e == r, v(r), 0) is v(e) where 0 <= e < N, else 0: a one-hot sum (how x[idx] is written with an
  arange, Tensor._gather_index) becomes a gather, and a loop of N steps disappears. The loads v makes with r := e read
  memory at a data-dependent place, so they are gated by the range check."""
  if red.arg is not Ops.ADD or (w := red.src[0]).op is not Ops.WHERE or not w.src[2].is_const(0): return None
  if (c := w.src[0]).op is not Ops.XOR or not c.src[1].is_const(True) or (ne := c.src[0]).op is not Ops.CMPNE: return None
  for r in red.src[1:]:
    for a, e in (ne.src, ne.src[::-1]):
      if (a.src[0] if a.op is Ops.CAST else a) is not r or r in e.toposort(): continue
      if isinstance(r.arg[1], UOp): continue
      if a.op is Ops.CAST and not (dtypes.is_int(a.dtype) and a.dtype.itemsize >= 4 and r.arg[1] - 1 <= dtypes.max(a.dtype)): continue
      e = e.cast(dtypes.index)
      ok = (e < r.arg[1]) & (e < 0).ne(True)
      def gate(u: UOp) -> UOp:  # a load whose address depends on r: only where e is in range
        if r not in u.src[1].toposort(): return u
        return u.replace(src=(u.src[0], u.src[1], (u.src[2] & ok) if len(u.src) > 2 else ok))
      v = w.src[1].substitute({n: gate(n) for n in w.src[1].toposort() if n.op is Ops.INDEX}).substitute({r: e})
      rest = tuple(x for x in red.src[1:] if x is not r)
      # (a load gate() gated by ok is 0 off it already)
      body = v if w.src[1].op is Ops.LOAD and r in w.src[1].src[0].src[1].toposort() else ok.where(v, v.const_like(0))
      return red.replace(src=(body,) + rest) if rest else body
  return None

# a gate that simplified to True is no gate; a one-hot sum is a gather (a reduce of a constant needs no loop either, but
# that is folded in the tensor graph, before any kernel: engine/schedule.py's fold_consts)
drop_true_gates = PatternMatcher([
  (UPat(Ops.INDEX, name="x", src=(UPat.var("b"), UPat.var("i"), UPat.const(dtypes.bool, True))), lambda x, b, i: x.replace(src=(b, i))),
  (UPat(Ops.REDUCE, name="red"), fold_onehot)])
lower_rules = symbolic + drop_true_gates
