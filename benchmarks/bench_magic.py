"""What the %%tinygrad magic costs: a 20-kernel cell run plainly vs under the magic's recorder (warm
kernel cache, so compile time is not counted), the time to build the trace document and to pack it into the
cell's output (lazynb.notebook.html.bundle), and the size of that output, as a notebook saves it, for a cell whose lazy
graph has ~2,000 nodes.

  PYTHONPATH=. python benchmarks/bench_magic.py [--json out.json]
"""
from __future__ import annotations
import argparse, json, statistics, time
from lazynb import Tensor
from benchenv import environment, environment_lines
from lazynb.notebook.magic import run_code, effective, parse_args

CELL_20 = """
x = a
for i in range(20):
  x = (x * 1.0001 + 0.5).realize()   # one kernel each
"""

def timed(fn, n: int = 7) -> float:
  ts = []
  for _ in range(n):
    st = time.perf_counter()
    fn()
    ts.append(time.perf_counter() - st)
  return statistics.median(ts)

def main(argv=None) -> dict:
  ap = argparse.ArgumentParser()
  ap.add_argument("--json")
  args = ap.parse_args(argv)
  env = environment()
  print("\n".join(environment_lines(env)))
  ns = {"Tensor": Tensor, "a": Tensor.rand(256, 256).realize()}
  code = compile(CELL_20, "<cell>", "exec")
  exec(code, ns)  # warm: compile the kernel once
  plain = timed(lambda: exec(code, ns))
  s = effective(parse_args("--no-controls --show schedule,graph,shapetracker,kernels,timing"))
  recorded = timed(lambda: run_code(CELL_20, ns, s))
  run = run_code(CELL_20, ns, s)
  doc_t = timed(lambda: (setattr(run.trace, "_doc", None), run.trace.to_json()), 3)
  from lazynb.notebook.html import bundle
  out_t = timed(lambda: bundle(run.trace.to_json(), "", script=False), 3)
  # a 2,000-node lazy graph
  big_cell = "y = b\nfor i in range(400): y = y.reshape(16, 16).permute(1, 0).reshape(256).relu()\ny.realize()"
  ns["b"] = Tensor.rand(256).realize()
  big = run_code(big_cell, ns, s)
  doc = big.trace.to_json()
  nodes = max(g["total_nodes"] for g in doc["graphs"].values())
  json_bytes = len(json.dumps(doc))
  out_bytes = len(json.dumps(bundle(doc, "", script=False)))  # what a notebook saves of the output
  res = {"environment": env, "cell_kernels": sum(k["runs"] for k in run.trace.to_json()["kernels"]),
         "plain_s": plain, "recorded_s": recorded, "overhead_ratio": recorded / plain - 1, "to_json_s": doc_t, "bundle_s": out_t,
         "big_graph_nodes": nodes, "big_json_bytes": json_bytes, "big_output_bytes": out_bytes}
  print(f"20-kernel cell: plain {plain * 1e3:.2f} ms, under the recorder {recorded * 1e3:.2f} ms "
        f"(overhead {res['overhead_ratio'] * 100:.1f}%, goal <= 10%)")
  print(f"building the trace document {doc_t * 1e3:.1f} ms, packing it into an output {out_t * 1e3:.1f} ms (after the cell ran)")
  print(f"{nodes}-node graph: JSON {json_bytes / 1e3:.0f} kB, the output as saved {out_bytes / 1e3:.0f} kB (bounded)")
  if args.json:
    with open(args.json, "w") as f: json.dump(res, f, indent=1)
  return res

if __name__ == "__main__": main()
