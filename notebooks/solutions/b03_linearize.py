# %% EXERCISE b03.linearize
from lazynb.uop.ops import UOp, Ops
from lazynb.dtype import dtypes

def end(r): return UOp(Ops.ENDRANGE, dtypes.void, (r,))

def my_linearize(sink):
  reduces = [u for u in sink.toposort() if u.op is Ops.REDUCE]
  if len(reduces) > 1: raise NotImplementedError("my_linearize handles one REDUCE per kernel (what NOOPT=1 makes)")
  red_loops, inside, after = [], set(), set()
  if reduces:  # the REDUCE becomes an accumulator, started at the op's identity and updated on every step of its loops
    red = reduces[0]
    red_loops = sorted(red.src[1:], key=lambda r: r.arg[0])
    start = UOp.const(red.dtype, 0 if red.arg is Ops.ADD else dtypes.min(red.dtype))
    acc = UOp(Ops.DEFINE_ACC, red.dtype, (start, *red.src[1:]), 0)
    update = UOp(red.arg, red.dtype, (acc, red.src[0]))
    assign = UOp(Ops.ASSIGN, red.dtype, (acc, update))
    sink = sink.substitute({red: assign})
    inside, after = set(red_loops) | {update}, {assign}
  nodes = sink.toposort()
  for u in nodes:  # what reads a reduce loop's counter runs inside that loop; what reads the finished sum, after it
    if u.op in (Ops.DEFINE_ACC, Ops.ASSIGN): continue
    if any(s in inside for s in u.src): inside.add(u)
    if any(s in after for s in u.src): after.add(u)
  out = sorted([u for u in nodes if u.op is Ops.DEFINE_GLOBAL], key=lambda u: u.arg)
  out += [u for u in nodes if u.op in (Ops.DEFINE_VAR, Ops.CONST)]
  outer = sorted([u for u in nodes if u.op is Ops.RANGE and u not in red_loops], key=lambda r: r.arg[0])
  placed = (Ops.SINK, Ops.DEFINE_GLOBAL, Ops.DEFINE_VAR, Ops.CONST, Ops.RANGE, Ops.DEFINE_ACC, Ops.ASSIGN)  # placed on their own
  rest = [u for u in nodes if u.op not in placed]
  out += outer + [u for u in rest if u not in inside and u not in after]
  if reduces:
    out += [acc] + red_loops + [u for u in rest if u in inside] + [assign] + [end(r) for r in reversed(red_loops)]
    out += [u for u in rest if u in after]
  return out + [end(r) for r in reversed(outer)]
