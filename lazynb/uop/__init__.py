"""The UOp intermediate representation, its pattern matcher and its algebraic rules."""
from lazynb.uop.ops import Ops, GroupOp, UOp, UPat, PatternMatcher, graph_rewrite, exec_alu  # noqa: F401
