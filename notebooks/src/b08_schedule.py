# %% [markdown]
# # Build 8: what becomes a kernel, yours
#
# A lazy tensor is a graph of UOps; nothing has run. The scheduler turns the graph into kernels, and its first
# decision is the one that matters for speed: which nodes are **realized** (a kernel computes the node and stores it in
# memory) and which are **fused** (computed inside the kernel that reads them, never stored). Every realized node is
# one more kernel and one more trip through memory; every fused node is free, as long as a kernel *can* compute it
# where it is read.
#
# lazynb's schedule stage makes that decision and then builds each kernel's AST (the loads through ShapeTrackers, the
# store, the one reduce). Here you write the decision: a function that gets the outputs' UOps and returns the set of
# nodes to realize. lazynb builds the kernels from your set, and refuses, with an error that says why, a set no kernel
# can follow. Kept, your decision cuts every graph that `with mine():` runs.

# %%
%load_ext lazynb
import collections
import numpy as np
from lazynb import Tensor, Context, pipeline
from lazynb.uop.ops import UOp, Ops, GroupOp
from lazynb.notebook.exercise import check

# %% [markdown]
# ## What the schedule stage is given
#
# A spy in place of the schedule stage records what it gets and calls lazynb's own. Softmax over rows: `x.max` and
# `e.sum` are reduces, everything else is elementwise or a movement op (a reshape, an expand):

# %%
seen = []
def spy(outs):
  seen.append(outs)
  return pipeline.reference("schedule")(outs)

x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
def softmax(t):
  e = (t - t.max(axis=1, keepdim=True)).exp()
  return e / e.sum(axis=1, keepdim=True)
t = Tensor(x).realize()
with Context(NOOPT=1), pipeline.use("schedule", spy): plan = softmax(t).schedule()
for n in UOp.sink(*seen[-1]).toposort():
  if n.op not in (Ops.UNIQUE, Ops.DEVICE): print(f"{n.op.name:12s} {str(n.shape):8s}", "<- " + ", ".join(s.op.name for s in n.src) if n.src else "")
print("\nlazynb realizes:", [f"{si.out.op.name} {si.out.shape} ({si.reason})" for si in plan])

# %% [markdown]
# `t` was realized before, so the graph reads it as a `BUFFER`: it is in memory already and needs no kernel. The
# output (the `MUL`: a division is a multiplication by a reciprocal) gets a kernel, and so does each reduce: `x - max`
# reads the max through an `EXPAND` (each row's one maximum, read at eight places), and an expanded read of a reduce
# would need the whole reduce done first, inside a kernel that is still computing it. Three kernels; the exp, the
# subtraction and the division are computed inside them.
#
# ## What lazynb realizes, measured
#
# The corpus (`pipeline.default_programs()`, the programs every build exercise is graded on) with `NOOPT=1`, each
# realized node counted with the reason lazynb gives it (`realize`: an output; `copy`: a copy the graph asks for;
# `reduce`: a reduce that no kernel reading it can compute):

# %%
made = collections.Counter()
def count(outs):
  items, becomes = pipeline.reference("schedule")(outs)
  made.update((si.reason, si.out.op.name) for si in items)
  return items, becomes
with Context(NOOPT=1), pipeline.use("schedule", count):
  for p in pipeline.default_programs(): p.run()
for reason in ("realize", "copy", "reduce"):
  print(f"{reason:8s} {sum(n for (r, _), n in made.items() if r == reason):4d}:", ", ".join(f"{op} {n}" for (r, op), n in made.most_common() if r == reason))

# %% [markdown]
# So the rules your decision needs, and how often each one decides over the corpus (the reduces' three cases counted
# with a probe inside lazynb's scheduler):
#
# | realize | why | in the corpus |
# |---|---|---|
# | every output (its base, `out.base`: the node under its movement ops) | it is what was asked for | 287 (3 of them `.contiguous()`, 6 copies) |
# | ...unless it is a `BUFFER` (realized before) | it is in memory already | |
# | every `COPY`, `CONTIGUOUS`, `ASSIGN` | a copy, `.contiguous()` and `.assign()` ask for memory | 393 copies inside graphs (every input comes from numpy) |
# | a reduce read through a movement op that is not a reshape (expand, permute, pad, shrink, flip) | the reader needs the reduce's whole result | 37 |
# | a reduce under another reduce in the same kernel | a kernel computes one reduce | 14 |
# | a reduce that two kernels would both compute | computed once, read twice | 0 (graded on an extra program) |
# | an op where f(0) != 0 (exp, log, 1/x, //, %) read through a pad | the padding must read as 0, not f(0) | 0 (an extra program) |
#
# Everything else, fused. An `ASSIGN` inside a graph is in none of the corpus programs either: the check adds one.
#
# lazynb goes one step further with a reduce that gets its own kernel: if elementwise ops, each with one reader, lie
# above it (`r = x.sum(1) + 1`, then `r` read through an expand), it stores the last of them instead (`r`), so they are
# computed once, not in every kernel that reads them; that is why the printout above counts some `ADD`s and `MUL`s under
# `reduce`. Storing the reduce itself is as many kernels: the check takes either.
#
# Walk each kernel from its root (a realized node) down to what it reads from memory. Remember, on the way down,
# whether you came only through elementwise ops and reshapes (then a reduce below is read in the kernel's own order, and
# it may be the kernel's one reduce) and whether you came through a pad. A node you decide to realize is the root of
# another kernel: walk that one too.
#
# ## Exercise: the decision
#
# `my_boundaries(outs)` gets the list of output UOps and returns the set of UOps to realize. `n.src` are a node's
# sources, `n.op` its op (`Ops.REDUCE_AXIS`, `Ops.RESHAPE`, `Ops.PAD`, ...), `GroupOp.Elementwise` the elementwise ops,
# `GroupOp.UnsafePad` the ops with f(0) != 0, and `UOp.sink(*outs).toposort()` every node of the graph.

# %%
# EXERCISE b08.boundaries
from lazynb.uop.ops import UOp, Ops, GroupOp

def my_boundaries(outs):
  """The nodes whose values a kernel stores in memory; everything else is fused into the kernel that reads it."""
  raise NotImplementedError  # YOUR CODE

# %%
check("b08.boundaries", my_boundaries)

# %% [markdown]
# The check runs the corpus kind by kind with your decision inside lazynb's scheduler (the values must be lazynb's),
# then compares your kernels with lazynb's on the same programs: realizing every node gives the right values too, one
# kernel per node, and fails here.
#
# ## Your decision in every schedule
#
# Kept (`my_compiler/boundaries.py`), your function cuts every graph `with mine():` runs, with your other kept parts
# around it. The Schedule view below lists the cell's schedules in order: lazynb's first, then the two made inside
# `with mine():` (by `.schedule()` and by `.numpy()`), where each kernel's reason is `yours` once your decision is
# kept. The last line compares the numbers of kernels.

# %%
%%tinygrad
from lazynb.notebook.build import mine
lazynbs = [si for si in softmax(Tensor(x)).schedule() if si.kind == "kernel"]
with mine() as stages:
  out = softmax(Tensor(x))
  yours = [si for si in out.schedule() if si.kind == "kernel"]
  got = out.numpy()
want = np.exp(x - x.max(1, keepdims=True)) / np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)
assert np.allclose(got, want, atol=1e-6)
print(f"kernels: {len(yours)} from", "your decision," if "schedule" in stages else "this block (no decision of yours kept yet),", f"{len(lazynbs)} from lazynb's")

# %% [markdown]
# > **Then and now.** This is tinygrad 0.10's question, asked the way its `engine/schedule.py` asked it: walk the graph,
# > decide by rules which values get memory. tinygrad today decides it with graph rewrites over loops
# > (`tinygrad/schedule/rangeify.py`): every value may get a buffer (`BUFFERIZE`), and a rule that removes one is the
# > decision to fuse. The rules you wrote are the ones those rewrites still have to respect.
