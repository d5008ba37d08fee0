"""The text/html of a trace output (see lazynb.notebook.tracedoc): `bundle(doc)`, an output's whole MIME bundle, and `render_view`.

`bundle` is what a %%tinygrad output carries: a stub under the trace MIME type and, as text/html (`render_view`), the
document once, packed, with the loader of the interactive view (lazynb.notebook.viz.embed: the JupyterLab renderer's code as one
script, which only the session's first output carries, see `script_once`) and a short view for pages where scripts do
not run (lazynb.notebook.viz.text_fallback). The views themselves are drawn by that one TypeScript renderer only
(labextension/src): in JupyterLab by the extension, elsewhere (Notebook 7, nbconvert HTML, VS Code, Colab) by the
script.
"""
from __future__ import annotations
import json, sys
from lazynb.notebook import viz as _viz

# ---------------------------------------------------------------- which output carries the view's script
_script_sent = False
_carrier: str | None = None  # the notebook cell whose output carries the script, if the front end said which cell ran

def _cell_id() -> str | None:
  """The id of the notebook cell running now, as JupyterLab and Notebook 7 send it with each execute request (else None)."""
  try:
    from IPython import get_ipython  # (the notebook layer: IPython is there when a cell runs)
    kernel = getattr(get_ipython(), "kernel", None)
    cid = (kernel.get_parent().get("metadata") or {}).get("cellId") if kernel is not None else None
    return cid if isinstance(cid, str) else None
  except Exception: return None  # noqa: BLE001  (no IPython, an older kernel: no cell id)

def script_once() -> bool:
  """True for the first output of this process (the first output of a kernel session carries the script), again for a
  later output of that same cell (re-running it must not drop the script from the notebook), and always in Colab."""
  global _script_sent, _carrier
  if "google.colab" in sys.modules: return True
  cell = _cell_id()
  if not _script_sent:
    _script_sent, _carrier = True, cell
    return True
  return cell is not None and cell == _carrier

def render_view(doc: dict, script: bool = True, fallback: str | None = None) -> str:
  """The text/html of a trace output: the document once (packed, see lazynb.notebook.viz), the loader of the interactive view
  (with its script if `script`), and a short view without JavaScript (default: summary, schedule, kernel sources)."""
  return _viz.embed(doc, _viz.text_fallback(doc) if fallback is None else fallback, script=script, packed=True)

MAX_OUTPUT_BYTES = 600_000  # one trace output as saved (json.dumps of its bundle); see also tracedoc.MAX_DOC_BYTES

def bundle(doc: dict, summary: str, script: bool | None = None, full: dict | None = None, limit: int = MAX_OUTPUT_BYTES,
           fallback: str | None = None) -> dict:
  """A trace output's MIME bundle: the document once, in the text/html; the trace entry is its stub (see lazynb.notebook.viz).
  `script`: whether this output carries the view's script (default: only the first output of the kernel session).
  If the bundle's JSON is over `limit` bytes, the document is bounded again (tracedoc.bounded, from `full` if given) to
  a smaller size until it fits."""
  from lazynb.notebook.tracedoc import MIME, MAX_DOC_BYTES, bounded
  script = script_once() if script is None else script
  def make(d: dict) -> dict: return {MIME: _viz.stub(d), "text/html": render_view(d, script, fallback), "text/plain": summary}
  out, doc_limit = make(doc), MAX_DOC_BYTES
  while len(json.dumps(out)) > limit and doc_limit > 10_000:
    doc_limit //= 2
    out = make(dict(bounded(full if full is not None else doc, doc_limit), **({"show": doc["show"]} if "show" in doc else {})))
  return out

# registered once, so Trace._repr_mimebundle_ shows this view (and the document once, in it)
from lazynb import trace as _trace  # noqa: E402
def _mime(tr) -> dict: return bundle(tr.shown_json(), tr.summary(), full=tr.to_json())
_mime._lazynb_html = True  # type: ignore[attr-defined]  # (a mark on the function: mypy does not model those)
if not any(getattr(r, "_lazynb_html", False) for r in _trace.mime_renderers): _trace.mime_renderers.append(_mime)
