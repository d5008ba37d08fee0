# %% [markdown]
# # Project 7: a backend of your own
#
# A lazynb device is three small parts plus a code generator:
#
# | part | job |
# |---|---|
# | **Allocator** | get and free device memory; copy bytes in from the host and back out |
# | **Compiler** | turn generated source into a binary (here: C into a shared library) |
# | **Runner** | load a binary and launch one kernel on some buffers |
# | renderer | turn a kernel into source; reused here: `CStyleLanguage`, which writes C |
#
# You build each part, test it alone, then plug them into a `Compiled` device, register it as `"MY"` and
# run tensors on it. The finished code is also in `examples/custom_backend.py`.
#
# **Differences from the course text.**
# - Imports: `tinygrad.device` and `tinygrad.renderer.cstyle` become `lazynb.device` and
#   `lazynb.renderer.cstyle`. The classes and method names are the ones in the course's skeleton
#   (`_alloc`, `_free`, `copyin`, `copyout`, `compile`, `__call__(*bufs, global_size, local_size, wait)`).
# - `Compiled` takes its parts in order: `Compiled(device, allocator, renderer, compiler, runtime)`; some course
#   snippets pass them as keywords without a renderer, which does not match either library.
# - The course compares against `CLANG`; lazynb calls its built-in C backend `CPU` (`CLANG` is an alias).
#   CUDA is benchmarked too when a GPU is present (lazynb has a CUDA device).
# - `CStyleLanguage` writes kernels that take their work-item ids (`gidx0`, `gidx1`, `gidx2`) as arguments,
#   the way a GPU launch supplies them, so our Runner loops over the grid in Python. lazynb's CPU device uses
#   `ClangRenderer`, which writes the loops into the C code instead.

# %%
%load_ext lazynb
import ctypes, itertools, os, shutil, subprocess, tempfile, time
import numpy as np
from lazynb import Tensor, Device
from lazynb.device import Compiled, Allocator, Compiler, Runner
from lazynb.renderer.cstyle import CStyleLanguage
CC = os.environ.get("CC") or shutil.which("clang") or shutil.which("cc") or shutil.which("gcc")
print("C compiler:", CC)

# %% [markdown]
# ## Part A: the Allocator
#
# Device memory is a ctypes byte buffer. `copyin` copies host bytes (a `memoryview`) into it, `copyout` copies
# them back.

# %%
class MyAllocator(Allocator):
  def _alloc(self, size, options=None): return ctypes.create_string_buffer(size)
  def _free(self, buf, options=None): pass   # ctypes frees the memory when the buffer object is garbage collected
  def copyin(self, dst, src: memoryview): ctypes.memmove(dst, bytes(src), len(src))
  def copyout(self, dst: memoryview, src): dst[:] = ctypes.string_at(src, len(dst))

alloc = MyAllocator()
host = np.array([1.5, -2.0, 3.25, 4.0], np.float32)
dev_buf = alloc.alloc(host.nbytes)
alloc.copyin(dev_buf, memoryview(host).cast("B"))
back = np.empty_like(host)
alloc.copyout(memoryview(back).cast("B"), dev_buf)
print("round trip:", back)
assert (back == host).all()

# %% [markdown]
# ## Part B: the Compiler
#
# Source in, shared-library bytes out: pipe the C code into the system compiler and read the `.so` file back.

# %%
class MyCompiler(Compiler):
  def compile(self, src: str) -> bytes:
    with tempfile.TemporaryDirectory() as d:
      out = os.path.join(d, "kernel.so")
      p = subprocess.run([CC, "-shared", "-fPIC", "-O2", "-x", "c", "-", "-o", out], input=src.encode(), capture_output=True)
      if p.returncode != 0: raise RuntimeError(f"compile failed:\n{p.stderr.decode()}\n{src}")
      with open(out, "rb") as f: return f.read()

lib = MyCompiler().compile("void kernel(float* a) { a[0] = 42.0f; }")
print(f"{len(lib)} bytes, starting {lib[:4]!r}")
assert lib[:4] == b"\x7fELF" or lib[:4] in (b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")   # ELF on Linux, Mach-O on macOS

# %% [markdown]
# ## Part C: the Runner
#
# Write the library to a file, load it with `ctypes.CDLL`, and call the kernel once for every point of the
# global grid, passing the point's ids after the buffers. Single-threaded on purpose: correctness first.

# %%
class MyRunner(Runner):
  calls = 0   # how many times any kernel function was called (for the experiments below)
  def __init__(self, name: str, lib: bytes):
    self.name = name
    fd, self.path = tempfile.mkstemp(suffix=".so")
    with os.fdopen(fd, "wb") as f: f.write(lib)
    self.fxn = getattr(ctypes.CDLL(self.path), name)
  def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False):
    st = time.perf_counter()
    ptrs = [ctypes.cast(b, ctypes.c_void_p) for b in bufs]
    for g in itertools.product(*[range(n) for n in global_size]):
      self.fxn(*ptrs, *[ctypes.c_int(i) for i in g])
      MyRunner.calls += 1
    return time.perf_counter() - st if wait else None

# the trivial kernel from Part B, run on a buffer from Part A (the extra int arguments are ignored by C)
run42 = MyRunner("kernel", lib)
buf = alloc.alloc(4)
run42(buf)
out42 = np.empty(1, np.float32)
alloc.copyout(memoryview(out42).cast("B"), buf)
print("a[0] =", out42[0])
assert out42[0] == 42.0

# %% [markdown]
# ## Part D: a device
#
# `Compiled` ties the parts together with a renderer. Registering the class under a name makes it a device.

# %%
class MyDevice(Compiled):
  def __init__(self, device: str):
    super().__init__(device, MyAllocator(), CStyleLanguage(), MyCompiler(), MyRunner)

Device._devices["MY"] = MyDevice
print("devices:", sorted(Device._devices))

# %% [markdown]
# `--device MY` runs the cell with MY as the default device; the Kernels tab shows the C that `CStyleLanguage`
# wrote, with the ids as trailing arguments. The schedule is the one any device gets for two lists (Part 7): two
# copies from the host, then one kernel.

# %%
%%tinygrad --device MY --show schedule,kernels
a = Tensor([1, 2, 3], device="MY")
b = Tensor([4, 5, 6], device="MY")
kinds = [si.kind for si in (a + b).schedule()]
result = (a + b).tolist()

# %%
print(kinds, result)
assert result == [5, 7, 9]
assert kinds == ["copy", "copy", "kernel"]
assert Device.DEFAULT != "MY", "the magic put the default device back after the cell"

# %% [markdown]
# ## Part E: how fast is it?
#
# First the course's benchmark, a 256x256 matmul on MY and on lazynb's own CPU device (and CUDA if there is a
# GPU). Each timed run uses new inputs (a realized result is never recomputed) and run 0, which compiles, is
# not counted.

# %%
def best_seconds(device, op, n=256, reps=3):
  """Best time of op(a, b).realize() for new n x n inputs on device; run 0 compiles and is not counted."""
  best = float("inf")
  for i in range(reps + 1):
    a, b = Tensor.rand(n, n, device=device).realize(), Tensor.rand(n, n, device=device).realize()
    st = time.perf_counter(); out = op(a, b).realize(); dt = time.perf_counter() - st
    if i > 0: best = min(best, dt)
  return best, a, b, out

n = 256
devices = ["MY", "CPU"] + (["CUDA"] if Device.available("CUDA")[0] else [])
for dev in devices:
  t, a_, b_, c_ = best_seconds(dev, lambda a, b: a @ b, n)
  assert np.allclose(c_.numpy(), a_.numpy() @ b_.numpy(), atol=1e-3 * n)
  print(f"{n}x{n} matmul on {dev:4s}: {2 * n ** 3 / t * 1e-9:6.2f} GFLOPS ({t * 1e3:.1f} ms)")

# %% [markdown]
# The matmul kernel does a lot of work per grid point (the heuristic gives each point a tile of outputs), so
# MY's Python loop makes only about a thousand calls, and MY can come out close to the CPU device or even
# ahead of it (the CPU device also pays to start a second thread). An elementwise kernel over the same
# 256x256 values has far more grid points, and MY makes one Python call for each:

# %%
%%tinygrad --device MY --show kernels,timing
xa, xb = Tensor.rand(256, 256).realize(), Tensor.rand(256, 256).realize()
MyRunner.calls = 0
added = (xa + xb).realize()
calls_add = MyRunner.calls

# %%
t_my = best_seconds("MY", lambda a, b: a + b)[0]
t_cpu = best_seconds("CPU", lambda a, b: a + b)[0]
print(f"a + b: MY {t_my * 1e3:.2f} ms, CPU {t_cpu * 1e3:.3f} ms ({t_my / t_cpu:.0f}x); "
      f"MY made {calls_add} calls, {t_my / calls_add * 1e6:.1f} us each")
assert np.allclose(added.numpy(), xa.numpy() + xb.numpy())
assert calls_add > 1000 and t_my > 5 * t_cpu   # each the best of 3 runs

# %% [markdown]
# Where the time goes: each Python-side call to a C function costs microseconds (argument conversion and the
# ctypes call itself), far more than adding four floats. A real backend launches the whole grid at once: the
# CPU device writes the loops into C and splits the outer one across cores; a GPU backend hands the grid size
# to the driver.

# %% [markdown]
# ## Exercises: a pure-Python device, part by part
#
# Build the same three parts again for a device that runs *Python* kernels. First the Allocator: memory is a
# `bytearray`. `copyin(dst, src)` copies a host `memoryview` into it, `copyout(dst, src)` copies it back out.

# %%
# EXERCISE p07.allocator
class BytesAllocator(Allocator):
  def _alloc(self, size, options=None):
    raise NotImplementedError  # YOUR CODE
  def copyin(self, dst, src: memoryview):
    raise NotImplementedError  # YOUR CODE
  def copyout(self, dst: memoryview, src):
    raise NotImplementedError  # YOUR CODE

# %%
from lazynb.notebook.exercise import check
check("p07.allocator", BytesAllocator)

# %% [markdown]
# The Compiler: Python needs no binary, so the "library" is the source text as bytes. But a program that doesn't
# parse must fail at compile time, as `lazynb.device.CompileError`.

# %%
# EXERCISE p07.compiler
from lazynb.device import CompileError
class PyCompiler(Compiler):
  def compile(self, src: str) -> bytes:
    raise NotImplementedError  # YOUR CODE

# %%
from lazynb.notebook.exercise import check
check("p07.compiler", PyCompiler)

# %% [markdown]
# The Runner: `PyRunner(name, lib)` runs the function called `name` defined in `lib` (the compiler's bytes). A call
# runs it once per point of `global_size`, passing the buffers and then the point's three ids, like `MyRunner`;
# with `wait=True` it returns the seconds it took, else `None`.

# %%
# EXERCISE p07.runner
class PyRunner(Runner):
  def __init__(self, name: str, lib: bytes):
    raise NotImplementedError  # YOUR CODE
  def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False):
    raise NotImplementedError  # YOUR CODE

# %%
from lazynb.notebook.exercise import check
check("p07.runner", PyRunner)
