# %% [markdown]
# # Build 9: one opt and a beam search, yours
#
# The **optimize** stage comes right after the scheduler: it is given one kernel's AST and decides the *shape of its
# loops*. It changes no value a kernel computes, only how fast it gets there: which loop is split, which part of it
# is written out in the code instead of looped over. The build track has run with `NOOPT=1` so far, which tells
# lazynb's own optimize stage to leave every kernel as plain loops.
#
# Here you write the stage: one **opt** (an UNROLL: a reduce loop of n steps becomes n/amt steps that each do amt of
# them, written out one after the other) and a small **beam search** that tries your opt at a few amounts on each
# reduce loop, times every candidate, and keeps the fastest. Kept, it chooses the loops of every kernel that
# `with mine():` runs, your renderer writes them, and the capstone trains on them.

# %%
%load_ext lazynb
import numpy as np
from lazynb import Tensor, Context, pipeline
from lazynb.codegen.kernel import Kernel, Opt, OptOps, AxisType, KernelOptError
from lazynb.notebook.build import mine, time_kernel
from lazynb.notebook.exercise import check
st = pipeline.stage("optimize")
print(f"optimize: takes {st.takes}\n  gives {st.gives}")

# %% [markdown]
# ## What the optimize stage is given
#
# A function that records its arguments and calls lazynb's own stage, run on each row's sum of a 256x1024 matrix:

# %%
seen = []
def spy_optimize(ast, renderer, opts=None):
  k = pipeline.reference("optimize")(ast, renderer, opts)
  seen.append((ast, renderer, opts, k))
  return k

x = np.random.default_rng(0).random((256, 1024), dtype=np.float32)
with Context(NOOPT=1), pipeline.use("optimize", spy_optimize):
  out = Tensor(x).sum(axis=1).numpy()
assert np.allclose(out, x.sum(axis=1), rtol=1e-5)
ast, renderer, opts, k = seen[0]
print(f"opts given: {opts}; the Kernel: loops {k.full_shape}, {[t.name for t in k.axis_types]}, opts {k.applied_opts}")
for view_st in k.sts: print("  a view of the kernel:", view_st.shape, "strides", view_st.views[-1].strides)

# %% [markdown]
# `opts` is None: the stage chooses (with `NOOPT=1`, lazynb's chooses nothing). The Kernel holds the loop shape, its
# `full_shape` (256 rows, 1024 steps of the sum), the role of each axis (`axis_types`: GLOBAL, one output element per
# step, or REDUCE, summed over), and one ShapeTracker per buffer access (`k.sts`), all over the same axes. The output's
# has size 1 along the reduce axis: it is written once per row. The lower stage turns each axis into a loop and
# every ShapeTracker into index math.
#
# ## What reaches the stage
#
# Every kernel of the graded programs (the corpus, with `NOOPT=1`), counted by what the stage can do with it:

# %%
kernels = []
def count(ast, renderer, opts=None):
  kernels.append(Kernel(ast, renderer))
  return pipeline.reference("optimize")(ast, renderer, opts)
with Context(NOOPT=1), pipeline.use("optimize", count):
  for p in pipeline.default_programs(): p.run()
red = [k for k in kernels if k.axes_of(AxisType.REDUCE)]
sizes = sorted({k.full_shape[a] for k in red for a in k.axes_of(AxisType.REDUCE) if not k.is_sym(a)})
print(f"{len(kernels)} kernels: {len(kernels) - len(red)} without a reduce axis, {len(red)} with one or more "
      f"({sum(len(k.axes_of(AxisType.REDUCE)) > 1 for k in red)} with two or more)")
print("reduce axis sizes:", sizes)
print("kernels with an axis whose size is a variable:", sum(any(k.is_sym(i) for i in range(len(k.full_shape))) for k in kernels))

# %% [markdown]
# An UNROLL needs a reduce axis, so a kernel without one keeps its plain loops. An amount must divide the axis (a
# reduce axis of 7 cannot be unrolled by 2), and a size that is a variable (a `Variable` bound at run time: none in
# the corpus, the check adds one) cannot be split at all.
#
# ## One opt: UNROLL
#
# lazynb's own `Kernel.apply_opt` does it; this is what your function must give. Unrolling the sum's 1024 steps by 4:

# %%
k4 = Kernel(ast, renderer)
k4.apply_opt(Opt(OptOps.UNROLL, 1, 4))
print(f"loops {k4.full_shape}, {[t.name for t in k4.axis_types]}, opts {k4.applied_opts}")
for view_st in k4.sts: print("  a view of the kernel:", view_st.shape)

# %% [markdown]
# The REDUCE axis of 1024 became two: a REDUCE of 256 (still a loop) and an UNROLL of 4 (no loop: the lower stage
# builds the sum's body once for each of the 4 values, so each of the 256 steps adds 4 of them). Every
# ShapeTracker was split the same way, so each buffer access still reads the same elements: the index math stays
# right by construction. A ShapeTracker of size 1 on the axis (the output's) splits into (1, 1). The new axis goes
# after the others, so the axes the kernel had keep their numbers (the next opt can name them). The C it becomes:

# %%
from lazynb.codegen import get_program
print(get_program(ast, renderer, [Opt(OptOps.UNROLL, 1, 4)]).src)

# %% [markdown]
# Is it faster? `time_kernel(k)` compiles a Kernel (through the pipeline's stages, with its opts given to the
# optimize stage) and times it on scratch buffers of random data: the median of a few runs, in seconds. Whether an
# unroll pays depends on the kernel, the C compiler and the machine, and timings jitter: a search measures instead of
# guessing.

# %%
t_plain, t_unrolled = time_kernel(Kernel(ast, renderer)), time_kernel(k4)
print(f"plain loops: {t_plain * 1e6:.1f} us; unrolled by 4: {t_unrolled * 1e6:.1f} us ({t_plain / t_unrolled:.2f}x)")

# %% [markdown]
# An illegal opt is an error, never a kernel: lazynb's `apply_opt` raises `KernelOptError` (a search catches it and
# skips the candidate):

# %%
for bad in (Opt(OptOps.UNROLL, 1, 3), Opt(OptOps.UNROLL, 0, 2)):
  try: Kernel(ast, renderer).apply_opt(bad)
  except KernelOptError as e: print(f"{bad}: KernelOptError: {e}")

# %% [markdown]
# ## A beam search
#
# Which amount, on which axis, and how many unrolls one after another? A beam search keeps the `width` best kernels
# found so far (the beam) and, round by round, tries one more opt on each of them:
#
# 1. Time the kernel with no opt: it is the first beam.
# 2. Each round, each kernel in the beam gets each legal UNROLL: every reduce axis, every amount in `AMOUNTS = (2, 4)`
#    that divides the axis and is smaller than it (an unroll leaves a loop of at least 2 steps). Time each new kernel
#    once: a kernel is known by its opts (`tuple(k.applied_opts)`), and one already timed is not timed again.
# 3. The beam becomes the `width` fastest of **everything timed so far**: "no opt" and the kernels the beam held stay
#    candidates, so a round that finds nothing faster changes nothing.
# 4. After `rounds` rounds, return the fastest.
#
# For example, width 2 and a sum over an axis of 16: round 1 times no opt (say 10 us), unroll by 2 (5 us) and by 4
# (6 us), and keeps both unrolls. Round 2 tries unroll by 4 on the 8 steps left after the unroll by 2 (and by 2), and
# by 2 on the 4 left after the unroll by 4; if that last one takes 1 us, a beam of width 2 finds it, a beam of width 1
# (which kept only the unroll by 2) does not.
#
# ## Exercise: the optimize stage
#
# Write `my_unroll(k, axis, amt)`: a **new** Kernel (`k.copy()`, then set its `sts`, `full_shape`, `axis_types` and
# `applied_opts`; `k` is left as it was), the reduce axis `axis` split into `(size // amt, amt)` with the inner part
# an `AxisType.UNROLL` moved after the other axes, and `Opt(OptOps.UNROLL, axis, amt)` added to its opts. Each
# ShapeTracker splits with `st.reshape(shape)` and moves axes with `st.permute(order)`. Anything that cannot apply
# (not a reduce axis, a size that is a variable, an amount that does not divide it) raises `KernelOptError`.
#
# Then `my_optimize(ast, renderer, opts=None, width=2, rounds=2, time_fn=time_kernel)`, the stage: with `opts` given,
# apply them (each an UNROLL, with your function) and return the kernel; with `opts=None`, the beam search above,
# timing with `time_fn(kernel)`. The check runs your search with made-up times too (a table of seconds by opts), so
# call `time_fn` for every timing. Keep everything in one cell: the cell is saved as one file.

# %%
# EXERCISE b09.optimize
from lazynb.codegen.kernel import Kernel, Opt, OptOps, AxisType, KernelOptError
from lazynb.notebook.build import time_kernel

AMOUNTS = (2, 4)

def my_unroll(k, axis, amt):
  """k's reduce axis `axis` unrolled by amt, as a new Kernel (k stays as it is)."""
  raise NotImplementedError  # YOUR CODE

def my_optimize(ast, renderer, opts=None, width=2, rounds=2, time_fn=time_kernel):
  """The optimize stage: the given opts applied, or (opts None) the fastest kernel a beam search finds."""
  raise NotImplementedError  # YOUR CODE

# %%
check("b09.optimize", my_optimize)

# %% [markdown]
# ## Your opts in every kernel
#
# Kept (`my_compiler/optimize.py`), your stage chooses the loops of every kernel `with mine():` runs, with your other
# kept stages after it: the Kernels tab shows the opts it chose and your renderer's C. Each kernel's search may spend
# about two seconds timing candidates (`mine()` holds it to that budget: past it a candidate is not timed, and the
# search keeps what it has). The cell below finds out what your stage chose for the row sums of a 1024x4096 matrix,
# and times that kernel against the plain loops (nothing kept yet: lazynb's stage, with `NOOPT=1`, chooses no opt).

# %%
%%tinygrad
from lazynb.notebook.build import mine, time_kernel
chosen = []
a = np.random.default_rng(1).random((1024, 4096), dtype=np.float32)
with mine() as stages:
  optimize = stages.get("optimize", pipeline.reference("optimize"))
  def record(ast, renderer, opts=None):
    k = optimize(ast, renderer, opts)
    if opts is None: chosen.append(k)
    return k
  with pipeline.use("optimize", record): out = Tensor(a).sum(axis=1).numpy()
  k = chosen[0]
  t_plain, t_chosen = time_kernel(Kernel(k.ast, k.renderer)), time_kernel(k)
assert np.allclose(out, a.sum(axis=1), rtol=1e-4)
print(f"opts chosen: {k.applied_opts or 'none'}, loops {k.full_shape}")
print(f"measured: {t_chosen * 1e3:.2f} ms a run, against {t_plain * 1e3:.2f} ms with plain loops ({t_plain / t_chosen:.1f}x)")
