# %% [markdown]
# # Part 10 — Reading the source
#
# (Part 9 of the course is its list of projects; they have their own notebooks, `p01_tensor_basics` to
# `p07_custom_backend`.)
#
# After the projects, the course sends you into tinygrad's source with a reading list. tinygrad has been reorganized
# several times since that list was written (the `LazyBuffer` layer it starts with no longer exists), so this
# notebook maps each entry to the lazynb module that plays the same role, checks that the module is there, and then
# practises the course's study method, "pick a function, add print statements, trace the path from `Tensor.add` to
# the C string", with tools that need no edits to the library.

# %%
%load_ext lazynb
import inspect, pathlib, sys, io, contextlib, dataclasses
import numpy as np
import lazynb
from lazynb import Tensor, Device, Context, GlobalCounters, dtypes, Ops
from lazynb.trace import capture
ROOT = pathlib.Path(lazynb.__file__).parent

# %% [markdown]
# ## The reading list, mapped
#
# | course (tinygrad) | lazynb | what it teaches | tinygrad today (2026) |
# |---|---|---|---|
# | `tinygrad/tensor.py` | `lazynb/tensor.py` | the user-facing API; every method builds UOps; `backward()` | `tinygrad/tensor.py` |
# | `tinygrad/engine/lazy.py` | *(gone)* `lazynb/uop/ops.py` + `state.realized` in `runstate.py` | a tensor holds a UOp directly; a realized node maps to its buffer (`runstate.py` holds every realize/autograd registry) | gone too: `tinygrad/uop/ops.py` |
# | `tinygrad/engine/schedule.py` | `lazynb/engine/schedule.py` (+ `kernelize.py`, `realize.py`) | cutting the graph into kernels; running them | `tinygrad/schedule/rangeify.py`, `indexing.py` (kernels cut by rewrites), `engine/realize.py` |
# | `tinygrad/codegen/uops.py` | `lazynb/uop/opcodes.py`, `lazynb/uop/ops.py`, `lazynb/uop/opmixin.py`, `lazynb/uop/rewrite.py`, `lazynb/uop/symbolic.py` | the IR (`Ops` in opcodes, `UOp` in ops, the operators `+ - * < ...` of UOp, UPat and Tensor written once in opmixin), pattern matching (rewrite), algebraic rules | `tinygrad/uop/` (`ops.py`, `symbolic.py`, `spec.py`) |
# | `tinygrad/codegen/lowerer.py` | `lazynb/codegen/lowerer.py` | views → index math over loops | no lowerer: movement ops become index math in `schedule/rangeify.py` |
# | `tinygrad/codegen/linearizer.py` | `lazynb/codegen/kernel.py`, `lazynb/codegen/linearize.py` | kernel opts; the graph → a flat list with loops | `tinygrad/codegen/opt/` (heuristic, BEAM), `codegen/late/linearizer.py` |
# | `tinygrad/renderer/cstyle.py` | `lazynb/renderer/cstyle.py` | C, OpenCL and CUDA source from the list | `tinygrad/renderer/cstyle.py` |
# | `tinygrad/runtime/ops_clang.py` | `lazynb/runtime/ops_cpu.py` | the simplest backend | `tinygrad/runtime/ops_cpu.py` |
# | `tinygrad/runtime/ops_cuda.py` | `lazynb/runtime/ops_cuda.py` | a GPU backend, to compare | `tinygrad/runtime/ops_cuda.py` |
# | `tinygrad/nn/__init__.py` | `lazynb/nn/__init__.py` | layers as plain classes | `tinygrad/nn/__init__.py` |
#
# And from the slides' code walkthrough: `function.py` ("28 derivatives are all you need") is `lazynb/gradient.py`;
# `ops.py` ("the simple ops") is the `Ops` enum in `lazynb/uop/opcodes.py`; `shape/shapetracker.py` and `shape/view.py`
# keep their names (today's tinygrad has no `shape/` folder: see the box in Part 5). lazynb adds `device.py` (the backend interfaces), `runstate.py` (what realize and autograd remember, in one object), `engine/search.py` (BEAM, where tinygrad 0.10 has it), `engine/jit.py`
# (TinyJit) and `trace.py` (the trace bus every view reads). `docs/architecture.md` gives the same map in pipeline
# order, which is also a good reading order.

# %%
reading = ["tensor.py", "uop/opcodes.py", "uop/ops.py", "uop/opmixin.py", "uop/rewrite.py", "uop/symbolic.py", "shape/view.py", "shape/shapetracker.py", "engine/schedule.py",
           "engine/kernelize.py", "engine/realize.py", "codegen/kernel.py", "codegen/lowerer.py", "codegen/linearize.py",
           "codegen/__init__.py", "renderer/cstyle.py", "device.py", "runtime/ops_cpu.py", "runtime/ops_cuda.py",
           "gradient.py", "nn/__init__.py", "engine/search.py", "engine/jit.py", "trace.py"]
total = 0
for rel in reading:
  n = len((ROOT / rel).read_text().splitlines())
  total += n
  print(f"  lazynb/{rel:24s} {n:4d} lines")
print(f"  {'':31s} {total:5d} lines in all")
assert all((ROOT / rel).is_file() for rel in reading)
assert not (ROOT / "engine" / "lazy.py").exists()   # no LazyBuffer layer

# %% [markdown]
# ## The core data structures
#
# Four small classes carry nearly everything. Read their definitions first:

# %%
from lazynb.uop.ops import UOp, GroupOp
from lazynb.shape.view import View
from lazynb.engine.schedule import ScheduleItem
from lazynb.renderer import ProgramSpec
print("UOp slots:         ", [s for s in UOp.__slots__ if not s.startswith("_")])
print("View fields:       ", [f.name for f in dataclasses.fields(View)])
print("ScheduleItem fields:", [f.name for f in dataclasses.fields(ScheduleItem)])
print("ProgramSpec fields: ", [f.name for f in dataclasses.fields(ProgramSpec)][:12], "...")
print(f"Ops: {len(Ops)} in all, {len(GroupOp.ALU)} ALU ops, {len(GroupOp.Movement)} movement ops")

# %%
assert {"op", "dtype", "src", "arg"} <= set(UOp.__slots__)
assert [f.name for f in dataclasses.fields(View)][:4] == ["shape", "strides", "offset", "mask"]
assert {"ast", "bufs", "kind", "reason"} <= {f.name for f in dataclasses.fields(ScheduleItem)}
assert 15 <= len(GroupOp.ALU) <= 32 and len(GroupOp.Movement) == 6

# %% [markdown]
# The slides count "the 32 simple ops" of an older tinygrad; lazynb's `Ops` has more members because one enum covers
# all three levels of the IR (tensor graph, kernel AST, lowered program), but the arithmetic a device must run is the
# ALU set above.
#
# ## Reading a function: `inspect`
#
# You do not need to open files to read a method. Part 5 found that `a - b` is an ADD of a NEG; here is the code
# that builds it, and where it lives:

# %%
print(inspect.getsource(Tensor.sub))
print(inspect.getsourcefile(Tensor.sub), "line", inspect.getsourcelines(Tensor.sub)[1])
u = (Tensor.rand(3) - Tensor.rand(3)).uop
print(u.op, [s.op for s in u.src])
assert u.op is Ops.ADD and u.src[1].op is Ops.NEG

# %% [markdown]
# ## Tracing the path from `Tensor.add` to the C string
#
# The course suggests print statements plus `DEBUG=4`. Python can do the tracing for you: `sys.setprofile` calls a
# function on every function call. Record every call that lands in lazynb while one addition is realized (a fresh
# shape, so that the kernel really has to be made), then keep the first call of each of the pipeline's main
# functions, in the order they happened. (`render` is defined once in `CStyleLanguage`, the base class of the C,
# OpenCL and CUDA renderers; `load_kernel` loads the compiled library, which the C compiler made unless the disk cache had it; `__call__` in
# `ops_cpu.py` is `CPUProgram` running the kernel.)

# %%
import lazynb.codegen  # imported on first compile otherwise; import it now so the trace shows calls, not imports
from lazynb.engine.realize import method_cache
method_cache.clear()   # forget compiled kernels, so that this cell compiles again when you re-run it
a, b = Tensor.rand(5, 7).realize(), Tensor.rand(5, 7).realize()
c = a + b
calls = []
def profiler(frame, event, arg):
  if event == "call" and frame.f_code.co_filename.startswith(str(ROOT)):
    calls.append((str(pathlib.Path(frame.f_code.co_filename).relative_to(ROOT)), frame.f_code.co_name))
sys.setprofile(profiler)
try: c.realize()
finally: sys.setprofile(None)
main = [("tensor.py", "realize"), ("engine/schedule.py", "create_schedule"), ("engine/realize.py", "run_schedule"),
        ("engine/realize.py", "get_runner"), ("codegen/__init__.py", "get_program"), ("codegen/kernel.py", "hand_coded_optimizations"),
        ("codegen/lowerer.py", "lower_kernel"), ("codegen/linearize.py", "linearize"), ("renderer/cstyle.py", "render"),
        ("device.py", "load_kernel"), ("runtime/ops_cpu.py", "__call__")]
first = {}
for i, call in enumerate(calls):
  if call in main and call not in first: first[call] = i
print(f"{len(calls)} calls into lazynb; the main steps, in order:")
for (mod, fn), i in sorted(first.items(), key=lambda kv: kv[1]): print(f"  call #{i:4d}  lazynb/{mod:26s} {fn}")

# %%
order = sorted(first, key=first.get)
assert order == main, order   # the pipeline of Part 7, recovered from a running program
assert order[1] == ("engine/schedule.py", "create_schedule")

# %% [markdown]
# Between those steps are hundreds of small calls (shape arithmetic, pattern matching, the trace bus): print
# `calls[:60]` to see them. To see *what* flows
# between the stages rather than *where*, listen to the trace bus, which is how lazynb's own DEBUG printer works
# (`lazynb/debug.py` is about 50 lines): subscribe a function and it receives every event.

# %%
from lazynb import trace
seen = []
def listener(ev):
  d = ev.data
  detail = {"schedule": lambda: f"{len(d['items'])} items", "program": lambda: f"{d['program'].name}, {len(d['program'].uops)} uops",
            "compile": lambda: f"{d['name']} in {d['seconds'] * 1e3:.0f} ms", "exec": lambda: f"{d['name']} on {d['device']}",
            "realize": lambda: f"{d['kernels']} kernel(s)"}.get(ev.kind, lambda: "")()
  seen.append(ev.kind)
  print(f"  {ev.kind:9s} {detail}")
method_cache.clear()
trace.subscribe(listener)
try: (Tensor.rand(6, 7).realize() * 3).realize()
finally: trace.unsubscribe(listener)

# %%
assert seen == ["schedule", "program", "compile", "exec", "realize"]

# %% [markdown]
# And when you do want a print inside a function, you can wrap it for a while instead of editing the file. Here every
# call to the C renderer reports the kernel it renders and the size of the source:

# %%
from lazynb.renderer.cstyle import ClangRenderer
original = ClangRenderer.render
rendered = []
def render_and_report(self, name, uops):
  src = original(self, name, uops)
  rendered.append(name)
  print(f"  rendering {name}: {len(uops)} uops -> {len(src.splitlines())} lines of C")
  return src
ClangRenderer.render = render_and_report
method_cache.clear()
try: Tensor.rand(3, 9).realize().softmax().realize()
finally: ClangRenderer.render = original
assert len(rendered) == 3 and ClangRenderer.render is original

# %% [markdown]
# ## A map of one kernel's life
#
# Put together, for one small kernel: the methods that touched it, and the object each produced.

# %%
from lazynb.codegen import get_program
t = Tensor.rand(4, 4).realize()
(si,) = (t.exp() + 1).schedule()
prg = get_program(si.ast, Device["CPU"].renderer)
lines = [("Tensor.exp / Tensor._binop (+)", "lazynb/tensor.py", "UOp graph", f"{len((t.exp() + 1).uop.toposort())} nodes"),
         ("create_schedule", "lazynb/engine/schedule.py", "ScheduleItem", f"kind={si.kind}, reason={si.reason}"),
         ("Kernel + hand_coded_optimizations", "lazynb/codegen/kernel.py", "Kernel", f"opts={prg.opts}"),
         ("lower", "lazynb/codegen/lowerer.py", "lowered SINK", f"{len(prg.lowered.toposort())} nodes"),
         ("linearize", "lazynb/codegen/linearize.py", "list[UOp]", f"{len(prg.uops)} uops"),
         ("ClangRenderer.render", "lazynb/renderer/cstyle.py", "C source", f"{len(prg.src.splitlines())} lines"),
         ("ClangCompiler.compile / CPUProgram", "lazynb/runtime/ops_cpu.py", "shared library", "called through ctypes")]
for fn, mod, obj, detail in lines: print(f"  {fn:36s} {mod:30s} -> {obj:15s} {detail}")
assert si.kind == "kernel" and "__builtin_exp2f" in prg.src and prg.lowered is not None

# %% [markdown]
# The last column is tinygrad's tree as of mid-2026 (its `docs/developer/layout` page describes it); for a
# guided read of today's tinygrad, the next step is tinygrad-notes (https://github.com/mesozoic-egg/tinygrad-notes),
# short write-ups on its internals, one mechanism each.
#
# Next: **11_contributing**, how to change lazynb (or tinygrad) and prove that your change works.

# %% [markdown]
# ## Exercise: walk the graph like the scheduler does
#
# Everything in `lazynb/engine/` starts by walking the UOp graph in *topological order*: every node after all of its
# sources, each node once. Write `toposort(root)` (it is `UOp.toposort` in `lazynb/uop/ops.py`, but write your own:
# a recursive visit that appends a node after its sources works; `UOp.toposort` is switched off during the check). The
# check tests the two properties on a few graphs.

# %%
# EXERCISE 10.toposort
def toposort(root):
  # YOUR CODE: return a list of UOps
  raise NotImplementedError

# %%
from lazynb.notebook.exercise import check
check("10.toposort", toposort)
