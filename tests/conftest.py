import gc, os, sys
import pytest
from hypothesis import settings, HealthCheck

# make `import lazynb` work without PYTHONPATH when pytest is run from anywhere
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path: sys.path.insert(0, _ROOT)

# Every new shape compiles a fresh C kernel (~50-100 ms), so keep hypothesis runs short and never time-limited.
# Tests with their own budget use ex(n) (scaled by HYPOTHESIS_SCALE); this profile covers the rest.
settings.register_profile("lazynb", max_examples=15, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "lazynb"))

def pytest_configure(config):
  config.addinivalue_line("markers", "torch: compares against torch (skipped when torch cannot be imported)")


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
