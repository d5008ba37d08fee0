import gc, os, pathlib, sys
import pytest
from hypothesis import settings, HealthCheck
try:  # tinygrad 0.10.3, the semantic oracle (test extra), runs on its CPU device: left to itself it takes an OpenCL
  import tinygrad as _tinygrad  # library when one is installed, and PoCL there lacks what the compared tests need (fp16)
  _tinygrad.Device.DEFAULT = "CPU"
  # and compiles with clang whatever CC says: CC=gcc picks lazynb's compiler in CI's gcc pass, and tinygrad's CPU device
  # hands clang's flags (--target=...) to whatever CC names (hidden where its kernel cache was warm; a fresh machine failed)
  import tinygrad.runtime.ops_cpu as _tg_cpu
  _tg_cpu.getenv = lambda key, default=0, _get=_tg_cpu.getenv: "clang" if key == "CC" else _get(key, default)
except ImportError: pass

# make `import lazynb` work without PYTHONPATH when pytest is run from anywhere
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path: sys.path.insert(0, _ROOT)

# the build track keeps a stage whose exercise passes (lazynb/notebook/build.py): tests keep them in a folder of this run's
if not os.environ.get("LAZYNB_BUILD_DIR"):
  import tempfile
  os.environ["LAZYNB_BUILD_DIR"] = os.path.join(tempfile.mkdtemp(prefix="lazynb-build-"), "my_compiler")

# Every new shape compiles a fresh C kernel (~50-100 ms), so keep hypothesis runs short and never time-limited.
# Tests with their own budget use ex(n) (scaled by HYPOTHESIS_SCALE); this profile covers the rest.
settings.register_profile("lazynb", max_examples=15, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "lazynb"))

# ---------------------------------------------------------------- test tiers
# Plain `python -m pytest` runs the fast tier: pyproject.toml's addopts deselect the three marked tiers below, and
# `bash .ci/run` runs each of them after it. A whole file's tier is named here, in one place; a single slow test in a
# fast file carries @pytest.mark.slow (or its parameter does: pytest.param(..., marks=pytest.mark.slow)).
TIERS = {
  "integration": "installs or executes the way a user does: fresh virtual environments, every notebook, the example scripts, "
                 "the extension's npm tests and wheel",
  "browser": "drives Chromium (the JupyterLab extension, the standalone view, VIZ files)",
  "slow": "the long budgets: BEAM searches, every compiler and float16 mode, the OpenCL device, big fuzz budgets, tinygrad's kernel "
          "counts; the device machinery (disk caches, compiler processes and batches, the ELF loader, the LLVM device, the GPU "
          "check script), the compat tool, and the longest single tests of fast files",
}
TIER_OF_FILE = {
  "test_newcomer.py": "integration", "test_notebooks.py": "integration", "test_binder.py": "integration",
  "test_examples.py": "integration", "test_labextension.py": "integration", "test_build_track.py": "integration",
  "test_fusion_parity.py": "slow", "test_beam_safety.py": "slow",
  "test_gpu_check.py": "slow", "test_compat_tool.py": "slow",
}
# the device machinery: each test starts compilers, damages caches or loads libraries (the op tests use it all the time).
# Slow, and also marked `machinery`: .ci/run's compiler variant passes select these files with the fast tier's
MACHINERY = {"test_caches.py", "test_compile_batch.py", "test_compiler_process.py", "test_elfload.py", "test_llvm.py", "test_matmul_heuristic.py"}
TIER_OF_FILE.update(dict.fromkeys(MACHINERY, "slow"))
# single tests of fast files that take seconds (measured with --durations); a sibling of each stays in the fast tier
SLOW_TESTS = {
  "test_dtypes_more.py::test_bitcast_matches_numpy_view[CPU]", "test_dtypes_more.py::test_casts_between_all_numpy_dtypes[CPU]",
  "test_pipeline.py::test_check_survives_a_kernel_that_never_stops", "test_pipeline.py::test_check_passes_the_reference_and_counts_the_programs",
  "test_nn_layers.py::test_lstmcell_matches_torch[True-True]", "test_nn_layers.py::test_lstmcell_matches_torch[False-True]",
  "test_runstate.py::test_requires_grad_registers_the_tensor_until_it_is_dropped_or_turned_off",
  "test_runstate.py::test_a_lazy_assign_is_pending_until_realized_then_the_old_name_is_superseded",
  "test_jit.py::test_jitted_training_step_matches_torch",
  "test_conv_grad.py::test_rows_layout_values_and_grads_match_torch[4x8x16x40x40x5x0x1]",
  "test_conv_grad.py::test_conv_backward_makes_no_window_buffer_and_no_div_mod[conv2]",
}
# and the longest tests of fast files by measure (tools/fast_tier.py keeps the fast tier under its time budget on a fresh
# kernel cache): slow, and marked `timed`, so that the compiler variant passes of .ci/run still run them
TIMED_TESTS = {line.split("  #")[0].strip() for line in (pathlib.Path(__file__).parent / "slow_tests.txt").read_text().splitlines()
               if line.strip() and not line.startswith("#")}

def pytest_configure(config):
  config.addinivalue_line("markers", "torch: compares against torch (skipped when torch cannot be imported)")
  for name, what in TIERS.items(): config.addinivalue_line("markers", f"{name}: not in the fast tier; {what}")
  config.addinivalue_line("markers", "machinery: a test of the device machinery (slow tier; CI's compiler variant passes run it)")
  config.addinivalue_line("markers", "timed: a test of a fast file in the slow tier for its time (tests/slow_tests.txt; the variant passes run it)")

# A parametrized test's BEAM variant and its OpenCL variant are slow wherever they are (BEAM times many candidates; PoCL
# compiles each kernel in ~0.3 s): a parameter id `beam`/`BEAM` or `CL` puts that variant in the slow tier.
SLOW_PARAMS = {"beam", "BEAM", "CL", "07.beat_heuristic"}
# the build track's stage exercises grade on dozens of corpus programs, each in a child process (seconds per answer)
from lazynb.notebook.build import STAGE_OF  # noqa: E402
SLOW_PARAMS |= set(STAGE_OF)

def pytest_collection_modifyitems(config, items):
  names = {f"{item.path.name}::{item.name}" for item in items}
  files = {item.path.name for item in items}
  # a renamed test would silently come back to the fast tier: a name here that its collected file lacks is an error
  if gone := sorted(n for n in SLOW_TESTS | TIMED_TESTS if n.split("::")[0] in files and n not in names and not config.option.keyword
                and not any("::" in a for a in config.args)):  # (node ids given: the rest of their files is not collected)
    raise pytest.UsageError(f"tests/conftest.py SLOW_TESTS or tests/slow_tests.txt name tests that do not exist: {gone}")
  for item in items:
    path = item.path
    tier = "browser" if path.parent.name == "ui" else TIER_OF_FILE.get(path.name)
    if tier is None and hasattr(item, "callspec") and SLOW_PARAMS & set(item.callspec.id.split("-")): tier = "slow"
    if tier is None and f"{path.name}::{item.name}" in SLOW_TESTS: tier = "slow"
    if tier is None and f"{path.name}::{item.name}" in TIMED_TESTS: tier = "slow"; item.add_marker(pytest.mark.timed)  # noqa: E702
    if tier is not None: item.add_marker(getattr(pytest.mark, tier))
    if path.name in MACHINERY: item.add_marker(pytest.mark.machinery)


@pytest.fixture(scope="session")
def executed_notebooks(tmp_path_factory):
  """Where the course notebooks executed in this test session are kept: each notebook runs once per session (in the
  newcomer's fresh environment, tests/test_newcomer.py), and tests/test_notebooks.py checks those outputs; it runs a
  notebook itself only when that did not happen (e.g. when it is run alone)."""
  d = tmp_path_factory.getbasetemp() / "executed-notebooks"
  d.mkdir(exist_ok=True)
  return d

@pytest.fixture
def training_mode():
  """Optimizers step only in training mode (tinygrad 0.10 raises otherwise, and so does lazynb): their tests run in it."""
  from lazynb import Tensor
  prev, Tensor.training = Tensor.training, True
  yield
  Tensor.training = prev

@pytest.fixture(autouse=True)
def _drop_last_failure():
  """pytest keeps the last exception's traceback (sys.last_traceback), and with it the failed test's tensors; free them,
  so a buffer-sharing bug (like equal fresh buffers aliasing, seen at c82b63d) cannot leak from one test into the next."""
  yield
  if getattr(sys, "last_value", None) is None and getattr(sys, "last_exc", None) is None: return
  sys.last_type = sys.last_value = sys.last_traceback = None
  if hasattr(sys, "last_exc"): sys.last_exc = None
  gc.collect()

# In CI a skip hides a capability: CI installs everything the tests need, so a skip there is a failure unless it
# names a real hardware (or platform) absence. LAZYNB_STRICT_SKIPS=1 does the same outside CI.
_HARDWARE_REASONS = ("GPU", "longdouble")
def _strict() -> bool: return os.environ.get("CI", "").lower() in ("1", "true") or os.environ.get("LAZYNB_STRICT_SKIPS") == "1"

def _fail_skip(rep):
  reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
  if any(w in reason for w in _HARDWARE_REASONS): return
  rep.outcome, rep.longrepr = "failed", f"skipped in CI, which must install what every test needs: {reason}"

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
  rep = (yield).get_result()
  if _strict() and rep.skipped and not hasattr(rep, "wasxfail"): _fail_skip(rep)

@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
  rep = (yield).get_result()
  if _strict() and rep.skipped: _fail_skip(rep)
