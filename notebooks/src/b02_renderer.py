# %% [markdown]
# # Build 2: the renderer, yours
#
# The **render** stage turns one kernel into source code. It is given the kernel's name and its UOps as a flat
# list in execution order (the linearizer's output: loops opened and closed, reductions as an accumulator), and
# the device's Renderer (which you can ignore here: you write C). It gives back the C source, which the compile
# stage (yours, if you kept it in Build 1) turns into a binary.
#
# This is where a graph of operations becomes text a compiler reads, and it is smaller than you might think:
# a page of Python handles every kernel the course makes with `NOOPT=1`.

# %%
%load_ext lazynb
import numpy as np
from lazynb import Tensor, Context, pipeline
from lazynb.notebook.build import mine
from lazynb.notebook.exercise import check
st = pipeline.stage("render")
print(f"render: takes {st.takes}\n  gives {st.gives}")

# %% [markdown]
# ## What the render stage is given
#
# The same trick as in Build 1: a function that records its arguments, then calls lazynb's own stage. The kernel
# sums each row of a zero-padded 3x4 matrix and doubles it: a pad (a load that is only valid in part of the
# range), a reduction and an elementwise op in one kernel.

# %%
seen = []
def spy_render(name, uops, renderer):
  seen.append((name, uops, renderer))
  return pipeline.reference("render")(name, uops, renderer)

with Context(NOOPT=1), pipeline.use("render", spy_render):
  a = np.arange(12, dtype=np.float32).reshape(3, 4)
  out = (Tensor(a).pad(((1, 0), (0, 0))).sum(axis=1) * 2).numpy()
assert np.allclose(out, np.pad(a, ((1, 0), (0, 0))).sum(axis=1) * 2)
name, uops, renderer = seen[0]
print(f"kernel {name}: {len(uops)} UOps\n")
for i, u in enumerate(uops):
  print(f"{i:3d} {u.op.name:13s} {str(u.dtype):20s} {str(u.arg):18s} src={[uops.index(s) for s in u.src]}")

# %% [markdown]
# `src=[...]` gives the positions of a UOp's inputs in the list: every input comes before the UOp that uses it. And
# here is the C lazynb's own renderer writes for it:

# %%
print(pipeline.reference("render")(name, uops, renderer))

# %% [markdown]
# ## The UOps you render
#
# Walk the list once, in order. Give every UOp a C expression or a variable name (a dict from UOp to string), and
# write a line of C for the ones that do something:
#
# | UOp | what it is | C |
# |---|---|---|
# | `DEFINE_GLOBAL` | buffer number `arg`; its dtype is a pointer, `u.dtype.base` what it points to | a parameter `float* data0` (in `arg` order) |
# | `CONST` | the number `arg` (a float, an int or a bool) | `2.0f`, `-4`, `1` (inf and nan: `__builtin_inff()`, `__builtin_nanf("")`) |
# | `RANGE` | a loop counter from 0 up to `arg[1]` (not included) | `for (int i = 0; i < 4; i++) {` |
# | `ENDRANGE` | the end of the loop of `src[0]` | `}` |
# | `INDEX` | an address: buffer `src[0]` at element `src[1]`; a third source, if there is one, is a bool saying whether the address is *valid* | `data1+(offset)` |
# | `LOAD` | the value at `src[0]` (an INDEX); where the INDEX has a valid that is false, the value is 0 and memory is not read | `valid ? *(addr) : 0.0f` |
# | `STORE` | write `src[1]` at `src[0]` (an INDEX; with a valid, only where it is true) | `*(addr) = value;` |
# | `DEFINE_ACC` | an accumulator starting at `src[0]`, declared before the reduce loop | `float acc0 = 0.0f;` |
# | `ASSIGN` | `src[0]` (an accumulator) becomes `src[1]`; the ASSIGN then stands for the accumulator | `acc0 = value;` |
# | `ADD` `MUL` `CMPLT` `CMPNE` `AND` `OR` `XOR` `IDIV` `MOD` | the infix operators | `(a+b)`, `(a<b)`, `(a!=b)`, `(a/b)`, `(a%b)`... |
# | `NEG` `RECIP` `MAX` `WHERE` | `-a`, `1/a`, the larger, `src[0] ? src[1] : src[2]` | |
# | `EXP2` `LOG2` `SIN` `SQRT` | 2^x, log2 x, sin x, sqrt x of a float | `__builtin_exp2f(x)` (no `#include` needed), ... |
# | `CAST` | the value converted to `u.dtype` | `((float)(x))` |
#
# The dtypes are `dtypes.float` (C `float`), `dtypes.int` (`int`), `dtypes.bool` (`_Bool`) and `dtypes.index`
# (the type of index math: `int` is enough here). The function is `void NAME(params) { ... }`, its name the one you
# are given.
#
# Two ways to write it both work: one C variable per UOp (`float v7 = (v5*v6);`, simple and always right), or
# expressions nested into the line that uses them (shorter C; careful with a value used twice, or read after its
# loop has ended). The check does not compare your text with lazynb's, only the values your kernels compute.
# Start with the elementwise kernels; the check tells you which kind of program fails first, and where your C
# first differs from lazynb's.

# %%
# EXERCISE b02.render
import math
from lazynb.uop.ops import Ops
from lazynb.dtype import dtypes

def my_render(name, uops, renderer):
  """A kernel's name and its UOps in execution order -> the C source of `void name(...)`."""
  raise NotImplementedError  # YOUR CODE

# %%
check("b02.render", my_render)

# %% [markdown]
# ## Your renderer and your runtime, running the course
#
# With `render` kept, `with mine():` runs every kernel through your renderer, and, if Build 1's stages are kept,
# through your compile and load stages too. In the view below, the Kernels tab shows the C **your** renderer
# wrote for each kernel; where it differs from what lazynb's own renderer would write, the view shows both.

# %%
%%tinygrad
rng = np.random.default_rng(0)
w, xb = rng.standard_normal((8, 5)).astype(np.float32), rng.standard_normal((4, 8)).astype(np.float32)
with mine() as yours:
  logits = (Tensor(xb) @ Tensor(w)).relu()
  probs = logits.softmax(axis=1).numpy()
h = np.maximum(xb @ w, 0)
e = np.exp(h - h.max(axis=1, keepdims=True))
assert np.allclose(probs, e / e.sum(axis=1, keepdims=True), atol=1e-5)
print("your stages:", ", ".join(yours) or "none yet")

# %% [markdown]
# A matmul, a relu and a softmax: several kernels, every one rendered, compiled and loaded by code you wrote.
# What is left of lazynb in that run is the front of the pipeline: the graph, the scheduler, the lowering of views
# to index math and the linearizer. Those are the next build notebooks.
