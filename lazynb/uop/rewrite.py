"""Rewriting UOp graphs: patterns (`UPat`), ordered rule lists (`PatternMatcher`), `graph_rewrite`, and the compiler's
stages that every pass is tagged with (reported to the trace bus through `rewrite_hooks`). Patterns read a node's
op, dtype, src and arg only, so this module needs the kinds of op, not the UOp class."""
from __future__ import annotations
import contextlib, contextvars, inspect, itertools
from typing import Any, Callable, TYPE_CHECKING
from lazynb.dtype import DType
from lazynb.helpers import DEBUG, plural
from lazynb.uop.opcodes import Ops, GroupOp
from lazynb.uop.opmixin import OpMixin
if TYPE_CHECKING: from lazynb.uop.ops import UOp

class UPat(OpMixin):
  """A pattern over UOps. `src` as a tuple matches in order, as a list in any order, as one UPat every source."""
  __slots__ = ("op", "dtype", "src", "arg", "name", "allow_any_len")
  def __init__(self, op: Ops | tuple | set | None = None, dtype: DType | tuple | None = None, src=None, arg: Any = None,
               name: str | None = None, allow_any_len: bool = False):
    self.op = None if op is None else (frozenset([op]) if isinstance(op, Ops) else frozenset(op))
    self.dtype = None if dtype is None else (frozenset([dtype]) if isinstance(dtype, DType) else frozenset(dtype))
    self.arg, self.name, self.allow_any_len = arg, name, allow_any_len
    if src is None: self.src: UPat | list[tuple[UPat, ...]] | None = None
    elif isinstance(src, UPat): self.src = src  # every source matches this
    elif isinstance(src, list): self.src = [tuple(p) for p in itertools.permutations(src)]
    else: self.src = [tuple(src)]
  @staticmethod
  def var(name: str | None = None, dtype=None) -> UPat: return UPat(dtype=dtype, name=name)
  @staticmethod
  def cvar(name: str | None = None, dtype=None) -> UPat: return UPat(Ops.CONST, dtype, name=name)
  @staticmethod
  def const(dtype, b) -> UPat: return UPat(Ops.CONST, dtype, arg=b)
  def store(self, *src: UPat) -> UPat: return UPat(Ops.STORE, src=(self,) + src)  # tinygrad's UPat.store(buf, view, value)
  # the operators come from OpMixin, through these hooks: `x + c` is a pattern for ADD(x, c), commutative ops in either order
  def _lift(self, x) -> UPat: return x if isinstance(x, UPat) else UPat(Ops.CONST, arg=x)
  def _unary(self, op: Ops) -> UPat: return UPat(op, src=(self,))
  def _binop(self, op: Ops, x, reverse: bool = False) -> UPat:
    x = self._lift(x)
    if op in GroupOp.Commutative: return UPat(op, src=[self, x])  # a list matches in any order, so the written order does not matter
    return UPat(op, src=(x, self) if reverse else (self, x))

  def match(self, u: UOp, store: dict) -> list[dict]:
    if self.op is not None and u.op not in self.op: return []
    if self.dtype is not None and u.dtype not in self.dtype: return []
    if self.arg is not None and u.arg != self.arg: return []
    if self.name is not None:
      if self.name in store and store[self.name] is not u: return []
      store = {**store, self.name: u}
    if self.src is None: return [store]
    if isinstance(self.src, UPat):
      outs = [store]
      for s in u.src: outs = [m for st in outs for m in self.src.match(s, st)]
      return outs
    res: list[dict] = []
    for alt in self.src:
      if len(alt) != len(u.src) and not (self.allow_any_len and len(u.src) >= len(alt)): continue
      outs = [store]
      for p, s in zip(alt, u.src):
        if p.src is None and len(outs) == 1:  # a leaf pattern (the common case): checked here, without a call
          st = outs[0]
          if p.op is not None and s.op not in p.op or p.dtype is not None and s.dtype not in p.dtype or p.arg is not None and s.arg != p.arg:
            outs = []
          elif p.name is not None:
            if p.name not in st: outs = [{**st, p.name: s}]
            elif st[p.name] is not s: outs = []
        else: outs = [m for st in outs for m in p.match(s, st)]
        if not outs: break
      res.extend(outs)
    return res
  def __repr__(self):
    ops = "|".join(o.name for o in self.op) if self.op else "*"
    name = f" {self.name!r}" if self.name else ""
    if self.src is None: return f"UPat({ops}{name})"
    srcs = repr(self.src) if isinstance(self.src, UPat) else ", ".join(map(repr, self.src[0]))
    return f"UPat({ops}{name}, src=({srcs}))"

class PatternMatcher:
  """An ordered list of (UPat, function) rules. The function gets the pattern's named nodes as keyword
  arguments, plus `ctx` (whatever graph_rewrite was given) and `ret` (the matched node) if it asks for them.
  It returns a replacement UOp, or None to leave the node alone."""
  def __init__(self, patterns: list[tuple[UPat, Callable]]):
    self.patterns = patterns
    by_op: dict[Ops | None, list] = {}
    for pat, fn in patterns:
      params = inspect.signature(fn).parameters
      entry = (pat, fn, "ctx" in params, "ret" in params and (pat.name != "ret"), _src_ops(pat))
      for op in (pat.op if pat.op is not None else [None]): by_op.setdefault(op, []).append(entry)
    # per op: its own rules, then the rules for any op (one list per op, built once)
    self.wild = by_op.get(None, [])
    self.by_op = {op: by_op.get(op, []) + self.wild for op in Ops}
  def __add__(self, other: PatternMatcher) -> PatternMatcher: return PatternMatcher(self.patterns + other.patterns)
  def rewrite(self, u: UOp, ctx=None) -> UOp | None:
    r = self.rewrite_with_pattern(u, ctx)
    return None if r is None else r[0]
  def rewrite_with_pattern(self, u: UOp, ctx=None) -> tuple[Any, UPat] | None:  # (what the rule returned: a UOp, or pm_gradient's tuple)
    for pat, fn, wants_ctx, wants_ret, (nsrc, first) in self.by_op[u.op]:
      # cheap tests first: the dtype, the number of sources, and the first source's op
      if pat.dtype is not None and u.dtype not in pat.dtype: continue
      if nsrc is not None and (len(u.src) != nsrc or first is not None and (not nsrc or u.src[0].op not in first)): continue
      for kw in pat.match(u, {}):  # (each match is a dict of its own)
        if wants_ctx: kw["ctx"] = ctx
        if wants_ret: kw["ret"] = u
        if (ret := fn(**kw)) is not None and ret is not u: return ret, pat
    return None

def _src_ops(pat: UPat) -> tuple[int | None, frozenset | None]:
  """For a pattern whose sources are given in order (each alternative a tuple of the same length): how many sources a
  match has, and the ops its first source may have (None: any). A cheap test that rejects most nodes before the match."""
  if not isinstance(pat.src, list) or pat.allow_any_len or len({len(alt) for alt in pat.src}) != 1: return None, None
  firsts = [alt[0].op for alt in pat.src if alt]
  if not firsts or any(o is None for o in firsts): return len(pat.src[0]), None
  return len(pat.src[0]), frozenset(op for ops in firsts if ops is not None for op in ops)

# graph_rewrite reports each pass to whoever listens (the trace bus installs a hook). A hook may carry `wanted()`: it is
# asked before each pass (the DEBUG printer wants passes only at DEBUG>=4), so nobody listening costs nothing.
rewrite_hooks: list[Callable] = []

# The compiler's stages, in pipeline order. Every pass is tagged with one: given to graph_rewrite, or the stage the
# caller is in (`with in_stage("lowered"): ...`), so a helper's own rewrites (index simplification in a ShapeTracker)
# are shown under the stage that ran them.
STAGES = ("tensor graph", "kernels", "lowered", "simplified", "linearized")
# the stage this thread (or BEAM worker) is in: a ContextVar, so two threads lowering kernels at once each see their own
_stage: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("lazynb_rewrite_stage", default=())

@contextlib.contextmanager
def in_stage(stage: str):
  if stage not in STAGES: raise ValueError(f"unknown stage {stage!r}: one of {STAGES}")
  token = _stage.set(_stage.get() + (stage,))
  try: yield
  finally: _stage.reset(token)

def current_stage() -> str | None: return _stage.get()[-1] if _stage.get() else None

def _tracking() -> bool: return any(getattr(h, "wanted", always)() for h in rewrite_hooks)
def tracking_rewrites() -> bool:
  """Does a reader want passes reported now? (then a pass collects its steps)"""
  return bool(rewrite_hooks) and _tracking()
def always() -> bool: return True

def report_pass(name: str, before: UOp, after: UOp, steps: list[tuple] | None = None, stage: str | None = None):
  """Report a step that is not a PatternMatcher (the linearizer's ordering) like a pass: its graph before and after."""
  if tracking_rewrites():
    for h in rewrite_hooks: h(name, before, after, list(steps or []), stage or current_stage())

def graph_rewrite(sink: UOp, pm: PatternMatcher, ctx=None, bottom_up: bool = False, name: str | None = None, *,
                  stage: str | None = None, report_unchanged: bool = True) -> UOp:
  """Rewrite a graph with `pm` until no pattern matches anywhere: sources first, then the node itself; a replacement is
  rewritten again in turn. `bottom_up=True` (tinygrad's name for it): a node is also tried before its sources, and when
  a rule replaces it the old sources are never visited (a rule that pushes a view down stops where it becomes a load).
  The signature is tinygrad 0.10's (sink, pm, ctx, bottom_up, name); lazynb adds, by keyword only, `stage` (the pipeline
  stage the pass belongs to) and `report_unchanged=False` (a pass that changed nothing is not reported)."""
  if stage is not None and stage != current_stage():  # the rules' own rewrites (a ShapeTracker's index math) belong to this stage too
    with in_stage(stage): return graph_rewrite(sink, pm, ctx, bottom_up, name, stage=stage, report_unchanged=report_unchanged)
  track = tracking_rewrites()
  steps: list[tuple] = []
  done: dict[UOp, UOp] = {}
  stack: list[tuple] = [(sink, 0, None)]
  while stack:
    n, phase, aux = stack.pop()
    if phase == 2:  # n was replaced by aux, now rewritten
      done[n] = done[aux]
      continue
    if n in done: continue
    if phase == 0:  # first visit: tried as it is (bottom_up), else its sources go first
      at, r = n, pm.rewrite_with_pattern(n, ctx) if bottom_up and pm.by_op[n.op] else None
      if r is None:
        stack.append((n, 1, None))
        stack.extend((s, 0, None) for s in reversed(n.src) if s not in done)
        continue
    else:  # its sources are done: n over them, then tried
      src = tuple(done[s] for s in n.src)
      at = n if src == n.src else type(n)(n.op, n.dtype, src, n.arg)  # a UOp: built as one, hash-consed
      if (r := pm.rewrite_with_pattern(at, ctx) if pm.by_op[at.op] else None) is None:  # (no rule for this op: no call)
        done[n] = at
        continue
    if track: steps.append((at, r[0], r[1]))
    if r[0] in done: done[n] = done[r[0]]
    else: stack.extend(((n, 2, r[0]), (r[0], 0, None)))  # the replacement is rewritten, then stands for n
  ret = done[sink]
  if track and (steps or report_unchanged):
    for h in rewrite_hooks: h(name or "graph_rewrite", sink, ret, steps, stage or current_stage())
  if DEBUG >= 7 and steps: print(f"rewrite {name}: {plural(len(steps), 'step')}")
  return ret
