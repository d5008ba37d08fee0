# %% EXERCISE b08.boundaries
from lazynb.uop.ops import UOp, Ops, GroupOp

def my_boundaries(outs):
  """Walk each kernel down from its root; realize what it cannot compute where it reads it, and walk that kernel too."""
  nodes = UOp.sink(*outs).toposort()
  # every output, unless it is in memory already (a BUFFER) or a constant; every COPY, CONTIGUOUS and ASSIGN
  realize = {o.base for o in outs if o.base.op not in (Ops.BUFFER, Ops.CONST)}
  realize |= {n for n in nodes if n.op in (Ops.COPY, Ops.CONTIGUOUS, Ops.ASSIGN)}
  owner = {}  # reduce -> the kernel that computes it
  todo, done = list(realize), set()
  while todo:  # one kernel at a time: walk down from its root to what it reads from memory
    root = todo.pop()
    if root in done: continue
    done.add(root)
    reduce = root if root.op is Ops.REDUCE_AXIS else None
    # (node, in place: reached through elementwise ops and reshapes only, padded: reached through a pad)
    stack, seen = [(s, root.op is not Ops.REDUCE_AXIS, False) for s in reversed(root.src)], set()
    while stack:
      n, in_place, padded = stack.pop()
      if (n, in_place, padded) in seen or n.op is Ops.BUFFER: continue
      seen.add((n, in_place, padded))
      if n.op is Ops.REDUCE_AXIS and in_place and reduce is None and owner.setdefault(n, root) is root:
        reduce, in_place, padded = n, False, False  # the kernel's one reduce; below it, the kernel reads in the reduce's order
      elif n.op is Ops.REDUCE_AXIS or (padded and n.op in GroupOp.UnsafePad): realize.add(n)
      if n in realize:
        todo.append(n)
        continue
      in_place = in_place and (n.op in GroupOp.Elementwise or n.op in (Ops.RESHAPE, Ops.REDUCE_AXIS))
      stack.extend((s, in_place, padded or n.op is Ops.PAD) for s in reversed(n.src))
  return realize
