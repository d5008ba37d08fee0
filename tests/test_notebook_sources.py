"""Each course notebook is built from its source (tools/make_notebook.py notebooks/src/NAME.py notebooks/NAME.ipynb): a
change made to only one of them is lost or undone at the next build, so both must say the same, cell by cell."""
import importlib.util, json, pathlib
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "notebooks" / "src").glob("*.py"))
pytest.importorskip("nbformat")
_spec = importlib.util.spec_from_file_location("make_notebook", ROOT / "tools" / "make_notebook.py")
make_notebook = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_notebook)

def test_every_notebook_has_a_source_and_back():
  assert {p.stem for p in SOURCES} == {p.stem for p in (ROOT / "notebooks").glob("*.ipynb")}

@pytest.mark.parametrize("src", SOURCES, ids=[p.stem for p in SOURCES])
def test_notebook_matches_its_source(src):
  built = make_notebook.build(src.read_text())
  saved = json.loads((ROOT / "notebooks" / f"{src.stem}.ipynb").read_text())
  want = [(c.cell_type, c.source) for c in built.cells]
  got = [(c["cell_type"], "".join(c["source"])) for c in saved["cells"]]
  assert got == want, f"notebooks/{src.stem}.ipynb differs from its source: python tools/make_notebook.py {src.relative_to(ROOT)} notebooks/{src.stem}.ipynb"

def test_every_op_the_views_show_for_the_course_matmul_is_named_in_the_course_text():
  """A learner stepping through the Rewrites and Kernels tabs of 07_pipeline's matmul (with and without opts) meets
  each op it draws somewhere in the course's prose (LANE, lowering's marker, was drawn and never explained)."""
  import re
  from lazynb import Tensor, Context
  from lazynb.trace import capture
  ops: set[str] = set()
  for noopt in (1, 0):
    with Context(NOOPT=noopt), capture() as tr:
      a, b = Tensor.randn(4, 4).realize(), Tensor.randn(4, 4).realize()
      (a @ b).realize()
    ops |= {n.get("op") for g in tr.to_json()["graphs"].values() for n in g.get("nodes", []) if n.get("op")}
  src = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "src"
  prose = "\n".join(line[2:] for p in src.glob("*.py") for line in p.read_text().splitlines() if line.startswith("# "))
  assert "LANE" in ops and len(ops) > 15
  assert not (silent := sorted(o for o in ops if not re.search(rf"\b{o}\b", prose))), f"ops the views draw that no notebook's text names: {silent}"
