"""Core performance numbers for lazynb, each next to numpy measured in the same run (and tinygrad, if importable).

    PYTHONPATH=. python benchmarks/bench_core.py [--quick] [--json out.json]

These are benchmarks, not tests: nothing here fails on a slow number. A wrong *result* does fail (exit code 1),
so a broken kernel cannot look fast. What is measured (docs/benchmarks.md has the latest figures):

  1. matmul      1024x1024 float32 GFLOPS: lazynb's default heuristic and NOOPT=1, against numpy's `@`.
                 Kernel time only (the "exec" event's seconds, compile excluded by a warm-up), median of reps.
                 Also, in a child process, both with one thread (lazynb THREADS=1, OPENBLAS_NUM_THREADS=1).
  2. elementwise a 10-op fused chain on 16M float32 in GB/s (bytes read + written), against numpy doing ONE op.
  3. latency     wall time of the first `(Tensor.rand(256)+1).numpy()` in a fresh process with an empty kernel
                 cache (LAZYNB_CACHE = a new temp dir), vs the same call warm.
  4. codegen     per typical kernel: create_schedule, get_program (with its stage timings) and the C compile.

numpy is measured in this process as the environment has it (interleaved with lazynb: these give the ratios;
after each numpy matmul a short pause lets OpenBLAS's spinning threads go idle before lazynb runs),
and in child processes with the environment as-is and with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed (they
can force a slower OpenBLAS kernel). lazynb itself always runs with the environment unchanged (the THREADS=1
child aside). Memory bandwidth and the cores are shared with whatever else runs, so lazynb and numpy reps are
interleaved round by round, medians are reported (best-of in the JSON), and the report warns when the load
average says the machine was busy.
"""
from __future__ import annotations
import argparse, contextlib, ctypes, gc, importlib.util, json, os, platform, statistics, subprocess, sys, tempfile, time, traceback

import numpy as np
from benchenv import environment, environment_lines, loadavg  # noqa: F401 (loadavg: bench_backends takes it from here)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path: sys.path.insert(0, ROOT)

BLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
MM_N = 1024
EW_N = 16 << 20
perf = time.perf_counter

def median(xs): return statistics.median(xs) if xs else float("nan")

def guarded(fn, *args):
  """Run one section; if lazynb raises, keep the traceback as the section's result and go on with the others."""
  try: return fn(*args)
  except Exception as e: return {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300], "traceback": traceback.format_exc()}


# ---------------------------------------------------------------- numpy / BLAS / machine facts

def blas_info() -> dict:
  """Which BLAS numpy was built with, and what the loaded library says about itself at runtime."""
  info: dict = {}
  try:
    cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    info.update(name=cfg.get("name"), version=cfg.get("version"), build_config=" ".join(str(cfg.get("openblas configuration", "")).split()))
  except Exception as e:  # older numpy: show_config has no mode=
    info["show_config_error"] = repr(e)
  try:
    import threadpoolctl  # optional, not a dependency
    info["threadpoolctl"] = [{k: d.get(k) for k in ("internal_api", "version", "num_threads", "architecture", "filepath")}
                             for d in threadpoolctl.threadpool_info() if d.get("user_api") == "blas"]
  except ImportError:
    info["threadpoolctl"] = "not installed"
  # the OpenBLAS numpy loaded (it is in our address space once numpy is imported): ask it which core it picked
  try:
    with open("/proc/self/maps") as f: paths = sorted({ln.split()[-1] for ln in f if "openblas" in ln.lower() and ".so" in ln})
  except OSError: paths = []
  for p in paths:
    try: lib = ctypes.CDLL(p)
    except OSError: continue
    info["runtime_library"] = p
    for prefix in ("scipy_openblas_", "openblas_"):
      for suffix in ("64_", ""):
        for what in ("get_corename", "get_config", "get_num_threads"):
          fn = getattr(lib, f"{prefix}{what}{suffix}", None)
          if fn is None or f"runtime_{what}" in info: continue
          if what == "get_num_threads": fn.restype = ctypes.c_int
          else: fn.restype = ctypes.c_char_p
          v = fn()
          info[f"runtime_{what}"] = v.decode() if isinstance(v, bytes) else v
    break
  return info

def machine_info() -> dict:
  cpu = "?"
  try:
    with open("/proc/cpuinfo") as f: cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
  except OSError: pass
  info = {"nproc": os.cpu_count(), "cpu_model": cpu, "platform": platform.platform(), "python": platform.python_version(),
          "numpy": np.__version__, "loadavg_start": loadavg(), "env": {k: os.environ.get(k) for k in BLAS_VARS + ("THREADS", "CC", "LAZYNB_CACHE", "OMP_NUM_THREADS")}}
  try:
    with open("/sys/kernel/mm/transparent_hugepage/enabled") as f: info["transparent_hugepage"] = f.read().strip()
  except OSError: pass
  try:
    info["git_commit"] = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    info["git_dirty"] = bool(subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "--", "lazynb"], capture_output=True, text=True).stdout.strip())
  except OSError: pass
  return info

def lazynb_info() -> dict:
  from lazynb import Device
  dev = Device["CPU"]
  cc = dev.compiler.cc
  ver = subprocess.run(cc.split() + ["--version"], capture_output=True, text=True).stdout.splitlines()
  return {"cc": cc, "cc_version": ver[0] if ver else "?", "cc_args": " ".join(dev.compiler.args), "threads": dev.renderer.threads,
          "has_threads": dev.renderer.has_threads}

# ---------------------------------------------------------------- numpy reference measurements

BLAS_SETTLE_S = 0.3
def np_matmul_once(x, y) -> float:
  """One numpy matmul, then a pause: OpenBLAS's worker threads keep spinning on the cores for a while after a
  call (measured here: the next 1024² lazynb matmul ran at half speed for about 50 ms), which would charge
  numpy's idle spinning to whatever runs next."""
  st = perf(); x @ y; t = perf() - st  # noqa: E702
  time.sleep(BLAS_SETTLE_S)
  return t

def np_add_alloc_once(x, y) -> float:
  st = perf(); z = x + y; t = perf() - st  # noqa: E702
  del z
  return t

def np_add_out_once(x, y, out) -> float:
  st = perf(); np.add(x, y, out=out); return perf() - st  # noqa: E702

def np_chain(x, y):
  """The same 10 ops as lazy_chain, one numpy call (and one temporary array) each."""
  z = x * y; z = z + x; z = z * 1.5; z = z - y; z = np.maximum(z, x)  # noqa: E702
  z = z * z; z = z + 0.25; z = np.sqrt(z); z = z * y; z = z + 1.0  # noqa: E702
  return z

def np_chain_once(x, y) -> float:
  st = perf(); z = np_chain(x, y); t = perf() - st  # noqa: E702
  del z
  return t

def numpy_reference(reps_mm: int, reps_ew: int) -> dict:
  """numpy alone (used in the child process with the BLAS variables unset)."""
  rng = np.random.default_rng(0)
  x, y = rng.random((MM_N, MM_N), dtype=np.float32), rng.random((MM_N, MM_N), dtype=np.float32)
  for _ in range(3): x @ y
  mm = [np_matmul_once(x, y) for _ in range(reps_mm)]
  u, v = rng.random(EW_N, dtype=np.float32), rng.random(EW_N, dtype=np.float32)
  out = np.empty_like(u)
  np_add_alloc_once(u, v); np_add_out_once(u, v, out)  # noqa: E702
  alloc, outt = [], []
  for _ in range(reps_ew):
    alloc.append(np_add_alloc_once(u, v)); outt.append(np_add_out_once(u, v, out))  # noqa: E702
  return {"matmul_gflops": 2 * MM_N**3 / median(mm) / 1e9, "matmul_gflops_best": 2 * MM_N**3 / min(mm) / 1e9,
          "add_alloc_gbs": 12 * EW_N / median(alloc) / 1e9, "add_out_gbs": 12 * EW_N / median(outt) / 1e9,
          "blas": blas_info(), "env": {k: os.environ.get(k) for k in BLAS_VARS}}

def run_child(mode: str, quick: bool, env: dict | None = None, timeout: float = 600) -> dict:
  cmd = [sys.executable, os.path.abspath(__file__), "--child", mode] + (["--quick"] if quick else [])
  p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT)
  lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
  if p.returncode != 0 or not lines: return {"error": f"child {mode} exited {p.returncode}: {p.stderr.strip()[-2000:]}"}
  return json.loads(lines[-1])

def numpy_children(quick: bool) -> tuple[dict, dict]:
  """numpy alone in child processes, the environment as-is and with the BLAS variables unset, alternating
  (as-is, unset, as-is, unset) so both see the same machine; each number is the better of its two runs.
  Comparing the two children isolates the effect of the variables from in-process effects."""
  unset = child_env()
  for k in BLAS_VARS: unset.pop(k, None)
  runs: dict[str, list[dict]] = {"asis": [], "unset": []}
  for _ in range(2):
    runs["asis"].append(run_child("numpy", quick, child_env()))
    runs["unset"].append(run_child("numpy", quick, unset))
  def best(rs: list[dict]) -> dict:
    ok = [r for r in rs if "error" not in r]
    if not ok: return rs[0]
    ret = dict(ok[0])
    for k in ("matmul_gflops", "matmul_gflops_best", "add_alloc_gbs", "add_out_gbs"): ret[k] = max(r[k] for r in ok)
    ret["runs"] = [{k: r[k] for k in ("matmul_gflops", "add_alloc_gbs", "add_out_gbs")} for r in ok]
    return ret
  return best(runs["asis"]), best(runs["unset"])

def child_env(**set_vars) -> dict:
  env = dict(os.environ)
  env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
  env.update(set_vars)
  return env

# ---------------------------------------------------------------- listening to lazynb's trace bus

class Listener:
  """Keeps plain numbers from trace events (never the events: they hold UOps, which would keep a result's
  graph alive and turn the next identical `a @ b` into a cache hit instead of a kernel run)."""
  def __init__(self): self.execs, self.compiles, self.programs = [], [], []
  def __call__(self, ev):
    d = ev.data
    if ev.kind == "exec" and d["kind"] == "kernel": self.execs.append((d["name"], d["seconds"], d["op_estimate"], d["mem_estimate"]))
    elif ev.kind == "compile": self.compiles.append((d["name"], d["seconds"], d["cached"]))
    elif ev.kind == "program": self.programs.append((d["program"].name, dict(d["program"].timings)))

@contextlib.contextmanager
def listening():
  from lazynb import trace
  lst = Listener()
  trace.subscribe(lst, rewrites=False)
  try: yield lst
  finally: trace.unsubscribe(lst)

def realize_timed(make, lst: Listener) -> tuple[float, float, float, object]:
  """Build a fresh lazy tensor with make(), realize it: (wall s, kernel s, bytes, result), the kernel seconds and bytes
  summed over every kernel that ran (a big matmul packs its right operand in a kernel of its own first: Tensor.dot)."""
  n = len(lst.execs)
  st = perf()
  t = make().realize()
  wall = perf() - st
  ran = lst.execs[n:]
  if not ran: raise RuntimeError("expected a kernel to run, none did")
  return wall, sum(r[1] for r in ran), sum(r[3] for r in ran), t

# ---------------------------------------------------------------- 1. matmul

def bench_matmul(quick: bool, noopt: bool = True) -> dict:
  from lazynb import Tensor, Context
  reps = 5 if quick else 15
  Tensor.manual_seed(0)
  a, b = Tensor.rand(MM_N, MM_N).realize(), Tensor.rand(MM_N, MM_N).realize()
  an, bn = a.numpy(), b.numpy()
  ref = an.astype(np.float64) @ bn.astype(np.float64)
  out: dict = {"flops": 2 * MM_N**3}
  with listening() as lst:
    # warm-up: compiles the kernel (that compile is reported separately) and checks the answer
    st = perf(); c = (a @ b).realize(); first = perf() - st  # noqa: E702
    out["default_first_call_s"] = first
    out["default_compile_s"] = sum(s for _, s, _ in lst.compiles)
    out["default_codegen_s"] = sum(sum(t.values()) for _, t in lst.programs)
    out["default_kernel"] = lst.execs[-1][0]
    out["default_correct"] = bool(np.allclose(c.numpy(), ref, rtol=1e-4, atol=1e-3))
    out["default_max_abs_err"] = float(np.abs(c.numpy() - ref).max())
    del c
    for _ in range(2): an @ bn  # numpy warm-up
    walls, ks, nps = [], [], []
    for _ in range(reps):
      w, k, _, c = realize_timed(lambda: a @ b, lst)
      del c
      walls.append(w); ks.append(k); nps.append(np_matmul_once(an, bn))  # noqa: E702
    out["default_kernel_s"], out["default_wall_s"], out["numpy_s"] = median(ks), median(walls), median(nps)
    out["default_gflops"] = out["flops"] / median(ks) / 1e9
    out["default_gflops_best"] = out["flops"] / min(ks) / 1e9
    out["default_gflops_wall"] = out["flops"] / median(walls) / 1e9
    out["default_overhead_s"] = median([w - k for w, k in zip(walls, ks)])  # schedule + dispatch + output alloc, per realize
    out["numpy_gflops"] = out["flops"] / median(nps) / 1e9
    out["numpy_gflops_best"] = out["flops"] / min(nps) / 1e9
    # NOOPT=1: the unoptimized loop nest, as a reference point. It is slow (seconds per run), so few reps.
    if noopt:
      with Context(NOOPT=1):
        nreps = 1 if quick else 3
        ks = []
        for i in range(nreps):
          _, k, _, c = realize_timed(lambda: a @ b, lst)
          if i == 0:
            out["noopt_kernel"] = lst.execs[-1][0]
            out["noopt_correct"] = bool(np.allclose(c.numpy(), ref, rtol=1e-4, atol=1e-3))
          del c
          ks.append(k)
        out["noopt_kernel_s"] = median(ks)
        out["noopt_gflops"] = out["flops"] / median(ks) / 1e9
        out["noopt_reps"] = nreps
  out["reps"] = reps
  return out

SINGLE_ENV = {"THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}

def single_core_child(quick: bool) -> dict:
  """Matmul with one thread on each side (lazynb THREADS=1, OpenBLAS 1 thread), in a child started with SINGLE_ENV.
  Not the target metric (that is the default, multithreaded), but the code quality of the kernel itself, and much
  less sensitive to other processes on a busy machine than a 2-thread OpenBLAS, which stalls when one core is taken."""
  from lazynb import Device
  return {"threads": Device["CPU"].renderer.threads, "blas": {k: v for k, v in blas_info().items() if k.startswith("runtime_get_n")},
          **bench_matmul(quick, noopt=False)}

# ---------------------------------------------------------------- 2. fused elementwise

def lazy_chain(a, b):
  """10 elementwise ops that the scheduler fuses into one kernel (reads a and b once, writes once)."""
  x = a * b; x = x + a; x = x * 1.5; x = x - b; x = x.maximum(a)  # noqa: E702
  x = x * x; x = x + 0.25; x = x.sqrt(); x = x * b; x = x + 1.0  # noqa: E702
  return x

def bench_elementwise(quick: bool) -> dict:
  from lazynb import Tensor
  from lazynb.engine.realize import get_runner
  rounds = 5 if quick else 15
  Tensor.manual_seed(1)
  a, b = Tensor.rand(EW_N).realize(), Tensor.rand(EW_N).realize()
  an, bn = a.numpy(), b.numpy()
  npout = np.empty_like(an)
  out: dict = {"elements": EW_N, "bytes": 12 * EW_N}
  with listening() as lst:
    c = lazy_chain(a, b).realize()  # warm-up / compile
    out["chain_kernels"] = len(lst.execs)
    out["chain_kernel"] = lst.execs[-1][0]
    out["chain_ops"] = 10
    out["chain_correct"] = bool(np.allclose(c.numpy(), np_chain(an, bn), rtol=1e-5, atol=1e-5))
    del c
    c = (a + b).realize()
    out["add_correct"] = bool(np.allclose(c.numpy(), an + bn))
    del c
    # steady state: the same compiled chain kernel called directly on buffers allocated once (no output page faults)
    items = lazy_chain(a, b).schedule()
    if len(items) != 1: raise RuntimeError(f"the 10-op chain scheduled as {len(items)} kernels, expected 1 (fusion broke)")
    ast, bufs = items[0].ast, list(items[0].bufs)
    del items  # a ScheduleItem holds the chain's graph; alive, it would make the next realize of the same chain a cache hit
    for buf in bufs: buf.allocate()
    runner = get_runner(bufs[0].device, ast)
    runner(bufs)
    res: dict[str, list[float]] = {k: [] for k in ("chain", "chain_wall", "chain_reused", "add", "np_add_alloc", "np_add_out", "np_chain")}
    for _ in range(rounds):
      w, k, nbytes, c = realize_timed(lambda: lazy_chain(a, b), lst)
      del c
      res["chain"].append(k); res["chain_wall"].append(w)  # noqa: E702
      res["chain_reused"].append(runner(bufs))
      _, k, _, c = realize_timed(lambda: a + b, lst)
      del c
      res["add"].append(k)
      res["np_add_alloc"].append(np_add_alloc_once(an, bn))
      res["np_add_out"].append(np_add_out_once(an, bn, npout))
      res["np_chain"].append(np_chain_once(an, bn))
    gc.collect()
  for k, v in res.items():
    out[f"{k}_s"] = median(v)
    out[f"{k}_gbs"] = out["bytes"] / median(v) / 1e9
    out[f"{k}_gbs_best"] = out["bytes"] / min(v) / 1e9
  out["rounds"] = rounds
  return out

# ---------------------------------------------------------------- 3. first-call latency (runs in children)

LATENCY_SNIPPET = "(Tensor.rand(256)+1).numpy()"

def latency_child() -> dict:
  """Run in a fresh process. Times import, the first call, repeats, and a never-seen shape."""
  st = perf()
  from lazynb import Tensor
  from lazynb import trace  # noqa: F401
  t_import = perf() - st
  res: dict = {"import_s": t_import, "cache_dir": os.environ.get("LAZYNB_CACHE")}
  with listening() as lst:
    st = perf(); (Tensor.rand(256) + 1).numpy(); res["first_call_s"] = perf() - st  # noqa: E702
    res["first_compile_s"] = sum(s for _, s, _ in lst.compiles)
    res["first_compile_cached"] = [c for _, _, c in lst.compiles]
    res["first_codegen_s"] = sum(sum(t.values()) for _, t in lst.programs)
    res["first_exec_s"] = sum(e[1] for e in lst.execs)
    res["first_kernels"] = len(lst.execs)
    warm = []
    for _ in range(50):
      st = perf(); (Tensor.rand(256) + 1).numpy(); warm.append(perf() - st)  # noqa: E702
    res["warm_call_s"] = median(warm)
    res["warm_call_best_s"] = min(warm)
    n = len(lst.compiles), len(lst.programs)
    st = perf(); (Tensor.rand(257) + 1).numpy(); res["new_shape_call_s"] = perf() - st  # noqa: E702
    res["new_shape_compile_s"] = sum(s for _, s, _ in lst.compiles[n[0]:])
    res["new_shape_codegen_s"] = sum(sum(t.values()) for _, t in lst.programs[n[1]:])
    # numpy's equivalent, for scale
    x = np.random.default_rng(0).random(256, dtype=np.float32)
    nps = []
    for _ in range(50):
      st = perf(); x + 1; nps.append(perf() - st)  # noqa: E702
    res["numpy_call_s"] = median(nps)
  return res

def bench_latency(quick: bool) -> dict:
  with tempfile.TemporaryDirectory(prefix="lazynb-bench-cache-") as d:
    env = child_env(LAZYNB_CACHE=d)
    cold = run_child("latency", quick, env)
    disk = run_child("latency", quick, env)  # a new process, but the compiled kernel is now in the disk cache
  return {"cold": cold, "disk_cached": disk, "snippet": LATENCY_SNIPPET}

# ---------------------------------------------------------------- 4. schedule + codegen + compile per kernel

def codegen_cases():
  from lazynb import Tensor
  Tensor.manual_seed(2)
  x, y, z = (Tensor.rand(1024, 1024).realize() for _ in range(3))
  img, w = Tensor.rand(1, 16, 32, 32).realize(), Tensor.rand(32, 16, 3, 3).realize()
  logits = Tensor.rand(64, 1000).realize()
  return [
    ("elementwise", "(x*y+z).relu()  1024x1024", lambda: (x * y + z).relu()),
    ("reduce", "x.sum(axis=1)  1024x1024", lambda: x.sum(axis=1)),
    ("matmul", "x @ y  1024x1024", lambda: x @ y),
    ("conv2d", "conv2d 1x16x32x32 * 32x16x3x3 pad 1", lambda: img.conv2d(w, padding=1)),
    ("softmax", "softmax(-1)  64x1000", lambda: logits.softmax(-1)),
  ]

def bench_codegen(quick: bool) -> list[dict]:
  from lazynb import Device
  dev = Device["CPU"]
  reps, creps = (3, 1) if quick else (10, 3)
  rows = []
  for name, desc, make in codegen_cases():
    row = guarded(codegen_case, name, desc, make, dev, reps, creps)
    if "error" in row: row.update(case=name, desc=desc)
    rows.append(row)
  return rows

def codegen_case(name, desc, make, dev, reps, creps) -> dict:
  """create_schedule for one lazy graph, then get_program and a raw compile for each of its kernels."""
  from lazynb.engine.schedule import create_schedule
  from lazynb.codegen import get_program
  t = make()
  times = []
  for _ in range(reps + 1):
    st = perf(); items, _ = create_schedule([t.uop]); times.append(perf() - st)  # noqa: E702
  kernels = [si for si in items if si.kind == "kernel"]
  row = {"case": name, "desc": desc, "kernels": len(kernels), "schedule_first_s": times[0], "schedule_s": median(times[1:]), "per_kernel": []}
  for si in kernels:
    st = perf(); p = get_program(si.ast, dev.renderer); first = perf() - st  # noqa: E702
    gt, stages = [], []
    for _ in range(reps):
      st = perf(); p = get_program(si.ast, dev.renderer); gt.append(perf() - st)  # noqa: E702
      stages.append(p.timings)
    ct = []
    for _ in range(creps):
      st = perf(); dev.compiler.compile(p.src); ct.append(perf() - st)  # noqa: E702  (raw compile, no disk cache)
    row["per_kernel"].append({"name": p.name, "opts": [repr(o) for o in p.opts], "uops": len(p.uops), "src_lines": p.src.count("\n") + 1,
                              "get_program_first_s": first, "get_program_s": median(gt),
                              "stages_s": {k: median([s[k] for s in stages]) for k in stages[0]}, "compile_s": median(ct)})
  pk = row["per_kernel"]
  row["get_program_s"] = sum(k["get_program_s"] for k in pk)
  row["get_program_first_s"] = sum(k["get_program_first_s"] for k in pk)
  row["compile_s"] = sum(k["compile_s"] for k in pk)
  row["stages_s"] = {s: sum(k["stages_s"][s] for k in pk) for s in pk[0]["stages_s"]} if pk else {}
  return row

# ---------------------------------------------------------------- tinygrad (optional, in a child so it can't disturb lazynb)

def tinygrad_child(quick: bool) -> dict:
  try:
    import tinygrad
    from tinygrad import Tensor as TT, Device as TD
  except Exception as e:
    return {"available": False, "error": repr(e)}
  reps = 5 if quick else 15
  from importlib.metadata import version
  res: dict = {"available": True, "version": getattr(tinygrad, "__version__", None) or version("tinygrad"), "device": TD.DEFAULT}
  def sync(): TD[TD.DEFAULT].synchronize()
  a, b = TT.rand(MM_N, MM_N).realize(), TT.rand(MM_N, MM_N).realize()
  c = (a @ b).realize(); sync()  # noqa: E702
  res["matmul_correct"] = bool(np.allclose(c.numpy(), a.numpy() @ b.numpy(), rtol=1e-4, atol=1e-3))
  ts = []
  for _ in range(reps):
    st = perf(); (a @ b).realize(); sync(); ts.append(perf() - st)  # noqa: E702
  res["matmul_gflops_wall"] = 2 * MM_N**3 / median(ts) / 1e9
  u, v = TT.rand(EW_N).realize(), TT.rand(EW_N).realize()
  lazy_chain(u, v).realize(); sync()  # noqa: E702
  ts = []
  for _ in range(reps):
    st = perf(); lazy_chain(u, v).realize(); sync(); ts.append(perf() - st)  # noqa: E702
  res["chain_gbs_wall"] = 12 * EW_N / median(ts) / 1e9
  return res

# ---------------------------------------------------------------- report

def fmt_s(s: float) -> str:
  if s != s: return "n/a"
  if s < 1e-3: return f"{s*1e6:.1f} us"
  if s < 1: return f"{s*1e3:.2f} ms"
  return f"{s:.2f} s"

def ratio(a, b) -> str:
  try: return f"{a / b:.3f}x"
  except (TypeError, ZeroDivisionError): return "n/a"

def table(headers: list[str], rows: list[list]) -> str:
  cells = [[str(c) for c in r] for r in [headers] + rows]
  w = [max(len(r[i]) for r in cells) for i in range(len(headers))]
  line = lambda r: "  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(r))  # noqa: E731
  return "\n".join([line(cells[0]), "  ".join("-" * x for x in w)] + [line(r) for r in cells[1:]])

def report_header(R: dict) -> list[str]:
  m, lz, nu, bl = R["machine"], R["lazynb"], R["numpy_unset"], R["numpy_blas"]
  env = m["env"]
  tg = R.get("tinygrad", {})
  busy = (m.get("loadavg_start") or [0])[0] > 0.5 * (m["nproc"] or 1)  # at start: the end value includes this benchmark itself
  warn = [f"WARNING: the machine was busy (1-minute load average above {0.5 * (m['nproc'] or 1):.1f}); other processes were competing for the "
          "cores and memory bus, and multithreaded OpenBLAS suffers most, so ratios against numpy are not reliable. Re-run on an idle machine."] if busy else []
  return warn + environment_lines(R["environment"]) + [
    f"machine: {m['cpu_model']}, nproc={m['nproc']}, python {m['python']}, numpy {m['numpy']}, lazynb commit {m.get('git_commit')}"
    f"{' + uncommitted changes in lazynb/' if m.get('git_dirty') else ''}",
    f"load average: {m.get('loadavg_start')} at start, {R.get('loadavg_end')} at end (the end value includes this run's own load)",
    f"lazynb:  CC={lz.get('cc')} ({lz.get('cc_version')}), THREADS={lz.get('threads')}" if "error" not in lz else f"lazynb: {lz['error']}",
    f"numpy BLAS: {bl.get('name')} {bl.get('version')}, runtime core {bl.get('runtime_get_corename', '?')}, threads {bl.get('runtime_get_num_threads', '?')}"
    f"; threadpoolctl: {'not installed' if isinstance(bl.get('threadpoolctl'), str) else bl.get('threadpoolctl')}",
    "BLAS env as-is: " + ", ".join(f"{k}={env.get(k)!s}" for k in BLAS_VARS) +
    f"; OpenBLAS core picked: as-is {bl.get('runtime_get_corename', '?')}, with them unset {nu.get('blas', {}).get('runtime_get_corename', '?')}" +
    (f" (child failed: {nu['error']})" if "error" in nu else ""),
    "tinygrad: " + (f"{tg.get('version')} on {tg.get('device')}" if tg.get("available") else f"not available ({tg.get('error', 'not importable')})"),
  ]

def report_matmul(R: dict) -> list[str]:
  mm, nu, tg = R["matmul"], R["numpy_unset"], R.get("tinygrad", {})
  if "error" in mm: return ["1. matmul: FAILED: " + mm["error"]]
  tgmm = tg.get("matmul_gflops_wall") if tg.get("available") else None
  npu, npa = nu.get("matmul_gflops"), R.get("numpy_child_asis", {}).get("matmul_gflops")
  rows = [
    ["lazynb default heuristic", f"{mm['default_gflops']:.1f}", ratio(mm["default_gflops"], mm["numpy_gflops"]), ratio(mm["default_gflops"], npu),
     ratio(mm["default_gflops"], tgmm), ">= 0.15x", "ok" if mm["default_correct"] else "WRONG"],
    ["lazynb default, wall per realize", f"{mm['default_gflops_wall']:.1f}", ratio(mm["default_gflops_wall"], mm["numpy_gflops"]),
     ratio(mm["default_gflops_wall"], npu), "", "", ""],
    ["lazynb NOOPT=1", f"{mm['noopt_gflops']:.2f}", ratio(mm["noopt_gflops"], mm["numpy_gflops"]), ratio(mm["noopt_gflops"], npu),
     ratio(mm["noopt_gflops"], tgmm), "", "ok" if mm["noopt_correct"] else "WRONG"],
    ["numpy (env as-is, this process)", f"{mm['numpy_gflops']:.1f}", "1.000x", ratio(mm["numpy_gflops"], npu), "", "", ""],
    ["numpy (env as-is, child)", f"{npa:.1f}" if npa else "n/a", ratio(npa, mm["numpy_gflops"]), ratio(npa, npu), "", "", ""],
    ["numpy (BLAS vars unset, child)", f"{npu:.1f}" if npu else "n/a", ratio(npu, mm["numpy_gflops"]), "1.000x", "", "", ""],
  ]
  if tgmm: rows.append(["tinygrad (wall)", f"{tgmm:.1f}", ratio(tgmm, mm["numpy_gflops"]), ratio(tgmm, npu), "1.000x", "", ""])
  one = R.get("matmul_1thread", {})
  if "default_gflops" in one:
    rows += [["lazynb THREADS=1 vs 1-thread numpy (child)", f"{one['default_gflops']:.1f}", ratio(one["default_gflops"], one["numpy_gflops"]), "", "", "",
              "ok" if one["default_correct"] else "WRONG"],
             ["numpy, OpenBLAS 1 thread (same child)", f"{one['numpy_gflops']:.1f}", "1.000x", "", "", "", ""]]
  elif one: rows.append(["1-thread child", "FAILED", "", "", "", "", one.get("error", "?").strip().splitlines()[-1][:80]])
  return [f"1. matmul {MM_N}x{MM_N} float32 (kernel time, median of {mm['reps']}; NOOPT {mm['noopt_reps']} rep(s))",
          table(["", "GFLOPS", "vs numpy", "vs numpy unset", "vs tinygrad", "target", "result"], rows),
          f"   kernels: default {mm['default_kernel']}, NOOPT {mm['noopt_kernel']}; default first call {fmt_s(mm['default_first_call_s'])} "
          f"(codegen {fmt_s(mm['default_codegen_s'])}, compile {fmt_s(mm['default_compile_s'])}); "
          f"per-realize time beyond the kernel {fmt_s(mm['default_overhead_s'])}; numpy best {mm['numpy_gflops_best']:.1f}, lazynb best {mm['default_gflops_best']:.1f}"]

def report_elementwise(R: dict) -> list[str]:
  ew, nu, tg = R["elementwise"], R["numpy_unset"], R.get("tinygrad", {})
  if "error" in ew: return ["2. elementwise: FAILED: " + ew["error"]]
  tgew = tg.get("chain_gbs_wall") if tg.get("available") else None
  base, base_out = ew["np_add_alloc_gbs"], ew["np_add_out_gbs"]
  nu_alloc, nu_out = nu.get("add_alloc_gbs"), nu.get("add_out_gbs")
  ca = R.get("numpy_child_asis", {}).get("add_alloc_gbs")
  rows = [
    ["lazynb 10-op chain, realize (new output)", f"{ew['chain_gbs']:.2f}", ratio(ew["chain_gbs"], base), ratio(ew["chain_gbs"], base_out),
     ratio(ew["chain_gbs"], nu_alloc), ratio(ew["chain_gbs"], tgew), ">= 0.7x", "ok" if ew["chain_correct"] else "WRONG"],
    ["lazynb 10-op chain, reused buffers", f"{ew['chain_reused_gbs']:.2f}", ratio(ew["chain_reused_gbs"], base), ratio(ew["chain_reused_gbs"], base_out),
     ratio(ew["chain_reused_gbs"], nu_alloc), "", "", ""],
    ["lazynb 10-op chain, wall per realize", f"{ew['chain_wall_gbs']:.2f}", ratio(ew["chain_wall_gbs"], base), ratio(ew["chain_wall_gbs"], base_out),
     ratio(ew["chain_wall_gbs"], nu_alloc), "", "", ""],
    ["lazynb a+b (1 op), realize", f"{ew['add_gbs']:.2f}", ratio(ew["add_gbs"], base), ratio(ew["add_gbs"], base_out), ratio(ew["add_gbs"], nu_alloc),
     "", "", "ok" if ew["add_correct"] else "WRONG"],
    ["numpy a+b (allocates output)", f"{base:.2f}", "1.000x", ratio(base, base_out), ratio(base, nu_alloc), "", "", ""],
    ["numpy add(a, b, out=)", f"{base_out:.2f}", ratio(base_out, base), "1.000x", ratio(base_out, nu_alloc), "", "", ""],
    ["numpy a+b, env as-is (child)", f"{ca:.2f}" if ca else "n/a", ratio(ca, base), ratio(ca, base_out), ratio(ca, nu_alloc), "", "", ""],
    ["numpy a+b, BLAS vars unset (child)", f"{nu_alloc:.2f}" if nu_alloc else "n/a", ratio(nu_alloc, base), ratio(nu_alloc, base_out), "1.000x", "", "", ""],
    ["numpy add(out=), BLAS vars unset (child)", f"{nu_out:.2f}" if nu_out else "n/a", ratio(nu_out, base), ratio(nu_out, base_out), ratio(nu_out, nu_alloc), "", "", ""],
    ["numpy same 10 ops, unfused", f"{ew['np_chain_gbs']:.2f}", ratio(ew["np_chain_gbs"], base), ratio(ew["np_chain_gbs"], base_out),
     ratio(ew["np_chain_gbs"], nu_alloc), "", "", ""],
  ]
  if tgew: rows.append(["tinygrad 10-op chain (wall)", f"{tgew:.2f}", ratio(tgew, base), ratio(tgew, base_out), ratio(tgew, nu_alloc), "1.000x", "", ""])
  return [f"2. fused elementwise: 10 ops on {ew['elements'] // (1 << 20)}M float32, {ew['bytes'] / 1e6:.0f} MB read+written "
          f"(median of {ew['rounds']} interleaved rounds)",
          table(["", "GB/s", "vs np a+b", "vs np add(out=)", "vs np a+b unset", "vs tinygrad", "target", "result"], rows),
          f"   kernel {ew['chain_kernel']} ({ew['chain_kernels']} kernel for the chain); every row counts 12 bytes/element "
          "(two float32 reads, one write)"]

def report_latency(R: dict) -> list[str]:
  la = R["latency"]
  head = f"3. first-call latency of {LATENCY_SNIPPET}"
  if "error" in la: return [head + ": FAILED: " + la["error"]]
  c, d = la["cold"], la["disk_cached"]
  if "error" in c or "error" in d:  # the whole stderr is in the JSON; here its last line
    return [head + ": child failed: " + (c.get("error") or d.get("error")).strip().splitlines()[-1]]
  rows = [
    ["fresh process, empty kernel cache", fmt_s(c["import_s"]), fmt_s(c["first_call_s"]), fmt_s(c["first_codegen_s"]), fmt_s(c["first_compile_s"]),
     fmt_s(c["first_exec_s"])],
    ["fresh process, kernel in disk cache", fmt_s(d["import_s"]), fmt_s(d["first_call_s"]), fmt_s(d["first_codegen_s"]), fmt_s(d["first_compile_s"]),
     fmt_s(d["first_exec_s"])],
    ["warm process, never-seen shape (257)", "", fmt_s(c["new_shape_call_s"]), fmt_s(c["new_shape_codegen_s"]), fmt_s(c["new_shape_compile_s"]), ""],
    ["warm process, same call again (median)", "", fmt_s(c["warm_call_s"]), "-", "-", ""],
    ["numpy x + 1 (median)", "", fmt_s(c["numpy_call_s"]), "", "", ""],
  ]
  return [head, table(["", "import", "call", "codegen", "compile", "kernel"], rows),
          f"   cold/warm = {c['first_call_s'] / c['warm_call_s']:.0f}x; warm lazynb call / numpy x+1 = {c['warm_call_s'] / c['numpy_call_s']:.0f}x; "
          f"compile of the cold call reported cached={c['first_compile_cached']}, of the disk-cached one cached={d['first_compile_cached']}"]

def report_codegen(R: dict) -> list[str]:
  cg = R["codegen"]
  head = "4. schedule + codegen + compile per case (medians of repeated calls; 'first' = first get_program in this process)"
  if isinstance(cg, dict): return [head + ": FAILED: " + cg["error"]]
  rows, notes = [], []
  for r in cg:
    if "error" in r:
      rows.append([r["case"], "FAILED"] + [""] * 8)
      notes.append(f"   {r['case']:12s} FAILED: {r['error']}")
      continue
    st = r["stages_s"]
    rows.append([r["case"], r["kernels"], fmt_s(r["schedule_s"]), fmt_s(r["get_program_first_s"]), fmt_s(r["get_program_s"]),
                 fmt_s(st.get("optimize", 0)), fmt_s(st.get("lower", 0)), fmt_s(st.get("linearize", 0)), fmt_s(st.get("render", 0)), fmt_s(r["compile_s"])])
    notes.append(f"   {r['case']:12s} {r['desc']}: " + ", ".join(f"{k['name']} ({k['uops']} uops)" for k in r["per_kernel"]))
  return [head, table(["case", "kernels", "schedule", "get_program first", "get_program", "optimize", "lower", "linearize", "render", "compile (cc)"], rows)] + notes

def report(R: dict) -> str:
  out = report_header(R)
  for fn in (report_matmul, report_elementwise, report_latency, report_codegen):
    try: out += [""] + fn(R)
    except Exception as e: out += ["", f"({fn.__name__} could not format its section: {type(e).__name__}: {e})"]
  if R.get("wrong"): out += ["", "WRONG RESULTS: " + ", ".join(R["wrong"])]
  return "\n".join(out)

def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--quick", action="store_true", help="fewer repetitions (well under a minute on an idle 2-core machine)")
  ap.add_argument("--json", metavar="PATH", help="also write every number to this JSON file")
  ap.add_argument("--child", choices=["numpy", "latency", "tinygrad", "single"], help=argparse.SUPPRESS)
  args = ap.parse_args()
  if args.child == "numpy": print(json.dumps(numpy_reference(5 if args.quick else 15, 5 if args.quick else 15))); return
  if args.child == "latency": print(json.dumps(latency_child())); return
  if args.child == "tinygrad": print(json.dumps(tinygrad_child(args.quick))); return
  if args.child == "single": print(json.dumps(single_core_child(args.quick))); return

  t0 = perf()
  R: dict = {"quick": args.quick, "environment": environment(), "machine": machine_info(), "numpy_blas": blas_info(), "lazynb": guarded(lazynb_info)}
  step = lambda s: print(f"[{perf() - t0:6.1f}s] {s} ...", file=sys.stderr, flush=True)  # noqa: E731
  step("numpy in child processes: environment as-is, and with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset")
  R["numpy_child_asis"], R["numpy_unset"] = numpy_children(args.quick)
  if importlib.util.find_spec("tinygrad") is not None:
    step("tinygrad (child process)")
    R["tinygrad"] = run_child("tinygrad", args.quick, dict(child_env(), CPU="1"))  # its CPU device, as lazynb's (not an OpenCL it finds)
  else: R["tinygrad"] = {"available": False, "error": "import tinygrad: module not found"}
  step("1. matmul"); R["matmul"] = guarded(bench_matmul, args.quick)  # noqa: E702
  step("1b. matmul with one thread each (child process)"); R["matmul_1thread"] = run_child("single", args.quick, child_env(**SINGLE_ENV))  # noqa: E702
  step("2. elementwise"); R["elementwise"] = guarded(bench_elementwise, args.quick)  # noqa: E702
  step("3. first-call latency (child processes)"); R["latency"] = guarded(bench_latency, args.quick)  # noqa: E702
  step("4. schedule + codegen"); R["codegen"] = guarded(bench_codegen, args.quick)  # noqa: E702
  checks = [("matmul default", R["matmul"], "default_correct"), ("matmul NOOPT", R["matmul"], "noopt_correct"),
            ("matmul THREADS=1", R["matmul_1thread"], "default_correct"),
            ("elementwise chain", R["elementwise"], "chain_correct"), ("elementwise add", R["elementwise"], "add_correct")]
  R["wrong"] = [name for name, sec, key in checks if key in sec and not sec[key]]
  R["failed"] = [k for k in ("matmul", "elementwise", "latency") if "error" in R[k]] + \
                [f"codegen {r['case']}" for r in (R["codegen"] if isinstance(R["codegen"], list) else [{"case": "all", "error": 1}]) if "error" in r]
  R["loadavg_end"] = loadavg()
  R["total_s"] = perf() - t0
  print(report(R))
  if R["failed"]: print("\nsections that raised: " + ", ".join(R["failed"]) + (" (tracebacks in the JSON)" if args.json else " (use --json for tracebacks)"))
  if args.json:
    with open(args.json, "w") as f: json.dump(R, f, indent=1, default=str)
    print(f"\nwrote {args.json}")
  if R["wrong"]: sys.exit(1)

if __name__ == "__main__":
  main()
