"""Indexing with tensors: x[idx], x[idx] = v, gather, scatter, masked ops. There is no gather or scatter primitive:
reading x at a data-dependent place is a one-hot sum, `(idx == arange(n)).where(x, 0).sum()` (the lowerer folds it
back into a load, see codegen/lowerer.fold_onehot); writing is the same comparison read the other way round: each
output place looks for the (last) source element whose index names it. Out-of-range indices match nothing (they read
0 and write nowhere), as in tinygrad; negative indices count from the end in x[idx] only."""
from __future__ import annotations
from typing import TYPE_CHECKING
import numpy as np
from lazynb.dtype import dtypes
from lazynb.helpers import prod
from lazynb.shape.sizes import broadcast_shape, ArgumentError
from lazynb.gradient import custom_gradient
from lazynb.uop.ops import UOp
if TYPE_CHECKING: from lazynb.tensor import Tensor

def _pick(mask: Tensor, x: Tensor, axis: int) -> Tensor:
  """The x where mask is set along axis (at most one place each): a one-hot sum, in x's dtype."""
  return (mask & x).any(axis) if x.dtype is dtypes.bool else mask.where(x, 0).sum(axis, dtype=x.dtype)


# ---------------------------------------------------------------- x[idx] and x[idx] = v with index tensors
def _index_tensors(self: Tensor, idx: tuple) -> tuple[tuple, list[Tensor]]:
  """idx with the ellipsis spelled out and lists/arrays as int tensors; the tensors in order."""
  T = type(self)
  idx = tuple(T(np.asarray(i), device=self.device) if isinstance(i, (list, np.ndarray)) else i for i in idx)
  if sum(i is Ellipsis for i in idx) > 1: raise IndexError("an index can have only a single ellipsis (...)")
  if any(i is Ellipsis for i in idx):
    k, real = [i is Ellipsis for i in idx].index(True), sum(1 for i in idx if i is not None and i is not Ellipsis)
    idx = idx[:k] + (slice(None),) * max(0, self.ndim - real) + idx[k + 1:]
  tensors = [i for i in idx if isinstance(i, T)]
  for t in tensors:
    if not dtypes.is_int(t.dtype): raise IndexError(f"index dtype {t.dtype} is not supported: index tensors must be integers")
  return idx, tensors

def _advanced(self: Tensor, idx: tuple):
  """Split x[idx] with int tensors among the indices: ints, slices and None apply first (the view x[basic]); each
  tensor then indexes one axis of that view (dims), all tensors broadcast together to a shape B. As numpy, B replaces
  the tensors' axes when they are next to each other in idx, else it comes first: the result is the view's other axes
  R with B inserted at p. (An int counts as a basic index here, as in tinygrad: x[None, b, 2, d] keeps b and d next to
  each other.) Negative indices count from the end."""
  T = type(self)
  idx, inds = self._index_tensors(idx)
  basic = tuple(slice(None) if isinstance(i, T) else i for i in idx)
  dims, out = [], 0
  for i in idx:
    if isinstance(i, T): dims.append(out)
    if not isinstance(i, (int, np.integer, UOp)): out += 1  # (an int, or a bound Variable, drops its axis)
  view = self[basic]
  B = broadcast_shape(*[t.shape for t in inds])
  inds = [t.cast(dtypes.int32) if t.dtype.itemsize < 4 else t for t in inds]  # (int8 indices into 300 rows: -1 + 300 fits)
  inds = [(t < 0).where(t + view.shape[d], t)._broadcast_to(B) for t, d in zip(inds, dims)]
  p = dims[0] if dims == list(range(dims[0], dims[-1] + 1)) else 0  # next to each other once the ints are gone (torch)
  return view, dims, inds, B, p

def _gather_index(self: Tensor, idx: tuple) -> Tensor:
  """x[idx] with index tensors: the view's indexed axes go last, then each is picked by a one-hot sum (the last
  first), leaving (R, B); B moves to its place."""
  T = type(self)
  x, dims, inds, B, p = self._advanced(idx)
  rest = [d for d in range(x.ndim) if d not in dims]
  x = x.permute(rest + dims)  # (R..., n1..nk)
  R, ns = x.shape[:len(rest)], x.shape[len(rest):]
  x = x.reshape(R + (1,) * len(B) + ns)
  for k in range(len(inds) - 1, -1, -1):  # x is (R, B or 1s, n1..nk)
    onehot = inds[k].unsqueeze(-1) == T.arange(ns[k], device=self.device)
    x = _pick(onehot.reshape(B + (1,) * k + (ns[k],)), x, -1)
  x, r = x._broadcast_to(R + B), len(R)
  return x.permute(list(range(p)) + list(range(r, r + len(B))) + list(range(p, r)))

def _setitem_index(self: Tensor, idx: tuple, value) -> None:
  """x[idx] = value with index tensors, written into x's memory through the view x[basic]: each place (p1..pk) of the
  indexed axes looks for the last of the m = prod(B) index entries that names it (duplicates: the last write wins, as
  numpy and tinygrad) and takes that entry's value, else keeps its own. Work: size of the view times m."""
  T = type(self)
  view, dims, inds, B, p = self._advanced(idx)
  rest = [d for d in range(view.ndim) if d not in dims]
  x = view.permute(rest + dims)
  R, ns, m = x.shape[:len(rest)], x.shape[len(rest):], prod(B)
  shape = R[:p] + B + R[p:]  # the shape of view[idx]
  v = value if isinstance(value, T) else T(value, device=self.device, dtype=self.dtype)
  if broadcast_shape(v.shape, shape) != shape: raise ValueError(f"cannot assign a value of shape {v.shape} to t[{idx!r}] of shape {shape}")
  r, b = len(R), len(B)
  v = v.cast(self.dtype)._broadcast_to(shape).permute(list(range(p)) + list(range(p + b, r + b)) + list(range(p, p + b)))
  eqs = [(ind.reshape(m) == T.arange(n, device=self.device).reshape(n, 1)).reshape((1,) * k + (n,) + (1,) * (len(ns) - k - 1) + (m,))
         for k, (ind, n) in enumerate(zip(inds, ns))]
  match = eqs[0]  # match[p1..pk, j]: entry j names place (p1..pk)
  for eq in eqs[1:]: match = match & eq
  j = T.arange(m, device=self.device)
  last = match.where(j, -1).max(-1)  # (n1..nk)
  new = _pick(j == last.unsqueeze(-1), v.reshape(R + (1,) * len(ns) + (m,)), -1)
  out = (last >= 0).where(new, x)  # (R, n1..nk)
  order = rest + dims
  view.assign(out.permute([order.index(d) for d in range(view.ndim)]))

# ---------------------------------------------------------------- gather / scatter along one axis
def _check_index(self: Tensor, dim: int, index: Tensor, name: str) -> int:
  d = self._resolve_axis(dim)
  if not dtypes.is_int(index.dtype): raise TypeError(f"{name}: the index must be an int tensor, got {index.dtype}")
  if index.ndim != self.ndim: raise ArgumentError(f"{name}: index has {index.ndim} dims, the tensor {self.ndim}")
  if any(i > s for k, (i, s) in enumerate(zip(index.shape, self.shape)) if k != d):
    raise ArgumentError(f"{name}: index shape {index.shape} is larger than {self.shape} outside dim {d}")
  return d
def gather(self: Tensor, dim: int, index: Tensor) -> Tensor:
  """out[..., j, ...] = self[..., index[..., j, ...], ...] along dim (as torch.gather)."""
  d = self._check_index(dim, index, "gather")
  if self.ndim == 0: return self._as_vector(lambda v: v.gather(0, index.reshape(1)), dim)
  n = self.shape[d]
  x = self.shrink(tuple((0, n) if k == d else (0, i) for k, i in enumerate(index.shape)))
  x = x.unsqueeze(d).permute([k for k in range(self.ndim + 1) if k != d + 1] + [d + 1])  # self's dim d last, index's at d
  return _pick(index.unsqueeze(-1) == type(self).arange(n, device=self.device), x, -1)

def _matches(self: Tensor, d: int, index: Tensor) -> tuple[Tensor, Tensor]:
  """match[..., j, p, ...]: index[..., j, ...] == p (j over the index's dim d, p over self's); and j as a column."""
  T, n = type(self), self.shape[d]
  match = index.unsqueeze(d + 1) == T.arange(n, device=self.device).reshape((n,) + (1,) * (self.ndim - d - 1))
  return match, T.arange(index.shape[d], device=self.device).reshape((index.shape[d], 1) + (1,) * (self.ndim - d - 1))
def _src(self: Tensor, index: Tensor, src, name: str) -> Tensor:
  T = type(self)
  if not isinstance(src, T): return T.full(index.shape, src, dtype=self.dtype, device=self.device)
  if src.dtype != self.dtype: raise RuntimeError(f"{name}: src dtype {src.dtype} must equal the tensor's dtype {self.dtype}")
  if src.ndim != self.ndim or any(i > s for i, s in zip(index.shape, src.shape)):
    raise ArgumentError(f"{name}: src {src.shape} is smaller than index {index.shape}")
  return src.shrink(tuple((0, i) for i in index.shape))
def _fill_out(self: Tensor, d: int, region: Tensor, value) -> Tensor:
  """region (the index's shape, but self's size along d) padded to self's shape with value."""
  return region.pad(tuple((0, 0) if k == d else (0, s - r) for k, (r, s) in enumerate(zip(region.shape, self.shape))), value=value)

def scatter(self: Tensor, dim: int, index: Tensor, src, reduce: str | None = None) -> Tensor:
  """A copy of self with self[..., index[..., j, ...], ...] = src[..., j, ...] along dim (the last write wins)."""
  if reduce not in (None, "multiply", "add"): raise TypeError(f"reduce={reduce!r} must be one of None, 'multiply', or 'add'")
  if reduce is not None:
    if isinstance(src, type(self)): raise TypeError("a tensor src with reduce= is not supported: use scatter_reduce")
    return self.scatter_reduce(dim, index, self._src(index, src, "scatter"), {"add": "sum", "multiply": "prod"}[reduce])
  d = self._check_index(dim, index, "scatter")
  src = self._src(index, src, "scatter")
  if self.ndim == 0: return self._as_vector(lambda v: v.scatter(0, index.reshape(1), src.reshape(1)), dim)
  match, j = self._matches(d, index)
  last = match.where(j, -1).max(d)  # the last j that writes each place
  val = _pick(j == last.unsqueeze(d), src.unsqueeze(d + 1), d)
  return self._fill_out(d, last >= 0, False).where(self._fill_out(d, val, 0), self)

def scatter_reduce(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, include_self: bool = True) -> Tensor:
  """Combine every src[..., j, ...] sent to a place (and self there, if include_self) by sum, prod, mean, amax or amin.
  Places nothing is sent to keep self. A mean of ints is a float, as tinygrad."""
  if reduce not in ("sum", "prod", "mean", "amax", "amin"):
    raise RuntimeError(f"reduce={reduce!r} must be one of 'sum', 'prod', 'mean', 'amax', 'amin'")
  d = self._check_index(dim, index, "scatter_reduce")
  if self.ndim == 0:
    return self._as_vector(lambda v: v.scatter_reduce(0, index.reshape(1), self._src(index, src, "scatter_reduce").reshape(1), reduce, include_self), dim)
  src = self._src(index, src, "scatter_reduce").unsqueeze(d + 1)
  match, _ = self._matches(d, index)
  count = match.sum(d, dtype=dtypes.int32)
  hit, me = self._fill_out(d, count > 0, False), self.cast(dtypes.default_float) if reduce == "mean" and not dtypes.is_float(self.dtype) else self
  if reduce in ("sum", "mean"): r = match.where(src, 0).sum(d, dtype=me.dtype)
  elif reduce == "prod": r = match.where(src, 1).prod(d, dtype=self.dtype)
  elif reduce == "amax": r = match.where(src, dtypes.min(self.dtype)).max(d)
  else: r = match.where(src, dtypes.max(self.dtype)).min(d)
  r = self._fill_out(d, r, 0)
  if include_self: r = r * self if reduce == "prod" else r.maximum(self) if reduce == "amax" else r.minimum(self) if reduce == "amin" else r + me
  if reduce == "mean": r = r / (self._fill_out(d, count, 0) + int(include_self)).maximum(1).cast(r.dtype)
  return hit.where(r, me)

def max_unpool2d(self: Tensor, indices: Tensor, kernel_size=(2, 2), stride=None, dilation=1, padding=0, output_size=None) -> Tensor:
  """The inverse of max_pool2d(return_indices=True): each value goes back to the place (a flat index into its output
  plane) it came from, zeros elsewhere (out-of-range indices go nowhere). The output size is the pool's input size, or output_size."""
  if not dtypes.is_int(indices.dtype): raise RuntimeError(f"max_unpool2d: indices must be an int tensor (max_pool2d's return_indices), got {indices.dtype}")
  if indices.shape != self.shape: raise ValueError(f"max_unpool2d: indices {indices.shape} must have the values' shape {self.shape}")
  k = (kernel_size,) * 2 if isinstance(kernel_size, int) else tuple(kernel_size)
  nd = len(k)
  s = (stride,) * nd if isinstance(stride, int) else tuple(stride) if stride is not None else k
  d = (dilation,) * nd if isinstance(dilation, int) else tuple(dilation)
  pads = self._padding_pairs(padding, nd)
  spatial = tuple(output_size[-nd:]) if output_size is not None else \
    tuple((i - 1) * st - (a + b) + dl * (kk - 1) + 1 for i, st, (a, b), dl, kk in zip(self.shape[-nd:], s, pads, d, k))
  pre, n = self.shape[:-nd], prod(spatial)
  x, idx = self.reshape(pre + (1, -1)), indices.reshape(pre + (1, -1))
  hit = idx == type(self).arange(n, device=self.device).reshape(n, 1)  # (..., place, value)
  if self.dtype is dtypes.bool: return (hit & x).any(-1).reshape(pre + spatial)
  # the max of what was sent (overlapping windows can send one value twice); dtypes.min is -inf for floats
  ret = hit.any(-1).where(hit.where(x, dtypes.min(self.dtype)).max(-1), 0)
  if dtypes.is_float(self.dtype):
    # as torch, every value gets the gradient of the place it went to, also when overlapping windows sent one value
    # twice (the max above would split it between them)
    T, shape, hit_u = type(self), self.shape, hit.uop
    def backward(grad, inputs, wanted):
      g = T(grad).unsqueeze(-1)  # (..., place, 1)
      return (T(hit_u).where(g, 0).sum(-2).reshape(shape).uop,) if wanted[0] else (None,)
    custom_gradient(ret.uop, "max_unpool2d", (self.uop,), backward)
  return ret.reshape(pre + spatial)

# ---------------------------------------------------------------- masks
def masked_fill(self: Tensor, mask: Tensor, value) -> Tensor: return mask.where(value, self)
def masked_select(self: Tensor, mask: Tensor) -> Tensor:
  """The elements of self where mask (broadcast to self) is set, as a 1-D tensor. Its length depends on the data:
  the mask is computed now to count them."""
  T = type(self)
  m = mask.cast(dtypes.bool)._broadcast_to(self.shape).flatten()
  n = int(m.sum().item())
  slot = m.cumsum(0) - 1  # where each selected element goes
  take = m.unsqueeze(0) & (slot.unsqueeze(0) == T.arange(n, device=self.device).unsqueeze(1))
  return _pick(take, self.flatten().unsqueeze(0), 1)
