"""The %%tinygrad magic: argument parsing, running code under settings, the widget controls, and real
notebooks executed with nbclient (outputs checked as saved)."""
import json, pytest
from lazynb import Tensor, Device
from lazynb.notebook import viz
from lazynb.notebook import magic
from lazynb.notebook.magic import parse_args, run_code, effective, Settings, UsageError, VIEWS

def test_parse_args_values():
  s = parse_args("--debug 3 --noopt --beam 2 --device cpu --show kernels,graph --no-controls")
  assert (s.debug, s.noopt, s.beam, s.device, s.show, s.controls) == (3, True, 2, "CPU", ("kernels", "graph"), False)
  assert parse_args("").astuple() == (None,) * 6

@pytest.mark.parametrize("line", ["--debug 9", "--beam -1", "--device NOPE", "--show kernelz", "--frobnicate", "--debug x"])
def test_parse_args_usage_errors(line):
  with pytest.raises(UsageError) as e: parse_args(line)
  assert "usage" in str(e.value).lower() or "unknown" in str(e.value).lower()

def test_effective_merges_session_defaults(monkeypatch):
  monkeypatch.setattr(magic, "SESSION", Settings(debug=2, device="PYTHON"))
  s = effective(parse_args("--noopt"))
  assert (s.debug, s.noopt, s.device, s.show) == (2, True, "PYTHON", VIEWS)

def test_run_code_records_kernels_and_restores_settings():
  from lazynb.helpers import NOOPT
  ns = {"Tensor": Tensor}
  before = Device.DEFAULT
  run = run_code("a = Tensor([1, 2, 3, 4])\nb = (a + 3 + 4).realize()", ns, effective(parse_args("--noopt")))
  assert run.error is None and ns["b"].tolist() == [8, 9, 10, 11]
  doc = run.trace.to_json()
  assert len(doc["kernels"]) == 1 and "for (" in doc["kernels"][0]["source"] and "+7)" in doc["kernels"][0]["source"]
  assert [s["kind"] for s in doc["schedule"]] == ["copy", "kernel"]
  assert NOOPT.value == 0 and Device.DEFAULT == before

def test_the_trace_names_the_device_the_cell_ran_on():
  """The device menu sets the default device only while the cell runs: the trace (its header) names that device,
  not the one in force when the document is made."""
  before = Device.DEFAULT
  run = run_code("t = (Tensor([1.0, 2.0]) + 1).realize()", {"Tensor": Tensor}, effective(Settings(device="PYTHON")))
  assert run.error is None and Device.DEFAULT == before != "PYTHON"
  doc = run.trace.to_json()
  assert doc["settings"]["device"] == "PYTHON" and {k["device"] for k in doc["kernels"]} == {"PYTHON"}

@pytest.mark.parametrize("code, want", [
  ("Device.DEFAULT = 'PYTHON'\nt = (Tensor([1.0, 2.0]) + 1).realize()", "PYTHON"),
  ("t = (Tensor([1.0, 2.0], device='PYTHON') + 1).realize()", "PYTHON"),
  ("t = (Tensor([1.0, 2.0]) + 1).realize()\nu = (Tensor([3.0], device='PYTHON') * 2).realize()", "{default},PYTHON")])
def test_the_header_names_the_device_the_cells_own_code_picked(code, want):
  """The cell's code, not the menu, picks the device: the header (settings.device) names every device a kernel ran on,
  not the default in force when the recording started."""
  before = Device.DEFAULT
  assert before != "PYTHON"
  try: run = run_code(code, {"Tensor": Tensor, "Device": Device}, effective(Settings()))
  finally: Device.DEFAULT = before
  assert run.error is None
  doc = run.trace.to_json()
  assert doc["settings"]["device"] == want.format(default=before)
  assert set(doc["settings"]["device"].split(",")) == {k["device"] for k in doc["kernels"]}

def test_run_code_keeps_trace_up_to_an_error():
  ns = {"Tensor": Tensor}
  run = run_code("x = (Tensor([1.0, 2.0]) * 2).realize()\nraise ValueError('boom')", ns, effective(Settings()))
  assert isinstance(run.error, ValueError)
  doc = run.trace.to_json()
  assert doc["error"]["type"] == "ValueError" and "boom" in doc["error"]["message"]
  assert len(doc["kernels"]) == 1  # the kernel that ran before the failure is still there

def test_run_code_unavailable_device_explains():
  Device._devices["BROKEN"] = "lazynb.no_such_module:Nope"
  try:
    run = run_code("y = 1", {}, effective(Settings(device="BROKEN")))
    assert run.error is not None and "not available" in str(run.error)
  finally: del Device._devices["BROKEN"]

def test_controls_rerun_changes_opts():
  pytest.importorskip("ipywidgets")
  from lazynb.notebook.widgets import TraceControls
  ns = {"Tensor": Tensor}
  code = "a = Tensor.rand(64, 64).realize()\nc = (a + 1).realize()"
  ctl = TraceControls(code, ns, effective(parse_args("--noopt")))
  assert ctl.last.trace.to_json()["kernels"][0]["opts"] == []
  ctl.noopt.value = False  # the observer re-runs the code
  assert ctl.runs == 2
  assert ctl.last.trace.to_json()["kernels"][0]["opts"] != []
  ctl.debug.value = 2
  assert ctl.runs == 3 and ctl.last.settings.debug == 2

@pytest.mark.slow
def test_controls_beam_slider_changes_recorded_opts(tmp_path, monkeypatch):
  pytest.importorskip("ipywidgets")
  monkeypatch.setenv("BEAM_PROGRESS", "0")
  from lazynb.notebook.widgets import TraceControls
  ns = {"Tensor": Tensor}
  code = "a = Tensor.rand(32, 32).realize()\nc = (a @ a).realize()"
  ctl = TraceControls(code, ns, effective(parse_args("--noopt")))
  assert ctl.last.trace.to_json()["kernels"][0]["opts"] == []
  ctl.noopt.value = False
  default_opts = ctl.last.trace.to_json()["kernels"][0]["opts"]
  ctl.beam.value = 1
  assert ctl.last.settings.beam == 1
  beam_opts = ctl.last.trace.to_json()["kernels"][0]["opts"]
  assert beam_opts and ctl.runs == 3
  assert ctl.last.trace.to_json()["kernels"][0]["name"]  # the BEAM-chosen kernel ran and was recorded
  assert any(e.kind == "beam" for e in ctl.last.trace.events) or beam_opts != default_opts

def _run_notebook(cells, tmp_path):
  nbformat = pytest.importorskip("nbformat")
  nbclient = pytest.importorskip("nbclient")
  nb = nbformat.v4.new_notebook()
  nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
  client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True)
  client.execute()
  return nb

@pytest.mark.integration
def test_magic_in_a_real_notebook(tmp_path):
  nb = _run_notebook([
    "%load_ext lazynb",
    "%%tinygrad --no-controls\na = Tensor.rand(16, 16).realize()\nb = (a + a).relu().sum().realize()",
    "%%tinygrad --debug 9\nprint('should not run')",
    "%%tinygrad --no-controls\nx = (Tensor([1.0, 2.0]) * 3).realize()\nraise RuntimeError('cell failed')",
    "%tinygrad --noopt\n",
    "%%tinygrad --no-controls --show kernels\nt = Tensor([1, 2, 3, 4])\nr = (t + 7).realize()",
  ], tmp_path)
  outs = [c.outputs for c in nb.cells]
  bundle = next(o for o in outs[1] if o.output_type == "display_data")
  mime = "application/vnd.lazynb.trace+json"
  assert {mime, "text/html", "text/plain"} <= set(bundle.data)
  doc = viz.doc_of(bundle.data)
  assert doc["version"] == 1 and len(doc["kernels"]) == 1
  assert len([s for s in doc["schedule"] if s["kind"] == "kernel"]) == len(doc["kernels"])
  k = doc["kernels"][0]
  assert {"name", "device", "language", "source", "global_size", "local_size", "opts", "time_s"} <= set(k)
  assert "void " in k["source"] and k["name"] in bundle.data["text/html"]
  # usage error: a message, and the cell did not run
  text = "".join(o.get("text", "") for o in outs[2])
  assert "UsageError" in text and "should not run" not in text
  # an exception: the normal traceback plus the trace up to the failure
  assert any(o.output_type == "error" and o.ename == "RuntimeError" for o in outs[3])
  failed = viz.doc_of(next(o for o in outs[3] if o.output_type == "display_data").data)
  assert failed["error"]["type"] == "RuntimeError" and len(failed["kernels"]) == 1
  # session defaults from %tinygrad apply to the next cell
  last = viz.doc_of(next(o for o in outs[5] if o.output_type == "display_data").data)
  assert "for (" in last["kernels"][0]["source"] and last["settings"]["NOOPT"] == 1

SMALL_CELL = "%%tinygrad\na = Tensor.rand(16, 16)\nb = (a @ a).relu().sum(axis=1)\nc = (b - b.max()).exp().realize()"

@pytest.mark.integration
def test_small_cell_outputs_are_small(tmp_path):
  """Issue 32: a small %%tinygrad cell (three kernels, all views, the sliders on) saves at most 200 KB of outputs; the
  trace document is in each output once (the MIME entry is its stub), and the view's script (25 KB packed) is in one output only."""
  nb = _run_notebook(["%load_ext lazynb", SMALL_CELL, SMALL_CELL, SMALL_CELL.replace("16, 16", "8, 8")], tmp_path)
  mime = "application/vnd.lazynb.trace+json"
  scripts = 0
  for cell in nb.cells[1:]:
    assert len(json.dumps(cell.outputs)) <= 200_000, [len(json.dumps(o)) for o in cell.outputs]
    data = [o.data for o in cell.outputs if o.output_type == "display_data" and mime in o.data]
    assert len(data) == 1
    doc, html = viz.doc_of(data[0]), data[0]["text/html"]
    assert len(doc["kernels"]) >= 3 and doc["graphs"] and doc["rewrites"] and doc["views"]  # as rich as the document always was
    assert data[0][mime]["payload"] == "text/html" and "graphs" not in data[0][mime] and "uops" not in json.dumps(data[0][mime])
    assert html.count('class="lazynb-trace"') == 1 and '"graphs"' not in html and '"nodes"' not in html  # packed, once
    assert doc["kernels"][0]["name"] in html  # the view without JavaScript lists the kernels
    scripts += html.count("data-lazynb-script=")
  assert scripts == 1

HOSTILE = "<img src=x onerror=alert(1)>"

def test_magic_escapes_user_text_in_every_html_output(monkeypatch):
  """A hostile --device value and exception text go through the %%tinygrad magic with its controls: every HTML string
  it produces (the trace view and the ipywidgets status line, also after a slider re-runs the cell) shows them as text."""
  pytest.importorskip("ipywidgets")
  from IPython.core.interactiveshell import InteractiveShell
  import IPython.display, ipywidgets
  shown = []
  monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: shown.extend(objs))
  ip = InteractiveShell.instance()
  ip.run_line_magic("load_ext", "lazynb")
  ip.run_cell_magic("tinygrad", f'--device "CUDA:{HOSTILE}"', f"raise ValueError({HOSTILE!r})")
  ip.run_cell_magic("tinygrad", "", f"x = (Tensor([1.0]) + 1).realize()\nraise ValueError({HOSTILE!r})")
  boxes = [o for o in shown if isinstance(o, ipywidgets.VBox)]
  assert len(boxes) == 2
  for box in boxes: box.children[0].children[0].value = 1  # the DEBUG slider: re-runs the cell
  def html_of(w) -> list[str]:
    if isinstance(w, ipywidgets.HTML): return [w.value]
    return [h for c in getattr(w, "children", ()) for h in html_of(c)]
  pages = [h for b in boxes for h in html_of(b)] + [o._repr_mimebundle_()["text/html"] for o in shown if isinstance(o, magic.TraceView)]
  assert any("CUDA:&lt;img" in p for p in pages) and any("&lt;img src=x" in p for p in pages[2:])
  for p in pages: assert "<img src=x" not in p, p

def test_slider_rerun_keeps_the_script_where_it_was():
  """A slider re-run replaces the output in place: the new output carries the view's script exactly when the one it
  replaces did (else a notebook whose first output is re-run by a slider would lose its only script)."""
  pytest.importorskip("ipywidgets")
  from lazynb.notebook.widgets import TraceControls
  for had in (True, False):
    tc = TraceControls("x = (Tensor([1.0, 2.0]) + 1).realize()", {"Tensor": Tensor}, effective(Settings(controls=True)))
    tc.view = magic.TraceView(tc.last.trace, script=had)
    updated = []
    tc.handle = type("Handle", (), {"update": lambda self, obj: updated.append(obj)})()
    tc.debug.value = 1   # re-runs the cell
    assert len(updated) == 1 and updated[0].script is had
    assert ("data-lazynb-script=" in updated[0]._repr_mimebundle_()["text/html"]) is had

class _Handle:
  def __init__(self, shown, data): self.shown, self.data = shown, data
  def update(self, data, raw=False): self.data = data

def test_a_slider_rerun_replaces_the_cells_printed_output():
  """Issue 32: the first run's print goes to a display (not a stream, which cannot be replaced); a slider re-run's print
  replaces its text, so the cell shows the print once, the current run's. A carriage return starts a line over (BEAM's
  progress line); a cell that printed nothing first leaves its re-runs' prints to the log below the controls."""
  pytest.importorskip("ipywidgets")
  import sys
  from lazynb.notebook.widgets import TraceControls, CellStdout, overwritten
  shown: list = []
  def fake_display(data, raw=False, display_id=False):
    assert raw and display_id
    shown.append(_Handle(shown, data))
    return shown[-1]
  code = "from lazynb.helpers import NOOPT\nprint('NOOPT is', NOOPT.value)\nx = (Tensor([1.0, 2.0]) + 1).realize()"
  ns = {"Tensor": Tensor}
  s = effective(Settings(controls=True))
  before = sys.stdout
  with CellStdout(fake_display) as out: first = run_code(code, ns, s)
  assert sys.stdout is before and len(shown) == 1 and shown[0].data == {"text/plain": "NOOPT is 0\n"}
  tc = TraceControls(code, ns, s, first, out)
  tc.noopt.value = True   # re-runs the cell
  assert tc.runs == 2 and len(shown) == 1 and shown[0].data == {"text/plain": "NOOPT is 1\n"} and sys.stdout is before
  assert overwritten("BEAM 1: round 1\rBEAM 1: round 2 ...\ndone\n") == "BEAM 1: round 2 ...\ndone\n"
  quiet = CellStdout(fake_display)
  with quiet: run_code("y = 1", ns, s)
  assert quiet.handle is None and len(shown) == 1   # nothing printed: no empty output
