"""Linearization: the lowered graph becomes a flat list of UOps in execution order, with explicit loops.

A node goes inside exactly the loops it depends on. The program has one shape:

    DEFINE_GLOBALs, SPECIALs
    RANGE (global/thread loops, outermost first)
      work that needs only the global indices
      DEFINE_ACC for each REDUCE
      RANGE (reduce loops)
        the reduced expression;  ASSIGN acc = acc <op> value
      ENDRANGE (reduce loops)
      work after the reduce;  STOREs
    ENDRANGE (global loops)
"""
from __future__ import annotations
from lazynb.dtype import dtypes
from lazynb.uop.ops import UOp, Ops
from lazynb.codegen.lowerer import reduce_identity

def linearize(sink: UOp) -> list[UOp]:
  # REDUCE(value, *ranges) -> ASSIGN(DEFINE_ACC, value op acc); uses of the REDUCE read the accumulator
  accs: dict[UOp, tuple[UOp, UOp]] = {}
  replace: dict[UOp, UOp] = {}
  for n in sink.toposort():
    if n.op is Ops.REDUCE:
      acc = UOp(Ops.DEFINE_ACC, n.dtype, (UOp.const(n.dtype, reduce_identity(n.arg, n.dtype)),) + n.src[1:], len(accs))
      accs[n] = (acc, n)
  if accs:
    for n, (acc, _) in accs.items():
      replace[n] = UOp(Ops.ASSIGN, n.dtype, (acc, UOp(n.arg, n.dtype, (acc, n.src[0]))))
    sink = sink.substitute(replace)
  nodes = sink.toposort()
  # which loop ranges each node sits in
  deps: dict[UOp, frozenset] = {}
  after_reduce: dict[UOp, bool] = {}
  for n in nodes:
    if n.op is Ops.RANGE: deps[n] = frozenset([n]); after_reduce[n] = False; continue  # noqa: E702
    d = frozenset().union(*[deps[s] for s in n.src]) if n.src else frozenset()
    ar = any(after_reduce[s] for s in n.src)
    if n.op is Ops.DEFINE_ACC: ar = False  # its ranges mark the update as inside the loop
    if n.op is Ops.ASSIGN:  # the accumulator's value is available after its loops close
      d = d - frozenset(n.src[0].src[1:])
      ar = True
    deps[n], after_reduce[n] = d, ar
  ranges = [n for n in nodes if n.op is Ops.RANGE]
  outer = sorted([r for r in ranges if not _is_reduce_range(r, accs)], key=lambda r: r.arg[0])
  inner = sorted([r for r in ranges if _is_reduce_range(r, accs)], key=lambda r: r.arg[0])
  inner_set = set(inner)
  prologue = [n for n in nodes if n.op in (Ops.DEFINE_GLOBAL, Ops.SPECIAL, Ops.DEFINE_LOCAL, Ops.CONST)]
  body_pre, body_red, body_post, acc_defs = [], [], [], []
  assigns = [n for n in nodes if n.op is Ops.ASSIGN]
  for n in nodes:
    if n.op in (Ops.DEFINE_GLOBAL, Ops.SPECIAL, Ops.DEFINE_LOCAL, Ops.RANGE, Ops.SINK, Ops.CONST): continue
    if n.op is Ops.DEFINE_ACC: acc_defs.append(n); continue  # noqa: E702
    if n.op is Ops.ASSIGN: continue
    if deps[n] & inner_set: body_red.append(n)
    elif after_reduce[n]: body_post.append(n)
    else: body_pre.append(n)
  out = list(prologue)
  out += outer
  out += body_pre + acc_defs + inner
  out += body_red + assigns
  out += [UOp(Ops.ENDRANGE, dtypes.void, (r,)) for r in reversed(inner)]
  out += body_post
  out += [UOp(Ops.ENDRANGE, dtypes.void, (r,)) for r in reversed(outer)]
  return out

def _is_reduce_range(r: UOp, accs) -> bool:
  return any(r in red.src[1:] for red in accs)
