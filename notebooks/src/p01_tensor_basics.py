# %% [markdown]
# # Project 1: tensors, laziness and fusion
#
# The course's first project asks you to make tensors, then watch how few kernels a chain of operations
# turns into. Here you do it with lazynb, a small compiler with tinygrad's API. Each step **runs** code (a
# `%%tinygrad` cell shows what the compiler did: schedule, kernels, generated C, timing) and **checks** it: the cell
# after it asserts what was measured, so this notebook can't quietly drift away from the truth. Where the outcome
# is not something Parts 1 to 5 already showed you, a quiz first asks you to **predict** it.
#
# At the end, an **exercise**: you write the code, a check cell runs hidden tests and answers pass or a hint.
#
# **Differences from the course text.** The course imports `from tinygrad import Tensor`; here it is
# `from lazynb import Tensor` (the `%load_ext lazynb` line also puts `Tensor`, `Context`, `GlobalCounters` and
# friends into the notebook). The CPU backend that older tinygrad called `CLANG` is called `CPU` in lazynb,
# and `CLANG` still works as another name for it. The course's `projects/01_tensor_basics.py` is
# `examples/project1_tensor_basics.py` in this repository.

# %%
%load_ext lazynb
import time
import numpy as np
from lazynb import Tensor, Device, GlobalCounters, dtypes
from lazynb.trace import Recorder
from lazynb.notebook.quiz import quiz
print("default device:", Device.DEFAULT)

# %% [markdown]
# ## 1. Making tensors
#
# Every factory method gives a tensor with a shape and a dtype, known before anything is computed. A list of
# Python ints becomes int32 (Part 2); a NumPy array keeps its own dtype.

# %%
made = {
  "Tensor([1, 2, 3, 4])": Tensor([1, 2, 3, 4]),
  "Tensor(np.array([[1., 2.], [3., 4.]]))": Tensor(np.array([[1.0, 2.0], [3.0, 4.0]])),
  "Tensor.zeros(3, 4)": Tensor.zeros(3, 4),
  "Tensor.ones(3, 4)": Tensor.ones(3, 4),
  "Tensor.randn(3, 4)": Tensor.randn(3, 4),
  "Tensor.rand(3, 4)": Tensor.rand(3, 4),
  "Tensor.arange(0, 10, 2)": Tensor.arange(0, 10, 2),
  "Tensor.eye(4)": Tensor.eye(4),
}
for name, t in made.items(): print(f"{name:42s} shape={str(t.shape):8s} dtype={t.dtype.name}")

# %%
assert made["Tensor([1, 2, 3, 4])"].dtype == dtypes.int32
assert made["Tensor(np.array([[1., 2.], [3., 4.]]))"].dtype == dtypes.float64   # a numpy array keeps its dtype
assert made["Tensor.arange(0, 10, 2)"].tolist() == [0, 2, 4, 6, 8]
assert (made["Tensor.eye(4)"].numpy() == np.eye(4)).all()
r = made["Tensor.rand(3, 4)"].numpy()
assert r.shape == (3, 4) and ((0 <= r) & (r < 1)).all()
print("shapes, dtypes and values as expected")

# %% [markdown]
# ## 2. Nothing runs until you ask
#
# `a + b` doesn't add anything: it records an ADD node in a graph of UOps. The graph is cut into kernels,
# compiled and run only when a value is needed (`.realize()`, `.numpy()`, `.tolist()`, `.item()`).
#
# The inputs are realized first: `Tensor.rand` makes its numbers on the host, and realizing copies them to
# the device, so the count below is only about the expression. They are 128 x 128: past 65,536 numbers a float sum
# adds in two stages, partial sums and then their total, so that float32 keeps its digits (docs/fusion.md, "A long
# float sum adds in two stages"); the same line on 512 x 512 is two kernels, in tinygrad too.

# %%
a, b = Tensor.rand(128, 128).realize(), Tensor.rand(128, 128).realize()
GlobalCounters.reset()
out = (a + b).relu().sum()
print("kernels run so far:", GlobalCounters.kernel_count)
print("the top of the graph:", out.uop.op, "<-", [s.op for s in out.uop.src])
assert GlobalCounters.kernel_count == 0

# %% [markdown]
# Run it: the add, the relu and the sum become one kernel, as in Part 2's `capture()` example. The output below the cell is the compiler's report: the **schedule** (one row per kernel), the
# **kernels** (name, generated C, opts) and more tabs. `--debug 1` also prints tinygrad's one-line summary.

# %%
%%tinygrad --debug 1
GlobalCounters.reset()
out.realize()
fused_kernels, fused_bytes = GlobalCounters.kernel_count, GlobalCounters.global_mem

# %%
print("kernels:", fused_kernels, " bytes moved:", fused_bytes)
assert fused_kernels == 1
assert np.isclose(out.item(), np.maximum(a.numpy() + b.numpy(), 0).sum(), rtol=1e-4)

# %% [markdown]
# ## 3. Reading the kernel
#
# `DEBUG=3` prints each kernel's source; the Kernels tab shows the same text. The add, the relu and the sum
# are all in one C function: the add of two loads, the relu as a `?:` select, and the sum as an accumulator in a
# loop.

# %%
with Recorder() as rec:
  (Tensor.rand(64, 64).realize() + Tensor.rand(64, 64).realize()).relu().sum().realize()
src = [e.data["program"].src for e in rec.of("exec") if e.data["kind"] == "kernel"][0]
print(src)

# %%
assert "<=0.0f))?" in src and ":0.0f" in src               # relu, as WHERE
assert "+" in src                                            # the add of the two loads
assert "acc0" in src and "for (" in src                      # the sum: an accumulator in a loop
print("add, relu and sum all found in one kernel")

# %% [markdown]
# ## 4. Breaking fusion on purpose
#
# Calling `.realize()` after every operation forces each intermediate result into memory: three kernels instead
# of one (Part 4 measured the same for eager mode). What does that cost in bytes?

# %%
%%tinygrad --debug 1 --show schedule,kernels,timing
GlobalCounters.reset()
c = (a + b).realize()
d = c.relu().realize()
e = d.sum().realize()
unfused_kernels, unfused_bytes = GlobalCounters.kernel_count, GlobalCounters.global_mem

# %%
print(f"kernels: fused {fused_kernels}, unfused {unfused_kernels}")
print(f"bytes moved: fused {fused_bytes:,}, unfused {unfused_bytes:,} ({unfused_bytes / fused_bytes:.1f}x)")
assert unfused_kernels == 3
assert unfused_bytes >= 2 * fused_bytes
assert np.isclose(e.item(), out.item(), rtol=1e-5)

# %% [markdown]
# What about speed? Time both versions after their kernels are compiled. Each run uses new inputs, because a
# result that was already realized is never computed again (equal graphs are the same object).

# %%
def best_time(fn, reps=5):
  ts = []
  for _ in range(reps):
    x, y = Tensor.rand(512, 512).realize(), Tensor.rand(512, 512).realize()
    st = time.perf_counter(); fn(x, y); ts.append(time.perf_counter() - st)
  return min(ts)
t_fused = best_time(lambda x, y: (x + y).relu().sum().realize())
t_unfused = best_time(lambda x, y: (x + y).realize().relu().realize().sum().realize())
print(f"fused {t_fused * 1e3:.2f} ms, unfused {t_unfused * 1e3:.2f} ms per run")

# %% [markdown]
# On a busy machine timings jump around, so this notebook checks the bytes moved (exact) and only prints the
# times. Fewer bytes through memory is where fusion's speed comes from.
#
# ## 5. The schedule, before and after a realize
#
# `.schedule()` returns the list of kernels that `.realize()` would run, without running them.

# %%
c2 = a * b                      # a new expression, not computed yet
before = c2.relu().sum().schedule()
print("before:", before)

# %%
q_after = quiz("After c2.realize(), how many buffers does the one kernel of c2.relu().sum() use?",
               ["1: only its output", "2: its output and c2", "3: its output, a and b"], key="p01_tensor_basics.q_after")

# %%
c2.realize()
after = c2.relu().sum().schedule()
print("after: ", after)
assert c2.schedule() == [], "nothing is left to run for c2 itself"
assert len(before[0].bufs) == 3 and len(after[0].bufs) == 2
q_after.reveal(len(after[0].bufs))
assert after[0].bufs[1] is c2._buffer()

# %% [markdown]
# ## Bonus: the compiler simplifies before it generates code
#
# `(t + 1) * 2 - 2` is built as an add, a multiply and a subtract (an add of -2). The rewrite rules distribute
# and fold the constants, `(t + 1) * 2 - 2 = t*2 + 2 - 2 = t*2`, so the kernel does a single multiply. And building
# the same expression twice gives the very same graph node (hash-consing), so it's computed once.

# %%
%%tinygrad --noopt --show kernels
t = Tensor([1, 2, 3, 4])
folded = ((t + 1) * 2 - 2).realize()

# %%
with Recorder() as rec: ((Tensor([5, 6, 7, 8]) + 1) * 2 - 2).realize()
src2 = [e.data["program"].src for e in rec.of("exec") if e.data["kind"] == "kernel"][0]
store = [l for l in src2.splitlines() if "*(data0" in l and "=" in l]
print("\n".join(store))
assert folded.tolist() == [2, 4, 6, 8] and store and all("*2)" in l and "+" not in l.split("=")[1] for l in store)
A, B = t * 4, t * 4
assert A is not B and A.uop is B.uop
print("one multiply by 2, and t * 4 built twice is one node")

# %% [markdown]
# ## Exercise: a fused mean squared error
#
# Write `mse(a, b)`: the mean of `(a - b)` squared over all elements, a scalar (shape `()`), that runs as **one**
# kernel when realized. The check compares it with numpy on three shapes and counts the kernels.

# %%
# EXERCISE p01.mse
def mse(a, b):
  # YOUR CODE: elementwise ops, then one reduce; no realize() in between
  raise NotImplementedError

# %%
from lazynb.notebook.exercise import check
check("p01.mse", mse)
