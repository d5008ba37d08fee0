"""The CUDA device: CUDA C compiled to PTX with NVRTC (pip install cuda-bindings nvidia-cuda-nvrtc), run through the
CUDA driver API when a GPU is present. With no GPU it still renders and compiles (a compile-only mode: read the CUDA
source and the PTX of any kernel), and asking it to allocate memory or run says clearly that there is no GPU."""
from __future__ import annotations
import ctypes, glob, os, time
from typing import Any
from lazynb.device import Allocator, Compiler, Runner, Compiled, CompileError, DeviceUnavailable
from lazynb.renderer.cstyle import CUDARenderer

def _nvrtc():
  try:
    from cuda.bindings import nvrtc
    return nvrtc
  except ImportError: raise DeviceUnavailable("compiling CUDA needs NVRTC: pip install cuda-bindings nvidia-cuda-nvrtc") from None

def _check(res, what: str):
  err = res[0] if isinstance(res, tuple) else res
  if int(err) != 0: raise RuntimeError(f"{what} failed: {err}")
  return res[1:] if isinstance(res, tuple) and len(res) > 1 else None

def driver_status() -> tuple[Any, str]:
  """(the driver module, "") when a GPU can run kernels here, else (None, why not). (The module has no types: Any.)"""
  try: from cuda.bindings import driver
  except ImportError: return None, "no CUDA driver bindings: pip install cuda-bindings"
  except Exception as e: return None, f"no NVIDIA driver on this machine ({type(e).__name__}): no GPU"
  try:
    err, = driver.cuInit(0)
    if int(err) != 0: return None, f"cuInit failed ({err}): no GPU"
    err, n = driver.cuDeviceGetCount()
    if int(err) != 0 or n == 0: return None, "no CUDA GPU found"
  except Exception as e: return None, f"the CUDA driver is not usable here ({type(e).__name__}: {e}): no GPU"
  return driver, ""

def cuda_include_dirs() -> list[str]:
  """Where cuda_fp16.h / cuda_bf16.h live (a toolkit, or pip's nvidia-cuda-runtime): half and bfloat16 kernels include them."""
  roots = [os.environ.get("CUDA_PATH", ""), "/usr/local/cuda"] + sorted(glob.glob("/usr/local/cuda-*"), reverse=True)
  return [d for d in (os.path.join(r, "include") for r in roots if r) if os.path.isfile(os.path.join(d, "cuda_fp16.h"))][:1]

class NVRTCCompiler(Compiler):
  """CUDA C -> PTX. `arch` is the virtual architecture the PTX targets."""
  def __init__(self, arch: str = "compute_75"):
    self.arch = arch
    super().__init__(f"compile_cuda_{arch}")
  def compile(self, src: str) -> bytes:
    nvrtc = _nvrtc()
    err, prog = nvrtc.nvrtcCreateProgram(src.encode(), b"kernel.cu", 0, [], [])
    _check(err, "nvrtcCreateProgram")
    opts = [f"--gpu-architecture={self.arch}".encode(), b"-default-device"] + [f"-I{d}".encode() for d in cuda_include_dirs()]
    err, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    if int(err) != 0:
      _, size = nvrtc.nvrtcGetProgramLogSize(prog)
      log = b" " * size
      nvrtc.nvrtcGetProgramLog(prog, log)
      raise CompileError(f"NVRTC failed to compile the kernel:\n{log.decode(errors='replace').strip()}\n--- source ---\n{src}")
    _, size = nvrtc.nvrtcGetPTXSize(prog)
    ptx = b" " * size
    _check(nvrtc.nvrtcGetPTX(prog, ptx), "nvrtcGetPTX")
    nvrtc.nvrtcDestroyProgram(prog)
    return ptx.rstrip(b"\x00 ")

class CUDAAllocator(Allocator):
  def __init__(self, dev: CUDADevice): self.dev = dev
  def _alloc(self, size: int, options=None):
    drv = self.dev.require_gpu()
    return _check(drv.cuMemAlloc(size), "cuMemAlloc")[0]
  def _free(self, buf, options=None): self.dev.driver.cuMemFree(buf)
  def copyin(self, dst, src: memoryview):
    drv = self.dev.require_gpu()
    data = bytes(src)
    _check(drv.cuMemcpyHtoD(dst, data, len(data)), "cuMemcpyHtoD")
  def copyout(self, dst: memoryview, src):
    drv = self.dev.require_gpu()
    host = (ctypes.c_char * len(dst))()
    _check(drv.cuMemcpyDtoH(host, src, len(dst)), "cuMemcpyDtoH")
    dst[:] = bytes(host)

class CUDAProgram(Runner):
  def __init__(self, dev: CUDADevice, name: str, lib: bytes):
    drv = dev.require_gpu()
    self.dev, self.name = dev, name
    self.module = _check(drv.cuModuleLoadData(lib + b"\x00"), "cuModuleLoadData")[0]
    self.fxn = _check(drv.cuModuleGetFunction(self.module, name.encode()), "cuModuleGetFunction")[0]
  def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False):
    import numpy as np
    drv = self.dev.driver
    ptrs = [np.array([int(b)], dtype=np.uint64) for b in bufs] + [np.array([v], dtype=np.int32) for v in vals]
    args = np.array([p.ctypes.data for p in ptrs], dtype=np.uint64)
    st = time.perf_counter()
    _check(drv.cuLaunchKernel(self.fxn, *global_size, *local_size, 0, 0, args.ctypes.data, 0), "cuLaunchKernel")
    if wait: _check(drv.cuCtxSynchronize(), "cuCtxSynchronize")
    return time.perf_counter() - st if wait else None

class CUDADevice(Compiled):
  def __init__(self, device: str = "CUDA"):
    self.driver, self.why = driver_status()
    self.ctx = None
    if self.driver is not None:
      dev = _check(self.driver.cuDeviceGet(0), "cuDeviceGet")[0]
      self.ctx = _check(self.driver.cuCtxCreate(None, 0, dev), "cuCtxCreate")[0]
    super().__init__(device, CUDAAllocator(self), CUDARenderer(), NVRTCCompiler(), lambda name, lib: CUDAProgram(self, name, lib))
  def can_run(self) -> tuple[bool, str]: return (self.driver is not None, self.why)
  def require_gpu(self):
    if self.driver is None:
      raise DeviceUnavailable(f"CUDA cannot run kernels here: {self.why}. Rendering and compiling still work: "
                              "lazynb.engine.realize.compile_only(tensor) gives each kernel's CUDA source and PTX")
    return self.driver
  def synchronize(self):
    if self.driver is not None: self.driver.cuCtxSynchronize()
