# %% [markdown]
# # Part 11 — Contributing
#
# The course ends by sending you to tinygrad's issue tracker. The habits it asks for are the same for any small,
# carefully kept codebase, lazynb included: read the contribution notes, run the tests, keep the change small, add
# no dependencies, and come with a test that fails before your change and passes after it. This notebook does each
# of those things once, on lazynb, so the motions are familiar when you do them on tinygrad.
#
# | course (tinygrad) | lazynb |
# |---|---|
# | read `CONTRIBUTING.md` | read `README.md` and `docs/architecture.md` |
# | `python -m pytest test/ -x` | `python -m pytest tests/ -x -q` (or `bash .ci/run`, which installs what the tests need first) |
# | `python -m pytest test/test_ops.py::TestOps::test_relu -v` | `python -m pytest tests/test_ops.py -k relu -v` |
# | `DEVICE=CLANG python -m pytest test/ -x` | `DEVICE=PYTHON python -m pytest tests/ -x` (or `CPU`, `CL`) |
# | GitHub's "good first issue" label | a `pytest.mark.xfail(strict=True)` test is a known bug waiting for a fix |

# %%
%load_ext lazynb
import os, re, sys, math, pathlib, subprocess, tempfile, textwrap
import numpy as np
import lazynb
from lazynb import Tensor, Device, Context, GlobalCounters, dtypes, Ops, UOp
from lazynb.uop.ops import UPat, PatternMatcher, graph_rewrite
from lazynb.trace import capture
from lazynb.notebook.quiz import quiz
# the repository: where lazynb is installed from (pip install -e .), or the folder above this notebook
REPO = next(p for p in (pathlib.Path(lazynb.__file__).parent.parent, pathlib.Path.cwd().parent, pathlib.Path.cwd())
            if (p / "tests").is_dir() and (p / "pyproject.toml").is_file())
print("repository:", REPO)
print("test files:", sorted(p.name for p in (REPO / "tests").glob("test_*.py")))

# %% [markdown]
# ## 1. A new op: add it by composition, test it three ways
#
# The most common first contribution is a missing activation or loss. In tinygrad and lazynb a new op is almost never a
# new primitive: it is a Tensor method built from existing ones, so the compiler, autograd and every backend support
# it at once. Take hard-swish, `x · relu6(x + 3) / 6`:

# %%
def hardswish(self: Tensor) -> Tensor: return self * (self + 3).relu6() * (1 / 6)
Tensor.hardswish = hardswish   # in a real change: a one-line method in lazynb/tensor.py, next to relu6

# %% [markdown]
# A good change comes with tests of three things: the values (against a reference), the gradient (against finite
# differences), and, because this is a compiler, what it compiles to: a chain of elementwise ops, so one kernel.

# %%
xs = np.linspace(-5, 5, 21).astype(np.float32)
def ref(v): return v * np.clip(v + 3, 0, 6) / 6
x = Tensor(xs, requires_grad=True)
with capture(rewrites=False) as tr: y = x.hardswish().realize()
np.testing.assert_allclose(y.numpy(), ref(xs), rtol=1e-6, atol=1e-6)
x.hardswish().sum().backward()
eps = 1e-3
numeric = (ref(xs.astype(np.float64) + eps) - ref(xs.astype(np.float64) - eps)) / (2 * eps)
smooth = np.abs(np.abs(xs) - 3) > 1e-2   # finite differences are wrong right at the kinks, x = -3 and x = 3
np.testing.assert_allclose(x.grad.numpy()[smooth], numeric[smooth], rtol=1e-3, atol=1e-3)
print("values match NumPy; gradient matches finite differences;", len(tr.kernels), "kernel")
assert len(tr.kernels) == 1

# %% [markdown]
# ## 2. Writing the test the way the repository does
#
# lazynb's tests are plain pytest functions (see `tests/test_ops.py`). Write one to a file and run it exactly as CI
# would, together with an existing test, and on a different device: `DEVICE=PYTHON` makes the interpreter the default,
# so the same test checks a second backend for free.

# %%
test_src = textwrap.dedent('''
    import os
    import numpy as np
    from lazynb import Tensor, Device

    def hardswish(x): return x * (x + 3).relu6() * (1 / 6)

    def test_hardswish_values_and_device():
      xs = np.linspace(-5, 5, 11).astype(np.float32)
      out = hardswish(Tensor(xs)).numpy()
      np.testing.assert_allclose(out, xs * np.clip(xs + 3, 0, 6) / 6, rtol=1e-6, atol=1e-6)
      assert Device.DEFAULT == os.environ.get("DEVICE", "CPU")
''')
import importlib.util
missing = [m for m in ("pytest", "hypothesis") if importlib.util.find_spec(m) is None]
if missing:  # both come with the README's install (the [notebook] extra); tests/conftest.py imports hypothesis
  raise ModuleNotFoundError(f"this section runs lazynb's tests, which needs {' and '.join(missing)}: pip install {' '.join(missing)} "
                            "(or, in the lazynb checkout, pip install -e \".[notebook]\"), then restart the kernel")
with tempfile.TemporaryDirectory() as d:
  path = pathlib.Path(d) / "test_hardswish.py"
  path.write_text(test_src)
  cmd = [sys.executable, "-m", "pytest", "--color=no", "-p", "no:cacheprovider", str(path), "tests/test_seeds.py::test_001_tensor_basics"]
  run = subprocess.run(cmd, cwd=REPO, env=dict(os.environ, DEVICE="PYTHON"), capture_output=True, text=True, timeout=300)
print("$ DEVICE=PYTHON python -m pytest test_hardswish.py tests/test_seeds.py::test_001_tensor_basics")
print((run.stdout.strip() or run.stderr.strip() or "(no output)").splitlines()[-1])

# %%
assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout + run.stderr

# %% [markdown]
# ## 3. A new rewrite rule
#
# Compiler contributions are often one more pattern. lazynb's `symbolic` rules (Part 7) do not know that the maximum
# of a value with itself is that value:

# %%
q_rule = quiz("In a rule like (UPat.var('x').maximum(UPat.var('x')), lambda x: x), what does using the name 'x' twice mean?",
              ["two unrelated wildcards", "both sources must be the very same UOp", "a syntax error"], key="11_contributing.q_rule")

# %%
from lazynb.uop.symbolic import symbolic
ridx = UOp(Ops.RANGE, dtypes.int, (), (0, 16, "ridx0"))
other = UOp(Ops.RANGE, dtypes.int, (), (1, 16, "ridx1"))
expr = ridx.maximum(ridx) + 1
max_self = PatternMatcher([(UPat.var("x").maximum(UPat.var("x")), lambda x: x)])
before, after = graph_rewrite(expr, symbolic), graph_rewrite(expr, symbolic + max_self)
print("symbolic alone:      ", before.op, [s.op for s in before.src])
print("symbolic + new rule: ", after.op, [s.op for s in after.src])

# %%
assert before.src[0].op is Ops.MAX and after.src[0] is ridx
q_rule.reveal()
assert graph_rewrite(ridx.maximum(other), symbolic + max_self).op is Ops.MAX   # different sources: left alone

# %% [markdown]
# To contribute it: add the rule to `symbolic_simple` in `lazynb/uop/symbolic.py` (it needs no bounds), add a test
# in `tests/test_uop.py` like the two asserts above, and run the whole suite, because a rule that fires where it
# should not changes generated code everywhere. (For floats, `max(x, x) → x` is also right for NaN, since both sides
# are NaN; not every identity survives that check, which is why `x - x → 0` is *not* a rule.)
#
# ## 4. A bug fix starts with a minimal repro
#
# While these notebooks were being written, one of their `%%tinygrad` cells never finished. Cutting it down led to a
# few lines: the Python HTML view of that time trimmed each kernel's source in a `while True` loop until it fit what
# was left of a size budget, and once the budget went negative the loop never ended. That view is gone (one
# TypeScript view draws every trace now), but its successor keeps a budget of the same kind: the short view for pages
# without JavaScript, `lazynb.notebook.viz.text_fallback`, shows kernel sources until `source_bytes` are used up. A good bug
# report is minimal, runnable, and says what was observed and what was expected. Here is the old repro's shape pointed
# at the new code (a budget that is already used up), run the safe way, in a subprocess with a timeout:

# %%
repro = textwrap.dedent('''
    from lazynb.notebook import viz
    src = "\\n".join(f"  float v{i} = *(data1+{i});" for i in range(300))
    doc = {"kernels": [{"id": 0, "name": "E_300", "device": "CPU", "runs": 1, "source": src}], "schedule": []}
    out = viz.text_fallback(doc, source_bytes=-20000)   # what is left of the budget after a few large kernels
    print(len(out), "characters;", "source cut" if "more characters)" in out else "source shown whole")
''')
try:
  r = subprocess.run([sys.executable, "-c", repro], cwd=REPO, capture_output=True, text=True, timeout=4)
  hangs = False
  print("finished:", r.stdout.strip() or r.stderr.strip()[-300:])
except subprocess.TimeoutExpired:
  hangs = True
  print("still running after 4 s: the bug is there")
assert not hangs and "source cut" in r.stdout, r.stderr[-500:]   # what the text below says

# %% [markdown]
# Had the cell said the bug is there, the next steps would be the usual ones: turn the repro into a test (marked
# `xfail(strict=True)` until the fix lands, so that the fix is noticed), fix `text_fallback` in `lazynb/notebook/viz.py`
# (stop when the budget is used up), remove the `xfail`, run the suite. It finishes: the new code cuts each source
# once, with no loop to get stuck in, and says how much it left out.
#
# ## 5. The standard
#
# The course lists tinygrad's rules: keep changes minimal, add no dependencies, all tests pass, new features come with
# tests, and the code style (two-space indents, long lines, few comments). lazynb keeps the same style, written down
# in `pyproject.toml` for the ruff linter:

# %%
text = (REPO / "pyproject.toml").read_text()
try:
  import tomllib   # Python 3.11+
  cfg = tomllib.loads(text)
  ruff, deps = cfg["tool"]["ruff"], cfg["project"]["dependencies"]
except ImportError:  # Python 3.10: read the two settings by hand
  ruff = {k: int(v) for k, v in re.findall(r"^(line-length|indent-width) = (\d+)", text, re.M)}
  deps = re.findall(r'"([^"]+)"', re.search(r"^dependencies = \[(.*)\]", text, re.M).group(1))
print("ruff:", ruff, "  runtime dependencies:", deps)
assert ruff["indent-width"] == 2 and ruff["line-length"] >= 120
assert deps == ["numpy>=1.24"]   # the compiler itself needs only NumPy

# %% [markdown]
# ## 6. Documentation counts too
#
# These notebooks are contributions of that kind. Each one is built from a plain-text source in `notebooks/src/`
# (cells separated by `# %%` and `# %% [markdown]` lines), with
# `python tools/make_notebook.py notebooks/src/NAME.py notebooks/NAME.ipynb`, stored without outputs, and executed
# top to bottom by `tests/test_notebooks.py`, so a compiler change that breaks a claim made in a notebook fails CI.
# Build a two-cell notebook the same way:

# %%
sys.path.insert(0, str(REPO / "tools"))
from make_notebook import build
nb = build("# %% [markdown]\n# # A claim\n\n# %%\nassert (Tensor([1, 2, 3]) + 1).tolist() == [2, 3, 4]\n")
print([(c.cell_type, c.source) for c in nb.cells])
assert [c.cell_type for c in nb.cells] == ["markdown", "code"] and nb.cells[0].source == "# A claim"
ns = {"Tensor": Tensor}
exec(nb.cells[1].source, ns)   # the claim holds

# %% [markdown]
# That is the course. To keep going: the project notebooks `p01_tensor_basics` to `p07_custom_backend`, the tinygrad
# repository and its Discord, and the source of whichever stage of lazynb you found most surprising.

# %% [markdown]
# ## Exercise: contribute an activation
#
# `softsign(x) = x / (1 + |x|)` is an activation tinygrad has and lazynb does not. Write it from existing ops, the
# way `hardswish` is built; the check compares its values and its gradient with numpy.

# %%
# EXERCISE 11.softsign
def softsign(x):
  # YOUR CODE
  raise NotImplementedError

# %%
from lazynb.notebook.exercise import check
check("11.softsign", softsign)
