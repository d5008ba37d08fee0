"""A View maps an index over a shape to a position in memory: offset + sum(i*stride), valid where the mask allows.

Every movement op is a cheap edit of these four fields; no data moves:
- permute reorders shape and strides;        expand sets a stride to 0;
- shrink moves the offset and narrows shape; pad widens shape and records the valid window in the mask;
- flip negates a stride;                     reshape regroups dims when the strides allow it."""
from __future__ import annotations
from dataclasses import dataclass
from lazynb.helpers import prod
from lazynb.uop.ops import UOp, Ops, sym_eq, sym_ge, variables, sym_canon
from lazynb.dtype import dtypes

def strides_for_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
  out, acc = [], 1
  for s in reversed(shape):
    out.append(acc if s != 1 else 0)
    acc *= s
  return tuple(reversed(out))

# sizes may be symbolic (int UOps of variables, see UOp.variable): these decide by the variables' bounds
def _is_sym(*xs) -> bool: return any(isinstance(x, UOp) for x in xs)
_ge = sym_ge
def _clamp(lo, hi, s) -> tuple:
  """(max(0, lo), min(s, hi)): with variables, a max or min left in the mask where the answer depends on their values."""
  if not _is_sym(lo, hi, s): return (max(0, lo), min(s, hi))
  lo = lo if _ge(lo, 0) else 0 if _ge(0, lo) else lo.maximum(0)
  hi = hi if _ge(s, hi) else s if _ge(hi, s) else -(-hi).maximum(-s) if isinstance(hi, UOp) else -(-s).maximum(-hi)  # min(hi, s)
  return (lo, hi)

@dataclass(frozen=True)
class View:
  shape: tuple[int, ...]
  strides: tuple[int, ...]
  offset: int
  mask: tuple[tuple[int, int], ...] | None
  contiguous: bool

  @staticmethod
  def create(shape: tuple[int, ...], strides: tuple[int, ...] | None = None, offset: int = 0,
             mask: tuple[tuple[int, int], ...] | None = None) -> View:
    shape, offset = tuple(sym_canon(s) if isinstance(s, UOp) else int(s) for s in shape), sym_canon(offset)  # (i+1)-i is 1
    if any(s == 0 for s in shape if isinstance(s, int)): return View(shape, (0,) * len(shape), 0, None, True)  # no element: no strides
    strides = strides_for_shape(shape) if strides is None else tuple(0 if s == 1 else st for s, st in zip(shape, strides))
    if mask is not None:
      mask = tuple(_clamp(lo, hi, s) for (lo, hi), s in zip(mask, shape))
      if any(_ge(lo, hi) for lo, hi in mask):  # nothing is valid: a view of zeros
        return View(shape, (0,) * len(shape), 0, ((0, 0),) * len(shape), False)
      if all(m == (0, s) for m, s in zip(mask, shape)): mask = None
    contiguous = offset == 0 and mask is None and strides == strides_for_shape(shape)
    return View(shape, strides, offset, mask, contiguous)

  @property
  def size(self) -> int: return prod(self.shape)
  def vars(self) -> list[UOp]:
    """The variables (DEFINE_VAR, BIND) in its sizes, strides, offset and mask."""
    return variables([*self.shape, *self.strides, self.offset, *(m for mm in self.mask or () for m in mm)])
  def map(self, f) -> View:
    """The view with f applied to each size, stride, offset and mask bound (the same contiguity)."""
    return View(tuple(map(f, self.shape)), tuple(map(f, self.strides)), f(self.offset), tuple((f(a), f(b)) for a, b in self.mask) if self.mask else None, self.contiguous)
  def unbind(self) -> tuple[View, dict[UOp, int]]:
    """tinygrad's: the view with each bound variable unbound, and {variable: its value}."""
    bound = {v: v.src[0] for v in self.vars() if v.op is Ops.BIND}
    return self.map(lambda x: x.substitute(bound) if isinstance(x, UOp) else x), {v.src[0]: v.src[1].arg for v in bound}

  # ---- movement ops
  def permute(self, order: tuple[int, ...]) -> View:
    return View.create(tuple(self.shape[i] for i in order), tuple(self.strides[i] for i in order), self.offset,
                       tuple(self.mask[i] for i in order) if self.mask else None)

  def expand(self, new_shape: tuple[int, ...]) -> View:
    mask = None
    if self.mask: mask = tuple(m if s == ns else ((0, ns) if m != (0, 0) else (0, 0)) for m, s, ns in zip(self.mask, self.shape, new_shape))
    return View.create(new_shape, tuple(st if s == ns else 0 for st, s, ns in zip(self.strides, self.shape, new_shape)), self.offset, mask)

  def shrink(self, arg: tuple[tuple[int, int], ...]) -> View:
    offset = self.offset + sum(b * st for (b, _), st in zip(arg, self.strides))
    mask = tuple((lo - b, hi - b) for (lo, hi), (b, _) in zip(self.mask, arg)) if self.mask else None
    return View.create(tuple(e - b for b, e in arg), self.strides, offset, mask)

  def pad(self, arg: tuple[tuple[int, int], ...]) -> View:
    if all(p == (0, 0) for p in arg): return self
    old = self.mask or tuple((0, s) for s in self.shape)
    mask = tuple((lo + b, hi + b) for (lo, hi), (b, _) in zip(old, arg))
    offset = self.offset - sum(b * st for (b, _), st in zip(arg, self.strides))
    return View.create(tuple(s + b + a for s, (b, a) in zip(self.shape, arg)), self.strides, offset, mask)

  def flip(self, arg: tuple[bool, ...]) -> View:
    offset = self.offset + sum((s - 1) * st for s, st, f in zip(self.shape, self.strides, arg) if f)
    mask = tuple((s - hi, s - lo) if f else (lo, hi) for (lo, hi), s, f in zip(self.mask, self.shape, arg)) if self.mask else None
    return View.create(self.shape, tuple(-st if f else st for st, f in zip(self.strides, arg)), offset, mask)

  def reshape(self, new_shape: tuple[int, ...]) -> View | None:
    """The same view with regrouped dims, or None when that needs a second view."""
    new_shape = tuple(new_shape)
    if new_shape == self.shape: return self
    if not sym_eq(prod(new_shape), self.size, bound=True): raise ValueError(f"cannot reshape {self.shape} to {new_shape}")
    if self.contiguous: return View.create(new_shape)
    if not _is_sym(*self.shape) and _is_sym(*new_shape):  # sizes given as variables bound to them, dim by dim (tinygrad's rule)
      if len(new_shape) != len(self.shape) or not all(sym_eq(o, n, bound=True) for o, n in zip(self.shape, new_shape)):
        raise ValueError(f"cannot reshape {self} to {new_shape}: sizes with variables need a contiguous view, or the same sizes dim by dim")
      return View(new_shape, self.strides, self.offset, self.mask, False)
    if variables(self.mask): return None  # a mask with variables: a new view (a size-1 dim's mask may hold for some values only)
    if _is_sym(*self.shape, *new_shape):  # symbolic: only adding or removing size-1 dims, else a new view
      if [s for s in self.shape if s != 1] != [s for s in new_shape if s != 1]: return None
      rest = iter([(st, m) for s, st, m in zip(self.shape, self.strides, self.mask or [(0, s) for s in self.shape]) if s != 1])
      kept = [next(rest) if s != 1 else (0, (0, 1)) for s in new_shape]
      return View.create(new_shape, tuple(st for st, _ in kept), self.offset, tuple(m for _, m in kept) if self.mask else None)
    if self.mask is not None and any(lo >= hi for lo, hi in self.mask):  # nothing valid: keep it that way
      return View.create(new_shape, mask=((0, 0),) * len(new_shape)) if new_shape else None
    if self.size == 0: return View.create(new_shape)
    # drop the size-1 dims; group old and new dims with equal products
    old = [(s, st, m) for s, st, m in zip(self.shape, self.strides, self.mask or [(0, s) for s in self.shape]) if s != 1]
    new_dims = [i for i, s in enumerate(new_shape) if s != 1]
    strides, mask = [0] * len(new_shape), [(0, 1)] * len(new_shape)
    oi = ni = 0
    while ni < len(new_dims):
      # grow a group until products match
      grp_new, grp_old = [new_dims[ni]], [old[oi]]
      pn, po = new_shape[new_dims[ni]], old[oi][0]
      ni, oi = ni + 1, oi + 1
      while pn != po:
        if pn < po: grp_new.append(new_dims[ni]); pn *= new_shape[new_dims[ni]]; ni += 1  # noqa: E702
        else: grp_old.append(old[oi]); po *= old[oi][0]; oi += 1  # noqa: E702
      # the old dims of a group must be one strided run
      for (_, st0, _), (s1, st1, _) in zip(grp_old, grp_old[1:]):
        if st0 != st1 * s1: return None
      # masks: only the outermost old dim of a group may be partial, and it must split cleanly
      if any(m != (0, s) for s, _, m in grp_old[1:]): return None
      lo, hi = grp_old[0][2]
      inner_old = prod(s for s, _, _ in grp_old[1:])
      lo, hi = lo * inner_old, hi * inner_old
      inner_new = prod(new_shape[d] for d in grp_new[1:])
      if (lo, hi) != (0, po) and (lo % inner_new or hi % inner_new): return None
      acc = grp_old[-1][1]
      for d in reversed(grp_new):
        strides[d] = acc
        acc *= new_shape[d]
        mask[d] = (0, new_shape[d])
      mask[grp_new[0]] = (lo // inner_new, hi // inner_new) if (lo, hi) != (0, po) else (0, new_shape[grp_new[0]])
    return View.create(new_shape, tuple(strides), self.offset, tuple(mask) if self.mask else None)

  def __add__(self, top: View) -> View | None:
    """tinygrad's: one View equal to `top` read through this one (ShapeTracker.simplify's), or None."""
    from lazynb.shape.shapetracker import ShapeTracker  # (upward: a tracker is a stack of views)
    return v[0] if len(v := ShapeTracker((self, top)).simplify().views) == 1 else None

  # ---- index math
  def to_indexed_uops(self, idxs: list[UOp]) -> tuple[UOp, UOp]:
    """(index, valid) as UOps for one index expression per dim."""
    idx = self.offset if isinstance(self.offset, UOp) else UOp.const(dtypes.index, self.offset)
    for i, st in zip(idxs, self.strides):
      if st != 0: idx = idx + i * st
    valid = UOp.const(dtypes.bool, True)
    if self.mask is not None:
      for i, (lo, hi), s in zip(idxs, self.mask, self.shape):
        if lo != 0: valid = valid & ((lo - 1 if isinstance(lo, UOp) else UOp.const(dtypes.index, lo - 1)) < i)
        if hi != s: valid = valid & (i < hi)
    return idx, valid

  def minify(self) -> View:
    """Merge dims that are one strided run (used to show the simplest equivalent view)."""
    if _is_sym(*self.shape, *self.strides): return self
    shape, strides, mask = list(self.shape), list(self.strides), list(self.mask) if self.mask else None
    i = len(shape) - 1
    while i > 0:
      if strides[i - 1] == strides[i] * shape[i] and (mask is None or (mask[i] == (0, shape[i]) and mask[i - 1] == (0, shape[i - 1]))):
        shape[i - 1:i + 1] = [shape[i - 1] * shape[i]]
        strides[i - 1:i + 1] = [strides[i]]
        if mask: mask[i - 1:i + 1] = [(0, shape[i - 1])]
      i -= 1
    return View.create(tuple(shape), tuple(strides), self.offset, tuple(mask) if mask else None)

  def __repr__(self): return f"View(shape={self.shape}, strides={self.strides}, offset={self.offset}, mask={self.mask}, contiguous={self.contiguous})"
