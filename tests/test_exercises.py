"""The notebooks' exercises (lazynb/notebook/exercise.py): for every registered exercise, the check fails on the
stub as written in the notebook source and passes on the reference solution in notebooks/solutions/; plausible
wrong answers fail too; every project notebook has an exercise; no notebook shows a reference solution."""
import ast, importlib.util, pathlib, re
import numpy as np
import pytest
from lazynb import Tensor
from lazynb.notebook import exercise as ex

ROOT = pathlib.Path(__file__).parent.parent
SRC, SOL = ROOT / "notebooks" / "src", ROOT / "notebooks" / "solutions"
PRELUDE = ("import numpy as np\nfrom lazynb import Tensor\nfrom lazynb.device import Allocator, Compiler, CompileError, Runner\n"
           "from lazynb.uop.ops import UPat, PatternMatcher\n")

def cells(path):
  return [c.strip("\n") for c in re.split(r"^# %%.*$", path.read_text(), flags=re.M)]

def notebook_exercises():
  """{key: (notebook stem, stub cell source, checked name)} read from the notebook sources."""
  found = {}
  for p in sorted(SRC.glob("*.py")):
    cs = cells(p)
    for i, c in enumerate(cs):
      m = re.match(r"# EXERCISE (\S+)\n", c)
      if not m: continue
      key = m.group(1)
      nxt = next(x for x in cs[i + 1:] if x and not x.startswith("# "))
      call = re.search(r'check\("([^"]+)", (\w+)\)', nxt)
      assert call and call.group(1) == key, f"{p.name}: the cell after EXERCISE {key} must call check({key!r}, ...)"
      assert key not in found, f"exercise {key} appears twice"
      found[key] = (p.stem, c, call.group(2))
  return found

FOUND = notebook_exercises()

def solution(stem):
  spec = importlib.util.spec_from_file_location(f"solution_{stem}", SOL / f"{stem}.py")
  mod = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(mod)
  return mod

def test_every_registered_exercise_is_in_a_notebook_and_back():
  assert set(FOUND) == set(ex.EXERCISES)

def test_every_project_notebook_has_an_exercise():
  stems = {stem for stem, _, _ in FOUND.values()}
  projects = {p.stem for p in SRC.glob("p0*.py")}
  parts = {"01_why", "02_setup", "03_tensor_api", "04_laziness", "05_op_types", "06_autograd", "07_pipeline", "08_backends",
           "10_reading_the_source", "11_contributing"}
  assert len(projects) == 7 and projects | parts <= stems

@pytest.mark.parametrize("key", sorted(FOUND))
def test_check_fails_on_stub_and_passes_on_solution(key, capsys):
  stem, stub, name = FOUND[key]
  assert "# YOUR CODE" in stub
  ns: dict = {}
  exec(PRELUDE + stub, ns)
  ok, msg = ex.run(key, ns[name])
  assert not ok and msg
  # the notebook's call never raises and prints only the verdict: it returns None, so the cell has no Out[] line
  assert ex.check(key, ns[name]) is None and f"{key}: \u2717 not yet, {msg}" in capsys.readouterr().out
  assert ex.check(key, getattr(solution(stem), name)) is None
  out = capsys.readouterr().out
  assert f"{key}: \u2713 pass" in out, out

def test_no_notebook_contains_a_solution():
  """No reference solution's function or class body (as parsed code) appears in any notebook source or output."""
  bodies = []
  for f in SOL.glob("*.py"):
    for node in ast.parse(f.read_text()).body:
      if isinstance(node, (ast.FunctionDef, ast.ClassDef)): bodies += [ast.unparse(b) for b in node.body if len(ast.unparse(b)) > 20]
  assert bodies
  texts = [p.read_text() for p in list(SRC.glob("*.py")) + list((ROOT / "notebooks").glob("*.ipynb"))]
  norm = lambda s: re.sub(r"\s+", "", s).replace("\\n", "").replace('\\"', '"')
  texts = [norm(t) for t in texts]
  for b in bodies:
    assert not any(norm(b) in t for t in texts), f"a notebook shows a reference solution line: {b}"

# ---- plausible wrong answers get a hint, not a pass

def _mse_no_square(a, b): return (a - b).abs().mean()
def _mse_two_kernels(a, b): return ((a - b) * (a - b)).realize().mean()
def _ce_unstable(logits, labels):
  logp = (logits.exp() / logits.exp().sum(axis=1, keepdim=True)).log()
  return -((labels.reshape(-1, 1) == Tensor.arange(logits.shape[1]).reshape(1, -1)).where(logp, 0).sum(axis=1)).mean()
def _fd_forward(f, v, eps=1e-4):
  g = np.zeros_like(v)
  for i in range(v.size):
    hi = v.copy(); hi[i] += eps  # noqa: E702
    g[i] = (f(hi) - f(v)) / eps
  return g
def _fd_half(f, v, eps=1e-4):
  g = np.zeros_like(v)
  for i in range(v.size):
    hi, lo = v.copy(), v.copy(); hi[i] += eps; lo[i] -= eps  # noqa: E702
    g[i] = (f(hi) - f(lo)) / eps
  return g
def _address_no_offset(idx, strides, offset): return sum(i * s for i, s in zip(idx, strides))
def _ln_unbiased(x, eps=1e-5):
  c = x - x.mean(axis=-1, keepdim=True)
  return c / ((c * c).sum(axis=-1, keepdim=True) / (x.shape[-1] - 1) + eps).sqrt()
def _bmm_with_matmul(a, b): return a @ b
def _softmax_unstable(x):
  e = x.exp()
  return e / e.sum(axis=-1, keepdim=True)
def _eager_sum(ts):
  total = ts[0] * ts[0]
  for t in ts[1:]: total = (total + t * t).realize()
  return total
def _swish_grad_no_product_rule(x): return 1 / (1 + np.exp(-x))
def _toposort_dups(root):
  out = []
  def visit(u):
    for s in u.src: visit(s)
    out.append(u)
  visit(root)
  return out
def _count_without_reset(fn):
  from lazynb import GlobalCounters
  fn()
  return GlobalCounters.kernel_count
def _count_with_reset(fn):
  from lazynb import GlobalCounters
  GlobalCounters.reset()
  fn()
  return GlobalCounters.kernel_count
def _count_twice(fn):
  from lazynb import GlobalCounters
  fn()
  start = GlobalCounters.kernel_count
  fn()
  return GlobalCounters.kernel_count - start
def _lines_via_environ(fn):
  import contextlib, io, os
  os.environ["DEBUG"] = "2"
  out = io.StringIO()
  try:
    with contextlib.redirect_stdout(out): fn()
  finally: del os.environ["DEBUG"]
  return [x for x in out.getvalue().splitlines() if x.startswith("***")]
def _lines_leaking_debug(fn):
  import contextlib, io
  from lazynb.helpers import DEBUG
  DEBUG.value, out = 2, io.StringIO()
  with contextlib.redirect_stdout(out): fn()
  return [x for x in out.getvalue().splitlines() if x.startswith("***")]
def _lines_all(fn):
  import contextlib, io
  from lazynb import Context
  out = io.StringIO()
  with Context(DEBUG=2), contextlib.redirect_stdout(out): fn()
  return out.getvalue().splitlines()
def _toposort_users_first(root):
  out, done = [], set()
  def visit(u):
    if u in done: return
    done.add(u)
    for s in u.src: visit(s)
    out.append(u)
  visit(root)
  return out[::-1]

def _greedy_rules():
  from lazynb.uop.ops import UPat, PatternMatcher
  return PatternMatcher([(UPat.var("x") * UPat.cvar("c"), lambda x, c: x), (UPat.var("x") + 0, lambda x: x)])

@pytest.mark.parametrize("key,wrong,hint", [
  ("p01.mse", _mse_no_square, "values are wrong"), ("p01.mse", _mse_two_kernels, "ONE fused kernel"),
  ("p04.cross_entropy", _ce_unstable, "inf or nan"), ("p03.finite_diff", _fd_half, "slopes are off"),
  ("p02.address", _address_no_offset, "wrong element"), ("p06.layer_norm", _ln_unbiased, "values are wrong"),
  ("p02.bmm", _bmm_with_matmul, "not allowed"), ("p05.fold_rules", _greedy_rules(), "must stay as it is"),
  ("05.softmax", _softmax_unstable, "inf or nan"), ("04.lazy", _eager_sum, "ran 3 kernels"),
  ("06.swish_grad", _swish_grad_no_product_rule, "finite differences"), ("01.relu", lambda x: x.maximum(0), "not allowed"),
  ("10.toposort", _toposort_dups, "appear once"), ("10.toposort", _toposort_users_first, "after all of its sources"),
  ("10.toposort", lambda root: root.toposort(), "UOp.toposort is not allowed"),
  ("02.count_kernels", _count_without_reset, "running total"), ("02.count_kernels", _count_twice, "exactly once"),
  ("02.count_kernels", _count_with_reset, "reset the running totals"),
  ("02.count_kernels", lambda fn: float(fn() is None), "must return an int"),
  ("02.debug_lines", _lines_via_environ, "os.environ"), ("02.debug_lines", _lines_leaking_debug, "then restore it"),
  ("02.debug_lines", _lines_all, "start with ***"),
  ("08.alu", lambda op, *s: s[0] * s[1] if len(s) > 1 else s[0], "wrong values")])
def test_wrong_answers_fail_with_a_hint(key, wrong, hint):
  ok, msg = ex.run(key, wrong)
  assert not ok and hint in msg, msg

def test_a_leaked_debug_level_is_put_back():
  from lazynb.helpers import DEBUG
  before = DEBUG.value
  assert not ex.run("02.debug_lines", _lines_leaking_debug)[0] and DEBUG.value == before

def test_forward_difference_is_not_accurate_enough():
  assert not ex.run("p03.finite_diff", _fd_forward)[0]

def test_forbid_restores_methods():
  ex.run("p02.bmm", _bmm_with_matmul)
  a = np.arange(6, dtype=np.float32).reshape(2, 3)
  np.testing.assert_allclose((Tensor(a) @ Tensor(a.T)).numpy(), a @ a.T)

def test_unknown_exercise_is_an_error():
  with pytest.raises(KeyError): ex.run("p99.nothing", None)
