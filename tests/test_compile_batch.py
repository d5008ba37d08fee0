"""A schedule's new CPU kernels are compiled together: one compiler process for all of them, one shared library, each
kernel's function taken from it (lazynb.engine.realize.compile_ahead, ClangCompiler.compile_batch). The disk cache
keeps each kernel: a kernel compiled in a batch is a hit in a later process, alone or in another batch. A kernel that
does not compile is still reported with its own source line. Both gcc and clang."""
import dataclasses, json, os, pathlib, shutil, sqlite3, subprocess, sys
import numpy as np
import pytest
from lazynb import Tensor
from lazynb.device import CompileError
from lazynb.engine import realize
from lazynb.renderer.cstyle import EMU_BITS_C, HALF_EMULATION_C
from lazynb.runtime.ops_cpu import ClangCompiler, CPUProgram, BATCH_REF, batch_unit
from lazynb.trace import Recorder

ROOT = pathlib.Path(__file__).resolve().parents[1]
COMPILERS = ["gcc", "clang"]

# In a fresh process: open the device (its compiler probes run once per process), then realize the kernels that
# argv[1] names, all in one schedule, counting the processes started and the compilers given a source meanwhile.
CHILD = r"""
import json, subprocess, sys
import numpy as np
from lazynb import Tensor, dtypes
from lazynb.trace import Recorder
started, fed, counting = [], [], False  # processes started / given a source to compile while counting
class Counting(subprocess.Popen):
  def __init__(self, args, *a, **k):
    self.line = args if isinstance(args, str) else " ".join(map(str, args))
    if counting: started.append(self.line)
    super().__init__(args, *a, **k)
  def communicate(self, input=None, *a, **k):
    if counting and input: fed.append(self.line)
    return super().communicate(input, *a, **k)
subprocess.Popen = Counting  # from the start: a compiler started ahead of time during the warm-up is counted when fed
x = np.arange(35, dtype=np.float32).reshape(7, 5) / 10
a = Tensor(x)
(a + 1).realize()  # the device is open, its probes are done
(a.cast(dtypes.float16) + 1).realize()  # ... the float16 one too
counting = True
make = {"relu": lambda: (a * 2 + 1).relu(), "sum": lambda: a.sum(axis=1), "max_exp": lambda: a.exp().max(axis=0),
        "matmul": lambda: a @ a.T, "softmax": lambda: a.softmax(), "half": lambda: a.cast(dtypes.float16) * 3,
        "half2": lambda: (a.cast(dtypes.float16) - 5).abs(), "bf16": lambda: a.cast(dtypes.bfloat16) * 7}
names = sys.argv[1].split(",")
with Recorder(rewrites=False) as rec:
  outs = [make[n]() for n in names]
  Tensor.realize(*outs)
counting = False
compiles = [{k: e.data[k] for k in ("name", "cached", "batch", "seconds")} for e in rec.of("compile")]
res = {n: o.cast(dtypes.float32).numpy().tolist() for n, o in zip(names, outs)}
print(json.dumps({"started": started, "fed": fed, "compiles": compiles, "out": res}))
"""

def expected(x: np.ndarray) -> dict:
  e = np.exp(x)
  return {"relu": np.maximum(x * 2 + 1, 0), "sum": x.sum(1), "max_exp": e.max(0), "matmul": x @ x.T, "softmax": e / e.sum(1, keepdims=True),
          "half": x.astype(np.float16) * np.float16(3), "half2": np.abs(x.astype(np.float16) - np.float16(5)),
          "bf16": None}

def to_bf16(v: np.ndarray) -> np.ndarray:
  """float32 rounded to bfloat16 (nearest even; no NaNs here), as float32."""
  u = np.asarray(v, np.float32).view(np.uint32)
  return ((u + 0x7fff + (u >> 16 & 1)) & 0xffff0000).astype(np.uint32).view(np.float32)

def child(cc: str, cache: pathlib.Path, names: list[str], **env) -> dict:
  env = dict(os.environ, PYTHONPATH=str(ROOT), LAZYNB_CACHE=str(cache), CC=cc, **env)
  p = subprocess.run([sys.executable, "-c", CHILD, ",".join(names)], env=env, capture_output=True, text=True, timeout=600)
  assert p.returncode == 0, p.stderr[-3000:]
  res = json.loads(p.stdout.strip().splitlines()[-1])
  x = np.arange(35, dtype=np.float32).reshape(7, 5) / 10
  for n in names:
    want = expected(x)[n]
    if n == "bf16": want = to_bf16(to_bf16(x) * 7)
    np.testing.assert_allclose(np.array(res["out"][n], dtype=np.float32), np.asarray(want, dtype=np.float32), rtol=1e-3 if "half" in n else 1e-5, err_msg=n)
  return res

def compiler_runs(res: dict, cc: str) -> list[str]:
  """The compiler processes that compiled something (a process started ahead of time waits for a source)."""
  return [s for s in res["fed"] if s.split()[0] == cc]

ALL = ["relu", "sum", "max_exp", "matmul", "softmax", "half", "half2", "bf16"]

@pytest.mark.parametrize("cc", COMPILERS)
def test_one_compiler_process_for_a_schedule_and_cache_hits_after(cc, tmp_path):
  assert shutil.which(cc), f"{cc} is not installed (apt-get install -y {cc})"
  cache = tmp_path / "cache"
  first = child(cc, cache, ALL)
  assert len(first["compiles"]) >= len(ALL)
  assert all(not c["cached"] for c in first["compiles"])
  batch = first["compiles"][0]["batch"]  # kernels with equal sources are compiled once
  assert batch >= len(ALL) and all(c["batch"] == batch for c in first["compiles"]), first["compiles"]
  # one compiler process per set of flags: kernels computing in _Float16 are built without fused multiply-adds
  runs = compiler_runs(first, cc)
  contract = [next(a for a in r.split() if a.startswith("-ffp-contract=")) for r in runs]
  assert len(runs) == len(set(contract)) <= 2 and len(first["fed"]) == len(runs), first["fed"]
  assert all(s.split()[0] == cc for s in first["started"]), first["started"]  # (the next compilers, waiting)
  # a fresh process: every kernel is a cache hit, nothing is compiled
  again = child(cc, cache, ALL)
  assert again["started"] == again["fed"] == [] and all(c["cached"] and c["batch"] == 0 for c in again["compiles"]), again
  # one of them alone in a schedule: a hit too
  alone = child(cc, cache, ["softmax"])
  assert alone["started"] == alone["fed"] == [] and all(c["cached"] for c in alone["compiles"])

@pytest.mark.parametrize("cc", COMPILERS)
def test_forced_half_emulation_and_baseline_march(cc, tmp_path):
  res = child(cc, tmp_path / "cache", ["half", "half2", "bf16", "softmax"], LAZYNB_HALF="emulate", LAZYNB_MARCH="x86-64")
  assert len(compiler_runs(res, cc)) == 1

def kernel_rows(cache: pathlib.Path) -> dict[str, list[bytes]]:
  """The disk cache's compiled kernels: {"ref": per-kernel references into a batch library, "elf": per-kernel
  libraries, "batch": batch libraries}."""
  with sqlite3.connect(cache / "cache.db") as db: rows = list(db.execute("select tbl, val from entries where tbl like 'compile_cpu%'"))
  out: dict[str, list[bytes]] = {"ref": [], "elf": [], "batch": []}
  for t, v in rows:
    if t.endswith(":batch"): out["batch"].append(v)
    else: out["ref" if v.startswith(BATCH_REF) else "elf"].append(v)
  assert all(v.startswith(b"\x7fELF") for v in out["elf"] + out["batch"])
  return out

def test_a_new_kernel_next_to_cached_ones_compiles_alone(tmp_path):
  cache = tmp_path / "cache"
  child("gcc", cache, ["relu", "sum"])  # (after two warm-up kernels, compiled one at a time)
  first = kernel_rows(cache)
  assert len(first["ref"]) == 2 and len(first["batch"]) == 1 and len(first["elf"]) == 2
  res = child("gcc", cache, ["relu", "sum", "matmul"])
  by_cached = {c["name"]: c["cached"] for c in res["compiles"]}
  assert sorted(by_cached.values()) == [False, True, True], res["compiles"]
  assert len(compiler_runs(res, "gcc")) == 1
  second = kernel_rows(cache)
  assert len(second["ref"]) == 2 and len(second["batch"]) == 1 and len(second["elf"]) == 3

def test_damaged_batch_library_row_is_a_miss(tmp_path):
  """A kernel whose batch library is damaged in the cache is compiled again, never loaded from a wrong binary."""
  cache = tmp_path / "cache"
  child("gcc", cache, ["relu", "sum"])
  with sqlite3.connect(cache / "cache.db") as db: db.execute("update entries set val = zeroblob(length(val)) where tbl like '%:batch'")
  res = child("gcc", cache, ["relu", "sum"])
  assert [c["cached"] for c in res["compiles"]] == [False, False] and len(compiler_runs(res, "gcc")) == 1

# ---------------------------------------------------------------- one translation unit, names kept apart

@pytest.mark.parametrize("cc", COMPILERS)
def test_same_names_and_helpers_in_one_unit(cc, monkeypatch):
  """Two kernels with the same name and the same static helpers (float16 emulation) in one library: each works."""
  monkeypatch.setenv("CC", cc)
  monkeypatch.setenv("LAZYNB_HALF", "emulate")
  comp = ClangCompiler(cachekey="test_batch")
  body = "void k(unsigned short* restrict out, unsigned short* restrict a) {{ for (int i = 0; i < 4; i++) out[i] = lz_f2h(lz_h2f(a[i]) {op} 2.0f); }}"
  srcs = [("k", EMU_BITS_C + HALF_EMULATION_C + body.format(op=op)) for op in "+*"]
  unit, syms = batch_unit(srcs)
  assert len(set(syms)) == 2 and unit.count("static inline float lz_h2f") == 2
  libs = comp.compile_batch(srcs)
  assert all(lib.startswith(BATCH_REF) for lib in libs)
  a = np.array([1, 2.5, -3, 1000], dtype=np.float16)
  for lib, want in zip(libs, (a + np.float16(2), a * np.float16(2))):
    out = np.zeros(4, dtype=np.float16)
    CPUProgram("k", lib)(out, a)
    np.testing.assert_array_equal(out, want)

@pytest.mark.parametrize("cc", COMPILERS)
def test_broken_kernel_in_a_schedule_is_reported_with_its_line(cc, monkeypatch):
  """One kernel of a schedule does not compile: the batch fails, the kernels are compiled one by one, and the error
  shows the broken kernel's own source line and the compiler's message."""
  monkeypatch.setenv("CC", cc)
  comp = ClangCompiler()
  comp.cachekey = None  # no disk cache: every kernel here is new, so the batch really runs
  broken = "  *(data0+0) = 1.5f +* lz_not_c;"
  real = realize.get_program
  def get_program(ast, renderer, opts=None):
    p = real(ast, renderer, opts)
    if p.name.startswith("r_"):  # the reduce: make it call a function that does not exist
      p = dataclasses.replace(p, src=p.src[:p.src.rindex("}")] + broken + "\n}")
    return p
  monkeypatch.setattr(realize, "get_program", get_program)
  monkeypatch.setattr(realize.Device["CPU"], "compiler", comp)
  realize.method_cache.clear()
  x = np.arange(12, dtype=np.float32).reshape(3, 4) + 0.25
  a = Tensor(x)
  with Recorder(rewrites=False) as rec, pytest.raises(CompileError) as e:
    Tensor.realize((a * 3 - 1).exp2(), a.sum(axis=1) + 0.5)
  msg = str(e.value)
  assert "lz_not_c" in msg and broken.strip() in msg and f"{cc} failed to compile the kernel" in msg
  assert "line " in msg and msg.index("line ") < msg.index("--- compiler output")
  shown = msg.split("--- source ---")[1]  # the broken kernel's source alone, not the batch's
  assert "void r_" in shown and "void E_" not in shown and "#define" not in shown
  compiled = {e.data["name"][0]: e.data["batch"] for e in rec.of("compile")}
  assert compiled.get("E") == 1, rec.of("compile")  # the good kernel, compiled on its own after the batch failed
  realize.method_cache.clear()

@pytest.mark.parametrize("cc", COMPILERS)
def test_kernel_calling_a_missing_function_fails_clearly(cc, monkeypatch):
  """gcc and clang only warn about a call to an undeclared function: the library then fails to load. In a batch that
  must not take the other kernels down: they run, and the broken one is a CompileError naming the function."""
  monkeypatch.setenv("CC", cc)
  comp = ClangCompiler()
  comp.cachekey = None
  good = "void k(float* restrict out) { out[0] = 2.5f; }"
  bad = "void k(float* restrict out) { out[0] = lz_missing_fn(1.5f); }"
  with pytest.raises(CompileError, match="lz_missing_fn"): comp.compile_batch([("k", good), ("k", bad)])
  with pytest.raises(CompileError, match="lz_missing_fn"): CPUProgram("k", comp.compile(bad))
  out = np.zeros(1, dtype=np.float32)
  CPUProgram("k", comp.compile(good))(out)
  assert out[0] == 2.5

def test_lower_schedule_compiles_its_new_kernels_together():
  """tinygrad's `for si, ei in lower_schedule(items): ei.run()` gets the same batching as realize."""
  c = float(np.random.default_rng().integers(1, 1 << 20)) + 0.5  # a constant no cache has seen: every kernel is new
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  a = Tensor(x).realize()
  outs = [(a / c).exp2().sum(axis=1), (a + c).max(axis=0), (a - c).relu()]
  items = outs[0].schedule(*outs[1:])
  with Recorder(rewrites=False) as rec:
    for _, ei in realize.lower_schedule(items): ei.run()
  batches = [e.data["batch"] for e in rec.of("compile")]
  assert len(batches) == 3 and batches == [3, 3, 3], rec.of("compile")
  np.testing.assert_allclose(outs[0].numpy(), np.exp2(x / np.float32(c)).sum(1), rtol=1e-5)
  np.testing.assert_allclose(outs[1].numpy(), (x + np.float32(c)).max(0), rtol=1e-6)
  np.testing.assert_allclose(outs[2].numpy(), np.maximum(x - np.float32(c), 0), rtol=1e-6)
