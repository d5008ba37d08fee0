"""New-kernel latency: what a never-seen small kernel costs before it can run (compile + load), one compiler call per
kernel against one call for a batch of them, for gcc and clang, loaded both ways; and what a learner sees, a cell whose
schedule has N new kernels, with and without batching.

  PYTHONPATH=. python benchmarks/bench_compile.py [--kernels 24] [--reps 3] [--flags] [--json out.json]

Each compiler runs in its own child process (CC=gcc / CC=clang) with an empty cache directory. In it, one ClangCompiler
per loader: dlopen (`cc -shared`: the compiler driver links a shared library, ctypes dlopens it) and elf (`cc -c`: an
object file, placed by lazynb's loader, runtime/elfload.py). The loaders take turns kernel by kernel (the first one
alternating), so both see the same load on a shared machine; the compilers' CPU time (rusage of the finished child
processes) is reported next to wall time, as it moves much less with load. Sections:
  tiny       a one-line kernel (a new constant each time): median compile + load over 15
  single     the N small kernels lazynb renders for a mixed cell (elementwise, reductions, a tiny matmul, softmax,
             float16), rendered first so codegen is not counted, each compiled alone (one compiler process) and
             loaded: median over the kernels; and apart, the median of the load alone (the object placed and relocated
             again; or the library written to a new file and dlopen'ed, as lazynb does)
  batch      all N kernels in one compiler call (ClangCompiler.compile_batch), the binary loaded and every function
             taken: total / N, median over reps
  schedule   wall time of Tensor.realize for N new kernels in one schedule (schedule, codegen, compile, load, run), with
             batching and with it turned off (the compiler's `batches` flag), empty cache
  paced      at a learner's pace: a pause before each new kernel, so the compiler started ahead of time (see
             runtime/compiler_process.py) has started; the N small kernels compiled + loaded (elf), and 12 new one-kernel
             cells realized, with LAZYNB_CC_PRESTART=1 and 0 taking turns. (The sections above run back to back: there
             the next compiler has only the previous compile's time to start.)
  flags      (--flags) single compiles with other flags than lazynb's, dlopen path, to see what they would buy
  llvm       the LLVM device (no compiler process: llvmlite inside this process, the object placed by the same loader):
             the one-line kernel and the N small kernels rendered as LLVM IR, compile + load each; and the schedule of
             N new kernels realized on it
"""
from __future__ import annotations
import argparse, ctypes, json, os, resource, statistics, subprocess, sys, tempfile, time
from benchenv import environment, environment_lines, loadavg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOADERS = ("dlopen", "elf")

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

def med(xs: list[float]) -> float: return statistics.median(xs) * 1e3

def child(n: int, reps: int, flags: bool) -> dict:
  from lazynb import Tensor, Device
  from lazynb.engine import realize
  from lazynb.runtime import elfload, ops_cpu
  from lazynb.runtime.ops_cpu import ClangCompiler, CPUProgram
  Tensor.realize(*kernels(6, 99))  # the device is open, its compiler probes are done
  dev = Device["CPU"]
  comps = {}
  for ld in LOADERS:
    os.environ["LAZYNB_LOADER"] = ld
    comps[ld] = ClangCompiler()
  out: dict = {"args": " ".join(comps["dlopen"].args)}
  def timed(ld: str, fn):
    st, c0 = time.perf_counter(), cc_cpu()
    res = fn()
    return res, time.perf_counter() - st, cc_cpu() - c0
  def turns(i: int): return LOADERS if i % 2 == 0 else LOADERS[::-1]
  # tiny: a one-line kernel
  T: dict = {ld: ([], []) for ld in LOADERS}
  for i in range(15):
    for ld in turns(i):
      src = f"void k(float* restrict a) {{ for (int i = 0; i < 16; i++) a[i] = a[i] * {i + 1}.{len(ld)}f + 1.0f; }}"
      _, w, c = timed(ld, lambda: CPUProgram("k", comps[ld].compile(src)))  # noqa: B023
      T[ld][0].append(w)
      T[ld][1].append(c)
  out["tiny_ms"] = {ld: {"median": med(w), "cc_cpu_median": med(c)} for ld, (w, c) in T.items()}
  # single: one compiler process per kernel
  progs = programs(n, 1)
  S: dict = {ld: ([], [], []) for ld in LOADERS}
  for i, p in enumerate(progs):
    for ld in turns(i):
      lib, w, c = timed(ld, lambda: comps[ld].compile(p.src))  # noqa: B023
      _, w2, _ = timed(ld, lambda: CPUProgram(p.name, lib))  # noqa: B023
      st = time.perf_counter()
      if ops_cpu.is_object(lib): elfload.load_object(lib).function(p.name)
      else:
        with tempfile.TemporaryDirectory() as d:
          with open(os.path.join(d, "k.so"), "wb") as f: f.write(lib)
          getattr(ctypes.CDLL(os.path.join(d, "k.so")), p.name)
      S[ld][0].append(w + w2)
      S[ld][1].append(c)
      S[ld][2].append(time.perf_counter() - st)
  out["single_ms"] = {ld: {"median": med(w), "min": min(w) * 1e3, "max": max(w) * 1e3, "kernels": len(w), "cc_cpu_median": med(c),
                           "load_median": med(lo)} for ld, (w, c, lo) in S.items()}
  # batch: all in one call
  B: dict = {ld: ([], []) for ld in LOADERS}
  for r in range(reps):
    for j, ld in enumerate(turns(r)):
      progs = programs(n, 2 + 2 * r + j)
      named = list({p.src: p.name for p in progs}.items())
      def batch():
        libs = comps[ld].compile_batch([(name, src) for src, name in named])  # noqa: B023
        for (_, name), lib in zip(named, libs): CPUProgram(name, lib)  # noqa: B023
      _, w, c = timed(ld, batch)
      B[ld][0].append(w / len(named))
      B[ld][1].append(c / len(named))
      out["batch_kernels"] = len(named)
  out["batch_ms_per_kernel"] = {ld: {"median": med(w), "all": [round(x * 1e3, 1) for x in w], "cc_cpu_median": med(c)} for ld, (w, c) in B.items()}
  out["fallbacks"] = {ld: list(comps[ld].fallbacks) for ld in LOADERS}  # objects the loader could not place
  # schedule: what a cell with n new kernels costs, batched and not
  seed = 40
  for mode, batches in (("batched", True), ("one call per kernel", False)):
    for ld in LOADERS:
      dev.compiler = comps[ld]
      ClangCompiler.batches = batches
      realize.method_cache.clear()
      outs = kernels(n, seed := seed + 1)
      st = time.perf_counter()
      Tensor.realize(*outs)
      out[f"schedule_s {mode} {ld}"] = time.perf_counter() - st
  ClangCompiler.batches = True
  # paced: at a learner's pace, a pause before each new kernel, so a compiler started ahead has started
  out.update(paced(n, dev, timed))
  # flags: single compiles with other flags (8 kernels each), dlopen path
  if flags:
    comp, progs = comps["dlopen"], programs(8, 10)[:8]
    base = comp.args
    variants = {"lazynb (-O2)": base, "with -pipe": base + ("-pipe",), "-nostdlib -lgcc": base + ("-nostdlib", "-lgcc"),
                "-O1": tuple("-O1" if a == "-O2" else a for a in base), "-O3": tuple("-O3" if a == "-O2" else a for a in base)}
    out["flags_ms"] = {}
    for vn, args in variants.items():
      comp.args = args
      F = [timed("dlopen", lambda: comp.compile(p.src))[1:] for p in progs]  # noqa: B023
      out["flags_ms"][vn] = {"wall": med([w for w, _ in F]), "cc_cpu": med([c for _, c in F])}
    comp.args = base
  return out

PAUSE = 0.3  # seconds between new kernels in the paced section (a learner types for longer)

def paced(n: int, dev, timed) -> dict:
  """The N small kernels compiled + loaded one at a time (elf loader) after a pause, and 12 one-kernel cells realized
  after a pause (schedule, codegen, compile, load, run: what a learner waits for), with the next compiler started
  ahead (LAZYNB_CC_PRESTART=1) and without (0), taking turns."""
  from lazynb import Tensor
  from lazynb.runtime.ops_cpu import ClangCompiler, CPUProgram
  os.environ["LAZYNB_LOADER"] = "elf"
  comps = {}
  for ps in ("1", "0"):
    os.environ["LAZYNB_CC_PRESTART"] = ps
    comps[ps] = ClangCompiler()
  def turns(i: int): return ("1", "0") if i % 2 == 0 else ("0", "1")
  K: dict = {ps: [] for ps in comps}
  for i, p in enumerate(programs(n, 3)):
    for ps in turns(i):
      time.sleep(PAUSE)
      K[ps].append(timed("elf", lambda: CPUProgram(p.name, comps[ps].compile(p.src)))[1])  # noqa: B023
  C: dict = {ps: [] for ps in comps}
  import numpy as np
  a = Tensor(np.linspace(-1, 1, 40, dtype=np.float32).reshape(8, 5)).realize()
  for i in range(12):
    for ps in turns(i):
      dev.compiler = comps[ps]
      out = (a * (i + 0.5 + 0.25 * int(ps)) + 1).relu().sum(axis=1)
      time.sleep(PAUSE)
      C[ps].append(timed("elf", lambda: out.realize())[1])  # noqa: B023
  name = {"1": "prestart", "0": "no prestart"}
  return {"paced_ms": {name[ps]: {"kernel_median": med(K[ps]), "kernel_min": min(K[ps]) * 1e3, "kernel_max": max(K[ps]) * 1e3,
                                  "cell_median": med(C[ps])} for ps in comps}}

def llvm_child(n: int) -> dict:
  """The LLVM device: the same three measurements, in-process."""
  import numpy as np
  from lazynb import Tensor, Device
  from lazynb.codegen import get_program
  from lazynb.runtime.ops_cpu import CPUProgram
  Device.DEFAULT = "LLVM"  # kernels() builds its tensors there
  dev = Device["LLVM"]
  Tensor.realize(*kernels(6, 99))
  def compile_load(p) -> float:
    st = time.perf_counter()
    CPUProgram(p.name, dev.compiler.compile(p.src))
    return time.perf_counter() - st
  def rendered(outs) -> list:
    return [get_program(si.ast, dev.renderer) for si in outs[0].schedule(*outs[1:]) if si.kind == "kernel"]
  a = Tensor(np.linspace(-1, 1, 16, dtype=np.float32)).realize()
  tiny = [compile_load(rendered([a * (i + 1.5) + 1])[0]) for i in range(15)]
  single = [compile_load(p) for p in rendered(kernels(n, 1))]
  outs = kernels(n, 41)
  st = time.perf_counter()
  Tensor.realize(*outs)
  return {"tiny_ms": med(tiny), "single_ms": med(single), "single_min_ms": min(single) * 1e3, "single_max_ms": max(single) * 1e3,
          "kernels": len(single), "schedule_s": time.perf_counter() - st, "pipeline": "O2, SLP vectorizer, no loop vectorizer",
          "llvm": ".".join(map(str, llvm_version()))}

def llvm_version() -> tuple:
  import llvmlite.binding
  return llvmlite.binding.llvm_version_info

def run_child(cc: str, n: int, reps: int, flags: bool, llvm: bool = False) -> dict:
  with tempfile.TemporaryDirectory() as cache:
    env = dict(os.environ, LAZYNB_CACHE=cache, PYTHONPATH=ROOT, **({"CC": cc} if cc else {}))
    st = loadavg()
    p = subprocess.run([sys.executable, __file__, "--llvm-child" if llvm else "--child", "--kernels", str(n), "--reps", str(reps)] + (["--flags"] if flags else []),
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
  ap.add_argument("--flags", action="store_true", help="also time other compiler flags (dlopen path)")
  ap.add_argument("--llvm-child", action="store_true", help=argparse.SUPPRESS)
  a = ap.parse_args(argv)
  if a.child:
    print(json.dumps(child(a.kernels, a.reps, a.flags)))
    return
  if a.llvm_child:
    print(json.dumps(llvm_child(a.kernels)))
    return
  env = environment()
  print("\n".join(environment_lines(env)), flush=True)
  R: dict = {"env": env, "kernels": a.kernels}
  for cc in ("gcc", "clang"):
    print(f"{cc} ...", file=sys.stderr, flush=True)
    R[cc] = run_child(cc, a.kernels, a.reps, a.flags)
  print("llvm ...", file=sys.stderr, flush=True)
  R["llvm"] = run_child("", a.kernels, a.reps, False, llvm=True)
  print("\nnew kernels, compile + load, wall ms (compiler CPU ms in brackets); schedules in s")
  print(f"{'':13s} {'one-line kernel':>18s} {f'{a.kernels} small, median':>20s} {'load alone':>11s} {'batch, per kernel':>18s} "
        f"{'schedule: batched':>18s} {'one call each':>14s}")
  for cc in ("gcc", "clang"):
    r = R[cc]
    if "error" in r: print(f"{cc}: FAILED {r['error']}"); continue  # noqa: E702
    for ld in LOADERS:
      t, sm, bm = r["tiny_ms"][ld], r["single_ms"][ld], r["batch_ms_per_kernel"][ld]
      print(f"{cc + ' ' + ld:13s} {t['median']:8.1f} ({t['cc_cpu_median']:5.1f}) {sm['median']:10.1f} ({sm['cc_cpu_median']:5.1f}) {sm['load_median']:8.2f} ms "
            f"{bm['median']:8.1f} ({bm['cc_cpu_median']:5.1f}) {r[f'schedule_s batched {ld}']:16.2f} s {r[f'schedule_s one call per kernel {ld}']:12.2f} s"
            + (f"  fallbacks: {len(r['fallbacks'][ld])}" if r["fallbacks"][ld] else ""))
    q = lambda k, f="median": r[k]["elf"][f] / r[k]["dlopen"][f]  # noqa: E731
    print(f"{cc}: elf / dlopen  one-line {q('tiny_ms'):.2f} (CPU {q('tiny_ms', 'cc_cpu_median'):.2f}), small {q('single_ms'):.2f} "
          f"(CPU {q('single_ms', 'cc_cpu_median'):.2f}), batch {q('batch_ms_per_kernel'):.2f} (CPU {q('batch_ms_per_kernel', 'cc_cpu_median'):.2f}); "
          f"load avg {r['loadavg'][0]} -> {r['loadavg'][1]}")
  print(f"\nat a learner's pace ({PAUSE} s before each): a new small kernel, compile + load (elf), median [min-max] over "
        f"{a.kernels}; a new one-kernel cell, Tensor.realize, median over 12; ms")
  for cc in ("gcc", "clang"):
    if "error" in R[cc]: continue
    print(f"{cc:6s} " + "; ".join(f"{k}: kernel {v['kernel_median']:.1f} [{v['kernel_min']:.1f}-{v['kernel_max']:.1f}], cell {v['cell_median']:.1f}"
                                 for k, v in R[cc]["paced_ms"].items()))
  r = R["llvm"]
  if "error" in r: print(f"llvm: FAILED {r['error']}")
  else: print(f"{'llvm ' + r['llvm']:13s} {r['tiny_ms']:8.1f}{'':8s} {r['single_ms']:10.1f}{'':8s} {'-':>8s}    {'(no process)':>18s} "
              f"{r['schedule_s']:16.2f} s   (in-process: {r['pipeline']}; small kernels {r['single_min_ms']:.1f}-{r['single_max_ms']:.1f} ms)")
  if a.flags:
    print("\nsingle compile by flags (dlopen), median of 8 kernels: wall ms (compiler CPU ms)")
    for cc in ("gcc", "clang"):
      if "error" not in R[cc]: print(f"{cc:6s} " + ", ".join(f"{k}: {v['wall']:.1f} ({v['cc_cpu']:.1f})" for k, v in R[cc]["flags_ms"].items()))
  if a.json:
    with open(a.json, "w") as f: json.dump(R, f, indent=1)

if __name__ == "__main__": main()
