"""Run tinygrad's tutorial scripts (docs/abstractions2.py, docs/abstractions3.py) with `tinygrad` replaced by `lazynb`
and say which run to the end (issue 31 item 6). Measurement only: the files are read from a tinygrad checkout with
`git show`, run from a temporary directory, and never written into this repository; nothing is downloaded.

Usage: TINYGRAD_SRC=/path/to/tinygrad/checkout python tools/tinygrad_docs_run.py [--ref v0.10.3] [--files abstractions2.py ...]
"""
from __future__ import annotations
import argparse, os, pathlib, re, subprocess, sys, tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = ["abstractions2.py", "abstractions3.py"]

def source(checkout: str, ref: str, name: str) -> str:
  r = subprocess.run(["git", "-C", checkout, "show", f"{ref}:docs/{name}"], capture_output=True, text=True)
  if r.returncode != 0: raise SystemExit(f"cannot read docs/{name} at {ref} from {checkout}: {r.stderr.strip()} (is TINYGRAD_SRC a git checkout?)")
  return r.stdout

def as_lazynb(src: str) -> str: return re.sub(r"\btinygrad\b", "lazynb", src)

def run(src: str, timeout: float) -> tuple[bool, str]:
  with tempfile.TemporaryDirectory() as d:
    p = pathlib.Path(d) / "walk.py"
    p.write_text(src)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    try: r = subprocess.run([sys.executable, str(p)], capture_output=True, text=True, timeout=timeout, cwd=d, env=env)
    except subprocess.TimeoutExpired: return False, f"timed out after {timeout}s"
    return r.returncode == 0, (r.stdout + r.stderr)

def main():
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--src", default=os.environ.get("TINYGRAD_SRC"), help="a tinygrad git checkout (default $TINYGRAD_SRC)")
  ap.add_argument("--ref", default="v0.10.3")
  ap.add_argument("--files", nargs="*", default=FILES)
  ap.add_argument("--timeout", type=float, default=600)
  ap.add_argument("-v", "--verbose", action="store_true", help="print each run's output")
  a = ap.parse_args()
  if not a.src: raise SystemExit("say where tinygrad's checkout is: --src PATH or TINYGRAD_SRC=PATH")
  ok = 0
  for name in a.files:
    passed, out = run(as_lazynb(source(a.src, a.ref, name)), a.timeout)
    ok += passed
    tail = out.strip().splitlines()[-1:] if not passed else []
    print(f"{'PASS' if passed else 'FAIL'}  docs/{name} @ {a.ref}" + (f"  -- {tail[0]}" if tail else ""))
    if a.verbose or not passed: print("    " + "\n    ".join(out.strip().splitlines()[-25 if not passed else None:]))
  print(f"{ok}/{len(a.files)} ran to the end")
  sys.exit(0 if ok == len(a.files) else 1)

if __name__ == "__main__": main()
