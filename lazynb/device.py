"""Devices, buffers and the three parts of a backend: Allocator, Compiler and Runner (the program runtime).

A backend is a `Compiled(device, allocator, renderer, compiler, runtime)`: the renderer turns kernels into
source, the compiler turns source into a binary, and `runtime(name, lib)` loads it as a callable program.
Register a new one with `Device._devices["NAME"] = MyDevice` and use it as `Tensor(..., device="NAME")`.
"""
from __future__ import annotations
import hashlib, importlib, os, sqlite3, threading, time
from typing import Any
import numpy as np
from lazynb.dtype import DType
from lazynb.helpers import GlobalCounters, cache_dir, CACHELEVEL, getenv

class Allocator:
  """Allocates device memory and copies to and from the host. Subclasses implement the underscored methods."""
  def alloc(self, size: int, options: Any = None): return self._alloc(size, options)
  def free(self, buf, size: int, options: Any = None): self._free(buf, options)
  def _alloc(self, size: int, options: Any): raise NotImplementedError("an Allocator must implement _alloc(size, options)")
  def _free(self, buf, options: Any): pass
  def copyin(self, dst, src: memoryview): raise NotImplementedError("an Allocator must implement copyin(dst, src)")
  def copyout(self, dst: memoryview, src): raise NotImplementedError("an Allocator must implement copyout(dst, src)")

class CompileError(RuntimeError):
  """A kernel failed to compile; the message shows the offending source line and the compiler's words."""

class Compiler:
  """Turns source into a binary. `compile_cached` keeps results on disk, keyed by the source's hash."""
  def __init__(self, cachekey: str | None = None): self.cachekey = cachekey
  def compile(self, src: str) -> bytes: return src.encode()
  def compile_cached(self, src: str) -> bytes:
    if self.cachekey is None or CACHELEVEL < 1: return self.compile(src)
    key = hashlib.sha256(src.encode()).hexdigest()
    if (lib := diskcache_get(self.cachekey, key)) is not None: return lib
    lib = self.compile(src)
    diskcache_put(self.cachekey, key, lib)
    return lib

class Runner:
  """A loaded program: `Runner(name, lib)`, then `runner(*bufs, global_size=..., local_size=..., wait=True)`
  runs it and, with wait, returns the seconds it took."""
  def __init__(self, name: str, lib: bytes): self.name, self.lib = name, lib
  def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False) -> float | None:
    raise NotImplementedError

class Compiled:
  """A device that compiles kernels: its allocator, renderer (a Renderer instance), compiler and runtime class."""
  def __init__(self, device: str, allocator: Allocator, renderer, compiler: Compiler | None, runtime, graph=None):
    from lazynb.renderer import Renderer
    self.device, self.allocator, self.compiler, self.runtime = device, allocator, compiler or Compiler(), runtime
    self.renderer = renderer if renderer is not None else Renderer()
    if isinstance(self.renderer, type): self.renderer = self.renderer()
    self.renderer.device = device.split(":")[0]
  def synchronize(self): pass
  def can_run(self) -> tuple[bool, str]:
    """(True, "") if kernels can run here; devices that can only compile (CUDA with no GPU) say why not."""
    return True, ""

class DeviceUnavailable(RuntimeError):
  """The device exists but cannot run here (no GPU, a missing package); the message says what to install."""

class _Device:
  # name -> the class (or "module:Class" string, imported on first use)
  _devices: dict[str, Any] = {"CPU": "lazynb.runtime.ops_cpu:CPUDevice", "PYTHON": "lazynb.runtime.ops_python:PythonDevice",
                              "CL": "lazynb.runtime.ops_cl:CLDevice", "CUDA": "lazynb.runtime.ops_cuda:CUDADevice"}
  _aliases = {"CLANG": "CPU", "GPU": "CL", "OPENCL": "CL"}
  def __init__(self):
    self._opened: dict[str, Compiled] = {}
    self._default: str | None = None
  def canonicalize(self, device: str | None) -> str:
    if device is None: return self.DEFAULT
    if not isinstance(device, str): raise TypeError(f"device must be a string such as 'CPU', got {device!r}")
    name = device.upper().split(":")[0]
    name = self._aliases.get(name, name)
    if name not in self._devices:
      raise ValueError(f"unknown device {device!r}; known devices: {', '.join(sorted(self._devices))} (aliases: {', '.join(sorted(self._aliases))})")
    return name + (device[len(device.split(':')[0]):] if ":" in device else "")
  def __getitem__(self, device: str) -> Compiled:
    name = self.canonicalize(device)
    if name not in self._opened:
      cls = self._devices[name.split(":")[0]]
      if isinstance(cls, str):
        mod, attr = cls.split(":")
        cls = getattr(importlib.import_module(mod), attr)
      self._opened[name] = cls(name)
    return self._opened[name]
  @property
  def DEFAULT(self) -> str:
    if self._default is None:
      env = os.environ.get("DEVICE")
      if env: self._default = self.canonicalize(env)
      else:
        picked = [d for d in list(self._devices) + list(self._aliases) if getenv(d, 0) == 1]
        self._default = self.canonicalize(picked[0]) if picked else "CPU"
    return self._default
  @DEFAULT.setter
  def DEFAULT(self, device: str): self._default = self.canonicalize(device)
  def available(self, device: str) -> tuple[bool, str]:
    """(True, "") when kernels can run on `device` here, else (False, the reason)."""
    try: return self[device].can_run()
    except Exception as e: return False, str(e)

Device = _Device()

# freed device memory is kept for reuse (a fresh allocation costs page faults on first touch)
_POOL_LIMIT = 1 << 29
_pool: dict[tuple[str, int], list] = {}
_pooled_bytes = 0
def _pool_take(key):
  global _pooled_bytes
  if (lst := _pool.get(key)):
    _pooled_bytes -= key[1]
    return lst.pop()
  return None
def _pool_give(key, buf) -> bool:
  global _pooled_bytes
  if _pooled_bytes + key[1] > _POOL_LIMIT: return False
  _pool.setdefault(key, []).append(buf)
  _pooled_bytes += key[1]
  return True

class Buffer:
  """Memory for `size` elements of `dtype` on a device, allocated on first use."""
  def __init__(self, device: str, size: int, dtype: DType):
    self.device, self.size, self.dtype = device, size, dtype
    self._buf: Any = None
    self.version = 0  # counts writes: a result cached from this buffer's contents is valid while the count is unchanged
  @property
  def nbytes(self) -> int: return self.size * self.dtype.itemsize
  def is_allocated(self) -> bool: return self._buf is not None
  def allocate(self) -> Buffer:
    if self._buf is None:
      self.allocator = Device[self.device].allocator
      key = (self.device, max(self.nbytes, 1))
      buf = _pool_take(key)
      self._buf = buf if buf is not None else self.allocator.alloc(key[1])
      GlobalCounters.mem_used += self.nbytes
    return self
  def __del__(self):
    if getattr(self, "_buf", None) is not None:
      GlobalCounters.mem_used -= self.nbytes
      try:
        if not _pool_give((self.device, max(self.nbytes, 1)), self._buf): self.allocator.free(self._buf, max(self.nbytes, 1))
      except Exception: pass
  def copyin(self, data: memoryview) -> Buffer:
    self.allocate()
    if data.nbytes != self.nbytes: raise ValueError(f"copyin of {data.nbytes} bytes into a buffer of {self.nbytes}")
    if self.nbytes: self.allocator.copyin(self._buf, data)
    self.version += 1
    return self
  def copyout(self, data: memoryview) -> memoryview:
    if self._buf is None: raise RuntimeError("reading a buffer that was never written")
    if self.nbytes: self.allocator.copyout(data, self._buf)
    return data
  def numpy(self) -> np.ndarray:
    out = np.empty(self.size, dtype=self.dtype.np)
    self.copyout(memoryview(out.view(np.uint8)))
    return out
  def __repr__(self): return f"<buf {self.device} size={self.size} {self.dtype}{' alloc' if self._buf is not None else ''}>"

# ---------------------------------------------------------------- a small sqlite cache (compiled binaries, BEAM results)

_local = threading.local()  # one connection per thread (BEAM compiles in worker threads)
def _open(path) -> sqlite3.Connection:
  db = sqlite3.connect(path, timeout=30, isolation_level=None)  # WAL: safe for several processes at once
  db.execute("pragma journal_mode=wal")
  db.execute("create table if not exists cache (tbl text, key text, val blob, primary key (tbl, key))")
  return db
def _conn(reset: bool = False) -> sqlite3.Connection:
  path = cache_dir() / "cache.db"
  if reset:  # corrupt: start over
    if getattr(_local, "db", None) is not None: _local.db.close()
    _local.db = None
    for f in path.parent.glob("cache.db*"): f.unlink(missing_ok=True)
  if getattr(_local, "db", None) is None:
    try: _local.db = _open(path)
    except sqlite3.DatabaseError:
      if reset: raise
      return _conn(reset=True)
  return _local.db

def diskcache_get(table: str, key: str) -> bytes | None:
  for attempt in range(2):
    try:
      row = _conn(reset=attempt > 0).execute("select val from cache where tbl=? and key=?", (table, key)).fetchone()
      return None if row is None else row[0]
    except sqlite3.OperationalError: time.sleep(0.05)
    except sqlite3.DatabaseError: continue
  return None

def diskcache_put(table: str, key: str, val: bytes):
  for attempt in range(3):
    try:
      _conn(reset=attempt > 0 and attempt == 2).execute("insert or replace into cache values (?, ?, ?)", (table, key, val))
      return
    except sqlite3.OperationalError: time.sleep(0.05)
    except sqlite3.DatabaseError: _conn(reset=True)
