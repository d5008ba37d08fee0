"""More of tinygrad's Tensor surface, each method a few calls of the primitive-backed methods in tensor.py: inverse
and hyperbolic trig, bitwise helpers, cumulative ops and sort (as masked reductions over an (n, n) triangle or
comparison table: O(n^2) work per row, fine for the sizes of a course), einsum and rearrange (movement ops, a
multiply and a sum), interpolate, and small constructors. Functions of a Tensor: tensor.py makes them its methods."""
from __future__ import annotations
import math, re
from typing import TYPE_CHECKING
import numpy as np
from lazynb.dtype import dtypes, to_dtype, least_upper_dtype, sum_acc_dtype, UnsupportedDTypeError
from lazynb.helpers import prod
from lazynb.uop.ops import Ops
from lazynb.gradient import custom_gradient
from lazynb.shape.sizes import ArgumentError
if TYPE_CHECKING: from lazynb.tensor import Tensor

def _log1p(u: Tensor) -> Tensor:
  """log(1 + u) without losing a small u to the rounding of 1 + u: for -1/2 < u < 1, 2 atanh(s) with s = u / (2 + u)
  (|s| < 1/3: an odd series to s^15); elsewhere 1 + u rounds harmlessly. Each branch only sees its own inputs."""
  inside = (u > -0.5) & (u < 1)
  s = inside.where(u, 0.0) / (2 + inside.where(u, 0.0))
  z = s * s
  series = 2 * s * (1 + z * (1 / 3 + z * (1 / 5 + z * (1 / 7 + z * (1 / 9 + z * (1 / 11 + z * (1 / 13 + z / 15)))))))
  return inside.where(series, (1 + inside.where(1.0, u)).log())

def _shape(shape) -> tuple: return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)


# ---------------------------------------------------------------- inverse and hyperbolic trig
def atan(self: Tensor) -> Tensor:
  """Cephes' atanf: |x| > 1 -> pi/2 - atan(1/|x|), |x| > tan(pi/8) -> pi/4 + atan((x-1)/(x+1)), then a degree-9 odd
  polynomial; the sign put back last."""
  x = self._float()
  a = (x < 0).where(-x, x)
  big, mid = a > 2.414213562373095, a > 0.4142135623730950
  y = big.where(-1 / big.where(a, 1.0), mid.where((a - 1) / (a + 1), a))
  z = y * y
  p = (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1) * z * y + y
  r = (big.where(math.pi / 2, mid.where(math.pi / 4, 0.0)) + p).cast(x.dtype)
  return (x < 0).where(-r, r)
def asin(self: Tensor) -> Tensor:  # +-1: x/0 = +-inf, atan gives +-pi/2; |x| > 1: NaN
  return _arc_slope(x := self._float(), (x / ((1 - x) * (1 + x)).sqrt()).atan(), 1.0)
def acos(self: Tensor) -> Tensor:
  """2 atan(sqrt((1-x)/(1+x))): no cancellation near x = 1 (pi/2 - asin(x) loses the small result there)."""
  return _arc_slope(x := self._float(), ((1 - x) / (1 + x)).sqrt().atan() * 2, -1.0)
def _arc_slope(x: Tensor, ret: Tensor, sign: float) -> Tensor:
  """asin's (sign 1) or acos's (-1) gradient as a rule, sign / sqrt(1 - x^2): the formula's own chain rule is NaN at +-1 (inf * 0), torch's +-inf."""
  custom_gradient(ret.uop, "asin" if sign > 0 else "acos", (x.uop,), lambda g, i, w, T=type(x): ((T(g) * sign * ((1 - T(i[0])) * (1 + T(i[0]))).rsqrt()).uop,))
  return ret
def sinh(self: Tensor) -> Tensor:
  x = self._float()
  s = (small := x.abs() < 0.03).where(x, 0.0)
  e = small.where(1.0, x).exp()
  return small.where(s * (1 + s * s * (1 / 6 + s * s / 120)), (e - 1 / e) * 0.5)
def cosh(self: Tensor) -> Tensor:
  e = self._float().exp()
  return (e + 1 / e) * 0.5
def asinh(self: Tensor) -> Tensor:
  """log1p(a + a^2 / (1 + sqrt(1 + a^2))) on |a|, log(2a) when a^2 >> 1 (before a^2 overflows); the sign put back."""
  x = self._float()
  a = (x < 0).where(-x, x)
  huge = a > (100.0 if x.dtype is dtypes.float16 else 1e4)
  s = huge.where(0.0, a)
  r = huge.where(huge.where(a, 1.0).log() + math.log(2), _log1p(s + s * s / (1 + (1 + s * s).sqrt())))
  return (x < 0).where(-r, r)
def acosh(self: Tensor) -> Tensor:
  """log1p(t + sqrt(t (x + 1))) with t = x - 1 (exact near 1); log(2x) when x^2 >> 1; NaN below 1."""
  x = self._float()
  huge = x > (100.0 if x.dtype is dtypes.float16 else 1e4)
  s = huge.where(1.0, x)
  t = s - 1
  return huge.where(huge.where(x, 1.0).log() + math.log(2), _log1p(t + (t * (s + 1)).sqrt()))
def atanh(self: Tensor) -> Tensor:
  x = self._float()
  return (_log1p(x) - _log1p(-x)) * 0.5

# ---------------------------------------------------------------- elementwise helpers
def copysign(self: Tensor, other) -> Tensor:
  """|self| with the sign of other (a float -0.0 counts as negative)."""
  x, y = self._broadcasted(other)
  neg = (y < 0) | (y.eq(0) & (1 / y < 0)) if dtypes.is_float(y.dtype) else y < 0
  return neg.where(-(a := x.abs()), a)
def isfinite(self: Tensor) -> Tensor:
  return self.full_like(True, dtype=dtypes.bool) if not dtypes.is_float(self.dtype) else (self.isinf() | self.isnan()).logical_not()
def isclose(self: Tensor, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
  """|self - other| <= atol + rtol * |other| (as numpy and torch); equal infinities are close, NaN only if equal_nan."""
  # ints in float64 first, as numpy: exact, and x - y cannot wrap
  x, y = [t.cast(dtypes.float64) if isinstance(t, type(self)) and not dtypes.is_float(t.dtype) else t for t in (self, other)]
  x, y = x._broadcasted(y)
  close = x.eq(y) | (x.isfinite() & y.isfinite() & ((x - y).abs() <= atol + rtol * y.abs()))
  return close | (x.isnan() & y.isnan()) if equal_nan else close
def bitwise_not(self: Tensor) -> Tensor:
  if dtypes.is_float(self.dtype): raise UnsupportedDTypeError(f"bitwise_not needs int or bool tensors, got {self.dtype}")
  return ~self
def idiv(self: Tensor, x, reverse: bool = False) -> Tensor:
  """Integer division rounded toward zero (C's /), 0 when dividing by 0; // rounds toward -inf."""
  a, b = self._broadcasted(x, reverse)
  if not dtypes.is_int(a.dtype): raise TypeError(f"idiv needs int tensors, got {a.dtype}: use / or //")
  q = a // b
  return ((a % b).ne(0) & (a < 0).ne(b < 0)).where(q + 1, q)
def const_like(self: Tensor, b) -> Tensor: return self.full_like(b)

# ---------------------------------------------------------------- cumulative ops and sorting
def _cum(self: Tensor, axis: int, fill, reduce: str) -> Tensor:
  """out[..., i] = reduce over j <= i of x[..., j] along axis: an (i, j) triangle, masked with the reduce's identity."""
  if self.ndim == 0: return self._as_vector(lambda v: v._cum(0, fill, reduce), axis)
  a = self._resolve_axis(axis)
  x = self.transpose(a, -1) if a != self.ndim - 1 else self
  n, B = x.shape[-1], 256
  if isinstance(n, int) and n > B:  # in blocks of B (n * B work, not n * n): prefixes inside each block, then each block's
    nb = -(-n // B)                 # result combined with the prefix of the blocks before it
    inner = x.pad(((0, 0),) * (x.ndim - 1) + ((0, nb * B - n),), value=fill).reshape(*x.shape[:-1], nb, B)._cum(-1, fill, reduce)
    before = inner[..., -1].pad(((0, 0),) * (x.ndim - 1) + ((1, 0),), value=fill)[..., :-1]._cum(-1, fill, reduce).unsqueeze(-1)
    if reduce == "logsumexp": both = type(self).stack(inner, before.expand(inner.shape)).logsumexp(0)
    else: both = inner + before if reduce == "sum" else inner * before if reduce == "prod" else inner.maximum(before)
    ret = both.reshape(*x.shape[:-1], nb * B)[..., :n]
  else:
    tri = type(self).arange(n, device=self.device).reshape(n, 1) >= type(self).arange(n, device=self.device).reshape(1, n)
    ret = getattr(tri.where(x.unsqueeze(-2), fill), reduce)(-1)
  return ret.transpose(a, -1) if a != self.ndim - 1 else ret
def cummax(self: Tensor, axis: int = 0) -> Tensor:
  return self.cast(dtypes.uint8).cummax(axis).cast(dtypes.bool) if self.dtype is dtypes.bool else self._cum(axis, dtypes.min(self.dtype), "max")
def cumprod(self: Tensor, axis: int) -> Tensor: return self.cast(sum_acc_dtype(self.dtype))._cum(axis, 1, "prod")  # small ints widen, as in prod
def logcumsumexp(self: Tensor, axis: int = 0) -> Tensor: return self._float()._cum(axis, -math.inf, "logsumexp")

def sort(self: Tensor, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
  """Stable sort along dim: (values, int32 indices). Element i goes to place rank(i) = #{j: x_j before x_i} +
  #{j < i: x_j ties x_i}, a comparison table summed; a one-hot sum then puts each element at its place. NaN sorts
  last (first when descending), as torch."""
  T = type(self)
  if self.ndim == 0: return self._as_vector(lambda v: v.sort(0, descending), dim)
  d = self._resolve_axis(dim)
  x = self.transpose(d, -1)
  n = x.shape[-1]
  k = x.cast(dtypes.uint8) if x.dtype is dtypes.bool else x
  xi, xj = k.unsqueeze(-1), k.unsqueeze(-2)  # (.., i, 1), (.., 1, j)
  nan_i, nan_j = (xi.isnan(), xj.isnan()) if dtypes.is_float(k.dtype) else (xi.ne(xi), xj.ne(xj))
  before = ((xj > xi) if descending else (xj < xi)) | (nan_i & nan_j.logical_not() if not descending else nan_j & nan_i.logical_not())
  tie = xj.eq(xi) | (nan_i & nan_j)
  i, j = T.arange(n, device=self.device).reshape(n, 1), T.arange(n, device=self.device).reshape(1, n)
  rank = (before | (tie & (j < i))).sum(-1, dtype=dtypes.int32)  # (.., i)
  at = rank.unsqueeze(-2) == T.arange(n, device=self.device).reshape(n, 1)  # (.., place, i)
  values = (at & x.unsqueeze(-2)).any(-1) if x.dtype is dtypes.bool else at.where(x.unsqueeze(-2), 0).sum(-1, dtype=x.dtype)
  idx = at.where(T.arange(n, device=self.device, dtype=dtypes.int32).reshape(1, n), 0).sum(-1, dtype=dtypes.int32)
  return values.transpose(d, -1), idx.transpose(d, -1)
def topk(self: Tensor, k: int, dim: int = -1, largest: bool = True, sorted_: bool = True) -> tuple[Tensor, Tensor]:
  """The k largest (smallest) along dim, in order, with their indices (sorted_=False returns them sorted too)."""
  d = self._resolve_axis(dim)
  if not 0 <= k <= (self.shape[d] if self.ndim else 1) or not self.ndim and k != 1:
    raise ValueError(f"selected index k={k} is out of range for " + (f"dim {d} of size {self.shape[d]}" if self.ndim else "a 0-d tensor (k=1)"))
  if self.ndim == 0: return self._as_vector(lambda v: v.topk(1, 0, largest, sorted_), dim)
  v, i = self.sort(d, descending=largest)
  keep = tuple((0, k) if a == d else None for a in range(self.ndim))
  return v.shrink(keep), i.shrink(keep)

# ---------------------------------------------------------------- shape helpers
def triu(self: Tensor, diagonal: int = 0) -> Tensor: return self._tri(diagonal, upper=True)
def tril(self: Tensor, diagonal: int = 0) -> Tensor: return self._tri(diagonal, upper=False)
def _tri(self: Tensor, diagonal: int, upper: bool) -> Tensor:
  if self.ndim < 2: raise IndexError(f"triu/tril need a tensor with at least 2 dims, got {self.shape}")
  T, (r, c) = type(self), self.shape[-2:]
  off = T.arange(c, device=self.device).reshape(1, c) - T.arange(r, device=self.device).reshape(r, 1)
  keep = off >= diagonal if upper else off <= diagonal
  return keep.where(self, False if self.dtype is dtypes.bool else 0)
def roll(self: Tensor, shifts, dims) -> Tensor:
  shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
  dims = (dims,) if isinstance(dims, int) else tuple(dims)
  if len(shifts) != len(dims): raise ValueError(f"roll: {len(shifts)} shifts for {len(dims)} dims")
  x = self._mv(link=False)  # a new tensor even when nothing moves (as torch): a write into it must not reach self
  for s, d in zip(shifts, dims):
    d = self._resolve_axis(d, what="roll")
    n = x.shape[d]
    if n == 0 or s % n == 0: continue
    cut = n - s % n
    def part(lo, hi): return x.shrink(tuple((lo, hi) if a == d else None for a in range(x.ndim)))
    x = part(cut, n).cat(part(0, cut), dim=d)
  return x
def repeat_interleave(self: Tensor, repeats: int, dim: int | None = None) -> Tensor:
  x, d = (self.flatten(), 0) if dim is None else (self, self._resolve_axis(dim, what="repeat_interleave with a dim (dim=None flattens first)"))
  x = x.unsqueeze(d + 1)
  return x.expand(x.shape[:d + 1] + (repeats,) + x.shape[d + 2:]).flatten(d, d + 1)
def std_mean(self: Tensor, axis=None, keepdim: bool = False, correction: int = 1) -> tuple[Tensor, Tensor]:
  return self.std(axis, keepdim, correction), self.mean(axis, keepdim)
def var_mean(self: Tensor, axis=None, keepdim: bool = False, correction: int = 1) -> tuple[Tensor, Tensor]:
  return self.var(axis, keepdim, correction), self.mean(axis, keepdim)
def meshgrid(self: Tensor, *args: Tensor, indexing: str = "ij") -> tuple[Tensor, ...]:
  if indexing not in ("ij", "xy"): raise RuntimeError(f'indexing must be in ("ij", "xy"), got {indexing}')
  ts = [t.flatten() for t in (self, *args)]
  if indexing == "xy" and len(ts) > 1: ts[0], ts[1] = ts[1], ts[0]
  shape = tuple(t.shape[0] for t in ts)
  out = [t.reshape(tuple(-1 if a == k else 1 for a in range(len(ts)))).expand(shape) for k, t in enumerate(ts)]
  if indexing == "xy" and len(ts) > 1: out[0], out[1] = out[1], out[0]
  return tuple(out)

def rearrange(self: Tensor, formula: str, **sizes) -> Tensor:
  """einops' rearrange: 'b (h w) c -> b h w c', h=4. Names, (groups), 1 and ... on each side; each name once."""
  def parse(side: str) -> list[list[str]]:
    if not re.fullmatch(r"[\w\s().]*", side) or side.count("(") != side.count(")"): raise ValueError(f"rearrange: cannot parse {side!r}")
    return [g.split() if g.startswith("(") is False else g[1:-1].split() for g in re.findall(r"\([^)]*\)|\.\.\.|\w+", side)]
  if formula.count("->") != 1: raise ValueError(f"rearrange needs one '->' in {formula!r}")
  lhs, rhs = (parse(s) for s in formula.split("->"))
  names = lambda groups: [n for g in groups for n in g if n != "1"]  # noqa: E731
  if sorted(names(lhs)) != sorted(names(rhs)) or len(set(names(lhs))) != len(names(lhs)):
    raise ValueError(f"rearrange: the names on the two sides of {formula!r} must be the same, each once")
  n_ell = self.ndim - (len(lhs) - 1) if ["..."] in lhs else 0
  if len(lhs) - (["..."] in lhs) + n_ell != self.ndim: raise ValueError(f"rearrange: {formula!r} does not match {self.ndim} dims")
  size = dict(sizes)
  flat: list[str] = []  # the input's axis names, its groups split
  for g, s in zip([grp for grp in lhs for _ in range(n_ell if grp == ["..."] else 1)], self.shape):
    if g == ["..."]: flat.append(f"...{len(flat)}"); size[flat[-1]] = s; continue  # noqa: E702
    known = prod(size[n] for n in g if n in size and n != "1")
    unknown = [n for n in g if n not in size and n != "1"]
    if len(unknown) > 1: raise ValueError(f"rearrange: give the sizes of all but one of {g}")
    if unknown: size[unknown[0]] = s // known
    flat += [n for n in g if n != "1"]
  ell = [n for n in flat if n.startswith("...")]
  x = self.reshape(tuple(size[n] for n in flat))
  out_flat = [n for g in rhs for n in (ell if g == ["..."] else g) if n != "1"]
  x = x.permute(tuple(flat.index(n) for n in out_flat))
  return x.reshape(tuple(s for g in rhs for s in ([size[n] for n in ell] if g == ["..."] else [prod(size[n] for n in g if n != "1")])))

class EinsumArityError(ValueError, AssertionError):
  """A formula whose inputs do not match the operands: a ValueError, and an AssertionError as tinygrad 0.10 raises."""

def einsum(formula: str, *operands, dtype=None) -> Tensor:
  """Each operand's axes are named by letters: all are lined up on one list of letters (a repeated letter in one
  operand takes the diagonal), multiplied with broadcasting, and summed over the letters not in the output."""
  ops = list(operands[0]) if len(operands) == 1 and isinstance(operands[0], (list, tuple)) else list(operands)
  formula = formula.replace(" ", "")
  lhs, rhs = formula.split("->") if "->" in formula else (formula, None)
  ins = lhs.split(",")
  if len(ins) != len(ops): raise EinsumArityError(f"einsum {formula!r} has {len(ins)} inputs, got {len(ops)} operands")
  n_ell = max([t.ndim - len(s.replace("...", "")) for s, t in zip(ins, ops) if "..." in s], default=0)
  ell = "".join(chr(0x391 + i) for i in range(n_ell))  # the dims of ... get names of their own
  ins = [s.replace("...", ell[n_ell - (t.ndim - len(s.replace("...", ""))):]) for s, t in zip(ins, ops)]
  if rhs is None: rhs = ell + "".join(sorted(c for c in set("".join(ins)) if "".join(ins).count(c) == 1 and c not in ell))
  rhs = rhs.replace("...", ell)
  letters = sorted(set("".join(ins)))
  size: dict[str, int] = {}
  aligned = []
  for s, t in zip(ins, ops):
    if len(s) != t.ndim: raise ArgumentError(f"einsum: operand {s!r} has {len(s)} letters for shape {t.shape}")
    for c, n in zip(s, t.shape):
      if size.setdefault(c, n) != n and n != 1 and size[c] != 1: raise ArgumentError(f"einsum: {c!r} is {size[c]} and {n}")
      size[c] = max(size[c], n)
    while len(set(s)) < len(s):  # a repeated letter: keep the diagonal of its two axes
      c = next(c for c in s if s.count(c) > 1)
      a, b = s.index(c), s.index(c, s.index(c) + 1)
      t = t.permute([k for k in range(t.ndim) if k not in (a, b)] + [a, b])
      n = t.shape[-1]
      t = t.flatten(-2).pad(((0, 0),) * (t.ndim - 2) + ((0, n),)).unflatten(-1, (n, n + 1))[..., 0]
      s = "".join(ch for k, ch in enumerate(s) if k not in (a, b)) + c
    t = t.permute([s.index(c) for c in letters if c in s]).reshape([size[c] if c in s else 1 for c in letters])
    aligned.append(t)
  dt = least_upper_dtype(*[t.dtype for t in aligned])
  acc = dt if dtypes.is_float(dt) else sum_acc_dtype(dt)
  x = aligned[0].cast(acc)
  for t in aligned[1:]: x = x * t.cast(acc)
  if any(c not in rhs for c in letters):
    x = x.sum(tuple(k for k, c in enumerate(letters) if c not in rhs), dtype=to_dtype(dtype) if dtype is not None else acc)
  kept = [c for c in letters if c in rhs]
  x = x.reshape([size[c] for c in kept]).permute([kept.index(c) for c in rhs])
  return x if dtype is None else x.cast(to_dtype(dtype))

def interpolate(self: Tensor, size: tuple[int, ...], mode: str = "linear", align_corners: bool = False) -> Tensor:
  """Resize the last len(size) dims, one axis at a time: where each output place falls in the input is computed on the
  host, the input is read there (an index tensor) and, for linear, mixed with its right neighbour."""
  if mode not in ("linear", "nearest", "nearest-exact"): raise ValueError(f"interpolate mode {mode!r}: only linear, nearest or nearest-exact")
  if len(size) > self.ndim: raise ValueError(f"interpolate to {size}: the tensor {self.shape} has fewer dims")
  T, x = type(self), self
  for d, out in reversed(list(zip(range(self.ndim - len(size), self.ndim), size))):  # the last axis first: uint8 rounds after each, as torch
    n, i = x.shape[d], np.arange(out, dtype=np.float64)
    pre = (slice(None),) * d
    if mode != "linear":
      src = np.floor((i + (0.5 if mode == "nearest-exact" else 0.0)) * n / out)
      x = x[pre + (T(np.minimum(src, n - 1).astype(np.int32), device=self.device),)]
      continue
    src = (i * (n - 1) / (out - 1) if out > 1 else np.zeros(out)) if align_corners else np.maximum((i + 0.5) * n / out - 0.5, 0)
    lo = np.minimum(np.floor(src), n - 1).astype(np.int32)
    a, b = x[pre + (T(lo, device=self.device),)], x[pre + (T(np.minimum(lo + 1, n - 1), device=self.device),)]
    t, ws = src - lo, (out,) + (1,) * (x.ndim - d - 1)
    if x.dtype is not dtypes.uint8: x = a._float() * (1 - (w := T(t.astype(np.float32), device=self.device).reshape(ws))) + b._float() * w
    else:  # as torch's uint8 bilinear: fixed-point weights (as many bits as the largest fits in 15), rounded after each axis
      p = next(p for p in range(23) if p == 22 or int(0.5 + max(t.max(initial=0), (1 - t).max(initial=0)) * (1 << (p + 1))) >= 1 << 15)
      w0, w1 = (T(np.floor(v * (1 << p) + 0.5).astype(np.int32), device=self.device).reshape(ws) for v in (1 - t, t))
      x = ((a.cast(dtypes.int32) * w0 + b.cast(dtypes.int32) * w1 + (1 << p >> 1)) >> p).maximum(0).minimum(255).cast(dtypes.uint8)
  return x.cast(self.dtype)

# ---------------------------------------------------------------- small helpers and constructors
def size(self: Tensor, dim: int | None = None): return self.shape if dim is None else self.shape[self._resolve_axis(dim, what="size(dim)")]
def _intermediates(root, stands_for: dict, params: list, live: list, gone: set) -> list:
  """Tensors (of floats, requires_grad not set to False) whose value is computed from params (or from `gone`, the nodes
  of leaf tensors no longer referenced), not through a detach: tinygrad marks them requires_grad when they are made, so
  backward() fills their .grad too."""
  leaves, needs = {t.uop for t in params} | gone, set()
  for n in root.toposort():
    if stands_for[n] in leaves or n.op is not Ops.DETACH and any(s in needs for s in n.src): needs.add(n)
  found = {stands_for[n] for n in needs}
  ids = {id(t) for t in params}
  return [t for t in live if id(t) not in ids and t.requires_grad is None and dtypes.is_float(t.dtype) and t.uop in found]
def requires_grad_(self: Tensor, requires_grad: bool = True) -> Tensor:
  self.requires_grad = requires_grad
  return self
def to_(self: Tensor, device: str) -> Tensor:
  self.uop = self.to(device).uop
  return self
def replace(self: Tensor, x: Tensor, allow_shape_mismatch: bool = False) -> Tensor:
  """This tensor takes x's value (its graph): no copy, no write."""
  if not allow_shape_mismatch and x.shape != self.shape: raise ValueError(f"replace shape mismatch {self.shape} != {x.shape}")
  self.uop = x.uop
  return self
def from_uop(cls: type[Tensor], y, **kw) -> Tensor: return cls(y, **kw)
def contiguous_backward(self: Tensor) -> Tensor: return self  # tinygrad's hint to copy the gradient: lazynb's need none
def linspace(cls: type[Tensor], start, stop, steps: int, dtype=None, device=None, **kw) -> Tensor:
  if steps < 0: raise ValueError("number of steps must be non-negative")
  dt = to_dtype(dtype) if dtype is not None else dtypes.default_float
  if dt is dtypes.bool: raise ValueError("linspace cannot make bools (as torch): use a number dtype")
  if steps <= 1: return cls.full((steps,), start, dtype=dt, device=device, **kw)
  i = cls.arange(steps, device=device)
  ret = i.eq(steps - 1).where(float(stop), i.cast(dtypes.float32) * ((stop - start) / (steps - 1)) + start)  # the end exact
  return cls(ret.cast(dt).uop, **kw)
def scaled_uniform(cls: type[Tensor], *shape, **kw) -> Tensor: return cls.uniform(*shape, low=-1.0, high=1.0, **kw) * (prod(_shape(shape)) ** -0.5)
def glorot_uniform(cls: type[Tensor], *shape, **kw) -> Tensor:
  bound = (6 / ((s := _shape(shape))[0] + prod(s[1:]))) ** 0.5
  return cls.uniform(*shape, low=-1.0, high=1.0, **kw) * bound  # (tinygrad's order of operations: its seeded numbers)
def kaiming_uniform(cls: type[Tensor], *shape, a: float = 0.01, **kw) -> Tensor:
  bound = math.sqrt(3.0) * math.sqrt(2.0 / (1 + a ** 2)) / math.sqrt(prod(_shape(shape)[1:]))
  return cls.uniform(*shape, low=-bound, high=bound, **kw)
def kaiming_normal(cls: type[Tensor], *shape, a: float = 0.01, **kw) -> Tensor:
  return cls.normal(*shape, mean=0.0, std=math.sqrt(2.0 / (1 + a ** 2)) / math.sqrt(prod(_shape(shape)[1:])), **kw)
def multinomial(self: Tensor, num_samples: int = 1, replacement: bool = False) -> Tensor:
  """Draw class indices with probabilities proportional to the (1-D or 2-D) weights: with replacement by the inverse
  of the cumulative distribution, without by the Gumbel top-k trick."""
  if not 1 <= self.ndim <= 2 or num_samples < 1:
    raise ArgumentError(f"multinomial needs 1-D or 2-D weights and num_samples >= 1, got {self.shape}, {num_samples}")
  T, w = type(self), (self if self.ndim == 2 else self.unsqueeze(0))._float()
  if not replacement and num_samples > self.shape[-1]:
    raise ArgumentError(f"cannot draw {num_samples} of {self.shape[-1]} classes without replacement")
  if replacement or num_samples == 1:
    cdf = w.cumsum(1)
    cdf = (cdf / cdf[:, -1:]).unsqueeze(1)  # (b, 1, n), the last exactly 1
    u = T.rand(num_samples, w.shape[0], 1, device=self.device).permute(1, 0, 2)  # drawn in tinygrad's layout: its seeded samples
    out = (cdf <= u).sum(2, dtype=dtypes.int32)
  else:
    keys = w.log() - (-(T.rand(*w.shape, device=self.device).log())).log()
    out = keys.topk(num_samples, 1)[1]
  return out if self.ndim == 2 else out.reshape(num_samples)
