"""Linearization: the lowered graph becomes a flat list of UOps in execution order, with explicit loops.

Each REDUCE(value, *ranges) becomes an accumulator: DEFINE_ACC before its loops, ASSIGN acc = acc <op>
value inside them, and every later use reads the accumulator. A kernel runs in *phases*: phase 0 is
what needs no finished accumulator; phase k+1 can use the accumulators phase k finished (a GROUP reduce
has two: partial sums per work-item, then the sum of the partials from local memory).

    DEFINE_GLOBALs, SPECIALs, CONSTs
    RANGE (global/thread loops, outermost first)
      phase 0: work needing only global indices; DEFINE_ACCs; RANGE (reduce loops)
                 the reduced expression; ASSIGNs
               ENDRANGE
      phase 1: work after the reduce (STOREs) ... or the next reduce
    ENDRANGE

Two steps in the "linearized" stage, both reported to the trace: `accumulators` is a PatternMatcher pass (a REDUCE becomes
its accumulator); `order` is a named step, not rules: it places every node of the graph in one list."""
from __future__ import annotations
import itertools
from lazynb.dtype import dtypes
from lazynb.uop.ops import UOp, UPat, Ops, PatternMatcher, graph_rewrite, report_pass
from lazynb.codegen.lowerer import reduce_identity
from lazynb.pipeline import implements

def _accumulate(ctx: itertools.count, red: UOp) -> UOp:
  """REDUCE(value, *ranges) -> ASSIGN(acc, acc <op> value): the accumulator starts at the op's identity before its loops."""
  acc = UOp(Ops.DEFINE_ACC, red.dtype, (UOp.const(red.dtype, reduce_identity(red.arg, red.dtype)),) + red.src[1:], next(ctx))
  return UOp(Ops.ASSIGN, red.dtype, (acc, UOp(red.arg, red.dtype, (acc, red.src[0]))))
accumulators = PatternMatcher([(UPat(Ops.REDUCE, name="red"), _accumulate)])

@implements("linearize")
def linearize(sink: UOp) -> list[UOp]:
  """The linearize stage: reduces become accumulators (a rewrite pass), then every node is placed in one list (`order`)."""
  # bottom-up, so a reduce nested in another's value is replaced first (each accumulator numbered in that order)
  sink = graph_rewrite(sink, accumulators, ctx=itertools.count(), name="linearize: accumulators", stage="linearized")
  out = order(sink)
  report_pass("linearize: order", sink, UOp.sink(*out), stage="linearized")
  return out

def order(sink: UOp) -> list[UOp]:
  """Every node of the graph in one list, in execution order, with ENDRANGEs closing the loops."""
  nodes = sink.toposort()
  # the loops each node sits in, and the phase it runs in (a reduce loop runs in its accumulator's phase,
  # which depends on what the loop body needs: iterate until nothing moves)
  range_phase: dict[UOp, int] = {}
  assigns_all = [n for n in nodes if n.op is Ops.ASSIGN]
  while True:
    deps: dict[UOp, frozenset] = {}
    phase: dict[UOp, int] = {}
    for n in nodes:
      if n.op is Ops.RANGE: deps[n], phase[n] = frozenset([n]), range_phase.get(n, 0); continue  # noqa: E702
      d = frozenset().union(*[deps[s] for s in n.src]) if n.src else frozenset()
      p = max((phase[s] for s in n.src if s.op is not Ops.DEFINE_ACC), default=0)
      if n.op is Ops.ASSIGN:  # the accumulator's value exists after its loops close, in the next phase
        d, p = d - frozenset(n.src[0].src[1:]), p + 1
      deps[n], phase[n] = d, p
    for u in assigns_all:  # an accumulator belongs to the phase of its update
      phase[u.src[0]] = phase[u] - 1
    new = {r: phase[n] for n in nodes if n.op is Ops.DEFINE_ACC for r in n.src[1:]}
    if new == range_phase: break
    range_phase = new
  reduce_ranges = {r for n in nodes if n.op is Ops.DEFINE_ACC for r in n.src[1:]}
  outer = sorted([n for n in nodes if n.op is Ops.RANGE and n not in reduce_ranges], key=lambda r: r.arg[0])
  out = sorted([n for n in nodes if n.op is Ops.DEFINE_GLOBAL], key=lambda n: n.arg)  # parameters in buffer order
  out += sorted([n for n in nodes if n.op is Ops.DEFINE_VAR], key=lambda n: n.arg[0])  # then the variables, by name
  out += [n for n in nodes if n.op in (Ops.DEFINE_LOCAL, Ops.SPECIAL, Ops.CONST)]
  out += outer
  placed = set(out)
  for p in range(max(phase.values(), default=0) + 1):
    here = [n for n in nodes if phase[n] == p and n not in placed and n.op not in (Ops.SINK, Ops.RANGE, Ops.ASSIGN)]
    accs = [n for n in here if n.op is Ops.DEFINE_ACC]
    loops = sorted({r for a in accs for r in a.src[1:]}, key=lambda r: r.arg[0])
    loop_set = set(loops)
    inside = [n for n in here if n.op is not Ops.DEFINE_ACC and deps[n] & loop_set]
    inside_set = set(inside)
    before = [n for n in here if n.op is not Ops.DEFINE_ACC and n not in inside_set]
    assigns = [n for n in assigns_all if phase[n.src[0]] == p]
    out += before + accs + loops + inside + assigns + [UOp(Ops.ENDRANGE, dtypes.void, (r,)) for r in reversed(loops)]
    placed.update(here + assigns)
  out += [UOp(Ops.ENDRANGE, dtypes.void, (r,)) for r in reversed(outer)]
  return out
