"""The CPU backend: C source compiled by clang (or cc/gcc) into a shared library and called through ctypes.

Kernels with a THREAD axis take their thread id as the last argument and run on a pool of threads
(ctypes releases the GIL during the call). The C compiler is `$CC` if set, else the first of clang, cc, gcc on the PATH. Buffers are numpy arrays of
bytes, so copies in and out are plain memory copies.
"""
from __future__ import annotations
import atexit, ctypes, hashlib, os, pathlib, re, shutil, subprocess, tempfile, time
from concurrent.futures import ThreadPoolExecutor
import numpy as np
from lazynb.device import Allocator, Compiler, Runner, Compiled, CompileError, DeviceUnavailable
from lazynb.helpers import cache_dir, getenv, no_disk_cache
from lazynb.renderer.cstyle import ClangRenderer

class CPUAllocator(Allocator):
  def _alloc(self, size: int, options=None) -> np.ndarray:
    # 64-byte aligned (a cache line, one AVX-512 vector): numpy only promises 16, and a misaligned
    # matmul operand costs about 15% (every vector load straddles two cache lines)
    raw = np.empty(size + 64, dtype=np.uint8)
    off = -raw.ctypes.data % 64
    return raw[off:off + size]
  def _free(self, buf, options=None): pass
  def copyin(self, dst: np.ndarray, src: memoryview): dst[:] = np.frombuffer(src, dtype=np.uint8)
  def copyout(self, dst: memoryview, src: np.ndarray): np.frombuffer(dst, dtype=np.uint8)[:] = src[:len(dst)]
  def as_ptr(self, buf: np.ndarray) -> int: return buf.ctypes.data

def find_cc() -> str:
  if cc := os.environ.get("CC"):
    if shutil.which(cc.split()[0]) is None: raise DeviceUnavailable(f"CC={cc!r} is not on the PATH")
    return cc
  for cc in ("clang", "cc", "gcc"):
    if shutil.which(cc): return cc
  raise DeviceUnavailable("no C compiler found for the CPU device: install one (apt-get install -y clang, or gcc), "
                          "set CC=/path/to/compiler, or use the PYTHON device (PYTHON=1)")

def explain_compile_error(src: str, stderr: str, cc: str) -> str:
  """The compiler's message plus the source lines it points at."""
  lines = src.splitlines()
  shown = []
  for m in re.finditer(r":(\d+):(\d+): (?:fatal )?error: (.*)", stderr):
    ln = int(m.group(1))
    if 1 <= ln <= len(lines): shown.append(f"  line {ln}: {lines[ln-1].strip()}\n    error: {m.group(3)}")
  head = f"{cc} failed to compile the kernel"
  return head + (":\n" + "\n".join(shown) if shown else "") + f"\n--- compiler output ---\n{stderr.strip()}\n--- source ---\n{src}"

class ClangCompiler(Compiler):
  def __init__(self, cachekey: str = "compile_cpu", args: tuple[str, ...] = ()):
    self.cc = find_cc()
    # -ffp-contract=fast lets a*b+c become one fused multiply-add (matmul's inner loop); -fwrapv makes signed
    # integer overflow wrap around, as numpy's does
    self.args = ("-shared", "-fPIC", "-O2", "-march=native", "-fno-math-errno", "-ffp-contract=fast", "-fwrapv", "-w") + args
    if "clang" in self.cc: self.args += ("-mprefer-vector-width=512",)
    # the key names every flag, so a binary built with other flags is never reused
    super().__init__(f"{cachekey}_{self.cc}_{'_'.join(self.args)}")
  def compile(self, src: str) -> bytes:
    with tempfile.TemporaryDirectory() as d:
      out = os.path.join(d, "k.so")
      cmd = self.cc.split() + list(self.args) + ["-x", "c", "-", "-o", out]
      p = subprocess.run(cmd, input=src.encode(), capture_output=True)
      if p.returncode != 0: raise CompileError(explain_compile_error(src, p.stderr.decode(errors="replace"), self.cc))
      with open(out, "rb") as f: return f.read()

_private_libs: str | None = None  # a temp dir of this process, when the cache directory cannot hold libraries
def _libs_dir() -> pathlib.Path:
  global _private_libs
  if no_disk_cache() is None:
    try:
      (d := cache_dir() / "libs").mkdir(exist_ok=True)
      return d
    except OSError as e: no_disk_cache(f"cannot write compiled kernels to the cache directory ({e.strerror or e})")
  if _private_libs is None:
    _private_libs = tempfile.mkdtemp(prefix="lazynb-libs-")
    atexit.register(shutil.rmtree, _private_libs, True)
  return pathlib.Path(_private_libs)

def _place(d: pathlib.Path, lib: bytes) -> pathlib.Path:
  """The file `d/<hash>.so` holding exactly `lib`: a file there with other bytes (damaged, truncated) is replaced."""
  path = d / (hashlib.sha256(lib).hexdigest()[:32] + ".so")
  if path.is_file() and path.read_bytes() == lib: return path
  with tempfile.NamedTemporaryFile(dir=d, suffix=".tmp", delete=False) as f: tmp = f.name
  try:
    with open(tmp, "wb") as f: f.write(lib)
    os.replace(tmp, path)  # atomic: another process loading the same kernel sees the old file or the whole new one
  except OSError:
    pathlib.Path(tmp).unlink(missing_ok=True)
    raise
  return path

def load_library(lib: bytes) -> ctypes.CDLL:
  """ctypes needs a file: keep one per distinct binary, named by its hash, in the cache directory, and load it only if
  its bytes are exactly `lib`. A cache directory that cannot hold it means a private temp dir (and no disk cache)."""
  try: return ctypes.CDLL(str(_place(_libs_dir(), lib)))
  except OSError as e:
    if no_disk_cache() is not None: raise  # that was the private dir already
    no_disk_cache(f"cannot write compiled kernels to the cache directory ({e.strerror or e})")
    return ctypes.CDLL(str(_place(_libs_dir(), lib)))

class CPUProgram(Runner):
  def __init__(self, name: str, lib: bytes):
    super().__init__(name, lib)
    self.fxn = getattr(load_library(lib), name)
    self.fxn.restype = None
  def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False):
    """global_size[0] > 1 means the kernel has a THREAD axis: run it once per core with its thread id."""
    args = [ctypes.c_void_p(b.ctypes.data) for b in bufs] + [ctypes.c_int(v) for v in vals]
    st = time.perf_counter()
    if global_size[0] == 1: self.fxn(*args)
    else:  # threads 1.. on the pool, thread 0 right here
      futs = [_pool(global_size[0]).submit(self.fxn, *args, ctypes.c_int(t)) for t in range(1, global_size[0])]
      self.fxn(*args, ctypes.c_int(0))
      for f in futs: f.result()
    return time.perf_counter() - st if wait else None

_pools: dict[int, ThreadPoolExecutor] = {}
def _pool(n: int) -> ThreadPoolExecutor:
  # ctypes releases the GIL during the call, so these threads run the kernel on separate cores
  if n not in _pools: _pools[n] = ThreadPoolExecutor(n, thread_name_prefix="lazynb-cpu")
  return _pools[n]

def simd_shape() -> tuple[int, int]:
  """(floats per vector register, vector registers) of this CPU, as -march=native will use them."""
  try:
    with open("/proc/cpuinfo") as f: flags = next((ln.split(":", 1)[1].split() for ln in f if ln.startswith("flags")), [])
  except OSError: flags = []
  if "avx512f" in flags: return 16, 32
  if "avx" in flags: return 8, 16
  return 4, 16

class CPUDevice(Compiled):
  def __init__(self, device: str = "CPU"):
    renderer = ClangRenderer()
    threads = getenv("THREADS", min(os.cpu_count() or 1, 8))
    renderer.threads = threads
    renderer.has_threads = threads > 1
    renderer.simd_floats, renderer.simd_regs = simd_shape()
    super().__init__(device, CPUAllocator(), renderer, ClangCompiler(), CPUProgram)
