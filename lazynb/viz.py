"""The interactive trace view outside JupyterLab, and VIZ=1.

The view is the JupyterLab renderer's own code (labextension/src/traceview.ts and the views it uses) bundled by
labextension/webpack.standalone.js into one script, lazynb/static/lazynb-view.js (about 55 KB, no JupyterLab code).
`embed(doc, fallback)` gives one HTML element that holds a fallback for pages without JavaScript, the trace document
as JSON and that script; when the script runs it replaces the fallback with the view. The notebook layer puts it in the
text/html output of a %%tinygrad cell (lazynb.notebook.html); `page(doc)` makes a whole HTML file of it.

The bundle goes into every element rather than once per notebook: Colab shows each output in its own frame, a
reloaded or converted notebook has no "first output" to lean on, and 55 KB is small next to a trace. Where
several outputs share a page the script runs once (it checks `window.lazynbView`) and each output only mounts.

VIZ=1 (`VIZ=1 python script.py`): importing lazynb starts `record_run()`, which records the whole run on the trace bus
and, at exit, writes one self-contained HTML file (`page`) to $LAZYNB_VIZ_DIR (default: <tmp>/lazynb-viz), prints its
path, and opens it in a browser when there is one (not in CI, never waiting for it). VIZ_BROWSER=0 only writes.
"""
from __future__ import annotations
import atexit, hashlib, html, json, os, sys, tempfile, time, webbrowser
from pathlib import Path
from lazynb.trace import Recorder, subscribe, unsubscribe
from lazynb.tracedoc import Trace

BUNDLE = Path(__file__).parent / "static" / "lazynb-view.js"
_bundle: tuple[str, str] | None = None

def bundle() -> tuple[str, str]:
  """(script text, short sha256) of the standalone view."""
  global _bundle
  if _bundle is None:
    try: text = BUNDLE.read_text(encoding="utf-8")
    except OSError as e:
      raise FileNotFoundError(f"lazynb: the trace view script {BUNDLE} is missing ({e.strerror}); rebuild it with "
                              "`cd labextension && npm install && npm run build:prod`") from None
    _bundle = (text, hashlib.sha256(text.encode()).hexdigest()[:16])
  return _bundle

def _json_for_script(doc: dict) -> str:
  """JSON that cannot end its <script> element: every '<' is written as \\u003c (and & and > for good measure)."""
  return json.dumps(doc).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")

def _script_text(js: str) -> str:
  """Bundle text that cannot end its <script> element early."""
  return js.replace("</script", "<\\/script").replace("<!--", "<\\!--")

def embed(doc: dict, fallback: str = "") -> str:
  """One element: `fallback` (HTML shown without JavaScript), the trace JSON, and the script that replaces the
  fallback with the interactive view."""
  js, build = bundle()
  host = "lazynb-view-" + hashlib.sha256(f"{time.perf_counter_ns()} {id(doc)} {os.getpid()}".encode()).hexdigest()[:12]
  loader = (f'(function(){{var w=window;if(!w.lazynbView||w.lazynbView.build!=="{build}"){{\n{_script_text(js)}\n'
            f'w.lazynbView.build="{build}";}}w.lazynbView.mount(document.getElementById("{host}"));}})();')
  return (f'<div class="lazynb-view" id="{host}"><div class="lazynb-static">{fallback}</div>'
          f'<script type="application/json" class="lazynb-trace">{_json_for_script(doc)}</script>'
          f'<script type="text/javascript">{loader}</script></div>')

def text_fallback(doc: dict) -> str:
  """A view without JavaScript for pages that have no HTML renderer at hand: the kernel list and each kernel's source."""
  kernels = [k for k in doc.get("kernels", []) if isinstance(k, dict)]
  rows = "".join(f'<details><summary><code>{html.escape(str(k.get("display_name") or k.get("name")))}</code> '
                 f'({html.escape(str(k.get("device")))}, {k.get("runs", 0)} runs)</summary>'
                 f'<pre>{html.escape(str(k.get("source", "")))}</pre></details>' for k in kernels)
  note = (doc.get("truncated") or {}).get("note")
  return (f'<p><b>lazynb trace</b>: {len(doc.get("schedule", []))} schedule items, {len(kernels)} kernels. '
          'This page draws the full view with JavaScript; without it, the kernels and their source:</p>'
          + (f'<p class="lazynb-truncated">{html.escape(note)}</p>' if note else "") + rows)

def page(doc: dict, title: str = "lazynb trace") -> str:
  """A whole self-contained HTML file: no server, no network."""
  return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
          '<meta name="viewport" content="width=device-width, initial-scale=1">'
          '<style>body{margin:12px;font-family:system-ui,sans-serif}.lazynb-view{--lazynb-view-height:calc(100vh - 60px)}</style>'
          f'</head><body><h1 style="font-size:16px;margin:0 0 8px">{html.escape(title)}</h1>'
          f'{embed(doc, text_fallback(doc))}</body></html>\n')

# ---- VIZ=1: the whole run of a script

def out_dir() -> Path:
  return Path(os.environ.get("LAZYNB_VIZ_DIR") or Path(tempfile.gettempdir()) / "lazynb-viz")

def write(doc: dict, name: str) -> Path:
  """Write page(doc) as <out_dir>/<name>-<time>.html. If that directory cannot be written, say why and use the temp
  directory instead; if that fails too, raise OSError with both reasons."""
  stem = f"{name}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.html"
  text = page(doc, f"lazynb trace: {name}")
  first = out_dir()
  tries = [first] + ([Path(tempfile.gettempdir())] if first != Path(tempfile.gettempdir()) else [])
  errors: list[str] = []
  for d in tries:
    try:
      d.mkdir(parents=True, exist_ok=True)
      path = d / stem
      path.write_text(text, encoding="utf-8")
      if errors: print(f"lazynb VIZ: could not write to {first} ({errors[0]}); wrote to {d} instead", file=sys.stderr)
      return path
    except OSError as e: errors.append(f"{type(e).__name__}: {e.strerror or e}")
  raise OSError("lazynb VIZ: could not write the trace file: " + "; ".join(f"{d}: {e}" for d, e in zip(tries, errors)))

def can_open_browser() -> bool:
  """A browser that opens without blocking: not in CI, not asked off, and on Linux only with a display (without one
  Python's webbrowser may pick a text browser that takes over the terminal)."""
  if os.environ.get("CI") or os.environ.get("VIZ_BROWSER", "1") == "0": return False
  if sys.platform.startswith("linux"): return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
  return sys.platform in ("darwin", "win32")

class RunRecorder:
  """Everything the compiler does from now until exit; `finish()` writes the file."""
  def __init__(self, name: str):
    self.name = name
    self.recorder = Recorder(rewrites=True)
    self.trace = Trace(self.recorder)
    self.done = False
    subscribe(self.recorder, rewrites=True, reference=True)
    self._prev_hook = sys.excepthook
    sys.excepthook = self._excepthook

  def _excepthook(self, tp, value, tb):
    self.trace.error = value
    self._prev_hook(tp, value, tb)

  def finish(self) -> Path | None:
    if self.done: return None
    self.done = True
    unsubscribe(self.recorder)
    self.trace.finish()
    try: path = write(self.trace.shown_json(), self.name)
    except OSError as e:
      print(str(e), file=sys.stderr)
      return None
    print(f"lazynb VIZ: the trace of this run is in {path}", file=sys.stderr)
    if can_open_browser():
      try: webbrowser.open(path.as_uri())
      except Exception as e:  # noqa: BLE001  (a browser that will not start must not fail the run)
        print(f"lazynb VIZ: could not open a browser ({e}); open the file above", file=sys.stderr)
    return path

_run: RunRecorder | None = None

def record_run(name: str | None = None) -> RunRecorder:
  """Start recording the whole run (once); the file is written at interpreter exit."""
  global _run
  if _run is None:
    script = Path(sys.argv[0]).stem if sys.argv and sys.argv[0] not in ("", "-c", "-m") else "python"
    _run = RunRecorder(name or script or "python")
    atexit.register(_run.finish)
  return _run
