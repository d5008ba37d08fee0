"""Everything realize and autograd remember between calls, in one object: `state` (one per process).

The graph holds no state (a UOp is an immutable, hash-consed value), so what realize() and backward() must remember
lives here, one registry per field, almost all weak; this module imports nothing from lazynb, so every layer shares
one object (docs/internals.md, "Realize and autograd state")."""
from __future__ import annotations
import atexit, weakref

class Realized:
  """The expression cache: compute node -> the (view of a) BUFFER that holds its value, while no buffer it was computed
  from, nor the result, has been written since (Buffer.version, read through `buffers`: a TinyJit replay or an assign)."""
  # an ASSIGN or CONTIGUOUS node is unique: its entry names memory, it is no cached result (op names: this module is
  # below the IR and does not import it)
  NAMES_MEMORY = frozenset({"ASSIGN", "CONTIGUOUS"})
  def __init__(self, buffers: weakref.WeakKeyDictionary):
    self.buffers = buffers
    self.d: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # node -> (value, stamps, ids of the Buffers it read)
    # TinyJit's inputs while it watches a call (ids of Buffers): a result computed from them earlier must be computed
    # again, so that the kernels are recorded (a replay with new inputs would otherwise return the old result)
    self.volatile: set[int] = set()
  def set(self, node, value, reads: list):
    """node's value is `value`, computed from the BUFFER uops `reads`."""
    bufs = self.buffers  # (an ASSIGN's or CONTIGUOUS's value is its memory: later writes to what it read leave it as it is)
    mem = node.op.name in self.NAMES_MEMORY  # (memory that is not lazynb's, Tensor.from_blob, is read as it is then: no stamp)
    stamps = tuple((bufs[b], bufs[b].version) for b in ({value.base} if mem else {*reads, value.base}) if b in bufs and not (mem and bufs[b].external))
    self.d[node] = (value, stamps, {id(bufs[b]) for b in reads if b in bufs and b is not value.base})
  def __setitem__(self, node, value): self.set(node, value, [n for n in node.toposort() if n.op.name == "BUFFER"])
  def get(self, node, default=None):
    if (e := self.d.get(node)) is None: return default
    if self.volatile and node.op.name not in self.NAMES_MEMORY and not self.volatile.isdisjoint(e[2]): return default
    if any(b.version != v for b, v in e[1]):
      del self.d[node]
      return default
    return e[0]
  def __contains__(self, node) -> bool: return self.get(node) is not None
  def __getitem__(self, node):
    if (v := self.get(node)) is None: raise KeyError(node)
    return v
  def __len__(self) -> int: return len(self.d)

class IdentitySet:
  """A weak set that finds its members by identity. A Tensor's `==` is elementwise (it builds a graph), so a WeakSet of
  tensors cannot look one up (`t in s`, `s.discard(t)` would ask a Tensor for its truth value)."""
  def __init__(self): self._d: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # id(x) -> x
  def add(self, x): self._d[id(x)] = x
  def discard(self, x):
    if self._d.get(id(x)) is x: del self._d[id(x)]
  def __contains__(self, x) -> bool: return self._d.get(id(x)) is x
  def __iter__(self): return iter(list(self._d.values()))
  def __len__(self) -> int: return len(self._d)

class RunState:
  """The realize and autograd registries (what each maps, who writes it, when an entry dies: docs/internals.md)."""
  def __init__(self):
    self.buffers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
    self.realized = Realized(self.buffers)
    self.superseded: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
    self.owned: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # buffer made for a value -> weakref of the tensor that owns it, or None
    self.live = IdentitySet()
    self.grad_tensors = IdentitySet()
    self.grad_leaves: weakref.WeakSet = weakref.WeakSet()  # the nodes of tensors given requires_grad=True (outlive the tensors)
    self.pending_assigns: weakref.WeakSet = weakref.WeakSet()
    self.computed_from: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
    self.custom_grads: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
    self.metadata: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # node -> Metadata of the Tensor method that made it
    self.last_backward: weakref.ReferenceType | None = None
    self.capturing: list | None = None

  def describe(self) -> dict[str, int]:
    """How many entries each registry holds now (a realized entry is counted until it is read stale or its node dies)."""
    return {"buffers": len(self.buffers), "allocated": sum(1 for b in list(self.buffers.values()) if b.is_allocated()),
            "realized": len(self.realized), "superseded": len(self.superseded), "owned": len(self.owned),
            "live": len(self.live), "grad_tensors": len(self.grad_tensors), "pending_assigns": len(self.pending_assigns),
            "computed_from": len(self.computed_from), "custom_grads": len(self.custom_grads), "metadata": len(self.metadata),
            "last_backward": int(self.last_backward is not None and self.last_backward() is not None),
            "capturing": -1 if self.capturing is None else len(self.capturing)}
  def __repr__(self) -> str:
    d = self.describe()
    cap = "no" if d.pop("capturing") < 0 else "yes"
    return "RunState(" + ", ".join(f"{k}={v}" for k, v in d.items()) + f", jit capturing={cap})"

state = RunState()
# At exit, Python clears module globals in reverse import order, so this module (imported first) outlives device.py. The
# expression cache's values keep BUFFER nodes, and so their Buffers, alive: drop it while a Buffer can still free itself.
atexit.register(lambda: state.realized.d.clear())
