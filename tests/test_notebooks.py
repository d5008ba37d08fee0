"""Every notebook in notebooks/, executed top to bottom (once per test session: the newcomer's run in
tests/test_newcomer.py when it ran first, else here); the notebooks assert on their own results.

The kernel inherits this process's environment. LAZYNB_QUICK=1 (the default here) makes the long notebooks
(p04_mnist) train a small model on a subset; set LAZYNB_QUICK=0 to run them in full. LAZYNB_DATA should name
the folder that holds mnist/ (.ci/run sets it), else the MNIST notebook downloads the data. Where a notebook's text
states a number the notebook measures, the executed outputs must agree (tests/notebook_prose.py), and no quiz's
explanation may show in an output before the cell that reveals it."""
import os, pathlib, re, pytest
from notebook_prose import explained_early, mismatches
nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

MAX_NOTEBOOK_BYTES = 2_000_000
NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))

def executed(path: pathlib.Path, saved: pathlib.Path, monkeypatch):
  """The notebook as executed in this test session: the newcomer's run of it (tests/test_newcomer.py runs first and
  keeps its executed copies), else a run here."""
  if (saved / path.name).is_file(): return nbformat.read(saved / path.name, as_version=4)
  monkeypatch.setenv("LAZYNB_QUICK", os.environ.get("LAZYNB_QUICK", "1"))
  monkeypatch.setenv("BEAM_PROGRESS", os.environ.get("BEAM_PROGRESS", "0"))
  # the kernel must import this checkout's lazynb, not whichever one is pip-installed (a worktree tested main's code)
  root = str(pathlib.Path(__file__).parent.parent)
  monkeypatch.setenv("PYTHONPATH", os.pathsep.join([root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
  nb = nbformat.read(path, as_version=4)
  nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
  return nb

@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, executed_notebooks, monkeypatch):
  nb = executed(path, executed_notebooks, monkeypatch)
  errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
  assert not errors, "\n".join(f"{o.get('ename')}: {o.get('evalue')}" for o in errors)
  assert any(o.get("output_type") == "stream" for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
  # an exercise's check cell shows its pass/fail message only, no bare True/False Out[] line under it
  bare = [c.source for c in nb.cells if c.cell_type == "code" and re.search(r'^check\("', c.source, re.M)
          and any(o.get("output_type") == "execute_result" for o in c.get("outputs", []))]
  assert not bare, "a check cell shows an Out[] value:\n" + "\n".join(bare)
  wrong = mismatches(path.stem, nb)
  assert not wrong, "the text states a number the run contradicts:\n" + "\n".join(wrong)
  early = explained_early(path.stem, nb)
  assert not early, "a quiz answer shows before it is asked for:\n" + "\n".join(early)
  # issue 32: after Run All a course notebook stays small enough to keep; the trace view's script is in one output at most
  size = len(nbformat.writes(nb))
  assert size <= MAX_NOTEBOOK_BYTES, f"{path.name} weighs {size / 1e6:.2f} MB after Run All, over {MAX_NOTEBOOK_BYTES / 1e6:.1f} MB: " + \
    ", ".join(f"cell {i}: {n // 1000} KB" for n, i in sorted(((len(nbformat.writes(nbformat.v4.new_notebook(cells=[c]))), i)
                                                              for i, c in enumerate(nb.cells)), reverse=True)[:5])
  carriers = [i for i, c in enumerate(nb.cells) for o in c.get("outputs", []) if "data-lazynb-script=" in "".join(o.get("data", {}).get("text/html", ""))]
  assert len(carriers) <= 1, f"the view's script is in the outputs of cells {carriers}"
