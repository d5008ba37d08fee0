# %% EXERCISE b04.simplify
from lazynb.uop.ops import UOp, UPat, Ops, GroupOp, PatternMatcher, graph_rewrite
from lazynb.dtype import dtypes

def fixed(x):
  """An op whose smallest and largest possible values are equal always gives that value."""
  return UOp.const(x.dtype, x.vmin) if x.vmin == x.vmax else None

def terms(x):
  """A sum as the list of its terms."""
  return terms(x.src[0]) + terms(x.src[1]) if x.op is Ops.ADD else [x]

def split(x, c):
  """x as c*q + r: q from the terms whose factor is a multiple of c, r the others. None if no term is such a multiple,
  or if x or r can be negative, or r can reach c (then x//c is not q)."""
  q, r = [], []
  for t in terms(x):
    y, k = (t.src[0], t.src[1].arg) if t.op is Ops.MUL and t.src[1].op is Ops.CONST else (t, 1)
    if t.op is not Ops.CONST and k % c == 0: q.append(y * (k // c))
    else: r.append(t)
  rest = sum(r[1:], r[0]) if r else UOp.const(dtypes.index, 0)
  if not q or x.vmin < 0 or rest.vmin < 0 or rest.vmax >= c: return None
  return sum(q[1:], q[0]), rest

def div_sum(x, c):
  return None if c.arg <= 0 or (qr := split(x, c.arg)) is None else qr[0]

def mod_sum(x, c):
  return None if c.arg <= 0 or (qr := split(x, c.arg)) is None else qr[1]

rules = PatternMatcher([
  (UPat(GroupOp.ALU, dtype=(dtypes.index, dtypes.bool), name="x"), fixed),
  (UPat.var("x", dtypes.index) + 0, lambda x: x),
  (UPat.var("x", dtypes.index) * 1, lambda x: x),
  (UPat.var("x", dtypes.index) // 1, lambda x: x),
  (UPat.var("x", dtypes.bool) & True, lambda x: x),
  ((UPat.var("x", dtypes.index) + UPat.cvar("a")) + UPat.cvar("b"), lambda x, a, b: x + (a.arg + b.arg)),
  (UPat(Ops.INDEX, src=(UPat.var("buf"), UPat.var("idx"), UPat.const(dtypes.bool, True))), lambda buf, idx: UOp(Ops.INDEX, buf.dtype, (buf, idx))),
  (UPat.var("x", dtypes.index) % UPat.cvar("c"), lambda x, c: x if 0 <= x.vmin and x.vmax < c.arg else None),
  (UPat(Ops.ADD, dtypes.index, name="x") // UPat.cvar("c"), div_sum),
  (UPat(Ops.ADD, dtypes.index, name="x") % UPat.cvar("c"), mod_sum),
])

def my_simplify(sink):
  """The lowered SINK -> the same program with its index math simplified."""
  return graph_rewrite(sink, rules)
