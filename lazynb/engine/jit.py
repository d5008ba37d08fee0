"""TinyJit: run a function's kernels without re-tracing it. Call 1 warms up, call 2 records what it executes, calls 3+
replay the record with new inputs' buffers. What a replay keeps and redoes, and its JitErrors: docs/jit.md."""
from __future__ import annotations
import functools, weakref
from typing import Any
from lazynb import trace
from lazynb.device import Buffer
from lazynb.helpers import GlobalCounters, JIT
from lazynb.uop.ops import Ops, GroupOp, UOp, unbind, variables
from lazynb.engine import realize as _realize
from lazynb.engine.schedule import new_buffer
from lazynb.runstate import state
from lazynb.tensor import Tensor, reads_buffer

class JitError(RuntimeError, AssertionError):
  """A TinyJit misuse. tinygrad 0.10 raises AssertionError for most of these (RuntimeError for a jit in a jit): both catch it."""

def _tensors_in(ret: Any) -> list[Tensor]:
  """The tensors a function returned: itself, or inside a tuple, list or dict (one level deep, as tinygrad)."""
  if isinstance(ret, Tensor): return [ret]
  if isinstance(ret, (tuple, list)): return [r for r in ret if isinstance(r, Tensor)]
  if isinstance(ret, dict): return [r for r in ret.values() if isinstance(r, Tensor)]
  return []

def _view_vars(u: UOp) -> list[UOp]:
  """The variables in the sizes of a chain of views (movement ops keep theirs in their args)."""
  return variables([n.arg for n in u.toposort() if n.op in GroupOp.Movement])

def _in_place(t: Tensor, b: Buffer) -> bool:
  """Is t still (a view of) the buffer b, or an assign pending into it?"""
  u = t.uop.src[0] if t.uop.op is Ops.ASSIGN else t.uop
  return u.base.op is Ops.BUFFER and u.base.buffer is b

def _view_ops(t: Tensor, r: Tensor) -> tuple | None:
  """The movement ops that make r from t, if r is a view of t (views of a view keep its base: then t's ops come first)."""
  if not r._view or (rb := r._viewed()) is None: return None
  if rb is t: return r._view[1]
  n = len(t._view[1]) if t._view else 0
  return r._view[1][n:] if t._view and t._viewed() is rb and r._view[1][:n] == t._view[1] else None

def _pending_assigns(keep=lambda a: True) -> list[Tensor]:
  """The in-place assigns not done yet (one that is done has given its target buffer a new name: runstate.superseded)."""
  return [Tensor(a) for a in list(state.pending_assigns) if a.src[0].base not in state.superseded and keep(a)]

def _settle(touched: list[tuple[bool, Buffer | None]]):
  """Before a call writes (True) and reads memory, what a plain call would do first, done now and not recorded: the caller's
  pending assigns into it, and its lazy values of memory the call writes (docs/jit.md, "What a replay keeps", Writes)."""
  written, seen = {id(b) for w, b in touched if w and b is not None}, {id(b) for _, b in touched if b is not None}
  def reads(u: UOp) -> bool: return reads_buffer(u, lambda b: id(state.buffers.get(b)) in written, past_buffers=False)
  pend = _pending_assigns(lambda a: id(state.buffers.get(a.src[0].base)) in seen)
  lazy = [t for t in list(state.live) if not (not t._view and t._uop.base.op is Ops.BUFFER) and not t.uop.is_realized and reads(t.uop)]
  Tensor.realize_all(*pend, *lazy)

def _same_value(a: Any, b: Any) -> bool:
  try: return bool(a is b or type(a) is type(b) and a == b)
  except Exception: return False  # noqa: BLE001 (objects whose == is not a plain yes/no: identity only)

class JitItem:
  """One step a TinyJit replays, as tinygrad 0.10's jit_cache shows it: `prg` (a CompiledRunner for a kernel, a CopyStep or
  a RandomStep) and `bufs` (output first)."""
  def __init__(self, prg, bufs: list[Buffer]): self.prg, self.bufs = prg, bufs
  def __repr__(self): return f"JitItem({getattr(self.prg, 'p', self.prg)!r:.60}, bufs={len(self.bufs)})"

class CopyStep:
  """A replayed copy between devices (tinygrad's BufferCopy)."""
  def __repr__(self): return "CopyStep()"

class RandomStep:
  """Fresh random numbers written from the host on each replay (lazynb draws them on the host; tinygrad runs a kernel)."""
  def __init__(self, refill): self.refill = refill
  def __repr__(self): return "RandomStep()"

class CapturedJit:
  """What a TinyJit captured (tinygrad 0.10's jit.captured): its steps as `jit_cache`, and free_intermediates(). A cached
  expression whose value was in freed memory is dropped (deallocate counts as a write: Buffer.version)."""
  def __init__(self, jit: TinyJit): self.jit = jit
  @property
  def jit_cache(self) -> list[JitItem]:
    return [JitItem(what if kind == "kernel" else CopyStep() if kind == "copy" else RandomStep(what), list(bufs)) for kind, what, bufs, *_ in self.jit.steps]
  def free_intermediates(self):
    """Free the memory of buffers only the capture uses (neither an input, nor held by a tensor or graph): the next replay
    allocates them again. Memory a tensor can still read (the outputs, globals it assigns) is kept."""
    # held: the inputs, and memory a live tensor's graph names (its value, a global it assigns, a constant it reads)
    held = {id(b) for b in self.jit.input_bufs} | {id(n.buffer) for t in state.live for n in t._uop.toposort() if n.op is Ops.BUFFER and n in state.buffers}
    first: dict[int, tuple[Buffer, bool]] = {}  # buffer -> (it, is its first use a write that does not read it?)
    for kind, _, bufs, ast, *_ in self.jit.steps:
      own = kind == "kernel" and any(u.op is Ops.LOAD and u.src[0].op is Ops.DEFINE_GLOBAL and u.src[0].arg == 0 for u in ast.toposort())
      for j, b in enumerate(bufs): first.setdefault(id(b), (b, j == 0 and not own))
    # only memory each replay writes before reading it: a buffer read first holds state (a pruned kernel's result, an accumulator)
    for i, (b, scratch) in first.items():
      if scratch and i not in held: b.deallocate()

_capture_call = [False]  # a TinyJit is in its capturing call (the second): a TinyJit called inside it is an error

class TinyJit:
  def __init__(self, fxn, captured=None, prune: bool = False):
    if captured is not None: raise NotImplementedError("TinyJit(captured=...) (a saved capture) is not supported; capture by calling")
    self.fxn, self.prune = fxn, prune
    self.reset()
    functools.update_wrapper(self, fxn)
  def reset(self):
    """Forget the capture: the next two calls warm up and capture again (e.g. for new input shapes)."""
    self.cnt, self.steps, self.ret = 0, [], None
    self.ret_views: dict[int, tuple[int, tuple | None]] = {}
    self.moved: dict[int, UOp] = {}
    self.warm_touched: list[tuple[bool, Any]] = []
    self.input_spec: list[tuple] = []
    self.input_bufs: list[Buffer] = []
    self.frozen_args: list = []
    self.warm_data: list = []
  def __get__(self, obj, objtype=None): return functools.partial(self.__call__, obj) if obj is not None else self

  @staticmethod
  def _split_args(args, kwargs) -> tuple[list[tuple], list[tuple]]:
    """(name, Tensor) inputs and (name, value) frozen arguments; keyword ones sorted by name."""
    named = list(enumerate(args)) + sorted(kwargs.items())
    return [(n, a) for n, a in named if isinstance(a, Tensor)], [(n, a) for n, a in named if not isinstance(a, Tensor)]

  def _inputs(self, args, kwargs) -> tuple[list[tuple], list[tuple]]:
    named, frozen = self._split_args(args, kwargs)
    ts = [t for _, t in named]
    # a view's memory is that of the tensor it views (its base): the base gets memory of its own first, so that the input's
    # buffer is the base's and a write through the input lands in it on every call (else the base gets new memory, once)
    for t in ts:
      if (b := t._viewed()) is not None: b._own_memory()
    Tensor.realize_all(*ts)
    for t in ts:
      if t.uop.base.op is not Ops.BUFFER: t.uop = t.contiguous().realize().uop
    bufs = [t.uop.base.buffer for t in ts]
    for i, b in enumerate(bufs):
      if any(b is o for o in bufs[:i]):
        raise JitError(f"TinyJit: input {named[i][0]!r} shares its memory with another input (the same tensor, or views of one): "
                       "a replay could not tell them apart; pass it once, or pass a .contiguous() copy")
    return named, frozen

  def __call__(self, *args, **kwargs):
    if not JIT: return self.fxn(*args, **kwargs)
    if state.capturing is not None:  # another TinyJit is watching this call: in its warm-up this one runs plainly
      if _capture_call[0]: raise JitError("having TinyJit inside another TinyJit is not supported: jit the outer function only (call the inner "
                                          "one plainly, e.g. through its .fxn)")
      return self.fxn(*args, **kwargs)
    named, frozen = self._inputs(args, kwargs)
    inputs = [t for _, t in named]
    bufs = [t.uop.base.buffer for t in inputs]  # (before the function runs: an assign may give an input a graph of its own)
    # the kernels read an input's underlying buffer through its view: the view must stay the same (up to variables' values)
    vals: dict[UOp, int] = {}
    spec = [(n, tuple(unbind(s, vals) for s in t.shape), t.dtype, t.device, t.uop.st.unbind(vals)) for n, t in named]
    frozen = [(n, unbind(a, vals) if isinstance(a, UOp) and a.op is Ops.BIND else a) for n, a in frozen]
    self.var_vals = {v.arg[0]: x for v, x in vals.items()}
    if self.cnt >= 2: return self._replay(spec, inputs, frozen)
    # what the caller left pending on the memory the function uses (the warm-up's) is done before the capture, not recorded
    if self.cnt == 1: _settle([(w, bufs[r] if isinstance(r, int) else r()) for w, r in self.warm_touched])
    pending = set(state.pending_assigns)
    # a result computed from these inputs before (the expression cache) would not be recorded: it is computed again
    state.capturing, state.realized.volatile = [], {id(t.uop.base.buffer) for t in inputs}
    _capture_call[0] = self.cnt == 1
    try:
      ret = self.fxn(*args, **kwargs)
      # an input the function gave a new graph (an assign to a view whose base is gone takes the value's graph) gets its value
      # in memory of its own, written last: a replay writes it into new memory, as each plain call's value is its own
      moved = [i for i, (t, b) in enumerate(zip(inputs, bufs)) if not _in_place(t, b)]
      for i in moved: inputs[i].uop = inputs[i].contiguous().uop
      # a replay redoes what the capture ran: the returned tensors, and the writes the function left pending (assigns to
      # inputs or globals; a plain call does them when they are read)
      Tensor.realize_all(*_tensors_in(ret), *_pending_assigns(lambda a: a not in pending), *[inputs[i] for i in moved])
    finally: log, state.capturing, state.realized.volatile, _capture_call[0] = state.capturing, None, set(), False
    data = [(e[1], e[3]) for e in log if e[0] == "data"]
    if self.cnt == 0:
      # the memory it wrote (True) and read: an input by its place, other memory (globals) by a weak reference
      at = {id(b): i for i, b in enumerate(bufs)}
      self.warm_touched = [(j == 0, at.get(id(b), weakref.ref(b))) for e in log if e[0] != "data" for j, b in enumerate(e[2])]
      self.warm_data, self.cnt = data, 1
      return ret
    if data != self.warm_data:
      raise JitError("TinyJit: the function made different data from Python values on its first two calls "
                     f"({len(self.warm_data)} then {len(data)} host arrays, or different contents). A capture would freeze those values: "
                     "pass changing values as Tensor arguments instead")
    views = self._input_views(ret, named, bufs)
    if not any(e[0] in ("kernel", "copy", "random") for e in log) and not views:
      raise JitError("TinyJit: nothing was jitted (the function ran no kernel): return or realize the tensors it computes")
    self.input_spec, self.input_bufs, self.frozen_args, self.ret_views = spec, bufs, frozen, views
    self.moved = {i: inputs[i].uop for i in moved}
    self.steps = self._pruned(log) if self.prune else [e for e in log if e[0] != "data"]
    self.ret, self.cnt = ret, 2
    trace.emit("jit", phase="capture", name=getattr(self.fxn, "__name__", "jit"), kernels=self._kernels(), var_vals=dict(self.var_vals))
    return ret

  @property
  def captured(self) -> CapturedJit | None:
    """The capture (None before the second call): .jit_cache lists its steps, .free_intermediates() frees scratch memory."""
    return CapturedJit(self) if self.cnt >= 2 else None
  @property
  def jit_cache(self) -> list[JitItem]:
    """The captured steps (empty before the capture): each a JitItem with .prg and .bufs."""
    return self.captured.jit_cache if self.captured is not None else []

  def _kernels(self) -> int: return sum(e[0] == "kernel" for e in self.steps)

  def _replay(self, spec, inputs, frozen):
    if [s[:4] for s in spec] != [s[:4] for s in self.input_spec] or spec != self.input_spec:
      raise JitError(f"TinyJit: inputs changed since capture: got {[s[:3] for s in spec]}, captured {[s[:3] for s in self.input_spec]} "
                     "(names, shapes, dtypes, devices and views must match); call .reset() to capture again")
    if len(frozen) != len(self.frozen_args) or not all(n == m and _same_value(a, b) for (n, a), (m, b) in zip(frozen, self.frozen_args)):
      raise JitError(f"TinyJit: non-Tensor arguments changed since capture: got {frozen!r}, captured {self.frozen_args!r}; they are "
                     "frozen into the captured kernels, so pass changing values as Tensors (or call .reset())")
    swap = {id(old): t.uop.base.buffer for old, t in zip(self.input_bufs, inputs)}
    fresh = {i: new_buffer(u.device, u.base.arg, u.base.dtype) for i, u in self.moved.items()}  # a moved input's new memory
    for i, nb in fresh.items():
      swap[id(self.moved[i].base.buffer)] = nb.buffer.allocate()
      if self.moved[i].base in state.owned: state.owned[nb] = state.owned[self.moved[i].base]
    _settle([(j == 0, swap.get(id(b), b)) for e in self.steps for j, b in enumerate(e[2])])
    for b in {id(b): b for e in self.steps for b in e[2]}.values(): b.allocate()  # free_intermediates() may have freed some
    for kind, what, bufs, *rest in self.steps:
      bufs = [swap.get(id(b), b) for b in bufs]
      if kind == "copy": _realize.run_copy(bufs[0], bufs[1])
      elif kind == "random": _realize.write_host(bufs[0], what())
      else:
        what(bufs, {**rest[1], **{k: v for k, v in self.var_vals.items() if k in rest[1]}})
        GlobalCounters.kernel_count += 1
    trace.emit("jit", phase="replay", name=getattr(self.fxn, "__name__", "jit"), kernels=self._kernels(), var_vals=dict(self.var_vals))
    for i, nb in fresh.items(): inputs[i].uop = self.moved[i].substitute({self.moved[i].base: nb})
    self.cnt += 1
    return self._returned(inputs) if self.ret_views else self.ret

  @staticmethod
  def _input_views(ret, named: list[tuple], bufs: list[Buffer]) -> dict[int, tuple[int, tuple | None]]:
    """Returned tensors that are inputs or views of them, rebuilt each call (docs/jit.md, "What a replay keeps"): id -> (input index,
    how: None (the input); ("view", ops) (its movement ops: writes reach the input); ("graph", node, uop) (capture uop, input as node))."""
    out: dict[int, tuple[int, tuple | None]] = {}
    for r in _tensors_in(ret):
      for i, (name, inp) in enumerate(named):
        if r is inp: out[id(r)] = (i, None)
        elif (ops := _view_ops(inp, r)) is not None: out[id(r)] = (i, ("view", ops))
        elif (b := r.uop.base).op is Ops.BUFFER and b.buffer is bufs[i]:  # no view of the input tensor, but of its memory
          out[id(r)] = (i, ("graph", inp.uop if inp.uop in r.uop.toposort() else b, r.uop))
        else: continue
        if out[id(r)][1] is not None and set(_view_vars(r.uop)) - set(_view_vars(inp.uop)):
          raise JitError(f"TinyJit: the function returns a view of input {name!r} whose shape has a variable of its own, which a replay "
                         "cannot rebuild for a new value: return a computed tensor (e.g. .contiguous()) instead")
        break
    return out

  def _returned(self, inputs: list[Tensor]):
    """What the function returned, with each input (or view of one) taken from this call's inputs, in the same container."""
    def cur(r):
      if not isinstance(r, Tensor) or (v := self.ret_views.get(id(r))) is None: return r
      i, how = v
      if how is None: return inputs[i]
      if how[0] == "view": return inputs[i]._mv(*how[1])
      _, old, u = how
      return Tensor(u.substitute({old: inputs[i].uop if old.op is not Ops.BUFFER else inputs[i].uop.base}))
    ret = self.ret
    if isinstance(ret, Tensor): return cur(ret)
    if isinstance(ret, tuple): return type(ret)(*map(cur, ret)) if hasattr(ret, "_fields") else tuple(map(cur, ret))
    if isinstance(ret, list): return [cur(r) for r in ret]
    return {k: cur(v) for k, v in ret.items()} if isinstance(ret, dict) else ret

  def _pruned(self, log: list) -> list:
    """prune=True: a kernel whose inputs never change between calls ran once at capture and is not replayed.
    Changing are the inputs, the random buffers, and whatever a replayed kernel writes (to a fixed point)."""
    steps = [e for e in log if e[0] != "data"]
    writes: dict[int, int] = {}
    reads: list[set[int]] = []
    for kind, _, bufs, ast, *_ in steps:
      if kind in ("kernel", "copy"): writes[id(bufs[0])] = writes.get(id(bufs[0]), 0) + 1
      # an in-place update loads its own output (global 0): it reads what it writes
      own = kind == "kernel" and any(u.op is Ops.LOAD and u.src[0].op is Ops.DEFINE_GLOBAL and u.src[0].arg == 0 for u in ast.toposort())
      reads.append({id(b) for b in (bufs if own else bufs[1:])})
    # (a moved input's memory is new on every replay: what writes it always runs)
    fresh = {id(e[2][0]) for e in steps if e[0] == "random"} | {id(u.base.buffer) for u in self.moved.values()}
    changing = {id(b) for b in self.input_bufs} | fresh
    keep = [id(e[2][0]) in fresh for e in steps]
    while True:
      grew = False
      for i, (kind, _, bufs, *_) in enumerate(steps):
        if keep[i]: continue
        out, ins = id(bufs[0]), reads[i]
        # kept: reads something that changes, updates its own output in place, or shares its output with another writer
        # (or runs with variables: their values change between calls)
        if ins & changing or out in ins or writes[out] > 1 or kind == "kernel" and steps[i][4]: keep[i], grew = True, True; changing.add(out)  # noqa: E702
      if not grew: break
    return [e for e, k in zip(steps, keep) if k]
