"""lazynb: a small, readable lazy tensor compiler with the tinygrad API, built to be watched from a notebook.

    from lazynb import Tensor, Device, dtypes, Context, GlobalCounters"""
import sys
sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
from lazynb.dtype import dtypes, DType  # noqa: E402,F401
from lazynb.helpers import Context, GlobalCounters, getenv, DEBUG, NOOPT, BEAM  # noqa: E402,F401
from lazynb.device import Device  # noqa: E402,F401
from lazynb.tensor import Tensor  # noqa: E402,F401
from lazynb.engine.jit import TinyJit  # noqa: E402,F401
from lazynb.engine import search as _search  # noqa: E402,F401  (registers BEAM search with codegen)
from lazynb import nn  # noqa: E402,F401
from lazynb import pipeline, corpus as _corpus  # noqa: E402,F401  (the stages declared; the programs pipeline.check grades on)
from lazynb.uop import UOp, Ops, UPat, PatternMatcher, graph_rewrite  # noqa: E402,F401
Variable = UOp.variable  # Variable("i", 1, 10).bind(3): a symbolic size (tinygrad 0.10's name)
from lazynb import debug as _debug  # noqa: E402,F401  (the DEBUG printer subscribes to the trace bus)
if getenv("VIZ", 0):  # VIZ=1: the whole run as one HTML file at exit (lazynb/notebook/viz.py: the views' layer, no IPython)
  from lazynb.notebook.viz import record_run
  record_run()

__version__ = "0.1.0"

def load_ipython_extension(ipython):
  """`%load_ext lazynb` registers the %%tinygrad magic."""
  from lazynb.notebook.magic import load_ipython_extension as _load
  _load(ipython)
