# %% EXERCISE b00.node
import math

class Node:
  """One node of a graph: what it computes (op), the type of its value, its sources (nodes) and a constant arg."""
  __slots__ = ("op", "dtype", "src", "arg")
  def __init__(self, op, dtype, src, arg): self.op, self.dtype, self.src, self.arg = op, dtype, src, arg
  def __repr__(self): return f"Node({self.op.name}, {self.dtype}, {len(self.src)} sources, arg={self.arg!r})"

NODES = {}  # what a node is built from -> the node built from it

def node(op, dtype, src=(), arg=None):
  """The one node for (op, dtype, src, arg). The sources are nodes made here already, so the tuple compares them by
  identity; the sign of a float arg is in the key, as -0.0 == 0.0."""
  key = (op, dtype, tuple(src), arg, math.copysign(1.0, arg) if isinstance(arg, float) else None)
  if key not in NODES: NODES[key] = Node(op, dtype, tuple(src), arg)
  return NODES[key]

# %% EXERCISE b00.toposort
def toposort(root):
  """Every node under root once, each after its sources: a stack of nodes still to place, each pushed back under its
  sources the first time it is seen and placed when it comes up again."""
  order, placed, opened = [], set(), set()
  stack = [root]
  while stack:
    n = stack.pop()
    if n in placed: continue
    if n in opened:
      placed.add(n)
      order.append(n)
      continue
    opened.add(n)
    stack.append(n)
    stack.extend(s for s in n.src if s not in placed)
  return order
