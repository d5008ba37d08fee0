"""Where a benchmark ran, printed at the top of every benchmarks/*.py report: CPU model and the vector features that
change the numbers (a ratio from an AVX-512 machine is not comparable with one from an AVX2 machine), the C compiler
lazynb uses and its version, the knobs that change its code, and the load average (2-core machines here are shared).

  from benchenv import environment, environment_lines
"""
from __future__ import annotations
import os, platform, shutil, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FEATURES = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile")

def _cpuinfo() -> tuple[str, list[str]]:
  model, flags = platform.processor() or "?", set()
  try:
    with open("/proc/cpuinfo") as f:
      for ln in f:
        if ln.startswith("model name") and model in ("?", "", platform.processor()): model = ln.split(":", 1)[1].strip()
        elif ln.startswith("flags"): flags = set(ln.split(":", 1)[1].split())
  except OSError: pass
  return model, [f for f in FEATURES if f in flags]

def compiler_version(cc: str) -> str:
  try: out = subprocess.run(cc.split() + ["--version"], capture_output=True, text=True, timeout=30).stdout.splitlines()
  except OSError as e: return f"not runnable ({e})"
  return out[0] if out else "?"

def loadavg() -> list[float] | None:
  try: return [round(x, 2) for x in os.getloadavg()]
  except OSError: return None

def environment() -> dict:
  """The facts, as a dict (for --json)."""
  if ROOT not in sys.path: sys.path.insert(0, ROOT)
  model, feats = _cpuinfo()
  try:
    from lazynb.runtime.ops_cpu import find_cc, knobs
    cc, (march, half) = find_cc(), knobs()
  except Exception as e: cc, march, half = f"? ({type(e).__name__}: {e})", "?", "?"
  try: commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
  except OSError: commit = "?"
  return {"cpu_model": model, "cpu_features": feats, "nproc": os.cpu_count(), "python": platform.python_version(),
          "cc": cc, "cc_version": compiler_version(cc) if shutil.which(cc.split()[0]) else "not found",
          "other_compilers": {c: compiler_version(c) for c in ("gcc", "clang") if shutil.which(c) and c != cc},
          "march": march, "half": half, "threads": os.environ.get("THREADS"), "loadavg": loadavg(), "git_commit": commit}

def environment_lines(env: dict | None = None) -> list[str]:
  """The facts, as report lines."""
  e = env if env is not None else environment()
  busy = e["loadavg"] is not None and e["loadavg"][0] > 0.5 * (e["nproc"] or 1)
  return [f"machine: {e['cpu_model']}, {e['nproc']} cores, features: {' '.join(e['cpu_features']) or 'none of ' + ' '.join(FEATURES)}",
          f"C compiler: {e['cc']} ({e['cc_version']}); LAZYNB_MARCH={e['march']}, LAZYNB_HALF={e['half']}, THREADS={e['threads'] or 'default'}"
          + "".join(f"; also {c}: {v}" for c, v in e["other_compilers"].items()),
          f"load average (1, 5, 15 min): {e['loadavg']}{'  -- BUSY: other processes compete for the cores' if busy else ''}; "
          f"python {e['python']}, lazynb commit {e['git_commit']}"]

if __name__ == "__main__": print("\n".join(environment_lines()))
