"""The compiler as data: its stages, declared in order, run by one runner, each one replaceable by your own function.

    schedule -> optimize -> lower -> simplify -> linearize -> render -> compile -> load -> run

    stages()           the stage names, in pipeline order
    reference(name)    lazynb's function for that stage: what a replacement must match
    use(name, fn)      `with use("render", my_render): ...`: fn runs in place of the stage for everything realized
                       inside (the block nests, restores on error, and holds for this thread only)
    check(name, fn)    fn graded against the reference on a corpus of generated programs (lazynb/corpus.py)

A `Stage` is its contract, the values it reads, its result's name and a spec; a replaced stage that breaks them is a
StageError, and its kernels run bounds-checked (an OutOfBoundsError). Each stage's time is recorded in the ProgramSpec,
and the trace names the replaced stages. More: docs/architecture.md, "The pipeline as data"."""
from __future__ import annotations
import collections, contextlib, contextvars, faulthandler, io, os, pickle, select, signal, time
from dataclasses import dataclass
from typing import Any, Callable, Iterator
import numpy as np
from lazynb import trace
from lazynb.helpers import CHECK, Context, plural
from lazynb.uop.ops import UOp, Ops, GroupOp

class StageError(RuntimeError):
  """A replaced stage raised, or returned something its contract does not allow."""

@dataclass
class Stage:
  name: str
  reads: tuple[str, ...]          # the run's values it is called with, in order ("kernel.function_name": an attribute)
  writes: str                     # the name its result gets
  takes: str                      # its contract, in words
  gives: str
  kind: type | tuple[type, ...]   # what its result must be
  spec: Callable[[Any], str | None] | None = None  # a problem with a result, in words, or None
  ref: Callable | None = None     # lazynb's own function: the module that defines it marks it with @implements(name)

# ---------------------------------------------------------------- specs: what a stage's result may contain
AST_OPS = GroupOp.ALU | {Ops.SINK, Ops.STORE, Ops.LOAD, Ops.VIEW, Ops.DEFINE_GLOBAL, Ops.CONST, Ops.ARANGE, Ops.REDUCE_AXIS, Ops.CAST,
                         Ops.BITCAST, Ops.DEFINE_VAR, Ops.BIND}
LOWERED_OPS = GroupOp.ALU | {Ops.SINK, Ops.STORE, Ops.LOAD, Ops.INDEX, Ops.DEFINE_GLOBAL, Ops.DEFINE_LOCAL, Ops.DEFINE_VAR, Ops.CONST,
                             Ops.RANGE, Ops.SPECIAL, Ops.REDUCE, Ops.CAST, Ops.BITCAST, Ops.BARRIER}
LINEAR_OPS = (LOWERED_OPS - {Ops.SINK, Ops.REDUCE}) | {Ops.DEFINE_ACC, Ops.ASSIGN, Ops.ENDRANGE}

def _a(word: str) -> str: return f"{'an' if word[:1] in 'AEIOU' else 'a'} {word}"

def _ops_outside(nodes, allowed) -> str | None:
  bad = sorted({u.op.name for u in nodes if u.op not in allowed})
  return f"it contains {', '.join(bad)}, which may not appear at this stage" if bad else None

def spec_schedule(res) -> str | None:
  items, becomes = res
  for si in items:
    if getattr(si, "kind", None) == "kernel":
      if si.ast.op is not Ops.SINK or any(s.op is not Ops.STORE for s in si.ast.src):
        return f"a kernel's ast must be SINK(STORE, ...), got {si.ast.op.name}({', '.join(s.op.name for s in si.ast.src)})"
      if (p := _ops_outside(si.ast.toposort(), AST_OPS)) is not None: return f"a kernel's ast: {p}"
  return None if isinstance(becomes, dict) else f"the second value must map each output UOp to its buffer's view, got {type(becomes).__name__}"

def spec_lowered(sink: UOp) -> str | None:
  return f"the result must be a SINK, got {sink.op.name}" if sink.op is not Ops.SINK else _ops_outside(sink.toposort(), LOWERED_OPS)

def spec_linear(uops: list) -> str | None:
  """What a renderer relies on in a kernel's list: every input listed before its reader, loops opened and closed like
  brackets, a value read only inside the loops it was listed in (a C variable declared in a loop is gone after it), an
  accumulator defined before the loops it sums over, updated inside them and read once they are closed, and the
  DEFINE_GLOBALs in buffer order (the kernel's parameters follow the list; the buffers are passed in buffer order)."""
  if not all(isinstance(u, UOp) for u in uops): return "the result must be a list of UOps"
  if (p := _ops_outside(uops, LINEAR_OPS)) is not None:
    if any(u.op is Ops.REDUCE for u in uops): p += " (a REDUCE becomes an accumulator: DEFINE_ACC before its loops, ASSIGN inside them)"
    return p + (" (the SINK only holds the kernel's stores: it is not listed)" if any(u.op is Ops.SINK for u in uops) else "")
  args = [u.arg for u in uops if u.op is Ops.DEFINE_GLOBAL]
  if args != sorted(args):
    return (f"the DEFINE_GLOBALs are listed in the order {args}: the kernel's parameters follow the list and the buffers are "
            f"passed in buffer order, so list them by their arg, {sorted(args)}")
  where: dict[UOp, tuple[UOp, ...]] = {}  # each listed UOp -> the loops open where it is listed (its value exists inside them)
  pos: dict[UOp, int] = {}
  loops: list[UOp] = []
  def loop(r: UOp) -> str: return f"the loop {r.arg[-1] if isinstance(r.arg, tuple) else r.arg} (the RANGE at uop {pos[r]})"
  for i, u in enumerate(uops):
    srcs = u.src[:1] if u.op is Ops.DEFINE_ACC else u.src  # an accumulator is defined before the loops it names
    if (late := next((s for s in srcs if s not in where), None)) is not None:
      return f"uop {i} ({u.op.name}) reads {_a(late.op.name)} that is not earlier in the list"
    if u.op is Ops.RANGE and isinstance(u.arg[1], UOp) and (v := next((v for v in u.arg[1].toposort() if v.op is Ops.DEFINE_VAR and v not in where), None)):
      return f"uop {i} (RANGE) counts up to the variable {v.arg[0]}, whose DEFINE_VAR is not earlier in the list"
    for s in srcs:
      if (gone := next((r for r in where[s] if r not in loops), None)) is not None:
        what = f"the counter of {loop(s)}" if s is gone else f"the {s.op.name} at uop {pos[s]}, listed inside {loop(gone)},"
        return f"uop {i} ({u.op.name}) reads {what} after that loop's ENDRANGE: a value exists only inside the loops it is listed in"
      if s.op is Ops.ASSIGN and (busy := next((r for r in s.src[0].src[1:] if r in loops), None)) is not None:
        return (f"uop {i} ({u.op.name}) reads the reduce's result (the ASSIGN at uop {pos[s]}) while {loop(busy)}, the loop it sums over, is "
                f"still open: the result is ready once that loop is closed (its ENDRANGE); list what reads it after")
    if u.op is Ops.DEFINE_ACC and (r := next((r for r in u.src[1:] if r in where), None)) is not None:
      return f"uop {i} (DEFINE_ACC) comes after {loop(r)} it accumulates over: list it before that loop, or it starts again on every step"
    if u.op is Ops.ASSIGN and u.src[0].op is Ops.DEFINE_ACC and (r := next((r for r in u.src[0].src[1:] if r not in loops), None)) is not None:
      return (f"uop {i} (ASSIGN) updates its accumulator outside " + (loop(r) if r in pos else f"the loop {r.arg[-1]}") +
              " it sums over: the update belongs inside that loop, to run on every step")
    if u.op is Ops.RANGE:
      if u in where: return f"uop {i} opens {loop(u)} a second time"
      loops.append(u)
    if u.op is Ops.ENDRANGE:
      if not loops or loops[-1] is not u.src[0]: return f"uop {i} closes a loop that is not the innermost open one"
      loops.pop()
    if u not in where: where[u], pos[u] = where[u.src[0]] if u.op is Ops.ASSIGN and u.src[0].op is Ops.DEFINE_ACC else tuple(loops), i
  return f"{len(loops)} loop(s) never closed (no ENDRANGE)" if loops else None

def _nonempty(src: str) -> str | None: return None if src.strip() else "the source is empty"

STAGES: tuple[Stage, ...] = (
  Stage("schedule", ("outs",), "schedule", "the lazy graph's outputs (a list of UOps)",
        "the kernels and copies that compute them, in order (a list of ScheduleItem), and each output's buffer view (a dict)",
        tuple, spec_schedule),
  Stage("optimize", ("ast", "renderer", "opts"), "kernel", "one kernel's AST, the device's Renderer and opts (None: choose)",
        "a Kernel with its opts applied (its loop shape)", object),
  Stage("lower", ("kernel",), "lowered", "a Kernel", "a SINK of STOREs over index math: INDEX, LOAD, RANGE, SPECIAL, REDUCE",
        UOp, spec_lowered),
  Stage("simplify", ("lowered",), "simplified", "the lowered SINK", "the same program with its index math simplified", UOp, spec_lowered),
  Stage("linearize", ("simplified",), "uops", "the simplified SINK",
        "a list of UOps in execution order, loops closed by ENDRANGE, reduces as DEFINE_ACC + ASSIGN", list, spec_linear),
  Stage("render", ("kernel.function_name", "uops", "renderer"), "src", "the kernel's name, its UOp list and the Renderer",
        "the kernel's source code (a str)", str, _nonempty),
  Stage("compile", ("device", "src"), "lib", "the device's name and a kernel's source", "the binary (bytes)", bytes),
  Stage("load", ("device", "name", "lib"), "program", "the device's name, the kernel's name and its binary",
        "a callable program: program(*bufs, global_size=, local_size=, vals=, wait=) -> seconds", object),
  Stage("run", ("program", "bufs", "global_size", "local_size", "vals"), "seconds",
        "a loaded program, the raw device buffers, the launch sizes and the variables' values", "the seconds it took (a float)", (int, float)))
_BY_NAME = {s.name: s for s in STAGES}
CODEGEN = ("optimize", "lower", "simplify", "linearize", "render")  # the stages between a kernel's AST and its source
_SAFE_AFTER = {"optimize", "lower", "simplify", "linearize"}          # replaced: the kernel is rendered bounds-checked

def stages() -> list[str]:
  """The stage names, in pipeline order."""
  return [s.name for s in STAGES]

def stage(name: str) -> Stage:
  if name not in _BY_NAME: raise KeyError(f"no stage named {name!r}: the stages are {', '.join(stages())}")
  return _BY_NAME[name]

def reference(name: str) -> Callable:
  """lazynb's own function for the stage `name`: what a replacement is graded against (same arguments, same kind of result)."""
  if (ref := stage(name).ref) is None: raise RuntimeError(f"the {name} stage has no reference yet: `import lazynb` loads them all")
  return ref

def implements(name: str) -> Callable[[Callable], Callable]:
  """Mark a function as lazynb's own version of the stage `name` (where it is defined: `@implements("lower")`)."""
  def mark(fn: Callable) -> Callable:
    if (ref := stage(name).ref) is not None: raise RuntimeError(f"the {name} stage already has a reference: {_describe(ref)}")
    stage(name).ref = fn
    return fn
  return mark

# ---------------------------------------------------------------- replacing a stage: per thread, nested, restored
_replaced: contextvars.ContextVar[tuple[tuple[str, Callable], ...]] = contextvars.ContextVar("lazynb_stages", default=())

@contextlib.contextmanager
def use(name: str, fn: Callable) -> Iterator[None]:
  """Run `fn` in place of the stage `name` for everything realized in this block (this thread only; blocks nest, the
  innermost wins, and the stage is restored when the block ends, also on an error)."""
  stage(name)
  if not callable(fn): raise TypeError(f"use({name!r}, fn): fn must be a function taking {stage(name).takes}, got {type(fn).__name__}")
  token = _replaced.set(tuple((n, f) for n, f in _replaced.get() if n != name) + ((name, fn),))
  try: yield
  finally: _replaced.reset(token)

def replaced() -> tuple[tuple[str, Callable], ...]:
  """The stages replaced in this thread now, as (name, fn): part of every cache key of what they make."""
  return _replaced.get()

def replacement(name: str) -> Callable | None: return dict(_replaced.get()).get(name)

def replaced_names(names=None) -> list[str]: return [n for n, _ in _replaced.get() if names is None or n in names]

def carry(fn: Callable) -> Callable:
  """fn, to be called on another thread with this thread's replaced stages (BEAM compiles candidates on a pool)."""
  ctx = contextvars.copy_context()
  return lambda *a, **kw: ctx.copy().run(fn, *a, **kw)

# ---------------------------------------------------------------- the runner
def _read(values: dict, key: str):
  head, *attrs = key.split(".")
  x = values[head]
  for a in attrs: x = getattr(x, a)
  return x

def _describe(fn: Callable) -> str: return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)

def call(name: str, *args: Any) -> Any:
  """One stage on its arguments: the replacement if this thread has one, else lazynb's own. A replacement's result is
  held to the contract (its kind and its spec); under LAZYNB_CHECK=1 lazynb's own results are too. A replacement's run
  is bracketed on the trace bus by `stage` events, so a trace can say which passes ran inside it; a replaced schedule's
  items go on the bus with the closing event (the trace shows the learner's schedule)."""
  st, fn = stage(name), replacement(name)
  out: Any
  if fn is None:
    out = reference(name)(*args)
    if CHECK and st.spec is not None and (problem := st.spec(out)) is not None:
      raise StageError(f"lazynb's own {name} stage broke its contract ({problem}): this is a bug in lazynb, please report it")
    return out
  trace.emit("stage", name=name, phase="start")
  try:
    try: out = fn(*args)
    except StageError: raise
    except Exception as e:
      raise StageError(f"your {name} stage ({_describe(fn)}) raised {type(e).__name__}: {e}\n"
                       f"  the {name} stage takes {st.takes} and gives {st.gives}") from e
    if not isinstance(out, st.kind): raise StageError(f"your {name} stage ({_describe(fn)}) returned a {type(out).__name__}; it must give {st.gives}")
    if st.spec is not None and (problem := st.spec(out)) is not None:
      raise StageError(f"your {name} stage ({_describe(fn)}) returned something the next stages cannot take: {problem}.\n"
                       f"  the {name} stage gives {st.gives}")
  except BaseException:
    trace.emit("stage", name=name, phase="end")
    raise
  given: Any = out  # (the isinstance test above narrowed `out` to the stage's kind)
  extra: dict[str, Any] = {"items": list(given[0]), "outs": list(args[0])} if name == "schedule" else {}
  trace.emit("stage", name=name, phase="end", **extra)
  return out

def run_stages(first: str, last: str, **values) -> dict:
  """Run the stages from `first` to `last` (pipeline order), each on the values it reads (given here, or made by an
  earlier stage); returns every value, with `seconds` per stage. The one place stages are wired together.
  When a code stage is replaced and a reader wants to compare (trace.wants_reference()), lazynb's own stages also run,
  from the first replaced one on, on the same input: `reference` holds their results by stage name, and `differences`
  where yours first differs from each ({stage, message, line | index | node}, see `difference`)."""
  names = stages()
  todo = names[names.index(first):names.index(last) + 1]
  times: dict[str, float] = {}
  # a replaced code stage's kernel is rendered bounds-checked (lazynb's own function swapped in makes lazynb's kernel)
  checked = any(n in _SAFE_AFTER and f is not stage(n).ref for n, f in _replaced.get() if n in todo)
  compare = trace.wants_reference() and any(replacement(n) is not None for n in todo if n in CODEGEN)
  ref: dict[str, Any] | None = None
  with Context(LAZYNB_CHECK=1) if checked else contextlib.nullcontext():
    for n in todo:
      st = stage(n)
      if compare and ref is None and replacement(n) is not None: ref = _reference_run([m for m in todo[todo.index(n):] if m in CODEGEN], values)
      t0 = time.perf_counter()
      values[st.writes] = call(n, *[_read(values, k) for k in st.reads])
      times[n] = time.perf_counter() - t0
  values["seconds"] = times
  if ref is not None:
    values["reference"] = ref
    values["differences"] = [{"stage": m, **d} for m, r in ref.items() if (d := difference(values[stage(m).writes], r)) is not None]
  return values

def _reference_run(todo: list[str], values: dict) -> dict[str, Any]:
  """lazynb's own functions for the stages `todo` on a copy of the run's values (they are pure), off the trace bus: their
  results by stage name. A failure is not the learner's: what is missing stays missing."""
  ref, out = dict(values), {}
  with trace.muted():
    for m in todo:
      st = stage(m)
      try: ref[st.writes] = out[m] = reference(m)(*[_read(ref, k) for k in st.reads])
      except Exception: break
  return out

# ---------------------------------------------------------------- grading a replacement
default_programs: Callable[[], list] | None = None  # the corpus (lazynb/corpus.py sets it: it sits above the frontend)

@dataclass
class CheckResult:
  ok: bool
  message: str
  programs: int = 0          # how many programs ran
  failed: str | None = None  # the first program that differed
  def __bool__(self) -> bool: return self.ok
  def __repr__(self) -> str: return self.message

def _same_values(got: list, want: list) -> str | None:
  """How the outputs differ, in words, or None when they agree (floats within 1e-4 relative, 1e-5 absolute; NaN = NaN)."""
  if len(got) != len(want): return f"{len(got)} outputs where the reference gives {len(want)}"
  for j, (g, w) in enumerate(zip(got, want)):
    name = f"output {j}" if len(want) > 1 else "the output"
    if g.shape != w.shape: return f"{name} has shape {g.shape} where the reference's has {w.shape}"
    if g.dtype != w.dtype: return f"{name} is {g.dtype} where the reference's is {w.dtype}"
    bad = ~np.isclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True) if w.dtype.kind == "f" else g != w
    if bad.any():
      at = tuple(int(i) for i in np.argwhere(bad)[0])
      return f"{name} differs at index {at}: {g[at]!r} where the reference gives {w[at]!r} ({int(bad.sum())} of {plural(w.size, 'value')} differ)"
  return None

def _label(args: tuple) -> str:
  for a in args:
    if isinstance(getattr(a, "function_name", None), str): return a.function_name
  return next((a for a in args if isinstance(a, str) and a.isidentifier()), "")

def _say(u) -> str:
  """A UOp in a few words: its op and arg (or dtype), e.g. DEFINE_GLOBAL 1, RANGE (0, 3, 'gidx0'), ADD (dtypes.float)."""
  if not isinstance(u, UOp): return repr(u)
  return f"{u.op.name} {u.arg!r}" if u.arg is not None else f"{u.op.name} ({u.dtype})"

def difference(out, ref) -> dict | None:
  """Where a stage's result first differs from the reference's result on the same input: {"message": in words, and
  where: "line" (a source, from 1), "index" (a UOp list) or "node" (a graph, its place in toposort order)}; None: the same."""
  if isinstance(ref, UOp) and isinstance(out, UOp):
    if out is ref: return None
    a, b = out.toposort(), ref.toposort()
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if (x.op, x.dtype, x.arg) != (y.op, y.dtype, y.arg)), min(len(a), len(b)))
    at = f"node {i} in order: yours is {_say(a[i])}, the reference's {_say(b[i])}" if i < min(len(a), len(b)) else "one graph continues"
    return {"message": f"your graph has {plural(len(a), 'node')}, the reference's {len(b)}; the first difference is at {at}", "node": i}
  if isinstance(ref, list) and isinstance(out, list):
    if len(out) == len(ref) and all(x is y for x, y in zip(out, ref)): return None
    i = next((i for i, (x, y) in enumerate(zip(out, ref)) if x is not y), min(len(out), len(ref)))
    if i >= min(len(out), len(ref)): return {"message": f"your list has {plural(len(out), 'entry', 'entries')}, the reference's {len(ref)}", "index": i}
    # two lists may differ in order only (both right); the UOps only one of them has say more than the first place they differ
    def key(u) -> str: return "DEFINE_ACC" if isinstance(u, UOp) and u.op is Ops.DEFINE_ACC else _say(u)  # (its arg is only a name)
    mine, theirs = collections.Counter(map(key, out)), collections.Counter(map(key, ref))
    only = [f"only {who} has {', '.join(xs[:3])}{f' and {len(xs) - 3} more' if len(xs) > 3 else ''}"
            for who, xs in (("yours", list((mine - theirs).elements())), ("the reference's", list((theirs - mine).elements()))) if xs]
    return {"message": f"entry {i} differs: yours is {_say(out[i])}, the reference's {_say(ref[i])} ({len(out)} and {plural(len(ref), 'entry', 'entries')})"
                       + (f"; {'; '.join(only)}" if only else ""), "index": i}
  if isinstance(ref, str) and isinstance(out, str):
    if out == ref: return None
    la, lb = out.splitlines(), ref.splitlines()
    i = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
    if i >= min(len(la), len(lb)): return {"message": f"your source has {plural(len(la), 'line')}, the reference's {len(lb)}", "line": i + 1}
    return {"message": f"line {i + 1} differs:\n    yours:     {la[i].strip()}\n    reference: {lb[i].strip()}", "line": i + 1}
  if hasattr(ref, "applied_opts") and hasattr(out, "applied_opts"):
    if tuple(out.full_shape) != tuple(ref.full_shape):
      return {"message": f"your kernel's loop shape is {tuple(out.full_shape)}, the reference's {tuple(ref.full_shape)}"}
    return None if list(out.applied_opts) == list(ref.applied_opts) else {"message": f"your opts are {out.applied_opts}, the reference's {ref.applied_opts}"}
  return None

def _differs(out, ref) -> str | None:
  """difference(out, ref) in words, or None."""
  return None if (d := difference(out, ref)) is None else d["message"]

def _schedule_said(items: list) -> str:
  """A schedule in words: its items in order, each with what it writes and reads (a schedule has side effects, so it is
  described, not compared with the reference's on the same outputs)."""
  def item(i, si) -> str:
    bufs = getattr(si, "bufs", ())
    return f"{i}: {getattr(si, 'kind', '?')} writing a buffer of {bufs[0].size} and reading {len(bufs) - 1}" if bufs else f"{i}: {si!r}"
  return "your schedule ran these items, in this order: " + "; ".join(item(i, si) for i, si in enumerate(items))

_UNGUARDED = {"render", "compile", "load", "run"}  # replaced, their kernels run without bounds checks: note a difference at once

def _verdict(name: str, ref: Callable, p, want: list, fn: Callable, note: Callable[[str], None]) -> str | None:
  """One program with `fn` as the stage: None if its values are the reference's, else what differed, in words. Where
  `fn`'s own result first differs from the reference's on the same input is noted (at once, for a stage whose kernels
  could crash the process)."""
  calls: list[tuple] = []
  noted: list[str] = []
  def spy(*args):
    out = fn(*args)
    calls.append((args, out))
    if name in _UNGUARDED and not noted and (d := _differs(out, ref(*args))) is not None:
      noted.append(d := f"your {name} stage's result{' for kernel ' + _label(args) if _label(args) else ''} is not the reference's: {d}")
      note(d)
    return out
  spy.__qualname__ = _describe(fn)
  try:
    # new memory poisoned: what the reference's run left in freed memory is not read back as a right answer
    with use(name, spy), Context(LAZYNB_POISON=1): got = p.run()
    problem = _same_values(got, want)
  except StageError as e: return f"{e}"
  except Exception as e: problem = f"the program failed after your {name} stage: {type(e).__name__}: {e}"
  if problem is None: return None
  if noted: return f"{problem}\n  {noted[0]}"
  if name == "schedule": return f"{problem}\n  " + "\n  ".join(_schedule_said(out[0]) for _, out in calls if isinstance(out, tuple) and out)
  for args, out in calls:
    if (d := _differs(out, ref(*args))) is not None:
      return f"{problem}\n  your {name} stage's result{' for kernel ' + _label(args) if _label(args) else ''} is not the reference's: {d}"
  return problem

def _in_child(work: Callable[[Callable[[str], None]], str | None], timeout: float) -> str | None:
  """work(note) in a forked child, so a kernel that writes outside its memory or never stops cannot take this process
  with it: its verdict, or what became of the child (with what it noted before). Where there is no fork, it runs here."""
  if not hasattr(os, "fork"): return work(lambda text: None)
  r, w = os.pipe()
  pid = os.fork()
  if pid == 0:  # the child: notes and then the verdict, each a pickled ("note" | "verdict", text); no exit handlers
    code = 0
    faulthandler.disable()  # its crash is reported by the parent, in words; no traceback dump of its own
    try:
      os.close(r)
      out = os.fdopen(w, "wb")
      def note(text: str):
        pickle.dump(("note", text), out)
        out.flush()
      pickle.dump(("verdict", work(note)), out)
    except BaseException as e:
      code = 1
      with contextlib.suppress(BaseException): pickle.dump(("verdict", f"the check itself failed: {type(e).__name__}: {e}"), out)
    finally:
      try: out.flush()
      finally: os._exit(code)
  os.close(w)
  chunks, deadline = [], time.monotonic() + timeout
  with os.fdopen(r, "rb") as f:
    while (left := deadline - time.monotonic()) > 0 and select.select([f], [], [], left)[0]:
      if not (chunk := os.read(f.fileno(), 1 << 16)): break
      chunks.append(chunk)
  timed_out = time.monotonic() >= deadline
  if timed_out: os.kill(pid, signal.SIGKILL)
  _, status = os.waitpid(pid, 0)
  msgs, stream = [], io.BytesIO(b"".join(chunks))
  while True:
    try: msgs.append(pickle.load(stream))
    except Exception: break
  verdicts, notes = [t for k, t in msgs if k == "verdict"], "".join(f"\n  {t}" for k, t in msgs if k == "note")
  if timed_out: return f"it did not finish in {timeout:.0f} s: a kernel that never stops (a loop whose counter never reaches its end?){notes}"
  if os.WIFSIGNALED(status):
    sig = signal.Signals(os.WTERMSIG(status)).name
    return (f"the process running it was killed by {sig}: a kernel read or wrote memory outside its buffers "
            f"(an index, an address or a loop bound that is wrong), or divided an integer by zero{notes}")
  return verdicts[0] if verdicts else f"the process running it ended without a verdict{notes}"

def check(name: str, fn: Callable, programs: list | None = None, timeout: float = 60.0) -> CheckResult:
  """Grade `fn` as the stage `name`: each program of the corpus (lazynb/corpus.py: elementwise ops, reductions, movement
  chains with masks, matmuls, convolutions, programs of several kernels) runs once through lazynb's pipeline and once
  with `fn` in place of the stage; the values must agree. The result's `.ok` says whether they did on every program,
  and `.message` names the first program that differed, what differed, and where `fn`'s own result first left the
  reference's. `fn` may differ from the reference wherever the values stay the same (another order, other opts).
  Each run with `fn` happens in a child process (where the system can fork): a kernel of yours that writes outside its
  memory, or never stops (`timeout` seconds per program), fails the check instead of crashing Python."""
  st, ref = stage(name), reference(name)
  if programs is None:
    if default_programs is None: raise RuntimeError("no programs to check with: `import lazynb` loads the corpus (lazynb/corpus.py)")
    programs = default_programs()
  for i, p in enumerate(programs):
    want = p.run()
    verdict = _in_child(lambda note: _verdict(name, ref, p, want, fn, note), timeout)
    if verdict is None: continue
    contract = "" if f"the {name} stage takes" in verdict or f"the {name} stage gives" in verdict else f"\n  (the {name} stage takes {st.takes} and gives {st.gives})"
    return CheckResult(False, f"your {name} stage fails program {i + 1} of {len(programs)} ({p.kind}): {p.name}\n  {verdict}{contract}", i + 1, p.name)
  kinds = sorted({p.kind for p in programs})
  return CheckResult(True, f"your {name} stage gives the reference's values on all {len(programs)} programs ({', '.join(kinds)})", len(programs))
