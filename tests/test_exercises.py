"""The notebooks' exercises (lazynb/notebook/exercise.py): for every registered exercise, the check fails on the
stub as written in the notebook source and passes on the reference solution in notebooks/solutions/ (plausible
wrong answers: tests/test_exercise_catalogue.py); every project notebook has an exercise; no notebook shows a reference solution."""
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

# ---- plausible wrong answers: tests/test_exercise_catalogue.py holds them, for every exercise; these check side effects

def _fd_forward(f, v, eps=1e-4):
  g = np.zeros_like(v)
  for i in range(v.size):
    hi = v.copy(); hi[i] += eps  # noqa: E702
    g[i] = (f(hi) - f(v)) / eps
  return g
def _bmm_with_matmul(a, b): return a @ b
def _lines_leaking_debug(fn):
  import contextlib, io
  from lazynb.helpers import DEBUG
  DEBUG.value, out = 2, io.StringIO()
  with contextlib.redirect_stdout(out): fn()
  return [x for x in out.getvalue().splitlines() if x.startswith("***")]

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
