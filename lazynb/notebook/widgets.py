"""Sliders for a %%tinygrad cell: DEBUG, NOOPT, BEAM and device. Moving one re-runs the cell's code under
the new setting and replaces the cell's trace output in place (an IPython display handle), so the saved
notebook keeps a normal, static output. Other cells are not re-run. Every text shown in an HTML widget (device names,
error messages) is escaped; dropdown labels are plain text to ipywidgets."""
from __future__ import annotations
import html
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

class TraceControls:
  def __init__(self, code: str, namespace: dict, settings: Settings, first: CellRun | None = None):
    import ipywidgets as w
    self.code, self.namespace, self.settings = code, namespace, settings
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
      self.last = run_code(self.code, self.namespace, s)
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
