# %% [markdown]
# # lazynb: the course map
#
# These notebooks teach how a lazy tensor compiler works, following a tinygrad course part by part, with **lazynb**
# as the compiler you take apart. lazynb has tinygrad's API (`Tensor`, `.uop`, `.schedule()`, `realize()`,
# `PatternMatcher`, `DEBUG`/`NOOPT`/`BEAM`) in tinygrad's classic design: lazy UOp graph → scheduler with fusion →
# kernel optimizations → lowering → linearizer → C (or OpenCL, CUDA) → runtime. Every stage reports to a trace bus,
# and the notebooks draw what it reports.
#
# Each notebook works the same way: **predict → run → see**. A question comes first; the next cell runs the compiler
# and shows what it did; a check cell compares *your* prediction with the measurement (a kernel count, a gradient, the
# generated source) and `assert`s what was measured against numpy or the source. If lazynb changes, the notebooks fail
# in CI instead of teaching something that is no longer true. Part and project notebooks end with **exercises**: you
# fill in a stub marked `# YOUR CODE`, and the cell after it runs hidden tests and answers pass, or a hint.
#
# ## The course
#
# | notebook | course part | what you learn |
# |---|---|---|
# | [01_why](01_why.ipynb) | 1. Why tinygrad? | a readable compiler; eager vs graph vs lazy; the short list of ops a chip must run |
# | [02_setup](02_setup.ipynb) | 2. Setup | installing; devices; DEBUG levels (and why `os.environ['DEBUG']` after import does nothing); the `%%tinygrad` magic; `capture()` |
# | [03_tensor_api](03_tensor_api.ipynb) | 3. Tensor API | creating tensors (which ones are already realized, and why), dtypes, operations, getting values back |
# | [04_laziness](04_laziness.ipynb) | 4. Lazy evaluation | nothing runs until you ask; fusion; the UOp graph; deduplication; `kernelize()`; from model code to kernels |
# | [05_op_types](05_op_types.ipynb) | 5. The three op types | elementwise, reduce and movement ops; the ShapeTracker; conv as two views, a MUL and a SUM |
# | [06_autograd](06_autograd.ipynb) | 6. Autograd | gradients as graph rewrites (`pm_gradient`); the chain rule; the training loop; `nn`, optimizers, saving |
# | [07_pipeline](07_pipeline.ipynb) | 7. The compiler pipeline | schedule → opts → lowering → rewrite rules → linearize → C; why NOOPT is slow; BEAM search; TinyJit |
# | [08_backends](08_backends.ipynb) | 8. Backends | allocator, compiler, runtime, renderer; CPU, PYTHON, OpenCL (PoCL) and CUDA (compile-only) side by side |
# | [10_reading_the_source](10_reading_the_source.ipynb) | 10. Reading the source | the reading list mapped to lazynb's modules; tracing a realize through the code |
# | [11_contributing](11_contributing.ipynb) | 11. Contributing | tests, a new op, a new rewrite rule, a bug report, the house style |
#
# Part 9 of the course is its list of projects. Each has a notebook:
#
# | project | what you build |
# |---|---|
# | [notebooks/p01_tensor_basics.ipynb](p01_tensor_basics.ipynb) | tensors, laziness and fusion: count kernels, read them, break fusion on purpose |
# | [notebooks/p02_op_types.ipynb](p02_op_types.ipynb) | the three op types in generated code; a matmul from expand, multiply and sum |
# | [notebooks/p03_autograd.ipynb](p03_autograd.ipynb) | gradients by hand, the backward rules, an MLP on XOR, a custom loss checked numerically |
# | [notebooks/p04_mnist.ipynb](p04_mnist.ipynb) | a CNN trained on MNIST, profiled, BEAM-searched, saved and reloaded |
# | [notebooks/p05_compiler_pipeline.ipynb](p05_compiler_pipeline.ipynb) | every stage of the compiler for one computation |
# | [notebooks/p06_custom_ops.ipynb](p06_custom_ops.ipynb) | GELU, RMSNorm and a gated unit from primitives, fused and checked |
# | [notebooks/p07_custom_backend.ipynb](p07_custom_backend.ipynb) | a backend of your own: allocator, compiler, runner, registered as a device |
#
# ## The build track: write the compiler yourself
#
# After the course, rebuild lazynb's pipeline stage by stage. Each exercise is graded inside the real compiler (a
# corpus of generated programs runs with your function in place of lazynb's); a stage that passes is kept, and from
# then on `with mine():` runs the course on your code.
#
# | notebook | what you write |
# |---|---|
# | [b00_graph](b00_graph.ipynb) | the UOp graph: a hash-consing node constructor and a toposort, which then orders every kernel the linearize stage walks |
# | [b01_runtime](b01_runtime.ipynb) | the compile and load stages: C source to a shared library, a library to a program ctypes runs, launched once per thread id over a grid |
# | [b02_renderer](b02_renderer.ipynb) | the render stage: a kernel's UOps to C, for elementwise, reduce, movement, matmul and conv kernels |
# | [b03_linearize](b03_linearize.ipynb) | the linearize stage: a kernel's graph to a list in execution order (loops closed by ENDRANGE, the reduce as an accumulator) |
# | [b04_simplify](b04_simplify.ipynb) | the simplify stage: rewrite rules (UPat, PatternMatcher, graph_rewrite) that fold index math with each UOp's bounds |
# | [b05_optimizers](b05_optimizers.ipynb) | SGD with momentum and Adam, as `Optimizer` subclasses that update in place and survive `TinyJit` |
# | [b06_gradients](b06_gradients.ipynb) | the gradient rules of nine ops as pattern-matcher rules, used by `backward()` before lazynb's |
# | [b07_views](b07_views.ipynb) | the index math of a stack of views: position and validity (masks), unflattening into the view below; used inside lazynb's lower stage |
# | [b08_schedule](b08_schedule.ipynb) | the scheduler's decision of what becomes a kernel: the set of nodes to realize (outputs, copies/contiguous/assigns, reduces no kernel can compute where they are read, unsafe ops under a pad); lazynb builds the kernels from it |
# | [b09_search](b09_search.ipynb) | one kernel opt (UNROLL: a reduce loop split and written out) and a small beam search that times candidates: the optimize stage |
# | [b10_capstone](b10_capstone.ipynb) | nothing new: the course MLP trains on MNIST on every stage you kept (with your gradient rules and your Adam), then your parts in one file |
#
# The course text also draws on four companion pieces (an intro blog on UOps, a hacking guide, a first module with a
# quiz, and the slides "tinygrad: from MNIST to ALUs"); their examples appear where they fit, run on lazynb. Where the
# originals name tinygrad files, devices or flags that differ here (METAL, `CLANG`, `VIZ=1`, `engine/lazy.py` ...),
# or print a wrong result, the notebooks say so.
#
# ## How to use the notebooks
#
# **Setup.** From the repository: `pip install -e ".[notebook]"`, then `python -m lazynb.notebook` opens JupyterLab
# here. Run each notebook top to bottom (Run → Run All Cells works); they are independent of each other.
#
# **The `%%tinygrad` magic.** After `%load_ext lazynb`, a cell that starts with `%%tinygrad` runs normally and then
# shows what the compiler did, in tabs:
#
# | JupyterLab tab | shows |
# |---|---|
# | Kernels | the schedule: the kernels (and copies) in the order they ran, the buffers each reads and writes, and *why* the graph was cut there; click a row for that kernel's AST graph, its ShapeTracker views (shape, strides, offset, mask, index expression), its generated source, launch sizes, applied optimizations and linearized UOps |
# | Tensor graph | the lazy UOp graph you built, coloured by kind of node |
# | Rewrites | each graph-rewrite pass: which patterns fired, the graph before and after |
# | Timing | compile and run time per kernel, GFLOPS, GB/s |
#
# `--show` takes the names of the views: `schedule`, `kernels` and `shapetracker` all live in the Kernels tab,
# `graph` is the Tensor graph tab. Outside JupyterLab the same view is drawn wherever a page runs scripts (Notebook 7,
# nbconvert's HTML, VS Code, Colab: the first lazynb output of a notebook carries the view's script); where none run
# (GitHub, an untrusted notebook) a short text stands in: a summary, the schedule and each kernel's source.
#
# Flags: `--debug N` (DEBUG level for printed output), `--noopt`, `--beam N`, `--device NAME`, `--show a,b` (only some
# views) and `--no-controls`. `%tinygrad --debug 2` (one `%`) sets defaults for later cells.
#
# **The sliders.** Above the views: **DEBUG**, **NOOPT**, **BEAM** and a **device** menu. Changing one re-runs *that
# cell's* code with the new setting and redraws its views in place (other cells do not re-run). Tick NOOPT to see
# plain loops, raise BEAM to let the compiler search for a faster kernel, pick PYTHON to watch the interpreter run
# the same kernel. Devices that cannot run on this machine are labelled with the reason.
#
# **The quizzes.** Pick an option, or type your number when the answer is a count, and press **Lock in** (or, without
# widgets, type `q.predict("...")` with the option's text, or `q.answer(3)` with your number). Nothing shows the answer
# yet: run the next cells, and the check cell prints the measured value next to your prediction. A question with
# nothing to measure has **Check** (right or wrong, no answer) and **Show answer**.
#
# **In scripts.** `from lazynb.trace import capture`; `with capture() as tr: ...` records the same trace as Python
# data (`tr.kernels`, `tr.schedule`, `tr.summary()`); the notebooks' asserts use it.
#
# ## Try it
#
# One round of predict → run → see, on a small example: double four numbers and subtract 1.

# %%
%load_ext lazynb
from lazynb import Tensor, Device, Context, GlobalCounters, dtypes
from lazynb.trace import capture
from lazynb.notebook.quiz import quiz
print("default device:", Device.DEFAULT)
q = quiz("t = Tensor([1, 2, 3, 4]). How many kernels run for (t * 2 - 1).tolist()?",
         ["2 kernels: one multiplies, one subtracts", "1 kernel that multiplies and subtracts", "0 kernels: NumPy does it"],
         key="00_index.q")

# %%
%%tinygrad --show schedule,graph,kernels
t = Tensor([1, 2, 3, 4])
result = (t * 2 - 1).tolist()
print(result)

# %% [markdown]
# In the **Kernels** tab, the schedule: a copy (the list moving from host memory to the CPU device), then one kernel,
# `E_4`; select the kernel to see its AST and C that multiplies each of the four elements by 2 and adds `-1`, written
# out without a loop. In **Tensor graph**: the MUL and the ADD you wrote, the subtraction being an ADD of `NEG(1)`;
# the compiled C has no NEG left, only the constant `-1`. Tick **NOOPT** and the kernel becomes a `for` loop.

# %%
with capture(rewrites=False) as tr:
  again = (Tensor([1, 2, 3, 4]) * 2 - 1).tolist()
q.reveal(len(tr.kernels))
assert result == again == [1, 3, 5, 7]
assert len(tr.kernels) == 1 and tr.kernels[0]["source"].count("*2)+-1)") == 4
print(tr.summary())

# %% [markdown]
# Start with **[01_why](01_why.ipynb)**.
