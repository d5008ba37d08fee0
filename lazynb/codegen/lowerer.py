"""Lowering: a Kernel's AST (LOAD/STORE with ShapeTrackers) becomes explicit index math over loop variables.

Each axis of the full shape gets an index: a RANGE (a loop), a SPECIAL (a GPU work-item id) or, for upcast
and unrolled axes, a constant: the expression is built once per constant value, so an upcast of 4 yields
four loads and four stores, and an unroll of 4 yields four terms per accumulator update. A REDUCE node
stands for "accumulate this over these RANGEs"; the linearizer turns it into an accumulator and a loop.
"""
from __future__ import annotations
import itertools
from lazynb.dtype import dtypes
from lazynb.uop.ops import UOp, UPat, Ops, GroupOp, PatternMatcher, graph_rewrite
from lazynb.uop.symbolic import symbolic
from lazynb.codegen.kernel import Kernel, AxisType

def reduce_identity(op: Ops, dtype):
  if op is Ops.ADD: return False if dtype is dtypes.bool else 0
  if op is Ops.MUL: return True if dtype is dtypes.bool else 1
  if op is Ops.MAX: return dtypes.min(dtype)
  raise ValueError(f"no identity for reduce op {op}")

def axis_indices(k: Kernel) -> list[UOp | None]:
  """One index UOp per axis; None for axes that are expanded into constants."""
  style = k.renderer.global_style
  out: list[UOp | None] = []
  counters = {"g": 0, "l": 0, "r": 0, "t": 0}
  for i, (s, t) in enumerate(zip(k.full_shape, k.axis_types)):
    if t in (AxisType.UPCAST, AxisType.UNROLL): out.append(None); continue  # noqa: E702
    if t is AxisType.GLOBAL:
      name = f"gidx{counters['g']}"; counters["g"] += 1  # noqa: E702
      out.append(UOp(Ops.RANGE, dtypes.index, (), (i, s, name)) if style == "loop" else UOp(Ops.SPECIAL, dtypes.index, (), (name, s)))
    elif t is AxisType.THREAD:
      out.append(UOp(Ops.SPECIAL, dtypes.index, (), (f"tidx{counters['t']}", s))); counters["t"] += 1  # noqa: E702
    elif t in (AxisType.LOCAL, AxisType.GROUP):
      out.append(UOp(Ops.SPECIAL, dtypes.index, (), (f"lidx{counters['l']}", s))); counters["l"] += 1  # noqa: E702
    else:
      out.append(UOp(Ops.RANGE, dtypes.index, (), (i, s, f"ridx{counters['r']}"))); counters["r"] += 1  # noqa: E702
  return out

def lower(k: Kernel) -> UOp:
  base = axis_indices(k)
  upcast, unroll = k.axes_of(AxisType.UPCAST), k.axes_of(AxisType.UNROLL)
  red_ranges = tuple(base[i] for i in k.axes_of(AxisType.REDUCE))
  group_axes = k.axes_of(AxisType.GROUP)
  memo: dict = {}

  def idxs_for(st, env: dict[int, int]) -> list[UOp]:
    return [UOp.const(dtypes.index, 0) if st.shape[i] == 1 else (base[i] if base[i] is not None else UOp.const(dtypes.index, env[i]))
            for i in range(len(k.full_shape))]

  def ld(u: UOp, env: dict[int, int]) -> UOp:
    key = (u, tuple(sorted(env.items())))
    if key in memo: return memo[key]
    if u.op is Ops.LOAD:
      buf, view = u.src
      idx, valid = k.view_st(view).to_indexed_uops(idxs_for(k.view_st(view), env))
      index = UOp(Ops.INDEX, buf.dtype, (buf, idx) if valid.is_const(True) else (buf, idx, valid))
      ret = UOp(Ops.LOAD, u.dtype, (index,))
    elif u.op is Ops.CONST:
      ret = UOp.const(u.dtype, u.arg)
      if u.src:  # a masked constant: zero outside the mask
        _, valid = k.view_st(u.src[0]).to_indexed_uops(idxs_for(k.view_st(u.src[0]), env))
        if not valid.is_const(True): ret = valid.where(ret, ret.const_like(0))
    elif u.op is Ops.REDUCE_AXIS:
      op = u.arg[0]
      vals = []
      for combo in itertools.product(*[range(k.full_shape[a]) for a in unroll]):
        vals.append(ld(u.src[0], {**env, **dict(zip(unroll, combo))}))
      acc = vals[0]
      for v in vals[1:]: acc = UOp(op, u.dtype, (acc, v))
      ranges = red_ranges + tuple(base[a] for a in group_axes)
      ret = UOp(Ops.REDUCE, u.dtype, (acc,) + ranges, op) if ranges else acc
    elif u.op in GroupOp.Elementwise:
      ret = UOp(u.op, u.dtype, tuple(ld(s, env) for s in u.src), u.arg)
    else: raise NotImplementedError(f"cannot lower {u.op}")
    memo[key] = ret
    return ret

  stores = []
  for store in k.ast.src:
    buf, view, val = store.src
    st = k.view_st(view)
    for combo in itertools.product(*[range(k.full_shape[a]) for a in upcast]):
      env = dict(zip(upcast, combo))
      idx, valid = st.to_indexed_uops(idxs_for(st, env))
      index = UOp(Ops.INDEX, buf.dtype, (buf, idx) if valid.is_const(True) else (buf, idx, valid))
      stores.append(UOp(Ops.STORE, dtypes.void, (index, ld(val, env))))
  return graph_rewrite(UOp.sink(*stores), symbolic + drop_true_gates, name="lower: index math")

# a gate that simplified to True is no gate
drop_true_gates = PatternMatcher([
  (UPat(Ops.INDEX, name="x", src=(UPat.var("b"), UPat.var("i"), UPat.const(dtypes.bool, True))), lambda x, b, i: x.replace(src=(b, i)))])
