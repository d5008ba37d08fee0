# %% [markdown]
# # Project 2: the three kinds of operation
#
# A tensor library can look like it has hundreds of operations, yet lazynb (like tinygrad) builds every one
# of them from three kinds of primitive:
#
# | kind | what it does | examples |
# |---|---|---|
# | **elementwise** | one output value from the values at the same position | ADD, MUL, WHERE, EXP2, RECIP |
# | **reduce** | folds a whole axis into one value | SUM, MAX |
# | **movement** | changes which memory address each index reads; no arithmetic | RESHAPE, PERMUTE, EXPAND, PAD, SHRINK |
#
# There is no matmul or conv primitive: both are a movement, a multiply and a sum. This notebook runs
# and checks each kind in generated code. (Course file `projects/02_op_types.py` is `examples/project2_op_types.py` here.)

# %%
%load_ext lazynb
import numpy as np
from lazynb import Tensor, GlobalCounters
from lazynb.trace import Recorder
from lazynb.uop import Ops
from lazynb.notebook.quiz import quiz

def kernel_sources(fn):
  """Run fn() and return the C source of every kernel that ran. (To look at the kernels of a cell that already
  ran, run the same code on new inputs: a realized result is never computed again, but the compiled kernel
  is reused, so its source is the same.)"""
  with Recorder(rewrites=False) as rec: fn()
  return [e.data["program"].src for e in rec.of("exec") if e.data["kind"] == "kernel"]

x = Tensor.rand(16, 16).realize()

# %% [markdown]
# ## 1. Elementwise ops
#
# lazynb has no `EXP` primitive, only `EXP2` (2 to the power x). So `x.exp()` is rewritten in terms of it, as
# Part 5 showed: `exp2(x * log2(e))`. Find it in the generated C.

# %%
%%tinygrad --debug 3 --show kernels
r_relu = x.relu().realize()
r_mul2 = (x * 2).realize()
r_exp = x.exp().realize()

# %%
xf = Tensor.rand(16, 16).realize()  # new inputs, same kernels
src_relu, src_mul2, src_exp = kernel_sources(lambda: (xf.relu().realize(), (xf * 2).realize(), xf.exp().realize()))
print(next(l for l in src_exp.splitlines() if "exp2" in l).strip())
assert "exp2" in src_exp and "1.44269" in src_exp
lazy_exp = Tensor([1.0, 2.0]).exp()     # not realized: the graph is still there to look at
print("graph of exp:", lazy_exp.uop.op, "<-", lazy_exp.uop.src[0].op)
assert (lazy_exp.uop.op, lazy_exp.uop.src[0].op) == (Ops.EXP2, Ops.MUL)
assert "?" in src_relu and "*2.0f)" in src_mul2
assert np.allclose(r_exp.numpy(), np.exp(x.numpy()), rtol=1e-6) and (r_relu.numpy() == np.maximum(x.numpy(), 0)).all()

# %% [markdown]
# ## 2. Reduce ops
#
# A reduce needs a loop that carries a running value (an accumulator) from one element to the next.

# %%
q_max = quiz("What value does the accumulator of x.max(axis=0) start from?", ["0.0", "the first element", "-infinity", "FLT_MIN"],
             key="p02_op_types.q_max")

# %%
%%tinygrad --debug 3 --show kernels
s_all = x.sum().realize()
m0 = x.max(axis=0).realize()

# %%
xf = Tensor.rand(16, 16).realize()
src_sum, src_max = kernel_sources(lambda: (xf.sum().realize(), xf.max(axis=0).realize()))
assert "for (" in src_sum and "acc0 = (" in src_sum and "(acc0+" in src_sum
assert "-__builtin_inff()" in src_max
q_max.reveal()
assert np.allclose(m0.numpy(), x.numpy().max(axis=0)) and np.isclose(s_all.item(), x.numpy().sum(), rtol=1e-5)
print("sum accumulates with +, max starts from -inf and keeps the larger value")

# %% [markdown]
# ## 3. Movement ops
#
# A movement op changes the *view*: the shape, strides, offset and mask through which a buffer is read. The
# ShapeTracker view of the Project's tensor holds that information; no data needs to move, so realizing a view of a
# realized tensor runs no kernel (Part 5).

# %%
%%tinygrad --debug 2 --show schedule,shapetracker
x3 = Tensor.rand(4, 8, 16).realize()
GlobalCounters.reset()
y = x3.reshape(32, 16).realize()
z = x3.permute(2, 0, 1).realize()
w = x3.reshape(4, 8, 16, 1).expand(4, 8, 16, 3).realize()
s = x3[1:3, :, ::2].realize()
movement_kernels = GlobalCounters.kernel_count

# %%
print("kernels:", movement_kernels)
assert movement_kernels == 0
xn = x3.numpy()
assert (y.numpy() == xn.reshape(32, 16)).all() and (z.numpy() == xn.transpose(2, 0, 1)).all()
assert (w.numpy() == xn[..., None].repeat(3, axis=-1)).all() and (s.numpy() == xn[1:3, :, ::2]).all()
assert w.uop.base is x3.uop.base          # still the original buffer underneath
from lazynb.shape import ShapeTracker
st = ShapeTracker.from_shape((4, 8, 16)).permute((2, 0, 1))
print("permute(2, 0, 1) reads address", st.render()[0], "for index (idx0, idx1, idx2)")

# %% [markdown]
# Movement ops cost nothing *until a kernel reads through them*: then they become index arithmetic inside
# that kernel. The ShapeTracker tab of a `%%tinygrad` cell shows that arithmetic for every buffer a kernel reads.
#
# ## 4. A mixed expression
#
# `(x.permute(1, 0) @ y.reshape(4, 4)).sum(axis=1)`: two movement ops, a matmul (a multiply and a sum), then
# another sum. Two reductions in a row, and the first is read by nothing else: the scheduler merges them into one sum
# over both axes (`x[k, i] * y[k, j]` summed over `k` and `j`), so **one kernel** (docs/fusion.md, "A reduce of a
# reduce is one reduce"). tinygrad 0.10 runs two, one per reduction; so does lazynb when something sits between
# them, as the relu in Part 7's first schedule. The movement ops cost none.

# %%
%%tinygrad --debug 1 --show schedule,kernels
xa, yb = Tensor.rand(4, 4).realize(), Tensor.rand(16).realize()
GlobalCounters.reset()
mixed = (xa.permute(1, 0) @ yb.reshape(4, 4)).sum(axis=1).realize()
mixed_kernels = GlobalCounters.kernel_count

# %%
assert mixed_kernels == 1
assert np.allclose(mixed.numpy(), (xa.numpy().T @ yb.numpy().reshape(4, 4)).sum(axis=1), atol=1e-5)
print("1 kernel, values match numpy")

# %% [markdown]
# ## 5. Matmul by hand
#
# An (M, K) @ (K, N) matmul: view `a` as (M, K, 1) and `b` as (1, K, N), expand both to (M, K, N), multiply,
# and sum over K. No copies are made: the expands are views, and the multiply and the sum are one kernel, like
# Part 5's convolution.

# %%
def matmul_by_hand(a, b):
  (m, k), (_, n) = a.shape, b.shape
  return (a.reshape(m, k, 1).expand(m, k, n) * b.reshape(1, k, n).expand(m, k, n)).sum(axis=1)

# %%
%%tinygrad --show schedule,kernels
a8, b8 = Tensor.rand(8, 5).realize(), Tensor.rand(5, 3).realize()
GlobalCounters.reset()
mine = matmul_by_hand(a8, b8).realize()
hand_kernels = GlobalCounters.kernel_count
ref = (a8 @ b8).realize()

# %%
print("max |hand - @| =", np.abs(mine.numpy() - ref.numpy()).max())
assert hand_kernels == 1
assert np.allclose(mine.numpy(), ref.numpy(), atol=1e-6) and np.allclose(mine.numpy(), a8.numpy() @ b8.numpy(), atol=1e-5)

# %% [markdown]
# ## Exercise 1: the index expression of a view
#
# A view reads element `idx = (i0, i1, ...)` at memory address `offset + i0*strides[0] + i1*strides[1] + ...`
# (counted in elements). Write `address(idx, strides, offset)`. The check builds permuted, sliced, flipped
# (negative strides) and expanded (stride 0) views in numpy and reads every element through your address.

# %%
# EXERCISE p02.address
def address(idx, strides, offset):
  # YOUR CODE: return the flat address (an int) of index tuple idx
  raise NotImplementedError

# %%
from lazynb.notebook.exercise import check
check("p02.address", address)

# %% [markdown]
# ## Exercise 2: a batched matmul by hand
#
# Extend §5 to a batch: `(B, M, K) @ (B, K, N) -> (B, M, N)` with reshape/expand, a multiply and a sum.
# `@`, `matmul`, `dot` and `einsum` are switched off while the check runs, and so is reading values out (`numpy()`):
# the result must be the lazy Tensor your ops build from `a` and `b`.

# %%
# EXERCISE p02.bmm
def batched_matmul(a, b):
  # YOUR CODE: movement ops, one multiply, one sum
  raise NotImplementedError

# %%
from lazynb.notebook.exercise import check
check("p02.bmm", batched_matmul)
