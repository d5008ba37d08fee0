# %% [markdown]
# # lazynb: a first look at a lazy tensor compiler
#
# This notebook runs a few tensor operations and shows what the compiler does with them. Nothing is
# computed when you write `a + b`: lazynb records the operation in a graph of **UOps**, and only when you
# ask for a value (`.numpy()`, `.tolist()`, `.realize()`) does it cut the graph into **kernels**, write C
# source for each one, compile it, and run it.
#
# The course notebooks build on this one, part by part.

# %%
from lazynb import Tensor, Device, Context, GlobalCounters, dtypes
print("default device:", Device.DEFAULT)

# %% [markdown]
# ## Laziness: a tensor is a graph until you ask for its value
#
# Before it runs, `t` is a COPY of a buffer of host data (on the `PYTHON` device) to the CPU.

# %%
t = Tensor([1, 2, 3, 4])
print(t.uop)

# %% [markdown]
# Predict: how many kernels does `t + 3 + 4` need, and what number will the generated C code add?

# %%
from lazynb.trace import Recorder
GlobalCounters.reset()
with Recorder() as rec:
  result = (t + 3 + 4).tolist()
programs = [e.data["program"] for e in rec.of("program")]
print(result)
print(programs[0].src)
assert result == [8, 9, 10, 11]
assert GlobalCounters.kernel_count == 1
assert "+7)" in programs[0].src, "constant folding turns +3+4 into +7"

# %% [markdown]
# After realizing, the tensor's graph is just a BUFFER on the CPU:

# %%
print(t.uop)

# %% [markdown]
# ## Fusion: three elementwise ops and a sum are one kernel

# %%
a, b = Tensor.rand(64, 64), Tensor.rand(64, 64)
sched = (a + b).relu().sum().schedule()
print(len(sched), "kernel:", [si.kind for si in sched])
assert [si.kind for si in sched] == ["kernel"]

# %% [markdown]
# ## Movement ops cost nothing: they only change the ShapeTracker

# %%
x = Tensor.rand(4, 8).realize()
GlobalCounters.reset()
y = x.permute(1, 0).reshape(2, 16).realize()
print("kernels:", GlobalCounters.kernel_count)
assert GlobalCounters.kernel_count == 0

# %% [markdown]
# The index math of a view, as text:

# %%
from lazynb.shape import ShapeTracker
st = ShapeTracker.from_shape((4, 8)).permute((1, 0)).pad(((1, 1), (0, 0)))
print(st.render())

# %% [markdown]
# ## DEBUG levels
#
# `DEBUG=2` prints a line per kernel, `DEBUG=3` adds the source, `NOOPT=1` turns the optimizer off, so
# the 4-element kernel becomes a plain loop:

# %%
with Context(DEBUG=3, NOOPT=1):
  (Tensor([1, 2, 3, 4]) + 7).realize()
