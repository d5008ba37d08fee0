"""`lazynb.engine.search` is `lazynb.codegen.search` (BEAM search; tinygrad 0.10 keeps it under engine/)."""
import sys
from lazynb.codegen import search as _search
sys.modules[__name__] = _search
