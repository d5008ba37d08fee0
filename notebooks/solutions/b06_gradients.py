# %% EXERCISE b06.gradients
import math
from lazynb.uop.ops import UPat, PatternMatcher, Ops

def sum_grad(ctx, ret):
  op, axes = ret.arg
  if op is not Ops.ADD: return None  # max and prod reductions: lazynb's rules
  return (ctx.expand(ret.src[0].shape),)

def max_grad(ctx, ret):
  a, b = ret.src
  a_wins, tie = b.alu(Ops.CMPLT, a), a.ne(b).ne(True)
  half, zero = ctx * 0.5, ctx.const_like(0.0)
  return (a_wins.where(ctx, tie.where(half, zero)), a_wins.where(zero, tie.where(half, ctx)))

def expand_grad(ctx, ret):
  before, after = ret.src[0].shape, ret.shape
  return (ctx.r(Ops.ADD, tuple(i for i, (s, t) in enumerate(zip(before, after)) if s != t)),)

def my_gradient_rules():
  return PatternMatcher([
    (UPat(Ops.ADD), lambda ctx: (ctx, ctx)),
    (UPat(Ops.MUL, name="ret"), lambda ctx, ret: (ctx * ret.src[1], ctx * ret.src[0])),
    (UPat(Ops.RECIP, name="ret"), lambda ctx, ret: (-ctx * ret * ret,)),
    (UPat(Ops.EXP2, name="ret"), lambda ctx, ret: (ctx * ret * math.log(2),)),
    (UPat(Ops.LOG2, name="ret"), lambda ctx, ret: (ctx * (ret.src[0] * math.log(2)).alu(Ops.RECIP),)),
    (UPat(Ops.SQRT, name="ret"), lambda ctx, ret: (ctx * (ret * 2).alu(Ops.RECIP),)),
    (UPat(Ops.MAX, name="ret"), max_grad),
    (UPat(Ops.REDUCE_AXIS, name="ret"), sum_grad),
    (UPat(Ops.EXPAND, name="ret"), expand_grad),
  ])
