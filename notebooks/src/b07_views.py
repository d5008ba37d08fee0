# %% [markdown]
# # Build 7: the index math of views, yours
#
# Part 5 showed that a movement op moves no data: it edits a **View** (shape, strides, offset, mask), and a reshape
# the View cannot express pushes a second View on a stack, the ShapeTracker. The data moves only when a kernel reads
# it, through **index math**: for each element, which position in memory to read, and whether there is anything to
# read at all (a padded element is not in memory: it reads as 0).
#
# lazynb's lower stage writes that index math into every kernel. Here you write it: a function that, given the stack
# of views and one index expression per dimension, returns the position and the validity as UOps. The check evaluates
# yours at every index of a set of views and compares, then runs the corpus through lazynb's lower stage with your
# index math inside. Kept, it goes into every kernel that `with mine():` runs.

# %%
%load_ext lazynb
import numpy as np
from lazynb import Tensor, Context
from lazynb.dtype import dtypes
from lazynb.uop.ops import UOp
from lazynb.notebook.exercise import check

# %% [markdown]
# ## One view
#
# A 3x4 tensor padded and flipped, as lazynb tracks it: `ShapeTracker.from_shape((3, 4))` with the same movement ops
# (flip takes one bool per dimension here). `views[-1]` is the top view; the tensor's values are next to it:

# %%
from lazynb.shape.shapetracker import ShapeTracker
st = ShapeTracker.from_shape((3, 4)).pad(((1, 0), (0, 2))).flip((False, True))
for v in st.views: print(v)
print(Tensor(np.arange(12, dtype=np.float32).reshape(3, 4)).pad(((1, 0), (0, 2))).flip(1).numpy())

# %% [markdown]
# Read it this way: the element at index $(i, j)$ lies at $\text{offset} + i\cdot\text{strides}_0 + j\cdot\text{strides}_1$
# (a stride of 0 repeats an element, a negative one walks backwards), and it exists only where every index lies inside
# its mask's range, $lo \le i < hi$ (a dimension without a mask, or the whole view without one, is always inside).
# Outside, the position may be anything, even negative: it is never read.
#
# The index expressions are UOps, and so are the results: `UOp.const(dtypes.index, 5)`, `i * 3`, `a + b`,
# `i >= 2`, `i < 4`, `valid & other` and `UOp.const(dtypes.bool, True)` build them. lazynb's own index math for this
# view, written out with `idx0`, `idx1` for the two indices (`st.render()`), and its values at index (1, 2):

# %%
print("position: %s\nvalid:    %s" % st.render())
idx, valid = st.to_indexed_uops([UOp.const(dtypes.index, 1), UOp.const(dtypes.index, 2)])
print("at (1, 2):", idx.vmin, valid.vmin)
assert (idx.vmin, valid.vmin) == (3, True)  # row 1 is the array's row 0; flipped, column 2 reads the array's column 3

# %% [markdown]
# ## Two views
#
# A reshape after a permute cannot be one view: the transposed elements are not one strided run. The stack keeps
# the transpose below and the new shape on top:

# %%
st2 = ShapeTracker.from_shape((3, 4)).permute((1, 0)).reshape((2, 6))
for v in st2.views: print(v)
print("position: %s\nvalid:    %s" % st2.render())

# %% [markdown]
# The top view turns the index into a position, as before. That position is an index into the view **below**,
# counted in its shape as a flat number: unflatten it into one index per dimension (the last dimension varies
# fastest: `position % size` is its index, `position // size` what is left for the dimensions before it), and
# apply the view below to those. An element is valid only if it is valid in **every** view.
#
# ## Exercise: the index math
#
# `my_index_math(views, idxs)` gets the tuple of views (bottom first, top last) and one index UOp per dimension of the
# top view, and returns `(position, valid)`, two UOps. A helper for one view makes the stack short; keep it in the same
# cell (the cell is saved as one file).

# %%
# EXERCISE b07.index_math
from lazynb.uop.ops import UOp
from lazynb.dtype import dtypes

def my_index_math(views, idxs):
  """(position, valid) as UOps for the element at idxs of a stack of views (views[-1] on top)."""
  raise NotImplementedError  # YOUR CODE

# %%
check("b07.index_math", my_index_math)

# %% [markdown]
# ## Your index math in every kernel
#
# Kept (`my_compiler/views.py`), your function writes the index math of every kernel that `with mine():` runs,
# inside lazynb's lower stage, with your other kept stages around it. The Kernels tab shows the source: the
# positions your UOps compute, in C. Your kernels run bounds-checked: a position outside its buffer is an error,
# not a read of some other memory.

# %%
%%tinygrad
from lazynb.notebook.build import mine
a = np.arange(24, dtype=np.float32).reshape(4, 6)
with mine():
  out = (Tensor(a).permute(1, 0).reshape(3, 8).pad(((1, 0), (0, 1))) * 2).sum(axis=0).numpy()
want = (np.pad(a.T.reshape(3, 8), ((1, 0), (0, 1))) * 2).sum(axis=0)
assert np.allclose(out, want)
print(out)
