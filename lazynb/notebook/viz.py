"""The interactive trace view outside JupyterLab, and VIZ=1.

The view is the JupyterLab renderer's own code (labextension/src/traceview.ts and the views it uses) bundled by
labextension/webpack.standalone.js into one script, lazynb/static/lazynb-view.js (about 55 KB, no JupyterLab code).
`embed(doc, fallback)` gives one HTML element that holds a fallback for pages without JavaScript, the trace document
as JSON and that script; when the script runs it replaces the fallback with the view. The notebook layer puts it in the
text/html output of a %%tinygrad cell (lazynb.notebook.html); `page(doc)` makes a whole HTML file of it.

In a notebook output the trace goes in once, compressed (`pack`: gzip, then base64; a small cell's 500 KB of JSON is
about 70 KB), and the output's own application/vnd.lazynb.trace+json entry holds only `stub(doc)`: the kernel list
and timings the session panel reads, and a pointer saying the document is in the text/html (the JupyterLab renderer
reads it from there). The script (packed the same way: about 25 KB) goes with the first output of a kernel session only (`lazynb.notebook.html.script_once`): later
outputs' loaders queue their element until the script has run, so a page shows every output once any one of them
carries the script (Colab, where each output has a frame of its own, gets it with every output). `doc_of(data)` reads
the document back from an output's data, whichever form it has.

VIZ=1 (`VIZ=1 python script.py`): importing lazynb starts `record_run()`, which records the whole run on the trace bus
and, at exit, writes one self-contained HTML file (`page`) to $LAZYNB_VIZ_DIR (default: <tmp>/lazynb-viz), prints its
path, and opens it in a browser when there is one (not in CI, never waiting for it). VIZ_BROWSER=0 only writes.
"""
from __future__ import annotations
import atexit, base64, gzip, hashlib, html, json, os, re, sys, tempfile, time, webbrowser
from pathlib import Path
from lazynb.helpers import plural
from lazynb.trace import Recorder, subscribe, unsubscribe
from lazynb.notebook.tracedoc import Trace, MIME

BUNDLE = Path(__file__).parent.parent / "static" / "lazynb-view.js"
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

PACKED = "gzip+base64"

def pack(doc: dict) -> str:
  """The document as base64 text of its gzipped compact JSON (mtime 0: the same document gives the same text)."""
  return base64.b64encode(gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), 9, mtime=0)).decode()

def unpack(text: str) -> dict:
  return json.loads(gzip.decompress(base64.b64decode(text)))

_STUB_KERNEL = ("id", "name", "display_name", "name_parts", "device", "language", "time_s", "runs", "compile_s", "gflops", "gbs")

def stub(doc: dict) -> dict:
  """What an output's trace MIME entry holds when the document itself is in its text/html: a pointer to it, and the
  few fields the session panel lists (kernel names and times, the block's timing and error)."""
  return {"version": doc.get("version"), "payload": "text/html", "settings": doc.get("settings"), "timing": doc.get("timing"),
          "error": doc.get("error"), "show": doc.get("show"),
          "kernels": [{f: k.get(f) for f in _STUB_KERNEL} for k in doc.get("kernels", []) if isinstance(k, dict)]}

_PAYLOAD_RE = re.compile(r'<script type="[^"]*" class="lazynb-trace"(?: data-encoding="([^"]*)")?>(.*?)</script>', re.S)

def doc_of(data: dict) -> dict | None:
  """The trace document of an output's MIME data (a saved notebook's output "data", or a _repr_mimebundle_): the MIME
  entry itself if it is the document, else the one in the text/html. None if the output has no trace."""
  d = data.get(MIME)
  if isinstance(d, dict) and d.get("payload") != "text/html": return d
  page = data.get("text/html")
  page = "".join(page) if isinstance(page, list) else page
  m = _PAYLOAD_RE.search(page) if isinstance(page, str) else None
  if m is None: return None
  return unpack(m.group(2)) if m.group(1) == PACKED else json.loads(m.group(2))

_packed_script: str | None = None

def packed_script() -> str:
  """The view's script, gzipped, in base64 (see `pack`)."""
  global _packed_script
  if _packed_script is None: _packed_script = base64.b64encode(gzip.compress(bundle()[0].encode(), 9, mtime=0)).decode()
  return _packed_script

def embed(doc: dict, fallback: str = "", script: bool = True, packed: bool = False) -> str:
  """One element: `fallback` (HTML shown without JavaScript), the trace document, and the loader that replaces the
  fallback with the interactive view. `script`: the loader carries the view's script; else it waits for one that
  another element on the page carries. `packed`: the document as `pack` text, else as JSON."""
  js, build = bundle()
  host = "lazynb-view-" + hashlib.sha256(f"{time.perf_counter_ns()} {id(doc)} {os.getpid()}".encode()).hexdigest()[:12]
  # every loader mounts its element if a script of this build has run, else queues it (the script mounts the queue)
  mount = (f'var w=window,h=document.getElementById("{host}");if(w.lazynbView&&w.lazynbView.build==="{build}"){{w.lazynbView.mount(h);return;}}'
           '(w.lazynbQueue=w.lazynbQueue||[]).push(h);')
  if not script: loader, mark = f"(function(){{{mount}}})();", ""
  elif not packed:
    loader = (f'(function(){{var w=window;if(!w.lazynbView||w.lazynbView.build!=="{build}"){{\n{_script_text(js)}\n'
              f'w.lazynbView.build="{build}";}}w.lazynbView.mount(document.getElementById("{host}"));}})();')
    mark = f' data-lazynb-script="{build}"'
  else:  # the script packed too (70 KB -> 25 KB): unpacked, then run as an inline script, as the plain one would be
    loader = (f'(function(){{{mount}if(w.lazynbLoading==="{build}")return;w.lazynbLoading="{build}";'
              f'var b=atob("{packed_script()}"),u=new Uint8Array(b.length);for(var i=0;i<b.length;i++)u[i]=b.charCodeAt(i);'
              'new Response(new Blob([u]).stream().pipeThrough(new DecompressionStream("gzip"))).text().then(function(t){'
              f'var s=document.createElement("script");s.textContent=t+\'\\nwindow.lazynbView.build="{build}";\';document.head.appendChild(s);}});}})();')
    mark = f' data-lazynb-script="{build}"'
  data = (f'<script type="application/octet-stream" class="lazynb-trace" data-encoding="{PACKED}">{pack(doc)}</script>' if packed else
          f'<script type="application/json" class="lazynb-trace">{_json_for_script(doc)}</script>')
  return (f'<div class="lazynb-view" id="{host}"><div class="lazynb-static">{fallback}</div>{data}'
          f'<script type="text/javascript"{mark}>{loader}</script></div>')

FALLBACK_SOURCE_BYTES = 40_000  # kernel source text in one output's no-JavaScript view

def text_fallback(doc: dict, source_bytes: int = FALLBACK_SOURCE_BYTES) -> str:
  """The view without JavaScript (GitHub, an untrusted notebook, a page without the script): a summary line, the schedule,
  and each kernel's source (up to `source_bytes` in all, each cut at a line end), headed by its device, runs and the
  values of its symbolic sizes. Every string of the document is escaped here."""
  esc = html.escape
  kernels = [k for k in doc.get("kernels", []) if isinstance(k, dict)]
  names = {k.get("id"): str(k.get("name")) for k in kernels}
  sched = [s for s in doc.get("schedule", []) if isinstance(s, dict)]
  rows = "".join(f'<tr><td>{esc(str(s.get("index")))}</td><td>{esc(str(s.get("kind")))}</td>'
                 f'<td><code>{esc(names.get(s.get("kernel"), "-"))}</code></td><td>{esc(str(s.get("reason") or "-"))}</td></tr>'
                 for s in sched[:200])
  table = ('<table><tr><th>#</th><th>kind</th><th>kernel</th><th>reason</th></tr>' + rows + "</table>" if rows else "")
  if len(sched) > 200: table += f"<p>(showing 200 of {len(sched)} schedule items)</p>"
  srcs, left = [], source_bytes
  for k in kernels:
    src = str(k.get("source") or "")
    cut = src if len(src) <= left else src[:max(0, src.rfind("\n", 0, left))] + f"\n... ({len(src) - max(0, src.rfind(chr(10), 0, left))} more characters)"
    left -= min(len(src), left)
    vals = k.get("var_vals")
    vals = vals if isinstance(vals, dict) else {}
    sizes = "".join(f", {esc(str(n))}={esc(str(vals.get(n, '?')))}" for n in k.get("vars") or [])  # a symbolic size's value in its last run
    srcs.append(f'<details><summary><code>{esc(names[k.get("id")])}</code> ({esc(str(k.get("device")))}, {plural(k.get("runs", 0), "run")}{sizes})</summary>'
                + (f"<pre>{esc(cut)}</pre>" if left > 0 or cut.strip() else "") + "</details>")
  note = (doc.get("truncated") or {}).get("note")
  err = doc.get("error")
  t = doc.get("timing") or {}
  run = f", {t['run_s'] * 1e3:.3f} ms running" if isinstance(t.get("run_s"), (int, float)) else ""
  return (f'<p><b>lazynb trace</b>: {plural(len(sched), "schedule item")}, {plural(len(kernels), "kernel")}{run}. '
          'The interactive views (graphs, ShapeTracker, rewrites) need JavaScript and the lazynb script, which the first '
          'lazynb output of the notebook carries, or the lazynb JupyterLab extension. The schedule and each kernel\'s source:</p>'
          + (f'<p class="lazynb-error"><b>{esc(str(err.get("type")))}</b>: {esc(str(err.get("message")))}</p>' if isinstance(err, dict) else "")
          + (f'<p class="lazynb-truncated">{esc(note)}</p>' if note else "") + table + "".join(srcs))

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
