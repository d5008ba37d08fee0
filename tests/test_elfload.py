"""lazynb's own object loader (lazynb/runtime/elfload.py): objects made by gcc and clang with `-c` are placed in memory,
relocated and run, and their results compared with numpy; what it does not handle is a clear ElfLoadError, and then
the CPU compiler falls back to a shared library. LAZYNB_LOADER picks the path."""
import ctypes, os, subprocess, tempfile, threading
import numpy as np
import pytest
from lazynb import Tensor, Device
from lazynb.device import CompileError
from lazynb.engine import realize
from lazynb.runtime import elfload, ops_cpu
from lazynb.runtime.elfload import ElfLoadError, UndefinedSymbol, load_object
from lazynb.runtime.ops_cpu import ClangCompiler, CPUDevice, CPUProgram, is_object

COMPILERS = ["gcc", "clang"]
OPTS = ["-O0", "-O2"]
pytestmark = pytest.mark.skipif(not elfload.supported(), reason="the object loader runs on Linux x86-64 only; elsewhere the dlopen path is used")

def build(cc: str, src: str, *flags: str) -> bytes:
  """`cc flags` on C source `src`: the output file's bytes."""
  with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "out")
    p = subprocess.run([cc, "-w", *flags, "-x", "c", "-", "-o", out], input=src.encode(), capture_output=True)
    assert p.returncode == 0, p.stderr.decode()
    with open(out, "rb") as f: return f.read()

def compile_obj(cc: str, src: str, *flags: str) -> bytes: return build(cc, src, "-c", "-fPIC", "-march=native", "-ffp-contract=off", *flags)

# constants in .rodata (a table, float literals), a static table in .data, a static counter in .bss, libm calls
# (PLT32 through the jump table), memset/memcpy, a pointer to a libm function in .data (R_X86_64_64), an outside data
# symbol read through the GOT (environ), a static helper called from another function
MIXED_C = r"""
#include <math.h>
#include <string.h>
extern char **environ;
static float scale[5] = {1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
static const double shift[4] = {0.125, -0.25, 0.375, 1e-3};
static int counter;
double (*fp)(double) = cos;
static float helper(float x) { return sinf(x) + expf(x); }
void k(float* restrict out, const float* restrict a, int n) {
  for (int i = 0; i < n; i++) out[i] = helper(a[i]) * scale[i % 5] + (float)shift[i & 3] + 0.7f;
  float tmp[64];
  memset(tmp, 0, sizeof tmp);
  memcpy(tmp, a, (n < 64 ? n : 64) * sizeof(float));
  out[0] += tmp[1];
}
int bump(int by) { counter += by; return counter; }
double call_fp(double x) { return fp(x); }
void* where_environ(void) { return (void*)&environ; }
"""

def mixed_expected(a: np.ndarray) -> np.ndarray:
  i = np.arange(len(a))
  want = (np.sin(a) + np.exp(a)) * np.array([1.5, 2.5, 3.5, 4.5, 5.5], np.float32)[i % 5] + np.array([0.125, -0.25, 0.375, 1e-3], np.float32)[i & 3] + np.float32(0.7)
  want[0] += a[1]
  return want

def typed(obj: elfload.LoadedObject, name: str, restype, *argtypes):
  f = obj.function(name)
  f.restype, f.argtypes = restype, list(argtypes)
  return f

@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("cc", COMPILERS)
def test_object_with_constants_statics_and_libm_calls(cc, opt):
  obj = load_object(compile_obj(cc, MIXED_C, opt))
  assert {"k", "bump", "call_fp", "where_environ", "fp"} <= set(obj.symbols) and "helper" not in obj.symbols
  a = np.linspace(-2, 2, 37).astype(np.float32)
  out = np.zeros_like(a)
  obj.function("k")(ctypes.c_void_p(out.ctypes.data), ctypes.c_void_p(a.ctypes.data), ctypes.c_int(len(a)))
  np.testing.assert_allclose(out, mixed_expected(a), rtol=2e-6, atol=1e-6)
  bump = typed(obj, "bump", ctypes.c_int, ctypes.c_int)
  assert [bump(1), bump(5), bump(-2)] == [1, 6, 4]  # the .bss counter keeps its value between calls
  assert typed(obj, "call_fp", ctypes.c_double, ctypes.c_double)(0.5) == np.cos(0.5)
  environ = ctypes.addressof(ctypes.c_void_p.in_dll(ctypes.CDLL(None), "environ"))
  assert typed(obj, "where_environ", ctypes.c_void_p)() == environ  # the GOT entry holds the process's own symbol

@pytest.mark.parametrize("cc", COMPILERS)
def test_two_loads_are_independent(cc):
  """Each load is its own copy: statics are not shared."""
  raw = compile_obj(cc, MIXED_C, "-O2")
  one, two = load_object(raw), load_object(raw)
  assert one.base != two.base
  b1, b2 = typed(one, "bump", ctypes.c_int, ctypes.c_int), typed(two, "bump", ctypes.c_int, ctypes.c_int)
  assert (b1(3), b1(3), b2(3)) == (3, 6, 3)

def mappings(lo: int, hi: int) -> list[tuple[int, int, str]]:
  out = []
  with open("/proc/self/maps") as f:
    for line in f:
      rng, perms = line.split()[:2]
      a, b = (int(x, 16) for x in rng.split("-"))
      if a < hi and b > lo: out.append((max(a, lo), min(b, hi), perms[:3]))
  return out

@pytest.mark.parametrize("cc", COMPILERS)
def test_never_writable_and_executable(cc):
  """Code pages are r-x, constants r--, data rw-; no page of the image is both writable and executable."""
  obj = load_object(compile_obj(cc, MIXED_C, "-O2"))
  maps = mappings(obj.base, obj.base + obj.size)
  perms = [p for _, _, p in maps]
  assert perms and not any("w" in p and "x" in p for p in perms), maps
  assert "r-x" in perms and "r--" in perms and "rw-" in perms, maps
  code = [m for m in maps if m[2] == "r-x"][0]
  assert code[0] <= obj.symbols["k"] < code[1]

def test_several_functions_called_from_threads():
  src = "\n".join(f"void f{i}(float* restrict o, const float* restrict a) {{ for (int j = 0; j < 1000; j++) o[j] = a[j] * {i}.5f + {i}.0f; }}" for i in range(6))
  obj = load_object(compile_obj("clang", src, "-O2"))
  a = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
  outs = [np.zeros(1000, np.float32) for _ in range(6)]
  def run(i):
    for _ in range(50): obj.function(f"f{i}")(ctypes.c_void_p(outs[i].ctypes.data), ctypes.c_void_p(a.ctypes.data))
  ths = [threading.Thread(target=run, args=(i,)) for i in range(6)]
  for t in ths: t.start()
  for t in ths: t.join()
  for i in range(6): np.testing.assert_array_equal(outs[i], a * np.float32(i + 0.5) + np.float32(i))

# ---------------------------------------------------------------- what it refuses, and how

@pytest.mark.parametrize("cc", COMPILERS)
def test_undefined_function_is_named(cc):
  raw = compile_obj(cc, "float lz_nowhere(float); float k(float x) { return lz_nowhere(x) + 1; }")
  with pytest.raises(UndefinedSymbol, match="lz_nowhere"): load_object(raw)

@pytest.mark.parametrize("src,match", [
  ("_Thread_local int t; int k(void) { return ++t; }", "thread-local"),
  ("int getpid(void); static int v; __attribute__((constructor)) static void init(void) { v = getpid(); } int k(void) { return v; }", "constructor"),
])
@pytest.mark.parametrize("cc", COMPILERS)
def test_unsupported_features_raise(cc, src, match):
  with pytest.raises(ElfLoadError, match=match): load_object(compile_obj(cc, src, "-O2"))

def test_absolute_32bit_relocation_is_refused():
  """Without -fPIC, gcc addresses a global array with R_X86_64_32S (type 11): not handled, said so."""
  raw = build("gcc", "float tab[64]; float k(long i) { return tab[i]; }", "-c", "-fno-pic", "-O2")
  with pytest.raises(ElfLoadError, match=r"relocation types \[11\] are not handled"): load_object(raw)

def test_displacement_out_of_reach_is_refused():
  """A 32-bit displacement to a symbol more than 2 GB away cannot be written: an error, never a wrong address."""
  raw = compile_obj("gcc", "extern float far_value; float k(void) { return far_value; }", "-fno-pic", "-O2")
  with pytest.raises(ElfLoadError, match="out of 32-bit reach"): load_object(raw, lookup=lambda name: 0x1000)

def test_not_an_object():
  with pytest.raises(ElfLoadError, match="not an ELF file"): load_object(b"hello world" * 10)
  so = build("gcc", "int k(void) { return 1; }", "-shared", "-fPIC")
  with pytest.raises(ElfLoadError, match="not a relocatable object"): load_object(so)
  raw = compile_obj("gcc", "int k(void) { return 1; }")
  with pytest.raises(ElfLoadError): load_object(raw[:200])  # truncated: its section headers are gone

# ---------------------------------------------------------------- the CPU compiler: knob and fallback

def test_loader_knob(monkeypatch):
  monkeypatch.setenv("LAZYNB_LOADER", "mmap")
  with pytest.raises(ValueError, match="LAZYNB_LOADER='mmap'.*auto, elf, dlopen"): ClangCompiler()
  keys = {}
  for loader in ("elf", "dlopen", "auto"):
    monkeypatch.setenv("LAZYNB_LOADER", loader)
    comp = ClangCompiler()
    keys[loader] = comp.cachekey
    lib = comp.compile("void k(float* restrict o) { o[0] = 4.25f; }")
    assert is_object(lib) == (comp.loader == "elf") and lib.startswith(b"\x7fELF")
    out = np.zeros(1, np.float32)
    CPUProgram("k", lib)(out)
    assert out[0] == 4.25
  assert keys["elf"] == keys["auto"] != keys["dlopen"]  # an old shared library is never taken for an object

@pytest.mark.parametrize("cc", COMPILERS)
def test_compiler_falls_back_to_a_shared_library(cc, monkeypatch):
  """A kernel the loader cannot place (thread-local storage here) is compiled again as a shared library, which runs."""
  monkeypatch.setenv("CC", cc)
  monkeypatch.setenv("LAZYNB_LOADER", "elf")
  comp = ClangCompiler()
  comp.cachekey = None
  src = "static _Thread_local float acc; void k(float* restrict o) { acc += 1.5f; o[0] = acc * 2.0f; }"
  lib = comp.compile(src)
  assert not is_object(lib) and any("thread-local" in f for f in comp.fallbacks)
  out = np.zeros(1, np.float32)
  CPUProgram("k", lib)(out)
  assert out[0] == 3.0
  # in a batch too: the batch's one binary is a shared library, every kernel in it runs
  libs = comp.compile_batch([("k", src), ("g", "void g(float* restrict o) { o[0] = -1.0f; }")])
  for name, lib, want in zip(("k", "g"), libs, (3.0, -1.0)):
    CPUProgram(name, lib)(out)
    assert out[0] == want

def test_missing_function_still_a_compile_error(monkeypatch):
  monkeypatch.setenv("LAZYNB_LOADER", "elf")
  comp = ClangCompiler()
  comp.cachekey = None
  with pytest.raises(CompileError, match="lz_missing_fn"): CPUProgram("k", comp.compile("void k(float* o) { o[0] = lz_missing_fn(1.5f); }"))

@pytest.mark.parametrize("loader", ["elf", "dlopen"])
def test_tensor_ops_match_numpy_with_each_loader(loader, monkeypatch, tmp_path):
  """A device opened under each loader: realized kernels (libm calls, reduces, matmul, threads) match numpy."""
  monkeypatch.setenv("LAZYNB_LOADER", loader)
  monkeypatch.setenv("LAZYNB_CACHE", str(tmp_path))
  monkeypatch.setitem(Device._opened, "CPU", CPUDevice("CPU"))
  monkeypatch.setattr(realize, "method_cache", {})
  x = np.random.default_rng(1).standard_normal((67, 45)).astype(np.float32)
  a = Tensor(x)
  outs = [a.exp().sum(axis=1), (a.sin() * 3).max(axis=0), a @ a.T, a.softmax(), (a.cast("float16") * 3).cast("float32")]
  Tensor.realize_all(*outs)
  e = np.exp(x)
  np.testing.assert_allclose(outs[0].numpy(), e.sum(1), rtol=1e-5)
  np.testing.assert_allclose(outs[1].numpy(), (np.sin(x) * 3).max(0), rtol=1e-5)
  np.testing.assert_allclose(outs[2].numpy(), x @ x.T, rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(outs[3].numpy(), np.exp(x - x.max(1, keepdims=True)) / np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True), rtol=1e-5)
  np.testing.assert_array_equal(outs[4].numpy(), (x.astype(np.float16) * np.float16(3)).astype(np.float32))
  libs = [r.lib for r in realize.method_cache.values()]
  batch_bins = [ops_cpu._batch_loaded[ops_cpu.parse_ref(lib)[0]] for lib in libs if lib.startswith(ops_cpu.BATCH_REF)]
  assert batch_bins and all(isinstance(b, elfload.LoadedObject) == (loader == "elf") for b in batch_bins)
  assert not Device["CPU"].compiler.fallbacks

def test_cached_object_that_cannot_be_placed_is_a_miss(monkeypatch):
  """resolve() places a cached object before it is used: one naming a function this process lacks is a miss (compiled
  again), never a kernel that fails later; a good one, and a shared library, are usable."""
  monkeypatch.setenv("LAZYNB_LOADER", "elf")
  comp = ClangCompiler()
  bad = compile_obj("gcc", "float lz_gone(float); void k(float* o) { o[0] = lz_gone(o[0]); }")
  assert is_object(bad) and comp.resolve(bad) is None
  good = compile_obj("gcc", "void k(float* o) { o[0] = 7.0f; }")
  so = build("gcc", "void k(float* o) { o[0] = 8.0f; }", "-shared", "-fPIC")
  assert comp.resolve(good) == good and comp.resolve(so) == so
  out = np.zeros(1, np.float32)
  for lib, want in ((good, 7.0), (so, 8.0)):
    CPUProgram("k", lib)(out)
    assert out[0] == want
