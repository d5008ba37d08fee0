"""The CL device: OpenCL through pyopencl, on the first GPU any platform offers. With no GPU it runs on PoCL, an OpenCL
for the CPU (pip install pyopencl pocl-binary-distribution)."""
from __future__ import annotations
import time
import numpy as np
from lazynb.dtype import dtypes
from lazynb.device import Allocator, Compiler, Runner, Compiled, CompileError, DeviceUnavailable
from lazynb.renderer.cstyle import OpenCLRenderer
from lazynb.renderer.layout import pack_matmul, conv_rows

def _cl():
  try:
    import pyopencl as cl
    return cl
  except ImportError: raise DeviceUnavailable("the CL device needs pyopencl: pip install pyopencl pocl-binary-distribution") from None

class CLAllocator(Allocator):
  def __init__(self, dev: CLDevice): self.dev = dev
  def _alloc(self, size: int, options=None): return _cl().Buffer(self.dev.ctx, _cl().mem_flags.READ_WRITE, size)
  def _free(self, buf, options=None): buf.release()
  def copyin(self, dst, src: memoryview): _cl().enqueue_copy(self.dev.queue, dst, bytes(src), is_blocking=True)
  def copyout(self, dst: memoryview, src):
    host = np.empty(len(dst), dtype=np.uint8)
    _cl().enqueue_copy(self.dev.queue, host, src, is_blocking=True)
    dst[:] = host.tobytes()

class CLCompiler(Compiler):
  def __init__(self, dev: CLDevice):
    self.dev = dev
    super().__init__(f"compile_cl_{dev.cl_device.name}")
  def compile(self, src: str) -> bytes:
    cl = _cl()
    try: prg = cl.Program(self.dev.ctx, src).build()
    except cl.RuntimeError as e: raise CompileError(f"OpenCL failed to compile the kernel:\n{e}\n--- source ---\n{src}") from None
    return prg.get_info(cl.program_info.BINARIES)[0]

class CLProgram(Runner):
  def __init__(self, dev: CLDevice, name: str, lib: bytes):
    cl = _cl()
    self.dev, self.name = dev, name
    self.prg = cl.Program(dev.ctx, [dev.cl_device], [lib]).build()
    self.kernel = getattr(self.prg, name)
  def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False):
    gws = [g * l for g, l in zip(global_size, local_size)]
    st = time.perf_counter()
    ev = self.kernel(self.dev.queue, gws, list(local_size), *bufs, *[np.int32(v) for v in vals])
    if wait: ev.wait()
    return time.perf_counter() - st if wait else None

class CLDevice(Compiled):
  def __init__(self, device: str = "CL"):
    cl = _cl()
    platforms = cl.get_platforms()
    devs = [d for p in platforms for d in p.get_devices()]
    if not devs: raise DeviceUnavailable("pyopencl found no OpenCL device; pip install pocl-binary-distribution for a CPU one")
    # a GPU when one is there (PoCL may be listed first), else the first device that builds a kernel: a PoCL whose LLVM
    # does not know the CPU (an AMD Zen 5 under pip's PoCL 3.0: "unknown target CPU 'generic'") builds none
    errors = []
    for d in sorted(devs, key=lambda d: not d.type & cl.device_type.GPU):
      try: cl.Program(ctx := cl.Context([d]), "__kernel void probe(__global int *a) { a[0] = 1; }").build()
      except cl.RuntimeError as e:
        errors.append(f"{d.platform.version}: {next((ln for ln in str(e).splitlines() if 'error' in ln), str(e)).strip()}")
        continue
      self.cl_device, self.ctx = d, ctx
      break
    else: raise DeviceUnavailable("no OpenCL device here can build a kernel (" + "; ".join(errors) + "); on Debian or Ubuntu, "
                                  "apt-get install pocl-opencl-icd adds a PoCL that pyopencl finds")
    self.queue = cl.CommandQueue(self.ctx)
    renderer = OpenCLRenderer()
    # OpenCL on a CPU (PoCL) pays for a matmul's walk down a big right operand as the CPU device does: pack it first
    # (renderer/layout.py), in panels as wide as the register tile's row. 1024 matmul on PoCL here: 8.9 -> 22.5 GFLOPS
    if self.cl_device.type & cl.device_type.CPU:
      renderer.matmul_panel, renderer.graph_rules = 2 * renderer.simd_floats, (("pack matmul operands into panels", pack_matmul),
                                                                                   ("convolutions along rows", conv_rows))
    super().__init__(device, CLAllocator(self), renderer, CLCompiler(self), lambda name, lib: CLProgram(self, name, lib))
  def synchronize(self): self.queue.finish()
  def supports(self, dtype) -> bool:
    ext = {dtypes.float16: "cl_khr_fp16", dtypes.float64: "cl_khr_fp64"}.get(dtype)
    return ext is None or ext in self.cl_device.extensions.split()
