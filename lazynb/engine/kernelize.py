"""kernelize(): decide the kernels now, and write the decision into the graph.

Each tensor's uop becomes ASSIGN(BUFFER, KERNEL(*inputs)): "this buffer will be filled by this kernel,
which reads these inputs". The KERNEL's arg holds the kernel AST (`t.uop.src[1].arg.ast`). Realizing the
tensor later runs exactly those kernels.
"""
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

def kernelize(tensors: list) -> None:
  todo = [t for t in tensors if not t.uop.is_realized and t.uop.base.op is not Ops.ASSIGN]
  if not todo: return
  items, becomes = pipeline.call("schedule", [t.uop for t in todo])
  assign_of: dict[UOp, UOp] = {}
  for si in items:
    out, ins = si.buf_uops[0], si.buf_uops[1:]
    srcs = tuple(assign_of.get(b, b) for b in ins)
    k = UOp(Ops.KERNEL, out.dtype, srcs, KernelArg(si.ast, si.reason))
    assign_of[out] = UOp(Ops.ASSIGN, out.dtype, (out, k))
  for t in todo:
    new = becomes[t.uop].substitute(assign_of)
    state.realized[t.uop] = new
    t.uop = new
