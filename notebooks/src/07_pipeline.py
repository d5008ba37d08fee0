# %% [markdown]
# # Part 7 — The compiler pipeline
#
# Between `realize()` and the C code that runs, a graph goes through these stages (each module is named in
# `docs/architecture.md`):
#
# ```
# Tensor graph ──schedule──▶ kernel ASTs ──opts──▶ Kernel ──lower──▶ index math ──symbolic──▶ simplified
#   (tensor.py)   (engine/schedule.py)   (codegen/kernel.py)  (codegen/lowerer.py)  (uop/symbolic.py)
#        ──linearize──▶ flat UOp list ──render──▶ C source ──compile, run──▶ numbers
#          (codegen/linearize.py)      (renderer/cstyle.py)   (runtime/ops_cpu.py)
# ```
#
# Every stage reports to the trace bus, which is where both `DEBUG` printing and the `%%tinygrad` views come from.
# This notebook takes the stages in order, then looks at why an unoptimized kernel is slow, how BEAM search picks a
# better one, and how `TinyJit` skips the whole pipeline on repeated calls.

# %%
%load_ext lazynb
import io, contextlib, math
import numpy as np
from lazynb import Tensor, Device, Context, GlobalCounters, dtypes, Ops, UOp, TinyJit
from lazynb.uop.ops import GroupOp, UPat, PatternMatcher, graph_rewrite
from lazynb.trace import capture
from lazynb.notebook.quiz import quiz, ask_number
from lazynb.engine.realize import method_cache

# %% [markdown]
# ## Stage 1: the schedule
#
# `t.schedule()` returns the kernels `realize()` would run, without running them. The course's example:

# %%
q_sched = ask_number("x, y are 4x4. How many kernels does (x @ y).relu().sum(axis=0) need?", key="07_pipeline.q_sched")

# %%
x, y = Tensor.randn(4, 4), Tensor.randn(4, 4)
z = (x @ y).relu().sum(axis=0)
sched = z.schedule()
print(f"{len(sched)} kernels")
for item in sched: print(item.kind, item.reason, [f"{b.size}x{b.dtype.name}" for b in item.bufs])
print(sched[0].ast)

# %% [markdown]
# A `ScheduleItem` carries the kernel's **AST**, its **buffers** (output first, then inputs, in `DEFINE_GLOBAL`
# order) and the **reason** the graph was cut there. The AST is a `SINK` of a `STORE` into `DEFINE_GLOBAL` 0 of
# a value built from `LOAD`s, ALU ops and at most one `REDUCE_AXIS`. The movement ops are gone: each LOAD and STORE
# carries a `VIEW` with a ShapeTracker over the kernel's full shape (here (4, 4, 4): row, column, k). Note the
# strides: `x` is read with stride 0 along the column axis, `y` with stride 0 along the row axis. That is the matmul.

# %%
assert [s.reason for s in sched] == ["reduce", "realize"]
q_sched.reveal(len(sched))
ast = sched[0].ast
assert ast.op is Ops.SINK and ast.src[0].op is Ops.STORE
assert sum(u.op is Ops.REDUCE_AXIS for u in ast.toposort()) == 1
assert not any(u.op in GroupOp.Movement for u in ast.toposort())
np.testing.assert_allclose(z.numpy(), np.maximum(x.numpy() @ y.numpy(), 0).sum(0), rtol=1e-5, atol=1e-5)

# %% [markdown]
# Each item also names the **Tensor methods** whose nodes it computes (`item.metadata`, as tinygrad names it; with
# `DEBUG=2` each kernel's line ends with them). The random inputs are drawn inside the first kernel, and the matmul
# spans both kernels: its sum is the first kernel's, the reshape after that sum is done in the second.

# %%
for item in sched: print(item.reason, [m.name for m in item.metadata])
assert [m.name for m in sched[0].metadata] == ["randn", "matmul"] and [m.name for m in sched[1].metadata] == ["matmul", "relu", "sum"]

# %% [markdown]
# Those two strides, drawn: `show_st` on each LOAD's ShapeTracker, over (row, column), holding k = 1. Each cell shows
# the memory index it reads (hover one in JupyterLab for its arithmetic).

# %%
from lazynb.notebook import show_st
x_st, y_st = [u.src[1].arg for u in sorted((u for u in ast.toposort() if u.op is Ops.LOAD), key=lambda u: u.src[0].arg)]
mm = show_st(x_st, y_st, dims=(0, 1), at=[0, 0, 1], titles=["x (data1)", "y (data2)"])
mm

# %% [markdown]
# **Reading it.** In `x`'s grid every row repeats one number: row i reads `x[i, 1]` (memory 4i + 1) whatever the
# column, since the column's stride is 0. In `y`'s grid every column repeats one number: column j reads `y[1, j]`
# (memory 4 + j) whatever the row. Multiply the two grids cell by cell and sum over k: that is `x @ y`, and neither
# grid was ever stored as a 4x4x4 array.

# %%
grids = [[[c["mem"] for c in row] for row in p["cells"]] for p in mm.pictures]
assert grids[0] == [[4 * i + 1] * 4 for i in range(4)] and grids[1] == [[4 + j for j in range(4)]] * 4

# %% [markdown]
# The hacking guide's first look at the scheduler uses two tensors made from lists. Its loop prints `si.ast` and
# `si.bufs` for each item; here the copies show up too, as items of their own:

# %%
x3, y3 = Tensor([1, 2, 3, 4]), Tensor([5, 6, 7, 8])
z3 = (x3 + y3) * 2
schedule = z3.schedule()
print(f"Number of items: {len(schedule)}")
for i, si in enumerate(schedule): print(f"  item {i}: {si.kind:6s} bufs={si.bufs}")
kernel3 = [si for si in schedule if si.kind == "kernel"]
assert len(kernel3) == 1 and [si.kind for si in schedule].count("copy") == 2
assert len(kernel3[0].bufs) == 3 and kernel3[0].bufs[0].size == 4   # the output first, then x and y
assert z3.tolist() == [12, 16, 20, 24]

# %% [markdown]
# The hacking guide debugs a longer plan: a matmul, relu, a sum over axis 0, then softmax.

# %%
q_plan = ask_number("How many kernels for ((x @ y).relu().sum(axis=0)).softmax() with 10x10 inputs?", key="07_pipeline.q_plan")

# %%
x, y = Tensor.randn(10, 10), Tensor.randn(10, 10)
result = (x @ y).relu().sum(axis=0).softmax()
plan = result.schedule()
print(f"Execution plan: {len(plan)} steps")
for i, si in enumerate(plan):
  red = [u.arg for u in si.ast.toposort() if u.op is Ops.REDUCE_AXIS]
  print(f"  step {i}: reason={si.reason:8s} reduce={red[0] if red else None}  out={si.bufs[0].size} x {si.bufs[0].dtype.name}")

# %%
assert [s.reason for s in plan] == ["reduce"] * 4 + ["realize"]
q_plan.reveal(len(plan))
ref = np.maximum(x.numpy() @ y.numpy(), 0).sum(0)
np.testing.assert_allclose(result.numpy(), np.exp(ref - ref.max()) / np.exp(ref - ref.max()).sum(), rtol=1e-4, atol=1e-6)

# %% [markdown]
# > **Then and now.** lazynb's scheduler walks the graph and cuts it into kernels by rules written as Python
# > (`lazynb/engine/schedule.py`), in the spirit of tinygrad 0.10's `engine/schedule.py`. tinygrad today makes the same
# > decision with graph rewrites: `tinygrad/schedule/rangeify.py` gives every value the loops it is computed over, marks
# > the values that may need memory of their own (`BUFFERIZE`), and a rule that removes a `BUFFERIZE`, computing the
# > value inside its consumer's loops, is the decision to fuse. The questions stay the ones above: which values must be
# > stored, and which can be recomputed where they are read.

# %% [markdown]
# ## Stages 2 to 6, one kernel at a time
#
# `DEBUG=4` prints the three middle stages of every kernel it compiles, here for a 4x4 matmul:

# %%
%%tinygrad --debug 4 --noopt --show kernels,rewrites
a, b = Tensor.randn(4, 4).realize(), Tensor.randn(4, 4).realize()
c = (a @ b).realize()

# %% [markdown]
# **What you see**, in the printed text:
#
# 1. `--- AST of r_4_4_4`: the scheduler's kernel, with VIEWs.
# 2. `--- lowered`: the VIEWs are gone; each LOAD goes through an **INDEX** computed from **RANGE** nodes (the loops
#    `gidx0`, `gidx1` over the output, `ridx0` over k) and the sum is a **REDUCE** over `ridx0`.
# 3. `--- linearized`: a flat, numbered list, ready to print as code: the REDUCE became a **DEFINE_ACC**
#    (`float acc0 = 0.0f`), an update inside the loop, and **ENDRANGE** closes each loop.
# 4. The C source (`DEBUG=3` shows just this part).
#
# The **Rewrites** tab shows each pass step by step. In `lower: views to index math` you will meet **LANE**, a marker
# that exists only during lowering: `LANE(node)` means "this AST node, for one lane", where a lane is one position of
# the axes that opts unrolled or upcast into straight-line code (under `--noopt` there is one lane). The pass starts
# with one LANE per store and lane and pushes each down through every op to the op's sources, until it reaches a VIEW,
# which becomes an INDEX computed for that lane; no LANE is left after the pass. `simplify: index math` then folds the index expressions. The **Kernels** tab
# has a table of the linearized UOps with, for each, the source lines it became.
#
# The same stages, called one by one from Python (this is what `lazynb.codegen.get_program` does):

# %%
from lazynb.codegen.kernel import Kernel, hand_coded_optimizations
from lazynb.codegen.lowerer import lower
from lazynb.codegen.linearize import linearize
a2, b2 = Tensor.randn(4, 4).realize(), Tensor.randn(4, 4).realize()
(si,) = (a2 @ b2).schedule()
renderer = Device["CPU"].renderer
k = Kernel(si.ast, renderer)
print("full shape:", k.full_shape, "axis types:", [t.name for t in k.axis_types])
opts = hand_coded_optimizations(k)
print("opts:", opts, "-> full shape", k.full_shape, [t.name for t in k.axis_types])
lowered = lower(k)
uops = linearize(lowered)
print(len(uops), "linearized UOps:", " ".join(u.op.name for u in uops[:24]), "...")
src = renderer.render(k.function_name, uops)
print(src)

# %%
low_ops = {u.op for u in lowered.toposort()}
assert Ops.VIEW not in low_ops and {Ops.INDEX, Ops.RANGE, Ops.REDUCE} <= low_ops
lin_ops = [u.op for u in uops]
assert Ops.DEFINE_ACC in lin_ops and Ops.ENDRANGE in lin_ops and Ops.REDUCE not in lin_ops
assert src.startswith("void r_") and k.function_name in src
assert len(opts) > 0 and k.applied_opts == opts

# %% [markdown]
# The kernel's name encodes its loop shape, and `DEBUG=2` colours each number by the kind of axis (the blog has the
# colour table for tinygrad; lazynb's is the same idea): **blue** global (output) axes, bright blue CPU-thread axes,
# cyan local and green group axes (GPU work-groups), **red** reduce loops, **magenta** unrolled reduce axes,
# **yellow** upcast axes (computed in registers, no loop). `r_` means the kernel has a reduction, `E_` that it is
# elementwise. In the trace document the pieces come pre-split:

# %%
with capture(rewrites=False) as tr:
  (Tensor.randn(16, 16).realize() @ Tensor.randn(16, 16).realize()).realize()
kern = tr.kernels[0]
print(kern["name"], kern["opts"])
print(kern["name_parts"])
kinds = [kind for _, kind in kern["name_parts"] if kind]
assert "global" in kinds and "upcast" in kinds and ("unroll" in kinds or "reduce" in kinds)

# %% [markdown]
# ## Rewrite rules: `UPat`, `PatternMatcher`, `graph_rewrite`
#
# Simplification is done by pattern matching on UOp graphs. The tinygrad blog builds one rule by hand, and lazynb
# runs it unchanged:

# %%
a = UOp(Ops.CONST, dtypes.int, arg=2)
b = UOp(Ops.CONST, dtypes.int, arg=2)
assert a is b   # hash-consing: the same spec is the same object
a_plus_b = a + b
print(a_plus_b)
simple_pm = PatternMatcher([
  (UPat(Ops.ADD, src=(UPat(Ops.CONST, name="c1"), UPat(Ops.CONST, name="c2"))),
   lambda c1, c2: UOp(Ops.CONST, dtype=c1.dtype, arg=c1.arg + c2.arg)),
])
a_plus_b_simplified = graph_rewrite(a_plus_b, simple_pm)
print(a_plus_b_simplified)
simpler_pm = PatternMatcher([(UPat.cvar("c1") + UPat.cvar("c2"), lambda c1, c2: c1.const_like(c1.arg + c2.arg))])
assert graph_rewrite(a_plus_b, simple_pm) is graph_rewrite(a_plus_b, simpler_pm) is UOp(Ops.CONST, dtypes.int, arg=4)

# %% [markdown]
# A rule is a pattern and a function. Named parts of the pattern (`name="c1"`) arrive as keyword arguments; the
# function returns a replacement UOp, or `None` to leave the node alone. `graph_rewrite` applies the rules bottom-up
# until nothing matches. `UPat.cvar("c1") + UPat.cvar("c2")` is sugar for the same ADD-of-two-CONSTs pattern (with
# the sources in either order).
#
# lazynb's real rule set is `symbolic` in `lazynb/uop/symbolic.py`: constant folding, identities (`x*1 → x`,
# `x+0 → x`, `log2(exp2(x)) → x`), and the div/mod arithmetic that cleans up index math using each node's bounds.
# The course's list of "key rewrite rules" also has *loop fusion: merge adjacent loops with compatible access
# patterns*. No such rewrite rule exists, in lazynb or in tinygrad: fusion is decided earlier, by the **scheduler**,
# which puts a chain of elementwise ops and one reduce into one kernel (the Schedule above), so the loops are never
# separate to begin with. The rewrite rules work *inside* one kernel.
#
# Knowing that `ridx0` runs over 0..3 lets `(gidx0*4 + ridx0) // 4` become `gidx0`:

# %%
from lazynb.uop.symbolic import symbolic
gidx0 = UOp(Ops.RANGE, dtypes.int, (), (0, 16, "gidx0"))
ridx0 = UOp(Ops.RANGE, dtypes.int, (), (1, 4, "ridx0"))
for e in [(gidx0 * 4 + ridx0) // 4, (gidx0 * 4 + ridx0) % 4, (ridx0 + 3) + 4, ridx0 * 1 + 0]:
  print(f"{str(e).count('UOp('):2d} nodes -> {graph_rewrite(e, symbolic)}")
assert graph_rewrite((gidx0 * 4 + ridx0) // 4, symbolic) is gidx0
assert graph_rewrite((gidx0 * 4 + ridx0) % 4, symbolic) is ridx0
print(len(symbolic.patterns), "rules in symbolic")

# %% [markdown]
# The course says `NOOPT=1` shows "the unoptimized IR", and the hacking guide's table says it disables all algebraic
# rewrites. Does it? Compile `x * 1 + 0` both ways and look for the constants in the C.

# %%
q_noopt = quiz("With NOOPT=1, does the kernel for x * 1 + 0 still multiply by 1 and add 0?",
               ["yes: NOOPT turns the rewrite rules off", "no: the rules always run; NOOPT only drops the loop optimizations"],
               key="07_pipeline.q_noopt")

# %%
sources = {}
for flags in ({"NOOPT": 1}, {}):
  xr = Tensor.randn(8).realize()   # a fresh input each time: an equal expression on the same x is already realized
  with Context(**flags), capture(rewrites=False) as tr: (xr * 1 + 0).realize()
  sources["NOOPT=1" if flags else "default"] = tr.kernels[0]["source"]
for name, s in sources.items(): print(f"--- {name}\n{s}")

# %%
still_there = "1.0f" in sources["NOOPT=1"] or "0.0f" in sources["NOOPT=1"]   # the *1 and +0 as float constants in the C
q_noopt.reveal("yes" if still_there else "no")
for s in sources.values():   # the float constants 1.0f and 0.0f are gone: only a load and a store are left
  assert "1.0f" not in s and "0.0f" not in s and s.count("*(data0+") == s.count("*(data1+")
assert "for (" in sources["NOOPT=1"] and "for (" not in sources["default"]
with capture(rewrites=False) as tr: Tensor.randn(8).realize().exp().log().realize()
assert "exp2" not in tr.kernels[0]["source"]   # log(exp(x)) -> x, another identity from the course's list

# %% [markdown]
# In lazynb (and in tinygrad) NOOPT only turns off the *kernel optimizations* (upcast, unroll, threads,
# work-groups); the symbolic rules always run, because the code must be correct and readable either way.

# %% [markdown]
# ## Code generation: the course's matmul in C
#
# The course sets `os.environ['CLANG'] = '1'` to get readable C. In lazynb the CPU device *is* the clang backend and
# the default, and `Context(DEBUG=3)` prints the source:

# %%
x, y = Tensor.randn(4, 4), Tensor.randn(4, 4)
method_cache.clear()   # this kernel was compiled in Stage 1; DEBUG=3 prints source only when it compiles
with Context(DEBUG=3): (x @ y).realize()

# %% [markdown]
# The 4x4 output is one 4x4 **upcast** tile: 16 accumulators live in registers, a single loop runs over k, and each
# value loaded from `x` or `y` is used four times. Backends for other devices (CUDA, OpenCL) render the same
# linearized UOps with their own syntax: Part 8.

# %%
with capture(rewrites=False) as tr: (Tensor.randn(4, 4) @ Tensor.randn(4, 4)).realize()
mm_src = tr.kernels[0]["source"]
assert mm_src.count("for (") == 1 and "acc15" in mm_src and "acc16" not in mm_src

# %% [markdown]
# The hacking guide does the same with `Device.DEFAULT = "CLANG"` and `a.relu().exp()`. `CLANG` is accepted as another
# name for the CPU device, so that works unchanged:

# %%
old_default = Device.DEFAULT
Device.DEFAULT = "CLANG"
try:
  a1024 = Tensor.randn(1024)
  buf = io.StringIO()
  method_cache.clear()
  with Context(DEBUG=3), contextlib.redirect_stdout(buf): a1024.relu().exp().realize()
finally: Device.DEFAULT = old_default
print(buf.getvalue()[:900])
assert Device.canonicalize("CLANG") == "CPU" and "__builtin_exp2f" in buf.getvalue() and "void E_" in buf.getvalue()

# %% [markdown]
# ## "Slow?": where the operations go
#
# The slides show the UOps of a 3x3 convolution and point out that most of them are integer **index arithmetic**,
# not the floating-point math you asked for. Their fix: compute several outputs per kernel invocation (a chunk), so
# the index math is shared. Let's count, for a small conv, the integer and floating-point operations each kernel
# executes (each op counted once per loop iteration it runs in).

# %%
def op_counts(prg):
  flops = index_ops = 0
  mult, stack = 1, []
  for u in prg.uops:
    if u.op is Ops.RANGE: stack.append(u.arg[1]); mult *= u.arg[1]  # noqa: E702
    elif u.op is Ops.ENDRANGE: mult //= stack.pop()
    elif u.op is Ops.SPECIAL: mult *= u.arg[1]
    elif u.op in GroupOp.ALU and u.dtype is not dtypes.bool:
      if dtypes.is_float(u.dtype): flops += mult
      else: index_ops += mult
  return flops, index_ops

q_slow = quiz("A 3x3 conv kernel with NOOPT: for every floating-point operation, roughly how many integer index "
              "operations does it execute?", ["0.1", "1", "5"], key="07_pipeline.q_slow")

# %%
from lazynb.codegen import get_program
img, w = Tensor.rand(1, 3, 16, 16).realize(), Tensor.rand(4, 3, 3, 3).realize()
(conv_item,) = img.conv2d(w).schedule()
counts = {}
for name, flags in (("NOOPT", {"NOOPT": 1}), ("default opts", {})):
  with Context(**flags): prg = get_program(conv_item.ast, Device["CPU"].renderer)   # codegen only, nothing runs
  counts[name] = op_counts(prg)
  print(f"{name:13s} {prg.name:24s} opts={prg.opts}  float ops {counts[name][0]:6d}  index ops {counts[name][1]:7d}"
        f"  ratio {counts[name][1] / counts[name][0]:.1f}")

# %%
(f0, i0), (f1, i1) = counts["NOOPT"], counts["default opts"]
assert f0 == f1                      # the same math either way
# the option nearest the measured ratio (on a log scale: the options are 0.1, 1 and 5)
q_slow.reveal(min(q_slow.options, key=lambda o: abs(math.log(float(o)) - math.log(i0 / f0))))
assert 4 <= i0 / f0 <= 6
assert i1 < i0 / 2                   # sharing index math over an upcast chunk cuts it by more than half

# %% [markdown]
# ## The kernel-opt playground: one opt at a time
#
# An opt is written `Opt(UPCAST, 1, 16)`: the kind of change, the axis (counted in the kernel's *current* loop shape),
# and the amount. `Playground` takes one kernel (the largest of a tensor's schedule, or `index=`), lists the opts that
# are legal from where it stands, and after each change compiles it, runs it several times on the real inputs (the
# median counts), compares the result with numpy, and shows what changed in the C source. `explain` decodes an opt in
# words. It starts at the heuristic's choice; `reset("none")` goes to the bare loops (what `NOOPT=1` compiles).

# %%
from lazynb.codegen.kernel import Opt, OptOps
from lazynb.notebook.playground import Playground, explain
pa, pb = np.random.default_rng(1).standard_normal((2, 64, 64), dtype=np.float32)
pg = Playground(Tensor(pa) @ Tensor(pb), reference=pa @ pb)
print("the heuristic chose:", pg.opts)
pg.reset("none")
print("legal from the bare loops:", pg.legal())
print(explain(Opt(OptOps.UPCAST, 1, 16), pg.kernel()))
pg.apply(Opt(OptOps.UPCAST, 1, 16))
pg

# %% [markdown]
# The view above has the loops (each axis' name, size and kind, in the colours `DEBUG=2` uses), what each opt did, the
# index math of every buffer access, the source diff against the previous state, the time and GFLOPS against numpy's
# own float32 matmul on this machine (measured in this session, so it is a fair "what this machine can do"), and a
# check that the answer did not change. Undo, try an unroll of the reduce axis, and compare the three states:

# %%
t_up = pg.measure()["time_s"]
pg.apply(Opt(OptOps.UNROLL, 2, 4))
print(pg)
pg.undo()
assert pg.opts == [Opt(OptOps.UPCAST, 1, 16)] and pg.measure()["time_s"] == t_up
bare = pg.measure([])
print(f"bare loops {bare['time_s'] * 1e6:.1f} us, UPCAST 16 {t_up * 1e6:.1f} us")
assert all(pg.measure(o)["correct"] for o in ([], pg.opts, pg.opts + [Opt(OptOps.UNROLL, 2, 4)]))
assert pg.measure()["axis_types"] == ["GLOBAL", "GLOBAL", "REDUCE", "UPCAST"]

# %% [markdown]
# In a live notebook, `pg.widget()` adds controls: a list of the legal opts with their meaning, apply, undo, reset to
# the heuristic or to none, and a BEAM button, above the same view as `pg` gives, drawn again after every change
# (also one made in another cell). The controls need the running kernel; a saved notebook keeps `pg`'s output above.

# %%
pg.widget()

# %% [markdown]
# ## BEAM search
#
# Which chunk size is best? It depends on the shapes and on the machine, so instead of a heuristic, the slides'
# answer is to **search**: try many kernels and time them. `BEAM=N` starts from the hand-coded kernel, applies every
# single action (upcast an axis by 2, 4, 8; unroll the reduce; split over threads ...), compiles and times the
# candidates, keeps the N fastest and repeats until a round finds nothing faster. The result is cached on disk, keyed
# by the kernel's AST, so the search runs once per kernel per machine.
#
# The course runs a 1024x1024 matmul with `BEAM=4`; on this 2-core machine a 16x16 matmul and `BEAM=1` show the
# same thing in a few seconds. The BEAM slider above a `%%tinygrad` cell reruns the cell with search on.

# %%
%%tinygrad --beam 1 --show kernels,timing
m1, m2 = Tensor.rand(16, 16).realize(), Tensor.rand(16, 16).realize()
mm = (m1 @ m2).realize()

# %% [markdown]
# The **Kernels** tab shows the opts BEAM picked. For a kernel this small they are often the heuristic's own (compare
# with the heuristic's kernel name a few cells up); **Timing** shows the run time. Now ask for the same kernel again. Fresh
# tensors of the same shapes give the same kernel AST (an AST names buffers by position, not by identity):

# %%
n1, n2 = Tensor.rand(16, 16).realize(), Tensor.rand(16, 16).realize()
(mm_item,) = (n1 @ n2).schedule()
with Context(BEAM=1), capture(rewrites=False) as tr:
  prg = get_program(mm_item.ast, Device["CPU"].renderer)
beam = [e.data for e in tr.events if e.kind == "beam"][0]
print(f"cached={beam['cached']}  tried={beam['tried']}  opts={beam['opts']}")
with Context(BEAM=1): out = (n1 @ n2).realize()

# %%
assert beam["cached"] and beam["tried"] == 0   # the second search timed nothing: the choice came from the cache
assert list(beam["opts"]) == list(prg.opts)   # BEAM's choice is what was compiled
np.testing.assert_allclose(out.numpy(), n1.numpy() @ n2.numpy(), rtol=1e-5, atol=1e-5)
np.testing.assert_allclose(mm.numpy(), m1.numpy() @ m2.numpy(), rtol=1e-5, atol=1e-5)

# %% [markdown]
# BEAM, made visible: the playground runs the search for its kernel (again, even if it is cached) and keeps what the
# search saw: the heuristic's kernel it starts from, every round's candidates with their times, and the winner's path.
# Then `race` times two states fairly: interleaved runs, the median of each.

# %%
pg.beam(1)
b = pg.beam_info
for r in b["rounds_detail"]:
  print(f"round {r['round']}: {len(r['candidates'])} candidates, fastest {r['best_s'] * 1e6:.1f} us {r['best']}"
        + ("" if r["improved"] else "  (not faster than the round before: stop)"))
print("path:", " -> ".join(str(p) for p in b["path"]))
t_beam, t_heur = pg.race(pg.opts, pg.heuristic)
print(f"raced: BEAM's {t_beam * 1e6:.1f} us, the heuristic's {t_heur * 1e6:.1f} us")

# %%
assert b["path"][0] == [repr(o) for o in pg.heuristic] and b["winner"] == [repr(o) for o in pg.opts] and pg.measure()["correct"]
for r in b["rounds_detail"]:
  assert r["best_s"] == min(c["seconds"] for c in r["candidates"] if c["seconds"] is not None)

# %% [markdown]
# ## TinyJit: skip the pipeline on repeated calls
#
# Scheduling, lowering and rendering cost Python time on every call, even when the kernels are cached. In a training
# loop the same kernels run every step with new data. `@TinyJit` (the slides: "it captures the run kernels and
# replays them with new data") runs the function normally on call 1, records every kernel it runs on call 2, and from
# call 3 on replays the recorded kernels on the new input buffers without running your Python at all.
# (On GPUs tinygrad goes one step further and submits the whole recorded list at once, as a CUDA graph or its own
# command queue, because enqueueing thousands of kernels one by one can cost more CPU time than they take to run.)
# The trace shows it: the events of each of four calls.

# %%
@TinyJit
def step(a: Tensor, b: Tensor) -> Tensor: return (a @ b).relu().sum(axis=1)

events = []
for i in range(4):
  a, b = Tensor.rand(8, 8), Tensor.rand(8, 8)
  with capture(rewrites=False) as tr: out = step(a, b)
  events.append([e.kind for e in tr.events])
  np.testing.assert_allclose(out.numpy(), np.maximum(a.numpy() @ b.numpy(), 0).sum(1), rtol=1e-5)
  print(f"call {i + 1}: {events[-1]}")

# %%
# "schedule"/"program" events are the pipeline, "jit" a replay of kernels
assert "schedule" in events[0] and "program" in events[0]
assert "schedule" in events[1] and "jit" in events[1]
assert events[2] == events[3] == ["jit"]   # replay: no schedule, no codegen, no Python of step()

# %% [markdown]
# With `DEBUG=2` the replays print as `JIT replay` lines. That is the whole pipeline: the schedule decides the
# kernels, opts (or BEAM) shape them, lowering and the symbolic rules make index math, the linearizer makes a list,
# a renderer prints it as code, and the runtime compiles and runs it; TinyJit remembers the result.
#
# Next: **08_backends**, the last stage for each device.

# %% [markdown]
# ## Exercise: two rules for index math
#
# Index expressions often divide or take the remainder by 1. Make `rules`, a `PatternMatcher` that rewrites
# `x // 1 -> x` and `x % 1 -> 0` (a constant 0 of x's dtype: `x.const_like(0)`). The check rewrites small index
# expressions with it and makes sure `i // 2`, `i % 3` and `i // j` are left alone.

# %%
# EXERCISE 07.int_rules
rules = PatternMatcher([
  # YOUR CODE: (pattern, function) pairs
])

# %%
from lazynb.notebook.exercise import check
check("07.int_rules", rules)

# %% [markdown]
# ## Exercise: choose opts that beat the heuristic
#
# The heuristic is written for kernels of every size. For the 64x64 matmul of the playground above (`pg`), find a list
# of opts that runs at least 15% faster than the heuristic's. Use the playground: start from `pg.reset("heuristic")`,
# undo, apply, and watch the time. `my_opts` returns the list; the check races it against the heuristic (interleaved
# runs, medians) on a fresh 64x64 matmul and makes sure the result still equals numpy.

# %%
# EXERCISE 07.beat_heuristic
def my_opts():
  # YOUR CODE: return a list of Opt, e.g. [Opt(OptOps.UPCAST, 1, 4), ...]
  raise NotImplementedError

# %%
check("07.beat_heuristic", my_opts)
