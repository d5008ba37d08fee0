# %% [markdown]
# # Part 4 — Laziness, the core idea
#
# When you write `b = a + 1`, lazynb computes nothing. It records "add 1 to a" as a node in a graph and hands you a
# tensor that *stands for* the result. Work happens only when you ask for numbers: `.realize()`, `.numpy()`,
# `.tolist()`, `.item()`. By then the compiler can see everything you want at once, and it uses that view to
# **fuse** many operations into a few kernels.
#
# This is the most important idea of the course. This notebook shows it from several sides: counting kernels,
# reading the graph (**UOps**), watching duplicates collapse, and grouping the graph into kernels by hand
# (`kernelize`).

# %%
%load_ext lazynb
import numpy as np
from lazynb import Tensor, Device, Context, GlobalCounters, dtypes, Ops, UOp, nn
from lazynb.trace import capture
from lazynb.notebook.quiz import quiz, ask_number

# %% [markdown]
# ## 1. Nothing runs until you ask
#
# The course's example sets `os.environ['DEBUG'] = '2'` first; as Part 2 showed, that has no effect once lazynb is
# imported, so here `%%tinygrad --debug 1` prints the line for each realize instead. Part 1 fused `(x * 2 + 1).relu()`
# into one kernel; here the same chain is built one line at a time, and the kernels are counted at each step.

# %%
%%tinygrad --debug 1 --show schedule,graph,kernels
GlobalCounters.reset()
a = Tensor.randn(4, 4)   # random data is made right away (Part 3): no kernel
b = a + 1                # records an ADD
c = b * 2                # records a MUL
d = c.relu()             # records a compare and a WHERE
print("kernels run while building the graph:", GlobalCounters.kernel_count)
d.realize()
print("kernels run by realize():", GlobalCounters.kernel_count)

# %% [markdown]
# **What you see.** `realized 1 kernel` is the DEBUG=1 line. The **Tensor graph** tab shows the lazy graph you built
# (from the BUFFER of `a` up through ADD, MUL, CMPLT and WHERE; the constants 1, 2 and 0 are CONST nodes reshaped
# and expanded to 4x4); the **Kernels** tab, the AST of the one kernel made from it: a single LOAD, the arithmetic, a single STORE.
# The C source in **Kernels** does `a+1`, `*2` and the relu on each element with no temporary arrays.

# %%
assert GlobalCounters.kernel_count == 1
np.testing.assert_allclose(d.numpy(), np.maximum((a.numpy() + 1) * 2, 0))

# %% [markdown]
# The hacking guide makes the same point with its own examples: inspect a tensor before it runs (its UOp, shape and
# dtype are all known), then realize it; and a chain of four elementwise steps on a 100x100 tensor.

# %%
a4, b4 = Tensor([1, 2, 3, 4]), Tensor([5, 6, 7, 8])
c4 = a4 + b4
d4 = c4 * 2
print("UOp:", d4.uop.op, " Shape:", d4.shape, " Dtype:", d4.dtype, " realized:", d4.uop.is_realized)
result = d4.realize()
print("Result:", result.numpy())
x100 = Tensor.randn(100, 100)
GlobalCounters.reset()
fused = ((((x100 + 1) * 2) - 1) / 2).realize()
print("kernels for (((x + 1) * 2) - 1) / 2:", GlobalCounters.kernel_count)

# %%
assert result is d4 and result.numpy().tolist() == [12, 16, 20, 24] and d4.shape == (4,) and d4.dtype == dtypes.int32
assert GlobalCounters.kernel_count == 1
np.testing.assert_allclose(fused.numpy(), (((x100.numpy() + 1) * 2) - 1) / 2, rtol=1e-6)

# %% [markdown]
# ## 2. Eager, graph, lazy
#
# The slides compare three ways a framework can run your code:
#
# - **Eager** (PyTorch): each operation runs the moment it is called. Simple to debug; every intermediate result
#   is written to memory and read back.
# - **Graph** (TensorFlow 1, `torch.compile`): you describe a graph, compile it, then run it. Fast, but the code
#   you write is not the code that runs.
# - **Lazy** (tinygrad, lazynb): you write eager-looking code; the graph is built implicitly and compiled when a
#   value is needed. "The simplicity of eager with the power of graph."
#
# We can imitate eager mode by realizing after every step, and compare the memory traffic with the lazy version.

# %%
q_mem = quiz("Eager: realize after a+1, after *2 and after relu (3 kernels). Lazy: one realize at the end. "
             "How many bytes does the lazy version read and write, compared to eager?",
             ["the same", "about a third", "a tenth"], key="04_laziness.q_mem")

# %%
x, x2 = Tensor.randn(256, 256), Tensor.randn(256, 256)
GlobalCounters.reset()
eager = ((x + 1).realize() * 2).realize().relu().realize()
eager_kernels, eager_bytes = GlobalCounters.kernel_count, GlobalCounters.global_mem
GlobalCounters.reset()
lazy = ((x2 + 1) * 2).relu().realize()   # a different input: with x, section 4 explains why 0 kernels would run
lazy_kernels, lazy_bytes = GlobalCounters.kernel_count, GlobalCounters.global_mem
print(f"eager: {eager_kernels} kernels, {eager_bytes:7d} bytes read+written")
print(f"lazy:  {lazy_kernels} kernel,  {lazy_bytes:7d} bytes read+written")

# %%
assert (eager_kernels, lazy_kernels) == (3, 1) and eager_bytes == 3 * lazy_bytes
share = {"the same": 1, "about a third": 1 / 3, "a tenth": 1 / 10}   # each option as lazy bytes / eager bytes
q_mem.reveal(min(share, key=lambda o: abs(share[o] - lazy_bytes / eager_bytes)))
np.testing.assert_allclose(eager.numpy(), np.maximum((x.numpy() + 1) * 2, 0))
np.testing.assert_allclose(lazy.numpy(), np.maximum((x2.numpy() + 1) * 2, 0))

# %% [markdown]
# On a GPU, moving data costs far more than the arithmetic here, so this ratio is close to the speedup. Part 7
# adds the last piece of the "graph" style: `TinyJit`, which records the kernels once and replays them.
#
# ## 3. The UOp: a tensor is a node in a graph
#
# Every tensor has a `.uop` attribute, the node of the graph that computes it. A UOp has an **op**, a **dtype**, a
# tuple of **src** UOps (its inputs: the edges of the graph) and an **arg** (extra data, such as a shape). The
# graph is a DAG, a directed acyclic graph.
#
# (Older tinygrad called this layer `LazyBuffer`, in `tinygrad/engine/lazy.py`, and the attribute `lazydata`; both
# are gone from current tinygrad. lazynb keeps `lazydata` as an alias of `uop`. The course's
# `tinygrad.uop.UOp` is `lazynb.uop.ops.UOp` here.)

# %%
x = Tensor([1.0, 2.0, 3.0])
y = x + 1
print(type(y.uop))
print(y.uop.op, "with", len(y.uop.src), "sources:", [s.op for s in y.uop.src])
assert type(y.uop) is UOp and y.uop.op is Ops.ADD and y.lazydata is y.uop
assert x.uop in y.uop.toposort()

# %% [markdown]
# What is inside a tensor made from a Python list, before and after it is realized? Part 3 found it is not
# realized at first; here is its graph:

# %%
t = Tensor([1, 2, 3, 4])
print(t.uop)
before = t.uop
t.realize()
print(t.uop)

# %% [markdown]
# Before: a **COPY** whose sources are the host **BUFFER** (`arg=4`: four elements, on the `PYTHON` device, with a
# **UNIQUE** node that tells this buffer apart from every other buffer of the same size) and the target **DEVICE**.
# After realize, the tensor's UOp is a new BUFFER on the CPU, with its own UNIQUE number.

# %%
assert before.op is Ops.COPY
host = before.src[0]
assert host.op is Ops.BUFFER and host.arg == 4 and host.src[1].arg == "PYTHON" and before.src[1].arg == "CPU"
assert t.uop.op is Ops.BUFFER and t.uop.src[1].arg == "CPU" and t.uop.src[0] is not host.src[0]

# %% [markdown]
# Multiplying by a Python number shows how broadcasting appears in the graph:

# %%
%%tinygrad --show graph,kernels --no-controls
t2 = t * 2
m = t2.uop        # the graph, kept before it runs
t2.realize()

# %% [markdown]
# The scalar `2` becomes a **CONST**, **RESHAPE**d to shape `(1,)` and **EXPAND**ed to `(4,)` to match `t`, then
# **MUL**tiplied: that is the graph in the **Tensor graph** tab. In the **Kernels** tab, the kernel's AST: the broadcast is gone,
# the constant is just `2` inside the kernel's MUL. (The blog's graph also has VIEW nodes under the CONST; lazynb's
# constants carry only their DEVICE.)

# %%
assert m.op is Ops.MUL and m.src[0] is t.uop
ex = m.src[1]
assert ex.op is Ops.EXPAND and ex.arg == (4,) and ex.src[0].op is Ops.RESHAPE and ex.src[0].arg == (1,)
assert ex.src[0].src[0].op is Ops.CONST and ex.src[0].src[0].arg == 2
assert t2.tolist() == [2, 4, 6, 8]

# %% [markdown]
# **The broadcast, drawn.** RESHAPE and EXPAND copy nothing: they change how an index finds its memory, and that
# rule is a **view** (a ShapeTracker: shape, strides, offset). `show_st` draws the view the two movement ops made
# over the constant: four logical cells, each showing the memory index it reads (hover one in JupyterLab for its
# arithmetic), above the memory itself: one cell. The stride is 0, so every index lands on the same number.
# Part 5 draws views that move data around: a permute, a pad, and a reshape that needs two views.

# %%
from lazynb.notebook import show_st
bcast = show_st(ex, titles=["the constant 2, expanded to (4,)"])
bcast

# %%
(pic,) = bcast.pictures
assert [v["strides"] for v in pic["views"]] == [[0]] and pic["mem_size"] == 1
assert [c["mem"] for row in pic["cells"] for c in row] == [0, 0, 0, 0]   # four cells, one memory cell
assert [op for op, _ in pic["movement"]] == ["RESHAPE", "EXPAND"]

# %% [markdown]
# ## 4. The same computation is the same node
#
# UOps are **hash-consed**: building a UOp with the same op, dtype, sources and arg as an existing one returns
# *that* object. What does that mean for two tensors built the same way? Predict before you run the cells below.

# %%
q_dedup = ask_number("A = t * 4 and B = t * 4 are built separately. After A.realize(), how many kernels does B.tolist() run?",
                     key="04_laziness.q_dedup")

# %%
A, B = t * 4, t * 4
print("A is B:", A is B, "   A.uop is B.uop:", A.uop is B.uop)
A.realize()
GlobalCounters.reset()
print(B.tolist(), "kernels run for B:", GlobalCounters.kernel_count)

# %%
q_dedup.reveal(GlobalCounters.kernel_count)

# %% [markdown]
# So two tensors that describe the same computation share one node, and computing one computes both. The same holds
# for UOps you build by hand:

# %%
assert A is not B and A.uop is B.uop and B.uop.op is Ops.BUFFER
a2, b2 = UOp(Ops.CONST, dtypes.int, arg=2), UOp(Ops.CONST, dtypes.int, arg=2)
print("a2 is b2:", a2 is b2)
assert a2 is b2

# %% [markdown]
# ## 5. Deciding the kernels without running them: `kernelize()`
#
# `realize()` does two things: it groups the graph into kernels, and it runs them. `kernelize()` does only the
# first and writes the decision into the graph: the tensor's UOp becomes `ASSIGN(BUFFER, KERNEL(...))`, "this
# buffer will be filled by this kernel". Try it where the decision is more than one kernel: scaling a vector so
# that it sums to 1, `x / x.sum()`. No element can be divided before the whole sum is known.

# %%
x = Tensor([1.0, 2.0, 3.0, 4.0])
r = x / x.sum()
print(r.uop)
r.kernelize()
print(r.uop)

# %% [markdown]
# Before: the division as a MUL by the RECIP of the sum (a REDUCE_AXIS, reshaped and expanded back to 4 elements),
# over the COPY of the list. After: an outer **ASSIGN** into a new CPU BUFFER of 4 from a **KERNEL** (the division,
# `reason=realize`). Its inputs are two inner ASSIGNs: the list's data, filled by a COPY **KERNEL**, and a BUFFER of
# **one** element filled by the sum's KERNEL (`reason=reduce`), which reads the same copied data. The expand did not
# copy the sum four times: the division's kernel reads the one value through a view. Listing the decision, then
# running it:

# %%
decided = [(a.src[1].arg.reason, a.src[0].arg) for a in r.uop.toposort() if a.op is Ops.ASSIGN]
for reason, size in decided: print(f"KERNEL reason={reason:8s} fills a buffer of {size} element(s)")
GlobalCounters.reset()
with capture(rewrites=False) as tr:
  values = r.tolist()
print(values, "ran:", [(s["kind"], s["reason"]) for s in tr.schedule])

# %%
assert sorted(decided) == [("copy", 4), ("realize", 4), ("reduce", 1)]
np.testing.assert_allclose(values, np.array([1.0, 2.0, 3.0, 4.0]) / 10, rtol=1e-6)
assert GlobalCounters.kernel_count == 2   # the sum, then the division (the copy moves data, it computes nothing)
assert [s["kind"] for s in tr.schedule] == ["copy", "kernel", "kernel"]
assert sorted(s["reason"] for s in tr.schedule) == sorted(reason for reason, _ in decided)  # exactly what kernelize() decided

# %% [markdown]
# ## 6. From model code to kernels
#
# The "first module" of this course follows an MNIST model from Python to the machine. Here is its model, shrunk
# to 12x12 images, with no training yet. Calling it builds the graph: every conv, relu, batch norm, pooling and
# linear layer adds UOps, and nothing runs.

# %%
class Model:
  def __init__(self):
    self.layers = [nn.Conv2d(1, 4, 3), Tensor.relu, nn.Conv2d(4, 4, 3), Tensor.relu,
                   nn.BatchNorm(4), Tensor.max_pool2d, lambda x: x.flatten(1), nn.Linear(64, 10)]
  def __call__(self, x: Tensor) -> Tensor: return x.sequential(self.layers)

Tensor.manual_seed(1)
model, images = Model(), Tensor.rand(2, 1, 12, 12)
GlobalCounters.reset()
logits = model(images)
n_nodes = len(logits.uop.toposort())
print(f"graph: {n_nodes} UOps; kernels run so far: {GlobalCounters.kernel_count}")

# %% [markdown]
# The journey is: Python code → graph of UOps → group and fuse into kernels → compile each kernel → run.

# %%
q_model = quiz(f"The graph has {n_nodes} UOps. Roughly how many kernels will realize() run?",
               ["about 4", f"about {n_nodes}", "about 40"], key="04_laziness.q_model")

# %%
%%tinygrad --show schedule,timing
out = logits.realize()

# %% [markdown]
# The schedule (top of the **Kernels** tab) lists each kernel with the *reason* the graph was cut there: `reduce` means a reduction
# (a conv's sum, the pooling's max) whose result is needed by more than one later value or through a view, so it
# must be stored; `realize` is the final logits you asked for.

# %%
with capture(rewrites=False) as tr:
  logits2 = model(Tensor.rand(2, 1, 12, 12)).realize()
kinds = [(s["kind"], s["reason"]) for s in tr.schedule]
print(kinds)
assert len(tr.kernels) == 4 and kinds[-1] == ("kernel", "realize")
q_model.reveal(f"about {len(tr.kernels)}")
# the four kernels are the four reductions: conv, conv, max pool (10x10 -> 8x8 -> 4x4), linear (64 -> 10)
reduce_sizes = [tuple(int(n) for n in k["name"].split("_")[1:]) for k in tr.kernels]
print("kernels:", [k["name"] for k in tr.kernels])
assert all(k["name"].startswith("r_") for k in tr.kernels) and reduce_sizes[-1][:2] == (2, 10)
assert n_nodes > 100

# %% [markdown]
# The first module closes with two questions, and this notebook measured both answers. *When* does lazynb (like
# tinygrad) execute? When a value is needed: `realize()`, `numpy()`, `tolist()`, `item()` (and an optimizer's
# `step()`, which realizes the new weights). *Why* build the whole graph first? The compiler then sees the whole
# computation, so it can fuse operations and skip the intermediate buffers: a third of eager's memory traffic above.
#
# Next: **05_op_types**, the three kinds of operation every graph is made of.

# %% [markdown]
# ## Exercise: stay lazy
#
# Write `sum_of_squares(tensors)`: the elementwise sum of `t * t` over a list of same-shaped tensors. It must only
# *build* the graph: the check counts the kernels your function runs (it must be 0) before it reads the value.

# %%
# EXERCISE 04.lazy
def sum_of_squares(tensors):
  # YOUR CODE
  raise NotImplementedError

# %%
from lazynb.notebook.exercise import check
check("04.lazy", sum_of_squares)
