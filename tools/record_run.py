"""Run a notebook at full size (LAZYNB_QUICK=0) and keep a record of what it printed, for figures a notebook's text
quotes from a run too long for the test suite (p04_mnist trains for many minutes). The record keeps every code cell's
source and its text outputs (streams and text/plain; no HTML, widgets or images), plus where it ran.
tests/test_notebook_prose.py checks the record's code against the notebook's and the notebook's text against the
record's outputs.

Usage: LAZYNB_DATA=<folder with mnist/> python tools/record_run.py notebooks/p04_mnist.ipynb notebooks/runs/p04_mnist.full.ipynb
       ... python tools/record_run.py --solved notebooks/b10_capstone.ipynb notebooks/runs/b10_capstone.full.ipynb
--solved: a build notebook as a learner who solved every exercise runs it: the build notebooks before it run first, with
their reference solutions (tests/build_track.py), keeping their parts in a fresh folder; the notebook runs on them."""
import os, pathlib, sys, time
import nbclient, nbformat

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from benchenv import environment_lines  # noqa: E402

def text_only(cell, scratch: str | None = None) -> list:
  """A code cell's outputs reduced to text: streams as they are, results and displays as their text/plain. The
  scratch folder's path (`scratch/`), where it shows, is cut out: a record names no folder of this machine."""
  def clean(text: str) -> str: return text.replace(scratch.rstrip("/") + "/", "") if scratch else text
  keep = []
  for o in cell.get("outputs", []):
    if o.output_type == "stream": keep.append(nbformat.v4.new_output("stream", name=o.name, text=clean(o.text)))
    elif o.output_type == "error": raise RuntimeError(f"the run failed: {o.ename}: {o.evalue}")
    elif "text/plain" in o.get("data", {}):
      keep.append(nbformat.v4.new_output("stream", name="stdout", text=clean(o.data["text/plain"].rstrip("\n")) + "\n"))
  return keep

def record(src: pathlib.Path, dst: pathlib.Path, solved: bool = False) -> None:
  nb = nbformat.read(src, as_version=4)
  os.environ["LAZYNB_QUICK"] = "0"
  os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
  started, scratch = time.time(), None
  if solved:
    import tempfile
    sys.path.insert(0, str(ROOT / "tests"))
    from build_track import BUILD_NOTEBOOKS, solved_notebook
    scratch = tempfile.mkdtemp(prefix="lazynb-record-")
    os.environ["LAZYNB_BUILD_DIR"] = str(pathlib.Path(scratch) / "my_compiler")
    for stem in BUILD_NOTEBOOKS[:BUILD_NOTEBOOKS.index(src.stem)]:
      nbclient.NotebookClient(solved_notebook(stem), timeout=7200, kernel_name="python3", resources={"metadata": {"path": str(src.parent)}}).execute()
    nb = solved_notebook(src.stem)
  nbclient.NotebookClient(nb, timeout=7200, kernel_name="python3", resources={"metadata": {"path": str(src.parent)}}).execute()
  out = nbformat.v4.new_notebook()
  out.metadata["kernelspec"] = nb.metadata.get("kernelspec", {})
  out.metadata["lazynb_record"] = {"notebook": src.name, "mode": "full (LAZYNB_QUICK=0)" + (", solved (the build notebooks' solutions)" if solved else ""), "wall_seconds": round(time.time() - started),
                                   "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "environment": environment_lines()}
  out.cells = [nbformat.v4.new_code_cell(c.source, outputs=text_only(c, scratch)) for c in nb.cells if c.cell_type == "code"]
  dst.parent.mkdir(parents=True, exist_ok=True)
  nbformat.write(out, dst)
  print(f"recorded {src.name} -> {dst} in {time.time() - started:.0f} s")

if __name__ == "__main__":
  args = [a for a in sys.argv[1:] if a != "--solved"]
  if len(args) != 2: sys.exit(__doc__)
  record(pathlib.Path(args[0]), pathlib.Path(args[1]), solved="--solved" in sys.argv)
