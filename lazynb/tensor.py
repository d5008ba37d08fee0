"""Tensor: the user-facing, lazy frontend. Every method builds UOps; nothing runs until realize()/numpy().

Everything here is written with three kinds of primitive: elementwise ALU ops, REDUCE_AXIS, and movement ops. There is
no matmul or conv primitive: `a @ b` is a broadcast multiply and a sum; conv2d is a windowed view of the input (movement
ops only), a multiply by the weights, and a sum."""
from __future__ import annotations
import contextlib, contextvars, functools, inspect, math, weakref
from typing import Any, Callable, TYPE_CHECKING
import numpy as np
from lazynb import pipeline
from lazynb.dtype import DType, dtypes, to_dtype, least_upper_dtype, int_fits, wrap_int, UnsupportedDTypeError, from_storage
from lazynb.device import Device, Buffer
from lazynb.helpers import prod, unwrap, Metadata, postorder
from lazynb.uop.ops import UOp, Ops, GroupOp, new_unique, graph_rewrite, variables, VariableError, all_metadata
from lazynb.uop.opmixin import OpMixin
from lazynb.uop.symbolic import symbolic
from lazynb.engine.schedule import ast_vars, newest, check_fresh, StaleReadError, is_contiguous_view_of_buffer, const_of, consumers_of, ScheduleItem
from lazynb.engine.realize import run_schedule
from lazynb.engine.kernelize import kernelize as _kernelize
from lazynb.gradient import compute_gradient, keep_rules, custom_gradient
from lazynb.shape.sizes import broadcast_shape, ArgumentError
from lazynb import tensor_create, tensor_movement, tensor_reduce, tensor_nn, tensor_loss, tensor_index, tensor_math, tensor_dtype
from lazynb.tensor_create import _np_cast, _list_to_numpy
from lazynb.tensor_movement import replay
from lazynb.tensor_math import _log1p
from lazynb.runstate import state

def _all_run(items: list[weakref.ref], becomes: dict[UOp, UOp]):  # (weak: items -> then -> items would be a cycle)
  """Once all of them have run, a handed-out schedule's results are computed values (as when its tensors are read)."""
  if all((si := r()) is None or si.done for r in items): Tensor._adopt(becomes, [])

def last_backward():
  """The loss of the last backward(), while it is alive and not realized yet (an optimizer step realizes it too)."""
  t = state.last_backward() if state.last_backward is not None else None
  return t if t is not None and not t.uop.is_realized else None

class Tensor(OpMixin, elementwise_eq=True):
  """A lazy n-dimensional array. `Tensor([1,2,3])`, `Tensor(np_array)`, `Tensor.randn(3, 4)` ..."""
  training: bool = False
  no_grad: bool = False
  # _view: (weakref to base, ops, seen) for a view of the tensor `base` (see tensor_movement._mv): the movement ops from base's
  # graph to this one, and the graph of base they were applied to (when base's graph changes, the view is rebuilt); () for
  # a new tensor made by movement ops (a pad: it may read another tensor's memory, but owns none); None for any other
  __slots__ = ("_uop", "_view", "_pre", "_requires_grad", "grad", "_scheduled", "__weakref__")
  __hash__ = object.__hash__
  if TYPE_CHECKING:  # OpMixin makes == and != elementwise for Tensor (elementwise_eq=True): to a type checker, they return a Tensor
    def __eq__(self, x) -> Tensor: ...  # type: ignore[override]  # (object's == returns a bool; Tensor's is numpy's kind)
    def __ne__(self, x) -> Tensor: ...  # type: ignore[override]  # (as above)

  def __init__(self, data: Any, device: str | None = None, dtype: DType | str | None = None, requires_grad: bool | None = None):
    dt = to_dtype(dtype) if dtype is not None else None
    dev = Device.canonicalize(device)
    if isinstance(data, UOp): uop = data if data.op is not Ops.BIND else Tensor._const_uop(data, dt or data.dtype, dev, ())  # a bound variable: its value
    elif isinstance(data, Tensor): uop = data.uop if dt is None or dt == data.dtype else data.cast(dt).uop
    elif isinstance(data, (bool, int, float, np.integer, np.floating, np.bool_)) and not isinstance(data, np.ndarray):
      if isinstance(data, np.generic): dt0, data = dtypes.from_np(data.dtype), data.item()  # numpy scalars keep their dtype
      else: dt0 = dt or dtypes.from_py(data)  # (a given dtype first: 2**64-1 is a uint64 though no int64)
      if dt is not None and dtypes.is_int(dt) and type(data) is int and not int_fits(data, dt): data = wrap_int(data, dt)  # as a list's ints
      uop = Tensor._const_uop(data, dt or dt0, dev, ())
    elif isinstance(data, (list, tuple)): uop = Tensor._from_numpy(_list_to_numpy(data, dt), dev)
    elif isinstance(data, np.ndarray): uop = Tensor._from_numpy(_np_cast(data, dt or dtypes.from_np(data.dtype)), dev)
    elif isinstance(data, (bytes, bytearray)): uop = Tensor._from_numpy(np.frombuffer(bytes(data), dtype=np.uint8), dev)
    elif data is None: uop = Tensor._from_numpy(np.zeros((0,), dtype=(dt or dtypes.default_float).np), dev)
    else: raise TypeError(f"cannot make a Tensor from {type(data).__name__}")
    if dt is not None and uop.dtype != dt: uop = uop.cast(dt)
    if requires_grad and uop.base.op is Ops.CONST:  # a leaf must be its own node, not a shared constant
      uop = Tensor._const_buffer(uop)
    if (md := _METADATA.get()) is not None and isinstance(data, UOp): all_metadata[uop] = md
    self._uop: UOp = uop
    self._view: tuple | None = None
    self._claim()
    state.live.add(self)
    self._pre: UOp | None = None  # the graph before the last realize (so backward still works after .item())
    _ = uop.shape, uop.device  # compute (and cache) them now, while the graph is shallow
    self._requires_grad: bool | None = None
    self.requires_grad = requires_grad
    self.grad: Tensor | None = None
    self._scheduled: tuple | None = None  # (uop, items, becomes) of a schedule() not run yet (see schedule)

  @property
  def requires_grad(self) -> bool | None: return self._requires_grad
  @requires_grad.setter
  def requires_grad(self, v: bool | None):
    self._requires_grad = v
    if v: state.grad_tensors.add(self); state.grad_leaves.add(self._uop)  # noqa: E702
    elif self in state.grad_tensors: state.grad_tensors.discard(self); state.grad_leaves.discard(self._uop)  # noqa: E702

  # ---------------------------------------------------------------- properties
  @property
  def uop(self) -> UOp:
    if self._view and (b := self._viewed()) is not None and (bu := b.uop) is not self._view[2]:
      # the tensor this views has a new graph (it was assigned, realized, given memory of its own): the view follows it
      self._uop, self._view = replay(bu, self._view[1]), (self._view[0], self._view[1], bu)
    if (r := state.realized.get(self._uop)) is not None:  # (realized by another's realize: the graph is kept for backward, as _adopt keeps it)
      self._pre, self._uop = self._uop if not self.requires_grad and self._uop.base.op is not Ops.ASSIGN else self._pre, r
      self._claim()
    # a view of memory that an assign has written since: the same view, of the memory's new name
    if state.superseded and (ub := self._uop.base).op is Ops.BUFFER and ub in state.superseded: self._uop = self._uop.substitute({ub: newest(ub)})
    return self._uop
  @uop.setter
  def uop(self, u: UOp): self._uop, self._view = u, None; self._claim()  # noqa: E702 (a tensor given a graph of its own is no view any more)
  # the first tensor to hold memory made for a value owns it (writes into it in place); another that holds it too (an equal
  # result, a reduce over an axis of 1) only reads it: docs/internals.md, "Views and in-place writes"
  def _claim(self) -> None:
    if self._view is None and (b := self._uop.base) in state.owned and ((o := state.owned[b]) is None or o() is None) and is_contiguous_view_of_buffer(self._uop):
      state.owned[b] = weakref.ref(self)
  def _viewed(self) -> Tensor | None:
    """The tensor this one views, held weakly (None once it is gone): docs/internals.md, "Views and in-place writes"."""
    if not self._view: return None
    if (b := self._view[0]()) is None: self._view = ()
    return b
  @property
  def lazydata(self) -> UOp:  # tinygrad's name; after schedule() it is the buffer (view) that will hold the value, as tinygrad's
    return sch[2][u] if (sch := self._scheduled) is not None and sch[0] is (u := self.uop) else self.uop
  @lazydata.setter
  def lazydata(self, u: UOp): self.uop = u
  @property
  def shape(self) -> tuple[int, ...]: return unwrap(self._uop.shape)  # (a tensor's graph always has one)
  @property
  def dtype(self) -> DType: return self._uop.dtype
  @property
  def device(self) -> str: return self._uop.device
  @property
  def ndim(self) -> int: return len(self.shape)
  def numel(self) -> int: return prod(self.shape)
  @property
  def T(self) -> Tensor: return self.transpose()
  def __len__(self):
    if not self.shape: raise TypeError("len() of a 0-d tensor")
    return self.shape[0]
  def __repr__(self): return f"<Tensor {self.uop.op} {self.device} {self.shape} {self.dtype} realized={self.uop.is_realized} grad={self.grad!r}>"
  def __bool__(self): raise TypeError("the truth value of a Tensor is ambiguous; use .item() or .numpy() to read it")

  # ---------------------------------------------------------------- autograd
  def gradient(self, *targets: Tensor, gradient: Tensor | None = None) -> list[Tensor]:
    """d(self)/d(target) for each target, as lazy tensors."""
    if gradient is None:
      if self.numel() != 1: raise RuntimeError(f"gradient of a non-scalar (shape {self.shape}) needs an explicit gradient= of that shape")
      gradient = Tensor.ones(*self.shape, dtype=self.dtype if dtypes.is_float(self.dtype) else dtypes.default_float, device=self.device)
    if gradient.shape != self.shape: raise ValueError(f"gradient shape {gradient.shape} does not match {self.shape}")
    root, undo, stands_for = self._grad_root(tu := {t.uop for t in targets})
    grads = {n: g.substitute(undo) for n, g in compute_gradient(root, gradient.uop, {n for n, u in stands_for.items() if u in tu}).items()}
    gs = [[g for n, g in grads.items() if stands_for[n] is t.uop] for t in targets]
    return [Tensor(sum(g[1:], g[0])) if g else t.zeros_like() for t, g in zip(targets, gs)]
  def _grad_root(self, targets: set[UOp] | None = None) -> tuple[UOp, dict[UOp, UOp], dict[UOp, UOp]]:
    """The graph to differentiate, expression put back -> its buffer, node -> the uop a tensor holds for it now: docs/internals.md, "Gradients through realized values"."""
    root = self._pre if self._pre is not None else self._uop
    for n in [n for n in postorder([root], lambda n: () if n in state.realized else n.src) if n.op is Ops.BUFFER]: check_fresh(n)  # (read: not below a realized node)
    grads, reach = {t.uop for t in list(state.grad_tensors)}, dict[UOp | None, bool]()  # reach: does a wanted tensor lie below (through the expressions
    wants = grads | set(state.grad_leaves) | (targets or set())  # of realized buffers too; never through a detach)?
    def expr(n: UOp) -> UOp | None: return e if n in state.computed_from and n not in grads and (e := state.computed_from[n][0]()) is not n else None
    for n in (whole := postorder([root], lambda n: () if n.op is Ops.DETACH else n.src + tuple(e for e in [expr(n)] if e is not None))):
      reach[n] = n in wants or state.realized.get(n, n) in wants or n.op is not Ops.DETACH and (any(reach.get(s, False) for s in n.src) or reach.get(expr(n), False))
    # put back: a wanted tensor below, or an old name of memory an assign wrote
    def back(n: UOp) -> UOp | None: return e if (e := expr(n)) is not None and (reach[e] or n.base in state.superseded) else None
    def written(r: UOp, n: UOp) -> bool: return r.op is Ops.BUFFER and (b := state.buffers.get(r)) is not None and state.computed_from[n][1].get(id(b), b.version) != b.version
    # node -> rebuilt; expression put back -> its buffer; memory an assign writes (an assign is never rebuilt: its memory to write stays itself)
    new, undo, written_to = dict[UOp, UOp](), dict[UOp, UOp](), {a.src[0].base for a in whole if a.op is Ops.ASSIGN}
    for n in postorder([root], lambda n: (e,) if (e := back(n)) is not None else () if n.op is Ops.DETACH else n.src):  # (one pass, children first)
      if (e := back(n)) is not None:
        if any(written(r, n) and r not in state.superseded for r in [*e.toposort(), n.base]):  # (in place: a TinyJit replay)
          raise StaleReadError("backward() goes through a realized value whose memory, or memory it was computed from, was written since (a TinyJit replay, say): compute the gradient before that write (inside the jitted function)")
        new[n] = new.get(e, e)
        if n.base not in state.superseded: undo[new[n]] = n
      elif n.op is Ops.BUFFER and n in written_to: new[n] = n.contiguous()  # (an old read of memory an assign writes: a copy, made before the write)
      else: new[n] = n if n.op in (Ops.DETACH, Ops.ASSIGN) or (src := tuple(new.get(s, s) for s in n.src)) == n.src else n.replace(src=src)
    keep_rules(new, {n for n in new if back(n) is not None}); origin = {v: k for k, v in new.items() if v is not k}  # noqa: E702 (rebuilt -> node it stands for)
    # (a tensor's memory written since under no_grad: it holds that memory's new name, as Tensor.uop gives it)
    return (r := new[root]), undo, {n: u.substitute({u.base: newest(u.base)}) if (u := state.realized.get(o := origin.get(n, n), o)).base in state.superseded else u for n in r.toposort()}
  def backward(self, gradient: Tensor | None = None) -> Tensor:
    """Accumulate d(self)/d(t) into t.grad for every tensor t with requires_grad=True that self depends on."""
    if Tensor.no_grad: raise RuntimeError("backward() called while gradients are off (Tensor.no_grad is set)")
    root, undo, stands_for = self._grad_root()
    params = [t for t in list(state.grad_tensors) if t.uop in set(stands_for.values())]
    gone = {stands_for[n] for n in root.toposort() if n in state.grad_leaves}  # (a leaf tensor no longer referenced)
    params += self._intermediates(root, stands_for, params, list(state.live), gone)  # as tinygrad: values computed from them get .grad too
    if not params: raise RuntimeError("backward(): no tensor with requires_grad=True contributes to this value")
    grads = self.gradient(*params, gradient=gradient)
    state.last_backward = weakref.ref(self)
    for t, g in zip(params, grads):
      g = g.cast(t.dtype) if g.dtype != t.dtype else g
      t.grad = g if t.grad is None else t.grad + g
    return self
  @staticmethod
  def train(mode: bool = True):
    """`with Tensor.train():` or `@Tensor.train()` sets Tensor.training (dropout, BatchNorm's batch statistics)."""
    return _setting(training=mode)
  @staticmethod
  def test(mode: bool = True):
    """`with Tensor.test():` or `@Tensor.test()` sets Tensor.no_grad, as in tinygrad (Tensor.training is left as it is)."""
    return _setting(no_grad=mode)
  @staticmethod
  def inference_mode():
    """`with Tensor.inference_mode(): ...` turns gradients off (and training off) for evaluation."""
    return _setting(no_grad=True, training=False)

  # ---------------------------------------------------------------- running
  def schedule(self, *lst: Tensor) -> list[ScheduleItem]:
    """The kernels that realize() would run, without running them."""
    if not lst and (sch := self._scheduled) is not None and sch[0] is self._uop and not all(si.done for si in sch[1]): return sch[1]
    ts = (self,) + lst + tuple(Tensor._readers_of_overwritten([self, *lst]))  # (computed before the writes that follow them, as realize does)
    items, becomes = pipeline.call("schedule", [t.uop for t in ts])
    # the items may be run by hand (`for si in items: lower_schedule_item(si).run()`, tinygrad's tutorial): the tensors remember
    # them, so reading one later takes what they computed, or runs the ones not run yet, never schedules its graph again
    for t in ts: t._scheduled = (t.uop, items, becomes) if t.uop in becomes else None
    then = functools.partial(_all_run, [weakref.ref(si) for si in items], becomes)  # run by hand to the last: computed values
    for si in items: si.then = then
    return items
  @staticmethod
  def _sym_count(n: UOp, device: str) -> Tensor: return Tensor(UOp.const(dtypes.float32, n.maximum(0), (UOp(Ops.DEVICE, dtypes.void, (), device),)))
  def schedule_with_vars(self, *lst: Tensor) -> tuple[list[ScheduleItem], dict[UOp, int]]:
    """The kernels, and the value of each variable (symbolic size) they run with."""
    items = self.schedule(*lst)
    return items, {UOp.variable(*v.arg): si.var_vals[v.arg[0]] for si in items if si.var_vals for v in ast_vars(si.ast)}
  def realize(self, *lst: Tensor) -> Tensor:
    Tensor.realize_all(self, *lst)
    return self
  @staticmethod
  def realize_all(*tensors: Tensor):
    Tensor._finish_scheduled(tensors)
    todo = [t for t in tensors if not t.uop.is_realized]
    if not todo: return
    todo += Tensor._readers_of_overwritten(todo)
    items, becomes = pipeline.call("schedule", [t.uop for t in todo])
    run_schedule(items)
    Tensor._adopt(becomes, todo)
  @staticmethod
  def _finish_scheduled(tensors):
    """Tensors whose kernels Tensor.schedule() handed out: run those not run yet, in order, and take the results. Scheduling
    the graph again would be wrong: its assigns were already counted as writes (the old memory is superseded)."""
    for t in tensors:
      if (sch := getattr(t, "_scheduled", None)) is None: continue
      t._scheduled = None
      orig, items, becomes = sch
      if t._uop is not orig: continue  # the tensor changed since
      run_schedule([si for si in items if not si.done])
      Tensor._adopt(becomes, [t])
  @staticmethod
  def _adopt(becomes: dict[UOp, UOp], todo: list[Tensor]):
    """After a schedule ran: each scheduled node is now the buffer (view) that holds it, for these tensors and any graph."""
    # (last to first: of the nodes one buffer stands for, a tensor's own comes first and is the one kept for backward; the
    # scheduler's, from a graph its passes rewrote, may be held by nothing)
    # a graph folded to a constant that a gradient may go through (an empty reduce of a parameter) stays that graph: a constant
    # has no way back to the parameter (folding it again costs no kernel; its value reads no memory, so it cannot go stale)
    keep = {o for o, n in becomes.items() if n.base.op is Ops.CONST and state.grad_leaves and any(u in state.grad_leaves for u in o.toposort())}
    for orig, new in reversed(becomes.items()):
      # a graph of constants only stays a constant (folding beats loading it back from memory)
      if (reads := [n for n in orig.toposort() if n.op is Ops.BUFFER]) and orig not in keep: state.realized.set(orig, new, reads)
      if orig.base.op not in (Ops.ASSIGN, Ops.BUFFER) and new.base.op is Ops.BUFFER:  # (weak: no cycle with `realized`; the versions of the memory)
        state.computed_from[new] = (weakref.ref(orig), {id(b): b.version for r in [*reads, new.base] if (b := state.buffers.get(r)) is not None})
    for t in todo:
      old = t._uop
      t._uop = becomes[old] if old in becomes and old not in keep else t.uop
      t._claim()
      if not t.requires_grad and old.base.op is not Ops.ASSIGN: t._pre = old
  @staticmethod
  def _readers_of_overwritten(todo: list[Tensor]) -> list[Tensor]:
    """Lazy tensors that read memory an assign in `todo` overwrites: computed before the write (docs/internals.md, "Views and in-place writes")."""
    if not state.pending_assigns: return []
    out: list[Tensor] = []
    ids, new, targets = {id(t) for t in todo}, todo, set[UOp]()
    # (reads through a write being done see its new value)
    def reads_old(u: UOp) -> bool: return reads_buffer(u, lambda b: b in targets, lambda n: n.op is Ops.ASSIGN and n.src[0].base in targets)
    while True:
      graph = UOp.sink(*[t.uop for t in new]).toposort()
      more = {n.src[0].base for n in graph if n.op is Ops.ASSIGN and n in state.pending_assigns and n.src[0].base not in state.superseded}
      if not (more - targets):  # also ops in these graphs that read such memory without waiting for its write, read by an op
        # that waits for it ((b + b * 2) + b.assign(...): the sum of the old b, and the new b): computed first
        # (in order, per node: the buffers whose pending write it waits for; those whose old memory it reads, or a done
        # write's, and not waiting; then, backwards, the old reads a waiting op reads, through views too)
        g, users, E = (sink := UOp.sink(*[t.uop for t in todo + out])).toposort(), consumers_of(sink), frozenset[UOp]()
        dep, old, need = dict[UOp, frozenset](), dict[UOp, frozenset](), dict[UOp, frozenset]()
        for x in g:
          dep[x] = E.union(*(dep[s] for s in x.src), {x.src[0].base} if x.op is Ops.ASSIGN and x.src[0].base in targets else E)
          mems = {s.base if (r := state.realized.get(s.base)) is None else r.base for s in x.src}
          old[x] = E.union(*(old[s] for s in x.src), mems & targets) - dep[x]
        for x in reversed(g):
          waits = [dep[c] - {c.src[0].base} if c.op is Ops.ASSIGN else dep[c] | (need[c] if c.op in GroupOp.Movement else E) for c in users.get(x, [])]
          need[x] = old[x] & E.union(*waits)
        return out + [Tensor(n) for n in g if need[n] and (n.op in GroupOp.ALU or n.op is Ops.REDUCE_AXIS)]
      targets |= more
      # (and values that hold the memory itself without owning or viewing it, a pad or a reduce over an axis of 1: copied first)
      def alone(t: Tensor) -> bool: return t._viewed() is None and not t._owns_memory()  # neither views it nor owns it
      new = [t for t in list(state.live) if id(t) not in ids and (not t.uop.is_realized or alone(t)) and reads_old(t.uop)]
      for t in [t for t in new if t.uop.base.op in (Ops.BUFFER, Ops.COPY, Ops.CONTIGUOUS) and alone(t)]: t.uop = t.contiguous().uop
      ids |= {id(t) for t in new}
      out += new
  def kernelize(self, *lst: Tensor) -> Tensor:
    """Group the graph into kernels now (see ScheduleItem); the tensor's uop becomes ASSIGN(BUFFER, KERNEL)."""
    _kernelize([self, *lst])
    return self
  def assign(self, x) -> Tensor:
    """Write x into this tensor's memory, in place: lazily (an ASSIGN) into a buffer it owns whole, at once through a view;
    a tensor without memory of its own takes x's graph (docs/internals.md, "Views and in-place writes")."""
    if not isinstance(x, Tensor): x = Tensor(x, device=self.device, dtype=self.dtype)
    if x.shape != self.shape: raise ValueError(f"assign: shape {x.shape} does not match {self.shape}")
    if x.device != self.device: raise ValueError(f"assign: device {x.device} does not match {self.device}")
    x = x.cast(self.dtype)
    if (base := self._viewed()) is not None: return self._write_through(base, x)
    if self.uop.op is Ops.ASSIGN: self.realize()  # an earlier assign to this tensor is still pending: it happens first
    if self._owns_memory():
      self.uop = UOp(Ops.ASSIGN, self.dtype, (self.uop, x.uop))
      state.pending_assigns.add(self.uop)
      return self
    # no memory of its own: take x's graph, but never memory another tensor has or gets when it is realized (a buffer it
    # owns, its pending host copy, contiguous() or assign): a later write into that tensor would reach this one too
    b = x.uop.base
    self.uop = x.contiguous().uop if b.op in (Ops.COPY, Ops.CONTIGUOUS, Ops.ASSIGN) or b.op is Ops.BUFFER and b in state.owned else x.uop
    return self
  def _write_through(self, base: Tensor, x: Tensor) -> Tensor:
    """assign() on a view: x is written at once into the memory of the tensor this views (base), through the view."""
    base._own_memory()
    return self._store(replay(base.uop, tuple(o for o in unwrap(self._view)[1] if o[0] != "detach")), x)
  def _store(self, u: UOp, x: Tensor) -> Tensor:
    """Write x into the memory u is a view of, now (an ASSIGN through u's ShapeTracker into the buffer)."""
    if prod(unwrap(u.shape)) == 0: return self  # no places: nothing to write
    st = u.st
    if (pads := not _valid_everywhere(st)) or not _one_place_each(st):
      raise RuntimeError(f"cannot write through this view: it {'pads' if pads else 'broadcasts'} ({st}), so some of its places are "
                         "not one place each in memory; write to a slice of the tensor it views instead")
    state.pending_assigns.add(a := UOp(Ops.ASSIGN, self.dtype, (u, x.uop)))
    Tensor(a).realize()
    return self
  def _own_memory(self) -> None:
    """Give this tensor memory of its own, so that a write through one of its views lands in it (docs/internals.md, "Views and in-place writes")."""
    if self.uop.base.op in (Ops.ASSIGN, Ops.COPY, Ops.CONTIGUOUS): self.realize()
    if not self._owns_memory(): self.uop = self.contiguous().realize().uop
  def _owns_memory(self) -> bool:
    """Is this tensor all of a buffer it may write in place (not a view of another tensor, nor a pad of one)?"""
    # (self.uop first: a view whose base is gone stands alone from there; the owner: see _claim)
    return is_contiguous_view_of_buffer(u := self.uop) and self._view is None and (o := state.owned.get(u.base)) is not None and o() is self
  def contiguous(self) -> Tensor:
    """A tensor stored in its own buffer (each call makes a new one: the UNIQUE source keeps equal ones apart)."""
    return Tensor(UOp(Ops.CONTIGUOUS, self.dtype, (self.uop, new_unique())))
  def detach(self) -> Tensor: return self._mv(("detach", None))  # no gradient flows through it; it shares the memory (torch)
  def to(self, device: str) -> Tensor:
    device = Device.canonicalize(device)
    if device == self.device: return self
    # a new tensor each call (the UNIQUE source keeps equal copies apart): its buffer is its own, written in place
    return Tensor(UOp(Ops.COPY, self.dtype, (self.uop, UOp(Ops.DEVICE, dtypes.void, (), device), new_unique())))
  def clone(self) -> Tensor:
    """A copy in memory of its own (gradients flow through it, as torch's); its .grad a clone of this one's, as tinygrad's."""
    ret = self.contiguous()
    if self.grad is not None: ret.grad = self.grad.clone()
    return ret
  def shard(self, devices: tuple[str, ...], axis: int | None = None) -> Tensor:
    """tinygrad's multi-device split. lazynb has no multi-device tensors: sharding over one device is the whole tensor on
    it (tinygrad's one-GPU examples run), over more it is an error rather than a silent copy to one device."""
    if isinstance(devices, str) or not devices: raise TypeError(f"shard takes a tuple of device names, got {devices!r}")
    if axis is not None: self._resolve_axis(axis)  # a bad axis is an error, as in tinygrad
    devs = {Device.canonicalize(d) for d in devices}
    if len(devs) > 1: raise NotImplementedError(f"lazynb has no multi-device tensors: shard over {sorted(devs)} is not supported; use .to(device) for one device")
    return self.to(devs.pop())

  def _buffer(self) -> Buffer:
    t = self.realize()
    if not is_contiguous_view_of_buffer(t.uop): t = t.contiguous().realize()
    return t.uop.base.buffer
  def numpy(self) -> np.ndarray:
    if variables(self.shape): raise VariableError(f"no data if shape is symbolic, shape={self.shape}: reduce over the variable's axes first")
    if self.dtype is dtypes.bfloat16: return self.float().numpy()  # numpy has no bfloat16: float32 values, as tinygrad
    if self.numel() == 0: return np.zeros(self.shape, dtype=self.dtype.np)
    buf = self._buffer().allocate()
    out = buf.numpy().reshape(self.shape)
    return from_storage(out, self.dtype) if self.dtype in dtypes.fp8s else out  # an fp8 buffer's bytes, as float32 values
  def __array__(self, dtype=None, copy=None): return self.numpy() if dtype is None else self.numpy().astype(dtype)
  def item(self) -> Any:
    if self.numel() != 1: raise ValueError(f"item() needs a tensor with one element, this one has shape {self.shape}")
    return self.numpy().reshape(()).item()
  def tolist(self) -> Any: return self.numpy().tolist()
  def data(self) -> memoryview: return self.numpy().data

  # ---------------------------------------------------------------- elementwise
  def _unary(self, op: Ops) -> Tensor: return Tensor(UOp(op, self.dtype, (self.uop,)))
  def _float(self) -> Tensor: return self if dtypes.is_float(self.dtype) else self.cast(dtypes.default_float)

  def _broadcasted(self, y, reverse: bool = False, cmp: bool = False) -> tuple[Tensor, Tensor]:
    """Both operands in one dtype and one shape; a Python number takes the tensor's dtype (docs/internals.md, "Numerics of the Tensor methods")."""
    x = self
    if isinstance(y, Tensor):
      dt = least_upper_dtype(x.dtype, y.dtype)
      if x.device != y.device: raise ValueError(f"tensors are on different devices: {x.device} and {y.device}; use .to()")
    elif isinstance(y, UOp) and variables(y) and dtypes.is_int(y.dtype):  # a symbolic size (a bound Variable): computed in the kernel
      dt = dtypes.int32 if dtypes.is_bool(x.dtype) else x.dtype
      y = Tensor(UOp.const(dt, y, (UOp(Ops.DEVICE, dtypes.void, (), x.device),)))
    elif isinstance(y, (bool, int, float, np.integer, np.floating, np.bool_)):
      if isinstance(y, (np.integer, np.floating, np.bool_)): y = y.item()
      if dtypes.is_float(x.dtype): dt = x.dtype
      elif isinstance(y, float): dt = dtypes.default_float
      elif isinstance(y, bool) or not dtypes.is_bool(x.dtype): dt = x.dtype
      else: dt = dtypes.from_py(y)
      if cmp and not isinstance(y, (bool, float)) and not int_fits(y, dt):  # an exact common type (uint64 vs a negative: float64 keeps the order)
        dt = dtypes.float64 if dt is dtypes.uint64 else dtypes.from_py(y) if y < 0 and dt.itemsize < 4 else dtypes.int64
      y = Tensor(Tensor._const_uop(y, dt, x.device, ()))
    else: raise TypeError(f"unsupported operand type {type(y).__name__} for a Tensor")
    x, y = x.cast(dt), y.cast(dt)
    if reverse: x, y = y, x
    if x.shape != y.shape:
      out = broadcast_shape(x.shape, y.shape)
      x, y = x._broadcast_to(out), y._broadcast_to(out)
    return x, y
  def _broadcast_to(self, shape) -> Tensor:
    return self if self.shape == tuple(shape) else self.reshape((1,) * (len(shape) - self.ndim) + self.shape).expand(shape)
  _BOOL_OPS = {Ops.ADD: Ops.OR, Ops.MUL: Ops.AND, Ops.MAX: Ops.OR}  # bool + is or, * is and, maximum is or
  def _binop(self, op: Ops, y, reverse=False) -> Tensor:
    """OpMixin's hook (add, mul, comparisons, bit ops and their operators): both sides broadcast and promoted to one dtype."""
    x, y = self._broadcasted(y, reverse, cmp=op in GroupOp.Comparison)
    if op in (Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR) and dtypes.is_float(x.dtype):
      raise UnsupportedDTypeError(f"{op.name.lower()} needs int or bool tensors, got {x.dtype}")
    if x.dtype is dtypes.bool: op = Tensor._BOOL_OPS.get(op, op)
    return Tensor(UOp(op, dtypes.bool if op in GroupOp.Comparison else x.dtype, (x.uop, y.uop)))

  # the operators and add, mul, neg, ne, eq, maximum, bitwise_* come from OpMixin; these have Tensor's own numerics
  def sub(self, y, reverse=False) -> Tensor:
    x, y = self._broadcasted(y, reverse)
    if x.dtype is dtypes.bool: raise TypeError("subtraction is not defined for bool tensors; use ^ or logical_not")
    return x.add(y.neg())
  def div(self, y, reverse=False, rounding_mode: str | None = None) -> Tensor:
    """x / y, true division (ints give floats); rounding_mode="trunc" rounds toward 0, "floor" down, and then ints stay
    ints (exact, by integer division: int // 0 is 0, as lazynb's floordiv)."""
    if rounding_mode == "floor": return self.floordiv(y, reverse)
    if rounding_mode == "trunc":
      x, y = self._broadcasted(y, reverse)
      return x.div(y)._unary(Ops.TRUNC) if dtypes.is_float(x.dtype) else x._int_div(y, floor=False)  # (-0.0 kept, as torch)
    if rounding_mode is not None: raise RuntimeError(f"rounding_mode={rounding_mode!r} is not supported: use None, 'trunc' or 'floor'")
    x, y = self._broadcasted(y, reverse)
    x, y = x._float(), y._float()
    return x.mul(y.reciprocal())
  def floordiv(self, y, reverse=False) -> Tensor:
    x, y = self._broadcasted(y, reverse)
    return x.div(y).floor() if dtypes.is_float(x.dtype) else x._int_div(y, floor=True)
  def _int_div(self, y: Tensor, floor: bool, mod: bool = False) -> Tensor:
    """Integer division of broadcast int tensors (mod: its remainder), rounded down or toward 0; by 0 it is 0, min // -1 wraps (no trap)."""
    minus1 = y.eq(-1) if not dtypes.is_unsigned(y.dtype) and y.dtype is not dtypes.bool else y.ne(y)
    safe = (y.eq(0) | minus1).where(1, y)
    r = self._binop(Ops.MOD, safe)  # C's remainder has x's sign (C's / rounds toward 0): where the divisor's differs, floor is one lower
    late = r.ne(0).logical_and((r < 0).ne(safe < 0))
    if mod: return y.eq(0).where(0, late.where(r + safe, r))
    q = self._binop(Ops.IDIV, safe)
    return y.eq(0).where(0, minus1.where(-self, q - late.cast(q.dtype) if floor else q))
  def mod(self, y, reverse=False) -> Tensor:
    x, y = self._broadcasted(y, reverse)
    if not dtypes.is_float(x.dtype): return x._int_div(y, floor=True, mod=True)
    r = x._binop(Ops.MOD, y)  # fmod is exact (x - floor(x/y)*y is not: 1e20 % 3 gave -4.4e12 with a fused multiply-add)
    return (r.ne(0) & (r < 0).ne(y < 0)).where(r + y, r)
  def pow(self, y, reverse=False) -> Tensor:
    if isinstance(y, Tensor) and y.shape == () and (c := const_of(y.uop)) is not None and not isinstance(c.arg, UOp): y = c.arg  # x ** Tensor(2.0)
    if reverse and isinstance(y, float) and 0 < y != 1 and math.isfinite(y) and dtypes.is_float(self.dtype):
      return (self if y == 2 else self * math.log2(y)).exp2()  # 2.0 ** x is exp2(x): a positive base needs no sign cases
    if dtypes.is_int(self.dtype) and not reverse and (isinstance(y, int) and not isinstance(y, bool) or isinstance(y, Tensor) and dtypes.is_int(y.dtype)):
      return self._int_pow(y)
    if not reverse and isinstance(y, (int, float)) and not isinstance(y, bool) and float(y).is_integer() and abs(y) <= 8 and (y >= 0 or dtypes.is_float(self.dtype)):
      n, acc, base = int(abs(y)), None, self
      if n == 0:  # 1 everywhere (NaN and inf too, as numpy and torch), still a function of x: its gradient is 0, as torch's
        one = self.ones_like() if not dtypes.is_bool(self.dtype) else self.ones_like(dtype=dtypes.default_int)
        return self.eq(self).where(one, one) if dtypes.is_float(self.dtype) else one  # (no gradient to carry: a constant)
      while n:
        if n & 1: acc = base if acc is None else acc * base
        base, n = base * base, n >> 1
      out = unwrap(acc)  # (n >= 1: its lowest set bit set acc)
      if y > 0: return out
      ret = out.reciprocal()  # by the chain rule its gradient at 0 and inf is NaN (inf * 0): torch's rule instead
      if dtypes.is_float(self.dtype): custom_gradient(ret.uop, "pow", (self.uop, self.full_like(y).uop), _pow_backward)
      return ret
    if not reverse and isinstance(y, (int, float)) and y == 0.5 and dtypes.is_float(self.dtype): return self.sqrt()  # as numpy's x ** 0.5 (sqrt: -0.0 at -0.0, NaN at -inf)
    x, y = self._broadcasted(y, reverse)
    xf, yf = x._float(), y._float()
    ret = _pow_values(xf, yf)
    if not dtypes.is_float(self.dtype): return ret.round().cast(self.dtype)  # an integer tensor stays one, as tinygrad's
    custom_gradient(ret.uop, "pow", (xf.uop, yf.uop), _pow_backward)
    return ret
  def _int_pow(self, y) -> Tensor:
    """Exact integer powers (wrapping on overflow, as numpy does) by repeated squaring."""
    if isinstance(y, int):
      if y < 0: raise ValueError("integers to negative integer powers are not allowed")
      acc, base, n = self.ones_like(), self, y
      while n:
        if n & 1: acc = acc * base
        n >>= 1
        if n: base = base * base
      return acc
    x, e = self._broadcasted(y)
    acc, base = x.ones_like(), x
    for b in range(8 * e.dtype.itemsize - 1):
      acc = ((e >> b) & 1).ne(0).where(acc * base, acc)
      base = base * base
    return (e < 0).where(0, acc)
  def minimum(self, y) -> Tensor:
    x, y = self._broadcasted(y)
    return x._flip_order().maximum(y._flip_order())._flip_order()
  def _flip_order(self) -> Tensor:
    """An order-reversing map that is its own inverse and cannot overflow (-x wraps at the int minimum): min is built on max."""
    if self.dtype is dtypes.bool: return self.logical_not()
    if dtypes.is_unsigned(self.dtype): return dtypes.max(self.dtype) - self
    return -self if dtypes.is_float(self.dtype) else self ^ -1
  def where(self, x, y) -> Tensor:
    cond = self if self.dtype is dtypes.bool else self.cast(dtypes.bool)
    if isinstance(x, Tensor): x, y = x._broadcasted(y)
    elif isinstance(y, Tensor): y, x = y._broadcasted(x)
    else:
      dt = dtypes.from_py(x) if dtypes.from_py(x) == dtypes.from_py(y) else least_upper_dtype(dtypes.from_py(x), dtypes.from_py(y))
      x = Tensor(Tensor._const_uop(x, dt, self.device, ()))
      x, y = x._broadcasted(y)
    shape = broadcast_shape(cond.shape, x.shape)
    cond, x, y = cond._broadcast_to(shape), x._broadcast_to(shape), y._broadcast_to(shape)
    return Tensor(UOp(Ops.WHERE, x.dtype, (cond.uop, x.uop, y.uop)))

  def __pow__(self, y): return self.pow(y)
  def __rpow__(self, y): return self.pow(y, True)
  def __matmul__(self, y): return self.matmul(y)
  def __rmatmul__(self, y): return Tensor(y).matmul(self) if not isinstance(y, Tensor) else y.matmul(self)
  def _inplace(self, op: Callable, y) -> Tensor:
    """`a += b` and friends: compute, then write into a's memory (assign), as tinygrad does; the dtype must not change."""
    r = op(self, y)
    if r.dtype != self.dtype or r.shape != self.shape:
      raise TypeError(f"in-place operation would change the tensor from {self.shape} {self.dtype} to {r.shape} {r.dtype}; "
                      "write it out of place (a = a op b) or cast first")
    return self.assign(r)
  def __iadd__(self, y): return self._inplace(Tensor.add, y)
  def __isub__(self, y): return self._inplace(Tensor.sub, y)
  def __imul__(self, y): return self._inplace(Tensor.mul, y)
  def __itruediv__(self, y): return self._inplace(Tensor.div, y)
  def __ifloordiv__(self, y): return self._inplace(Tensor.floordiv, y)
  def __imod__(self, y): return self._inplace(Tensor.mod, y)
  def __ipow__(self, y): return self._inplace(Tensor.pow, y)
  def __imatmul__(self, y): return self._inplace(Tensor.matmul, y)
  def __iand__(self, y): return self._inplace(Tensor.__and__, y)
  def __ior__(self, y): return self._inplace(Tensor.__or__, y)
  def __ixor__(self, y): return self._inplace(Tensor.__xor__, y)
  def __ilshift__(self, y): return self._inplace(Tensor.__lshift__, y)
  def __irshift__(self, y): return self._inplace(Tensor.__rshift__, y)
  def __abs__(self): return self.abs()
  def lshift(self, y, reverse=False) -> Tensor: return self._shift(Ops.SHL, y, reverse)
  def rshift(self, y, reverse=False) -> Tensor: return self._shift(Ops.SHR, y, reverse)
  def _shift(self, op: Ops, y, reverse=False) -> Tensor:
    """A shift by the width or more, or by < 0, gives 0 (-1 for >> of a negative), as numpy and torch (docs/internals.md, "Numerics of the Tensor methods")."""
    x, y = self._broadcasted(y, reverse)
    if x.dtype is dtypes.bool: return x._binop(op, y)
    ok = (y >= 0) & (y < 8 * x.dtype.itemsize)
    fill = (x < 0).where(-1, 0) if op is Ops.SHR and not dtypes.is_unsigned(x.dtype) else 0
    return ok.where(x._binop(op, ok.where(y, 0)), fill)
  def __invert__(self): return self.logical_not() if self.dtype is dtypes.bool else self ^ (-1 if not dtypes.is_unsigned(self.dtype) else dtypes.max(self.dtype))
  def logical_not(self) -> Tensor: return self.cast(dtypes.bool)._binop(Ops.XOR, True)
  def logical_and(self, y) -> Tensor: return self.cast(dtypes.bool) & (y.cast(dtypes.bool) if isinstance(y, Tensor) else bool(y))
  def logical_or(self, y) -> Tensor: return self.cast(dtypes.bool) | (y.cast(dtypes.bool) if isinstance(y, Tensor) else bool(y))

  # unary math, all built from EXP2, LOG2, SIN, SQRT, RECIP and arithmetic
  def reciprocal(self) -> Tensor: return self._float()._unary(Ops.RECIP)
  def exp2(self) -> Tensor: return self._float()._unary(Ops.EXP2)
  def log2(self) -> Tensor: return self._float()._unary(Ops.LOG2)
  def exp(self) -> Tensor: return (self._float() * (1 / math.log(2))).exp2()
  def log(self) -> Tensor: return self.log2() * math.log(2)
  def sqrt(self) -> Tensor: return self._float()._unary(Ops.SQRT)
  def rsqrt(self) -> Tensor: return self.sqrt().reciprocal()
  def sin(self) -> Tensor: return self._float()._unary(Ops.SIN)
  def cos(self) -> Tensor:
    """1 - 2 sin(x/2)^2, and sin(2x) / (2 sin(x)) near a zero of cos (why: docs/internals.md, "Numerics of the Tensor methods")."""
    x = self._float()
    s = (x * 0.5).sin()
    c = 1 - 2 * s * s
    near = (c.abs() < 0.5) & (x.abs() < dtypes.max(x.dtype) / 2)  # (2x must not overflow)
    xn = near.where(x, 1.0)
    return near.where((xn * 2).sin() / (xn.sin() * 2), c)
  def tan(self) -> Tensor: return self.sin() / self.cos()
  def trunc(self) -> Tensor:
    """Toward zero; a zero result is +0.0 (tinygrad's documented `trunc(-0.5)`, where numpy keeps -0.0), so ceil's too."""
    if not dtypes.is_float(self.dtype): return self
    t = self._unary(Ops.TRUNC)
    return t.eq(0).where(0.0, t)
  def floor(self) -> Tensor:
    if not dtypes.is_float(self.dtype): return self
    t = self._unary(Ops.TRUNC)  # (floor(-0.0) stays -0.0, as numpy)
    return (self < t).where(t - 1, t)
  def ceil(self) -> Tensor:
    if not dtypes.is_float(self.dtype): return self
    t = self.trunc()
    return (self > t).where(t + 1, t)
  def round(self) -> Tensor:
    """Round half to even, as numpy does."""
    if not dtypes.is_float(self.dtype): return self
    f = self.floor()
    diff = self - f
    even = (f % 2).eq(0)
    return (diff > 0.5).where(f + 1, (diff < 0.5).where(f, even.where(f, f + 1)))
  def square(self) -> Tensor: return self * self
  def abs(self) -> Tensor:
    """|x|, +0.0 at zero with slope 0 there (as torch), NaN stays NaN."""
    if self.dtype is dtypes.bool or dtypes.is_unsigned(self.dtype): return self
    return (self < 0).where(-self, self.ne(0).where(self, 0) if dtypes.is_float(self.dtype) else self)
  def sign(self) -> Tensor:
    if self.dtype is dtypes.bool: return self
    if dtypes.is_unsigned(self.dtype): return (self > 0).cast(self.dtype)
    ret = (self > 0).cast(self.dtype) - (self < 0).cast(self.dtype)
    return self.isnan().where(self, ret) if dtypes.is_float(self.dtype) else ret
  def relu(self) -> Tensor: return ((self > 0) | self.ne(self)).where(self, 0)  # NaN stays NaN, as in numpy and torch
  # The activations below are written so that no intermediate overflows: an inf that a where() discards still
  # meets a zero gradient there, and 0 * inf is NaN. exp(-|x|) is always in (0, 1].
  def sigmoid(self) -> Tensor:
    e = (-_mag(x := self._float())).exp()
    return (x < 0).where(e, 1.0) / (1 + e)
  def tanh(self) -> Tensor:
    m = -2.0 * _mag(x := self._float())
    t = -_expm1(m) / (1 + m.exp())
    return (x < 0).where(-t, t)
  def isnan(self) -> Tensor: return self.ne(self)
  def isinf(self, detect_positive: bool = True, detect_negative: bool = True) -> Tensor:
    return (self.eq(math.inf) & detect_positive) | (self.eq(-math.inf) & detect_negative)
  def elu(self, alpha: float = 1.0) -> Tensor: return (self > 0).where(self, alpha * _expm1((self > 0).where(0, self)._float()))
  def softplus(self, beta: float = 1.0) -> Tensor:
    """max(x, 0) + log(1 + exp(-|x|)): exp cannot overflow (both sides of x = 0 pick the same branch, for the gradient)."""
    x = self._float() * beta
    return ((x < 0).where(0.0, x) + _log1p((-_mag(x)).exp())) * (1 / beta)
  def gelu(self) -> Tensor:
    """The tanh approximation; 0.5 * (1 + tanh(u)) = sigmoid(2u) keeps the tail for negative x."""
    x = self._float()
    return x * (2 * math.sqrt(2 / math.pi) * x * (1 + 0.044715 * x * x)).sigmoid()
  def erf(self) -> Tensor:
    """Abramowitz and Stegun 7.1.26 (max error 1.5e-7) on |x|, the sign put back by a where: its slope at 0 is 2/sqrt(pi)."""
    x = self._float()
    a = ((m := _mag(x)) > 10).where(10.0, m)  # (erf is 1.0 in float32 from 4 on: at +-inf the gradient is 0, not inf * 0; NaN stays)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    y = 1.0 - poly * (-(a * a)).exp()
    return (x < 0).where(-y, y)
  def clip(self, min_=None, max_=None) -> Tensor:
    if min_ is None and max_ is None: raise ArgumentError("clip needs min_ or max_")
    if dtypes.is_int(self.dtype):  # an int bound past the dtype's range on the side where it changes nothing stays in range (numpy)
      min_, max_ = (max(min_, dtypes.min(self.dtype)) if isinstance(min_, int) else min_), (min(max_, dtypes.max(self.dtype)) if isinstance(max_, int) else max_)
    x = self if min_ is None else (self < min_).where(min_, self)  # (not maximum(): slope 1 at a bound, as torch and tinygrad)
    return x if max_ is None else (x > max_).where(max_, x)
  clamp = clip
  def lerp(self, end: Tensor, weight) -> Tensor: return self + (end - self) * weight

  # ---------------------------------------------------------------- the methods written in the topical files
  # Each tensor_*.py file holds functions of a Tensor (`def sum(self: Tensor, axis=None, ...)`); naming one here makes it
  # a method, as if its def stood in this class: `t.sum()` is `tensor_reduce.sum(t)`. A type checker sees them the same
  # way, so it knows the whole class. Last in the class: `int`, `float`, `bool`, `max`, ... hide Python's from here on.
  # making tensors (tensor_create.py)
  _from_numpy = staticmethod(tensor_create._from_numpy); _const_buffer = staticmethod(tensor_create._const_buffer)
  _const_uop = staticmethod(tensor_create._const_uop); full = classmethod(tensor_create.full); zeros = classmethod(tensor_create.zeros)
  ones = classmethod(tensor_create.ones); empty = classmethod(tensor_create.empty); from_blob = classmethod(tensor_create.from_blob); full_like = tensor_create.full_like
  zeros_like = tensor_create.zeros_like; ones_like = tensor_create.ones_like; rand_like = tensor_create.rand_like
  randn_like = tensor_create.randn_like; empty_like = tensor_create.empty_like; _host = classmethod(tensor_create._host)
  _eager = classmethod(tensor_create._eager); manual_seed = staticmethod(tensor_create.manual_seed); rand = classmethod(tensor_create.rand)
  randn = classmethod(tensor_create.randn); _threefry_random_bits = classmethod(tensor_create._threefry_random_bits); uniform = classmethod(tensor_create.uniform); normal = classmethod(tensor_create.normal)
  randint = classmethod(tensor_create.randint); randperm = classmethod(tensor_create.randperm); arange = classmethod(tensor_create.arange)
  eye = classmethod(tensor_create.eye)
  # movement (tensor_movement.py)
  _resolve_axis = tensor_movement._resolve_axis; _as_vector = tensor_movement._as_vector; reshape = tensor_movement.reshape
  view = tensor_movement.view; permute = tensor_movement.permute; expand = tensor_movement.expand; pad = tensor_movement.pad
  _pad_pairs = tensor_movement._pad_pairs; _pad_edges = tensor_movement._pad_edges
  _mv_pad = tensor_movement._mv_pad; shrink = tensor_movement.shrink; flip = tensor_movement.flip; _mv = tensor_movement._mv
  transpose = tensor_movement.transpose; flatten = tensor_movement.flatten; unflatten = tensor_movement.unflatten; squeeze = tensor_movement.squeeze
  unsqueeze = tensor_movement.unsqueeze; __getitem__ = tensor_movement.__getitem__; __setitem__ = tensor_movement.__setitem__
  cat = tensor_movement.cat; stack = tensor_movement.stack; repeat = tensor_movement.repeat; split = tensor_movement.split
  chunk = tensor_movement.chunk
  # reductions (tensor_reduce.py)
  _axes = tensor_reduce._axes; _reduce = tensor_reduce._reduce; sum = tensor_reduce.sum; prod = tensor_reduce.prod; max = tensor_reduce.max
  min = tensor_reduce.min; any = tensor_reduce.any; all = tensor_reduce.all; mean = tensor_reduce.mean; var = tensor_reduce.var
  std = tensor_reduce.std; softmax = tensor_reduce.softmax; log_softmax = tensor_reduce.log_softmax; logsumexp = tensor_reduce.logsumexp
  argmax = tensor_reduce.argmax; argmin = tensor_reduce.argmin; cumsum = tensor_reduce.cumsum
  # matmul, conv, pooling, norms, activations (tensor_nn.py)
  dot = tensor_nn.dot; matmul = tensor_nn.matmul
  linear = tensor_nn.linear; sequential = tensor_nn.sequential; _pool = tensor_nn._pool
  _padding_pairs = staticmethod(tensor_nn._padding_pairs); conv2d = tensor_nn.conv2d; _conv_backward = tensor_nn._conv_backward
  conv_transpose2d = tensor_nn.conv_transpose2d; max_pool2d = tensor_nn.max_pool2d; _pool_args = tensor_nn._pool_args; avg_pool2d = tensor_nn.avg_pool2d
  layernorm = tensor_nn.layernorm; batchnorm = tensor_nn.batchnorm; dropout = tensor_nn.dropout
  scaled_dot_product_attention = tensor_nn.scaled_dot_product_attention; relu6 = tensor_nn.relu6; hardsigmoid = tensor_nn.hardsigmoid
  leaky_relu = tensor_nn.leaky_relu; silu = tensor_nn.silu; swish = tensor_nn.swish; quick_gelu = tensor_nn.quick_gelu; mish = tensor_nn.mish
  hardswish = tensor_nn.hardswish; hardtanh = tensor_nn.hardtanh; celu = tensor_nn.celu; selu = tensor_nn.selu; softsign = tensor_nn.softsign
  # losses (tensor_loss.py)
  _do_reduction = tensor_loss._do_reduction; one_hot = tensor_loss.one_hot; _pick = tensor_loss._pick
  sparse_categorical_crossentropy = tensor_loss.sparse_categorical_crossentropy; _smoothed_pick = tensor_loss._smoothed_pick
  cross_entropy = tensor_loss.cross_entropy; nll_loss = tensor_loss.nll_loss; binary_crossentropy = tensor_loss.binary_crossentropy
  binary_crossentropy_logits = tensor_loss.binary_crossentropy_logits
  # indexing with tensors, gather, scatter, masks (tensor_index.py)
  _index_tensors = tensor_index._index_tensors; _advanced = tensor_index._advanced; _gather_index = tensor_index._gather_index
  _setitem_index = tensor_index._setitem_index; _check_index = tensor_index._check_index; gather = tensor_index.gather
  _matches = tensor_index._matches; _src = tensor_index._src; _fill_out = tensor_index._fill_out; scatter = tensor_index.scatter
  scatter_reduce = tensor_index.scatter_reduce; max_unpool2d = tensor_index.max_unpool2d; masked_fill = tensor_index.masked_fill
  masked_select = tensor_index.masked_select
  # more math, sorting, einsum, initializers (tensor_math.py)
  atan = tensor_math.atan; asin = tensor_math.asin; acos = tensor_math.acos; sinh = tensor_math.sinh; cosh = tensor_math.cosh
  asinh = tensor_math.asinh; acosh = tensor_math.acosh; atanh = tensor_math.atanh; copysign = tensor_math.copysign; isfinite = tensor_math.isfinite
  isclose = tensor_math.isclose; bitwise_not = tensor_math.bitwise_not; idiv = tensor_math.idiv; const_like = tensor_math.const_like
  _cum = tensor_math._cum; cummax = tensor_math.cummax; cumprod = tensor_math.cumprod; logcumsumexp = tensor_math.logcumsumexp
  sort = tensor_math.sort; topk = tensor_math.topk; triu = tensor_math.triu; tril = tensor_math.tril; _tri = tensor_math._tri
  roll = tensor_math.roll; repeat_interleave = tensor_math.repeat_interleave; std_mean = tensor_math.std_mean; var_mean = tensor_math.var_mean
  meshgrid = tensor_math.meshgrid; rearrange = tensor_math.rearrange; einsum = staticmethod(tensor_math.einsum)
  interpolate = tensor_math.interpolate; size = tensor_math.size; _intermediates = staticmethod(tensor_math._intermediates)
  requires_grad_ = tensor_math.requires_grad_; to_ = tensor_math.to_; replace = tensor_math.replace; from_uop = classmethod(tensor_math.from_uop)
  contiguous_backward = tensor_math.contiguous_backward; linspace = classmethod(tensor_math.linspace)
  scaled_uniform = classmethod(tensor_math.scaled_uniform); glorot_uniform = classmethod(tensor_math.glorot_uniform)
  kaiming_uniform = classmethod(tensor_math.kaiming_uniform); kaiming_normal = classmethod(tensor_math.kaiming_normal)
  multinomial = tensor_math.multinomial
  # casts and dtypes (tensor_dtype.py)
  cast = tensor_dtype.cast; float = tensor_dtype.float; half = tensor_dtype.half; int = tensor_dtype.int; long = tensor_dtype.long
  bool = tensor_dtype.bool; element_size = tensor_dtype.element_size; nbytes = tensor_dtype.nbytes
  is_floating_point = tensor_dtype.is_floating_point; bitcast = tensor_dtype.bitcast

# Metadata: each node a Tensor method makes is tagged with the method's name (the outermost call: relu's own nodes are
# "relu"), and a kernel lists the tags of its nodes (ScheduleItem.metadata, the DEBUG=2 line), as tinygrad 0.10's
_METADATA: contextvars.ContextVar[Metadata | None] = contextvars.ContextVar("_METADATA", default=None)
@contextlib.contextmanager
def _setting(**values):  # Tensor's class settings given `values` inside the block (or the decorated function), put back after
  old = {k: getattr(Tensor, k) for k in values}
  for k, v in values.items(): setattr(Tensor, k, v)
  try: yield
  finally:
    for k, v in old.items(): setattr(Tensor, k, v)
def _tagged(fn, md: Metadata):
  @functools.wraps(fn)
  def call(*args, **kwargs):
    if _METADATA.get() is not None: return fn(*args, **kwargs)
    token = _METADATA.set(md)
    try: return fn(*args, **kwargs)
    finally: _METADATA.reset(token)
  return call
for _name in dir(Tensor):
  if _name.startswith("_") and not (_name.endswith("__") and hasattr(OpMixin, _name) or _name in ("__getitem__", "__setitem__")) or \
     _name in ("__init__", "__init_subclass__", "__repr__", "__hash__", "backward", "gradient", "realize", "schedule"): continue
  _fn = inspect.getattr_static(Tensor, _name)
  if isinstance(_fn, (staticmethod, classmethod)): setattr(Tensor, _name, type(_fn)(_tagged(_fn.__func__, Metadata(_fn.__func__.__name__))))
  elif inspect.isfunction(_fn): setattr(Tensor, _name, _tagged(_fn, Metadata(_fn.__name__)))

def reads_buffer(u: UOp, found: Callable[[UOp], bool], skip: Callable[[UOp], bool] = lambda n: False, past_buffers: bool = True) -> bool:
  """Does u's graph (its realized parts as their memory, nothing below a node `skip` names) read a BUFFER that `found`
  names? False if it reads memory an assign has overwritten since: an error when it is read, not here."""
  stack, seen, hit = [u], set(), False
  while stack:
    if (n := stack.pop()) in seen or skip(n): continue
    seen.add(n)
    if (r := state.realized.get(n)) is not None:
      # a cached result reads what it was computed from too: once that is written, the cache forgets it (x.sum() of the old x)
      if n.op not in (Ops.ASSIGN, Ops.CONTIGUOUS): stack.extend(n.src)
      n = r
    if n.base.op is Ops.BUFFER:
      if n.base in state.superseded: return False
      hit = hit or found(n.base)
      if not past_buffers: continue
    stack.extend(n.src)
  return hit

def _valid_everywhere(st) -> bool:
  """Does every index of the view land in memory (no padding reached)? A strided slice pads inside, but never reads it."""
  if not st.has_mask: return True
  _, valid = st.to_indexed_uops([UOp(Ops.SPECIAL, dtypes.index, (), (f"i{d}", s)) for d, s in enumerate(st.shape)])
  return graph_rewrite(valid, symbolic, name="view: is every index in memory?").is_const(True)

def _one_place_each(st) -> bool:
  """Does each place of the view name a place in memory of its own (no broadcast)? A stride of 0 over more than one valid
  index looks like one; a later view may still keep one index of it only (`t.expand(2, 3)[1]`), so then they are counted."""
  def spread(v) -> bool: return any(s == 0 and hi - lo > 1 for s, (lo, hi) in zip(v.strides, v.mask or [(0, n) for n in v.shape]))
  if not any(spread(v) for v in st.views): return True
  if st.vars(): return False  # (sizes, offsets or masks with variables)
  idx, valid = np.arange(prod(st.shape)), np.ones(prod(st.shape), bool)
  for v in reversed(st.views):  # outermost first: each view's memory index is an index into the view below it
    at = np.unravel_index(idx, v.shape) if v.shape else ()
    if v.mask: valid &= np.logical_and.reduce([(lo <= a) & (a < hi) for a, (lo, hi) in zip(at, v.mask)])
    idx = v.offset + sum((a * s for a, s in zip(at, v.strides)), np.zeros_like(idx))
  return len(np.unique(idx[valid])) == int(valid.sum())
def _pow_values(x: Tensor, y: Tensor) -> Tensor:
  """x ** y for float tensors, with C's pow (as numpy and torch) at every edge (docs/internals.md, "Numerics of the Tensor methods")."""
  mag = (y * _mag(x).log2()).exp2()
  y_int = y.trunc().eq(y)  # ±inf counts as an even integer; NaN as neither
  odd = y_int & (y.abs() % 2).eq(1)
  neg = (x < 0) | (x.eq(0) & (x.reciprocal() < 0))
  ret = (neg & odd).where(-mag, mag)
  ret = ((x < 0) & x.isinf().logical_not() & y_int.logical_not()).where(math.nan, ret)
  return (y.eq(0) | x.eq(1) | (x.eq(-1) & y.isinf())).where(1.0, ret)
def _pow_backward(grad, inputs, wanted):
  """pow's gradients as torch defines them (docs/internals.md, "Numerics of the Tensor methods")."""
  g, x, y = Tensor(grad), Tensor(inputs[0]), Tensor(inputs[1])
  gx = y.eq(0).where(0.0, y * _pow_values(x, y - 1)) * g if wanted[0] else None
  gy = (x.eq(0) & (y >= 0)).where(0.0, _pow_values(x, y) * x.log()) * g if wanted[1] else None
  return tuple(None if t is None else t.uop for t in (gx, gy))
def _mag(x: Tensor) -> Tensor:
  """|x| with slope +1 at 0: a formula split at x = 0 (the activations above) takes its right-hand side there."""
  return (x < 0).where(-x, x)
def _expm1(x: Tensor) -> Tensor:
  """exp(x) - 1 without the cancellation near 0 (a series there); x is a float tensor."""
  s = (small := x.abs() < 1e-2).where(x, 0.0)  # the series sees small values only: a huge x**3 it discards would poison the gradient
  return small.where(s * (1 + s * (0.5 + s * (1 / 6))), x.exp() - 1)
