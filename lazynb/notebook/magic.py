"""The %%tinygrad cell magic and the %tinygrad line magic.

    %load_ext lazynb
    %tinygrad --debug 2 --device CPU        # session defaults for later cells (no args: show them)
    %%tinygrad --noopt --show kernels,graph
    a = Tensor.rand(4, 4)
    (a @ a).realize()

The cell runs in the notebook's namespace under the chosen settings while a trace recorder listens;
then one output shows what the compiler did (see lazynb.notebook.tracedoc for the document, lazynb.notebook.html
for the output, labextension/src for the view that draws it). With controls on (the default), sliders for DEBUG/NOOPT/BEAM and a device menu re-run
the cell's code and refresh that output in place.
"""
from __future__ import annotations
import argparse, importlib, shlex
from typing import TYPE_CHECKING
from dataclasses import dataclass, field
from lazynb.helpers import Context, unwrap
from lazynb.device import Device
if TYPE_CHECKING: from lazynb.notebook.tracedoc import Trace

VIEWS = ("schedule", "graph", "shapetracker", "kernels", "timing", "rewrites")

@dataclass
class Settings:
  debug: int | None = None
  noopt: bool | None = None
  beam: int | None = None
  device: str | None = None
  show: tuple[str, ...] | None = None
  controls: bool | None = None
  def merged(self, other: Settings) -> Settings:
    """other's values where set, else ours."""
    return Settings(*[o if o is not None else s for s, o in zip(self.astuple(), other.astuple())])
  def astuple(self): return (self.debug, self.noopt, self.beam, self.device, self.show, self.controls)

SESSION = Settings()  # defaults set with %tinygrad; the JupyterLab panel sets them the same way

class UsageError(ValueError): pass

class _Parser(argparse.ArgumentParser):
  def error(self, message): raise UsageError(f"{message}\n{self.format_usage()}")

def make_parser(prog: str) -> _Parser:
  p = _Parser(prog=prog, add_help=False, description="run a cell and show what the lazynb compiler did")
  p.add_argument("--debug", type=int, choices=range(0, 8), metavar="N", help="DEBUG level 0-7 for printed output")
  p.add_argument("--noopt", action="store_true", default=None, help="no kernel optimizations")
  p.add_argument("--opt", dest="noopt", action="store_false", help="kernel optimizations on (undo --noopt)")
  p.add_argument("--beam", type=int, choices=range(0, 9), metavar="N", help="BEAM search width 0-8")
  p.add_argument("--device", type=str, help="device to run on, e.g. CPU, LLVM, PYTHON, CL, CUDA")
  p.add_argument("--show", type=str, help=f"comma-separated views: {','.join(VIEWS)}")
  p.add_argument("--no-controls", dest="controls", action="store_false", default=None, help="no sliders")
  p.add_argument("--controls", dest="controls", action="store_true", help="show sliders")
  return p

def parse_args(line: str, prog: str = "%%tinygrad") -> Settings:
  try: ns = make_parser(prog).parse_args(shlex.split(line))
  except ValueError as e:
    if isinstance(e, UsageError): raise
    raise UsageError(str(e)) from None
  show = None
  if ns.show is not None:
    show = tuple(v.strip() for v in ns.show.split(",") if v.strip())
    bad = [v for v in show if v not in VIEWS]
    if bad: raise UsageError(f"unknown view(s) {bad}; choose from {', '.join(VIEWS)}")
  device = None
  if ns.device is not None:
    try: device = Device.canonicalize(ns.device)
    except ValueError as e: raise UsageError(str(e)) from None
  return Settings(ns.debug, ns.noopt, ns.beam, device, show, ns.controls)

def effective(cell: Settings) -> Settings:
  base = Settings(0, False, 0, None, VIEWS, True)
  return base.merged(SESSION).merged(cell)

@dataclass
class CellRun:
  """One execution of a cell's code under some settings, and the trace it produced."""
  trace: Trace
  error: BaseException | None = None
  settings: Settings = field(default_factory=Settings)

def run_code(code: str, namespace: dict, s: Settings, runner=None) -> CellRun:
  """Run `code` under the settings with a recorder listening. `runner(code)` executes it (IPython's
  run_cell in a notebook, exec otherwise) and returns an exception or None."""
  from lazynb.trace import capture
  old_default = Device._default
  err: BaseException | None = None
  tr = None
  try:
    if s.device is not None:
      ok, why = Device.available(s.device)
      if not ok: raise RuntimeError(f"device {s.device} is not available here: {why}")
      Device.DEFAULT = s.device
    with Context(DEBUG=int(s.debug or 0), NOOPT=int(bool(s.noopt)), BEAM=int(s.beam or 0)):
      try:
        with capture(rewrites="rewrites" in (s.show or VIEWS)) as tr:
          if runner is not None:
            if (e := runner(code)) is not None: raise e
          else: exec(compile(code, "<cell>", "exec"), namespace)
      except Exception as e:  # the trace keeps what happened up to the failure
        err = e
  except RuntimeError as e:
    err = e
  finally: Device._default = old_default
  if tr is None:
    from lazynb.trace import Recorder
    from lazynb.notebook.tracedoc import Trace
    tr = Trace(Recorder())
    tr.error = err
  return CellRun(tr, err, s)

# optional packages of the [notebook] extra that a %%tinygrad cell uses: (import name, pip name, what is missing without it).
# (no Graphviz, no matplotlib: the view's own script lays out the graphs and draws the timing.)
EXTRAS = (("ipywidgets", "ipywidgets", "the DEBUG/NOOPT/BEAM/device sliders"),)
_has: dict[str, bool] = {}
_told = False

def has_module(name: str) -> bool:
  """Whether `name` imports; a missing optional package only turns a feature off (asked once per name)."""
  if name not in _has:
    try: importlib.import_module(name)
    except ImportError: _has[name] = False
    else: _has[name] = True
  return _has[name]

def missing_extras() -> list[tuple[str, str]]:
  """(pip name, what it adds) for each optional package of a %%tinygrad cell that is missing here."""
  return [(pip, what) for mod, pip, what in EXTRAS if not has_module(mod)]

def extras_message() -> str | None:
  """One paragraph: what %%tinygrad does without the missing packages, and the one command that adds them."""
  missing = missing_extras()
  if not missing: return None
  return ("lazynb: %%tinygrad shows the trace view without " + "; ".join(f"{what} ({pip})" for pip, what in missing) +
          f" here. To add them: pip install {' '.join(pip for pip, _ in missing)}  (or, in the lazynb checkout, pip install -e \".[notebook]\")"
          ", then restart the kernel.")

def tell_missing_once():
  """Print extras_message() the first time only: a missing package is said once per kernel, not under every cell."""
  global _told
  if _told: return
  _told = True
  if (msg := extras_message()) is not None: print(msg)

def load_ipython_extension(ip):
  from IPython.core.magic import Magics, magics_class, line_magic, cell_magic
  from IPython.display import display
  import lazynb
  from lazynb.notebook import html  # noqa: F401  registers the trace output (html.bundle)
  tell_missing_once()

  @magics_class
  class TinygradMagics(Magics):
    @line_magic
    def tinygrad(self, line: str):
      global SESSION
      if not line.strip():
        print(f"lazynb session defaults: {SESSION}")
        return
      try: SESSION = SESSION.merged(parse_args(line, "%tinygrad"))
      except UsageError as e:
        print(f"UsageError: {e}")
        return
      print(f"lazynb session defaults: {SESSION}")

    @cell_magic("tinygrad")
    def tinygrad_cell(self, line: str, cell: str):
      try: s = effective(parse_args(line))
      except UsageError as e:
        print(f"UsageError: {e}")  # a usage message; the cell is not run
        return
      shell = unwrap(self.shell)  # (a magic runs in a shell)
      def runner(code: str):
        res = shell.run_cell(code, store_history=False, silent=False)
        return res.error_in_exec if res.error_in_exec is not None else res.error_before_exec
      if s.controls and has_module("ipywidgets"):
        from lazynb.notebook.widgets import TraceControls, CellStdout
        with CellStdout() as out: run = run_code(cell, shell.user_ns, s, runner)   # (a re-run's print replaces it)
        TraceControls(cell, shell.user_ns, s, run, out).show()
      else:
        run = run_code(cell, shell.user_ns, s, runner)
        display(TraceView(run.trace, s.show))
      if run.error is not None and isinstance(run.error, RuntimeError) and "not available here" in str(run.error):
        print(f"lazynb: {run.error}")

  ip.register_magics(TinygradMagics)
  names = {"Tensor": lazynb.Tensor, "dtypes": lazynb.dtypes, "Device": lazynb.Device, "nn": lazynb.nn, "TinyJit": lazynb.TinyJit,
           "UOp": lazynb.UOp, "Ops": lazynb.Ops, "UPat": lazynb.UPat, "PatternMatcher": lazynb.PatternMatcher,
           "graph_rewrite": lazynb.graph_rewrite, "Context": lazynb.Context, "GlobalCounters": lazynb.GlobalCounters}
  for k, v in names.items(): ip.user_ns.setdefault(k, v)

class TraceView:
  """A trace with a chosen subset of views, displayed as one MIME bundle (lazynb.notebook.html.bundle). `script`: whether
  its text/html carries the view's script; None asks once, at the first display (the session's first output carries it)."""
  def __init__(self, trace, show=None, script: bool | None = None):
    self.trace, self.show, self.script = trace, tuple(show) if show else VIEWS, script
  def _repr_mimebundle_(self, include=None, exclude=None):
    from lazynb.notebook.html import bundle, script_once
    if self.script is None: self.script = script_once()
    return bundle(dict(self.trace.shown_json(), show=list(self.show)), self.trace.summary(), self.script, dict(self.trace.to_json(), show=list(self.show)))
