"""Build a notebook from a simple text format: cells separated by lines '# %% [markdown]' or '# %%'.
Usage: python tools/make_notebook.py notebooks/src/NAME.py notebooks/NAME.ipynb"""
import sys, nbformat

def build(src: str) -> nbformat.NotebookNode:
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

if __name__ == "__main__":
  nbformat.write(build(open(sys.argv[1]).read()), sys.argv[2])
