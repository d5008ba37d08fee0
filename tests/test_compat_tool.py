"""tools/tinygrad_compat.py, the measurement of issue 31, measures what it says: its `tinygrad` shim serves lazynb and the
real tinygrad cannot slip in, a name lazynb lacks fails only the tests that use it, a hang or a crash is counted and
named without losing the file's other tests, and the docstring examples are read with their lines. No network: the
sdist is not fetched here (fake test files and sources stand in for it)."""
import json, os, pathlib, subprocess, sys, textwrap
import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import tinygrad_compat as tc  # noqa: E402

def run_in_shim(tmp_path, code: str, strict=False) -> subprocess.CompletedProcess:
  shim = tc.write_shim(tmp_path)
  env = tc.side_env("lazynb", shim, tmp_path, strict)
  return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

def test_shim_serves_lazynb_and_never_the_real_tinygrad(tmp_path):
  pytest.importorskip("tinygrad", reason="the point is that the installed tinygrad stays out")
  r = run_in_shim(tmp_path, """
    import sys, lazynb, lazynb.engine.realize, lazynb.nn.state, lazynb.uop.ops
    from tinygrad import Tensor, dtypes
    from tinygrad.nn.state import get_parameters
    from tinygrad.ops import UOp
    import tinygrad.engine.realize as realize, tinygrad.device
    assert Tensor is lazynb.Tensor and dtypes is lazynb.dtypes and UOp is lazynb.uop.ops.UOp
    assert get_parameters is lazynb.nn.state.get_parameters and realize.run_schedule is lazynb.engine.realize.run_schedule
    assert tinygrad.device.Device is lazynb.Device
    assert (Tensor([1, 2]) + 1).tolist() == [2, 3]
    real = [k for k, m in sys.modules.items() if k.split('.')[0] == 'tinygrad' and 'site-packages' in str(getattr(m, '__file__', ''))]
    assert real == [], real
    print('ok')""")
  assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]

def test_missing_name_fails_only_where_used(tmp_path):
  r = run_in_shim(tmp_path, """
    from tinygrad.helpers import NO_SUCH_FLAG, getenv
    from tinygrad.no_such_module import thing
    import tinygrad_compat
    assert not NO_SUCH_FLAG and NO_SUCH_FLAG == 0 and not NO_SUCH_FLAG > 0 and NO_SUCH_FLAG.value == 0   # a tinygrad flag: 0
    assert callable(getenv)
    for use in (lambda: NO_SUCH_FLAG(), lambda: thing.attr, lambda: thing + 1):
      try: use()
      except tinygrad_compat.LazynbLacks as e: assert "lazynb has no tinygrad." in str(e), e
      else: raise AssertionError("a missing name was usable")
    print(sorted(tinygrad_compat._MISSING_SEEN))""")
  assert r.returncode == 0, r.stderr[-3000:]
  assert r.stdout.strip() == "['tinygrad.helpers.NO_SUCH_FLAG', 'tinygrad.no_such_module', 'tinygrad.no_such_module.thing']"
  r = run_in_shim(tmp_path, "from tinygrad.helpers import NO_SUCH_FLAG", strict=True)
  assert r.returncode != 0 and "cannot import name 'NO_SUCH_FLAG' from 'tinygrad.helpers'" in r.stderr, r.stderr[-3000:]

def test_harness_helper_is_supplied_only_when_lazynb_lacks_it(tmp_path):
  r = run_in_shim(tmp_path, """
    import numpy as np, tinygrad_compat
    from tinygrad.tensor import _to_np_dtype
    from tinygrad import dtypes
    assert _to_np_dtype(dtypes.float32) == np.float32 and _to_np_dtype(dtypes.int8) == np.int8
    import lazynb.tensor
    print(hasattr(lazynb.tensor, '_to_np_dtype'), sorted(tinygrad_compat._SUPPLIED))""")
  assert r.returncode == 0, r.stderr[-3000:]
  has, supplied = r.stdout.strip().split(" ", 1)
  assert supplied == ("[]" if has == "True" else "['tinygrad.tensor._to_np_dtype']")

FAKE = '''
import unittest, os, signal, time
class T(unittest.TestCase):
  def test_a_pass(self): pass
  def test_b_segfault(self): os.kill(os.getpid(), signal.SIGSEGV)
  def test_c_sleeps(self): time.sleep(100)
  def test_d_alarm_blocked(self):
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM]); time.sleep(100)
  def test_e_subtest(self):
    for i in range(3):
      with self.subTest(i=i): self.assertEqual(i, 0)
  @unittest.expectedFailure
  def test_f_xfail(self): assert False
  def test_g_error(self): raise ValueError("the second\\nline")
  def test_h_pass(self): pass
'''

@pytest.mark.slow  # four pytest processes and three timeouts: ~30 s
def test_hangs_and_crashes_are_counted_and_the_file_goes_on(tmp_path, monkeypatch):
  work = tmp_path / "work"
  (work / "test").mkdir(parents=True)
  (work / "test" / "__init__.py").write_text("")
  (work / "pytest.ini").write_text("[pytest]\n")
  (work / "test" / "test_fake.py").write_text(FAKE)
  monkeypatch.setenv("COMPAT_HARD_GRACE", "2")
  res = tc.run_file("tinygrad", "test_fake.py", work, tmp_path / "shim", tmp_path, timeout=2.0, strict=False)
  got = {i.split("::")[-1]: o for i, o in res["outcomes"].items()}
  assert {k: o["outcome"] for k, o in got.items()} == {
    "test_a_pass": "passed", "test_b_segfault": "crash", "test_c_sleeps": "timeout", "test_d_alarm_blocked": "timeout",
    "test_e_subtest": "failed", "test_f_xfail": "xfailed", "test_g_error": "failed", "test_h_pass": "passed"}, json.dumps(got, indent=1)
  assert "exit code -11" in got["test_b_segfault"]["error"] and "Segmentation fault" in got["test_b_segfault"]["error"]
  assert got["test_g_error"]["error"] == "ValueError: the second"
  assert res["notes"] == []
  score = tc.file_score("test_fake.py", res, {"outcomes": {i: {"outcome": "passed"} for i in list(res["outcomes"])[:1]}})
  assert (score["tests"], score["tinygrad_passed"], score["lazynb_passed"]) == (8, 2, 1)

def test_doc_blocks_keep_their_lines_and_skip_unexecuted_ones(tmp_path):
  pkg = tmp_path / "tinygrad"
  pkg.mkdir()
  (pkg / "tensor.py").write_text(textwrap.dedent('''\
    class Tensor:
      """
      Setup.

      ```python exec="true" session="tensor"
      import math
      ```
      """
      def f(self):
        """
        ```python
        not_run()
        ```
        ```python exec="true" source="above" session="tensor" result="python"
        print(math.pi)
        ```
        """
    '''))
  blocks = tc.doc_blocks(tmp_path)
  assert [(b["id"], b["code"]) for b in blocks] == [("tinygrad/tensor.py:5 Tensor", "import math\n"),
                                                    ("tinygrad/tensor.py:14 Tensor.f", "print(math.pi)\n")]

def test_error_groups_and_print_rounding():
  assert tc.error_key("AssertionError: expected 3 kernels, got 5") == tc.error_key("AssertionError: expected 12 kernels, got 1")
  assert tc.error_key("KeyError: 'a'") != tc.error_key("TypeError: 'a'")
  assert tc.close_outputs("[0.1235 2.    ]\n", "[0.1234 2.    ]\n")
  assert not tc.close_outputs("[0.13 2.]", "[0.12 2.]") and not tc.close_outputs("dtypes.uchar", "dtypes.uint8")

def test_an_interrupted_run_goes_on_where_it_stopped(tmp_path):
  work = tmp_path / "work"
  (work / "test").mkdir(parents=True)
  (work / "test" / "__init__.py").write_text("")
  (work / "pytest.ini").write_text("[pytest]\n")
  (work / "test" / "test_two.py").write_text("def test_one(): pass\ndef test_two(): pass\n")
  rdir, key = tmp_path / "runs" / "tinygrad" / "test_two", {"k": 1}
  rdir.mkdir(parents=True)
  (rdir / "key.json").write_text(json.dumps(key))
  (rdir / "events1.jsonl").write_text(json.dumps({"event": "done", "id": "test/test_two.py::test_one", "outcome": "failed", "error": "before"}) + "\n"
                                      + json.dumps({"event": "start", "id": "test/test_two.py::test_two"}) + "\n")  # stopped here
  res = tc.run_file("tinygrad", "test_two.py", work, tmp_path / "shim", tmp_path, timeout=30.0, strict=False, key=key)
  assert {i: o["outcome"] for i, o in res["outcomes"].items()} == {"test/test_two.py::test_one": "failed", "test/test_two.py::test_two": "passed"}
  res = tc.run_file("tinygrad", "test_two.py", work, tmp_path / "shim", tmp_path, timeout=30.0, strict=False, key={"k": 2})  # another key: anew
  assert {o["outcome"] for o in res["outcomes"].values()} == {"passed"}

def test_without_tinygrad_the_stored_oracle_result_is_kept(tmp_path, monkeypatch):
  (tmp_path / "src" / "test").mkdir(parents=True)
  (tmp_path / "src" / "test" / "test_two.py").write_text("def test_one(): pass\n")
  monkeypatch.setattr(tc, "tinygrad_version", lambda: None)
  monkeypatch.setattr(tc, "run_file", lambda *a, **k: pytest.fail("ran the tinygrad side without tinygrad"))
  ctx = {"cache": tmp_path, "src": tmp_path / "src", "work": tmp_path, "shim": tmp_path, "timeout": 1.0, "strict": False}
  with pytest.raises(SystemExit, match="pip install tinygrad==0.10.3"): tc.get_result("tinygrad", "test_two.py", ctx, reuse=True)
  path = tc.result_path(tmp_path, "tinygrad", "test_two.py")
  path.parent.mkdir(parents=True)
  stored = {"key": {"tinygrad": "0.10.3"}, "outcomes": {"test/test_two.py::test_one": {"outcome": "passed"}}}
  path.write_text(json.dumps(stored))
  assert tc.get_result("tinygrad", "test_two.py", ctx, reuse=True) == stored
  assert json.loads(path.read_text()) == stored

def test_each_on_purpose_reason_points_at_docs_that_say_why():
  """ON_PURPOSE's tests are counted apart from the gaps: every reason must name a docs page and a passage that exists."""
  root = pathlib.Path(__file__).resolve().parent.parent
  assert len(tc.ON_PURPOSE) > 50 and all(t.startswith("test/test_") and t.count("::") == 2 for t in tc.ON_PURPOSE)
  for reason, where in set(tc.ON_PURPOSE.values()):
    for ref in where.split("; "):
      page, _, passage = ref.partition(", ")
      text = (root / page).read_text()
      assert passage.startswith('"') and passage.strip('"') in text, f"{reason}: {ref} names no passage of {page}"

def test_scores_count_on_purpose_failures_apart_and_report_stale_entries(monkeypatch):
  monkeypatch.setattr(tc, "ON_PURPOSE", {"test/test_x.py::T::test_a": ("why", "docs/x.md"), "test/test_x.py::T::test_b": ("why", "docs/x.md"),
                                         "test/test_x.py::T::test_gone": ("why", "docs/x.md")})
  tg = {"outcomes": {f"test/test_x.py::T::test_{k}": {"outcome": "passed"} for k in "abcd"}}
  lz = {"outcomes": {"test/test_x.py::T::test_a": {"outcome": "failed"}, "test/test_x.py::T::test_b": {"outcome": "passed"},
                     "test/test_x.py::T::test_c": {"outcome": "failed"}, "test/test_x.py::T::test_d": {"outcome": "passed"}}}
  s = tc.file_score("test_x.py", tg, lz)
  assert (s["tinygrad_passed"], s["lazynb_passed"], s["on_purpose"]) == (4, 2, {"why": 1})
  assert sorted(s["on_purpose_stale"]) == ["test/test_x.py::T::test_b", "test/test_x.py::T::test_gone"]

def test_docs_run_makes_one_script_of_a_pages_python_blocks(tmp_path, monkeypatch):
  """tools/tinygrad_docs_run.py: a page's ```python blocks in order, `!pip` lines dropped, other languages left out,
  mnist.md's long loop shortened only when asked; the fetch_mnist stand-in reads the data folder as tinygrad returns it."""
  import tinygrad_docs_run as dr
  page = "text\n```python\nx = 1\n!pip install foo\n```\n```bash\nls\n```\n```python\nfor i in range(7000): x += i\nprint(x)\n```\n"
  src = dr.script("mnist.md", page, None)
  assert "pip" not in src and "ls" not in src and src.index("x = 1") < src.index("range(7000)")
  assert "range(5)" in dr.script("mnist.md", page, 5) and dr.script("abstractions2.py", "range(7000)", None) == "range(7000)"
  ok, out = dr.run(dr.script("mnist.md", page, 3), timeout=60)
  assert ok and out.strip() == "4", out
  data = tmp_path / "mnist"
  data.mkdir()
  import gzip, numpy as np
  for name, head, arr in [("train-images-idx3-ubyte.gz", 16, np.arange(2 * 784) % 256), ("train-labels-idx1-ubyte.gz", 8, np.array([3, 7])),
                          ("t10k-images-idx3-ubyte.gz", 16, np.zeros(784)), ("t10k-labels-idx1-ubyte.gz", 8, np.array([1]))]:
    with gzip.open(data / name, "wb") as f: f.write(bytes(head) + arr.astype(np.uint8).tobytes())
  monkeypatch.setenv("LAZYNB_DATA", str(tmp_path))
  ok, out = dr.run("from extra.datasets import fetch_mnist\nX, Y, Xt, Yt = fetch_mnist()\nprint(X.shape, X.dtype, Y.dtype, Y.tolist(), Xt.shape, Yt.tolist())", 60)
  assert ok and out.strip() == "(2, 784) float32 int8 [3, 7] (1, 784) [1]", out

# ---------------------------------------------------------------- tools/api_fuzz.py
import api_fuzz as af  # noqa: E402

def test_api_fuzz_programs_are_seeded_source_text():
  """A seed is one program, the same every time; --grad makes the input a float32 leaf; every program is valid Python."""
  assert af.program(7) == af.program(7) and af.program(7) != af.program(8)
  assert all("requires_grad=True" in af.program(s, grad=True).splitlines()[0] for s in range(30))
  for s in range(200): compile(af.program(s), f"seed {s}", "exec")

def test_api_fuzz_compares_what_it_says():
  """differ() flags a value, a dtype, a shape and an error on one side only, and lets equal results (NaN too) pass."""
  ok = lambda *res: ("ok", list(res))  # noqa: E731
  a = ok(((2,), "float", np.array([1.0, np.nan])))
  assert af.differ(a, ok(((2,), "float", np.array([1.0, np.nan])))) == ""
  assert af.differ(a, ok(((2,), "float", np.array([1.0, 2.0])))) == "values"
  assert af.differ(a, ok(((2,), "half", np.array([1.0, np.nan])))) == "dtype"
  assert af.differ(a, ok(((1, 2), "float", np.array([[1.0, np.nan]])))).startswith("shape")
  assert af.differ(a, ("raises", "ValueError: x")) == "LAZYNB RAISES" and af.differ(("raises", "E: x"), a) == "tinygrad raises"
  assert af.differ(("raises", "E: x"), ("raises", "F: y")) == ""
  assert af.differ(ok(((2,), "int", np.array([1, 2]))), ok(((2,), "int", np.array([1, 3])))) == "values"

def test_api_fuzz_runs_both_sides_and_names_a_crash(tmp_path, monkeypatch):
  """The whole tool on 40 seeds (both libraries, each in its own process); a program that kills its process is reported
  against its seed and the run goes on from the next one."""
  pytest.importorskip("tinygrad", reason="the oracle side")
  r = subprocess.run([sys.executable, str(ROOT / "tools" / "api_fuzz.py"), "--seeds", "0:40"], capture_output=True, text=True, timeout=600)
  assert r.returncode == 0 and r.stdout.startswith("40 programs:"), r.stderr[-2000:]
  monkeypatch.setattr(af, "program", lambda s, grad=False: "import os; os._exit(3)" if s == 2 else "x = T([1]); r = x + 1")
  def _inline(cmd):  # the worker in a forked child (it sees the planted programs): os._exit ends only the child
    pid = os.fork()
    if pid == 0:
      try: af.worker(cmd[3], *map(int, cmd[4].split(":")), False, cmd[5])
      finally: os._exit(0)
    os.waitpid(pid, 0)
  monkeypatch.setattr(af, "_launch", _inline)
  out = af.drive("lazynb", 0, 5, grad=False)
  assert sorted(out) == [0, 1, 2, 3, 4] and out[2][0] == "crash" and all(out[s][0] == "ok" for s in (0, 1, 3, 4)), out
