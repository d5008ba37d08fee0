"""float16 on the CPU device: the compiler's _Float16 (LAZYNB_HALF=auto, when the half probe passes) against the
emulation (LAZYNB_HALF=emulate: 16 bits in memory, float in registers), with numpy's float16 in the same run.

    PYTHONPATH=. python benchmarks/bench_half.py [--n 4194304] [--reps 15]

A benchmark, not a test: nothing fails on a slow number, but a wrong result does (exit code 1). Each mode runs in a
child process of its own (the knobs are read when the device opens), interleaved round by round; kernel time only
(the run after a warm-up), median over the rounds.
"""
from __future__ import annotations
import argparse, json, os, statistics, subprocess, sys, time
import numpy as np
from benchenv import environment_lines

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

def child(n: int) -> None:
  """One round in this process: time (a*b+c) and a 256x256 half matmul, check both against numpy."""
  sys.path.insert(0, ROOT)
  from lazynb import Tensor, Device
  rng = np.random.default_rng(0)
  a, b, c = (rng.standard_normal(n).astype(np.float16) for _ in range(3))
  x, y = (rng.standard_normal((256, 256)).astype(np.float16) for _ in range(2))
  ta, tb, tc, tx, ty = (Tensor(v) for v in (a, b, c, x, y))
  out = {"native": Device["CPU"].compiler.half_native()}
  for name, make, want in (("a*b+c", lambda: ta * tb + tc, a * b + c), ("matmul 256", lambda: tx @ ty, None)):
    make().realize()  # compile and warm up
    st = time.perf_counter()
    got = make().realize()
    out[name] = time.perf_counter() - st
    g = got.numpy()
    ok = np.array_equal(g, want) if want is not None else np.allclose(g.astype(np.float32), x.astype(np.float32) @ y.astype(np.float32), rtol=2e-2, atol=0.2)
    if not ok: out["wrong"] = name
  print(json.dumps(out))

def numpy_round(n: int) -> dict:
  rng = np.random.default_rng(0)
  a, b, c = (rng.standard_normal(n).astype(np.float16) for _ in range(3))
  x, y = (rng.standard_normal((256, 256)).astype(np.float16) for _ in range(2))
  st = time.perf_counter(); a * b + c; t1 = time.perf_counter() - st
  st = time.perf_counter(); x @ y; t2 = time.perf_counter() - st
  return {"a*b+c": t1, "matmul 256": t2}

def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--n", type=int, default=4 << 20)
  ap.add_argument("--reps", type=int, default=15)
  ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
  args = ap.parse_args()
  if args.child: return child(args.n)
  print("\n".join(environment_lines()))
  runs: dict[str, list[dict]] = {"auto": [], "emulate": [], "numpy": []}
  for _ in range(args.reps):
    for mode in ("auto", "emulate"):
      env = dict(os.environ, LAZYNB_HALF=mode, PYTHONPATH=ROOT)
      p = subprocess.run([sys.executable, __file__, "--child", "--n", str(args.n)], env=env, capture_output=True, text=True)
      if p.returncode != 0: sys.exit(f"LAZYNB_HALF={mode} failed:\n{p.stderr}")
      runs[mode].append(json.loads(p.stdout.strip().splitlines()[-1]))
    runs["numpy"].append(numpy_round(args.n))
  bad = [f"LAZYNB_HALF={m}: {r['wrong']} differs from numpy" for m in ("auto", "emulate") for r in runs[m] if "wrong" in r]
  print(f"\nfloat16, n = {args.n:,}, median of {args.reps} (ms); auto computes with _Float16: {runs['auto'][0]['native']}")
  print(f"{'case':<12} {'auto':>9} {'emulate':>9} {'numpy':>9} {'emulate/auto':>13}")
  for case in ("a*b+c", "matmul 256"):
    med = {m: statistics.median(r[case] for r in runs[m]) * 1e3 for m in runs}
    print(f"{case:<12} {med['auto']:9.2f} {med['emulate']:9.2f} {med['numpy']:9.2f} {med['emulate'] / med['auto']:12.1f}x")
  if bad: sys.exit("WRONG RESULTS: " + "; ".join(sorted(set(bad))))

if __name__ == "__main__": main()
