"""BEAM search and the OpenCL backend, each next to numpy measured in the same process.

    PYTHONPATH=. python benchmarks/bench_backends.py [--quick] [--json out.json]

  1. BEAM=2 on the 1024x1024 float32 matmul (CPU), in child processes sharing one fresh cache directory:
       cold  empty cache: the first realize runs the search; its time and the chosen opts are reported,
             then the chosen kernel's GFLOPS (kernel time, median) against numpy's in the same child;
       warm  a new process with that cache: the first realize finds the opts on disk (no search).
  2. CL (PoCL on a machine without a GPU) when pyopencl is importable: the same matmul with the default
     heuristic and the 10-op fused elementwise chain, against numpy.
  3. tinygrad, when importable: its BEAM=2 on the same matmul, cold (a fresh CACHEDB) and warm, in children,
     wall time per realize with a device sync, against numpy in the same child.

A wrong result exits with code 1, so a broken kernel cannot look fast. Slow numbers never fail anything.
"""
from __future__ import annotations
import argparse, importlib.util, json, os, subprocess, sys, tempfile
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for p in (ROOT, HERE):
  if p not in sys.path: sys.path.insert(0, p)
from benchenv import environment, environment_lines  # noqa: E402 (after the path set-up above)
from bench_core import MM_N, EW_N, perf, median, listening, realize_timed, np_matmul_once, np_add_alloc_once, np_chain, lazy_chain, loadavg, table  # noqa: E402

def matmul_vs_numpy(device: str, reps: int) -> dict:
  """First realize (timed: it includes any search and compile), then kernel GFLOPS against numpy, interleaved."""
  from lazynb import Tensor
  Tensor.manual_seed(0)
  a, b = Tensor.rand(MM_N, MM_N, device=device).realize(), Tensor.rand(MM_N, MM_N, device=device).realize()
  an, bn = a.numpy(), b.numpy()
  out: dict = {"device": device}
  beams: list[dict] = []
  from lazynb import trace
  def on_beam(ev):
    if ev.kind == "beam": beams.append({k: (repr(v) if k == "opts" else v) for k, v in ev.data.items() if k in ("cached", "opts", "seconds", "tried", "rounds")})
  trace.subscribe(on_beam, rewrites=False)
  with listening() as lst:
    st = perf(); c = (a @ b).realize(); out["first_realize_s"] = perf() - st  # noqa: E702
    out["correct"] = bool(np.allclose(c.numpy(), an.astype(np.float64) @ bn.astype(np.float64), rtol=1e-4, atol=1e-3))
    out["kernel"] = lst.execs[-1][0]
    out["compile_s"] = sum(s for _, s, _ in lst.compiles)
    del c
    for _ in range(2): an @ bn
    ks, nps = [], []
    for _ in range(reps):
      _, k, _, c = realize_timed(lambda: a @ b, lst)
      del c
      ks.append(k); nps.append(np_matmul_once(an, bn))  # noqa: E702
  trace.unsubscribe(on_beam)
  out["beam"] = beams[0] if beams else None
  out["gflops"], out["numpy_gflops"] = 2 * MM_N**3 / median(ks) / 1e9, 2 * MM_N**3 / median(nps) / 1e9
  return out

def chain_vs_numpy(device: str, reps: int) -> dict:
  from lazynb import Tensor
  Tensor.manual_seed(1)
  x, y = Tensor.rand(EW_N, device=device).realize(), Tensor.rand(EW_N, device=device).realize()
  xn, yn = x.numpy(), y.numpy()
  with listening() as lst:
    c = lazy_chain(x, y).realize()
    want = np_chain(xn, yn)
    out = {"correct": bool(np.allclose(c.numpy(), want, rtol=1e-4, atol=1e-5)), "kernel": lst.execs[-1][0]}
    del c
    ks, nps = [], []
    for _ in range(reps):
      _, k, _, c = realize_timed(lambda: lazy_chain(x, y), lst)
      del c
      ks.append(k); nps.append(np_add_alloc_once(xn, yn))  # noqa: E702
  out["gbs"], out["numpy_add_gbs"] = 12 * EW_N / median(ks) / 1e9, 12 * EW_N / median(nps) / 1e9
  return out

def tinygrad_matmul(reps: int) -> dict:
  from importlib.metadata import version
  from tinygrad import Tensor as TT, Device as TD  # type: ignore
  tg_version = version("tinygrad")
  def sync(): TD[TD.DEFAULT].synchronize()
  a, b = TT.rand(MM_N, MM_N).realize(), TT.rand(MM_N, MM_N).realize()
  an, bn = a.numpy(), b.numpy()
  st = perf(); c = (a @ b).realize(); sync(); first = perf() - st  # noqa: E702
  out = {"version": tg_version, "device": TD.DEFAULT, "first_realize_s": first,
         "correct": bool(np.allclose(c.numpy(), an.astype(np.float64) @ bn.astype(np.float64), rtol=1e-4, atol=1e-3))}
  ts, nps = [], []
  for _ in range(reps):
    st = perf(); (a @ b).realize(); sync(); ts.append(perf() - st)  # noqa: E702
    nps.append(np_matmul_once(an, bn))
  out["gflops_wall"], out["numpy_gflops"] = 2 * MM_N**3 / median(ts) / 1e9, 2 * MM_N**3 / median(nps) / 1e9
  return out

def child(mode: str, quick: bool) -> dict:
  reps = 5 if quick else 11
  if mode == "tinygrad": return tinygrad_matmul(reps)
  if mode == "beam": return matmul_vs_numpy("CPU", reps)
  if mode == "cl":
    from lazynb import Device
    try: Device["CL"]
    except Exception as e: return {"error": f"{type(e).__name__}: {e}"}
    return {"matmul": matmul_vs_numpy("CL", reps), "chain": chain_vs_numpy("CL", reps)}
  raise ValueError(mode)

def run_child(mode: str, quick: bool, **env) -> dict:
  cmd = [sys.executable, __file__, "--child", mode] + (["--quick"] if quick else [])
  p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT, **env}, timeout=1800)
  if p.returncode != 0: return {"error": (p.stderr.strip().splitlines() or ["?"])[-1], "stderr": p.stderr[-4000:]}
  return json.loads(p.stdout.strip().splitlines()[-1])

def report(R: dict) -> str:
  out = environment_lines(R["environment"]) + [f"load average {R['loadavg_start']} at start, {R['loadavg_end']} at end"]
  cold, warm = R["beam_cold"], R["beam_warm"]
  if "error" in cold or "error" in warm: out.append(f"1. BEAM=2: FAILED: {cold.get('error') or warm.get('error')}")
  else:
    rows = [["BEAM=2, empty cache", f"{cold['first_realize_s']:.1f} s", f"{cold['beam']['seconds']:.1f} s", cold["beam"]["tried"], f"{cold['gflops']:.1f}",
             f"{cold['numpy_gflops']:.1f}", f"{cold['gflops'] / cold['numpy_gflops']:.3f}x", ">= 0.3x, search <= 45 s", "ok" if cold["correct"] else "WRONG"],
            ["BEAM=2, warm cache (new process)", f"{warm['first_realize_s']:.2f} s", "cached" if warm["beam"]["cached"] else "SEARCHED AGAIN", "",
             f"{warm['gflops']:.1f}", f"{warm['numpy_gflops']:.1f}", f"{warm['gflops'] / warm['numpy_gflops']:.3f}x", "< 1 s", "ok" if warm["correct"] else "WRONG"]]
    out += [f"1. BEAM=2, {MM_N}x{MM_N} float32 matmul on CPU (kernel time, median; numpy interleaved in the same process)",
            table(["", "first realize", "search", "kernels tried", "GFLOPS", "numpy GFLOPS", "ratio", "target", "result"], rows),
            f"   chosen opts: {cold['beam']['opts']} -> kernel {cold['kernel']}"]
  cl = R["cl"]
  if "error" in cl: out.append(f"2. CL: not measured ({cl['error']})")
  else:
    mm, ch = cl["matmul"], cl["chain"]
    out += ["2. CL (pyopencl; PoCL on the CPU when there is no GPU), default heuristic",
            table(["", "lazynb", "numpy", "ratio", "result"],
                  [[f"matmul {MM_N}x{MM_N} GFLOPS", f"{mm['gflops']:.1f}", f"{mm['numpy_gflops']:.1f}", f"{mm['gflops'] / mm['numpy_gflops']:.3f}x",
                    "ok" if mm["correct"] else "WRONG"],
                   ["10-op chain GB/s (numpy: one add)", f"{ch['gbs']:.2f}", f"{ch['numpy_add_gbs']:.2f}", f"{ch['gbs'] / ch['numpy_add_gbs']:.3f}x",
                    "ok" if ch["correct"] else "WRONG"]]),
            f"   kernels: {mm['kernel']}, {ch['kernel']}; first matmul realize {mm['first_realize_s']:.2f} s (compile {mm['compile_s']:.2f} s)"]
  if "tinygrad_default" in R:
    rows = []
    for name in ("tinygrad_default", "tinygrad_beam_cold", "tinygrad_beam_warm"):
      t = R[name]
      rows.append([name.replace("_", " "), "FAILED: " + t["error"][:60]] + [""] * 4 if "error" in t else
                  [f"{name.replace('_', ' ')} ({t['version']}, {t['device']})", f"{t['first_realize_s']:.2f} s", f"{t['gflops_wall']:.1f}",
                   f"{t['numpy_gflops']:.1f}", f"{t['gflops_wall'] / t['numpy_gflops']:.3f}x", "ok" if t["correct"] else "WRONG"])
    out += [f"3. tinygrad, {MM_N}x{MM_N} float32 matmul (wall time per realize with a sync; BEAM children share a fresh CACHEDB)",
            table(["", "first realize", "GFLOPS", "numpy GFLOPS", "ratio", "result"], rows)]
  return "\n".join(out)

def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--quick", action="store_true")
  ap.add_argument("--json", metavar="PATH")
  ap.add_argument("--child", choices=["beam", "cl", "tinygrad"], help=argparse.SUPPRESS)
  args = ap.parse_args()
  if args.child: print(json.dumps(child(args.child, args.quick))); return
  R: dict = {"environment": environment(), "loadavg_start": loadavg()}
  with tempfile.TemporaryDirectory() as cache:
    print("BEAM=2, empty cache ...", file=sys.stderr, flush=True)
    R["beam_cold"] = run_child("beam", args.quick, BEAM="2", LAZYNB_CACHE=cache)
    print("BEAM=2, warm cache ...", file=sys.stderr, flush=True)
    R["beam_warm"] = run_child("beam", args.quick, BEAM="2", LAZYNB_CACHE=cache)
  if importlib.util.find_spec("pyopencl") is not None:
    print("CL ...", file=sys.stderr, flush=True)
    R["cl"] = run_child("cl", args.quick)
  else: R["cl"] = {"error": "pyopencl is not installed (pip install pyopencl pocl-binary-distribution)"}
  if importlib.util.find_spec("tinygrad") is not None:
    with tempfile.TemporaryDirectory() as d:
      for name, beam in (("tinygrad_default", "0"), ("tinygrad_beam_cold", "2"), ("tinygrad_beam_warm", "2")):
        print(f"{name} ...", file=sys.stderr, flush=True)
        R[name] = run_child("tinygrad", args.quick, BEAM=beam, CACHEDB=os.path.join(d, "tinygrad.db"))
  R["loadavg_end"] = loadavg()
  print(report(R))
  if args.json:
    with open(args.json, "w") as f: json.dump(R, f, indent=1, default=str)
  checks = [R["beam_cold"].get("correct"), R["beam_warm"].get("correct")] + \
           ([R["cl"]["matmul"]["correct"], R["cl"]["chain"]["correct"]] if "error" not in R["cl"] else [])
  if any(c is False for c in checks): sys.exit(1)

if __name__ == "__main__":
  main()
