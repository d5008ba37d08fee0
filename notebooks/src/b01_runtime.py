# %% [markdown]
# # Build 1: the runtime, yours
#
# Build 0 had you write the graph every stage works on. From here on you write the stages themselves: lazynb's
# compiler is a list of named **stages**, each a function with a contract: what it takes, what it gives. Any stage
# can be swapped for a function of yours, and from then on everything you compute runs through it.
#
# ```
# schedule -> optimize -> lower -> simplify -> linearize -> render -> compile -> load -> run
# ```
#
# Each build notebook works the same way:
# 1. You see what the stage is given and what it must give back.
# 2. You write it in the exercise cell (the cell has its own imports: it is saved as a file, on its own).
# 3. The check runs a corpus of generated tensor programs (elementwise ops, reductions, masked views, matmuls,
#    convolutions, softmax...) through lazynb's real pipeline **with your function in place of lazynb's**, kind by
#    kind, and compares every value with what lazynb's own stage gives. A kernel of yours that crashes or never
#    stops fails the check; it does not take the notebook down.
# 4. When the check passes, your stage is **kept**: the cell is saved as `my_compiler/STAGE.py`, and
#    `with mine():` runs anything on every stage you have kept. The last build notebook trains MNIST that way.
#
# The build track runs with `NOOPT=1`: kernels are plain loops, with no vector lanes and no threads. That keeps
# the stages you write small; Part 7 shows what the optimizations add.
#
# This notebook starts at the end of the pipeline: **compile** (C source to a binary) and **load** (a binary to
# something you can call). Project 7 built a device whose "binary" was Python; here it is real machine code.

# %%
%load_ext lazynb
import numpy as np
from lazynb import Tensor, Context, pipeline
from lazynb.notebook.build import mine
from lazynb.notebook.exercise import check
print(" -> ".join(pipeline.stages()))
for name in ("compile", "load", "run"):
  st = pipeline.stage(name)
  print(f"\n{name}: takes {st.takes}\n  gives {st.gives}")

# %% [markdown]
# ## What the compile stage is given
#
# `pipeline.use(name, fn)` runs `fn` in place of a stage inside a `with` block. A function that records its
# argument and then calls lazynb's own stage (`pipeline.reference(name)`) is the simplest replacement there is:
# it shows you the stage's input without changing anything.

# %%
sources = []
def spy_compile(device, src):
  sources.append(src)
  return pipeline.reference("compile")(device, src)

with Context(NOOPT=1), pipeline.use("compile", spy_compile):
  y = (Tensor([1.0, 2.0, 3.0, 4.0]) * 2 + 1).numpy()
print(y)
print(f"{len(sources)} kernel compiled; its source:\n")
print(sources[0])
assert len(sources) == 1 and "void " in sources[0] and np.allclose(y, [3, 5, 7, 9])

# %% [markdown]
# One C function. Its name is the kernel's name; each argument `dataN` is a pointer to one buffer: `data0` is
# the output, the others are inputs. If the program has symbolic variables, they come after the buffers, as
# `int`s. The function returns nothing: it writes into `data0`.
#
# ## Exercise 1: compile
#
# `my_compile(device, src)` gets the device's name (`"CPU"`; you can ignore it) and the C source, and returns the
# **bytes of a shared library** that holds the function. The C compiler does the work:
#
# - `subprocess.run([CC, "-shared", "-fPIC", "-O2", "-x", "c", "-", "-o", path], input=src.encode(), capture_output=True)`
#   compiles C read from stdin (`-x c -`) into a shared library at `path` (`-shared -fPIC`);
# - a compiler that fails returns a nonzero `returncode` and says why in `stderr`: raise an error with that text;
# - `tempfile.TemporaryDirectory()` gives a folder that is deleted afterwards; read the file's bytes before it goes.
#
# The check first compiles a tiny function and looks at what you return, then grades you inside the pipeline.

# %%
# EXERCISE b01.compile
import os, shutil, subprocess, tempfile
CC = os.environ.get("CC") or shutil.which("clang") or shutil.which("gcc") or "cc"

def my_compile(device, src):
  """C source -> the bytes of a shared library holding its function."""
  raise NotImplementedError  # YOUR CODE

# %%
check("b01.compile", my_compile)

# %% [markdown]
# ## Exercise 2: load
#
# `my_load(device, name, lib)` gets the bytes your compile stage made and the kernel's name, and returns a
# **program**: a function that runs the kernel.
#
# - `ctypes.CDLL(path)` opens a shared library, but only from a file: write `lib` to a temporary file first
#   (`tempfile.mkstemp(suffix=".so")` gives one). Once opened, the file can be deleted.
# - `getattr(library, name)` is the C function.
# - The program is called as `program(*bufs, global_size=..., local_size=..., vals=..., wait=...)`. Each buffer is
#   a numpy array (of bytes); C wants its address: `ctypes.c_void_p(buf.ctypes.data)`. Each value in `vals` is an
#   `int` for one variable: pass it as `ctypes.c_int(v)`, after the buffers. The sizes are for devices that launch a
#   grid (a GPU); this kernel loops over everything itself, so call it once.
# - It returns the seconds the call took (`time.perf_counter()` before and after).

# %%
# EXERCISE b01.load
import ctypes, os, tempfile, time

def my_load(device, name, lib):
  """The bytes of a shared library -> program(*bufs, global_size=, local_size=, vals=(), wait=False), which runs
  the function `name` on the buffers and returns the seconds it took."""
  raise NotImplementedError  # YOUR CODE

# %%
check("b01.load", my_load)

# %% [markdown]
# ## Your runtime, running the course
#
# Both stages passed? Then they were kept (`my_compiler/compile.py` and `my_compiler/load.py`), and `with mine():`
# runs on them. The `%%tinygrad` view below says at the top which stages were yours; the Kernels tab shows the
# kernels your runtime compiled and ran. (With nothing kept yet, the block says so and runs on lazynb's own.)

# %%
%%tinygrad
x = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
with mine() as yours:
  probs = x.softmax(axis=1).numpy()
want = np.exp(np.arange(12).reshape(3, 4) - np.arange(12).reshape(3, 4).max(axis=1, keepdims=True))
assert np.allclose(probs, want / want.sum(axis=1, keepdims=True), atol=1e-6)
print("your stages:", ", ".join(yours) or "none yet", "| rows sum to", probs.sum(axis=1))

# %% [markdown]
# Next, **Build 2** moves one stage up the pipeline: you write the renderer, which turns a kernel's list of
# UOps into the C source your compile stage now compiles.
