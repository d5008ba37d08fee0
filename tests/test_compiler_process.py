"""The C compiler started ahead of time (runtime/compiler_process.py): a kernel compiled by a process that was waiting
for it is byte for byte the one a fresh process makes; errors read the same; nothing is left running or on disk when
Python exits or dies; a forked child, a killed compiler, threads, BEAM and LAZYNB_CC_PRESTART=0 are handled."""
import os, pathlib, shutil, signal, subprocess, sys, threading, time, uuid
import numpy as np
import pytest
from lazynb.device import CompileError
from lazynb.runtime import compiler_process
from lazynb.runtime.ops_cpu import ClangCompiler, CPUProgram

ROOT = str(pathlib.Path(__file__).resolve().parents[1])
COMPILERS = ["gcc", "clang"]

def kernel(i: int) -> str:
  return f"void k(float* restrict a, const float* restrict b) {{ for (int j = 0; j < 64; j++) a[j] = b[j] * {i}.25f + 1.0f; }}"

def run_kernel(lib: bytes, i: int) -> np.ndarray:
  b = np.arange(-32, 32, dtype=np.float32)  # (exact with or without a fused multiply-add)
  a = np.zeros(64, np.float32)
  CPUProgram("k", lib)(a, b)
  np.testing.assert_array_equal(a, b * np.float32(i + 0.25) + np.float32(1))
  return a

@pytest.fixture
def comp(request, monkeypatch):
  """A ClangCompiler for `cc` (parametrized), no disk cache in the way, and no compiler waiting from an earlier test."""
  assert shutil.which(request.param), f"{request.param} is not installed (apt-get install -y {request.param})"
  monkeypatch.setenv("CC", request.param)
  monkeypatch.delenv("LAZYNB_CC_PRESTART", raising=False)
  compiler_process.stop_all()
  c = ClangCompiler()
  assert c.prestart
  yield c
  compiler_process.stop_all()

@pytest.mark.parametrize("comp", COMPILERS, indirect=True)
def test_a_waiting_compiler_makes_the_same_bytes(comp, monkeypatch):
  run_kernel(comp.compile(kernel(1)), 1)
  waiting = compiler_process.waiting_pids()
  assert len(waiting) == 1  # the next process, started as that compile began
  time.sleep(0.3)  # (it reaches its read of stdin)
  ahead = comp.compile(kernel(2))
  assert compiler_process.waiting_pids() not in ([], waiting)  # that one compiled kernel 2; another one waits now
  monkeypatch.setenv("LAZYNB_CC_PRESTART", "0")
  fresh = ClangCompiler()
  assert not fresh.prestart and fresh.args == comp.args
  late = fresh.compile(kernel(2))
  assert ahead == late and ahead[:4] == b"\x7fELF"
  run_kernel(ahead, 2)

@pytest.mark.parametrize("comp", COMPILERS, indirect=True)
def test_the_next_one_starts_before_this_one_compiles(comp, monkeypatch):
  """So it loads while this one compiles, and a kernel right behind finds it ready (clang back to back: 40-48 -> 26-30 ms)."""
  seen = []
  feed = compiler_process._Waiting.feed
  def watched(self, src):
    seen.append([p for p in compiler_process.waiting_pids() if p != self.proc.pid])
    return feed(self, src)
  monkeypatch.setattr(compiler_process._Waiting, "feed", watched)
  run_kernel(comp.compile(kernel(1)), 1)
  run_kernel(comp.compile(kernel(2)), 2)
  assert len(seen) == 2 and all(len(w) == 1 for w in seen), seen  # each time, another process was already waiting
  assert seen[1] != seen[0] and compiler_process.waiting_pids() == seen[1]

@pytest.mark.parametrize("comp", COMPILERS, indirect=True)
def test_compile_errors_read_as_without_it(comp):
  comp.compile(kernel(1))  # a process waits now
  with pytest.raises(CompileError) as e: comp.compile(kernel(3).replace("b[j]", "c[j]"))
  msg = str(e.value)
  assert "line 1:" in msg and "'c'" in msg.replace("‘", "'").replace("’", "'") and "remove" not in msg, msg
  run_kernel(comp.compile(kernel(4)), 4)  # and the next kernel compiles

@pytest.mark.parametrize("comp", COMPILERS, indirect=True)
def test_a_killed_waiting_compiler_is_replaced(comp):
  comp.compile(kernel(1))
  (pid,) = compiler_process.waiting_pids()
  os.killpg(pid, signal.SIGKILL)
  time.sleep(0.1)
  run_kernel(comp.compile(kernel(5)), 5)

@pytest.mark.parametrize("comp", ["gcc"], indirect=True)
def test_threads_compiling_at_once(comp):
  out: dict[int, bytes] = {}
  def work(i: int): out[i] = comp.compile(kernel(i))
  ts = [threading.Thread(target=work, args=(i,)) for i in range(6)]
  for t in ts: t.start()
  for t in ts: t.join()
  for i in range(6): run_kernel(out[i], i)
  assert len(compiler_process.waiting_pids()) == 1  # one per command

@pytest.mark.parametrize("comp", ["gcc"], indirect=True)
def test_at_most_spares_wait_and_float16_kernels_have_their_own(comp):
  comp.compile(kernel(1))
  comp.compile("_Float16 h(_Float16 x) { return x * x; }")  # other flags (no contraction): another process
  assert len(compiler_process.waiting_pids()) == 2 == compiler_process.SPARES
  comp.args = comp.args + ("-DLAZYNB_TEST",)
  comp.compile(kernel(6))
  assert len(compiler_process.waiting_pids()) == compiler_process.SPARES

@pytest.mark.parametrize("comp", ["gcc"], indirect=True)
def test_quiet_starts_nothing(comp):
  with comp.quiet(): run_kernel(comp.compile(kernel(7)), 7)
  assert compiler_process.waiting_pids() == []
  comp.compile(kernel(8))
  assert len(compiler_process.waiting_pids()) == 1

@pytest.mark.slow
def test_beam_search_runs_quiet(monkeypatch, tmp_path):
  """BEAM times its candidates one run each: no compiler may be starting up next to them."""
  from lazynb import Tensor
  from lazynb.engine import search
  seen = []
  real = search._search
  def spy(*a, **k):
    seen.append(bool(compiler_process._paused))
    return real(*a, **k)
  monkeypatch.setattr(search, "_search", spy)
  monkeypatch.setenv("LAZYNB_CACHE", str(tmp_path))
  # search even if an earlier test in this process searched the same kernel (its program and BEAM's answer are cached)
  from lazynb.engine import realize
  monkeypatch.setenv("IGNORE_BEAM_CACHE", "1")
  monkeypatch.setattr(realize, "method_cache", {})
  x = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
  from lazynb.helpers import Context
  with Context(BEAM=1): out = (Tensor(x) @ Tensor(x)).numpy()
  np.testing.assert_allclose(out, x @ x, rtol=1e-4, atol=1e-4)
  assert seen and all(seen), seen

def test_the_knob():
  env = dict(os.environ, LAZYNB_CC_PRESTART="yes", PYTHONPATH=ROOT)
  p = subprocess.run([sys.executable, "-c", "from lazynb import Tensor; Tensor([1.0]).realize()"], env=env, capture_output=True, text=True)
  assert p.returncode != 0 and "LAZYNB_CC_PRESTART='yes': use 1" in p.stderr, p.stderr[-2000:]

# ---------------------------------------------------------------- nothing left behind

def alive(pid: int) -> bool:
  try: return pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
  except OSError: return False

def marked(mark: str) -> list[int]:
  """Live (not zombie) processes whose environment holds `mark`: the child's compilers, as they inherit it."""
  out = []
  for d in pathlib.Path("/proc").iterdir():
    if not d.name.isdigit(): continue
    try:
      if mark.encode() in (d / "environ").read_bytes() and alive(int(d.name)): out.append(int(d.name))
    except OSError: pass
  return out

CHILD = r"""
import os, signal, sys
import numpy as np
from lazynb import Tensor
from lazynb.runtime import compiler_process
print((Tensor(np.arange(4, dtype=np.float32)) * 3 + 1).numpy().tolist(), compiler_process.waiting_pids(), flush=True)
if sys.argv[1] == "kill": os.kill(os.getpid(), signal.SIGKILL)
"""

@pytest.mark.parametrize("cc", COMPILERS)
@pytest.mark.parametrize("how", ["exit", "kill"])
@pytest.mark.parametrize("loader", ["elf", "dlopen"])  # (gcc -shared keeps a temporary object in TMPDIR until it links)
def test_nothing_left_when_python_exits_or_dies(cc, how, loader, tmp_path):
  mark = f"LAZYNB_TEST_MARK={uuid.uuid4().hex}"
  tmp = tmp_path / "tmp"
  tmp.mkdir()
  env = dict(os.environ, PYTHONPATH=ROOT, CC=cc, TMPDIR=str(tmp), LAZYNB_CACHE=str(tmp_path / "cache"), LAZYNB_TEST_MARK=mark.split("=")[1], LAZYNB_LOADER=loader)
  env.pop("LAZYNB_CC_PRESTART", None)
  p = subprocess.run([sys.executable, "-c", CHILD, how], env=env, capture_output=True, text=True, timeout=300)
  assert p.returncode == (-signal.SIGKILL if how == "kill" else 0), p.stderr[-2000:]
  assert p.stdout.startswith("[1.0, 4.0, 7.0, 10.0] [") and "[]" not in p.stdout, p.stdout  # a compiler was waiting
  deadline = time.time() + 20
  while marked(mark.split("=")[1]) and time.time() < deadline: time.sleep(0.1)
  assert marked(mark.split("=")[1]) == []
  assert list(tmp.iterdir()) == []  # the compilers wrote into memory, not into TMPDIR

@pytest.mark.parametrize("comp", ["gcc"], indirect=True)
def test_a_forked_child_does_not_feed_its_parents_compiler(comp):
  comp.compile(kernel(1))
  waiting = compiler_process.waiting_pids()
  r, w = os.pipe()
  pid = os.fork()
  if pid == 0:  # the child: compiles with a process of its own, and leaves its parent's alone
    code = 1
    try:
      assert compiler_process.waiting_pids() == []
      run_kernel(comp.compile(kernel(9)), 9)
      compiler_process.stop_all()
      code = 0
    finally:
      os.write(w, bytes([code]))
      os._exit(code)
  os.close(w)
  assert os.read(r, 1) == b"\0"
  os.waitpid(pid, 0)
  assert compiler_process.waiting_pids() == waiting  # still there, still waiting
  assert alive(waiting[0]), "the child fed its parent's waiting compiler"
  run_kernel(comp.compile(kernel(10)), 10)
