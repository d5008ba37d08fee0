# %% [markdown]
# # Part 8 — Backends
#
# Everything up to the linearized UOp list is the same for every device. A **backend** supplies the rest:
#
# 1. a **Renderer**: the UOp list → source code in the device's language (C, OpenCL C, CUDA C ...);
# 2. a **Compiler**: source → a binary (`compile(src) -> bytes`);
# 3. a **Runtime** (the `Runner` class): loads a binary and runs it on buffers, with launch sizes;
# 4. an **Allocator**: device memory, and copies between it and the host.
#
# `Compiled(device, allocator, renderer, compiler, runtime)` in `lazynb/device.py` ties them together, and
# `Device._devices` maps a name to the class. This notebook reads the backends lazynb has, runs the same kernel on
# each, and points at the capstone project that builds a new one.

# %%
%load_ext lazynb
import ctypes, pathlib, time
import numpy as np
import lazynb
from lazynb import Tensor, Device, Context, GlobalCounters, dtypes, Ops
from lazynb.codegen import get_program
from lazynb.trace import capture
from lazynb.notebook.quiz import quiz

# %% [markdown]
# ## Where the backends live
#
# The course lists tinygrad's `tinygrad/runtime/` files. lazynb's equivalents are in `lazynb/runtime/`:
#
# | course (tinygrad) | lazynb | what it is |
# |---|---|---|
# | `ops_clang.py` (read this first) | `runtime/ops_cpu.py` | C compiled by clang (or cc/gcc) to a shared library, called with ctypes |
# | `ops_gpu.py` (OpenCL) | `runtime/ops_cl.py` | OpenCL through pyopencl; on a machine without a GPU, PoCL runs it on the CPU |
# | `ops_cuda.py` | `runtime/ops_cuda.py` | CUDA C compiled to PTX with NVRTC; runs only with an NVIDIA GPU |
# | `ops_metal.py`, `ops_hsa.py` | (none) | Apple Metal and AMD are not implemented |
# | `ops_llvm.py` | `runtime/ops_llvm.py` | the CPU kernels as LLVM IR, compiled inside Python by LLVM (llvmlite): no compiler process |
# | — | `runtime/ops_python.py` | no compiler at all: the UOp list is interpreted in Python |
#
# (tinygrad itself has since renamed `ops_clang` to `ops_cpu` and `ops_gpu` to `ops_cl`; the slides' NV and AMD
# backends, which talk to the kernel driver directly with ioctls, have no counterpart here.)

# %%
runtime = pathlib.Path(lazynb.__file__).parent / "runtime"
print(sorted(p.name for p in runtime.glob("ops_*.py")))
for name, spec in sorted(Device._devices.items()): print(f"  {name:7s} -> {spec}")
assert {"ops_cpu.py", "ops_cl.py", "ops_cuda.py", "ops_python.py"} <= {p.name for p in runtime.glob("ops_*.py")}

# %% [markdown]
# The four parts of the CPU device:

# %%
cpu = Device["CPU"]
parts = {"allocator": type(cpu.allocator).__name__, "renderer": type(cpu.renderer).__name__,
         "compiler": type(cpu.compiler).__name__, "runtime": cpu.runtime.__name__}
print(parts, "| C compiler command:", cpu.compiler.cc)
assert parts == {"allocator": "CPUAllocator", "renderer": "ClangRenderer", "compiler": "ClangCompiler", "runtime": "CPUProgram"}

# %% [markdown]
# ## The parts, used by hand
#
# The **allocator** hands out device memory and copies bytes in and out; on the CPU device a "device buffer" is a
# NumPy byte array. The **compiler** turns C into the bytes of a shared library. The **runtime** loads those bytes
# and calls the function with buffer pointers. Here is a kernel written by hand, run with nothing but those three:

# %%
src = """void triple(float* restrict out, float* restrict in) {
  for (int i = 0; i < 4; i++) out[i] = in[i] * 3.0f;
}"""
inp, out = cpu.allocator.alloc(16), cpu.allocator.alloc(16)
cpu.allocator.copyin(inp, memoryview(np.array([1, 2, 3, 4], dtype=np.float32).view(np.uint8)))
lib = cpu.compiler.compile(src)
prog = cpu.runtime("triple", lib)
seconds = prog(out, inp, wait=True)
result = np.empty(4, dtype=np.float32)
cpu.allocator.copyout(memoryview(result.view(np.uint8)), out)
print(f"{len(lib)} bytes of shared library; result {result}; ran in {seconds * 1e6:.1f} us")
assert result.tolist() == [3.0, 6.0, 9.0, 12.0] and lib[:4] == b"\x7fELF"

# %% [markdown]
# That is all a tensor library needs from a device. Everything else (what to compute, in which order, with which
# index math) came from the stages before.
#
# ## One kernel, four renderers
#
# The renderer is where devices differ most visibly. Render the same kernel AST, `a + b * 2` on a (4, 8) tensor, for
# each device (with NOOPT, to keep it short). Rendering needs no GPU and no pyopencl: only the code generator runs.

# %%
q_gpu = quiz("On the CPU the kernel loops over the 32 elements. What replaces the loop in the OpenCL and CUDA versions?",
             ["nothing: they loop the same way", "a work-item / block index: the GPU launches one instance per element",
              "a call into a BLAS library"], key="08_backends.q_gpu")

# %%
from lazynb.renderer.cstyle import OpenCLRenderer
def renderer_for(dev):
  if dev == "CL" and not Device.available("CL")[0]: return OpenCLRenderer()   # no pyopencl: the renderer alone still works
  return Device[dev].renderer
a, b = Tensor.rand(4, 8).realize(), Tensor.rand(4, 8).realize()
(item,) = (a + b * 2).schedule()
programs = {}
for dev in ("CPU", "PYTHON", "CL", "CUDA"):
  r = renderer_for(dev)
  with Context(NOOPT=1): programs[dev] = get_program(item.ast, r)
  p = programs[dev]
  print(f"===== {dev}: {type(r).__name__}, global_size={p.global_size}\n{p.src}\n")

# %%
assert "for (int gidx0 = 0; gidx0 < 32" in programs["CPU"].src and programs["CPU"].global_size == (1, 1, 1)
assert "__kernel" in programs["CL"].src and "get_group_id(0)" in programs["CL"].src and programs["CL"].global_size == (32, 1, 1)
assert 'extern "C" __global__' in programs["CUDA"].src and "blockIdx.x" in programs["CUDA"].src
assert "'RANGE'" in programs["PYTHON"].src and "'STORE'" in programs["PYTHON"].src
q_gpu.reveal()

# %% [markdown]
# Read them side by side: the loads, the multiply-add and the store are the same expression in each; only the frame
# differs. The CPU version loops over `gidx0`; OpenCL and CUDA read `gidx0` from the launch grid, and the runtime
# launches 32 instances (`global_size`). The PYTHON "source" is the linearized UOp list itself, one tuple per UOp
# (index, op, dtype, sources, arg): exactly what the renderers above print from.
#
# ## Running on each device
#
# `Tensor(..., device=NAME)` puts data on a device, and the `%%tinygrad --device NAME` flag (or the device menu
# above a cell) runs a whole cell there.

# %%
q_slow = quiz("The same 8x8 matmul + relu runs on CPU and on PYTHON. How do the kernel run times compare?",
              ["PYTHON is faster: no compile step", "PYTHON is slower, by less than 10x", "PYTHON is 10x to 100x slower",
               "PYTHON is 100x slower or more"], key="08_backends.q_slow")

# %%
%%tinygrad --device PYTHON --show kernels,timing
pa, pb = Tensor.rand(8, 8), Tensor.rand(8, 8)
py_out = (pa @ pb).relu().realize()
print(py_out.device)

# %% [markdown]
# The **Kernels** tab shows the PYTHON "source", the UOp list; **Timing** the run time. Switch the device menu to
# CPU and the same cell runs as C. Measured side by side, each device's kernel time the median of 3 runs:

# %%
A, B = np.random.default_rng(0).random((2, 8, 8), dtype=np.float32)
ref = np.maximum(A @ B, 0)
times = {}
for dev in ("CPU", "PYTHON", "CL"):
  ok, why = Device.available(dev)
  if not ok:
    print(f"{dev}: skipped ({why.splitlines()[0][:80]})")
    continue
  runs = []
  for _ in range(3):   # new tensors each time: a realized result would not run again
    with capture(rewrites=False) as tr:
      res = (Tensor(A, device=dev) @ Tensor(B, device=dev)).relu().numpy()
    np.testing.assert_allclose(res, ref, rtol=1e-5, atol=1e-5)
    runs.append(sum(k["time_s"] for k in tr.kernels))
  times[dev] = float(np.median(runs))
  print(f"{dev:7s} kernel time {times[dev] * 1e6:10.1f} us   same result as NumPy")

# %%
slower = times["PYTHON"] / times["CPU"]   # the option is the band the measured ratio falls in
print(f"PYTHON's kernel time is {slower:.0f}x CPU's")
q_slow.reveal("PYTHON is faster: no compile step" if slower < 1 else "PYTHON is slower, by less than 10x" if slower < 10
              else "PYTHON is 10x to 100x slower" if slower < 100 else "PYTHON is 100x slower or more")
assert slower > 50

# %% [markdown]
# ## CUDA without a GPU: compile only
#
# The CUDA device needs an NVIDIA GPU to *run*, but NVRTC (NVIDIA's runtime compiler, a pip package) compiles CUDA C
# to PTX, the GPU's portable assembly, on any machine. `compile_only(tensor)` renders and compiles the kernels that
# would realize a tensor, and returns the source and the PTX. (`%%tinygrad --device CUDA` refuses to run cells on a
# machine without a GPU, and says why.)

# %%
from lazynb.device import DeviceUnavailable
from lazynb.engine.realize import compile_only
try:
  kernels = compile_only((Tensor.rand(8, 8) @ Tensor.rand(8, 8)).relu())
except DeviceUnavailable as e:
  kernels = None
  print("NVRTC is not installed here, so CUDA cannot even compile:", e)
if kernels:
  k = kernels[0]
  print(k["name"], "global", k["global_size"], "local", k["local_size"])
  print(k["source"][:600], "\n...")
  print("\n".join(l for l in k["ptx"].splitlines() if l.startswith((".version", ".target", ".visible .entry"))))

# %%
if kernels:
  assert 'extern "C" __global__' in kernels[0]["source"] and ".entry" in kernels[0]["ptx"]
print("CUDA can run here:", Device.available("CUDA")[0])

# %% [markdown]
# ## OpenCL on PoCL
#
# With pyopencl and PoCL installed, the `CL` device compiles OpenCL C and runs it on the CPU through PoCL. The cell
# below runs only where that is available (where it is not, the magic prints why and runs nothing).

# %%
%%tinygrad --device CL --show kernels
ca, cb = Tensor.rand(16, 16), Tensor.rand(16, 16)
cl_out = (ca @ cb).realize()

# %%
if Device.available("CL")[0]:
  assert cl_out.device == "CL"
  np.testing.assert_allclose(cl_out.numpy(), ca.numpy() @ cb.numpy(), rtol=1e-5, atol=1e-5)
  print("CL ran on:", Device["CL"].cl_device.name)
else: print("CL is not available here:", Device.available("CL")[1])

# %% [markdown]
# ## LLVM: the compiler inside Python
#
# Every new CPU kernel starts a C compiler *process*: clang or gcc has to load and start before it reads a line, so
# even a one-line kernel costs tens of milliseconds (a schedule's new kernels share one process, a lone kernel
# cannot). The **LLVM** device keeps the compiler in the Python process instead: its renderer writes the same UOps as
# LLVM IR (the language clang itself lowers C into), llvmlite optimizes it and emits machine code, and lazynb's own
# loader places that in memory. Same kernels, same opts, same threads as the CPU device; only the last two stages differ.

# %%
from lazynb.renderer.llvmir import LLVMRenderer
llvm_ok, llvm_why = Device.available("LLVM")   # it needs llvmlite, and Linux on x86-64 for its loader
with Context(NOOPT=1): llvm_prog = get_program(item.ast, Device["LLVM"].renderer if llvm_ok else LLVMRenderer())
print(llvm_prog.src)
assert f"define void @{llvm_prog.name}(" in llvm_prog.src and "fmul" in llvm_prog.src and llvm_prog.name == programs["CPU"].name

# %% [markdown]
# Read it next to the C above: `%gidx0` counts in a stack slot (`alloca`, loaded at the top of the loop, stored at the
# bottom), each load is a `getelementptr` (the address) and a `load`, and the multiply and add are `fmul` and `fadd`.
# The `contract` flag allows the two to fuse into one multiply-add, as `-ffp-contract=fast` does for the C. Now the
# price of a new kernel, compile and load, on each (a fresh constant each time, so nothing comes from a cache):

# %%
from lazynb.runtime.ops_cpu import CPUProgram
def new_kernel_ms(dev, reps=5):
  times = []
  for i in range(reps):
    with Context(NOOPT=1):
      (it,) = (Tensor.arange(16, device=dev) * (i + 0.25) + 1).schedule()[-1:]
      prg = get_program(it.ast, Device[dev].renderer)
    st = time.perf_counter()
    CPUProgram(prg.name, Device[dev].compiler.compile(prg.src))
    times.append((time.perf_counter() - st) * 1e3)
  return float(np.median(times))
if llvm_ok:
  ms = {dev: new_kernel_ms(dev) for dev in ("CPU", "LLVM")}
  print(f"a new one-line kernel, compile + load: CPU ({Device['CPU'].compiler.cc}) {ms['CPU']:.1f} ms, LLVM {ms['LLVM']:.1f} ms")
  x = np.random.default_rng(1).random((64, 64), dtype=np.float32)
  on = {dev: (Tensor(x, device=dev) @ Tensor(x, device=dev)).softmax().numpy() for dev in ("CPU", "LLVM")}
  np.testing.assert_allclose(on["LLVM"], on["CPU"], rtol=1e-5, atol=1e-6)
  print("LLVM and CPU agree on a matmul + softmax")
else: print("the LLVM device cannot run here:", llvm_why)

# %% [markdown]
# The device menu above a `%%tinygrad` cell lists LLVM too: pick it when a cell makes many new kernels and the
# waiting gets long, and switch back to CPU to read the C. (Big kernels, such as a CNN's convolutions, take LLVM
# about as long as a C compiler: the process start-up is what it saves.)
#
# ## Adding a backend
#
# The course's skeleton (`MyAllocator`, `MyCompiler`, `MyRunner`, `MyDevice(Compiled)`, then
# `Device._devices["MYDEVICE"] = MyDevice`) fits lazynb's interfaces as written: `Allocator._alloc(size, options)`,
# `copyin(dst, src)`, `copyout(dst, src)`, `Compiler.compile(src) -> bytes`, `Runner(name, lib)` called as
# `runner(*bufs, global_size=..., local_size=..., wait=...)`, and `Compiled(device, allocator, renderer, compiler,
# runtime)`. Its renderer is `CStyleLanguage`, which writes plain C but passes the global indices in as arguments,
# so the runner must loop over the launch grid itself. (The hacking guide's shorter skeleton calls
# `super().__init__(allocator=..., compiler=..., runtime=...)` with neither a device name nor a renderer; lazynb's
# `Compiled` needs both, as in the course's version.)
#
# `examples/custom_backend.py` is that skeleton filled in (about 70 lines). A quick check that it works:

# %%
import importlib.util
# the repository's examples/ folder: next to the lazynb package (an editable install), or above this notebook
repo = next(p for p in (pathlib.Path(lazynb.__file__).parent.parent, pathlib.Path.cwd().parent, pathlib.Path.cwd())
            if (p / "examples" / "custom_backend.py").is_file())
spec = importlib.util.spec_from_file_location("custom_backend", repo / "examples" / "custom_backend.py")
custom_backend = importlib.util.module_from_spec(spec)
spec.loader.exec_module(custom_backend)   # registers the device "MY"
with capture(rewrites=False) as tr:
  my = (Tensor([1, 2, 3], device="MY") + Tensor([4, 5, 6], device="MY")).tolist()
print(my, "computed on", tr.kernels[0]["device"], "\n" + tr.kernels[0]["source"])
assert my == [5, 7, 9] and tr.kernels[0]["device"] == "MY"

# %% [markdown]
# Note the signature: after its buffers the kernel takes three ints, the point of the launch grid (here all three are
# `unused`: the 3 elements were upcast, so the grid is a single point). `MyRunner` calls the function once per grid
# point, from Python. Building this step by step, testing each part and benchmarking it
# against the CPU device is the capstone project: **`p07_custom_backend.ipynb`**.
#
# Next: **10_reading_the_source** (Part 9 of the course is the list of projects: see the `p0*` notebooks).

# %% [markdown]
# ## Exercise: the ALU of an emulator
#
# The PYTHON device runs kernels by interpreting their UOps one by one. At its heart is a table from ALU op to what
# it computes. Write `alu(op, *src)` for `Ops.ADD, MUL, MAX, CMPLT, NEG, RECIP, EXP2, LOG2, SQRT` and `WHERE`
# (sources are numpy arrays; CMPLT gives booleans; WHERE's first source is the condition). The check compares with
# numpy's own functions.

# %%
# EXERCISE 08.alu
def alu(op, *src):
  # YOUR CODE: a dict from Ops.X to a numpy function works well
  raise NotImplementedError

# %%
from lazynb.notebook.exercise import check
check("08.alu", alu)
