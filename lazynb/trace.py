"""The trace bus: every stage of the compiler reports what it produced here, as an Event.

Readers subscribe a callback. The DEBUG printer (lazynb.debug) is one reader, the notebook views are
another, and a test can be a third, so none of them parses printed text. Events carry live objects
(UOps, ProgramSpecs); readers turn them into whatever they show.

Each event kind and its data: docs/architecture.md, "The trace bus"."""
from __future__ import annotations
import contextlib, itertools, time
from dataclasses import dataclass, field
from typing import Any, Callable, cast
from lazynb.helpers import Nesting
from lazynb.uop import rewrite as _rewrite

@dataclass
class Event:
  kind: str
  data: dict
  t: float = field(default_factory=time.perf_counter)
  seq: int = field(default_factory=itertools.count().__next__)

_subscribers: list[Callable[[Event], None]] = []
# the notebook layer adds functions Trace -> {mimetype: data} here (core never imports it)
mime_renderers: list[Callable] = []
_wants_rewrites: list[tuple[Callable, Callable[[], bool]]] = []  # (reader, does it want passes now?)
_wants_reference: list[Callable] = []  # readers that show a replaced stage's result next to lazynb's own

def subscribe(fn: Callable[[Event], None], rewrites: bool | Callable[[], bool] = False, reference: bool = False) -> Callable[[Event], None]:
  """Call `fn(event)` for every event. rewrites=True: graph_rewrite also reports each pass; a function instead of True
  is asked before each pass (the DEBUG printer wants them only while DEBUG >= 4). reference=True: where a learner's
  function replaced a code stage, the pipeline also computes lazynb's own result, for the reader to compare (it costs
  a second codegen per such kernel, so only readers that show it ask)."""
  _subscribers.append(fn)
  if reference: _wants_reference.append(fn)
  if rewrites:
    _wants_rewrites.append((fn, rewrites if callable(rewrites) else _rewrite.always))
    if _rewrite_hook not in _rewrite.rewrite_hooks: _rewrite.rewrite_hooks.append(_rewrite_hook)
  return fn

def unsubscribe(fn: Callable[[Event], None]):
  if fn in _subscribers: _subscribers.remove(fn)
  _wants_rewrites[:] = [(f, p) for f, p in _wants_rewrites if f is not fn]
  _wants_reference[:] = [f for f in _wants_reference if f is not fn]
  if not _wants_rewrites and _rewrite_hook in _rewrite.rewrite_hooks: _rewrite.rewrite_hooks.remove(_rewrite_hook)


_muted = Nesting()

def muted() -> Nesting:
  """No events inside (BEAM search compiles hundreds of candidates nobody wants to see)."""
  return _muted

def emit(kind: str, /, **data: Any):
  if not _subscribers or _muted: return
  ev = Event(kind, data)
  for fn in list(_subscribers): fn(ev)

def active() -> bool: return bool(_subscribers)

def wants_reference() -> bool:
  """Does a reader want lazynb's own result next to a replaced stage's (and is the bus not muted)?"""
  return bool(_wants_reference) and not _muted

def _rewrite_hook(name: str, before, after, steps, stage): emit("rewrite", name=name, stage=stage, before=before, after=after, steps=steps)
# (a function's own attribute, which graph_rewrite looks for: mypy does not model those, hence the ignore)
_rewrite_hook.wanted = lambda: not _muted and any(p() for _, p in _wants_rewrites)  # type: ignore[attr-defined]

class Recorder:
  """Collects every event while active: `with Recorder() as rec: ...; rec.events`."""
  def __init__(self, rewrites: bool = True):
    self.events: list[Event] = []
    self.rewrites = rewrites
  def __call__(self, ev: Event): self.events.append(ev)
  def __enter__(self):
    subscribe(self, rewrites=self.rewrites, reference=True)
    return self
  def __exit__(self, *exc): unsubscribe(self)
  def of(self, kind: str) -> list[Event]: return [e for e in self.events if e.kind == kind]

# the trace document (lazynb.notebook.tracedoc.Trace) is the views' model of the events: it sits in the notebook layer,
# registers itself here when imported, and capture() imports it on first use
_document: Callable[[Recorder], Any] | None = None
def set_document(cls: Callable[[Recorder], Any]):
  global _document
  _document = cls

@contextlib.contextmanager
def capture(rewrites: bool = True):
  """Record what the compiler does inside the block; yields a Trace (see lazynb.notebook.tracedoc)."""
  if _document is None: import lazynb.notebook.tracedoc  # noqa: F401  (sets _document)
  rec = Recorder(rewrites=rewrites)
  trace = cast(Callable[[Recorder], Any], _document)(rec)  # (set by the import above)
  with rec:
    try: yield trace
    except BaseException as e:
      trace.error = e
      raise
    finally: trace.finish()
