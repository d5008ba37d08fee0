"""Movement: reshape, permute, expand, pad, shrink, flip and what is built from them (transpose, flatten, squeeze,
basic indexing and slice assignment, cat, stack, repeat, split). Zero-copy: only the view (ShapeTracker) changes.
Functions of a Tensor: tensor.py makes them its methods (`t.reshape(2, 3)` is `reshape(t, 2, 3)` here)."""
from __future__ import annotations
import itertools, weakref
from typing import TYPE_CHECKING
import numpy as np
from lazynb.dtype import dtypes, least_upper_dtype
from lazynb.helpers import prod, ceildiv, all_same
from lazynb.uop.ops import UOp, Ops, sym_eq, variables, sym_canon, sym_str
from lazynb.shape.sizes import shape_arg as _shape_arg, check_shape as _check_shape, broadcast_shape, sym_ge as _ge, ArgumentError
from lazynb.tensor_create import _check_int
if TYPE_CHECKING: from lazynb.tensor import Tensor

def replay(u: UOp, ops: tuple) -> UOp:
  """u seen through a view's ops ((name, arg): a movement op's UOp method, or "detach")."""
  for name, arg in ops: u = UOp(Ops.DETACH, u.dtype, (u,)) if name == "detach" else getattr(u, name)(arg)
  return u


def _resolve_axis(self: Tensor, axis: int, ndim: int | None = None, what: str | None = None) -> int:
  """axis as 0..n-1 (n: ndim, or the given one). A 0-d tensor takes axis 0 or -1, its one element, as torch and tinygrad do
  (`_as_vector` runs such a call); `what` names a method that needs a real axis (torch's split, cat, roll: not on 0-d)."""
  n = self.ndim if ndim is None else ndim
  if n == 0 and what is not None: raise IndexError(f"{what} needs a tensor with at least one dimension, got a 0-d tensor: reshape it to (1,) first")
  m = max(n, 1)
  if not isinstance(axis, (int, np.integer)) or not -m <= axis < m:
    raise IndexError(f"axis {axis!r} is out of range for a tensor of shape {self.shape}: valid axes are {-m} to {m - 1}")
  return int(axis) % m
def _as_vector(self: Tensor, fn, *axes):
  """An axis op on a 0-d tensor, as torch does it: the axis (0 or -1) is checked, `fn` runs on the one element as a vector
  of 1, and every result (a tensor, or a tuple of them) gets shape ()."""
  for a in axes: self._resolve_axis(a)
  ret = fn(self.reshape(1))
  return tuple(r.reshape(()) for r in ret) if isinstance(ret, tuple) else ret.reshape(())
def reshape(self: Tensor, *shape) -> Tensor:
  shape = _shape_arg(shape)
  if None in shape:  # None at place i keeps axis i's size (tinygrad's reshape)
    if any(n is None and i >= self.ndim for i, n in enumerate(shape)): raise ArgumentError(f"reshape {shape}: a None past the last axis of {self.shape}")
    shape = tuple(self.shape[i] if n is None else n for i, n in enumerate(shape))
  if shape.count(-1) > 1: raise ArgumentError(f"reshape {shape}: only one dimension can be -1")
  known = prod(s for s in shape if s != -1)
  if -1 in shape:
    if known == 0 or self.numel() % known: raise ValueError(f"cannot reshape {self.shape} to {shape}")
    shape = tuple(self.numel() // known if s == -1 else s for s in shape)
  shape = _check_shape(shape)
  if not sym_eq(prod(shape), self.numel(), bound=True): raise ValueError(f"cannot reshape tensor of shape {self.shape} ({self.numel()} elements) to {shape}")
  if variables(shape) and not variables(self.shape): self.uop.st.reshape(shape)  # raises now if no view can do it (tinygrad's rule)
  return self._mv(("reshape", shape))
def view(self: Tensor, *shape) -> Tensor: return self.reshape(*shape)
def permute(self: Tensor, *order) -> Tensor:
  order = tuple(self._resolve_axis(a) for a in _shape_arg(order))
  if sorted(order) != list(range(self.ndim)): raise ArgumentError(f"permute {order} is not a permutation of the {self.ndim} axes of {self.shape}")
  return self._mv(("permute", order))
def expand(self: Tensor, *shape) -> Tensor:
  shape = _shape_arg(shape)
  if len(shape) < self.ndim: raise ValueError(f"cannot expand {self.shape} to fewer dimensions {shape}")
  base, lead = (1,) * (len(shape) - self.ndim) + self.shape, len(shape) - self.ndim
  shape = tuple(s if ns == -1 and i >= lead else ns for i, (s, ns) in enumerate(zip(base, shape)))  # -1 keeps a size; a new leading dim has none
  for s, ns in zip(base, shape):
    if s != ns and s != 1 or ns == -1: raise ValueError(f"cannot expand {self.shape} to {shape}: only size-1 dims can grow, and -1 only keeps an existing size")
  return self._mv(("reshape", base), ("expand", _check_shape(shape)))
def pad(self: Tensor, padding, mode: str = "constant", value: float = 0.0) -> Tensor:
  """Pads with `value` (mode="constant"), or with the tensor's own edge: "reflect" mirrors it (the edge not repeated),
  "replicate" repeats the edge element, "circular" wraps around. Negative pads cut, as in torch."""
  if mode not in ("constant", "reflect", "replicate", "circular"):
    raise NotImplementedError(f"mode={mode!r} is not supported: use 'constant', 'reflect', 'replicate' or 'circular'")
  if mode != "constant":
    if value != 0: raise ValueError(f"mode={mode!r} takes its values from the tensor: value={value!r} is for mode='constant' only")
    return self._pad_edges(self._pad_pairs(padding), mode)
  pairs = self._pad_pairs(padding)
  for b, a in pairs:  # a symbolic pad must be >= 0 for every value of its variables
    if any(variables(x) and not _ge(x, 0) for x in (b, a)): raise ValueError(f"pad {tuple(pairs)} can be negative for some value of its variables")
  if any(not variables(x) and x < 0 for b, a in pairs for x in (b, a)):  # negative padding shrinks
    shrunk = self.shrink(tuple((max(0, -b), s - max(0, -a)) for (b, a), s in zip(pairs, self.shape)))
    return shrunk.pad(tuple((max(0, b), max(0, a)) for b, a in pairs), value=value)
  ret = self._mv_pad(pairs)
  if value == 0: return ret
  # the value is a weak Python scalar, as in `self + value`: an int tensor padded with -inf or 0.5 is float (tinygrad 0.10),
  # a bool one padded with 2 is int; a Python int the dtype cannot hold raises
  ret, _ = ret._broadcasted(value)
  _check_int(value, ret.dtype)
  return ret + type(self).ones(*self.shape, dtype=dtypes.bool, device=self.device)._mv_pad(pairs).where(0, value).cast(ret.dtype)
def _pad_pairs(self: Tensor, padding) -> list:
  """padding as one (before, after) pair per dim: flat ints in torch order (last dim first), or a pair or None per dim."""
  if all(isinstance(p, (int, np.integer)) for p in padding):  # flat, torch order: last dim first
    if len(padding) % 2 or len(padding) // 2 > self.ndim: raise ValueError(f"bad padding {padding} for shape {self.shape}")
    return [(0, 0)] * (self.ndim - len(padding) // 2) + [(padding[i], padding[i + 1]) for i in range(len(padding) - 2, -1, -2)]
  if len(padding) != self.ndim: raise ValueError(f"padding {padding} needs one (before, after) pair per dim of {self.shape}")
  return [(0, 0) if p is None else tuple(p) for p in padding]
def _pad_edges(self: Tensor, pairs: list, mode: str) -> Tensor:
  """pad in mode reflect, replicate or circular: one dim after the other, the new edges cut from the tensor (so the
  corners come out as torch's), then the negative pads cut. Made of shrink, flip, expand and cat only."""
  x = self
  for d, ((b, a), n) in enumerate(zip(pairs, self.shape)):
    if variables(b) or variables(a) or variables(n): raise ValueError(f"mode={mode!r} pads need concrete sizes, got {pairs} for {self.shape}")
    b, a = max(0, b), max(0, a)
    if b == a == 0: continue
    if mode == "reflect" and max(b, a) >= n:
      raise ValueError(f"reflect padding {pairs[d]} must be smaller than the size {n} of dim {d}: the mirror leaves out the edge")
    if mode == "circular":
      if min(pairs[d]) < 0: raise NotImplementedError(f"mode='circular' does not take negative pads, got {pairs[d]} for dim {d}")
      if max(b, a) > n: raise ValueError(f"circular padding {pairs[d]} wraps around dim {d} (size {n}) more than once")
    if mode == "replicate" and n == 0: raise ValueError(f"mode='replicate' cannot pad dim {d} of size 0")
    cut = lambda lo, hi: x.shrink(tuple((lo, hi) if i == d else None for i in range(x.ndim)))  # noqa: E731
    if mode == "reflect": parts = [cut(1, b + 1).flip(d), x, cut(n - 1 - a, n - 1).flip(d)]
    elif mode == "circular": parts = [cut(n - b, n), x, cut(0, a)]
    else: parts = [cut(0, 1).expand(tuple(b if i == d else s for i, s in enumerate(x.shape))), x,
                   cut(n - 1, n).expand(tuple(a if i == d else s for i, s in enumerate(x.shape)))]
    parts = [p for p in parts if p.shape[d] != 0]
    x = parts[0].cat(*parts[1:], dim=d)
  if any(v < 0 for pair in pairs for v in pair): x = x.pad(tuple((min(0, b), min(0, a)) for b, a in pairs))
  return x
def _mv_pad(self: Tensor, pairs) -> Tensor: return self._mv(("pad", tuple(map(tuple, pairs))), link=False)  # a new tensor, as torch's pad
def shrink(self: Tensor, arg) -> Tensor:
  if len(arg) != self.ndim: raise ValueError(f"shrink {arg} needs one (start, end) pair per dim of {self.shape}")
  arg = tuple((0, s) if a is None else _check_shape(a) if variables(tuple(a)) else (int(a[0]), int(a[1])) for a, s in zip(arg, self.shape))
  for (b, e), s in zip(arg, self.shape):
    if not all(_ge(y, x) for x, y in ((0, b), (b, e), (e, s))):  # a variable: for every value in its [min, max]
      raise ValueError(f"shrink {arg} is out of bounds for shape {self.shape}" + (" for some value of its variables" if variables((arg, self.shape)) else ""))
  return self._mv(("shrink", arg))
def flip(self: Tensor, axis) -> Tensor:
  given = [self._resolve_axis(a) for a in ((axis,) if isinstance(axis, int) else axis)]
  if len(set(given)) != len(given): raise ArgumentError(f"flip {axis}: an axis given twice (on a tensor of shape {self.shape})")
  return self._mv(("flip", tuple(i in given for i in range(self.ndim))))
def _mv(self: Tensor, *ops: tuple, link: bool = True) -> Tensor:
  """The movement ops `ops` ((name, arg) pairs) on this tensor: a view of it unless link=False (docs/internals.md, "Views and in-place writes")."""
  t = type(self)(replay(self.uop, ops), requires_grad=None)
  base, prior = (b, self._view[1]) if self._view and (b := self._viewed()) is not None else (self, ())
  t._view = (weakref.ref(base), prior + ops, base.uop) if link else ()
  return t
def transpose(self: Tensor, dim0: int = 1, dim1: int = 0) -> Tensor:
  if self.ndim < 2:  # .T of a vector or a scalar is itself (dims 0 and -1 in range: transpose(0, 5) is still an error)
    if (dim0, dim1) != (1, 0): self._resolve_axis(dim0), self._resolve_axis(dim1)
    return self
  order = list(range(self.ndim))
  a, b = self._resolve_axis(dim0), self._resolve_axis(dim1)
  order[a], order[b] = order[b], order[a]
  return self.permute(order)
def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
  s, e = self._resolve_axis(start_dim), self._resolve_axis(end_dim)
  return self.reshape(1) if self.ndim == 0 else self.reshape(self.shape[:s] + (prod(self.shape[s:e + 1]),) + self.shape[e + 1:])
def unflatten(self: Tensor, dim: int, sizes) -> Tensor:
  d = self._resolve_axis(dim)
  return self.reshape(self.shape[:d] + tuple(sizes) + self.shape[d + 1:])
def squeeze(self: Tensor, dim: int | None = None) -> Tensor:
  if dim is None: return self.reshape(tuple(s for s in self.shape if s != 1))
  d = self._resolve_axis(dim)
  if self.ndim == 0: return self
  return self if self.shape[d] != 1 else self.reshape(self.shape[:d] + self.shape[d + 1:])
def unsqueeze(self: Tensor, dim: int) -> Tensor:
  d = self._resolve_axis(dim, self.ndim + 1)
  return self.reshape(self.shape[:d] + (1,) + self.shape[d:])

def __getitem__(self: Tensor, idx) -> Tensor:
  # a list that holds more than ints is a tuple of indices (torch, tinygrad: x[[a, 1]] is x[a, 1]); a list of ints selects
  if isinstance(idx, list) and not all(isinstance(i, (int, np.integer)) for i in idx): idx = tuple(idx)
  if not isinstance(idx, tuple): idx = (idx,)
  idx = tuple(list(i) if isinstance(i, tuple) else i for i in idx)  # a tuple inside the index selects as a list does (numpy)
  for i in idx:
    if isinstance(i, (type(self), list, np.ndarray)): return self._gather_index(idx)
    if not (i is None or i is Ellipsis or isinstance(i, (int, slice, np.integer, UOp))) or isinstance(i, bool):
      raise TypeError(f"unsupported index {i!r}: use ints, bound Variables, slices, None, ... or an int Tensor")
  if sum(i is Ellipsis for i in idx) > 1: raise IndexError("an index can have only a single ellipsis (...)")
  n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
  if n_real > self.ndim: raise IndexError(f"too many indices ({n_real}) for a tensor of shape {self.shape}")
  if Ellipsis in idx:
    k = idx.index(Ellipsis)
    idx = idx[:k] + (slice(None),) * (self.ndim - n_real) + idx[k + 1:]
  else: idx = idx + (slice(None),) * (self.ndim - n_real)
  x, dim, final_shape = self, 0, []
  shrink, flips, steps = list[tuple](), [], []
  for i in idx:
    if i is None: final_shape.append(1); continue  # noqa: E702
    size = self.shape[dim]
    if isinstance(i, (int, np.integer, UOp)):  # (a bound Variable: shrink checks that every value of it is in bounds)
      j = i if isinstance(i, UOp) else int(i) + size if i < 0 else int(i)
      if not isinstance(j, UOp) and not 0 <= j < size: raise IndexError(f"index {i} is out of bounds for axis {dim} with size {size}")
      shrink.append((j, j + 1)); flips.append(False); steps.append(1)  # noqa: E702
    elif any(isinstance(v, UOp) for v in (i.start, i.stop, size)):  # variable ends or a variable-size axis: step 1, no negative ends
      if i.step not in (None, 1) or any(isinstance(v, int) and v < 0 for v in (i.start, i.stop)): raise IndexError(f"a slice with variable ends or of a variable-size axis takes step 1 and ends >= 0, got {i}")
      shrink.append((0 if i.start is None else i.start, size if i.stop is None else i.stop)); flips.append(False); steps.append(1)  # noqa: E702
      final_shape.append(sym_canon(shrink[-1][1] - shrink[-1][0]))
    else:
      start, stop, step = i.indices(size)
      if step > 0: shrink.append((start, max(start, stop))); flips.append(False); steps.append(step)  # noqa: E702
      else:
        fs, fe = size - 1 - start, size - 1 - stop
        shrink.append((fs, max(fs, fe))); flips.append(True); steps.append(-step)  # noqa: E702
      final_shape.append(ceildiv(shrink[-1][1] - shrink[-1][0], steps[-1]))
    dim += 1
  if any(flips): x = x.flip(tuple(i for i, f in enumerate(flips) if f))
  x = x.shrink(tuple(shrink))
  if any(s != 1 for s in steps):
    # a stride of s: pad to a multiple of s, split (n, s), keep the first of each group
    shp = x.shape
    pads = tuple((0, ceildiv(d, s) * s - d) for d, s in zip(shp, steps))
    x = x._mv(("pad", pads))  # a view still: the padding is never read
    x = x.reshape(sum([[ceildiv(d, s), s] for d, s in zip(shp, steps)], []))
    x = x.shrink(tuple(sum([[(0, ceildiv(d, s)), (0, 1)] for d, s in zip(shp, steps)], [])))
  return x.reshape(tuple(final_shape))
def __setitem__(self: Tensor, idx, value) -> None:
  """t[idx] = value writes into t's memory (a view: the viewed tensor's) at once (numpy, torch): docs/internals.md, "Views and in-place writes"."""
  if not type(self).no_grad and (self.requires_grad or isinstance(value, type(self)) and value.requires_grad):  # (torch: a leaf's; tinygrad: both)
    raise NotImplementedError("t[idx] = value where t or value requires grad: no gradient goes through an in-place write; "
                              "build the result out of place (Tensor.where, cat, pad), or write under Tensor.no_grad")
  _check_int(value, self.dtype)  # a Python int the dtype cannot hold raises, as in `t + value` (numpy and torch too), before anything is written
  (self if (base := self._viewed()) is None else base)._own_memory()
  tup = idx if isinstance(idx, tuple) else (idx,)
  if any(isinstance(i, (type(self), list, np.ndarray)) for i in tup):
    if isinstance(value, type(self)): value = value.contiguous().realize()  # it may read self, which the write overwrites
    return self._setitem_index(tup, value)
  target = self[idx]
  value = (value if isinstance(value, type(self)) else type(self)(value, device=self.device, dtype=self.dtype)).cast(self.dtype)
  if broadcast_shape(value.shape, target.shape) != target.shape:
    raise ValueError(f"cannot assign a value of shape {value.shape} to t[{idx!r}] of shape {target.shape}")
  target.assign(value._broadcast_to(target.shape))

def cat(self: Tensor, *others: Tensor, dim: int = 0) -> Tensor:
  ts = [self, *others]
  d = self._resolve_axis(dim, what="cat (stack joins 0-d tensors)")
  for t in ts:
    if t.ndim != self.ndim or any(a != b for i, (a, b) in enumerate(zip(t.shape, self.shape)) if i != d):
      raise ValueError(f"cat: shapes {[t.shape for t in ts]} differ outside dim {d}")
  dt = least_upper_dtype(*[t.dtype for t in ts])
  total, off, pieces = sym_canon(sum(t.shape[d] for t in ts)), 0, []
  for t in ts:
    pad = [(0, 0)] * self.ndim
    pad[d] = (off, sym_canon(total - off - t.shape[d]))
    pieces.append(t.cast(dt).pad(tuple(pad)))
    off = sym_canon(off + t.shape[d])
  return sum(pieces[1:], pieces[0])
def stack(self: Tensor, *others: Tensor, dim: int = 0) -> Tensor:
  ts = [self, *others]
  if not all_same([t.shape for t in ts]): raise ValueError(f"stack needs equal shapes, got {[t.shape for t in ts]}")
  d = self._resolve_axis(dim, self.ndim + 1)
  return ts[0].unsqueeze(d).cat(*[t.unsqueeze(d) for t in ts[1:]], dim=d)
def repeat(self: Tensor, *repeats) -> Tensor:
  reps = _shape_arg(repeats)
  if len(reps) < self.ndim: raise ValueError(f"repeat needs at least {self.ndim} counts, got {reps}")
  base = (1,) * (len(reps) - self.ndim) + self.shape
  x = self.reshape(sum([[1, s] for s in base], []))
  x = x.expand(sum([[r, s] for r, s in zip(reps, base)], []))
  return x._mv(("reshape", tuple(r * s for r, s in zip(reps, base))), link=False)  # a new tensor, as torch's repeat
def split(self: Tensor, sizes, dim: int = 0) -> list[Tensor]:
  d, n = (d := self._resolve_axis(dim, what="split")), self.shape[d]
  if not isinstance(n, int): raise TypeError(f"split of dim {dim}, whose size {sym_str(n)} has a variable, is not supported (nor in tinygrad): shrink it")
  if isinstance(sizes, (int, np.integer)):
    if sizes < 0 or sizes == 0 < n: raise ValueError(f"split size {sizes} must be > 0 (0 only on an empty dim)")
    sizes = [min(int(sizes), n - i) for i in range(0, max(n, 1), max(int(sizes), 1))]
  if sum(sizes) != n or min(sizes, default=0) < 0: raise ValueError(f"split sizes {list(sizes)} must be >= 0 and add up to {n}, the size of dim {dim}")
  return [self.shrink(tuple((o, o + s) if i == d else None for i in range(self.ndim))) for o, s in zip(itertools.accumulate([0, *sizes]), sizes)]
def chunk(self: Tensor, n: int, dim: int = 0) -> list[Tensor]:
  if n < 1: raise ValueError(f"chunk needs n >= 1 chunks, got {n}")
  return self.split(ceildiv(size, n) if (size := self.shape[self._resolve_axis(dim, what="chunk")]) else [0] * n, dim)  # empty: n empty chunks (torch)
