"""A ShapeTracker is a stack of Views: the last maps the tensor's index to a flat position, which the view
below reads as an index into its own shape, down to the buffer. Most movement ops edit the top view;
a reshape the top view cannot express (say, after a permute) pushes a new one."""
from __future__ import annotations
import contextlib, contextvars, functools
from dataclasses import dataclass
from typing import Callable, Iterator
from lazynb.dtype import dtypes
from lazynb.helpers import prod, dedup
from lazynb.shape.view import View, _ge
from lazynb.uop.ops import UOp, Ops, graph_rewrite, variables, unbind
from lazynb.uop.symbolic import symbolic, split_terms, term_coeff

# the build track's seam: a function of yours, fn(views, idxs) -> (index, valid), in place of to_indexed_uops below
_index_math: contextvars.ContextVar[Callable | None] = contextvars.ContextVar("lazynb_index_math", default=None)

@contextlib.contextmanager
def index_math(fn: Callable) -> Iterator[None]:
  """`with index_math(fn): ...`: every ShapeTracker's (index, valid) comes from fn(views, idxs) in this block (this thread).
  lazynb uses it around its lower stage only (lazynb.notebook.build), where it is part of the kernel cache's key."""
  token = _index_math.set(fn)
  try: yield
  finally: _index_math.reset(token)

@dataclass(frozen=True)
class ShapeTracker:
  views: tuple[View, ...]

  @staticmethod
  def from_shape(shape: tuple[int, ...]) -> ShapeTracker: return ShapeTracker((View.create(tuple(shape)),))
  def to_uop(self) -> UOp:
    """This ShapeTracker as the VIEW a kernel AST's LOAD and STORE take as their second source."""
    return UOp(Ops.VIEW, dtypes.void, (), self)
  @property
  def shape(self) -> tuple[int, ...]: return self.views[-1].shape
  @property
  def size(self) -> int: return prod(self.shape)
  @property
  def contiguous(self) -> bool: return len(self.views) == 1 and self.views[0].contiguous
  @property
  def has_mask(self) -> bool: return any(v.mask is not None for v in self.views)
  def vars(self) -> list[UOp]:
    """The variables (DEFINE_VAR, BIND) in this tracker's sizes, strides, offsets and masks."""
    return dedup(x for v in self.views for x in v.vars())
  @property
  def var_vals(self) -> dict[UOp, int]: return dict(v.unbind() for v in self.vars() if v.op is Ops.BIND)  # tinygrad's
  def unbind(self, vals: dict[UOp, int] | None = None):
    """The tracker as kernels see it: each bound variable a plain DEFINE_VAR (its value goes into `vals`). Without `vals`,
    tinygrad's: (the tracker with each bound variable unbound, {variable: value})."""
    if vals is None: return ShapeTracker(tuple(v.unbind()[0] for v in self.views)), self.var_vals
    return ShapeTracker(tuple(v.map(lambda x: unbind(x, vals)) for v in self.views)) if self.vars() else self

  def _top(self, v: View) -> ShapeTracker:
    # a view where nothing is valid reads no memory: the views below it (maybe of size 0, whose index math would
    # divide by 0) are dropped
    return ShapeTracker((v,) if v.mask is not None and any(_ge(lo, hi) for lo, hi in v.mask) else self.views[:-1] + (v,))
  def permute(self, order) -> ShapeTracker: return self._top(self.views[-1].permute(tuple(order)))
  def expand(self, shape) -> ShapeTracker: return self._top(self.views[-1].expand(tuple(shape)))
  def pad(self, arg) -> ShapeTracker: return self._top(self.views[-1].pad(tuple(arg)))
  def shrink(self, arg) -> ShapeTracker: return self._top(self.views[-1].shrink(tuple(arg)))
  def flip(self, arg) -> ShapeTracker: return self._top(self.views[-1].flip(tuple(arg)))
  def reshape(self, shape) -> ShapeTracker:
    return self._top(v) if (v := self.views[-1].reshape(tuple(shape))) is not None else ShapeTracker(self.views + (View.create(tuple(shape)),))
  def movement(self, op: Ops, arg) -> ShapeTracker:
    return {Ops.RESHAPE: self.reshape, Ops.PERMUTE: self.permute, Ops.EXPAND: self.expand, Ops.PAD: self.pad,
            Ops.SHRINK: self.shrink, Ops.FLIP: self.flip}[op](arg)

  def __add__(self, st: ShapeTracker) -> ShapeTracker:
    """Compose: `st` indexes the output of `self` (self is closer to memory)."""
    ret = self
    for v in st.views: ret = ShapeTracker(ret.views + (v,)).simplify()
    return ret

  def simplify(self) -> ShapeTracker:
    if len(self.views) < 2: return self
    below, top = self.views[-2], self.views[-1]
    if top.mask is not None and any(_ge(lo, hi) for lo, hi in top.mask): return ShapeTracker((top,))
    if below.contiguous: return ShapeTracker(self.views[:-2] + (top,)).simplify()
    if top.contiguous and top.size == below.size and (v := below.reshape(top.shape)) is not None: return ShapeTracker(self.views[:-2] + (v,)).simplify()
    return ShapeTracker(self.views[:-2] + (v,)).simplify() if (v := merge_views(below, top)) is not None else self

  def to_indexed_uops(self, idxs: list[UOp]) -> tuple[UOp, UOp]:
    """(index, valid) for one index expression per dim (each within its dim's range)."""
    if (fn := _index_math.get()) is not None: return fn(self.views, list(idxs))
    if all(v.mask is None for v in self.views[:-1]): return self._stacked(idxs)
    # padded views below the top: simplify once, with a placeholder per dim, then put the real indices in
    idx, valid, dims = self._masked_template()
    sub = {d: i for d, i in zip(dims, idxs) if d is not None}
    return idx.substitute(sub), valid.substitute(sub)

  def _stacked(self, idxs: list[UOp], given: dict[UOp, UOp] | None = None) -> tuple[UOp, UOp]:
    idx, valid = self.views[-1].to_indexed_uops(idxs)
    for v in reversed(self.views[:-1]):
      # unflatten the flat index into this view's shape
      sub, acc = [], 1
      for s in reversed(v.shape):
        sub.append((idx // acc) % s if s != 1 else UOp.const(dtypes.index, 0))
        acc *= s
      sub = list(reversed(sub))
      vv = v.to_indexed_uops(sub)[1]
      if v.mask is not None and given is not None:  # name each masked dim's index by a variable bounded by the mask
        for d, ((lo, hi), s) in enumerate(zip(v.mask, v.shape)):
          if (lo, hi) != (0, s) and sub[d].op is not Ops.CONST and not variables((lo, hi)) and hi > lo:  # (a variable range: left as it is)
            var = UOp(Ops.SPECIAL, dtypes.index, (), (f"masked{len(given)}", hi - lo))
            given[var] = sub[d] - lo if lo else sub[d]
            sub[d] = var + lo if lo else var
      idx, _ = v.to_indexed_uops(sub)
      valid = valid & vv
    return idx, valid

  @functools.lru_cache(maxsize=4096)
  def _masked_template(self) -> tuple[UOp, UOp, list]:
    """The index math with a placeholder per dim, simplified knowing that the memory is read only where every
    mask holds: there each masked dim's index lies in its mask's range, so divisions and modulos that this
    range makes exact disappear. Afterwards the real expressions replace the bounded variables (the validity
    conditions keep them too, so nothing is assumed where a mask fails)."""
    dims = [UOp(Ops.SPECIAL, dtypes.index, (), (f"dim{d}", s)) if s != 1 else None for d, s in enumerate(self.shape)]
    given: dict[UOp, UOp] = {}
    idx, valid = self._stacked([d if d is not None else UOp.const(dtypes.index, 0) for d in dims], given)
    real: dict[UOp, UOp] = {}
    for var, e in given.items(): real[var] = e.substitute(real)  # a lower view's variable may stand on an upper one's
    return graph_rewrite(idx, symbolic, name="view: a masked view's index math").substitute(real), valid.substitute(real), dims

  def render(self, names: list[str] | None = None) -> tuple[str, str]:
    """The index and validity expressions as text, with one named variable per dim."""
    names = names or [f"idx{i}" for i in range(len(self.shape))]
    idxs = [UOp(Ops.SPECIAL, dtypes.index, (), (n, s)) if s != 1 else UOp.const(dtypes.index, 0) for n, s in zip(names, self.shape)]
    idx, valid = self.to_indexed_uops(idxs)
    idx, valid = graph_rewrite(UOp.sink(idx, valid), symbolic, name="view: index math, written out").src
    return expr_str(idx), expr_str(valid)

  def real_strides(self) -> tuple[int | None, ...]:
    """Per dim, the stride in memory, or None where moving along the dim does not move by a constant."""
    if len(self.views) == 1: return self.views[0].strides
    rngs = [UOp(Ops.RANGE, dtypes.index, (), (i, s, f"r{i}")) if isinstance(s, UOp) or s > 1 else UOp.const(dtypes.index, 0) for i, s in enumerate(self.shape)]
    idx, _ = self.to_indexed_uops(rngs)
    out: list[int | None] = [0] * len(self.shape)
    for t in split_terms(graph_rewrite(idx, symbolic, name="view: index math, for its strides")):
      b, k = term_coeff(t)
      if b is None: continue
      if b.op is Ops.RANGE: out[b.arg[0]] = k if out[b.arg[0]] is not None else None
      else:
        for n in b.toposort():
          if n.op is Ops.RANGE: out[n.arg[0]] = None
    return tuple(out)

  def __repr__(self): return f"ShapeTracker(views=({', '.join(map(repr, self.views))},))"

def linear_form(u: UOp) -> tuple[dict[UOp, int], int] | None:
  """u as sum(coeff * var) + const, or None if it has any division, modulo or product of variables."""
  coeffs: dict[UOp, int] = {}
  const = 0
  for t in split_terms(u):
    b, k = term_coeff(t)
    if b is None: const += k
    elif b.op in (Ops.RANGE, Ops.SPECIAL): coeffs[b] = coeffs.get(b, 0) + k
    else: return None
  return coeffs, const

@functools.lru_cache(maxsize=8192)
def merge_views(below: View, top: View) -> View | None:
  """One View equal to `top` over `below`, if there is one: guess its strides by evaluating the stack at a
  corner and one step along each dim, then prove the guess by simplifying the stack's index expression to
  exactly that affine form. Masks in `below` need more than a box, so those stacks stay."""
  if below.mask is None and all(st == 0 for st in below.strides) and top.mask is None: return View.create(top.shape, (0,) * len(top.shape), below.offset)  # one element
  if below.mask is not None or any(isinstance(x, UOp) for v in (below, top) for x in v.shape + v.strides + (v.offset,)): return None
  lo = [m[0] for m in top.mask] if top.mask else [0] * len(top.shape)
  hi = [m[1] for m in top.mask] if top.mask else list(top.shape)
  if any(a >= b for a, b in zip(lo, hi)): return None
  rngs = [UOp(Ops.RANGE, dtypes.index, (), (i, b - a, f"m{i}")) if b - a > 1 else None for i, (a, b) in enumerate(zip(lo, hi))]
  idxs = [UOp.const(dtypes.index, a) if r is None else r + a for r, a in zip(rngs, lo)]
  idx, _ = ShapeTracker((below, top)).to_indexed_uops(idxs)
  form = linear_form(graph_rewrite(idx, symbolic, name="views: merging two views' index math"))
  if form is None: return None
  coeffs, const = form
  strides = [coeffs.get(r, 0) if r is not None else 0 for r in rngs]
  offset = const - sum(st * a for st, a in zip(strides, lo))
  return View.create(top.shape, tuple(strides), offset, top.mask)

_INFIX = {Ops.ADD: "+", Ops.MUL: "*", Ops.IDIV: "//", Ops.MOD: "%", Ops.CMPLT: "<", Ops.AND: "&", Ops.OR: "|", Ops.CMPNE: "!="}
def expr_str(u: UOp) -> str:
  """Index math as readable text: ((gidx0*4)+ridx0)."""
  if u.op is Ops.CONST: return str(u.arg)
  if u.op is Ops.SPECIAL: return u.arg[0]
  if u.op in (Ops.DEFINE_VAR, Ops.BIND): return u.expr
  if u.op is Ops.RANGE: return u.arg[2]
  if u.op in _INFIX:
    a, b = u.src
    if u.op is Ops.ADD and b.op is Ops.MUL and b.src[1].op is Ops.CONST and b.src[1].arg < 0 and b.src[1].arg == -1:
      return f"({expr_str(a)}-{expr_str(b.src[0])})"
    if u.op is Ops.ADD and b.op is Ops.CONST and b.arg < 0: return f"({expr_str(a)}-{-b.arg})"
    if u.op is Ops.CMPLT and u.dtype is dtypes.bool and a.op is Ops.CONST: return f"({expr_str(b)}>{a.arg})"
    return f"({expr_str(a)}{_INFIX[u.op]}{expr_str(b)})"
  if u.op is Ops.NEG: return f"(-{expr_str(u.src[0])})"
  if u.op is Ops.XOR and u.src[1].op is Ops.CONST and u.src[1].arg is True: return f"(!{expr_str(u.src[0])})"
  if u.op is Ops.WHERE: return f"({expr_str(u.src[0])}?{expr_str(u.src[1])}:{expr_str(u.src[2])})"
  return f"max({expr_str(u.src[0])},{expr_str(u.src[1])})" if u.op is Ops.MAX else f"{u.op.name.lower()}({','.join(expr_str(s) for s in u.src)})"
