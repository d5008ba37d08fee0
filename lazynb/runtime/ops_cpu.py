"""The CPU backend: C source compiled by clang (or cc/gcc) into a shared library and called through ctypes.

Kernels with a THREAD axis take their thread id as the last argument and run on a pool of threads (ctypes releases the
GIL during the call). The C compiler is `$CC` if set, else the first of clang, cc, gcc on the PATH. Buffers are numpy
arrays of bytes, so copies in and out are plain memory copies. Its knobs (LAZYNB_MARCH, LAZYNB_HALF, LAZYNB_LOADER,
LAZYNB_CC_PRESTART) and its speed work off the teaching path: docs/architecture.md, "The CPU device"."""
from __future__ import annotations
import atexit, ctypes, hashlib, os, pathlib, platform, re, shutil, subprocess, sys, tempfile, time
from typing import Callable
from concurrent.futures import ThreadPoolExecutor
import numpy as np
from lazynb.device import Allocator, Compiler, Runner, Compiled, CompileError, DeviceUnavailable, diskcache_get, diskcache_put
from lazynb.helpers import cache_dir, getenv, no_disk_cache, PLAIN
from lazynb.renderer.cstyle import ClangRenderer
from lazynb.renderer.layout import pack_matmul, conv_rows
from lazynb.runtime import compiler_process, elfload

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
  # tinygrad 0.10's underscored allocator calls, as docs/abstractions2.py uses them on MallocAllocator
  def _copyin(self, dst: np.ndarray, src: memoryview): self.copyin(dst, src)
  def _as_buffer(self, src: np.ndarray) -> memoryview:
    """The buffer's own bytes (not a copy): cast("I") etc. reads them as another type."""
    return src.data

def find_cc() -> str:
  if cc := os.environ.get("CC"):
    if shutil.which(cc.split()[0]) is None:
      raise DeviceUnavailable(f"CC={cc!r} is not on the PATH: install it (apt-get install -y clang, or gcc), or unset CC")
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

HALF_MODES = ("auto", "native", "emulate")

def knobs() -> tuple[str, str]:
  """(march, half mode) from LAZYNB_MARCH and LAZYNB_HALF; a value we cannot use is an error, never ignored."""
  march = os.environ.get("LAZYNB_MARCH", "") or "native"
  if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", march):
    raise ValueError(f"LAZYNB_MARCH={march!r} is not a -march name (e.g. native, x86-64, x86-64-v3)")
  half = os.environ.get("LAZYNB_HALF", "") or "auto"
  if half not in HALF_MODES: raise ValueError(f"LAZYNB_HALF={half!r}: use one of {', '.join(HALF_MODES)}")
  return march, half

LOADERS = ("auto", "elf", "dlopen")

def loader_knob() -> str:
  """"elf" or "dlopen", from LAZYNB_LOADER (auto: elf where lazynb's loader runs, Linux on x86-64)."""
  loader = os.environ.get("LAZYNB_LOADER", "") or ("dlopen" if PLAIN else "auto")  # LAZYNB_PLAIN: the plain runtime
  if loader not in LOADERS: raise ValueError(f"LAZYNB_LOADER={loader!r}: use one of {', '.join(LOADERS)}")
  if loader == "elf" and not elfload.supported():
    raise ValueError(f"LAZYNB_LOADER=elf: lazynb's object loader runs on Linux x86-64 only (this is {sys.platform} "
                     f"{platform.machine()}); use auto or dlopen")
  return loader if loader != "auto" else "elf" if elfload.supported() else "dlopen"

def _first_error(p: subprocess.CompletedProcess) -> str:
  """The first line a failed compiler run wrote to stderr, else its exit code."""
  return next(iter(p.stderr.decode(errors="replace").strip().splitlines()), f"exit code {p.returncode}")

_macros: dict[tuple[str, str], frozenset[str]] = {}
def target_macros(cc: str, march: str) -> frozenset[str]:
  """The macros `cc -march=...` predefines (__AVX512F__, __F16C__...): what the compiler will really target."""
  if (cc, march) not in _macros:
    p = subprocess.run(cc.split() + [f"-march={march}", "-dM", "-E", "-x", "c", "-"], input=b"", capture_output=True)
    if p.returncode != 0: raise ValueError(f"{cc} rejects -march={march} (LAZYNB_MARCH): {_first_error(p)}")
    _macros[(cc, march)] = frozenset(ln.split()[1] for ln in p.stdout.decode().splitlines() if ln.startswith("#define "))
  return _macros[(cc, march)]

# Not only "does _Float16 compile": the .so must load (gcc without F16C calls libgcc helpers) and round as numpy
# does, with an explicit cast rounding every step (1+2^-11 is a tie to even; (a+b)*c must not keep float's precision).
# And a multiply must not be fused into the add after it: clang 14 with AVX512-FP16 and -ffp-contract=fast makes
# a - (_Float16)(b*c) one vfnmadd, rounded once, although the cast says to round b*c (65504 - 65504*2 is -65504
# fused, -inf as numpy computes it: seen on a Sapphire Rapids Xeon). Pragmas do not help (=fast ignores them, and
# clang 14's =fast-honor-pragmas fuses nothing, matmul included), so kernels computing in _Float16 are compiled with
# -ffp-contract=off (every other kernel keeps its fused multiply-adds), and the probe runs with those flags.
_HALF_PROBE_C = """int lz_probe(void) {
  volatile float one = 1.0f, tie = 0x1p-11f, big = 65520.0f, tiny = 0x1.8p-24f;
  volatile _Float16 a = (_Float16)one, b = (_Float16)tie, c = (_Float16)3.0f, m = (_Float16)65504.0f, two = (_Float16)2.0f;
  int ok = (float)(_Float16)(one + tie) == 1.0f;
  ok &= (float)(_Float16)(one + 3.0f * tie) == 1.0f + 0x1p-9f;
  ok &= (float)(_Float16)((_Float16)(a + b) * c) == 3.0f;
  ok &= (float)(_Float16)big == __builtin_inff() && (float)(_Float16)tiny == 0x1p-23f;
  int unfused = (float)((_Float16)(m - ((_Float16)(m * two)))) == -__builtin_inff();
  unfused &= (float)((_Float16)(((_Float16)(m * two)) - m)) == __builtin_inff();
  return ok | (unfused << 1);
}
"""
_half_probe: dict[tuple[str, tuple[str, ...]], str] = {}
def half_support(cc: str, args: tuple[str, ...]) -> str:
  """"" when `cc args` computes _Float16 correctly, else why not. Cached per compiler and flags (~0.1 s, once)."""
  if (cc, args) not in _half_probe:
    with tempfile.TemporaryDirectory() as d:
      out = os.path.join(d, "probe.so")
      p = subprocess.run(cc.split() + list(args) + ["-x", "c", "-", "-o", out], input=_HALF_PROBE_C.encode(), capture_output=True)
      if p.returncode != 0: why = f"it cannot compile _Float16 ({_first_error(p)})"
      else:
        try: got = ctypes.CDLL(out).lz_probe()
        except OSError as e: got, why = None, f"its _Float16 code does not load ({e})"
        if got is not None:
          why = ("" if got == 3 else "its _Float16 does not round like IEEE half" if not got & 1 else
                 "it fuses a _Float16 multiply into the add after it (one rounding where numpy rounds twice)")
    _half_probe[(cc, args)] = why
  return _half_probe[(cc, args)]

# instruction sets a compiler emits on its own for plain C: a -march that enables one this CPU lacks means SIGILL
_ISA = re.compile(r"__(SSE|AVX|FMA|F16C|AMX|BMI|LZCNT|POPCNT)[A-Z0-9_]*__")

class ClangCompiler(Compiler):
  batches = True  # a schedule's new kernels share one compiler call (compile_batch)
  def __init__(self, cachekey: str = "compile_cpu", args: tuple[str, ...] = ()):
    self.cc = find_cc()
    self.march, self.half = knobs()
    self.loader = loader_knob()
    self.prestart = compiler_process.prestart_knob()
    self.fallbacks: list[str] = []  # why objects were compiled again as shared libraries (the loader could not place them)
    if self.march != "native":  # an unknown -march fails here, with the compiler's words
      lacks = {m for m in target_macros(self.cc, self.march) - target_macros(self.cc, "native") if _ISA.fullmatch(m)}
      if lacks: raise DeviceUnavailable(f"LAZYNB_MARCH={self.march}: {self.cc} would use {', '.join(sorted(lacks))}, which this CPU has not "
                                        "(-march=native leaves them off); kernels would die with 'Illegal instruction'")
    # -ffp-contract=fast lets a*b+c become one fused multiply-add (matmul's inner loop); -fwrapv makes signed
    # integer overflow wrap around, as numpy's does
    self.args = ("-shared", "-fPIC", "-O2", f"-march={self.march}", "-fno-math-errno", "-ffp-contract=fast", "-fwrapv", "-w") + args
    self.is_clang = "__clang__" in target_macros(self.cc, self.march)  # else gcc (cc is one of the two)
    if self.is_clang: self.args += ("-mprefer-vector-width=512",)
    # gcc 12's loop vectorizer sums a loop that walks memory backwards wrongly (a flipped view: the sum of
    # [-6,-7,-4,-5,-2,-3,0,-1] came out -35, not -28; -O1 and clang are right). Our kernels write their vector lanes out
    # (UPCAST), which the SLP vectorizer still packs; the loop vectorizer is not worth a wrong sum.
    # -pipe: cc1 hands its assembly to `as` through a pipe, so both are running before the source arrives (prestart)
    # -fno-thread-jumps: jump threading turned relu's select into a branch to two stores (gcc's relu kernels 3-5x slower)
    else: self.args += ("-fno-tree-loop-vectorize", "-fno-thread-jumps", "-pipe")
    # kernels that compute in _Float16 get no fused multiply-adds: each half operation rounds, as numpy's does
    self.half_args = tuple("-ffp-contract=off" if a == "-ffp-contract=fast" else a for a in self.args)
    # the key names every flag and knob, so a binary built with other flags is never reused (and the loader: a shared
    # library cached before objects existed stays under the old key)
    super().__init__(f"{cachekey}_{self.cc}_{'_'.join(self.args)}_half={self.half}-contract-off" + ("_loader=elf" if self.loader == "elf" else ""))
  def half_native(self) -> bool:
    """Compute float16 with the compiler's _Float16 (True) or emulate it in float (False)? See LAZYNB_HALF."""
    if self.half == "emulate": return False
    why = half_support(self.cc, self.half_args)
    if why and self.half == "native":
      raise CompileError(f"LAZYNB_HALF=native, but {self.cc} with {' '.join(self.half_args)}: {why}. Use LAZYNB_HALF=auto (emulates half).")
    return not why
  def args_for(self, src: str) -> tuple[str, ...]:
    """The flags for one kernel: a kernel computing in _Float16 is compiled without fused multiply-adds."""
    return self.half_args if "_Float16" in src else self.args
  def compile(self, src: str) -> bytes: return self._build(src, src, self.args_for(src))
  def quiet(self): return compiler_process.paused()
  def _build(self, unit: str, shown: str, args: tuple[str, ...]) -> bytes:
    """The binary of C source `unit`: with LAZYNB_LOADER=elf an object, already placed in memory by the loader (so a
    cached copy will load too); else, or when the loader cannot handle it, a shared library."""
    if self.loader == "elf":
      obj = self._run(unit, shown, args, obj=True)
      try:
        load_library(obj)
        return obj
      except elfload.ElfLoadError as e: self.fallbacks.append(str(e))  # a missing function lands here, then fails in dlopen
    return self._run(unit, shown, args)
  def _run(self, unit: str, shown: str, args: tuple[str, ...], obj: bool = False) -> bytes:
    """One compiler process: C source on stdin, the bytes of the shared library (or with `obj`, of the object) back."""
    if obj: args = ("-c",) + tuple(a for a in args if a != "-shared")
    rc, msg, out = compiler_process.run(self.cc.split() + list(args) + ["-x", "c", "-"], unit.encode(), "k.o" if obj else "k.so", self.prestart)
    if rc != 0: raise CompileError(explain_compile_error(shown, msg, self.cc))
    return out
  def compile_batch(self, named_srcs: list[tuple[str, str]]) -> list[bytes]:
    """All kernels in one compiler call and one binary (object or shared library, as `compile`); each kernel's binary
    is a reference to its function in it (see batch_unit). The library is cached once, under its hash, in the table
    `<cachekey>:batch`."""
    if len(named_srcs) == 1: return [self.compile(named_srcs[0][1])]
    groups: dict[tuple[str, ...], list[int]] = {}  # kernels needing other flags go in a library of their own
    for i, (_, src) in enumerate(named_srcs): groups.setdefault(self.args_for(src), []).append(i)
    if len(groups) > 1:
      out: list[bytes] = [b""] * len(named_srcs)
      for idx in groups.values():
        for i, lib in zip(idx, self.compile_batch([named_srcs[i] for i in idx])): out[i] = lib
      return out
    unique = list({src: (name, src) for name, src in reversed(named_srcs)}.values())[::-1]  # a source twice is one function
    if len(unique) < len(named_srcs):
      libs = dict(zip((src for _, src in unique), self.compile_batch(unique)))
      return [libs[src] for _, src in named_srcs]
    unit, syms = batch_unit(named_srcs)
    lib = self._build(unit, unit, self.args_for(unit))
    h = lib_hash(lib)
    _batch_loaded[h] = load_library(lib)  # now: one kernel calling a missing function must fail the batch, here
    if (key := self._cache_key()) is not None: diskcache_put(key + ":batch", h, lib)
    return [BATCH_REF + f"{h}\0{sym}".encode() for sym in syms]
  def resolve(self, lib: bytes) -> bytes | None:
    """A reference into a batch library is usable when that library is at hand: in this process or in the cache. A
    cached object is loaded right away: one this process cannot load (a function it cannot find) is a miss."""
    try:
      if not lib.startswith(BATCH_REF):
        if is_object(lib): load_library(lib)
        return lib
      h, _ = parse_ref(lib)
      if h not in _batch_loaded and h not in _batch_libs:
        if (key := self._cache_key()) is None or (blib := diskcache_get(key + ":batch", h)) is None or lib_hash(blib) != h: return None
        if is_object(blib): _batch_loaded[h] = load_library(blib)
        else: _batch_libs[h] = blib
      return lib
    except elfload.ElfLoadError: return None

class ClangJITCompiler(ClangCompiler):
  """tinygrad 0.10's name for the CPU device's compiler (docs/abstractions2.py): lazynb's ClangCompiler, so
  ClangJITCompiler().compile(c_source) gives the binary CPUProgram(name, binary) loads."""

# tinygrad 0.10's CPU allocator object: buffers are 64-byte aligned numpy byte arrays, as the CPU device's
MallocAllocator = CPUAllocator()

# ---------------------------------------------------------------- several kernels in one translation unit
# A schedule's new kernels are compiled together: one compiler start-up (~70-250 ms) instead of one per kernel.
# Kernel i's function is exported as `<name>_lz<source hash>` (two kernels may share a name, never a source), its
# file-scope statics (the half/bfloat16 helpers lz_*) get the suffix _lzb<i>, and macros it defines are undefined
# after it, all with #define/#undef around the untouched source, so no kernel sees another's names.
BATCH_REF = b"lazynb-batch\0"  # a kernel's "binary" when it lives in a batch library: BATCH_REF + "<lib hash>\0<symbol>"
_batch_libs: dict[str, bytes] = {}       # batch libraries read from the cache and not loaded yet, by hash
_batch_loaded: dict[str, elfload.LoadedObject | ctypes.CDLL] = {}  # batch libraries loaded in this process, by hash
_STATIC = re.compile(r"^[ \t]*static\b[^;{=(]*?\b([A-Za-z_]\w*)\s*[(\[=;]", re.M)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.M)

def lib_hash(lib: bytes) -> str: return hashlib.sha256(lib).hexdigest()[:32]
def parse_ref(lib: bytes) -> tuple[str, str]:
  h, sym = lib[len(BATCH_REF):].decode().split("\0")
  return h, sym

def batch_unit(named_srcs: list[tuple[str, str]]) -> tuple[str, list[str]]:
  """(one C source holding every kernel, the symbol each kernel's function is exported as)."""
  parts, syms = [], []
  for i, (name, src) in enumerate(named_srcs):
    sym = f"{name}_lz{hashlib.sha256(src.encode()).hexdigest()[:16]}"
    helpers = sorted((set(_STATIC.findall(src)) | set(re.findall(r"\blz_\w+", src))) - {name})
    renames = [(name, sym)] + [(n, f"{n}_lzb{i}") for n in helpers]
    parts += [f"#define {a} {b}" for a, b in renames] + [src] + [f"#undef {a}" for a, _ in renames]
    parts += [f"#undef {m}" for m in sorted(set(_DEFINE.findall(src)))]
    syms.append(sym)
  return "\n".join(parts) + "\n", syms

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

_objects: dict[str, elfload.LoadedObject] = {}  # objects placed in memory in this process, by hash

def is_object(lib: bytes) -> bool:
  """Is this binary a relocatable object (ELF type 1, REL: `cc -c`), not a shared library (type 3, DYN)?"""
  return lib[:4] == b"\x7fELF" and lib[16:18] == b"\x01\x00"

def load_library(lib: bytes) -> elfload.LoadedObject | ctypes.CDLL:
  """A binary, loaded: an object by lazynb's loader (once per distinct object), a shared library by dlopen."""
  if not is_object(lib): return load_shared(lib)
  if (h := lib_hash(lib)) not in _objects: _objects[h] = elfload.load_object(lib)
  return _objects[h]

def kernel_function(loaded: elfload.LoadedObject | ctypes.CDLL, name: str) -> Callable[..., None]:
  """The ctypes function `name` of a loaded binary (it returns nothing; arguments are passed as given)."""
  fxn = loaded.function(name) if isinstance(loaded, elfload.LoadedObject) else getattr(loaded, name)
  fxn.restype = None
  return fxn

def load_shared(lib: bytes) -> ctypes.CDLL:
  """ctypes needs a file: keep one per distinct binary, named by its hash, in the cache directory, and load it only if
  its bytes are exactly `lib`. A cache directory that cannot hold it means a private temp dir (and no disk cache).
  A library that names a function nobody defines (gcc and clang only warn about a call to an undeclared function)
  is a CompileError, not a cache problem."""
  try: return _dlopen(_place(_libs_dir(), lib))
  except OSError as e:
    if no_disk_cache() is not None: raise  # that was the private dir already
    no_disk_cache(f"cannot write compiled kernels to the cache directory ({e.strerror or e})")
    return _dlopen(_place(_libs_dir(), lib))

def _dlopen(path: pathlib.Path) -> ctypes.CDLL:
  try: return ctypes.CDLL(str(path))
  except OSError as e:
    if "undefined symbol" in str(e):
      raise CompileError(f"the compiled kernel does not load: {str(e).split(': ')[-1]} (it calls a function that does not exist)") from None
    raise

class CPUProgram(Runner):
  def __init__(self, name: str, lib: bytes):
    super().__init__(name, lib)
    if lib.startswith(BATCH_REF):  # a function in a batch library (ClangCompiler.compile_batch)
      h, sym = parse_ref(lib)
      if h not in _batch_loaded:
        if h not in _batch_libs: raise RuntimeError(f"kernel {name}: its batch library {h} was never compiled or read in this process")
        _batch_loaded[h] = load_library(_batch_libs.pop(h))  # loaded: the bytes are not needed any more
      self.fxn = kernel_function(_batch_loaded[h], sym)
    else: self.fxn = kernel_function(load_library(lib), name)
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
if hasattr(os, "register_at_fork"): os.register_at_fork(after_in_child=_pools.clear)  # a forked child has none of its parent's threads
def _pool(n: int) -> ThreadPoolExecutor:
  # ctypes releases the GIL during the call, so these threads run the kernel on separate cores
  if n not in _pools: _pools[n] = ThreadPoolExecutor(n, thread_name_prefix="lazynb-cpu")
  return _pools[n]

def simd_for(avx512: bool, avx: bool) -> tuple[int, int]:
  """(floats per vector register, vector registers) of the instruction set the code is made for (baseline x86-64: SSE)."""
  return (16, 32) if avx512 else (8, 16) if avx else (4, 16)

def simd_shape(cc: str, march: str) -> tuple[int, int]:
  """The SIMD shape the compiler will use with this -march."""
  macros = target_macros(cc, march)
  return simd_for("__AVX512F__" in macros, "__AVX__" in macros)

def shape_cpu_renderer(renderer, simd: tuple[int, int]):
  """What the kernel heuristics of a CPU renderer (C or LLVM IR) need: the threads, the SIMD shape, and the width of
  the matmul register tile along the output row (codegen/kernel.py): two vectors of floats."""
  threads = getenv("THREADS", min(os.cpu_count() or 1, 8))
  renderer.threads, renderer.has_threads = threads, threads > 1
  renderer.simd_floats, renderer.simd_regs = simd
  renderer.matmul_panel = 2 * renderer.simd_floats
  renderer.graph_rules = (("pack matmul operands into panels", pack_matmul), ("convolutions along rows", conv_rows))

class CPUDevice(Compiled):
  def __init__(self, device: str = "CPU"):
    renderer = ClangRenderer()
    compiler = ClangCompiler()
    shape_cpu_renderer(renderer, simd_shape(compiler.cc, compiler.march))
    renderer.half_native = compiler.half_native
    # gcc 12 builds overlapping lanes (the conv weight gradient's shifted windows) from scalar loads: write them as vectors
    renderer.lane_vectors = not compiler.is_clang and not PLAIN
    super().__init__(device, CPUAllocator(), renderer, compiler, CPUProgram)
