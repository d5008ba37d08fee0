"""Algebraic rewrite rules: constant folding, identities, and the div/mod arithmetic of indices.

`symbolic` is applied to every kernel. Index math uses each node's bounds (`vmin`/`vmax`): knowing that
`ridx0` runs over 0..3 lets `(gidx0*4+ridx0)//4` become `gidx0` and `(gidx0*4+ridx0)%4` become `ridx0`."""
from __future__ import annotations
import math
from lazynb.dtype import dtypes, int_fits
from lazynb.uop.ops import UOp, UPat, Ops, GroupOp, PatternMatcher, exec_alu, _minmax_raw

INTS = (dtypes.uint8, dtypes.int32, dtypes.int64, dtypes.index)
INTS_BOOL = INTS + (dtypes.bool,)

def _fold(x: UOp) -> UOp | None:
  if x.op is Ops.IDIV and x.src[1].arg == 0 or x.op is Ops.MOD and x.src[1].arg == 0: return None  # leave it for the device to decide
  return x.const_like(exec_alu(x.op, x.dtype, tuple(s.arg for s in x.src), x.src[0].dtype))

def _bounded(x: UOp) -> UOp | None: return x.const_like(x.vmin) if x.vmin == x.vmax else None

# ---- sums of terms, for div and mod
def split_terms(x: UOp) -> list[UOp]: return split_terms(x.src[0]) + split_terms(x.src[1]) if x.op is Ops.ADD else [x]
def term_coeff(t: UOp) -> tuple[UOp | None, int]:
  if t.op is Ops.CONST: return None, t.arg
  return (t.src[0], t.src[1].arg) if t.op is Ops.MUL and t.src[1].op is Ops.CONST else (t, 1)
def build_sum(dtype, terms: list[tuple[UOp | None, int]]) -> UOp:
  out: UOp | None = None
  const = 0
  for b, k in terms:
    if b is None: const += k; continue  # noqa: E702
    t = b if k == 1 else b * UOp.const(dtype, k)
    out = t if out is None else out + t
  if out is None: return UOp.const(dtype, const)
  return out + UOp.const(dtype, const) if const else out

def divmod_sum(x: UOp, c: UOp, is_div: bool) -> UOp | None:
  """(sum of k_i * x_i) // c and % c, for non-negative terms: whole multiples of c move out of the sum
  (k = q*c + r), common factors cancel, and a remainder known to be below c needs no division at all."""
  cv = c.arg
  if cv <= 0 or x.vmin < 0 or not exact(x): return None
  terms = [term_coeff(t) for t in split_terms(x)]
  # x = c*q + s where the rest s (any signs) stays within one multiple of c: x//c = q + s//c, x%c = s - c*(s//c).
  # A flipped view reads 24 - 5*a - b (a, b < 5) next to multiples of 25: its //25 is 0 and its %25 is itself.
  whole = [(b, k // cv) for b, k in terms if b is not None and k % cv == 0]
  if whole and len(whole) < len(terms):
    rest = build_sum(x.dtype, [(b, k) for b, k in terms if b is None or k % cv])
    if (m := rest.vmin // cv) == rest.vmax // cv: return build_sum(x.dtype, whole + [(None, m)]) if is_div else (rest - m * cv if m else rest)
  if any(k < 0 or (b is not None and b.vmin < 0) for b, k in terms): return None
  if any(k >= cv for _, k in terms):
    quot = [(b, k // cv) for b, k in terms if k // cv]
    rem = build_sum(x.dtype, [(b, k % cv) for b, k in terms if k % cv])
    return (build_sum(x.dtype, quot) + rem // c) if is_div else rem % c
  g = math.gcd(cv, *[k for _, k in terms])
  if g > 1:
    y = build_sum(x.dtype, [(b, k // g) for b, k in terms])
    return y // (cv // g) if is_div else (y % (cv // g)) * g
  # k*y + s with k dividing c and s within [0, k): x//c = y//(c/k), x%c = (y%(c/k))*k + s. A max-pool's backward
  # reads (5*a + b)//10 with b < 5: that is a//2, and no division is left that depends on b.
  for k in sorted({k for b, k in terms if b is not None and 1 < k < cv and cv % k == 0}, reverse=True):
    small = [(b, q) for b, q in terms if q % k]
    if small and 0 <= (s := build_sum(x.dtype, small)).vmin and s.vmax < k:
      y = build_sum(x.dtype, [(b, q // k) for b, q in terms if q % k == 0])
      return y // (cv // k) if is_div else (y % (cv // k)) * k + s
  return None

def exact(u: UOp) -> bool:
  """Is u computed without wrapping around? Index math is exact (64-bit, bounded); a data integer is when its value's
  unwrapped range fits its dtype. Rules that hold for integers but not modulo 2**n (div and mod of a product or a sum,
  comparisons of a shifted value) apply only to exact expressions: x*4//4 is not x after x*4 wrapped."""
  if u.dtype is dtypes.index: return True
  lo, hi = _minmax_raw(u)
  return dtypes.min(u.dtype) <= lo and hi <= dtypes.max(u.dtype)

def _mul_div(x: UOp, c1: UOp, c2: UOp, is_div: bool) -> UOp | None:
  a, b = c1.arg, c2.arg
  if b <= 0 or not exact(x * c1): return None
  if a % b == 0: return x * (a // b) if is_div else x.const_like(0)
  if b % a == 0 and a > 0 and x.vmin >= 0: return x // (b // a) if is_div else (x % (b // a)) * a
  return None

symbolic_simple = PatternMatcher([
  # constant folding
  (UPat(GroupOp.ALU | {Ops.CAST}, name="x", src=UPat(Ops.CONST)), _fold),
  # identities
  (UPat.var("x") + 0, lambda x: x), (UPat.var("x") * 1, lambda x: x),
  (UPat.var("x", INTS) * 0, lambda x: x.const_like(0)),
  (UPat.var("x", INTS) // 1, lambda x: x), (UPat.var("x", INTS) % 1, lambda x: x.const_like(0)),
  (UPat.var("x", dtypes.bool) & True, lambda x: x), (UPat.var("x", dtypes.bool) & False, lambda x: x.const_like(False)),
  (UPat.var("x", dtypes.bool) | False, lambda x: x), (UPat.var("x", dtypes.bool) | True, lambda x: x.const_like(True)),
  (UPat(Ops.XOR, src=[UPat.var("x"), UPat.const(None, False)]), lambda x: x),
  (UPat(Ops.NEG, src=(UPat(Ops.NEG, src=(UPat.var("x"),)),)), lambda x: x),
  (UPat(Ops.WHERE, src=(UPat.var(), UPat.var("a"), UPat.var("b"))), lambda a, b: a if a is b else None),
  (UPat(Ops.WHERE, src=(UPat.cvar("c"), UPat.var("a"), UPat.var("b"))), lambda c, a, b: a if c.arg else b),
  (UPat(Ops.CAST, name="x"), lambda x: x.src[0] if x.src[0].dtype == x.dtype else None),
  (UPat(Ops.LOG2, src=(UPat(Ops.EXP2, src=(UPat.var("x"),)),)), lambda x: x),
  # reassociate constants: (x+c1)+c2 -> x+(c1+c2), (x*c1)*c2 -> x*(c1*c2)
  ((UPat.var("x") + UPat.cvar("c1")) + UPat.cvar("c2"), lambda x, c1, c2: x + exec_alu(Ops.ADD, x.dtype, (c1.arg, c2.arg))),
  ((UPat.var("x") * UPat.cvar("c1")) * UPat.cvar("c2"), lambda x, c1, c2: x * exec_alu(Ops.MUL, x.dtype, (c1.arg, c2.arg))),
  # constants to the right of commutative ops
  (UPat(GroupOp.Commutative, name="x", src=(UPat(Ops.CONST), UPat.var())), lambda x: x.replace(src=x.src[::-1]) if x.src[1].op is not Ops.CONST else None),
])

symbolic = symbolic_simple + PatternMatcher([
  # anything whose bounds meet is a constant
  (UPat(GroupOp.ALU, dtype=INTS_BOOL, name="x"), _bounded),
  # integer negation as a coefficient, so sums decompose
  (UPat(Ops.NEG, dtype=INTS, src=(UPat.var("x"),)), lambda x: x * -1),
  # distribute a constant over a sum (index math only): (x+y)*c -> x*c + y*c
  ((UPat.var("x", INTS) + UPat.var("y")) * UPat.cvar("c"), lambda x, y, c: x * c + y * c),
  # fold like terms: x*a + x*b -> x*(a+b), x + x*b -> x*(1+b)
  (UPat.var("x", INTS) * UPat.cvar("a") + UPat.var("x") * UPat.cvar("b"), lambda x, a, b: x * (a.arg + b.arg)),
  (UPat.var("x", INTS) + UPat.var("x") * UPat.cvar("b"), lambda x, b: x * (1 + b.arg)),
  ((UPat.var("y", INTS) + UPat.var("x") * UPat.cvar("a")) + UPat.var("x") * UPat.cvar("b"), lambda y, x, a, b: y + x * (a.arg + b.arg)),
  # div and mod
  (UPat.var("x", INTS) % UPat.cvar("c"), lambda x, c: x if 0 <= x.vmin and x.vmax < c.arg else None),
  ((UPat.var("x", INTS) * UPat.cvar("c1")) // UPat.cvar("c2"), lambda x, c1, c2: _mul_div(x, c1, c2, True)),
  ((UPat.var("x", INTS) * UPat.cvar("c1")) % UPat.cvar("c2"), lambda x, c1, c2: _mul_div(x, c1, c2, False)),
  ((UPat.var("x", INTS) // UPat.cvar("c1")) // UPat.cvar("c2"),
   lambda x, c1, c2: x // (c1.arg * c2.arg) if x.vmin >= 0 and c1.arg > 0 and c2.arg > 0 else None),
  ((UPat.var("x", INTS) % UPat.cvar("c1")) % UPat.cvar("c2"), lambda x, c1, c2: x % c2 if c2.arg > 0 and c1.arg % c2.arg == 0 else None),
  ((UPat.var("x", INTS) % UPat.cvar("c1")) // UPat.cvar("c2"),
   lambda x, c1, c2: (x // c2) % (c1.arg // c2.arg) if x.vmin >= 0 and c2.arg > 0 and c1.arg % c2.arg == 0 else None),
  (UPat(Ops.ADD, dtype=INTS, name="x") // UPat.cvar("c"), lambda x, c: divmod_sum(x, c, True)),
  (UPat(Ops.ADD, dtype=INTS, name="x") % UPat.cvar("c"), lambda x, c: divmod_sum(x, c, False)),
  # (x//c)*c + x%c -> x
  ((UPat.var("x") // UPat.cvar("c")) * UPat.cvar("c") + UPat.var("x") % UPat.cvar("c"), lambda x, c: x),
  # comparisons against constants
  ((UPat.var("x", INTS) + UPat.cvar("c1")) < UPat.cvar("c2"),
   lambda x, c1, c2: x < (c2.arg - c1.arg) if exact(x + c1) and (x.dtype is dtypes.index or int_fits(c2.arg - c1.arg, x.dtype)) else None),
  ((UPat.var("x", INTS) * UPat.cvar("c1")) < UPat.cvar("c2"),
   lambda x, c1, c2: x < -(-c2.arg // c1.arg) if c1.arg > 0 and exact(x * c1) else None),
  (UPat(Ops.MAX, src=(UPat.var("x"), UPat.var("y"))), lambda x, y: x if x.vmin >= y.vmax and dtypes.is_int(x.dtype) else
   (y if y.vmin >= x.vmax and dtypes.is_int(x.dtype) else None))])
