"""Choose which tests of fast files go to the slow tier, from measured times, so that the fast tier (plain
`python -m pytest`) stays under a time budget on a fresh kernel cache.

    python tools/fast_tier.py            # runs the fast tier on an empty LAZYNB_CACHE with --durations=0 (~5 min)
    python tools/fast_tier.py LOG        # or reads such a run's output
    options: --budget SECONDS (the fast tier's summed test time, default 280: about 2.5 minutes on 2 workers)

It writes tests/slow_tests.txt (read by tests/conftest.py): the slowest tests, each with its time, until the rest sum to
the budget. A parametrized test always keeps its fastest case in the fast tier, and the fuzzers that draw a new seed on
each run (`*random_seed*`) are never moved: they find new bugs in every developer's run. Tests listed already stay listed
while they exist (a test moved out is not timed by the fast run, so it would otherwise come back)."""
from __future__ import annotations
import collections, os, pathlib, re, subprocess, sys, tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "slow_tests.txt"
HEADER = """# Tests of fast files that run in the slow tier (tests/conftest.py reads this file): the longest ones, measured on an
# empty kernel cache, until the fast tier's test time is under its budget. Made by `python tools/fast_tier.py`; each
# parametrized test keeps its fastest case in the fast tier. Seconds measured on 2 cores, fresh cache.
"""

def measure() -> str:
  """The fast tier's output with every test's time, on an empty kernel cache."""
  with tempfile.TemporaryDirectory() as cache:
    env = {**os.environ, "LAZYNB_CACHE": cache}
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--durations=0", "-q"], cwd=ROOT, env=env,
                       capture_output=True, text=True)
  if p.returncode != 0: sys.exit(f"the fast tier failed: fix it first\n{p.stdout[-3000:]}")
  return p.stdout

def times(log: str) -> dict[str, float]:
  """node id (file::name) -> seconds (setup + call + teardown)."""
  out: collections.Counter = collections.Counter()
  for line in log.splitlines():
    if (m := re.match(r"\s*([0-9.]+)s (?:call|setup|teardown)\s+tests/(.+?)\s*$", line)): out[m.group(2)] += float(m.group(1))
  return dict(out)

def choose(t: dict[str, float], budget: float, keep: set[str]) -> dict[str, float]:
  """The tests to move: slowest first, until the rest sum to `budget`; never a parametrized test's last fast case, never
  a fuzzer that draws a new seed each run."""
  fast_cases = collections.Counter(n.split("[")[0] for n in t if "[" in n)  # the fast cases of each parametrized test
  moved: dict[str, float] = {}
  total = sum(t.values())
  for name, s in sorted(t.items(), key=lambda kv: -kv[1]):
    if total <= budget: break
    func = name.split("[")[0]
    if "random_seed" in func or name in keep or fast_cases[func] == 1 and "[" in name: continue
    moved[name], total = s, total - s
    fast_cases[func] -= 1
  return moved

def main():
  args = sys.argv[1:]
  budget = 280.0
  if "--budget" in args:
    i = args.index("--budget")
    budget = float(args[i + 1])
    del args[i:i + 2]
  log = pathlib.Path(args[0]).read_text() if args else measure()
  t = times(log)
  if not t: sys.exit("no test times found: the log needs pytest's --durations=0 output")
  old = {}
  if OUT.exists():
    for line in OUT.read_text().splitlines():
      if line and not line.startswith("#"): old[line.split("  #")[0].strip()] = float(re.findall(r"([0-9.]+) s", line)[0])
  moved = {**old, **choose(t, budget, set())}
  print(f"fast tier: {sum(t.values()):.0f} s of tests measured; {len(moved) - len(old)} more moved to the slow tier "
        f"({sum(v for k, v in moved.items() if k not in old):.0f} s); {sum(v for k, v in t.items() if k not in moved):.0f} s stay")
  OUT.write_text(HEADER + "".join(f"{n}  # {s:.2f} s\n" for n, s in sorted(moved.items())))

if __name__ == "__main__": main()
