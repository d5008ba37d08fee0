# %% [markdown]
# # Part 2 — Setup and first steps
#
# This notebook installs nothing by itself; it checks that what you installed works, and shows the three tools
# you will use in every later part: the **DEBUG flags**, the **`%%tinygrad` cell magic** and, for scripts,
# **`capture()`**.
#
# ## Installing
#
# The course installs tinygrad from source in *editable* mode (`git clone ...; pip install -e .`), so that a
# change you make to the library takes effect the next time you import it. Do the same with lazynb, from the
# repository's root:
#
# ```bash
# pip install -e ".[notebook]"      # lazynb + JupyterLab, ipywidgets, safetensors, pytest, llvmlite
# python -m lazynb.notebook         # opens JupyterLab on notebooks/00_index.ipynb
# bash .ci/run                      # everything, plus the whole test suite (what CI runs)
# ```
#
# lazynb needs Python 3.10 or newer, NumPy, and a C compiler for its CPU device (clang, else cc or gcc). With no
# C compiler at all you can still run everything on the `PYTHON` device, an interpreter (`PYTHON=1`).

# %%
%load_ext lazynb
import sys, os, io, contextlib
import lazynb
from lazynb import Tensor, Device, Context, GlobalCounters, dtypes
from lazynb.trace import capture
from lazynb.notebook.quiz import quiz, ask_number
from lazynb.runtime.ops_cpu import find_cc
print("python", sys.version.split()[0])
print("lazynb", lazynb.__version__, "from", os.path.dirname(lazynb.__file__))
print("C compiler for the CPU device:", find_cc())

# %% [markdown]
# ## Verifying your setup
#
# The course's first check prints the default device and a small tensor. Before running it:

# %%
q_print = quiz("What does print(Tensor([1, 2, 3]).numpy()) print?",
               ["[1. 2. 3.]", "[1 2 3]", "tensor([1, 2, 3])", "nothing: the tensor is lazy"], key="02_setup.q_print")

# %%
print(Device.DEFAULT)
t = Tensor([1, 2, 3])
print(t.numpy(), t.dtype, t.numpy().dtype)
print(Tensor([1.0, 2.0, 3.0]).numpy())

# %%
assert str(t.numpy()) == "[1 2 3]"
q_print.reveal(t.numpy())
assert t.dtype == dtypes.int32 and str(Tensor([1.0, 2.0, 3.0]).numpy()) == "[1. 2. 3.]"
assert Device.DEFAULT == "CPU"

# %% [markdown]
# **Which device is the default?** tinygrad picks the best accelerator it finds (METAL on a Mac, CUDA with an
# NVIDIA GPU, ...). lazynb always starts on `CPU` (C compiled with clang) unless you choose before importing it:
# `DEVICE=PYTHON`, or one of `CPU=1`, `CLANG=1`, `PYTHON=1`, `CL=1`. `CLANG` is kept as another name for `CPU`:
# tinygrad renamed its clang backend to CPU, and older tutorials (including this course) still say CLANG. There is
# no METAL backend here. These are the devices lazynb knows, and whether each can run kernels on this machine:

# %%
for name in sorted(Device._devices):
  ok, why = Device.available(name)
  print(f"  {name:7s} {'runs here' if ok else 'cannot run here: ' + why.splitlines()[0][:90]}")
print("CLANG means", Device.canonicalize("CLANG"))

# %%
assert Device.available("CPU")[0] and Device.available("PYTHON")[0]
assert Device.canonicalize("CLANG") == "CPU" and "METAL" not in Device._devices

# %% [markdown]
# (`CL` is OpenCL through pyopencl; on a machine without a GPU it runs on PoCL, an OpenCL for the CPU. `CUDA` needs
# an NVIDIA GPU to run, but can always *compile*, so you can read its code: see Part 8.)
#
# ## The DEBUG flags
#
# | flag | what lazynb prints or does |
# |---|---|
# | `DEBUG=1` | one line per realize: kernels run, time |
# | `DEBUG=2` | one line per kernel: name (coloured by axis kind), device, time, GFLOPS, GB/s |
# | `DEBUG=3` | the generated source of every kernel it compiles, with the optimizations applied |
# | `DEBUG=4` | the kernel AST, the lowered UOps and the linearized program, before the source |
# | `DEBUG=5` | the schedule: every item and why it is a kernel |
# | `DEBUG=6`, `7` | still more detail (the *Rewrites* tab of `%%tinygrad` is the readable way to see rewrite passes) |
# | `NOOPT=1` | no kernel optimizations: plain loops |
# | `BEAM=N` | search for the fastest kernel, beam width N (Part 7) |
#
# The course also lists `VIZ=1`, tinygrad's browser graph explorer. In lazynb, `VIZ=1 python script.py` records the
# whole run and at exit writes one HTML page with the same view a `%%tinygrad` cell shows (its *Tensor graph* and
# *Rewrites* tabs hold the graphs and rewrites), prints its path and opens it in a browser when there is one.
#
# **One trap.** These flags are read from the environment *when lazynb is imported*. The course's snippets set
# `os.environ['DEBUG'] = '2'` inside Python, which only works if it happens before the import. In a notebook the
# import has already happened. Set the flag both ways and compare what is printed:

# %%
def printed(fn) -> str:
  buf = io.StringIO()
  with contextlib.redirect_stdout(buf): fn()
  return buf.getvalue()

os.environ["DEBUG"] = "2"
a = Tensor.rand(16, 16)
out_env = printed(lambda: (a * 2).realize())
del os.environ["DEBUG"]
with Context(DEBUG=2):
  out_ctx = printed(lambda: (a * 3).realize())
print("with os.environ:", repr(out_env))
print("with Context:   ", out_ctx)

# %%
assert out_env == ""
assert out_ctx.startswith("*** CPU") and "GFLOPS" in out_ctx

# %% [markdown]
# `Context(DEBUG=2)` sets the flag for one block and restores it afterwards; from a shell, `DEBUG=2 python
# script.py` sets it for the whole run.
#
# Now climb the DEBUG levels on one small kernel. A subtlety first: lazynb prints a kernel's source when it
# *compiles* it. A kernel it already compiled in this session comes from its method cache, silently: realize
# `b + 1` twice, for a fresh `b` of the same shape each time, and only the first prints C.

# %%
from lazynb.engine.realize import method_cache
def run_once():
  b = Tensor.rand(4, 5)
  (b + 1).realize()
method_cache.clear()   # forget kernels compiled earlier, so this cell shows the same thing when you run it again
with Context(DEBUG=3):
  first = printed(run_once)
  second = printed(run_once)
print(first)
print("second time:", second)

# %%
n_sources = (first + second).count("void ")
assert n_sources == 1 and "void E_" in first and second.startswith("***")

# %% [markdown]
# `DEBUG=4` adds the three stages before the source: the kernel **AST** the scheduler produced, the **lowered**
# graph (index math over loops) and the **linearized** list of UOps. Part 7 walks through them; for now, just
# see how much there is.

# %%
method_cache.clear()
with Context(DEBUG=4):
  text = printed(lambda: (Tensor.rand(3, 5) * 7).realize())
print(text[:3000])

# %%
assert "--- AST of" in text and "--- lowered" in text and "--- linearized" in text and "void " in text

# %% [markdown]
# ## The `%%tinygrad` cell magic
#
# `%load_ext lazynb` (the first code cell) registers the magic and puts `Tensor`, `dtypes`, `Device`, `nn`,
# `TinyJit`, `UOp`, `Ops`, `UPat`, `PatternMatcher`, `graph_rewrite`, `Context` and `GlobalCounters` in the
# notebook's namespace. A cell that starts with `%%tinygrad` runs as usual, and then shows what the compiler did.
# Its flags:
#
# | flag | effect |
# |---|---|
# | `--debug N` | DEBUG level for printed output while the cell runs |
# | `--noopt` | no kernel optimizations |
# | `--beam N` | BEAM search with width N |
# | `--device NAME` | run on CPU, PYTHON, CL, CUDA ... |
# | `--show a,b` | only these views: `schedule, graph, shapetracker, kernels, timing, rewrites` |
# | `--no-controls` | no sliders |
#
# The **sliders** above the views (DEBUG, NOOPT, BEAM and a device menu) re-run *this cell's* code with the new
# setting and replace the views in place; other cells are not re-run. A device that cannot run here says why.
#
# With `--noopt`, the kernel that adds 7 to four ints is a plain loop:

# %%
%%tinygrad --noopt --debug 2 --show schedule,kernels
t = Tensor([1, 2, 3, 4])
r = (t + 7).realize()
print(r.tolist())

# %% [markdown]
# In the **Kernels** tab, `E_4` is a `for (int gidx0 = 0; gidx0 < 4; gidx0++)` loop with one load and one store.
# Tick the NOOPT box off and the loop disappears. The printed `***` line is DEBUG=2's line for that kernel.
# The schedule at the top of the **Kernels** tab shows two items: the copy of your Python list to the CPU, then the kernel.

# %%
with Context(NOOPT=1), capture(rewrites=False) as tr_noopt:
  (Tensor([1, 2, 3, 4]) + 7).realize()
with capture(rewrites=False) as tr_opt:
  (Tensor([1, 2, 3, 4]) + 7).realize()
src_noopt, src_opt = tr_noopt.kernels[0]["source"], tr_opt.kernels[0]["source"]
assert "for (" in src_noopt and "for (" not in src_opt and src_opt.count("+7)") == 4
assert [s["kind"] for s in tr_opt.schedule] == ["copy", "kernel"]

# %% [markdown]
# `%tinygrad` on a line of its own (one `%`) sets **session defaults** for every later `%%tinygrad` cell; with no
# arguments it prints them. A mistyped flag prints a usage message and the cell does not run.

# %%
%tinygrad --debug 1

# %%
%%tinygrad --show timing
(Tensor.rand(8) * 2).realize()

# %%
%tinygrad --debug 0

# %%
%%tinygrad --debug 9
print("this line never runs")

# %% [markdown]
# ## In scripts: `capture()`
#
# The views are drawn from a *trace document* that lazynb's trace bus records. In a script or a test, `capture()`
# gives you the same document as Python data. The notebooks' `assert`s use it:

# %%
from lazynb.trace import capture
a, b = Tensor.rand(32, 32), Tensor.rand(32, 32)
with capture() as tr:
  (a + b).relu().sum().realize()
print(tr.summary())
print("kernels:", [k["name"] for k in tr.kernels])
print("schedule:", [(s["kind"], s["reason"]) for s in tr.schedule])
print("keys of the document:", sorted(tr.to_json()))

# %%
assert len(tr.kernels) == 1 and tr.schedule[0]["reason"] == "realize"
assert {"schedule", "kernels", "graphs", "views", "rewrites", "timing"} <= set(tr.to_json())

# %% [markdown]
# `GlobalCounters` keeps running totals: kernels run, estimated FLOPs and bytes, time. Reset it, run, read it.
# Before you do, estimate the bytes: `a` and `b` are 32x32 float32 tensors, already in memory.

# %%
q_bytes = ask_number("How many bytes does GlobalCounters count as moved by (a @ b).realize()?", rel_tol=0.25, unit="bytes", key="02_setup.q_bytes")

# %%
GlobalCounters.reset()
(a @ b).realize()
print(f"kernels {GlobalCounters.kernel_count}, {GlobalCounters.global_ops} FLOPs, {GlobalCounters.global_mem} bytes moved")
assert GlobalCounters.kernel_count == 1 and GlobalCounters.global_ops == 2 * 32 * 32 * 32
assert GlobalCounters.global_mem == 3 * 32 * 32 * 4
q_bytes.reveal(GlobalCounters.global_mem)

# %% [markdown]
# ## Exercise: count the kernels
#
# The course counts kernels all the time. Write `count_kernels(fn)`: it calls `fn()` once (fn builds and maybe
# realizes some tensors) and returns how many kernels that call ran, as an int. Kernels that ran before the call
# must not count, and `GlobalCounters` must not be reset: a notebook cell around your function may be counting too.
# The check compares your count with the trace on a few fresh computations.

# %%
# EXERCISE 02.count_kernels
def count_kernels(fn) -> int:
  # YOUR CODE
  raise NotImplementedError

# %%
from lazynb.notebook.exercise import check
check("02.count_kernels", count_kernels)

# %% [markdown]
# ## Exercise: the DEBUG=2 lines of one call
#
# Write `kernel_lines(fn)`: it calls `fn()` once with DEBUG at 2 and returns the lines DEBUG=2 printed for its
# kernels (the ones that start with `***`), as a list of strings, in order. DEBUG must be back to what it was
# afterwards. Remember the trap above; `printed()` from that section may help.

# %%
# EXERCISE 02.debug_lines
def kernel_lines(fn) -> list:
  # YOUR CODE
  raise NotImplementedError

# %%
check("02.debug_lines", kernel_lines)

# %% [markdown]
# ## Choosing a device
#
# Pass `device=` to a tensor, or change the default. The `PYTHON` device interprets the compiled UOps one by one
# in Python: slow, but it needs no compiler, and its "source" is the UOp list itself (Part 8).

# %%
old = Device.DEFAULT
Device.DEFAULT = "PYTHON"
try:
  with capture(rewrites=False) as tr_py:
    on_python = (Tensor([1, 2, 3, 4]) * 2).tolist()
finally: Device.DEFAULT = old
print(on_python, "computed on", tr_py.kernels[0]["device"])
print(tr_py.kernels[0]["source"][:400])
assert on_python == [2, 4, 6, 8] and tr_py.kernels[0]["device"] == "PYTHON" and Device.DEFAULT == "CPU"

# %% [markdown]
# Next: **03_tensor_api**, the Tensor API itself.
