"""Lowering: a Kernel's AST (LOAD/STORE with ShapeTrackers) becomes explicit index math over loop variables.

Each axis of the full shape gets an index: a RANGE (a loop), a SPECIAL (a GPU work-item id) or, for upcast
and unrolled axes, a constant: the expression is built once per constant value, so an upcast of 4 yields
four loads and four stores, and an unroll of 4 yields four terms per accumulator update. A REDUCE node
stands for "accumulate this over these RANGEs"; the linearizer turns it into an accumulator and a loop.
"""
from __future__ import annotations
import itertools
from lazynb.dtype import dtypes
from lazynb.uop.ops import UOp, UPat, Ops, GroupOp, PatternMatcher, graph_rewrite, exec_alu, variables
from lazynb.uop.symbolic import symbolic
from lazynb.codegen.kernel import Kernel, AxisType
from lazynb.helpers import prod, dedup

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

def lower(k: Kernel) -> UOp:
  base = axis_indices(k)
  upcast, unroll = k.axes_of(AxisType.UPCAST), k.axes_of(AxisType.UNROLL)
  red_ranges = tuple(base[i] for i in k.axes_of(AxisType.REDUCE))
  group_axes = k.axes_of(AxisType.GROUP)
  memo: dict = {}

  def idxs_for(st, env: dict[int, int]) -> list[UOp]:
    return [UOp.const(dtypes.index, 0) if st.shape[i] == 1 else (base[i] if base[i] is not None else UOp.const(dtypes.index, env.get(i, 0)))
            for i in range(len(k.full_shape))]

  free: dict[UOp, set[int]] = {}  # per view: the upcast/unroll axes its index and mask do not depend on
  def independent(view: UOp) -> set[int]:
    if view not in free:
      st = k.view_st(view)
      v = st.views[0]
      free[view] = {a for a in upcast + unroll if st.shape[a] == 1 or len(st.views) == 1 and v.strides[a] == 0 and
                    (v.mask is None or v.mask[a] == (0, v.shape[a]))}
    return free[view]

  def ld(u: UOp, env: dict[int, int]) -> UOp:
    if u.op is Ops.LOAD or u.op in (Ops.CONST, Ops.ARANGE) and u.src:  # a lane that the view ignores reuses another lane's load
      skip = independent(u.src[-1] if u.op is Ops.LOAD else u.src[0])
      env = {a: v for a, v in env.items() if a not in skip}
    key = (u, tuple(sorted(env.items())))
    if key in memo: return memo[key]
    if u.op is Ops.LOAD:
      buf, view = u.src
      idx, valid = k.view_st(view).to_indexed_uops(idxs_for(k.view_st(view), env))
      index = UOp(Ops.INDEX, buf.dtype, (buf, idx) if valid.is_const(True) else (buf, idx, valid))
      ret = UOp(Ops.LOAD, u.dtype, (index,))
    elif u.op is Ops.CONST:
      ret = u.arg.cast(u.dtype) if isinstance(u.arg, UOp) else UOp.const(u.dtype, u.arg)  # a size as a number (mean over i)
      if u.src:  # a masked constant: zero outside the mask
        _, valid = k.view_st(u.src[0]).to_indexed_uops(idxs_for(k.view_st(u.src[0]), env))
        if not valid.is_const(True): ret = valid.where(ret, ret.const_like(0))
    elif u.op is Ops.ARANGE:  # the number line: its value is the position the view maps this index to
      idx, valid = k.view_st(u.src[0]).to_indexed_uops(idxs_for(k.view_st(u.src[0]), env))
      ret = idx.cast(u.dtype)
      if not valid.is_const(True): ret = valid.where(ret, ret.const_like(0))
    elif u.op is Ops.REDUCE_AXIS:
      op = u.arg[0]
      vals = []
      for combo in itertools.product(*[range(k.full_shape[a]) for a in unroll]):
        vals.append(ld(u.src[0], {**env, **dict(zip(unroll, combo))}))
      acc = vals[0]
      for v in vals[1:]: acc = UOp(op, u.dtype, (acc, v))
      ret = UOp(Ops.REDUCE, u.dtype, (acc,) + red_ranges, op) if red_ranges else acc
      if group_axes: ret = group_reduce(ret, op, len(smem))
    elif u.op in GroupOp.Elementwise:
      ret = UOp(u.op, u.dtype, tuple(ld(s, env) for s in u.src), u.arg)
    else: raise NotImplementedError(f"cannot lower {u.op}")
    memo[key] = ret
    return ret

  # GROUP: each work-item reduces its share; partials meet in local memory; one loop sums them
  local_axes = k.axes_of(AxisType.LOCAL, AxisType.GROUP)
  lsizes = [k.full_shape[a] for a in local_axes]
  smem: list[UOp] = []
  def flat(idxs: list[UOp]) -> UOp:
    out, acc = UOp.const(dtypes.index, 0), 1
    for i, s in reversed(list(zip(idxs, lsizes))): out, acc = out + i * acc, acc * s
    return out
  def group_reduce(partial: UOp, op: Ops, n: int) -> UOp:
    buf = UOp(Ops.DEFINE_LOCAL, partial.dtype.ptr(), (), (f"temp{n}", prod(lsizes)))
    smem.append(buf)
    bar = UOp(Ops.BARRIER, dtypes.void, (UOp(Ops.STORE, dtypes.void, (UOp(Ops.INDEX, buf.dtype, (buf, flat([base[a] for a in local_axes]))), partial)),))
    gsizes = [k.full_shape[a] for a in group_axes]
    r2 = UOp(Ops.RANGE, dtypes.index, (), (len(k.full_shape), prod(gsizes), f"ridx{len(red_ranges)}"))  # one loop serves every partial
    digits, rem = {}, r2
    for a, s in reversed(list(zip(group_axes, gsizes))): digits[a], rem = rem % s, rem // s
    idx = flat([digits.get(a, base[a]) for a in local_axes])
    return UOp(Ops.REDUCE, partial.dtype, (UOp(Ops.LOAD, partial.dtype, (UOp(Ops.INDEX, buf.dtype, (buf, idx)), bar)), r2), op)
  group_first = UOp.const(dtypes.bool, True)
  for a in group_axes: group_first = group_first & base[a].eq(0)

  stores = []
  for store in k.ast.src:
    buf, view, val = store.src
    st = k.view_st(view)
    for combo in itertools.product(*[range(k.full_shape[a]) for a in upcast]):
      env = dict(zip(upcast, combo))
      idx, valid = st.to_indexed_uops(idxs_for(st, env))
      valid = valid & group_first  # after a GROUP reduce every work-item of the group has the answer: one stores it
      index = UOp(Ops.INDEX, buf.dtype, (buf, idx) if valid.is_const(True) else (buf, idx, valid))
      stores.append(UOp(Ops.STORE, dtypes.void, (index, ld(val, env))))
  # every buffer stays a parameter, even one whose loads folded away: the runtime passes them all, in order; so does every variable
  return graph_rewrite(UOp.sink(*stores, *k.bufs, *kernel_vars(k)), lower_rules, name="lower: index math")

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
      body = ok.where(v, v.const_like(0))
      return red.replace(src=(body,) + rest) if rest else body
  return None

def reduce_const(r: UOp) -> UOp | None:
  """A sum of a constant over loops is the constant times the trip count, computed exactly here: adding it in a
  float32 accumulator stops growing at 2**24 (and costs a loop of 2**33 steps for Tensor.ones(2**33).sum())."""
  c = r.src[0]
  if c.op is not Ops.CONST or not all(s.op is Ops.RANGE and not isinstance(s.arg[1], UOp) for s in r.src[1:]): return None
  if r.arg is Ops.MAX or r.dtype is dtypes.bool: return c
  if r.arg is Ops.ADD: return c.const_like(exec_alu(Ops.MUL, r.dtype, (c.arg, prod(s.arg[1] for s in r.src[1:]))))
  return None

# a gate that simplified to True is no gate; a one-hot sum is a gather; a reduce of a constant needs no loop
drop_true_gates = PatternMatcher([
  (UPat(Ops.INDEX, name="x", src=(UPat.var("b"), UPat.var("i"), UPat.const(dtypes.bool, True))), lambda x, b, i: x.replace(src=(b, i))),
  (UPat(Ops.REDUCE, name="red"), fold_onehot),
  (UPat(Ops.REDUCE, name="r"), reduce_const)])
lower_rules = symbolic + drop_true_gates
