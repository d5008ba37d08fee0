from lazynb.uop.ops import UPat, PatternMatcher

rules = PatternMatcher([
  (UPat.var("x") * 1, lambda x: x),
  (UPat.var("x") + 0, lambda x: x),
])
