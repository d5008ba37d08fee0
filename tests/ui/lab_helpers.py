"""Notebook files and JupyterLab page actions shared by the browser tests."""
from __future__ import annotations
import json, os, time
from pathlib import Path
import nbformat

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("LAZYNB_UI_ARTIFACTS", ROOT / "tests" / "artifacts"))
MIME = "application/vnd.lazynb.trace+json"
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}

def write_notebook(path: Path, cells: list[str], outputs: dict[int, list] | None = None, kernelspec: dict | None = KERNELSPEC) -> Path:
  nb = nbformat.v4.new_notebook()
  nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
  for i, outs in (outputs or {}).items():
    nb.cells[i].outputs = [nbformat.from_dict(o) for o in outs]
    nb.cells[i].execution_count = i + 1
  if kernelspec: nb.metadata["kernelspec"] = kernelspec
  nbformat.write(nb, str(path))
  return path

def trace_doc(code: str) -> dict:
  """The trace document of running `code` (with Tensor in scope), as it would be saved in a notebook (plain JSON)."""
  from lazynb import Tensor
  from lazynb.trace import capture
  with capture() as tr: exec(code, {"Tensor": Tensor})
  return json.loads(json.dumps(tr.to_json()))

def trace_output(doc: dict) -> dict:
  """A display_data output as the %%tinygrad magic makes it: the trace's stub, the document packed in the text/html with
  the view without JavaScript, and plain text (no script: JupyterLab's extension renders it)."""
  from lazynb.notebook.html import bundle
  return {"output_type": "display_data", "metadata": {}, "data": bundle(doc, f"lazynb trace: {len(doc.get('kernels', []))} kernels", script=False)}

def dismiss_dialogs(pg, prefer: str = "Select") -> None:
  dlg = pg.query_selector(".jp-Dialog")
  if dlg:
    btn = pg.query_selector(f".jp-Dialog button:has-text('{prefer}')") or pg.query_selector(".jp-Dialog .jp-mod-accept")
    if btn: btn.click()

def open_notebook(pg, lab, name: str, kernel: bool = True) -> None:
  pg.goto(lab.url(f"lab/tree/{name}") + "&reset")  # a fresh workspace: only this notebook open
  pg.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell")
  if kernel:
    pg.wait_for_selector(".jp-StatusBar-TextItem:has-text('| Idle')", timeout=90_000)
    dismiss_dialogs(pg)
  else:
    # the notebook names a kernel that does not exist: JupyterLab asks which to start; answer "No Kernel"
    try:
      pg.wait_for_selector(".jp-Dialog", timeout=15_000)
      dismiss_dialogs(pg, prefer="No Kernel")
    except Exception:
      pass

def cell(pg, i: int):
  return pg.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").nth(i)

def run_cell(pg, i: int, timeout: float = 120) -> None:
  """Select cell i (command mode), run it, wait until its prompt shows an execution count."""
  c = cell(pg, i)
  c.locator(".jp-InputPrompt").click()
  pg.keyboard.press("Escape")
  pg.keyboard.press("Control+Enter")
  deadline = time.time() + timeout
  while time.time() < deadline:
    txt = c.locator(".jp-InputPrompt").inner_text().strip()
    if txt.startswith("[") and txt not in ("[ ]:", "[*]:"):
      return
    time.sleep(0.2)
  raise TimeoutError(f"cell {i} did not finish: prompt {txt!r}")

def save_and_read(pg, lab, name: str, want_outputs: int, timeout: float = 30) -> dict:
  """Save the notebook and read it back from disk once it holds `want_outputs` trace outputs."""
  path = lab.root / name
  deadline = time.time() + timeout
  while time.time() < deadline:
    pg.keyboard.press("Control+s")
    time.sleep(0.7)
    try: nb = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError): continue  # read while the server was writing it (empty or cut): read again
    docs = [o["data"][MIME] for c in nb["cells"] for o in c.get("outputs", []) if MIME in o.get("data", {})]
    if len(docs) >= want_outputs: return nb
  raise TimeoutError(f"{name} was not saved with {want_outputs} trace outputs")

def trace_docs(nb: dict) -> list[dict]:
  """The trace documents of a saved notebook's outputs (in each output's text/html when its MIME entry is a stub)."""
  from lazynb.notebook import viz
  return [viz.doc_of(o["data"]) for c in nb["cells"] for o in c.get("outputs", []) if MIME in o.get("data", {})]

def trace_views(pg, root_selector: str) -> list[dict]:
  """Per trace view on the page: tab names, summary text, schedule rows' text (to compare two front ends' views)."""
  out = []
  for tr in pg.locator(root_selector).all():
    tr.locator(".lz-sched-row").first.wait_for()
    out.append({"tabs": tr.locator(".lz-tab").all_inner_texts(), "summary": tr.locator(".lz-summary").inner_text(),
                "schedule": tr.locator(".lz-sched-row").all_inner_texts()})
  return out

def lit(pg, root, selector: str, attr: str) -> list[int]:
  return sorted(int(x) for x in root.locator(selector).evaluate_all(f"els => els.map(e => e.getAttribute('{attr}'))"))

def shot(pg, name: str, locator=None) -> Path:
  """Save a screenshot to the artifacts folder and print where."""
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  path = ARTIFACTS / f"{name}.png"
  (locator or pg).screenshot(path=str(path))
  print(f"screenshot: {path}")
  return path
