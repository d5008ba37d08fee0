"""Run tinygrad's tutorials with `tinygrad` replaced by `lazynb` and say which run to the end (issue 31 item 6): the
scripts docs/abstractions2.py and docs/abstractions3.py, and the Python blocks of docs/quickstart.md and docs/mnist.md,
each page's blocks in order as one script (a `!pip` line dropped). Measurement only: the files are read from a tinygrad
checkout with `git show`, run from a temporary directory, and never written into this repository; nothing is
downloaded. The quickstart imports `extra.datasets.fetch_mnist`, which lives in tinygrad's repository, not its package:
a stand-in written into the temporary directory reads MNIST from $LAZYNB_DATA/mnist as it returns it (flat float32
images, int8 labels). --steps N runs mnist.md's training loop for N steps instead of its 7000 (the quickstart's 1000 steps
take half a minute; its test loops divide by their 1000).

Usage: TINYGRAD_SRC=/path/to/tinygrad/checkout LAZYNB_DATA=<folder with mnist/> python tools/tinygrad_docs_run.py
         [--ref v0.10.3] [--files abstractions2.py quickstart.md ...] [--steps 700]
"""
from __future__ import annotations
import argparse, os, pathlib, re, subprocess, sys, tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = ["abstractions2.py", "abstractions3.py", "quickstart.md", "mnist.md"]
FETCH_MNIST = """import gzip, os, numpy as np  # a stand-in for tinygrad's repo-only extra/datasets (tools/tinygrad_docs_run.py)
def _read(name): return np.frombuffer(gzip.open(os.path.join(os.environ["LAZYNB_DATA"], "mnist", name)).read(), np.uint8)
def fetch_mnist(tensors=False):
  img = lambda n: _read(n)[16:].reshape(-1, 784).astype(np.float32)
  lbl = lambda n: _read(n)[8:].astype(np.int8)
  out = img("train-images-idx3-ubyte.gz"), lbl("train-labels-idx1-ubyte.gz"), img("t10k-images-idx3-ubyte.gz"), lbl("t10k-labels-idx1-ubyte.gz")
  if not tensors: return out
  from lazynb import Tensor
  return Tensor(out[0]).reshape(-1, 1, 28, 28), Tensor(out[1]), Tensor(out[2]).reshape(-1, 1, 28, 28), Tensor(out[3])
"""

def script(name: str, text: str, steps: int | None) -> str:
  """The file as one Python script: a page's ```python blocks in order (its `!pip` lines dropped), mnist.md's loop shortened by --steps."""
  if name.endswith(".md"):
    blocks = re.findall(r"```python[^\n]*\n(.*?)```", text, re.S)
    text = "\n".join("\n".join(ln for ln in b.splitlines() if not ln.lstrip().startswith("!")) for b in blocks)
  return text.replace("range(7000)", f"range({steps})") if steps else text

def source(checkout: str, ref: str, name: str) -> str:
  r = subprocess.run(["git", "-C", checkout, "show", f"{ref}:docs/{name}"], capture_output=True, text=True)
  if r.returncode != 0: raise SystemExit(f"cannot read docs/{name} at {ref} from {checkout}: {r.stderr.strip()} (is TINYGRAD_SRC a git checkout?)")
  return r.stdout

def as_lazynb(src: str) -> str: return re.sub(r"\btinygrad\b", "lazynb", src)

def run(src: str, timeout: float) -> tuple[bool, str]:
  with tempfile.TemporaryDirectory() as d:
    p = pathlib.Path(d) / "walk.py"
    p.write_text(src)
    (pathlib.Path(d) / "extra").mkdir()
    (pathlib.Path(d) / "extra" / "__init__.py").write_text("")
    (pathlib.Path(d) / "extra" / "datasets.py").write_text(FETCH_MNIST)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + d + os.pathsep + os.environ.get("PYTHONPATH", "")}
    try: r = subprocess.run([sys.executable, str(p)], capture_output=True, text=True, timeout=timeout, cwd=d, env=env)
    except subprocess.TimeoutExpired: return False, f"timed out after {timeout}s"
    return r.returncode == 0, (r.stdout + r.stderr)

def main():
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--src", default=os.environ.get("TINYGRAD_SRC"), help="a tinygrad git checkout (default $TINYGRAD_SRC)")
  ap.add_argument("--ref", default="v0.10.3")
  ap.add_argument("--files", nargs="*", default=FILES)
  ap.add_argument("--timeout", type=float, default=1800)
  ap.add_argument("--steps", type=int, default=None, help="run mnist.md's training loop for this many steps instead of its 7000")
  ap.add_argument("-v", "--verbose", action="store_true", help="print each run's output")
  a = ap.parse_args()
  if not a.src: raise SystemExit("say where tinygrad's checkout is: --src PATH or TINYGRAD_SRC=PATH")
  ok = 0
  for name in a.files:
    passed, out = run(as_lazynb(script(name, source(a.src, a.ref, name), a.steps)), a.timeout)
    ok += passed
    tail = out.strip().splitlines()[-1:] if not passed else []
    print(f"{'PASS' if passed else 'FAIL'}  docs/{name} @ {a.ref}" + (f"  -- {tail[0]}" if tail else ""))
    if a.verbose or not passed: print("    " + "\n    ".join(out.strip().splitlines()[-25 if not passed else None:]))
    elif name.endswith(".md"): print("    " + "\n    ".join([ln for ln in out.strip().splitlines() if re.search(r"(?i)accuracy|acc ", ln)][-3:]))
  print(f"{ok}/{len(a.files)} ran to the end")
  sys.exit(0 if ok == len(a.files) else 1)

if __name__ == "__main__": main()
