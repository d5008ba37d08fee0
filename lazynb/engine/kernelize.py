"""kernelize(): decide the kernels now, and write the decision into the graph. Each tensor's uop becomes ASSIGN(BUFFER,
KERNEL(*inputs)): "this buffer will be filled by this kernel, which reads these inputs". The KERNEL's arg holds the
kernel AST (`t.uop.src[1].arg.ast`); realizing the tensor later runs exactly those kernels."""
from __future__ import annotations
from dataclasses import dataclass
from lazynb import pipeline
from lazynb.uop.ops import UOp, Ops
import lazynb.engine.schedule  # noqa: F401 (the schedule stage)
from lazynb.runstate import state

@dataclass(frozen=True, eq=False)
class KernelArg:
  ast: UOp
  reason: str
  def __repr__(self):
    n = len([u for u in self.ast.toposort() if u.op is Ops.STORE])
    return f"<KERNEL {self.ast.op.name if self.ast.op is Ops.COPY else 'SINK'} stores={n} reason={self.reason}>"

def get_becomes_map(sink: UOp) -> dict[UOp, UOp]:
  """The kernel decision for each source of `sink`: source -> its ASSIGN(BUFFER, KERNEL(*inputs)) (or a view of it).
  tinygrad 0.10 calls this engine.grouper.get_becomes_map (docs/abstractions2.py); nothing runs and no memory is allocated."""
  if sink.op is not Ops.SINK: raise TypeError(f"get_becomes_map takes a SINK of the values to group into kernels, got {sink.op}")
  items, becomes = pipeline.call("schedule", list(sink.src))
  assign_of: dict[UOp, UOp] = {}
  for si in items:
    out, ins = si.buf_uops[0], si.buf_uops[1:]
    srcs = tuple(assign_of.get(b, b) for b in ins)
    if si.out is not None and si.out.op is Ops.ASSIGN and si.out.src[1].op is Ops.KERNEL: assign_of[out] = si.out  # kernelized before
    else: assign_of[out] = UOp(Ops.ASSIGN, out.dtype, (out, UOp(Ops.KERNEL, out.dtype, srcs, KernelArg(si.ast, si.reason))))
  return {u: becomes[u].substitute(assign_of) for u in sink.src}

def kernelize(tensors: list) -> None:
  todo = [t for t in tensors if not t.uop.is_realized and t.uop.base.op is not Ops.ASSIGN]
  if not todo: return
  # an assign the graphs read that has not run runs now: deciding kernels on its result would rename its memory (as
  # written) under the tensor that holds the assign, which could then never be read
  if pend := [a for a in UOp.sink(*[t.uop for t in todo]).toposort() if a in state.pending_assigns]: type(todo[0]).realize_all(*map(type(todo[0]), pend))
  becomes = get_becomes_map(UOp.sink(*(uops := [t.uop for t in todo])))
  # (each tensor's graph as it was: once state.realized has one, a tensor sharing it reads the new value)
  for t, u in zip(todo, uops): state.realized[u] = t.uop = becomes[u]
