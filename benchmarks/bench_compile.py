"""New-kernel latency: what a never-seen small kernel costs before it can run (compile + load), one compiler call per
kernel against one call for a batch of them, for gcc and clang; and what a learner sees, a cell whose schedule has
N new kernels, with and without batching.

  PYTHONPATH=. python benchmarks/bench_compile.py [--kernels 24] [--reps 3] [--json out.json]

Each compiler runs in its own child process (CC=gcc / CC=clang), once per loader (LAZYNB_LOADER=dlopen: a shared library
linked by the compiler driver and dlopen'ed; LAZYNB_LOADER=elf: an object file, `cc -c`, placed by lazynb's loader),
with an empty cache directory. The kernels are small
and all different (elementwise, reductions, a tiny matmul, softmax, float16), rendered first, so codegen is not
counted in the compile+load numbers:
  single     compile one kernel (one compiler process) and load its library: median over the kernels (and apart, the
             median of the load alone: dlopen of the written library, or the object placed and relocated)
  batch      compile all N kernels in one compiler call (ClangCompiler.compile_batch) and load the shared library and
             every kernel's function: total / N, median over reps
  flags      the same single compile with other flags than lazynb's, to see what they would buy (not used for the
             numbers above; dlopen children only: `-nostdlib -lgcc` are link flags)
  schedule   wall time of Tensor.realize for N new kernels in one schedule (schedule, codegen, compile, load, run), with
             batching and with it turned off (the compiler's `batches` flag), each with an empty cache
"""
from __future__ import annotations
import argparse, ctypes, json, os, resource, statistics, subprocess, sys, tempfile, time
from benchenv import environment, environment_lines, loadavg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def kernels(n: int, seed: int):
  """n small computations whose kernels are all new (every one has its own shape, salted by `seed`)."""
  import numpy as np
  from lazynb import Tensor, dtypes
  outs = []
  for i in range(n):
    rows = 3 + i + 50 * seed
    a = Tensor(np.linspace(-1, 1, rows * 5, dtype=np.float32).reshape(rows, 5))
    outs.append([lambda: (a * 2 + 1).relu(), lambda: a.sum(axis=1), lambda: a.exp().max(axis=0), lambda: a @ a.T,
                 lambda: a.softmax(), lambda: a.cast(dtypes.float16) * 3][i % 6]())
  return outs

def programs(n: int, seed: int) -> list:
  """The ProgramSpecs of those kernels, rendered, not compiled."""
  from lazynb import Device
  from lazynb.codegen import get_program
  outs = kernels(n, seed)
  items = outs[0].schedule(*outs[1:])
  return [get_program(si.ast, Device["CPU"].renderer) for si in items if si.kind == "kernel"]

def cc_cpu() -> float:
  """CPU seconds used so far by finished child processes (the compilers): unlike wall time, barely moved by other load."""
  r = resource.getrusage(resource.RUSAGE_CHILDREN)
  return r.ru_utime + r.ru_stime

def child(n: int, reps: int, flags: bool) -> dict:
  from lazynb import Tensor, Device
  from lazynb.engine import realize
  from lazynb.runtime import elfload, ops_cpu
  from lazynb.runtime.ops_cpu import CPUProgram
  Tensor.realize(*kernels(6, 99))  # the device is open, its compiler probes are done
  dev = Device["CPU"]
  comp = dev.compiler
  out: dict = {"args": " ".join(comp.args), "loader": comp.loader}
  # single: one compiler process per kernel; the load is timed apart on the same binary, loaded a second time (an object
  # is placed again: load_object, not the per-hash table; a library is dlopen'ed from a fresh file name)
  progs = programs(n, 1)
  ts, cpu, loads = [], [], []
  for p in progs:
    st, c0 = time.perf_counter(), cc_cpu()
    lib = comp.compile(p.src)
    CPUProgram(p.name, lib)
    ts.append(time.perf_counter() - st)
    cpu.append(cc_cpu() - c0)
    st = time.perf_counter()
    if ops_cpu.is_object(lib): elfload.load_object(lib).function(p.name)
    else:
      with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "k.so"), "wb") as f: f.write(lib)
        getattr(ctypes.CDLL(os.path.join(d, "k.so")), p.name)
    loads.append(time.perf_counter() - st)
  out["single_ms"] = {"median": statistics.median(ts) * 1e3, "min": min(ts) * 1e3, "max": max(ts) * 1e3, "kernels": len(ts),
                      "cc_cpu_median": statistics.median(cpu) * 1e3, "load_median": statistics.median(loads) * 1e3}
  # batch: all in one call
  per, cpu = [], []
  for r in range(reps):
    progs = programs(n, 2 + r)
    named = list({p.src: p.name for p in progs}.items())
    st, c0 = time.perf_counter(), cc_cpu()
    libs = comp.compile_batch([(name, src) for src, name in named])
    for (_, name), lib in zip(named, libs): CPUProgram(name, lib)
    per.append((time.perf_counter() - st) / len(named))
    cpu.append((cc_cpu() - c0) / len(named))
    out["batch_kernels"] = len(named)
  out["batch_ms_per_kernel"] = {"median": statistics.median(per) * 1e3, "all": [round(x * 1e3, 1) for x in per], "cc_cpu_median": statistics.median(cpu) * 1e3}
  out["fallbacks"] = list(comp.fallbacks)  # objects the loader could not place (then compiled as libraries)
  # flags: single compiles with other flags (8 kernels each)
  progs = programs(8, 10)[:8] if flags else []
  base = comp.args
  variants = {"lazynb (-O2)": base, "with -pipe": base + ("-pipe",), "-nostdlib -lgcc": base + ("-nostdlib", "-lgcc"),
              "-O1": tuple("-O1" if a == "-O2" else a for a in base), "-O3": tuple("-O3" if a == "-O2" else a for a in base)}
  out["flags_ms"] = {}
  for vn, args in variants.items():
    comp.args = args
    ts, cpu = [], []
    for p in progs:
      st, c0 = time.perf_counter(), cc_cpu()
      comp.compile(p.src)
      ts.append(time.perf_counter() - st)
      cpu.append(cc_cpu() - c0)
    out["flags_ms"][vn] = {"wall": statistics.median(ts) * 1e3, "cc_cpu": statistics.median(cpu) * 1e3}
  comp.args = base
  # schedule: what a cell with n new kernels costs, batched and not
  for mode, batches in (("batched", True), ("one call per kernel", False)):
    type(comp).batches = batches
    realize.method_cache.clear()
    outs = kernels(n, 20 + batches)
    st = time.perf_counter()
    Tensor.realize(*outs)
    out[f"schedule_s {mode}"] = time.perf_counter() - st
  type(comp).batches = True
  return out

def run_child(cc: str, loader: str, n: int, reps: int, flags: bool) -> dict:
  with tempfile.TemporaryDirectory() as cache:
    env = dict(os.environ, CC=cc, LAZYNB_CACHE=cache, PYTHONPATH=ROOT, LAZYNB_LOADER=loader)
    st = loadavg()
    p = subprocess.run([sys.executable, __file__, "--child", "--kernels", str(n), "--reps", str(reps)] + (["--flags"] if flags else []),
                       env=env, capture_output=True, text=True)
    if p.returncode != 0: return {"error": p.stderr[-2000:]}
    res = json.loads(p.stdout.strip().splitlines()[-1])
    res["loadavg"] = [st, loadavg()]
    return res

def main(argv=None):
  ap = argparse.ArgumentParser()
  ap.add_argument("--kernels", type=int, default=24)
  ap.add_argument("--reps", type=int, default=3)
  ap.add_argument("--json")
  ap.add_argument("--child", action="store_true")
  ap.add_argument("--flags", action="store_true", help="also time other compiler flags (in the dlopen children)")
  ap.add_argument("--loaders", default="dlopen,elf", help="LAZYNB_LOADER values to compare, in this order")
  a = ap.parse_args(argv)
  if a.child:
    print(json.dumps(child(a.kernels, a.reps, a.flags)))
    return
  loaders = a.loaders.split(",")
  env = environment()
  print("\n".join(environment_lines(env)), flush=True)
  R: dict = {"env": env, "kernels": a.kernels}
  runs = [(cc, ld) for cc in ("gcc", "clang") for ld in loaders]
  for cc, ld in runs:
    print(f"{cc}, {ld} ...", file=sys.stderr, flush=True)
    R[f"{cc} {ld}"] = run_child(cc, ld, a.kernels, a.reps, a.flags and ld == "dlopen")
  print("\nnew small kernels, compile + load (rendered beforehand), wall time (compiler CPU time in brackets)")
  print(f"{'':13s} {'single, median':>20s} {'load alone':>11s} {f'batch of {a.kernels}, per kernel':>25s} {f'{a.kernels}-kernel schedule: batched':>32s} "
        f"{'one call each':>14s}  load avg before / after")
  for cc, ld in runs:
    r = R[f"{cc} {ld}"]
    if "error" in r: print(f"{cc} {ld}: FAILED {r['error']}"); continue  # noqa: E702
    sm, bm = r["single_ms"], r["batch_ms_per_kernel"]
    print(f"{cc + ' ' + ld:13s} {sm['median']:9.1f} ms ({sm['cc_cpu_median']:5.1f}) {sm['load_median']:8.2f} ms {bm['median']:14.1f} ms ({bm['cc_cpu_median']:5.1f}) "
          f"{r['schedule_s batched']:30.2f} s {r['schedule_s one call per kernel']:12.2f} s  {r['loadavg'][0]} / {r['loadavg'][1]}"
          + (f"  fallbacks: {len(r['fallbacks'])}" if r["fallbacks"] else ""))
  for cc, ld in runs:
    r = R[f"{cc} {ld}"]
    if "error" not in r and "error" not in R.get(f"{cc} dlopen", {"error": 1}) and ld != "dlopen":
      d = R[f"{cc} dlopen"]
      print(f"{cc}: {ld} / dlopen, single: {r['single_ms']['median'] / d['single_ms']['median']:.2f}, "
            f"batch per kernel: {r['batch_ms_per_kernel']['median'] / d['batch_ms_per_kernel']['median']:.2f}")
  if a.flags:
    print("\nsingle compile by flags (dlopen), median of 8 kernels: wall ms (compiler CPU ms)")
    for cc in ("gcc", "clang"):
      if "error" not in R.get(f"{cc} dlopen", {"error": 1}): print(f"{cc:6s} " + ", ".join(f"{k}: {v['wall']:.1f} ({v['cc_cpu']:.1f})" for k, v in R[f"{cc} dlopen"]["flags_ms"].items()))
  if a.json:
    with open(a.json, "w") as f: json.dump(R, f, indent=1)

if __name__ == "__main__": main()
