"""Course Part 8 / Project 7: a custom backend, built from the course's skeleton.

  MyAllocator  ctypes buffers (create_string_buffer), memmove in and out
  MyCompiler   the system C compiler, source -> shared library bytes
  MyRunner     loads the library with ctypes and calls the kernel once per point of the global grid,
               looping in Python (simple and slow on purpose: correctness first)

Run it: python examples/custom_backend.py   (checks [1,2,3]+[4,5,6] and benchmarks a 256x256 matmul)
"""
from __future__ import annotations
import ctypes, itertools, os, subprocess, sys, tempfile, time
from lazynb import Tensor, Device
from lazynb.device import Compiled, Allocator, Compiler, Runner
from lazynb.renderer.cstyle import CStyleLanguage

class MyAllocator(Allocator):
  def _alloc(self, size: int, options=None): return ctypes.create_string_buffer(size)
  def _free(self, buf, options=None): pass  # ctypes frees the buffer when it is garbage collected
  def copyin(self, dst, src: memoryview): ctypes.memmove(dst, bytes(src), len(src))
  def copyout(self, dst: memoryview, src): dst[:] = ctypes.string_at(src, len(dst))

class MyCompiler(Compiler):
  def compile(self, src: str) -> bytes:
    cc = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory() as d:
      out = os.path.join(d, "kernel.so")
      p = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-x", "c", "-", "-o", out], input=src.encode(), capture_output=True)
      if p.returncode != 0: raise RuntimeError(f"compile failed:\n{p.stderr.decode()}\n{src}")
      with open(out, "rb") as f: return f.read()

class MyRunner(Runner):
  def __init__(self, name: str, lib: bytes):
    self.name = name
    fd, self.path = tempfile.mkstemp(suffix=".so")
    with os.fdopen(fd, "wb") as f: f.write(lib)
    self.fxn = getattr(ctypes.CDLL(self.path), name)
  def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), wait=False):
    st = time.perf_counter()
    ptrs = [ctypes.cast(b, ctypes.c_void_p) for b in bufs]
    # the kernel takes (buffers..., gidx0, gidx1, gidx2): call it for every point of the global grid
    for g in itertools.product(*[range(n) for n in global_size]):
      self.fxn(*ptrs, *[ctypes.c_int(i) for i in g])
    return time.perf_counter() - st if wait else None

class MyDevice(Compiled):
  def __init__(self, device: str):
    super().__init__(device, MyAllocator(), CStyleLanguage(), MyCompiler(), MyRunner)

Device._devices["MY"] = MyDevice

def gflops(device: str, n: int = 256, reps: int = 3) -> float:
  """Best-of-reps GFLOPS of an n x n matmul on device (after one compile run). Each run gets new inputs: a
  result that was already realized is never computed again, so timing `(a @ b).realize()` twice on the same
  a and b would time nothing the second time."""
  import numpy as np
  best = float("inf")
  for i in range(reps + 1):
    a, b = Tensor.rand(n, n, device=device).realize(), Tensor.rand(n, n, device=device).realize()
    st = time.perf_counter()
    c = (a @ b).realize()
    if i > 0: best = min(best, time.perf_counter() - st)  # run 0 compiles the kernel
  assert np.allclose(c.numpy(), a.numpy() @ b.numpy(), atol=1e-3 * n), f"wrong matmul result on {device}"
  return 2 * n ** 3 / best * 1e-9

if __name__ == "__main__":
  out = (Tensor([1, 2, 3], device="MY") + Tensor([4, 5, 6], device="MY")).tolist()
  print("MY:", out)
  assert out == [5, 7, 9]
  n = int(sys.argv[1]) if len(sys.argv) > 1 else 256
  for dev in ("MY", "CPU"): print(f"{n}x{n} matmul on {dev}: {gflops(dev, n):.3f} GFLOPS")
