"""The build track run as a learner who solved every exercise runs it: the build notebooks in order, each exercise
cell holding its reference solution (tests/build_track.py), one folder of kept stages for all of them. Every check
passes and keeps its stage; each notebook's `with mine():` cell runs on the stages kept so far; the capstone trains the
MLP on MNIST on them (LAZYNB_QUICK=1) and grades the assembled my_compiler.py again. (The notebooks as shipped, with
their stubs, run in tests/test_notebooks.py: every check fails with a hint and `mine()` runs on lazynb's stages.)"""
import os, re
import pytest
from lazynb import pipeline
from build_track import BUILD_NOTEBOOKS, solved_notebook, ROOT
from lazynb.notebook.build import STAGE_OF
nbclient = pytest.importorskip("nbclient")

def texts(nb) -> list[tuple[str, str]]:
  """(cell source, its printed text) for every code cell: its stream outputs, and the text a %%tinygrad cell's printed
  output is shown as (a display a slider re-run replaces: lazynb.notebook.widgets.CellStdout)."""
  def printed(o) -> str:
    if o.get("output_type") == "stream": return o.get("text", "")
    return o.get("data", {}).get("text/plain", "") if o.get("output_type") in ("display_data", "update_display_data") else ""
  return [(c.source, "".join(printed(o) for o in c.get("outputs", []))) for c in nb.cells if c.cell_type == "code"]

@pytest.fixture(scope="module")
def solved_run(tmp_path_factory):
  d = tmp_path_factory.mktemp("build-track")
  env = {"LAZYNB_BUILD_DIR": str(d / "my_compiler"), "LAZYNB_QUICK": "1",
         "PYTHONPATH": os.pathsep.join([str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
  old = {k: os.environ.get(k) for k in env}
  os.environ.update(env)
  try:
    out = {}
    for stem in BUILD_NOTEBOOKS:
      nb = solved_notebook(stem)
      nbclient.NotebookClient(nb, timeout=1200, kernel_name="python3", resources={"metadata": {"path": str(d)}}).execute()
      out[stem] = nb
    return d, out
  finally:
    for k, v in old.items():
      if v is None: os.environ.pop(k, None)
      else: os.environ[k] = v

def test_every_check_passes_and_each_stage_exercise_keeps_its_stage(solved_run):
  d, nbs = solved_run
  checks = {m.group(1): text for nb in nbs.values() for src, text in texts(nb) if (m := re.search(r'^check\("(b[^"]+)"', src, re.M))}
  assert set(STAGE_OF) <= set(checks) and all("\u2713 pass" in t for t in checks.values()), checks
  assert all(("kept your" in t) == (key in STAGE_OF) for key, t in checks.items()), checks
  assert sorted(p.name for p in (d / "my_compiler").iterdir()) == sorted(f"{s}.py" for s in set(STAGE_OF.values()))

def test_each_notebooks_mine_cell_runs_on_the_stages_kept_so_far(solved_run):
  _, nbs = solved_run
  said = {stem: [t for src, t in texts(nb) if "with mine()" in src] for stem, nb in nbs.items()}
  assert "lazynb's linearize stage walks each kernel in the order of your toposort" in said["b00_graph"][0]
  assert "running on your stages: compile, load " in said["b01_runtime"][0]
  assert all("in the order of your toposort" in t[0] for stem, t in said.items() if stem != "b00_graph" and t)  # kept from b00 on
  assert "running on your stages: render, compile, load " in said["b02_renderer"][0]
  assert "optimizer: yours" in "".join(t for _, t in texts(nbs["b05_optimizers"]))
  assert "gradient rules: yours first" in "".join(t for _, t in texts(nbs["b06_gradients"]))
  assert "lower (lazynb's, with your index math)" in said["b07_views"][0]
  assert "schedule (lazynb's, with your kernel boundaries)" in said["b08_schedule"][0]
  assert re.search(r"kernels: (\d+) from your decision, \1 from lazynb's", said["b08_schedule"][0]), said["b08_schedule"]
  assert "running on your stages: simplify, linearize, render, compile, load " in said["b04_simplify"][0]
  assert "running on your stages: linearize, render, compile, load " in said["b03_linearize"][0]
  assert "running on your stages: optimize, simplify, linearize, render, compile, load, lower " in said["b09_search"][0]
  assert "opts chosen: [Opt(UNROLL, 1, " in said["b09_search"][0] and "with plain loops" in said["b09_search"][0]

def test_the_capstone_trains_mnist_on_the_learners_stages_and_grades_the_assembled_file(solved_run):
  d, nbs = solved_run
  out = "\n".join(t for _, t in texts(nbs["b10_capstone"]))
  mine = ", ".join(s for s in pipeline.stages() if s in STAGE_OF.values())
  assert f"your stages:    {mine}" in out and f"running on your stages: {mine}" in out
  assert "optimizer:       yours, MyAdam" in out and "backward() uses your gradient rules first" in out
  acc = float(re.search(r"test accuracy ([\d.]+)%", out).group(1))
  print(f"the quick capstone: {acc}% test accuracy")
  assert acc >= 95.0, out
  assert all(f"  {n}: \u2713 passes its exercise again" in out for n in set(STAGE_OF.values())), out
  lines = int(re.search(r"my_compiler.py: (\d+) lines of code", out).group(1))
  code = [l for l in (d / "my_compiler.py").read_text().splitlines() if l.strip() and not l.lstrip().startswith("#")]
  assert lines == len(code) <= 600
