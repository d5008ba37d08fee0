# %% [markdown]
# # Build 3: the linearizer, yours
#
# The **linearize** stage sits just before the renderer you wrote in Build 2. It is given one kernel as a *graph*:
# a SINK whose sources are the kernel's STOREs, each reading index math, LOADs, loop counters (RANGE) and
# reductions (REDUCE). A graph says what depends on what, but not in which order to do it, and it has no loops: a
# RANGE is just a value, "the counter of a loop from 0 to n". The linearizer decides the order. It gives back the
# flat list your renderer walks top to bottom: every input before the UOp that reads it, each loop opened by its
# RANGE and closed by an ENDRANGE, and each REDUCE turned into an accumulator that is updated inside its loop.

# %%
%load_ext lazynb
from collections import Counter
import numpy as np
from lazynb import Tensor, Context, Device, pipeline
from lazynb.uop.ops import Ops
from lazynb.notebook.build import mine
from lazynb.notebook.exercise import check
st = pipeline.stage("linearize")
print(f"linearize: takes {st.takes}\n  gives {st.gives}")

# %% [markdown]
# ## What the linearize stage is given, and what it gives
#
# A spy again: it records the SINK, then calls lazynb's own stage. The kernel takes the largest value of each
# row of a 3x4 matrix and doubles it: a loop over the rows, a reduction over the columns inside it, and an op on
# the reduction's result.

# %%
seen = []
def spy_linearize(sink):
  seen.append((sink, pipeline.reference("linearize")(sink)))
  return seen[-1][1]

with Context(NOOPT=1), pipeline.use("linearize", spy_linearize):
  a = -np.arange(12, dtype=np.float32).reshape(3, 4)
  out = (Tensor(a).max(axis=1) * 2).numpy()
assert np.allclose(out, a.max(axis=1) * 2)
sink, uops = seen[0]
print(sink)

# %% [markdown]
# Read it from the STORE down: data0 at index `gidx0` gets `MUL(REDUCE(...), 2.0)`, and the REDUCE takes the MAX
# of data1 at `gidx0*4 + ridx0` over the loop `ridx0` (its sources after the first are the loops it reduces). A
# RANGE's `arg` is (its number, how far it counts, its name). Here is the list lazynb's linearizer makes of it:

# %%
for i, u in enumerate(uops):
  print(f"{i:3d} {u.op.name:13s} {str(u.dtype):20s} {str(u.arg):18s} src={[uops.index(s) if s in uops else '-' for s in u.src]}")

# %% [markdown]
# The REDUCE is gone. In its place: a `DEFINE_ACC` before the loop `ridx0`, starting at `-inf` (its first source);
# inside the loop, `MAX(acc, value)` and an `ASSIGN` that stores it back into the accumulator; and after the loop's
# `ENDRANGE`, the `MUL` reads the ASSIGN: the finished maximum. The DEFINE_ACC's other source is the loop it
# accumulates over, which comes after it in the list (the one exception to "inputs first").
#
# ## What reaches the stage
#
# The check grades your stage on the corpus, kind by kind. This cell runs the stages before yours on every program
# of the corpus (nothing is compiled) and counts what you will be given:

# %%
def simplified_kernels(program):
  """The SINK each kernel of a program gives the linearize stage (the stages up to simplify; nothing is compiled)."""
  out = program.build()
  items, _ = pipeline.call("schedule", [t.uop for t in (out if isinstance(out, tuple) else (out,))])
  return [pipeline.run_stages("optimize", "simplify", ast=si.ast, renderer=Device[si.bufs[0].device].renderer, opts=None)["simplified"]
          for si in items if si.kind == "kernel"]

with Context(NOOPT=1):
  programs = pipeline.default_programs()
  sinks = [s for p in programs for s in simplified_kernels(p)]
rows = {k: Counter() for k in ("REDUCEs in a kernel", "a REDUCE inside another's value", "a REDUCE's op and dtype",
                               "loops a REDUCE sums over", "loops around the whole kernel", "DEFINE_VARs (variables)")}
for s in sinks:
  nodes = s.toposort()
  reduces = [u for u in nodes if u.op is Ops.REDUCE]
  summed = {r for red in reduces for r in red.src[1:]}
  rows["REDUCEs in a kernel"][len(reduces)] += 1
  rows["loops around the whole kernel"][sum(u.op is Ops.RANGE and u not in summed for u in nodes)] += 1
  rows["DEFINE_VARs (variables)"][sum(u.op is Ops.DEFINE_VAR for u in nodes)] += 1
  for red in reduces:
    rows["a REDUCE inside another's value"][sum(u.op is Ops.REDUCE for u in red.src[0].toposort())] += 1
    rows["a REDUCE's op and dtype"][f"{red.arg.name} {red.dtype.name}"] += 1
    rows["loops a REDUCE sums over"][len(red.src) - 1] += 1
print(f"{len(sinks)} kernels from the {len(programs)} programs of the corpus, NOOPT=1 (value: how many times)")
for name, c in rows.items(): print(f"  {name:34s}", ", ".join(f"{k}: {n}" for k, n in sorted(c.items())))
print("ops:", ", ".join(sorted({u.op.name for s in sinks for u in s.toposort()})))

# %% [markdown]
# So with `NOOPT=1` a kernel has **at most one REDUCE**, never one inside another; its op is ADD (sums and means)
# or MAX (max, and min as a max of negated values), on floats or ints; it may sum over several loops at once (a
# conv sums over channels and the kernel window), and it may sit inside other loops or in none (a sum of
# everything). The check also runs two programs whose loop bound is a variable: their SINK lists a `DEFINE_VAR`,
# and a RANGE's `arg` holds it as its end. The training step of the build capstone makes kernels of these same kinds.
#
# ## The rules of the list
#
# | UOp | where it goes |
# |---|---|
# | `DEFINE_GLOBAL` | first, **in buffer order** (`arg` 0, 1, 2, ...): the kernel's parameters follow the list, and the buffers are passed in that order |
# | `DEFINE_VAR`, `CONST` | before anything reads them (a variable also before the loop it bounds) |
# | `RANGE` ... `ENDRANGE` | a loop opens at its RANGE and ends at `UOp(Ops.ENDRANGE, dtypes.void, (rng,))`; loops nest like brackets: close the innermost first |
# | `INDEX` `LOAD` `STORE` and the ALU ops | after their sources, inside every loop whose counter they read, directly or through another UOp |
# | `DEFINE_ACC` | `UOp(Ops.DEFINE_ACC, dtype, (start, *loops), 0)`: before the loops it accumulates over (inside them, it would start again on every step); `start` is a CONST holding the op's identity: 0 for ADD, the smallest value of the dtype for MAX (`dtypes.min(dtype)`: -inf for floats) |
# | `ASSIGN` | `UOp(Ops.ASSIGN, dtype, (acc, update))` with `update = UOp(op, dtype, (acc, value))`: inside the loops, after the value, then the loops close |
# | what read the REDUCE | read the ASSIGN instead (`sink.substitute({red: assign})` gives the graph with every use replaced), and come after the loops' ENDRANGEs |
# | `SINK` | not listed: it only holds the stores |
#
# One more rule comes from the renderer: **a value exists only inside the loops it is listed in** (your C declares
# a variable there, and C forgets it at the loop's `}`). A value that does not read the reduce's counter but is read
# both inside the reduce loop and after it (an address computed from the outer counter, say) must be listed
# before the reduce loop opens.
#
# Useful: `sink.toposort()` gives every node after its sources; `u.op`, `u.src`, `u.arg`, `u.dtype`; a loop's
# number is `rng.arg[0]` (open loops in that order); `UOp.const(dtype, value)`. A stage whose list breaks a rule
# is stopped before the renderer, and the check says which UOp broke which rule.

# %%
# EXERCISE b03.linearize
from lazynb.uop.ops import UOp, Ops
from lazynb.dtype import dtypes

def my_linearize(sink):
  """A kernel's simplified SINK -> its UOps in execution order, loops closed by ENDRANGE, the REDUCE as an accumulator."""
  raise NotImplementedError  # YOUR CODE

# %%
check("b03.linearize", my_linearize)

# %% [markdown]
# ## Your linearizer, your renderer, your runtime
#
# With `linearize` kept, `with mine():` runs every kernel through your linearizer, then through the renderer and
# runtime you kept in Builds 1 and 2. In the view below, each kernel in the Kernels tab lists its UOps in the order
# your linearizer gave them, with the C lines each one became.

# %%
%%tinygrad
rng = np.random.default_rng(1)
x = rng.standard_normal((6, 10)).astype(np.float32)
with mine() as yours:
  t = Tensor(x)
  z = (t - t.mean(axis=1, keepdim=True)) / t.std(axis=1, keepdim=True)
  best, top = z.argmax(axis=1).numpy(), z.max(axis=1).numpy()
want = (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, ddof=1, keepdims=True)
assert np.allclose(top, want.max(axis=1), atol=1e-5) and (best == want.argmax(axis=1)).all()
print("your stages:", ", ".join(yours) or "none yet")

# %% [markdown]
# Means, standard deviations, a max and an argmax: every reduction in there went through an accumulator your
# linearizer placed. What is left of lazynb in that run is the front of the pipeline: the graph, the scheduler,
# and the lowering of views to index math (with its simplifier). Those are the next build notebooks.
