# %% [markdown]
# # Part 5 — The three kinds of operation
#
# Every tensor program in lazynb (and tinygrad) is built from three kinds of primitive:
#
# 1. **Elementwise** ops: each output element depends on the elements at the same position of the inputs.
#    Trivially parallel.
# 2. **Reduce** ops: collapse one or more axes (sum, max). The output element depends on many inputs, which is
#    what makes reductions the hard part of GPU programming.
# 3. **Movement** ops: reshape, permute, expand, pad, shrink, flip. They move no data; they change how an index
#    into the tensor maps to a position in memory, and that mapping is the **ShapeTracker**.
#
# There is no matmul primitive and no convolution primitive. This notebook takes each kind in turn, then shows a
# convolution as "two views, a multiply and a sum", as the slides put it.

# %%
%load_ext lazynb
import numpy as np
from lazynb import Tensor, Device, Context, GlobalCounters, dtypes, Ops
from lazynb.uop.ops import GroupOp
from lazynb.shape import ShapeTracker
from lazynb.trace import capture
from lazynb.notebook.quiz import quiz, ask_number

# %% [markdown]
# ## 1. Elementwise ops
#
# lazynb's whole list, straight from the source (`lazynb/uop/opcodes.py`, where the `Ops` enum and its groups live):

# %%
for kind in ("Unary", "Binary", "Ternary"):
  print(f"{kind:8s}", sorted(o.name for o in getattr(GroupOp, kind)))
print("plus    ", ["CAST", "BITCAST"])

# %% [markdown]
# Compared with the course's table: there is no SUB and no DIV. `a - b` is `a + (-b)` (ADD of NEG) and `a / b`
# is `a * (1/b)` (MUL of RECIP), which leaves a backend fewer ops to implement. CAST stands on its own rather than
# among the unary ops. CMPNE (not equal) and the bit ops serve comparisons, booleans and integer math. There is no
# RELU and no EXP either: they are built from the list above.
#
# The course's table also lists **MULACC** (`a*b+c` as one op) among the ternary ops. lazynb has no such op: no rule
# would produce it, so `a * b + c` stays a MUL feeding an ADD in the kernel, and the C compiler fuses them into one
# fused multiply-add instruction where it can.

# %%
ma, mb, mc = [Tensor.randn(8).realize() for _ in range(3)]
with capture(rewrites=False) as tr_ma: fma = (ma * mb + mc).realize()
uop_names = [u["op"] for u in tr_ma.kernels[0]["uops"]]
print("ALU ops in the kernel of a * b + c:", sorted({n for n in uop_names if n in ("MUL", "ADD", "MULACC")}))
assert "MULACC" not in uop_names and "MUL" in uop_names and "ADD" in uop_names
np.testing.assert_allclose(fma.numpy(), ma.numpy() * mb.numpy() + mc.numpy(), rtol=1e-6)

# %% [markdown]
# Predict one:

# %%
q_relu = quiz("Which UOp is at the top of x.relu()?", ["RELU", "MAX", "WHERE", "CMPLT"], key="05_op_types.q_relu")

# %%
x = Tensor.randn(8).realize()
def ops_of(t): return sorted({u.op.name for u in t.uop.toposort()} & {o.name for o in GroupOp.ALU})
for name, t in [("x.relu()", x.relu()), ("x.exp()", x.exp()), ("x.sigmoid()", x.sigmoid()), ("x - x", x - x), ("x / x", x / x)]:
  print(f"{name:12s} top: {t.uop.op.name:6s} ALU ops used: {ops_of(t)}")

# %%
q_relu.reveal(x.relu().uop.op.name)
assert x.exp().uop.op is Ops.EXP2 and x.exp().uop.src[0].op is Ops.MUL     # exp(x) = exp2(x * log2(e))
assert (x - x).uop.op is Ops.ADD and (x - x).uop.src[1].op is Ops.NEG
assert (x / x).uop.op is Ops.MUL and (x / x).uop.src[1].op is Ops.RECIP
assert "SUB" not in Ops.__members__ and "DIV" not in Ops.__members__ and "RELU" not in Ops.__members__

# %% [markdown]
# A chain of elementwise ops of any length is one kernel. The hacking guide's custom activation `x*x + sin(x)`:

# %%
%%tinygrad --show kernels
def custom_activation(x: Tensor) -> Tensor: return x * x + x.sin()
xa = Tensor([0.5, 1.0, 1.5, 2.0])
ya = custom_activation(xa).realize()
sg = x.sigmoid().realize()

# %% [markdown]
# The **Kernels** tab has one kernel per result. In the sigmoid's C you can read the decomposition:
# `1.0f/(__builtin_exp2f((-val)*1.4426950216293335f)+1.0f)`, that is 1 / (2^(-x·log2 e) + 1).

# %%
np.testing.assert_allclose(ya.numpy(), [v * v + np.sin(v) for v in [0.5, 1.0, 1.5, 2.0]], rtol=1e-6)
np.testing.assert_allclose(sg.numpy(), 1 / (1 + np.exp(-x.numpy())), rtol=1e-6)
with capture(rewrites=False) as tr: x.sigmoid().exp().sqrt().realize()
assert len(tr.kernels) == 1 and "__builtin_exp2f" in tr.kernels[0]["source"]

# %% [markdown]
# ## 2. Reduce ops
#
# `sum` and `max` are REDUCE_AXIS nodes, with the reduced axes in their arg. `mean` is a sum times `1/n`, an
# elementwise op after the reduction, which fuses into the same kernel. The interesting question is what happens
# when a reduced value is used *again* by every element, as in centering: `x - x.mean()`.

# %%
q_center = ask_number("x has shape (4, 8). How many kernels does (x - x.mean()).realize() run?", key="05_op_types.q_center")

# %%
%%tinygrad --noopt --show schedule,kernels
x = Tensor.randn(4, 8).realize()
centered = (x - x.mean()).realize()

# %% [markdown]
# **What you see.** With NOOPT the code is easy to read. Kernel `r_32` is the reduction: an accumulator `acc0`, a
# `for` loop over the 32 elements, and one store of `acc0*0.03125`: the mean's `* 1/32` came along into the reduce's
# kernel, so it is done once, not by each of the 32 readers. The second kernel, `E_32`, loads every element *and* the
# stored mean, and computes `val0+(-val1)`. In the schedule (top of **Kernels**), the first
# item's reason is `reduce`: its result is read through an *expand* (one value broadcast to 32), so it cannot stay
# in registers. Untick NOOPT: the loop in `r_32` gets unrolled, the second kernel upcast.

# %%
x_fresh = Tensor.randn(4, 8).realize()   # a fresh tensor: (x - x.mean()) is already realized, so it would run nothing
with Context(NOOPT=1), capture(rewrites=False) as tr:
  (x_fresh - x_fresh.mean()).realize()
reasons = [s["reason"] for s in tr.schedule]
src0 = tr.kernels[0]["source"]
assert reasons == ["reduce", "realize"] 
q_center.reveal(len(tr.kernels))
assert "acc0" in src0 and "for (" in src0 and "*0.03125" in src0  # the mean is stored, not the sum
np.testing.assert_allclose(centered.numpy(), x.numpy() - x.numpy().mean(), rtol=1e-5, atol=1e-6)
assert len([s for s in Tensor.randn(4, 8).realize().mean().schedule() if s.kind == "kernel"]) == 1  # alone, mean is one kernel

# %% [markdown]
# Softmax needs the row maximum (for stability) and the row sum of exponentials: two reductions, each used by every
# element of its row, so three kernels:

# %%
sm = Tensor.randn(4, 8).softmax()
print([(s.kind, s.reason) for s in sm.schedule()])
assert [s.reason for s in sm.schedule()] == ["reduce", "reduce", "realize"]
np.testing.assert_allclose(sm.numpy().sum(axis=1), np.ones(4), rtol=1e-5)

# %% [markdown]
# ## 3. Movement ops: free, thanks to the ShapeTracker

# %%
q_move = ask_number("y is a realized (4, 8, 16) tensor. How many kernels does y.permute(2, 0, 1).realize() run?", key="05_op_types.q_move")

# %%
y = Tensor.randn(4, 8, 16).realize()
views = {"reshape(32, 16)": y.reshape(32, 16), "permute(2, 0, 1)": y.permute(2, 0, 1),
         "expand(10, 4, 8, 16)": y.expand(10, 4, 8, 16), "[1:3, :, ::2]": y[1:3, :, ::2]}
counts = {}
for name, v in views.items():
  GlobalCounters.reset()
  v.realize()
  counts[name] = GlobalCounters.kernel_count
  print(f"{name:22s} kernels: {counts[name]}  same buffer as y: {v.uop.base is y.uop.base}")
GlobalCounters.reset()
arr = views["permute(2, 0, 1)"].numpy()
print("...but numpy() of the permuted view needs its data in order:", GlobalCounters.kernel_count, "kernel")

# %%
assert set(counts.values()) == {0} 
q_move.reveal(counts["permute(2, 0, 1)"])
assert all(v.uop.base is y.uop.base for v in views.values())
assert GlobalCounters.kernel_count == 1
np.testing.assert_array_equal(arr, y.numpy().transpose(2, 0, 1))

# %% [markdown]
# The hacking guide's "zero-copy movement ops" snippet ends with `result = w.realize()  # Data moves here`. Run it and
# count: realizing a chain of permute, reshape and expand of a realized tensor moves **no** data and runs **no**
# kernel (tinygrad 0.10 gives 0 too). The result is the same buffer behind a new view. Data moves only when a
# kernel reads through the view, for example `.contiguous()`, which copies the expanded values into a new buffer.

# %%
xg = Tensor.randn(4, 8, 16).realize()
w = xg.permute(2, 0, 1).reshape(16, 32).reshape(16, 32, 1).expand(16, 32, 4)
GlobalCounters.reset()
result = w.realize()
k_view = GlobalCounters.kernel_count
result_c = w.contiguous().realize()
k_copy = GlobalCounters.kernel_count - k_view
print(f"w.realize(): {k_view} kernels, same buffer as x: {result.uop.base is xg.uop.base};  w.contiguous().realize(): {k_copy} kernel")
want = np.broadcast_to(xg.numpy().transpose(2, 0, 1).reshape(16, 32, 1), (16, 32, 4))
assert k_view == 0 and result.uop.base is xg.uop.base and k_copy == 1
np.testing.assert_array_equal(result.numpy(), want)
np.testing.assert_array_equal(result_c.numpy(), want)

# %% [markdown]
# A **View** is a shape, one **stride** per axis (how far to move in memory for a step along that axis), an
# **offset** and an optional **mask** (which indices are valid; outside it, the value is 0). A **ShapeTracker** is a
# stack of views, and `render()` prints the index arithmetic it compiles to, in terms of the index of each axis
# (`idx0`, `idx1`...):

# %%
st = ShapeTracker.from_shape((4, 8))
cases = {"(4, 8)": st, "permute(1, 0)": st.permute((1, 0)), "(4, 1) expand(4, 8)": ShapeTracker.from_shape((4, 1)).expand((4, 8)),
         "shrink((1, 3), (2, 6))": st.shrink(((1, 3), (2, 6))), "pad((1, 1), (0, 0))": st.pad(((1, 1), (0, 0))),
         "flip axis 1": st.flip((False, True))}
for name, s in cases.items():
  v = s.views[-1]
  idx, valid = s.render()
  print(f"{name:24s} shape={str(v.shape):8s} strides={str(v.strides):8s} offset={v.offset:3d} mask={v.mask}  index={idx}  valid={valid}")

# %% [markdown]
# Read the rows: a **permute** swaps the strides; an **expand** gives the new axis stride 0 (every step reads the same
# element); a **shrink** moves the offset; a **pad** adds a mask, and the `valid` expression becomes a bounds check;
# a **flip** makes a stride negative.

# %%
assert cases["permute(1, 0)"].views[-1].strides == (1, 8)
assert cases["(4, 1) expand(4, 8)"].views[-1].strides == (1, 0)
assert cases["shrink((1, 3), (2, 6))"].views[-1].offset == 10
assert cases["pad((1, 1), (0, 0))"].views[-1].mask == ((1, 5), (0, 8)) and cases["pad((1, 1), (0, 0))"].render()[1] != "True"
assert cases["flip axis 1"].views[-1].strides == (8, -1)

# %% [markdown]
# One case a single view cannot express: **reshaping after a permute**. Flattening a transposed (4, 8) array
# does not walk memory with one stride, so the ShapeTracker pushes a second view, and the index needs `//` and `%`
# (the slides: "reshape can create a multiview ShapeTracker"):

# %%
mv = ShapeTracker.from_shape((4, 8)).permute((1, 0)).reshape((32,))
print(len(mv.views), "views; index:", mv.render()[0])
assert len(mv.views) == 2 and "//" in mv.render()[0] and "%" in mv.render()[0]

# %% [markdown]
# **Drawing a view.** `show_st` (from `lazynb.notebook`) draws a tensor's ShapeTracker: the grid of logical cells,
# each showing the memory index it reads, above the buffer drawn as a row of cells, each read cell coloured like
# the cells that read it. In JupyterLab, hover a cell: it lights the memory cell it reads and prints its index
# arithmetic, view by view; hover a memory cell to light every cell that reads it. (In a static copy of the
# notebook each cell's tooltip holds the same arithmetic.) First a permute of a (3, 4) arange:

# %%
from lazynb.notebook import show_st
x = Tensor.arange(12).reshape(3, 4)
show_st(x.permute(1, 0))

# %% [markdown]
# **Reading it.** Row 0 of the transposed tensor reads 0, 4, 8: a step along a row (dim 1) moves 4 in memory, the
# old row stride, and a step down (dim 0) moves 1: view 0's `strides (1, 4)`. Every memory cell is read exactly
# once, in a new order, and nothing was copied. The numbers are in `.pictures`; numpy agrees:

# %%
def grid(pics, i=0): return [[c["mem"] for c in row] for row in pics.pictures[i]["cells"]]
assert grid(show_st(x.permute(1, 0))) == np.arange(12).reshape(3, 4).T.tolist()
show_st(x.pad(((1, 1), (0, 2))))

# %% [markdown]
# **A pad** makes a (5, 6) tensor from 12 elements. The striped cells read nothing: the mask `((1, 4), (0, 4))`
# keeps rows 1 to 3 and columns 0 to 3, outside it `valid` is False and the value is 0. Inside, the offset -4
# moves everything back one row: cell (1, 0) reads -4 + 1·4 + 0·1 = 0. The memory row is still the 12 elements of
# `x`: padding costs no memory, only a bounds check.

# %%
pad_ref = np.pad(np.arange(12).reshape(3, 4), ((1, 1), (0, 2)), constant_values=-1)   # -1 marks numpy's padding
assert grid(show_st(x.pad(((1, 1), (0, 2))))) == [[None if v < 0 else v for v in row] for row in pad_ref.tolist()]
two = x.permute(1, 0).reshape(2, 6)
show_st(two)

# %% [markdown]
# **Two views.** A reshape after the permute, and the picture reads through both. Hover cell (1, 1): view 1 (the
# reshape, contiguous, strides (6, 1)) turns (1, 1) into the flat position 7; 7 unflattened into view 0's shape
# (4, 3) is (2, 1); view 0 (the permute, strides (1, 4)) reads 2·1 + 1·4 = 6. Along a row the memory goes
# 0, 4, 8, 1, 5, 9: no single stride walks that (the jump from 8 back to 1), which is why the reshape could not
# merge into one view and why the index needs `//` and `%`.

# %%
p2 = show_st(two).pictures[0]
assert len(p2["views"]) == 2 and grid(show_st(two)) == np.arange(12).reshape(3, 4).T.reshape(2, 6).tolist()
steps = p2["cells"][1][1]["steps"]
assert [(s["view"], s["idx"], s["out"]) for s in steps] == [(1, [1, 1], 7), (0, [2, 1], 6)]

# %% [markdown]
# In a kernel, the movement ops vanish into the index of each load. Here a transposed, padded input is added to 1:

# %%
%%tinygrad --show shapetracker,kernels --no-controls
m = Tensor.arange(12).reshape(3, 4).realize()
padded = (m.T.pad(((1, 0), (0, 0))) + 1).realize()

# %% [markdown]
# **What you see** in the ShapeTracker views of the **Kernels** tab: one row per buffer access. The load of `data1` has the view
# `shape (5, 3) strides (1, 4) offset -1 mask ((1, 5), (0, 3))`: the transpose swapped the strides, the pad shifted
# the offset back by one row and added the mask. The `index` column is that view's arithmetic in the kernel's own
# axis names (`gidx0` is the loop, `upcast0` the unrolled axis), `valid` is the pad's bounds check `gidx0>0`, and the
# last column lists the movement ops that made the view, from the buffer to the kernel: RESHAPE, PERMUTE, PAD. In
# **Kernels** the same expressions appear in C, with `valid` turned into a `?:` select that reads 0 in the padding.
# Every load and store also carries a **picture**, the same drawing as `show_st` above but over the kernel's own
# shape (unfold "picture" under an access).

# %%
expected = np.pad(np.arange(12).reshape(3, 4).T, ((1, 0), (0, 0))) + 1
np.testing.assert_array_equal(padded.numpy(), expected)
with capture(rewrites=False) as tr:
  (Tensor.arange(12).reshape(3, 4).realize().T.pad(((1, 0), (0, 0))) + 1).realize()
load = next(v for v in tr.to_json()["views"] if v["access"] == "load")
assert load["views"][-1]["mask"] == [[1, 5], [0, 3]] and load["valid"] != "True"
assert [m[0] for m in reversed(load["movement"])] == ["RESHAPE", "PERMUTE", "PAD"]  # stored outermost first
assert "?" in tr.kernels[-1]["source"]

# %% [markdown]
# > **Then and now.** lazynb keeps the design tinygrad 0.10 and the course teach: the movement ops pile up in a
# > ShapeTracker (a stack of Views), and a kernel reads memory through the index expression the views give. tinygrad
# > itself deleted ShapeTracker in late 2025 ("rangeify"): in today's `tinygrad/schedule/rangeify.py` and
# > `schedule/indexing.py` each movement op is rewritten straight into arithmetic on the loop variables (`RANGE`s) of the
# > kernel that reads it. The idea you just watched, a view as index math over loops with a validity mask, is the same;
# > the View object in between is gone.

# %% [markdown]
# ## 4. Matmul and conv: views, a MUL and a SUM
#
# `a @ b` reshapes `a` to (n, 1, k) and `b` to (1, m, k) (transposed), multiplies them into (n, m, k) by
# broadcasting, and sums the last axis. Both "expands" are stride-0 views, so nothing of size n·m·k is ever stored.
#
# A convolution is the same idea with a cleverer view: the input, viewed as sliding windows (a shape with one axis
# per output position and one per kernel position), times the weights viewed with stride 0 along the output
# positions, summed over (input channel, kernel y, kernel x). The slides show a tinygrad LazyBuffer graph with just
# that: two views, `BinaryOps.MUL`, `ReduceOps.SUM`.

# %%
q_conv = ask_number("A conv2d of a (1, 3, 8, 8) input with (4, 3, 3, 3) weights, no bias. How many kernels?", key="05_op_types.q_conv")

# %%
%%tinygrad --show graph,shapetracker
img, w = Tensor.randn(1, 3, 8, 8).realize(), Tensor.randn(4, 3, 3, 3).realize()
out = img.conv2d(w).realize()

# %% [markdown]
# **What you see.** The **Tensor graph** tab holds the lazy graph: a long chain of movement ops on the
# input (the window trick: repeat, shrink, reshape, permute, expand) and a few on the weights, then MUL and
# REDUCE_AXIS. The kernel's AST (in the **Kernels** tab) is tiny: LOAD, LOAD, MUL, REDUCE_AXIS, STORE. All the movement ops became
# the two VIEWs, whose strides the kernel's ShapeTracker views list per kernel axis.

# %%
img2, w2 = Tensor.randn(1, 3, 8, 8).realize(), Tensor.randn(4, 3, 3, 3).realize()   # fresh: img.conv2d(w) is realized
conv_kernels = [si for si in img2.conv2d(w2).schedule() if si.kind == "kernel"]
(k,) = conv_kernels
red = [u for u in k.ast.toposort() if u.op is Ops.REDUCE_AXIS]
mul = red[0].src[0]
loads = [s for s in mul.src]
views = [l.src[1].arg.views[-1] for l in loads]
for l, v in zip(loads, views): print(f"LOAD data{l.src[0].arg}: shape {v.shape} strides {v.strides}")

# %%
assert len(red) == 1 and red[0].arg[0] is Ops.ADD and mul.op is Ops.MUL
assert [l.op for l in loads] == [Ops.LOAD, Ops.LOAD] and all(l.src[1].op is Ops.VIEW for l in loads)
assert views[1].strides == (0, 0, 27, 0, 0, 9, 3, 1)  # the weights: stride 0 along every output position
assert 0 in views[0].strides                          # the input: stride 0 along the output channels
q_conv.reveal(len(conv_kernels))
ref = np.zeros((1, 4, 6, 6), np.float32)
xn, wn = img.numpy(), w.numpy()
for o in range(4):
  for i in range(6):
    for j in range(6): ref[0, o, i, j] = (xn[0, :, i:i + 3, j:j + 3] * wn[o]).sum()
np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-4)

# %% [markdown]
# The weight strides `(0, 0, 27, 0, 0, 9, 3, 1)` are exactly the ones in the slides' graph (there for 16 output
# channels and 62x62 outputs): 27 per output channel, 9 per input channel, 3 per kernel row, 1 per kernel column,
# and 0 for batch and output position. Same design, same numbers.
#
# **The two views, drawn.** With `padding=1` the input's ShapeTracker is itself a stack of two views: view 0 is the
# padded image (shape (1, 3, 10, 10), a mask around the 8x8 pixels), view 1 the sliding windows over it. Draw the
# kernel's two loads over the 3x3 window (dims 6 and 7 of the kernel's shape (batch, group, cout, oy, ox, cin, ky,
# kx)), holding output channel 1, output position (0, 0) and input channel 0:

# %%
(kp,) = [si for si in img2.conv2d(w2, padding=1).schedule() if si.kind == "kernel"]
inp_st, w_st = [u.src[1].arg for u in sorted((u for u in kp.ast.toposort() if u.op is Ops.LOAD), key=lambda u: u.src[0].arg)]
conv_pics = show_st(inp_st, w_st, dims=(6, 7), at=[0, 0, 1, 0, 0, 0, 0, 0], titles=["input windows (two views)", "weights"])
conv_pics

# %% [markdown]
# **Reading it.** At output (0, 0) the window hangs over the top-left corner of the image, so its first row and
# column are padding (striped: `valid` is False there, they add 0 to the sum); the other four cells read pixels 0,
# 1, 8 and 9 of channel 0. Hover window cell (1, 1) for the route: view 1 turns the index into position 11 of the
# padded image, which view 0 unflattens to pixel (0, 0, 1, 1) of the 10x10 padded image and moves back by the
# padding (offset -9) to memory 0. The weights read 27 to 35, output channel 1's kernel for input channel 0
# (27 = 1·27), and they read the same at every output position: their strides there are 0. Change `at` (say
# `[0, 0, 1, 3, 4, 0, 0, 0]`) to slide the window.

# %%
padded_img = np.pad(np.arange(3 * 64).reshape(1, 3, 8, 8), ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-1)
win = padded_img[0, 0, 0:3, 0:3]
assert len(inp_st.views) == 2 and grid(conv_pics, 0) == [[None if v < 0 else v for v in row] for row in win.tolist()]
assert grid(conv_pics, 1) == np.arange(4 * 27).reshape(4, 3, 3, 3)[1, 0].tolist()
for oy, ox in [(3, 4), (7, 7)]:   # slide the window: still numpy's patch
  moved = show_st(inp_st, dims=(6, 7), at=[0, 0, 1, oy, ox, 2, 0, 0])
  assert grid(moved) == [[None if v < 0 else v for v in row] for row in padded_img[0, 2, oy:oy + 3, ox:ox + 3].tolist()]

# %% [markdown]
# Next: **06_autograd**, where gradients turn out to be more graph built from these same ops.

# %% [markdown]
# ## Exercise: softmax from the three kinds of op
#
# Write `softmax(x)` over the last axis from elementwise and reduce ops (`Tensor.softmax` is off during the check).
# It must also work for inputs around 200, where `exp` alone overflows float32.

# %%
# EXERCISE 05.softmax
def softmax(x):
  # YOUR CODE
  raise NotImplementedError

# %%
from lazynb.notebook.exercise import check
check("05.softmax", softmax)
