"""Sliders for a %%tinygrad cell: DEBUG, NOOPT, BEAM and device. Moving one re-runs the cell's code under
the new setting and replaces the cell's trace output in place (an IPython display handle), so the saved
notebook keeps a normal, static output. Other cells are not re-run. Every text shown in an HTML widget (device names,
error messages) is escaped; dropdown labels are plain text to ipywidgets."""
from __future__ import annotations
import html, io, sys, time
from dataclasses import replace
from lazynb.device import Device
from lazynb.helpers import plural
from lazynb.notebook.magic import Settings, CellRun, TraceView, run_code
from lazynb.notebook.words import clip_words

def device_options() -> list[tuple[str, str]]:
  """(label, name) for every registered device; ones that cannot run here say why in the label."""
  out = []
  for name in sorted(Device._devices):
    ok, why = Device.available(name)
    out.append((name if ok else f"{name} (unavailable: {clip_words(why.splitlines()[0], 60)})", name))
  return out

def overwritten(text: str) -> str:
  """What a terminal shows of `text`: on each line, a carriage return starts it over (BEAM's progress line)."""
  return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))

class CellStdout(io.TextIOBase):
  """A %%tinygrad cell's printed output as a display a slider re-run can replace (a stream output, once printed, cannot be:
  the first run's print stayed above the re-run's). While entered it is sys.stdout; the display appears at the first
  write and follows the text as it grows (at most every 0.2 s, and at the end), so it stays a normal, saved output."""
  def __init__(self, display=None):
    if display is None: from IPython.display import display
    self.display, self.text, self.handle, self.shown_at, self.saved = display, "", None, 0.0, sys.stdout
  def writable(self): return True
  @property
  def encoding(self): return getattr(self.saved, "encoding", None) or "utf-8"
  def fileno(self): return self.saved.fileno()   # (C-level output goes to the stream it always went to)
  def write(self, s: str) -> int:
    self.text += s
    if time.monotonic() - self.shown_at >= 0.2: self.show()
    return len(s)
  def show(self):
    self.shown_at, data = time.monotonic(), {"text/plain": overwritten(self.text)}
    if self.handle is not None: self.handle.update(data, raw=True)
    elif self.text: self.handle = self.display(data, raw=True, display_id=True)
  def __enter__(self):
    self.text, self.saved = "", sys.stdout
    sys.stdout = self
    return self
  def __exit__(self, *exc):
    sys.stdout = self.saved
    self.show()

class TraceControls:
  def __init__(self, code: str, namespace: dict, settings: Settings, first: CellRun | None = None, stdout: CellStdout | None = None):
    """`stdout`: where the first run's printed output went; a re-run's replaces it there (else it goes to the log below)."""
    import ipywidgets as w
    self.code, self.namespace, self.settings, self.stdout = code, namespace, settings, stdout
    self.last = first or run_code(code, namespace, settings)
    self.runs = 1
    cur = settings.device or Device.DEFAULT
    opts = device_options()
    if cur not in [n for _, n in opts]: opts.append((cur, cur))
    self.debug = w.IntSlider(value=settings.debug or 0, min=0, max=7, description="DEBUG", continuous_update=False)
    self.noopt = w.Checkbox(value=bool(settings.noopt), description="NOOPT")
    self.beam = w.IntSlider(value=settings.beam or 0, min=0, max=8, description="BEAM", continuous_update=False)
    self.device = w.Dropdown(options=opts, value=cur, description="device")
    self.status = w.HTML(value=self._status())
    self.log = w.Output(layout={"max_height": "300px", "overflow": "auto"})
    for c in (self.debug, self.noopt, self.beam, self.device): c.observe(self._changed, names="value")
    self.box = w.VBox([w.HBox([self.debug, self.noopt]), w.HBox([self.beam, self.device]), self.status, self.log])
    self.handle = None
    self.view: TraceView | None = None

  def _status(self) -> str:
    doc = self.last.trace.to_json()
    err = f" — <b>error</b>: {html.escape(str(self.last.error))}" if self.last.error is not None else ""
    return (f"<span style='font-family:monospace'>run {self.runs}: {plural(len(doc['kernels']), 'kernel')}, "
            f"{doc['timing']['run_s'] * 1e3:.2f} ms{err}</span>")

  def current(self) -> Settings:
    return replace(self.settings, debug=self.debug.value, noopt=self.noopt.value, beam=self.beam.value, device=self.device.value)

  def rerun(self) -> CellRun:
    """Run the cell's code again with the controls' values; update the output in place."""
    s = self.current()
    ok, why = Device.available(s.device or Device.DEFAULT)
    if not ok:
      self.status.value = f"<b>{html.escape(str(s.device))} cannot run here</b>: {html.escape(str(why))}"  # user text: escaped
      return self.last
    with self.log:
      self.log.clear_output()
      if self.stdout is not None and self.stdout.handle is not None:
        with self.stdout: self.last = run_code(self.code, self.namespace, s)
      else: self.last = run_code(self.code, self.namespace, s)
    self.runs += 1
    self.status.value = self._status()
    if self.handle is not None: self.handle.update(TraceView(self.last.trace, s.show, self.view.script if self.view else None))  # the script stays where it was
    return self.last

  def _changed(self, change): self.rerun()

  def show(self):
    from IPython.display import display
    display(self.box)
    self.view = TraceView(self.last.trace, self.settings.show)
    self.handle = display(self.view, display_id=True)
    return self
