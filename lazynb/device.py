"""Devices, buffers and the three parts of a backend: Allocator, Compiler and Runner (the program runtime).

A backend is a `Compiled(device, allocator, renderer, compiler, runtime)`: the renderer turns kernels into
source, the compiler turns source into a binary, and `runtime(name, lib)` loads it as a callable program.
Register a new one with `Device._devices["NAME"] = MyDevice` and use it as `Tensor(..., device="NAME")`."""
from __future__ import annotations
import contextlib, hashlib, importlib, itertools, os, pathlib, sqlite3, tempfile, threading, time
from typing import Any
import numpy as np
from lazynb.dtype import DType, np_storage
from lazynb.helpers import GlobalCounters, cache_dir, no_disk_cache, CACHELEVEL, POISON, getenv, plural
from lazynb.renderer import Renderer
from lazynb import pipeline
from lazynb.pipeline import implements

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

class OutOfBoundsError(RuntimeError):
  """A kernel read or wrote outside one of its buffers: found by the bounds-checked mode (LAZYNB_CHECK=1), or by the
  PYTHON device, which checks every access."""

def out_of_bounds(kernel: str, buf: int, index: int, size: int, store: bool) -> OutOfBoundsError:
  """The error every device raises for an access outside a buffer, in one form (buf: the DEFINE_GLOBAL number, dataN).
  Made while stages that make kernels are replaced (pipeline.use), it names them rather than calling it lazynb's bug."""
  yours = pipeline.replaced_names(("schedule",) + pipeline.CODEGEN)
  why = (f"The kernel was made with your {', '.join(yours)} {'stages' if len(yours) > 1 else 'stage'} in place of lazynb's: an index, a valid or a "
         "loop bound it computes is wrong" if yours else "This is a bug in lazynb (the scheduler or the code generator): please report it "
         "with the program that made it")
  return OutOfBoundsError(f"kernel {kernel}: {'store to' if store else 'load from'} buffer data{buf} at index {index}, outside its {plural(size, 'element')}. {why}")

class Compiler:
  """Turns source into a binary. `compile_cached` keeps results on disk, keyed by the source's hash. One that sets `batches`
  compiles a schedule's new kernels in one call (`compile_batch`: docs/architecture.md, "The CPU device")."""
  batches = False
  def __init__(self, cachekey: str | None = None): self.cachekey = cachekey
  def compile(self, src: str) -> bytes: return src.encode()
  def compile_batch(self, named_srcs: list[tuple[str, str]]) -> list[bytes]:
    """One binary per (kernel name, source), in order. Here: one compile each."""
    return [self.compile(src) for _, src in named_srcs]
  def resolve(self, lib: bytes) -> bytes | None: return lib  # a cached binary as the runtime loads it (None: a miss, what it refers to is gone)
  def quiet(self) -> contextlib.AbstractContextManager:
    """A block in which the compiler starts nothing in the background (BEAM times kernels in it). Here: nothing to stop."""
    return contextlib.nullcontext()
  def _cache_key(self) -> str | None: return self.cachekey if CACHELEVEL >= 1 else None  # None: no disk cache
  def lookup(self, src: str) -> bytes | None:
    """The cached binary of `src`, or None."""
    if (key := self._cache_key()) is None: return None
    lib = diskcache_get(key, hashlib.sha256(src.encode()).hexdigest())
    return None if lib is None else self.resolve(lib)
  def store(self, src: str, lib: bytes):
    if (key := self._cache_key()) is not None: diskcache_put(key, hashlib.sha256(src.encode()).hexdigest(), lib)
  def compile_cached(self, src: str) -> bytes:
    if (lib := self.lookup(src)) is not None: return lib
    lib = self.compile(src)
    self.store(src, lib)
    return lib

class Runner:
  """A loaded program: `Runner(name, lib)`, then `runner(*bufs, global_size=..., local_size=..., wait=True)`
  runs it and, with wait, returns the seconds it took."""
  def __init__(self, name: str, lib: bytes): self.name, self.lib = name, lib
  def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False) -> float | None: raise NotImplementedError

class Compiled:
  """A device that compiles kernels: its allocator, renderer (a Renderer instance), compiler and runtime class."""
  def __init__(self, device: str, allocator: Allocator, renderer, compiler: Compiler | None, runtime, graph=None):
    self.device, self.allocator, self.compiler, self.runtime = device, allocator, compiler or Compiler(), runtime
    self.renderer = renderer if renderer is not None else Renderer()
    if isinstance(self.renderer, type): self.renderer = self.renderer()
    self.renderer.device = device.split(":")[0]
  def synchronize(self): pass
  def can_run(self) -> tuple[bool, str]:
    """(True, "") if kernels can run here; devices that can only compile (CUDA with no GPU) say why not."""
    return True, ""
  def supports(self, dtype: DType) -> bool:
    """Can this device's kernels use `dtype`? Every renderer here writes every dtype (bfloat16, and float16 where
    the compiler lacks it, are emulated in float); a device whose hardware may lack one (OpenCL) asks it."""
    return True

class DeviceUnavailable(RuntimeError):
  """The device exists but cannot run here (no GPU, a missing package); the message says what to install."""

class _Device:
  # name -> the class (or "module:Class" string, imported on first use)
  _devices: dict[str, Any] = {"CPU": "lazynb.runtime.ops_cpu:CPUDevice", "PYTHON": "lazynb.runtime.ops_python:PythonDevice",
                              "CL": "lazynb.runtime.ops_cl:CLDevice", "CUDA": "lazynb.runtime.ops_cuda:CUDADevice",
                              "LLVM": "lazynb.runtime.ops_llvm:LLVMDevice"}
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
  @property
  def default(self) -> Compiled: return self[self.DEFAULT]  # the default device itself (tinygrad 0.10's Device.default)
  def available(self, device: str) -> tuple[bool, str]:
    """(True, "") when kernels can run on `device` here, else (False, the reason)."""
    try: return self[device].can_run()
    except Exception as e: return False, str(e)

Device = _Device()

# ---------------------------------------------------------------- the device's stages of the pipeline (lazynb/pipeline.py)
@implements("compile")
def compile_kernel(device: str, src: str) -> bytes:
  """The compile stage: the device's compiler on one kernel's source (through the disk cache)."""
  return Device[device].compiler.compile_cached(src)

@implements("load")
def load_kernel(device: str, name: str, lib: bytes):
  """The load stage: the binary made a callable program by the device's runtime."""
  return Device[device].runtime(name, lib)

@implements("run")
def run_kernel(program, bufs: list, global_size: tuple, local_size: tuple, vals: tuple) -> float:
  """The run stage: a loaded program once on raw device buffers (Buffer._buf), waited for; the seconds it took."""
  t = program(*bufs, global_size=global_size, local_size=local_size, **({"vals": vals} if vals else {}), wait=True)
  return t if t is not None else 0.0

def is_dtype_supported(dtype: DType, device: str | None = None) -> bool:
  """Whether kernels with `dtype` compile and run on `device` (default: Device.DEFAULT); False if it cannot open."""
  if dtype.base.name.startswith("float8"): return False  # no kernel computes in fp8 yet (dtype.py)
  try: dev = Device[device if device is not None else Device.DEFAULT]
  except Exception: return False
  return dev.supports(dtype)

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
  external = False  # (ExternalBuffer: memory lazynb does not own)
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
      if POISON and self.nbytes: self.allocator.copyin(self._buf, memoryview(b"\xff" * self.nbytes))
    return self
  def deallocate(self):
    """Give the memory back (to the pool); allocate() gets new memory, with undefined contents."""
    if self._buf is None: return
    GlobalCounters.mem_used -= self.nbytes
    if not _pool_give((self.device, max(self.nbytes, 1)), self._buf): self.allocator.free(self._buf, max(self.nbytes, 1))
    self._buf = None
    self.version += 1  # its contents are gone: a value cached in it (the expression cache) is stale
  def __del__(self):
    if getattr(self, "_buf", None) is not None:
      GlobalCounters.mem_used -= self.nbytes
      with contextlib.suppress(Exception):
        if not _pool_give((self.device, max(self.nbytes, 1)), self._buf): self.allocator.free(self._buf, max(self.nbytes, 1))
  def copyin(self, data: memoryview) -> Buffer:
    self.allocate()
    if data.nbytes != self.nbytes: raise ValueError(f"copyin of {plural(data.nbytes, 'byte')} into a buffer of {self.nbytes}")
    if self.nbytes: self.allocator.copyin(self._buf, data)
    self.version += 1
    return self
  def copyout(self, data: memoryview) -> memoryview:
    if self._buf is None: raise RuntimeError("reading a buffer that was never written")
    if self.nbytes: self.allocator.copyout(data, self._buf)
    return data
  def as_buffer(self) -> memoryview:
    """A host copy of the contents as a byte memoryview (tinygrad 0.10's name): .cast("I") etc. reads it as a type."""
    return self.copyout(memoryview(bytearray(self.nbytes)))
  def numpy(self) -> np.ndarray:
    out = np.empty(self.size, dtype=np_storage(self.dtype))  # bfloat16: its 16 bits
    self.copyout(out.view(np.uint8).data)
    return out
  def __repr__(self): return f"<buf {self.device} size={self.size} {self.dtype}{' alloc' if self._buf is not None else ''}>"

_ticks = itertools.count(1)
class ExternalBuffer(Buffer):
  """Host memory lazynb does not own (from_blob sets _buf): never freed or pooled; new version at every look (never cached)."""
  version, external = property(lambda self: next(_ticks), lambda self, v: None), True
  def deallocate(self): pass
  def __del__(self): pass

# ---------------------------------------------------------------- a small sqlite cache (compiled binaries, BEAM results)
# Every value is stored with a hash of its key and bytes: a row whose bytes changed (a damaged disk, a half-written
# copy, a row moved to another key) is a miss, never a wrong binary. A cache that cannot be written (read-only
# directory or database, LAZYNB_CACHE under a file) turns the cache off for the process with one warning.

_local = threading.local()  # one connection per thread (BEAM compiles in worker threads)
def _forget_connections():  # a forked child opens its own: an sqlite connection must not cross a fork
  global _local
  _local = threading.local()
if hasattr(os, "register_at_fork"): os.register_at_fork(after_in_child=_forget_connections)
def _digest(table: str, key: str, val: bytes) -> bytes: return hashlib.sha256(f"{table}\0{key}\0".encode() + val).digest()

def _writable(path: pathlib.Path) -> str | None:
  """None if this process can write `path` (a directory: create a file in it), else why not. A real attempt, not
  os.access: root passes every permission check but not a read-only mount or an immutable file."""
  try:
    if path.is_dir():
      with tempfile.TemporaryFile(dir=path): pass
    elif path.exists(): open(path, "r+b").close()
    return None
  except OSError as e: return f"{path} is not writable ({e.strerror or e})"

def _open(path: pathlib.Path) -> sqlite3.Connection:
  db = sqlite3.connect(path, timeout=30, isolation_level=None)  # WAL: safe for several processes at once
  try:
    db.execute("pragma journal_mode=wal")
    db.execute("create table if not exists entries (tbl text, key text, val blob, sha blob, primary key (tbl, key))")
  except sqlite3.Error:
    db.close()
    raise
  return db

def _conn() -> sqlite3.Connection | None:
  """This thread's connection, or None when the disk cache is off."""
  if no_disk_cache() is not None: return None
  if (db := getattr(_local, "db", None)) is not None: return db
  try: d = cache_dir()
  except OSError as e:
    no_disk_cache(f"cannot use {os.environ.get('LAZYNB_CACHE') or 'the cache directory'} as a directory ({e.strerror or e})")
    return None
  path = d / "cache.db"
  if (why := _writable(d) or _writable(path)) is not None:
    no_disk_cache(why)
    return None
  err: sqlite3.DatabaseError | None = None
  for attempt in range(5):  # threads and processes opening one new database at once can see it locked mid-setup
    try:
      _local.db = _open(path)
      return _local.db
    except sqlite3.DatabaseError as e:
      err = e
      if not _transient(e): break
      time.sleep(0.01 * 2 ** attempt)
  assert err is not None  # (every attempt that did not return failed)
  if _transient(err): return None  # still busy: no cache this time (the directory is writable: the cache stays on)
  if _damaged(err) and _reset(path, err): return _local.db
  no_disk_cache(f"cannot open {path}: {err}")
  return None

def _transient(e: sqlite3.Error) -> bool:
  """Another connection is setting the database up or writing: worth a retry, no reason to turn the cache off (the
  directory passed the writability check, so a disk I/O error here is a concurrent WAL set-up, not a broken disk)."""
  return any(w in str(e) for w in ("locked", "busy", "disk I/O error"))

def _damaged(e: sqlite3.Error) -> bool:
  """A damaged file (reset it), as opposed to a busy or unwritable one."""
  return not isinstance(e, sqlite3.OperationalError) or "malformed" in str(e) or "not a database" in str(e)

def _reset(path: pathlib.Path, e: sqlite3.Error) -> bool:
  """Delete a damaged database and start a fresh one; only when this process can write it (never someone else's)."""
  _close()
  if _writable(path.parent) or _writable(path): return False
  for f in path.parent.glob("cache.db*"): f.unlink(missing_ok=True)
  try: _local.db = _open(path)
  except sqlite3.Error: return False
  return True

def _close():
  if (db := getattr(_local, "db", None)) is not None: db.close()
  _local.db = None

def _failed(e: sqlite3.Error):
  """A query failed: a read-only database turns the cache off; a damaged one is reset; a busy one is skipped."""
  if "readonly" in str(e) or "read-only" in str(e): no_disk_cache(f"the cache database cannot be written: {e}")
  elif _damaged(e) and not _reset(cache_dir() / "cache.db", e): no_disk_cache(f"the cache database is damaged: {e}")

def diskcache_get(table: str, key: str) -> bytes | None:
  if (db := _conn()) is None: return None
  try: row = db.execute("select val, sha from entries where tbl=? and key=?", (table, key)).fetchone()
  except sqlite3.Error as e:
    _failed(e)
    return None
  if row is None: return None
  val, sha = row
  if isinstance(val, bytes) and sha == _digest(table, key, val): return val
  try: db.execute("delete from entries where tbl=? and key=?", (table, key))  # damaged: a miss, rebuilt by the caller
  except sqlite3.Error as e: _failed(e)
  return None

def diskcache_put(table: str, key: str, val: bytes):
  if (db := _conn()) is None: return
  try: db.execute("insert or replace into entries values (?, ?, ?, ?)", (table, key, val, _digest(table, key, val)))
  except sqlite3.Error as e: _failed(e)
