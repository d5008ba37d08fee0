"""TinyJit: run a function's kernels without re-tracing it.

Call 1 runs the function normally (warm-up: everything gets compiled). Call 2 runs it again while
recording everything it executes, in order: kernels and copies with the Buffers they touched, and every
piece of data the host wrote into a buffer (random numbers, arange, lists turned into tensors). Calls 3+
skip Python entirely and replay that record, with the buffers of the new input tensors swapped in.

What a replay keeps, and what it redoes:
  - Tensor arguments (positional, and keyword ones matched by name) are the inputs: their buffers change.
  - Random numbers made inside the function are drawn again on every replay, from the same generator in the
    same order as a plain call would, so `Tensor.manual_seed` gives the same numbers jitted or not.
  - Any other host data made inside the function (`Tensor([step])`) is frozen at capture. If it differed
    between the first two calls, capturing it would give wrong numbers later, so that is an error.
  - Other arguments (Python numbers, strings) are frozen too: a replay with different ones is an error.
  - Variables (symbolic sizes) are not frozen: a bound Variable passed as an argument, or in the shape of an input,
    gives the replayed kernels its new value (one compiled kernel for every sequence length).
  - What it returns: the computed tensors are the capture call's (each replay writes the new values into their buffers);
    an input, or a view of one, is this call's input (through the same views); other values are the capture call's.
"""
from __future__ import annotations
import functools
from typing import Any
from lazynb import trace
from lazynb.device import Buffer
from lazynb.helpers import GlobalCounters
from lazynb.uop.ops import Ops, GroupOp, UOp, unbind, variables
from lazynb.engine import realize as _realize
from lazynb.engine.schedule import chain_st
from lazynb.runstate import state
from lazynb.tensor import Tensor

class JitError(RuntimeError): pass

def _tensors_in(ret: Any) -> list[Tensor]:
  """The tensors a function returned: itself, or inside a tuple, list or dict (one level deep, as tinygrad)."""
  if isinstance(ret, Tensor): return [ret]
  if isinstance(ret, (tuple, list)): return [r for r in ret if isinstance(r, Tensor)]
  if isinstance(ret, dict): return [r for r in ret.values() if isinstance(r, Tensor)]
  return []

def _view_vars(u: UOp) -> list[UOp]:
  """The variables in the sizes of a chain of views (movement ops keep theirs in their args)."""
  return variables([n.arg for n in u.toposort() if n.op in GroupOp.Movement])

def _same_value(a: Any, b: Any) -> bool:
  try: return bool(a is b or type(a) is type(b) and a == b)
  except Exception: return False  # noqa: BLE001 (objects whose == is not a plain yes/no: identity only)

class TinyJit:
  def __init__(self, fxn, captured=None, prune: bool = False):
    if captured is not None: raise NotImplementedError("TinyJit(captured=...) (a saved capture) is not supported; capture by calling")
    self.fxn, self.prune = fxn, prune
    self.reset()
    functools.update_wrapper(self, fxn)
  def reset(self):
    """Forget the capture: the next two calls warm up and capture again (e.g. for new input shapes)."""
    self.cnt, self.captured, self.ret = 0, [], None
    self.ret_views: dict[int, tuple[int, UOp | None]] = {}
    self.rebound: dict[int, UOp] = {}
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
    named, frozen = self._inputs(args, kwargs)
    inputs = [t for _, t in named]
    bufs = [t.uop.base.buffer for t in inputs]  # (before the function runs: an assign may give an input a graph of its own)
    # the kernels read an input's underlying buffer through its view: the view must stay the same (up to variables' values)
    vals: dict[UOp, int] = {}
    spec = [(n, tuple(unbind(s, vals) for s in t.shape), t.dtype, t.device, chain_st(t.uop).unbind(vals)) for n, t in named]
    frozen = [(n, unbind(a, vals) if isinstance(a, UOp) and a.op is Ops.BIND else a) for n, a in frozen]
    self.var_vals = {v.arg[0]: x for v, x in vals.items()}
    if self.cnt >= 2: return self._replay(spec, inputs, frozen)
    # a result computed from these inputs before (the expression cache) would not be recorded: it is computed again
    state.capturing, state.realized.volatile = [], {id(t.uop.base.buffer) for t in inputs}
    try:
      ret = self.fxn(*args, **kwargs)
      Tensor.realize_all(*_tensors_in(ret))
    finally: log, state.capturing, state.realized.volatile = state.capturing, None, set()
    data = [(e[1], e[3]) for e in log if e[0] == "data"]
    if self.cnt == 0:
      self.warm_data, self.cnt = data, 1
      return ret
    if data != self.warm_data:
      raise JitError("TinyJit: the function made different data from Python values on its first two calls "
                     f"({len(self.warm_data)} then {len(data)} host arrays, or different contents). A capture would freeze those values: "
                     "pass changing values as Tensor arguments instead")
    views = self._input_views(ret, named, bufs)
    # an input the function gave a new graph (assign on a view whose base is gone: it took the value's graph) gets that
    # graph again on every replay, as a plain call gives it: the capture's, whose buffers each replay writes
    self.rebound = {i: t.uop for i, t in enumerate(inputs) if t.uop.base.op is not Ops.BUFFER or t.uop.base.buffer is not bufs[i]}
    if not any(e[0] in ("kernel", "copy", "random") for e in log) and not views:
      raise JitError("TinyJit: nothing was jitted (the function ran no kernel): return or realize the tensors it computes")
    self.input_spec, self.input_bufs, self.frozen_args, self.ret_views = spec, bufs, frozen, views
    self.captured = self._pruned(log) if self.prune else [e for e in log if e[0] != "data"]
    self.ret, self.cnt = ret, 2
    trace.emit("jit", phase="capture", name=getattr(self.fxn, "__name__", "jit"), kernels=self._kernels(), var_vals=dict(self.var_vals))
    return ret

  def _kernels(self) -> int: return sum(e[0] == "kernel" for e in self.captured)

  def _replay(self, spec, inputs, frozen):
    if [s[:4] for s in spec] != [s[:4] for s in self.input_spec] or spec != self.input_spec:
      raise JitError(f"TinyJit: inputs changed since capture: got {[s[:3] for s in spec]}, captured {[s[:3] for s in self.input_spec]} "
                     "(names, shapes, dtypes, devices and views must match); call .reset() to capture again")
    if len(frozen) != len(self.frozen_args) or not all(n == m and _same_value(a, b) for (n, a), (m, b) in zip(frozen, self.frozen_args)):
      raise JitError(f"TinyJit: non-Tensor arguments changed since capture: got {frozen!r}, captured {self.frozen_args!r}; they are "
                     "frozen into the captured kernels, so pass changing values as Tensors (or call .reset())")
    swap = {id(old): t.uop.base.buffer for old, t in zip(self.input_bufs, inputs)}
    for kind, what, bufs, *rest in self.captured:
      bufs = [swap.get(id(b), b) for b in bufs]
      if kind == "copy": _realize.run_copy(bufs[0], bufs[1])
      elif kind == "random": _realize.write_host(bufs[0], what())
      else:
        what(bufs, {**rest[1], **{k: v for k, v in self.var_vals.items() if k in rest[1]}})
        GlobalCounters.kernel_count += 1
    trace.emit("jit", phase="replay", name=getattr(self.fxn, "__name__", "jit"), kernels=self._kernels(), var_vals=dict(self.var_vals))
    for i, u in self.rebound.items(): inputs[i].uop = u
    self.cnt += 1
    return self._returned(inputs) if self.ret_views else self.ret

  @staticmethod
  def _input_views(ret, named: list[tuple], bufs: list[Buffer]) -> dict[int, tuple[int, UOp | None]]:
    """The returned tensors that are inputs, or views of inputs: id -> (input index, the node a replay puts this call's input
    in place of; None: the input itself). A replay writes new values into the captured outputs' buffers, but an input's
    memory is the caller's: those are rebuilt on every call."""
    out: dict[int, tuple[int, UOp | None]] = {}
    for r in _tensors_in(ret):
      if (b := r.uop.base).op is not Ops.BUFFER or (i := next((i for i, ib in enumerate(bufs) if b.buffer is ib), None)) is None: continue
      name, inp = named[i]
      if r is inp:
        out[id(r)] = (i, None)
        continue
      old = inp.uop if inp.uop in r.uop.toposort() else b  # views on top of the input tensor, or of its memory
      if set(_view_vars(r.uop)) - set(_view_vars(old)):
        raise JitError(f"TinyJit: the function returns a view of input {name!r} whose shape has a variable of its own, which a replay "
                       "cannot rebuild for a new value: return a computed tensor (e.g. .contiguous()) instead")
      out[id(r)] = (i, old)
    return out

  def _returned(self, inputs: list[Tensor]):
    """What the function returned, with each input (or view of one) taken from this call's inputs, in the same container."""
    def cur(r):
      if not isinstance(r, Tensor) or (v := self.ret_views.get(id(r))) is None: return r
      i, old = v
      if old is None: return inputs[i]
      return Tensor(r.uop.substitute({old: inputs[i].uop if old.op is not Ops.BUFFER else inputs[i].uop.base}))
    ret = self.ret
    if isinstance(ret, Tensor): return cur(ret)
    if isinstance(ret, tuple): return type(ret)(*map(cur, ret)) if hasattr(ret, "_fields") else tuple(map(cur, ret))
    if isinstance(ret, list): return [cur(r) for r in ret]
    if isinstance(ret, dict): return {k: cur(v) for k, v in ret.items()}
    return ret

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
    changing = {id(b) for b in self.input_bufs} | {id(e[2][0]) for e in steps if e[0] == "random"}
    keep = [e[0] == "random" for e in steps]
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
