"""Course Project 5: inspect the compiler, stage by stage, with checks.

  python examples/project5_compiler_pipeline.py [--size 128] [--beam 2] [--html trace.html]

1. schedule: a 6-op graph, the AST of every kernel, and why each cut was made
2. the graph (tinygrad's VIZ=1 opens a browser; lazynb draws the same graphs in the notebook with %%tinygrad,
   and here, with --html, as one self-contained page of the same view, lazynb.notebook.viz.page): elementwise, reduce and
   loop nodes of a matmul kernel
3. the IR stages (what DEBUG=4 prints): kernel AST -> opts -> lowered (index math, loops) -> linearized list
4. algebraic rewrites: x * 1 + 0 with NOOPT=1 and without. NOOPT turns off kernel *optimizations* (tiling,
   unrolling); the algebraic simplifier always runs, so both kernels are a plain copy
5. BEAM search on a matmul: BEAM=0 (hand-coded heuristic) vs BEAM=2, runtime and the tile sizes BEAM chose
   (the course suggests 1024x1024; on a small CPU that search takes minutes, so the default here is 128)

The course's tinygrad prints IR with DEBUG=4; lazynb does too (`with Context(DEBUG=4)`), and every stage is
also on the trace bus (lazynb.trace.Recorder), which is what the checks below read.
"""
from __future__ import annotations
import argparse, os, time
import numpy as np
from lazynb import Tensor, Context, GlobalCounters
from lazynb.trace import Recorder, capture
from lazynb.uop import Ops

def ops_in(u) -> set[str]: return {n.op.name for n in u.toposort()}

def task1_schedule():
  print("== 1. the schedule of ((x @ y).relu() + 1).sum(axis=0).softmax()")
  x, y = Tensor.rand(8, 8).realize(), Tensor.rand(8, 8).realize()
  out = ((x @ y).relu() + 1).sum(axis=0).softmax()
  sched = out.schedule()
  for i, si in enumerate(sched):
    reduces = [f"{u.arg[0].name}{u.arg[1]}" for u in si.ast.toposort() if u.op is Ops.REDUCE_AXIS]
    alus = sorted({u.op.name for u in si.ast.toposort() if u.op in (Ops.ADD, Ops.MUL, Ops.MAX, Ops.WHERE, Ops.EXP2, Ops.RECIP, Ops.CMPLT)})
    print(f"  kernel {i}: reason={si.reason:8s} reduce={reduces} alu={alus} bufs={len(si.bufs)}")
  print("  AST of kernel 0 (the matmul):")
  print("   ", str(sched[0].ast).replace("\n", "\n    "))
  # why: matmul = reduce #1. relu, +1 fuse into the kernel of the sum(axis=0) (reduce #2), but a kernel holds
  # one reduce, so the matmul is stored first. softmax needs max (reduce #3), then sum of exp (reduce #4),
  # then the division: elementwise ops always fuse into whichever kernel consumes them.
  assert len(sched) == 5, len(sched)
  assert [si.reason for si in sched] == ["reduce"] * 4 + ["realize"]
  assert all(sum(u.op is Ops.REDUCE_AXIS for u in si.ast.toposort()) == 1 for si in sched[:4])
  assert "WHERE" in ops_in(sched[1].ast), "relu fused into the sum's kernel"
  xn = x.numpy() @ y.numpy()
  s = (np.maximum(xn, 0) + 1).sum(axis=0)
  assert np.allclose(out.numpy(), np.exp(s - s.max()) / np.exp(s - s.max()).sum(), atol=1e-5)

def task2_graph(html_path: str | None):
  print("== 2. the graph of a matmul kernel (what VIZ=1 shows in tinygrad)")
  a, b = Tensor.rand(16, 16).realize(), Tensor.rand(16, 16).realize()
  with capture() as tr: (a @ b).realize()
  doc = tr.to_json()
  k = doc["kernels"][0]
  ast_kinds = {n["kind"] for n in doc["graphs"][k["graph"]]["nodes"]}
  low_kinds = {n["kind"] for n in doc["graphs"][k["lowered_graph"]]["nodes"]}
  print("  node kinds in the kernel AST:    ", sorted(ast_kinds))
  print("  node kinds in the lowered kernel:", sorted(low_kinds))
  assert {"alu", "reduce", "memory", "movement"} <= ast_kinds      # MUL, REDUCE_AXIS, LOAD/STORE, VIEW
  assert {"alu", "reduce", "loop"} <= low_kinds                     # RANGE loops appear after lowering
  if html_path:
    from lazynb.notebook import viz
    with open(html_path, "w", encoding="utf-8") as f: f.write(viz.page(doc, "the matmul kernel of project 5"))
    print(f"  wrote {html_path}: open it in a browser (the Kernels tab draws the AST and the lowered graph)")

def task3_ir_stages():
  print("== 3. IR stages of an 8x8 matmul (DEBUG=4 prints these)")
  a, b = Tensor.rand(8, 8).realize(), Tensor.rand(8, 8).realize()
  with Recorder(rewrites=False) as rec: (a @ b).realize()
  # "exec" events carry the ProgramSpec of every kernel that ran (compiled now or earlier)
  (prg,) = [e.data["program"] for e in rec.of("exec") if e.data["kind"] == "kernel"]
  k = prg.kernel
  print("  1 kernel AST ops:      ", sorted(ops_in(prg.ast)))
  print("  2 after opts:          ", k.applied_opts, "full shape", k.full_shape, [t.name for t in k.axis_types])
  print("  3 lowered ops:         ", sorted(ops_in(prg.lowered)))
  lin = [u.op.name for u in prg.uops]
  print(f"  4 linearized: {len(lin)} uops:", " ".join(lin[:24]), "...")
  assert {"SINK", "STORE", "LOAD", "VIEW", "REDUCE_AXIS", "MUL"} <= ops_in(prg.ast)
  assert "RANGE" not in ops_in(prg.ast), "the AST has no loops yet: shapes and views only"
  assert k.applied_opts, "the heuristic split the loops"
  assert {"RANGE", "REDUCE", "INDEX"} <= ops_in(prg.lowered) and "VIEW" not in ops_in(prg.lowered), "views became index math"
  assert "DEFINE_ACC" in lin and "ENDRANGE" in lin and "REDUCE" not in lin, "REDUCE became an accumulator in a loop"
  assert lin.index("RANGE") < lin.index("ENDRANGE")
  with Context(DEBUG=4):  # the same stages, printed
    (Tensor.rand(4, 4).realize() @ Tensor.rand(4, 4).realize()).realize()

def task4_noopt():
  print("== 4. x * 1 + 0 with NOOPT=1 and without")
  srcs, opts = {}, {}
  for noopt in (1, 0):
    x = Tensor.rand(16).realize()  # new input each time: the same graph, once realized, is never run again
    with Context(NOOPT=noopt), Recorder() as rec: (x * 1 + 0).realize()
    (prg,) = [e.data["program"] for e in rec.of("exec") if e.data["kind"] == "kernel"]
    srcs[noopt], opts[noopt] = prg.src, prg.opts
    print(f"  NOOPT={noopt} opts={prg.opts}\n{prg.src}")
  for s in srcs.values():
    body = [line for line in s.splitlines() if "data0+" in line]
    assert body and all("*1" not in line and "+0.0f" not in line for line in body), "x*1 and +0 are gone either way"
  assert opts[1] == [] and "for (" in srcs[1], "NOOPT: one plain loop"
  assert opts[0] != [], "default: the heuristic upcasts (four elements per iteration here)"
  # the folding happens in the rewrite rules: the recorder can show each step (a new size, so a new
  # kernel: one already compiled is not rewritten again)
  with Recorder(rewrites=True) as rec: (Tensor.rand(24).realize() * 1 + 0).realize()
  steps = [(b.op.name, a.op.name) for e in rec.of("rewrite") for b, a, _ in e.data["steps"]]
  print("  first rewrite steps (before -> after):", steps[:6])
  assert ("MUL", "LOAD") in steps, "x * 1 -> x"
  assert ("ADD", "MUL") in steps, "(x * 1) + 0 -> x * 1"
  print("\n" + "\n".join(l for l in srcs[1].splitlines() if "data0+" in l))

def matmul_time(n: int, reps: int, **ctx) -> tuple[float, list]:
  """Best kernel time for an n x n matmul under the given settings, and the opts its kernel used."""
  best, opts = float("inf"), None
  for _ in range(reps):
    a, b = Tensor.rand(n, n).realize(), Tensor.rand(n, n).realize()  # fresh inputs: a realized result is not re-run
    with Context(**ctx), Recorder(rewrites=False) as rec:
      GlobalCounters.reset()
      c = (a @ b).realize()
    best = min(best, GlobalCounters.time_sum_s)
    opts = [e.data["program"].opts for e in rec.of("exec") if e.data["kind"] == "kernel"][0]
  assert np.allclose(c.numpy(), a.numpy() @ b.numpy(), atol=1e-3 * n)
  return best, opts

def task5_beam(n: int, beam: int):
  print(f"== 5. BEAM search on a {n}x{n} matmul")
  os.environ.setdefault("BEAM_PROGRESS", "0")
  t0, opts0 = matmul_time(n, 5, BEAM=0)
  with Recorder(rewrites=False) as rec:
    st = time.perf_counter()
    t_search, _ = matmul_time(n, 1, BEAM=beam)
    search_s = time.perf_counter() - st
  tb, optsb = matmul_time(n, 5, BEAM=beam)
  (ev,) = rec.of("beam") or [None]
  print(f"  BEAM=0: {t0 * 1e3:.3f} ms  opts {opts0}")
  print(f"  BEAM={beam}: {tb * 1e3:.3f} ms  opts {optsb}  ({t0 / tb:.2f}x)")
  tiles = {o.op.name: [] for o in optsb}
  for o in optsb: tiles[o.op.name].append(f"axis {o.axis} x{o.arg}")
  print("  BEAM chose:", "; ".join(f"{k} {', '.join(v)}" for k, v in tiles.items()))
  if ev is not None:
    d = ev.data
    how = "from the disk cache" if d["cached"] else f"{d['tried']} kernels tried in {d['rounds']} rounds"
    print(f"  search: {how}, {search_s:.1f} s")
    assert list(d["opts"]) == optsb
  assert optsb, "BEAM picked some opts"
  # the search starts from the heuristic and keeps the fastest, so allow only timing noise
  assert tb <= t0 * 1.5 + 2e-4, (tb, t0)

def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--size", type=int, default=128, help="matmul size for the BEAM comparison")
  ap.add_argument("--beam", type=int, default=2)
  ap.add_argument("--html", default=None, help="write the matmul's trace (its graphs, source, ...) to this HTML file")
  args = ap.parse_args()
  task1_schedule()
  task2_graph(args.html)
  task3_ir_stages()
  task4_noopt()
  task5_beam(args.size, args.beam)
  print("project 5: all checks passed")

if __name__ == "__main__":
  main()
