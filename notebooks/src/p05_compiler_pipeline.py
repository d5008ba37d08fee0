# %% [markdown]
# # Project 5: inside the compiler
#
# From a line of tensor code to a running kernel, lazynb goes through these stages:
#
# ```
# lazy UOp graph -> schedule (cut into kernels) -> kernel AST -> opts (loop shape) -> lowered (index math, loops)
#                -> linearized (a flat list) -> C source -> compiled, run
# ```
#
# This notebook stops at each stage. (Course file `projects/05_compiler_pipeline.py` is
# `examples/project5_compiler_pipeline.py` here.)
#
# **Differences from the course text.**
# - tinygrad's `VIZ=1` opens a graph viewer served from a local server. lazynb's `VIZ=1 python script.py` writes
#   the whole run as one HTML file (no server) and prints its path; in a notebook every `%%tinygrad` cell draws
#   the same graphs (the Tensor graph tab; the kernel AST and the lowered kernel in the Kernels tab), and a JupyterLab side panel shows
#   the same trace.
# - `DEBUG=4` works as in tinygrad: it prints the kernel AST, the lowered UOps and the linearized program.
# - Some course material describes `NOOPT=1` as turning off *all* algebraic rewrites. It doesn't, in tinygrad
#   or here: it turns off the kernel *optimizations* (upcasting, unrolling, threads); the simplifier still
#   runs. Section 4 shows it.
# - The course's BEAM exercise uses a 1024x1024 matmul. On a small shared CPU that search takes many minutes,
#   so this notebook searches a 128x128 one.

# %%
%load_ext lazynb
import numpy as np
from lazynb import Tensor, Context, GlobalCounters
from lazynb.trace import Recorder, capture
from lazynb.uop import Ops

def ops_in(u): return {n.op.name for n in u.toposort()}
def ran_programs(rec): return [e.data["program"] for e in rec.of("exec") if e.data["kind"] == "kernel"]

# %% [markdown]
# ## 1. The schedule
#
# Six operations: a matmul, relu, +1, a sum over axis 0, and a softmax (which itself needs a max, an exp, a
# sum and a division). A kernel holds at most one reduce; elementwise work fuses into whichever kernel uses it.

# %%
x, y = Tensor.rand(8, 8).realize(), Tensor.rand(8, 8).realize()
out = ((x @ y).relu() + 1).sum(axis=0).softmax()

# %%
%%tinygrad --show schedule,graph
sched = out.schedule()
for i, si in enumerate(sched):
  reduces = [f"{u.arg[0].name} over axis {u.arg[1]}" for u in si.ast.toposort() if u.op is Ops.REDUCE_AXIS]
  print(f"kernel {i}: reason={si.reason:8s} reduce={reduces}")
result = out.realize()

# %% [markdown]
# Four reduces (the matmul, the sum over axis 0, softmax's max and its sum of exponentials) each need a kernel of
# their own, plus the final division: five kernels, the count Part 7 found for the same chain without the `+ 1`.

# %%
assert len(sched) == 5
assert [si.reason for si in sched] == ["reduce"] * 4 + ["realize"]
assert "WHERE" in ops_in(sched[1].ast), "the relu fused into the kernel of the sum over axis 0"
s = (np.maximum(x.numpy() @ y.numpy(), 0) + 1).sum(axis=0)
assert np.allclose(result.numpy(), np.exp(s - s.max()) / np.exp(s - s.max()).sum(), atol=1e-5)
print("AST of kernel 0, the matmul:")
print(sched[0].ast)

# %% [markdown]
# Reading the AST: `STORE` writes to buffer 0 through a `VIEW`; the value is a `REDUCE_AXIS` (ADD over axis 2)
# of a `MUL` of two `LOAD`s. The two loads read the inputs through views with a 0 stride: that is how the
# matmul's broadcast appears once movement ops have been folded into index math.
#
# Those two views, drawn with `show_st` (Part 5 introduced the picture). The kernel's shape is (i, j, k): output
# row, output column, and the reduce index. Holding the row at i = 3, each grid below is (j down, k across), and
# each cell shows the memory index its load reads. `x` reads row 3 of x (memory 24 to 31) in every line: its stride
# along j is 0, so all output columns share the same 8 numbers. `y` reads column j of y, stepping 8 in memory per k:
# the transposed walk, again without a copy. (Part 7 draws the same kernel's loads over (i, j) instead.)

# %%
from lazynb.notebook import show_st
x_st, y_st = [u.src[1].arg for u in sorted((u for u in sched[0].ast.toposort() if u.op is Ops.LOAD), key=lambda u: u.src[0].arg)]
loads = show_st(x_st, y_st, dims=(1, 2), at=[3, 0, 0], titles=["x (data1)", "y (data2)"])
loads

# %%
gx, gy = [[[c["mem"] for c in row] for row in pic["cells"]] for pic in loads.pictures]
assert [v["strides"] for pic in loads.pictures for v in pic["views"]] == [[8, 0, 1], [0, 1, 8]]
assert gx == [list(range(24, 32))] * 8 and gy == [[8 * k + j for k in range(8)] for j in range(8)]

# %% [markdown]
# ## 2. The graph of a kernel
#
# Open the **Kernels** tab of the next cell's output and pick the kernel: its AST graph has no loops, only shapes and
# views; switch its graph pane to the lowered kernel: that one has `RANGE` nodes (loops) and index arithmetic.

# %%
%%tinygrad --show graph,kernels
a16, b16 = Tensor.rand(16, 16).realize(), Tensor.rand(16, 16).realize()
with capture() as tr: mm = (a16 @ b16).realize()

# %%
doc = tr.to_json()
k = doc["kernels"][0]
ast_kinds = {n["kind"] for n in doc["graphs"][k["graph"]]["nodes"]}
low_kinds = {n["kind"] for n in doc["graphs"][k["lowered_graph"]]["nodes"]}
print("node kinds in the kernel AST:    ", sorted(ast_kinds))
print("node kinds in the lowered kernel:", sorted(low_kinds))
assert "loop" not in ast_kinds and "loop" in low_kinds
assert {"alu", "reduce", "memory", "movement"} <= ast_kinds

# %% [markdown]
# ## 3. Every stage of one kernel (DEBUG=4)
#
# `--debug 4` prints the stages as text. The check cell below reads the same stages from the trace bus. The matmul
# is 8x8: big enough for the optimizer to act (a 6x6 one gets no opts at all, and stage 2 would be empty).

# %%
%%tinygrad --debug 4 --show kernels
a8, b8 = Tensor.rand(8, 8).realize(), Tensor.rand(8, 8).realize()
with Recorder(rewrites=False) as rec: c8 = (a8 @ b8).realize()

# %%
(prg,) = ran_programs(rec)
lin = [u.op.name for u in prg.uops]
print("1 kernel AST ops:", sorted(ops_in(prg.ast)))
print("2 opts applied:  ", prg.kernel.applied_opts, " loop shape", prg.kernel.full_shape)
print("3 lowered ops:   ", sorted(ops_in(prg.lowered)))
print(f"4 linearized:     {len(lin)} uops, starting", " ".join(lin[:12]))
assert {"REDUCE_AXIS", "LOAD", "VIEW"} <= ops_in(prg.ast) and "RANGE" not in ops_in(prg.ast)
assert {"RANGE", "REDUCE", "INDEX"} <= ops_in(prg.lowered) and "VIEW" not in ops_in(prg.lowered)
assert "DEFINE_ACC" in lin and "ENDRANGE" in lin and "REDUCE" not in lin   # the reduce became an accumulator in a loop
assert prg.kernel.applied_opts and len(prg.kernel.full_shape) > 3   # opts split the 3 loops into more, smaller ones
assert np.allclose(c8.numpy(), a8.numpy() @ b8.numpy(), atol=1e-5)

# %% [markdown]
# ## 4. Algebraic rewrites and NOOPT
#
# `x * 1 + 0` is a copy written the long way. The simplifier's rules (`x * 1 -> x`, `x + 0 -> x`) remove the
# arithmetic while the kernel is lowered. `NOOPT=1` does not bring it back (Part 7 measured it): it only keeps the
# loops plain. Compare the two kernels:

# %%
%%tinygrad --noopt --show kernels,rewrites
xv = Tensor.rand(16).realize()
with Recorder() as rec_noopt: plain = (xv * 1 + 0).realize()

# %%
%%tinygrad --show kernels,rewrites
xw = Tensor.rand(16).realize()
with Recorder() as rec_opt: tiled = (xw * 1 + 0).realize()

# %%
(p_noopt,), (p_opt,) = ran_programs(rec_noopt), ran_programs(rec_opt)
for name, p in (("NOOPT=1", p_noopt), ("default", p_opt)):
  body = [l.strip() for l in p.src.splitlines() if "data0+" in l]
  print(f"{name}: opts={p.opts}  stores: {body[:2]}")
  assert body and all("*1" not in l and "+0.0f" not in l for l in body)
assert not ("1.0f" in p_noopt.src or "0.0f" in p_noopt.src)   # no constants of *1 and +0 in the NOOPT kernel's C
assert p_noopt.opts == [] and "for (" in p_noopt.src and p_opt.opts != []
assert (plain.numpy() == xv.numpy()).all() and (tiled.numpy() == xw.numpy()).all()

# %% [markdown]
# ## 5. BEAM search
#
# The hand-coded heuristic guesses a loop shape (how much to upcast, unroll, split across cores). `BEAM=N`
# tries instead: it starts from the heuristic's kernel, applies every single change, compiles and times the
# candidates, keeps the fastest N, and repeats until nothing gets faster. The choice is cached on disk, so the
# search runs once per kernel.

# %%
%%tinygrad --beam 2 --show kernels,timing
a128, b128 = Tensor.rand(128, 128).realize(), Tensor.rand(128, 128).realize()
with Recorder(rewrites=False) as rec_beam: c_beam = (a128 @ b128).realize()

# %%
def matmul_kernel_time(n, reps=5, **flags):
  best, opts = float("inf"), None
  for _ in range(reps):
    a, b = Tensor.rand(n, n).realize(), Tensor.rand(n, n).realize()   # new inputs: a realized result is never recomputed
    with Context(**flags), Recorder(rewrites=False) as rec:
      GlobalCounters.reset()
      (a @ b).realize()
    best, opts = min(best, GlobalCounters.time_sum_s), ran_programs(rec)[0].opts
  return best, opts
t0, opts0 = matmul_kernel_time(128, BEAM=0)
t2, opts2 = matmul_kernel_time(128, BEAM=2)
print(f"BEAM=0: {t0 * 1e6:8.1f} us  {opts0}")
print(f"BEAM=2: {t2 * 1e6:8.1f} us  {opts2}")
print("tile sizes BEAM chose:", ", ".join(f"{o.op.name} axis {o.axis} by {o.arg}" for o in opts2))
beam_events = rec_beam.of("beam")
if beam_events: print("search:", "cached" if beam_events[0].data["cached"] else f"{beam_events[0].data['tried']} kernels timed")
assert opts2 and ran_programs(rec_beam)[0].opts == opts2
assert t2 <= t0 * 1.5 + 2e-4   # never much slower than the heuristic's: the search starts from it (up to timing noise)
assert np.allclose(c_beam.numpy(), a128.numpy() @ b128.numpy(), atol=1e-3 * 128)

# %% [markdown]
# BEAM is not only for matmuls: it searches any kernel. Here a 3x3 convolution followed by a relu (one kernel). The
# candidate changes are the same kinds (upcast, unroll, ...), applied to the conv's own loops.

# %%
xc, wc = Tensor.rand(1, 4, 10, 10).realize(), Tensor.rand(4, 4, 3, 3).realize()
with Context(BEAM=2), Recorder(rewrites=False) as rec_conv: yc = xc.conv2d(wc).relu().realize()
(conv_prg,) = ran_programs(rec_conv)
conv_beam = rec_conv.of("beam")
how = ("cached" if conv_beam[0].data["cached"] else f"{conv_beam[0].data['tried']} candidates timed") if conv_beam else "no search"
print(f"{conv_prg.name}: BEAM chose {conv_prg.opts} ({how})")
win = np.lib.stride_tricks.sliding_window_view(xc.numpy(), (3, 3), axis=(2, 3))   # (1, 4, 8, 8, 3, 3)
assert conv_beam and np.allclose(yc.numpy(), np.maximum(np.einsum("bchwij,ocij->bohw", win, wc.numpy()), 0), atol=1e-4)

# %% [markdown]
# ## BEAM on the slides' conv, round by round
#
# The slides ask "what size chunk is optimal?" for their conv: a batch of 16 images of 3x64x64 and 16 filters of
# 3x3x3, which gives a (16, 16, 62, 62) output. The kernel-opt playground (Part 7) takes this kernel, starts from the
# heuristic's opts, and shows what BEAM tries: every round's candidates with their measured times, and the winner's
# path. The reference here is the kernel with no opts at all (the bare loops) on the same inputs; the cell after also
# checks the result against numpy.

# %%
from lazynb.notebook.playground import Playground
xs, ws = Tensor.rand(16, 3, 64, 64).realize(), Tensor.rand(16, 3, 3, 3).realize()
conv_pg = Playground(xs.conv2d(ws), runs=5)
print("heuristic:", conv_pg.opts, f"{conv_pg.measure()['time_s'] * 1e3:.2f} ms")
conv_pg.beam(1)
cb = conv_pg.beam_info
for r in cb["rounds_detail"]:
  ranked = sorted((c for c in r["candidates"] if c["seconds"] is not None), key=lambda c: c["seconds"])
  print(f"round {r['round']}: {len(r['candidates'])} candidates; fastest three:",
        "; ".join(f"{c['opts']} {c['seconds'] * 1e3:.2f} ms" for c in ranked[:3]))
print("winner's path from the heuristic:", " -> ".join(str(p) for p in cb["path"]))
t_w, t_h = conv_pg.race(conv_pg.opts, conv_pg.heuristic, rounds=3, runs=3)
print(f"raced on the real inputs: BEAM's {t_w * 1e3:.2f} ms, the heuristic's {t_h * 1e3:.2f} ms")
conv_pg

# %%
xn, wn = xs.numpy(), ws.numpy()
win5 = np.lib.stride_tricks.sliding_window_view(xn, (3, 3), axis=(2, 3))   # (16, 3, 62, 62, 3, 3)
want = np.einsum("bchwij,ocij->bohw", win5, wn)
# the kernel computes along whole input rows (64 wide; the last 2 columns of each are windows that wrap, dropped)
np.testing.assert_allclose(conv_pg._output(conv_pg.opts).reshape(16, 16, 62, 64)[..., :62], want, rtol=1e-4, atol=1e-4)
assert conv_pg.measure()["correct"] and cb["path"][0] == [repr(o) for o in conv_pg.heuristic]
assert conv_pg.measure()["full_shape"] and cb["rounds_detail"] and all(r["candidates"] for r in cb["rounds_detail"])

# %% [markdown]
# ## Exercise: rewrite rules of your own
#
# Make `rules`, a `PatternMatcher` that folds `x*1 -> x` and `x+0 -> x` (for ints and floats, with the constant
# on either side). The check runs `graph_rewrite` with your rules on small index expressions, and also makes
# sure that `i*2`, `i+1` and `i*j` are left alone.

# %%
# EXERCISE p05.fold_rules
from lazynb.uop.ops import UPat, PatternMatcher
rules = PatternMatcher([
  # YOUR CODE: (pattern, function) pairs
])

# %%
from lazynb.notebook.exercise import check
check("p05.fold_rules", rules)
