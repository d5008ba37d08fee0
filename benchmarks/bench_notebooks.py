"""Headless run time of the course notebooks: each notebook executed top to bottom (nbclient, as tests/test_notebooks.py
does, LAZYNB_QUICK=1) with a fresh empty LAZYNB_CACHE, for one or more checkouts of lazynb, run back to back per
notebook so every pair sees about the same machine load.

  PYTHONPATH=. python benchmarks/bench_notebooks.py --checkout before=/path/to/old/worktree --checkout after=. [--json out.json]
  ... [--only 07_pipeline,p05_compiler_pipeline] [--env after:LAZYNB_LOADER=dlopen]

Reported per notebook and checkout: wall seconds, CPU seconds of the notebook kernel and its children (the compilers),
and whether it ran without error; then the totals and the after/before ratio of the totals. A checkout whose notebooks
fail is reported, not hidden (its time is then not comparable).
"""
from __future__ import annotations
import argparse, json, os, pathlib, resource, sys, tempfile, time
from benchenv import environment, environment_lines, loadavg

ROOT = pathlib.Path(__file__).resolve().parents[1]

def child_cpu() -> float:
  r = resource.getrusage(resource.RUSAGE_CHILDREN)
  return r.ru_utime + r.ru_stime

def run_one(path: pathlib.Path, checkout: pathlib.Path, extra_env: dict[str, str]) -> dict:
  import nbclient, nbformat
  saved = dict(os.environ)
  with tempfile.TemporaryDirectory() as cache:
    os.environ.update(LAZYNB_QUICK="1", BEAM_PROGRESS="0", LAZYNB_CACHE=cache, PYTHONPATH=str(checkout), **extra_env)
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=1200, kernel_name="python3", resources={"metadata": {"path": str(checkout / "notebooks")}})
    st, c0, la = time.perf_counter(), child_cpu(), loadavg()
    err = None
    try: client.execute()
    except Exception as e: err = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    wall, cpu = time.perf_counter() - st, child_cpu() - c0
    os.environ.clear()
    os.environ.update(saved)
  errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
  if errors and err is None: err = f"{errors[0].get('ename')}: {errors[0].get('evalue')}"[:200]
  return {"wall": wall, "cpu": cpu, "error": err, "loadavg": [la, loadavg()]}

def main(argv=None):
  ap = argparse.ArgumentParser()
  ap.add_argument("--checkout", action="append", required=True, help="label=path of a lazynb checkout (its notebooks/ are run)")
  ap.add_argument("--env", action="append", default=[], help="label:NAME=value, an environment variable for one checkout's runs")
  ap.add_argument("--only", help="comma-separated notebook names (without .ipynb)")
  ap.add_argument("--json")
  a = ap.parse_args(argv)
  checkouts = {lab: pathlib.Path(p).resolve() for lab, p in (c.split("=", 1) for c in a.checkout)}
  envs: dict[str, dict[str, str]] = {lab: {} for lab in checkouts}
  for e in a.env:
    lab, kv = e.split(":", 1)
    envs[lab][kv.split("=", 1)[0]] = kv.split("=", 1)[1]
  names = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
  if a.only: names = [n for n in names if n in a.only.split(",")]
  env = environment()
  print("\n".join(environment_lines(env)), flush=True)
  R: dict = {"env": env, "checkouts": {k: str(v) for k, v in checkouts.items()}, "envs": envs, "runs": {}}
  print(f"{'notebook':32s} " + " ".join(f"{lab + ' wall s (cpu)':>24s}" for lab in checkouts) + "  load avg")
  for n in names:
    row = {}
    for lab, co in checkouts.items():
      path = co / "notebooks" / f"{n}.ipynb"
      row[lab] = run_one(path, co, envs[lab]) if path.exists() else {"error": "no such notebook in this checkout"}
    R["runs"][n] = row
    cells = [f"{r['wall']:14.1f} ({r['cpu']:6.1f})" + (" ERR" if r["error"] else "    ") if "wall" in r else f"{'missing':>24s}" for r in row.values()]
    las = [r["loadavg"][0][0] for r in row.values() if "loadavg" in r and r["loadavg"][0]]
    print(f"{n:32s} " + " ".join(cells) + f"  {min(las, default=0):.1f}-{max(las, default=0):.1f}", flush=True)
    for lab, r in row.items():
      if r.get("error"): print(f"  {lab}: {r['error']}", file=sys.stderr)
  ok = [n for n in names if all("wall" in r and not r["error"] for r in R["runs"][n].values())]
  tot = {lab: sum(R["runs"][n][lab]["wall"] for n in ok) for lab in checkouts}
  cpu = {lab: sum(R["runs"][n][lab]["cpu"] for n in ok) for lab in checkouts}
  print(f"\ntotal over the {len(ok)} notebooks every checkout ran without error: " + ", ".join(f"{lab} {tot[lab]:.0f} s ({cpu[lab]:.0f} s CPU)" for lab in checkouts))
  labs = list(checkouts)
  for lab in labs[1:]:
    if tot[labs[0]]: print(f"{lab} / {labs[0]}: wall {tot[lab] / tot[labs[0]]:.2f}, CPU {cpu[lab] / cpu[labs[0]]:.2f}")
  if a.json:
    with open(a.json, "w") as f: json.dump(R, f, indent=1)

if __name__ == "__main__": main()
