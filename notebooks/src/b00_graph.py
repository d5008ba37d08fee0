# %% [markdown]
# # Build 0: the graph, yours
#
# The parts and projects so far showed you what lazynb does; the build track asks you to write it, piece by piece,
# and then runs the course on what you wrote (`with mine():`). Each check runs lazynb's real pipeline over a corpus of
# generated tensor programs with your piece inside, and a piece that passes is **kept** as a file in `my_compiler/`.
#
# Everything in lazynb is one kind of node, the **UOp**: `UOp(op, dtype, src, arg)`, an operation, the type of its
# value, a tuple of source UOps, and a constant argument (a shape, an axis, a number). The lazy tensor graph, a kernel's
# AST and the lowered loops are all graphs of UOps. Two things make such a graph cheap to work with, and you write both:
#
# 1. **Hash-consing**: building a node that already exists gives back *that* node. Equal subgraphs become one object,
#    so `a is b` tells whether two whole graphs are equal, and a graph that uses an expression twice stores it once.
# 2. **A toposort**: every node once, each after all of its sources. Every pass over a graph walks it in that order:
#    a node's sources are done before the node is.

# %%
%load_ext lazynb
import numpy as np
from lazynb import Tensor, Context, pipeline
from lazynb.dtype import dtypes
from lazynb.uop.ops import UOp, Ops
from lazynb.notebook.exercise import check

# %% [markdown]
# ## Hash-consing at work
#
# `(a + b) * (a + b)`, built the way a program builds it: each `a + b` is built on its own, from constants built on
# their own. Once with a plain class that makes a new object every time, once with lazynb's UOp. The count is of
# different Python objects in the graph:

# %%
class Plain:
  """A node without hash-consing: every call makes a new object."""
  def __init__(self, op, dtype, src=(), arg=None): self.op, self.dtype, self.src, self.arg = op, dtype, tuple(src), arg

def square_of_sum(make):
  f = dtypes.float32
  def a_plus_b(): return make(Ops.ADD, f, (make(Ops.CONST, f, (), 1.0), make(Ops.CONST, f, (), 2.0)))
  return make(Ops.MUL, f, (a_plus_b(), a_plus_b()))

def objects(root):
  """How many different objects are in the graph under root (a walk with a stack, remembering ids)."""
  seen, stack = {id(root)}, [root]
  while stack:
    for s in stack.pop().src:
      if id(s) not in seen: seen.add(id(s)); stack.append(s)
  return len(seen)

plain, interned = square_of_sum(Plain), square_of_sum(UOp)
print("without hash-consing:", objects(plain), "objects; the two sums are one object:", plain.src[0] is plain.src[1])
print("with hash-consing:   ", objects(interned), "objects; the two sums are one object:", interned.src[0] is interned.src[1])

# %% [markdown]
# The same holds for whole programs. A graph that shares nodes can be far smaller than the tree it stands for: the
# tree repeats a shared node once for every path that reaches it. Over some of the corpus programs the check uses,
# the lazy graphs (what `Tensor` builds) and the kernels lazynb lowers from them with `NOOPT=1` (index math: loop
# counters times strides, masks), with the number of nodes a tree would need:

# %%
from lazynb.notebook.build import graph_cases
cases = graph_cases()
def tree_size(root):
  size = {}
  for u in root.toposort(): size[u] = 1 + sum(size[s] for s in u.src)
  return size[root]
for kind in ("lazy graph", "lowered kernel"):
  sizes = [(len(r.toposort()), tree_size(r)) for what, r in cases if what.startswith(f"the {kind}") or what.startswith(f"a {kind}")]
  print(f"{len(sizes)} {kind}s: {sum(n for n, _ in sizes)} nodes in all; as trees {sum(t for _, t in sizes)}; "
        f"the largest: {max(n for n, _ in sizes)} nodes, {max(t for _, t in sizes)} as a tree")

# %% [markdown]
# ## What a node is made from, measured
#
# Your constructor will rebuild these graphs node by node. What it is given: the ops, and the kinds of `arg` (a
# number for a constant, a tuple for a shape or an axis, a ShapeTracker for a view, lazynb's `Ops` for a reduce ...):

# %%
from collections import Counter
nodes = {u for _, r in cases for u in r.toposort()}
print(len(Counter(u.op for u in nodes)), "ops:", ", ".join(sorted({u.op.name for u in nodes})))
print("args:", ", ".join(f"{t} ({n})" for t, n in Counter(type(u.arg).__name__ for u in nodes).most_common()))

# %% [markdown]
# A key that looks right can still be wrong:
#
# - **What counts as the same.** Two nodes are the same only if op, dtype, src *and* arg are equal. An arg is a value:
#   two equal tuples built separately are the same arg (`==`), though they are different objects (`is`).
# - **The sources** are already hash-consed: the same source is the same object. The tuple holding them is new on
#   every call, but what it holds is not.
# - **Floats.** In Python `0.0 == -0.0`, and they hash alike, so a dict takes one for the other. They are different
#   constants: `1 / x` is `inf` for one and `-inf` for the other. lazynb keys the sign too:

# %%
print(UOp.const(dtypes.float32, 0.0) is UOp.const(dtypes.float32, -0.0), 0.0 == -0.0, hash(0.0) == hash(-0.0))
with np.errstate(divide="ignore"): print(np.float32(1) / np.float32(0.0), np.float32(1) / np.float32(-0.0))

# %% [markdown]
# ## Exercise: hash-consing
#
# Write a small `Node` class (its `op`, `dtype`, `src`, `arg`) and `node(op, dtype, src=(), arg=None)`, which gives the
# one Node for that spec: a new one the first time, the same object every time after. Keep the table in the cell (the
# cell is saved as a file on its own). No weak references needed: the table may keep every node alive.
#
# The check builds nodes by hand (the same spec twice, an equal arg built anew, `0.0` and `-0.0`, a chain deeper than
# Python's recursion limit), then rebuilds the corpus graphs above through your `node`, twice: the first time your
# graph must have as many different nodes as lazynb's, the second time (args copied) give back the very same objects.

# %%
# EXERCISE b00.node
import math

class Node:
  """A node of your graph: what it computes, its type, its sources, its constant."""
  def __init__(self, op, dtype, src, arg):
    raise NotImplementedError  # YOUR CODE

def node(op, dtype, src=(), arg=None):
  """The one Node for (op, dtype, src, arg): made the first time, the same object on every later call."""
  raise NotImplementedError  # YOUR CODE

# %%
check("b00.node", node)

# %% [markdown]
# Yours at work: `(a + b) * (a + b)` again, and one corpus program's lazy graph rebuilt through your `node`
# (sources first, so each source exists before the node that uses it):

# %%
from lazynb.notebook.build import rebuild
try:
  sq = square_of_sum(lambda op, dtype, src=(), arg=None: node(op, dtype, src, arg))
  print("yours:", objects(sq), "objects; the two sums are one object:", sq.src[0] is sq.src[1])
  what, root = max((c for c in cases if c[0].startswith("the lazy graph")), key=lambda c: len(c[1].toposort()))
  yours = rebuild(node, root)
  print(f"{what}: lazynb {len(root.toposort())} nodes, yours {len({id(n) for n in yours.values()})}")
except NotImplementedError: print("not written yet")

# %% [markdown]
# ## What walks the graph
#
# lazynb's **linearize** stage gets each kernel's graph (one SINK over its stores) and must give one list to run top to
# bottom: a value is computed before anything reads it. It starts with a toposort. A spy on the stage shows what it
# is given, and the first nodes of lazynb's toposort of it:

# %%
given = []
def spy_linearize(sink):
  given.append(sink)
  return pipeline.reference("linearize")(sink)

x = np.arange(12, dtype=np.float32).reshape(3, 4)
with Context(NOOPT=1), pipeline.use("linearize", spy_linearize): out = (Tensor(x) * 2).sum(axis=1).numpy()
order = given[0].toposort()
print(f"{len(given)} kernel; its graph has {len(order)} nodes; the first of them in toposort order:")
for u in order[:8]: print(f"  {u.op.name:14s} arg={u.arg!r:.40}  sources: {[order.index(s) for s in u.src]}")
assert np.allclose(out, (x * 2).sum(axis=1))

# %% [markdown]
# Each node's sources sit at smaller positions. Shared nodes (a loop counter is read by many) appear once.
#
# ## Exercise: the toposort
#
# `toposort(root)` gives every node reachable from `root` through `.src`, each once, each after all of its sources.
# It works on lazynb's UOps and on your Nodes alike (it reads only `.src`). The check runs it on a node used twice, on
# a graph where each node adds the one below to itself (2**16 paths to the bottom: a walk that goes down every path
# again takes that long), on a chain deeper than Python's recursion limit (lazynb raises it to 10,000; a recursive
# walk cannot finish), on the corpus graphs, and then runs the corpus programs with lazynb's linearize ordering
# every kernel with your toposort. `root.toposort()` is lazynb's: not allowed here.

# %%
# EXERCISE b00.toposort
def toposort(root):
  """Every node under root once, each after all of its sources."""
  raise NotImplementedError  # YOUR CODE

# %%
check("b00.toposort", toposort)

# %% [markdown]
# ## Your toposort in every kernel
#
# Kept (`my_compiler/toposort.py`), your toposort is what the linearize stage walks with under `with mine():` (lazynb's
# linearize, or yours once you keep one in Build 3): every kernel's nodes are put in order by your code. Its result is
# checked each time, so a wrong order is an error that names your toposort, not a kernel that reads a value before it
# is computed. The Kernels tab shows the programs it ordered.

# %%
%%tinygrad
from lazynb.notebook.build import mine
x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
with mine():
  out = Tensor(x).softmax(axis=1).numpy()
want = np.exp(x - x.max(axis=1, keepdims=True))
want /= want.sum(axis=1, keepdims=True)
assert np.allclose(out, want, atol=1e-6)
print(out.round(3))
