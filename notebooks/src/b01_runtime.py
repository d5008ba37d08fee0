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
# the stages you write small; Part 7 shows what the optimizations add. (Exercise 3 below is the one exception: a
# runtime that launches kernels split over threads.)
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
#   grid (a GPU); this kernel loops over everything itself, so call it once (Exercise 3 launches kernels that do not).
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
# ## Launching over a grid
#
# Under `NOOPT=1` a kernel is one call that loops over everything. lazynb's optimizer can also split a kernel's outer
# loop over CPU threads (a **THREAD axis**, Part 7): the kernel then does one share of the work per call, and the
# program must call it once per share, each time with another **thread id**. A GPU launches a grid of ids the same way.
#
# `threaded` (from `lazynb.notebook.build`) is an optimize stage that gives every kernel it can a THREAD axis of 4, 3 or
# 2 ids, the same on every machine. Spying on compile and load shows what such a kernel looks like, and how it is
# launched:

# %%
from lazynb.notebook.build import threaded
sources.clear()
launches = []
def spy_load(device, name, lib):
  program = pipeline.reference("load")(device, name, lib)
  def spied(*bufs, **sizes):
    launches.append((name, sizes["global_size"], tuple(sizes.get("vals", ()))))
    return program(*bufs, **sizes)
  return spied

with Context(NOOPT=1), pipeline.use("optimize", threaded), pipeline.use("compile", spy_compile), pipeline.use("load", spy_load):
  rows = (Tensor(np.arange(12, dtype=np.float32).reshape(4, 3)) * 2 + 1).sum(axis=1).numpy()
print(rows)
print("launched (name, global_size, vals):", launches, "\n")
print(sources[0])
assert launches[0][1][0] == 4 and "tidx0" in sources[0] and np.allclose(rows, [9, 27, 45, 63])

# %% [markdown]
# The function takes one more argument, last: `tidx0_arg`, the thread id, an `int` after the buffers (and after the
# variables' values, when there are any). This kernel sums row `tidx0` of the four; `global_size=(4, 1, 1)` says there
# are 4 ids, 0 to 3. The kernel takes its id modulo 4 (a known range helps the C compiler), so a wrong id does not write
# outside the output: it computes a row twice and leaves another unwritten. (`lz_chk` is one more buffer: lazynb
# compiles a kernel made by a replaced code stage with bounds checks, and records there any access outside a buffer.
# Your program passes it like the others; the lines `if (!(...)) { lz_oob(...); return; }` are those checks.)
#
# ## Exercise 3: launch over the grid
#
# `my_grid_load(device, name, lib)` is your `my_load` (copy it), with a program that launches over the grid:
#
# - `global_size[0] == 1`: no thread axis, the kernel loops over everything: call it once, as before;
# - otherwise call it once per thread id `0, 1, ..., global_size[0] - 1`, the id as a `ctypes.c_int` after the
#   buffers and the values of `vals`. One call after another is fine. (lazynb's own runtime calls them on a
#   `concurrent.futures.ThreadPoolExecutor`: ctypes lets go of Python's lock during a call, so they run on
#   separate cores. Optional.)
#
# The check first launches a probe kernel that counts the ids it is called with, then grades you on the corpus with
# `threaded` kernels. When it passes, `my_compiler/load.py` holds this load in place of your first: it runs both kinds.

# %%
# EXERCISE b01.launch
import ctypes, os, tempfile, time

def my_grid_load(device, name, lib):
  """my_load, whose program runs a kernel with a thread axis (global_size[0] > 1) once per thread id, the id a c_int
  after the buffers and the vals; with global_size[0] == 1 it calls the kernel once, as before."""
  raise NotImplementedError  # YOUR CODE

# %%
check("b01.launch", my_grid_load)

# %% [markdown]
# ## Your runtime, running the course
#
# Your stages passed? Then they were kept (`my_compiler/compile.py` and `my_compiler/load.py`), and `with mine():`
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
