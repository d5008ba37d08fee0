# %% EXERCISE b07.index_math
from lazynb.uop.ops import UOp
from lazynb.dtype import dtypes

def view_index(view, idxs):
  """One view: where the element at idxs lies in memory, and whether it is valid (inside the mask)."""
  idx, valid = UOp.const(dtypes.index, view.offset), UOp.const(dtypes.bool, True)
  for i, stride in zip(idxs, view.strides):
    if stride != 0: idx = idx + i * stride
  for i, (lo, hi), size in zip(idxs, view.mask or (), view.shape):
    if lo > 0: valid = valid & (i >= lo)
    if hi < size: valid = valid & (i < hi)
  return idx, valid

def my_index_math(views, idxs):
  """A stack of views: the top view's position is an index into the view below, unflattened into its shape."""
  idx, valid = view_index(views[-1], idxs)
  for view in reversed(views[:-1]):
    dims, rest = [], idx
    for size in reversed(view.shape):
      dims.append(rest % size)
      rest = rest // size
    idx, below = view_index(view, dims[::-1])
    valid = valid & below
  return idx, valid
