"""Operators are written once (lazynb/uop/opmixin.py): UOp, UPat and Tensor get every dunder and named operator from
OpMixin and supply only hooks. Checked here: no class carries a copy, UOp builds the same nodes it always built, UPat
the same patterns, and Tensor's operators give numpy's values."""
import inspect, operator
import numpy as np
import pytest
from lazynb import Tensor, dtypes
from lazynb.uop.opmixin import OpMixin, OPERATORS
from lazynb.uop.ops import UOp, UPat, Ops

# the named operators Tensor computes its own way (Python's rounding for //, %, float /, no bool -, safe shifts)
TENSOR_NUMERICS = {"sub", "div", "floordiv", "mod", "lshift", "rshift"}

def own_copies(cls) -> set[str]:
  """Operator names that cls, or a class before OpMixin in its MRO, defines itself."""
  out: set[str] = set()
  for k in cls.__mro__[:cls.__mro__.index(OpMixin)]:  # (Tensor's methods are wrapped to tag the nodes they make: the
    out |= {n for n in OPERATORS if n in vars(k) and inspect.unwrap(vars(k)[n]) is not getattr(OpMixin, n, None)}  # wrapped is OpMixin's)
  return out

def test_one_definition_of_every_operator():
  assert {"__add__", "__radd__", "__sub__", "__rsub__", "__truediv__", "__floordiv__", "__mod__", "__neg__", "__lt__", "__gt__",
          "__le__", "__ge__", "__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "ne", "eq", "maximum"} <= set(OPERATORS)
  assert own_copies(UOp) == set() and own_copies(UPat) == set()
  assert own_copies(Tensor) == TENSOR_NUMERICS  # and no dunder: a + b is a.add(b) in every class
  for cls in (UOp, UPat, Tensor):
    for n in OPERATORS:
      if n.startswith("__"): assert inspect.unwrap(getattr(cls, n)) is getattr(OpMixin, n), f"{cls.__name__}.{n}"

def test_equality_and_hashing_stay_per_class():
  a = Tensor([1, 2, 3])
  assert isinstance(a == 2, Tensor) and (a == 2).tolist() == [False, True, False] and (a != 2).tolist() == [True, False, True]
  assert hash(a) == object.__hash__(a) and {a: 1}[a] == 1  # a Tensor is still a dict key (by identity)
  n = UOp.variable("n", 0, 9)
  assert (n == n) is True and (n == UOp.variable("m", 0, 9)) is False and {n: 1}[n] == 1  # identity: UOps are hash-consed
  p = UPat.var("x")
  assert (p == p) is True and {p: 1}[p] == 1

def _c(v, dt=dtypes.int32): return UOp.const(dt, v)

def test_uop_builds_the_nodes_it_always_built():
  n, m = UOp.variable("n", 0, 100), UOp.variable("m", 1, 9)
  I, B = dtypes.int32, dtypes.bool
  assert n + 0 is n and 0 + n is n and n * 1 is n and 1 * n is n and n - 0 is n  # index math stays short
  cases = [
    (n + 2, UOp(Ops.ADD, I, (n, _c(2)))), (2 + n, UOp(Ops.ADD, I, (n, _c(2)))),
    (n - 3, UOp(Ops.ADD, I, (n, _c(-3)))), (3 - n, UOp(Ops.ADD, I, (_c(3), UOp(Ops.NEG, I, (n,))))),
    (n - m, UOp(Ops.ADD, I, (n, UOp(Ops.NEG, I, (m,))))),
    (n * 4, UOp(Ops.MUL, I, (n, _c(4)))), (4 * n, UOp(Ops.MUL, I, (n, _c(4)))),
    (n // 3, UOp(Ops.IDIV, I, (n, _c(3)))), (7 // n, UOp(Ops.IDIV, I, (_c(7), n))),
    (n % 5, UOp(Ops.MOD, I, (n, _c(5)))), (7 % n, UOp(Ops.MOD, I, (_c(7), n))),
    (-n, UOp(Ops.NEG, I, (n,))),
    (n < 3, UOp(Ops.CMPLT, B, (n, _c(3)))), (n > 3, UOp(Ops.CMPLT, B, (_c(3), n))), (3 < n, UOp(Ops.CMPLT, B, (_c(3), n))),
    (n.ne(3), UOp(Ops.CMPNE, B, (n, _c(3)))), (n.eq(3), UOp(Ops.XOR, B, (UOp(Ops.CMPNE, B, (n, _c(3))), UOp.const(B, True)))),
    (n.maximum(m), UOp(Ops.MAX, I, (n, m))),
    (n & 3, UOp(Ops.AND, I, (n, _c(3)))), (n | m, UOp(Ops.OR, I, (n, m))), (n ^ 1, UOp(Ops.XOR, I, (n, _c(1)))),
    (n << 2, UOp(Ops.SHL, I, (n, _c(2)))), (n >> 1, UOp(Ops.SHR, I, (n, _c(1)))),
  ]
  for got, want in cases: assert got is want, f"{got} is not {want}"  # (an int constant added or multiplied goes second: 2*n is n*2)
  b = n < 3
  assert -b is UOp(Ops.XOR, B, (b, UOp.const(B, True)))  # not of a bool: NEG has no bool meaning
  f = UOp.variable("f", 0, 1, dtypes.float32).cast(dtypes.float32)
  assert f - 2.0 is UOp(Ops.ADD, f.dtype, (f, UOp(Ops.NEG, f.dtype, (UOp.const(f.dtype, 2.0),))))  # only ints negate in Python
  assert f / 2.0 is UOp(Ops.MUL, f.dtype, (f, UOp(Ops.RECIP, f.dtype, (UOp.const(f.dtype, 2.0),))))
  with pytest.raises(TypeError): n / 2  # noqa: B018

def test_upat_patterns():
  x, c = UPat.var("x"), UPat.cvar("c")
  n = UOp.variable("n", 0, 100)
  def hit(p, u): return p.match(u, {}) != []
  # commutative ops match either order, and keep the written left side first
  for p in (x + c, c + x, 3 + x, x * c, x.maximum(c), x & c, x | c, x ^ c, x.ne(c)):
    assert isinstance(p.src, list) and len(p.src) == 2
  assert (x + c).src[0] == (x, c) and (3 + x).src[0][0] is x
  assert hit(x + c, n + 3) and hit(x + c, 3 + n) and hit(x * 4, 4 * n) and not hit(x + 5, n + 3)
  # the others match in order
  assert hit(x < c, n < 3) and not hit(x < c, 3 < n) and hit(x > c, n > 3) and hit(c > x, n < 3)
  assert hit(x // c, n // 3) and not hit(x // c, 3 // n) and hit(7 // x, 7 // n) and hit(x % c, n % 3)
  assert hit(x.eq(c), n.eq(3)) and hit(-x, -n) and hit(x << c, n << 2) and hit(x - c, n - UOp.const(n.dtype, 3))
  # tinygrad's UPat.store(buf, view, value): a kernel's STORE of a constant, and not of a load
  from lazynb import Tensor
  ast = Tensor.ones(4).contiguous().schedule()[-1].ast
  assert hit(UPat(Ops.SINK, src=(UPat.store(UPat(), UPat(), UPat(Ops.CONST)),)), ast)
  assert not hit(UPat(Ops.SINK, src=(UPat.store(UPat(), UPat(), UPat(Ops.LOAD)),)), ast)

INTS = np.array([-7, -3, -1, 0, 1, 2, 5, 9], dtype=np.int32)
DIVS = np.array([3, -2, 5, 7, -4, 1, 2, -3], dtype=np.int32)
FLOATS = np.array([-2.5, -1.0, -0.25, 0.0, 0.5, 1.0, 3.0, 7.5], dtype=np.float32)

BINARY = [operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod, operator.lt, operator.gt, operator.le,
          operator.ge, operator.eq, operator.ne]

@pytest.mark.parametrize("op", BINARY + [operator.and_, operator.or_, operator.xor], ids=lambda f: f.__name__)
def test_tensor_int_operators_match_numpy(op):
  a, b = Tensor(INTS), Tensor(DIVS)
  np.testing.assert_array_equal(op(a, b).numpy(), op(INTS, DIVS))
  np.testing.assert_array_equal(op(a, 3).numpy(), op(INTS, np.int32(3)))
  np.testing.assert_array_equal(op(11, b).numpy(), op(np.int32(11), DIVS))  # the reflected operator

@pytest.mark.parametrize("op", BINARY + [operator.truediv, lambda a, b: a.maximum(b) if isinstance(a, Tensor) else np.maximum(a, b)],
                         ids=lambda f: getattr(f, "__name__", "maximum"))
def test_tensor_float_operators_match_numpy(op):
  a, b = Tensor(FLOATS), Tensor(DIVS.astype(np.float32))
  np.testing.assert_allclose(op(a, b).numpy(), op(FLOATS, DIVS.astype(np.float32)), rtol=1e-6)
  np.testing.assert_allclose(op(a, 1.5).numpy(), op(FLOATS, np.float32(1.5)), rtol=1e-6)
  if op.__name__ != "<lambda>": np.testing.assert_allclose(op(2.0, b).numpy(), op(np.float32(2.0), DIVS.astype(np.float32)), rtol=1e-6)

def test_tensor_unary_shifts_and_bools():
  np.testing.assert_array_equal((-Tensor(INTS)).numpy(), -INTS)
  sh = np.array([0, 1, 2, 3, 4, 5, 6, 7], dtype=np.int32)
  np.testing.assert_array_equal((Tensor(INTS) << Tensor(sh)).numpy(), INTS << sh)
  np.testing.assert_array_equal((Tensor(INTS) >> 1).numpy(), INTS >> 1)
  np.testing.assert_array_equal((3 << Tensor(sh)).numpy(), np.int32(3) << sh)  # reflected shifts
  np.testing.assert_array_equal((100 >> Tensor(sh)).numpy(), np.int32(100) >> sh)
  p, q = np.array([True, True, False, False]), np.array([True, False, True, False])
  for op in (operator.add, operator.mul, operator.and_, operator.or_, operator.xor, operator.eq, operator.ne):
    np.testing.assert_array_equal(op(Tensor(p), Tensor(q)).numpy(), op(p, q))
  np.testing.assert_array_equal((-Tensor(p)).numpy(), ~p)
  np.testing.assert_array_equal(Tensor(p).maximum(Tensor(q)).numpy(), np.maximum(p, q))
  with pytest.raises(TypeError): Tensor(FLOATS) & 1  # noqa: B018
  with pytest.raises(TypeError): Tensor(p) - Tensor(q)  # noqa: B018
