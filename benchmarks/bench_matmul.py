"""Square float32 matmul at several sizes: lazynb's default heuristic, BEAM=2 and the CL device (PoCL), each as a
ratio to numpy's `@` measured in the same process, round by round.

    PYTHONPATH=. python benchmarks/bench_matmul.py [--sizes 256,512,1024,2048] [--reps 7] [--no-beam] [--beam-fresh] [--no-cl]

For each size N: numpy GFLOPS, lazynb default GFLOPS and their ratio; BEAM=2's ratio (in a child process with
BEAM=2, so its search runs once and its choice is read from the disk cache on every later run); the CL ratio;
and, in a child with THREADS=1 OPENBLAS_NUM_THREADS=1, one thread on each side timed in the thread's own CPU
seconds: the comparison least disturbed by other jobs on a shared machine (2-thread OpenBLAS slows down most
when a core is taken, which flatters lazynb's 2-thread ratio under load).
GFLOPS = 2 N^3 / median time per call. Time per call is the compiled runner's own call (compile excluded by a
warm-up; for CL it waits for the kernel to finish), so it is the same quantity for every row; below N=1024 a
sample times a burst of (1024/N)^3 calls on each side, so waking the threads up once is not what is measured. Each lazynb run alternates with a numpy run, and numpy is
followed by a short pause (OpenBLAS's threads spin for a while after a call and would slow whatever runs next).

The header says where it ran: CPU model and its SIMD flags, the C compiler and its version and flags, numpy's
BLAS, and the load average at the start and the end. The machine's other jobs share the cores: read ratios
taken under load (load average above the core count) as rough, and run the script more than once.
A wrong result exits with code 1, so a broken kernel cannot look fast; slow numbers never fail anything.
"""
from __future__ import annotations
import argparse, json, os, statistics, subprocess, sys, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for p in (ROOT, HERE):
  if p not in sys.path: sys.path.insert(0, p)
from benchenv import environment_lines  # noqa: E402
from lazynb import Device  # noqa: E402

SETTLE_S = 0.2
SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16")

def loadavg() -> str:
  try: return " ".join(f"{x:.2f}" for x in os.getloadavg())
  except OSError: return "?"

def header() -> list[str]:
  """The shared environment lines (benchmarks/benchenv.py), then what matters for a matmul: threads, tile, BLAS, CL."""
  dev = Device["CPU"]
  try:
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    blas_s = f"{blas.get('name')} {blas.get('version')}"
  except Exception: blas_s = "?"
  lines = environment_lines() + [
           f"lazynb CPU: THREADS={dev.renderer.threads}, vector shape for the heuristic: {dev.renderer.simd_floats} floats x {dev.renderer.simd_regs} registers",
           f"numpy {np.__version__}, BLAS {blas_s}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}"]
  try:
    ok, why = Device.available("CL")
    if ok:
      d = Device["CL"].cl_device
      lines.append(f"CL: {d.platform.name} {d.version.strip()} on {d.name}")
    else: lines.append(f"CL: not available ({why})")
  except Exception as e: lines.append(f"CL: not available ({type(e).__name__}: {e})")
  lines.append(f"load average at start: {loadavg()}")
  return lines

def measure(n: int, device: str, reps: int, clock=time.perf_counter) -> dict:
  """Compile the n x n matmul kernel on `device` (opts as the environment says: heuristic, or BEAM), check it against
  numpy in float64, then time it alternating with numpy."""
  from lazynb import Tensor
  from lazynb.device import Device
  from lazynb.codegen import get_program
  from lazynb.engine.realize import CompiledRunner
  rng = np.random.default_rng(n)
  an, bn = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
  a, b = Tensor(an, device=device).realize(), Tensor(bn, device=device).realize()
  items = [s for s in (a @ b).schedule() if s.kind == "kernel"]  # a big matmul packs b first: two kernels (Tensor.dot)
  st = time.perf_counter()
  prgs = [get_program(si.ast, Device[device].renderer) for si in items]
  runners = [CompiledRunner(p) for p in prgs]
  first_s = time.perf_counter() - st
  for si in items:
    for x in si.bufs: x.allocate()
  def run():
    for r, si in zip(runners, items): r(list(si.bufs))
  run()
  out = np.empty(n * n, np.float32)
  items[-1].bufs[0].copyout(memoryview(out.view(np.uint8)))
  ok = bool(np.allclose(out.reshape(n, n), an.astype(np.float64) @ bn.astype(np.float64), rtol=1e-4, atol=1e-3 * n / 256))
  an @ bn  # warm numpy's threads and caches
  ks, nps = [], []
  inner = max(1, (1024 // n) ** 3)  # small sizes: time a burst of calls, so a thread wake-up is not the measurement
  for _ in range(reps):
    t0 = clock()
    for _ in range(inner): run()
    ks.append((clock() - t0) / inner)
    t0 = clock()
    for _ in range(inner): an @ bn
    nps.append((clock() - t0) / inner)
    time.sleep(SETTLE_S)
  g = lambda ts: 2 * n**3 / statistics.median(ts) / 1e9  # noqa: E731
  return {"n": n, "device": device, "kernel": " + ".join(p.name for p in prgs), "opts": [repr(o) for o in prgs[-1].opts], "correct": ok, "codegen_compile_s": first_s,
          "gflops": g(ks), "numpy_gflops": g(nps), "ratio": g(ks) / g(nps), "best_gflops": 2 * n**3 / min(ks) / 1e9,
          "numpy_best_gflops": 2 * n**3 / min(nps) / 1e9}

def child(mode: str, sizes: list[int], reps: int, fresh: bool = False) -> list[dict]:
  """Run measure() in a child process with an env change (BEAM=2): opts are chosen at import time from the env."""
  env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
  if mode == "beam": env["BEAM"] = "2"
  if mode == "single": env.update(THREADS="1", OPENBLAS_NUM_THREADS="1")
  if fresh: env["IGNORE_BEAM_CACHE"] = "1"
  p = subprocess.run([sys.executable, __file__, "--child", mode, "--sizes", ",".join(map(str, sizes)), "--reps", str(reps)],
                     env=env, capture_output=True, text=True, timeout=3600)
  if p.returncode != 0: return [{"n": n, "error": (p.stderr.strip().splitlines() or ["?"])[-1][:200]} for n in sizes]
  return json.loads(p.stdout.strip().splitlines()[-1])

def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--sizes", default="256,512,1024,2048")
  ap.add_argument("--reps", type=int, default=7)
  ap.add_argument("--no-beam", action="store_true")
  ap.add_argument("--beam-fresh", action="store_true", help="search again (IGNORE_BEAM_CACHE=1) and replace the cached choice")
  ap.add_argument("--no-cl", action="store_true")
  ap.add_argument("--json")
  ap.add_argument("--child", help=argparse.SUPPRESS)
  args = ap.parse_args()
  sizes = [int(s) for s in args.sizes.split(",")]
  if args.child:  # "single": both sides on one thread, timed in CPU seconds of this thread (what other jobs take is not counted)
    clock = time.thread_time if args.child == "single" else time.perf_counter
    print(json.dumps([measure(n, "CPU", args.reps, clock) for n in sizes]))
    return
  for ln in header(): print(ln, flush=True)
  rows: dict[int, dict] = {}
  for n in sizes:
    rows[n] = {"cpu": measure(n, "CPU", args.reps)}
    print(f"  measured {n} (CPU)", file=sys.stderr, flush=True)
  if not args.no_beam:
    for r in child("beam", sizes, args.reps, args.beam_fresh): rows[r["n"]]["beam"] = r
  for r in child("single", sizes, args.reps): rows[r["n"]]["single"] = r
  if not args.no_cl:
    from lazynb import Device
    if Device.available("CL")[0]:
      for n in sizes:
        rows[n]["cl"] = measure(n, "CL", max(3, args.reps // 2))
        print(f"  measured {n} (CL)", file=sys.stderr, flush=True)
  print(f"load average at end: {loadavg()}")
  print()
  print("| N | numpy GFLOPS | lazynb default GFLOPS | ratio | BEAM=2 ratio | CL (PoCL) ratio | 1 thread each, CPU time | default kernel |")
  print("|---:|---:|---:|---:|---:|---:|---:|---|")
  bad = []
  def rat(r): return "n/a" if r is None else (f"error: {r['error']}" if "error" in r else f"{r['ratio']:.2f}x ({r['gflops']:.1f} vs {r['numpy_gflops']:.1f})")
  for n, r in rows.items():
    c = r["cpu"]
    print(f"| {n} | {c['numpy_gflops']:.1f} | {c['gflops']:.1f} | **{c['ratio']:.2f}x** | {rat(r.get('beam'))} | {rat(r.get('cl'))} | {rat(r.get('single'))} | `{c['kernel']}` |")
    bad += [f"{n} {k}" for k, v in r.items() if not v.get("correct", True) or "error" in v]
  print()
  for n, r in rows.items():
    for k, v in r.items():
      if "opts" in v: print(f"{n} {k}: {v['kernel']} {v['opts']} (codegen+compile {v['codegen_compile_s']:.2f} s; best rep {v['best_gflops']:.1f} vs numpy {v['numpy_best_gflops']:.1f})")
  if args.json:
    with open(args.json, "w") as f: json.dump({"header": header(), "rows": rows}, f, indent=1, default=str)
  if bad:
    print(f"WRONG RESULTS or errors: {bad}")
    sys.exit(1)

if __name__ == "__main__": main()
