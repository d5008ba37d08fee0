"""tinygrad 0.10's import paths work with `tinygrad` replaced by `lazynb`, and name the same objects as lazynb's own
paths. Each import below is one the course (../shared seeds, notebooks) or tinygrad 0.10's docs use; that it exists in
tinygrad 0.10.3 itself is checked too, so the list cannot drift into names tinygrad never had."""
import importlib, io, contextlib, time
import pytest

# module (after the package name) -> names imported from it
IMPORTS = {
  "": "Tensor TinyJit Variable UOp Device dtypes Context GlobalCounters getenv nn",
  ".nn": "Linear Conv2d BatchNorm LayerNorm Embedding",
  ".nn.state": "get_parameters get_state_dict load_state_dict safe_save safe_load",
  ".nn.optim": "Adam SGD AdamW LAMB Optimizer",
  ".nn.datasets": "mnist",
  ".helpers": "getenv Context DEBUG GlobalCounters Timing prod dedup flatten all_same colored",
  ".device": "Device Buffer Compiled Allocator Compiler is_dtype_supported",
  ".dtype": "dtypes DType PtrDType least_upper_dtype",
  ".ops": "UOp Ops UPat PatternMatcher graph_rewrite GroupOp",
  ".engine.realize": "run_schedule lower_schedule CompiledRunner Runner",
  ".engine.schedule": "ScheduleItem",
  ".engine.jit": "TinyJit",
  ".engine.search": "beam_search",
  ".shape.shapetracker": "ShapeTracker",
  ".shape.view": "View",
  ".codegen.kernel": "Kernel Opt OptOps",
  ".renderer": "Renderer",
  ".renderer.cstyle": "CStyleLanguage ClangRenderer",
}
# lazynb's own home of a name imported from elsewhere: the two must be one object
CANONICAL = {"UOp": "lazynb.uop.ops", "Ops": "lazynb.uop.ops", "UPat": "lazynb.uop.ops", "PatternMatcher": "lazynb.uop.ops",
             "graph_rewrite": "lazynb.uop.ops", "GroupOp": "lazynb.uop.ops", "Tensor": "lazynb.tensor", "dtypes": "lazynb.dtype",
             "TinyJit": "lazynb.engine.jit", "beam_search": "lazynb.engine.search", "Device": "lazynb.device",
             "Runner": "lazynb.device", "getenv": "lazynb.helpers", "Context": "lazynb.helpers", "GlobalCounters": "lazynb.helpers"}

@pytest.mark.parametrize("mod", list(IMPORTS))
def test_lazynb_has_the_import(mod):
  m = importlib.import_module("lazynb" + mod)
  for name in IMPORTS[mod].split():
    assert hasattr(m, name), f"from lazynb{mod} import {name}"
    if name in CANONICAL: assert getattr(m, name) is getattr(importlib.import_module(CANONICAL[name]), name), (mod, name)

@pytest.mark.parametrize("mod", list(IMPORTS))
def test_tinygrad_has_the_import(mod):
  pytest.importorskip("tinygrad", reason="tinygrad 0.10.3 (the test extra installs it) is the reference")
  m = importlib.import_module("tinygrad" + mod)
  for name in IMPORTS[mod].split(): assert hasattr(m, name), f"from tinygrad{mod} import {name}"

def test_ops_is_uop_ops():
  import lazynb.ops, lazynb.uop.ops
  assert lazynb.ops is lazynb.uop.ops

def test_timing_prints_the_elapsed_time():
  from lazynb.helpers import Timing
  out = io.StringIO()
  with contextlib.redirect_stdout(out), Timing("step ", on_exit=lambda ns: f" ({ns} ns)") as t: time.sleep(0.02)
  line = out.getvalue().strip()
  assert line.startswith("step ") and line.endswith(f"({t.et} ns)") and 20 <= float(line.split()[1]) < 2000
  with contextlib.redirect_stdout(out := io.StringIO()), Timing(enabled=False): pass
  assert out.getvalue() == ""

def test_lower_schedule_runs_the_kernels():
  import numpy as np
  from lazynb import Tensor
  from lazynb.engine.realize import lower_schedule
  a = Tensor(np.arange(6, dtype=np.float32)).realize()
  t = (a * 2 + 1).sum()
  items = t.schedule()
  n = len(items)
  pairs = list(lower_schedule(items))
  eis = [ei for _, ei in pairs]
  assert len(eis) == n == 1 and not items and eis[0].prg is not None and eis[0].prg.p.src.count("for") >= 1  # taken off the list
  for ei in eis: ei.run()
  assert eis[0].bufs[0].numpy()[0] == np.float32((np.arange(6) * 2 + 1).sum())
