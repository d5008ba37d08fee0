"""Build a notebook from a simple text format: cells separated by lines '# %% [markdown]' or '# %%'.
Usage: python tools/make_notebook.py notebooks/src/NAME.py notebooks/NAME.ipynb (cells that did not change keep their ids)"""
from __future__ import annotations
import pathlib, sys

def build(src: str) -> nbformat.NotebookNode:
  import nbformat  # (here: importing it takes ~2 s, which every test process that imports this module would pay)
  nb = nbformat.v4.new_notebook()
  nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
  cells, kind, buf = [], None, []
  def flush():
    if kind is None: return
    text = "\n".join(buf).strip("\n")
    if kind == "md": cells.append(nbformat.v4.new_markdown_cell("\n".join(l[2:] if l.startswith("# ") else l.lstrip("#") for l in text.splitlines())))
    else: cells.append(nbformat.v4.new_code_cell(text))
  for line in src.splitlines():
    if line.startswith("# %%"):
      flush()
      kind, buf = ("md" if "[markdown]" in line else "code"), []
    else: buf.append(line)
  flush()
  nb.cells = cells
  return nb

def keep_ids(nb: nbformat.NotebookNode, old: nbformat.NotebookNode) -> nbformat.NotebookNode:
  """Give every cell whose type and text are unchanged the id it had in the previous build, so a regenerated
  notebook's diff shows only the cells that changed (a new or edited cell gets a new id)."""
  import nbformat
  free: dict[tuple[str, str], list[str]] = {}
  for c in old.cells: free.setdefault((c.cell_type, c.source), []).append(c.id)
  kept = []
  for c in nb.cells:
    ids = free.get((c.cell_type, c.source))
    kept.append(bool(ids))
    if ids: c.id = ids.pop(0)
  used = {c.id for c, k in zip(nb.cells, kept) if k}
  for c, k in zip(nb.cells, kept):
    while not k and c.id in used: c.id = nbformat.v4.new_code_cell().id  # a fresh id never repeats a kept one
  return nb

if __name__ == "__main__":
  import nbformat
  nb = build(open(sys.argv[1]).read())
  if pathlib.Path(sys.argv[2]).exists(): nb = keep_ids(nb, nbformat.read(sys.argv[2], as_version=4))
  nbformat.write(nb, sys.argv[2])
