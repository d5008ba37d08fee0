"""`lazynb.ops` is `lazynb.uop.ops` (tinygrad 0.10 keeps UOp, Ops and the PatternMatcher in `tinygrad.ops`; later
versions moved them to `tinygrad.uop.ops`): both imports work and name the same objects."""
import sys
from lazynb.uop import ops as _ops
sys.modules[__name__] = _ops
