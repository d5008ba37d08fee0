from lazynb.uop.ops import UPat, PatternMatcher

rules = PatternMatcher([
  (UPat.var("x") // 1, lambda x: x),
  (UPat.var("x") % 1, lambda x: x.const_like(0)),
])

from lazynb.codegen.kernel import Opt, OptOps

def my_opts():
  # the heuristic's register tile and unroll, without splitting this small kernel over threads: starting the
  # threads costs more than the whole 64x64 matmul
  return [Opt(OptOps.UPCAST, 1, 16), Opt(OptOps.UPCAST, 0, 8), Opt(OptOps.UNROLL, 2, 4)]
