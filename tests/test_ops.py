"""Tensor ops checked against numpy: constructors, elementwise math, reductions, matmul, conv and pooling.

Every test computes the expected value with numpy (float64 where precision matters) and compares.
Tests named after a bug (INT_MIN // -1, constant reductions, empty axes, tensor ** tensor, numpy 0-d arrays, lists of
numpy scalars, big Python ints, float16 rand) are regression tests for bugs found by this suite and since fixed.
"""
import math, subprocess, sys, os, textwrap
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp
from lazynb import Tensor, dtypes

# HYPOTHESIS_SCALE=10 multiplies every example budget below, for a longer bug hunt
def ex(n: int) -> int: return n * int(os.environ.get('HYPOTHESIS_SCALE', '1'))

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ------------------------------------------------------------------ helpers

def npv(x): return x.numpy() if isinstance(x, Tensor) else np.asarray(x)

def check(got, expected, atol=1e-5, rtol=1e-5, dtype=None):
  """`got` (Tensor) equals `expected` (numpy): same shape, same dtype (`dtype` or expected's), close values."""
  assert isinstance(got, Tensor), f"expected a Tensor, got {type(got)}"
  g = got.numpy()
  e = np.asarray(expected)
  want_dt = np.dtype(dtype) if dtype is not None else e.dtype
  assert g.shape == e.shape, f"shape {g.shape} != expected {e.shape}"
  assert g.dtype == want_dt, f"dtype {g.dtype} != expected {want_dt}"
  assert got.shape == e.shape, f"Tensor.shape {got.shape} != {e.shape}"
  if e.dtype.kind == "f" or g.dtype.kind == "f":
    np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), atol=atol, rtol=rtol, equal_nan=True)
  else:
    np.testing.assert_array_equal(g, e)

def run_isolated(code: str, timeout=120) -> subprocess.CompletedProcess:
  """Run lazynb code in a child process so a crash (SIGFPE/SIGSEGV) fails one test instead of killing pytest."""
  env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
  return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout, env=env)

# a small pool of shapes so that most hypothesis examples reuse compiled kernels, plus 0-d and size-1 dims
SHAPE_POOL = [(), (1,), (5,), (2, 3), (3, 1, 4), (2, 3, 4), (1, 2, 1, 3), (2, 2, 3, 2)]
shapes = st.sampled_from(SHAPE_POOL)
any_shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=6)

def f32_arrays(shape, lo=-10.0, hi=10.0):
  lo, hi = float(np.nextafter(np.float32(lo), np.float32(np.inf))), float(np.nextafter(np.float32(hi), np.float32(-np.inf)))
  return hnp.arrays(np.float32, shape, elements=st.floats(lo, hi, width=32, allow_nan=False, allow_infinity=False))
def i32_arrays(shape, lo=-100, hi=100):
  return hnp.arrays(np.int32, shape, elements=st.integers(lo, hi))

# ------------------------------------------------------------------ constructors

class TestConstructors:
  def test_from_int_list(self):
    t = Tensor([[1, 2, 3], [4, 5, 6]])
    check(t, np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32))
    assert t.dtype == dtypes.int32 and t.shape == (2, 3) and t.ndim == 2 and t.numel() == 6

  def test_from_float_list(self):
    check(Tensor([1.5, -2.25, 3.0]), np.array([1.5, -2.25, 3.0], dtype=np.float32))

  def test_from_mixed_int_float_list_is_float(self):
    check(Tensor([1, 2.5, 3]), np.array([1, 2.5, 3], dtype=np.float32))

  def test_from_bool_list(self):
    check(Tensor([True, False, True]), np.array([True, False, True]))

  def test_from_tuple_and_nested(self):
    check(Tensor(((1.0,), (2.0,))), np.array([[1.0], [2.0]], dtype=np.float32))

  def test_from_list_with_dtype(self):
    check(Tensor([1, 2, 3], dtype=dtypes.float16), np.array([1, 2, 3], dtype=np.float16))
    check(Tensor([1.7, -2.7], dtype="int32"), np.array([1, -2], dtype=np.int32))
    check(Tensor([0, 2, 0], dtype=dtypes.bool), np.array([False, True, False]))

  def test_empty_list(self):
    t = Tensor([])
    assert t.shape == (0,)
    assert t.numpy().shape == (0,)
    assert t.dtype == dtypes.float32

  @pytest.mark.parametrize("npdt,expect", [(np.float32, np.float32), (np.float16, np.float16), (np.int32, np.int32),
                                           (np.int64, np.int64), (np.uint8, np.uint8), (np.bool_, np.bool_), (np.float64, np.float64)])
  def test_from_numpy_dtypes(self, npdt, expect):
    a = (np.arange(12).reshape(3, 4) % 5).astype(npdt)
    check(Tensor(a), a.astype(expect))

  def test_from_numpy_noncontiguous(self):
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    check(Tensor(a.T), a.T)
    check(Tensor(a[::2, ::-3]), a[::2, ::-3])
    check(Tensor(np.broadcast_to(np.arange(3, dtype=np.int32), (4, 3))), np.broadcast_to(np.arange(3, dtype=np.int32), (4, 3)))

  @pytest.mark.parametrize("arr", [np.array(2.5, np.float32), np.array(3), np.array(True)])
  def test_from_numpy_0d(self, arr):
    t = Tensor(arr)
    assert t.shape == ()
    check(t, arr)

  @pytest.mark.parametrize("data,exp", [
    ([np.float32(1.5), np.float32(-2.0)], np.array([1.5, -2.0], np.float32)),
    ([np.int64(3), np.int64(4)], np.array([3, 4])),
    ([np.int32(3), 4], np.array([3, 4])),
    ([np.array([1.0, 2.0]), np.array([3.0, 4.0])], np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)),
    ([np.float16(0.5), 1.0], np.array([0.5, 1.0], np.float32)),
  ])
  def test_from_list_of_numpy_scalars(self, data, exp):
    t = Tensor(data)
    assert t.shape == exp.shape
    np.testing.assert_array_equal(t.numpy().astype(np.float64), exp.astype(np.float64))

  def test_from_list_of_np_float64_scalars(self):
    check(Tensor([np.float64(1.5), np.float64(2.0)]), np.array([1.5, 2.0], np.float32))

  @pytest.mark.parametrize("make", ["scalar", "list", "full", "arange", "list-mixed"])
  def test_from_large_python_int(self, make):
    big = 2**40 + 3
    fn = {"scalar": lambda: Tensor(big), "list": lambda: Tensor([big, 1]), "full": lambda: Tensor.full((2,), big),
          "arange": lambda: Tensor.arange(big, big + 2), "list-mixed": lambda: Tensor([[1, 2], [big, -big]])}[make]
    exp = {"scalar": np.array(big), "list": np.array([big, 1]), "full": np.full(2, big), "arange": np.arange(big, big + 2),
           "list-mixed": np.array([[1, 2], [big, -big]])}[make]
    try: t = fn()
    except (OverflowError, ValueError, TypeError): return  # refusing is fine (numpy 2 raises for int32 overflow)
    np.testing.assert_array_equal(t.numpy().astype(np.int64), exp)  # else the value must survive (torch/numpy infer int64)

  def test_from_numpy_is_a_copy(self):
    a = np.arange(5, dtype=np.float32)
    t = Tensor(a)
    a[:] = 99
    check(t, np.arange(5, dtype=np.float32))

  @pytest.mark.parametrize("val,npdt", [(3, np.int32), (-2.5, np.float32), (True, np.bool_), (np.float32(1.25), np.float32),
                                        (np.int64(7), np.int64), (np.float64(0.1), np.float64)])  # numpy scalars keep their dtype
  def test_from_scalar_is_0d(self, val, npdt):
    t = Tensor(val)
    assert t.shape == () and t.ndim == 0 and t.numel() == 1
    check(t, np.array(val).astype(npdt))
    assert t.item() == pytest.approx(float(np.array(val).astype(npdt)))

  def test_scalar_with_dtype(self):
    check(Tensor(3, dtype=dtypes.float32), np.array(3.0, dtype=np.float32))
    check(Tensor(2.9, dtype=dtypes.int64), np.array(2, dtype=np.int64))

  def test_from_tensor(self):
    a = Tensor([1, 2, 3])
    check(Tensor(a), np.array([1, 2, 3], dtype=np.int32))
    check(Tensor(a, dtype=dtypes.float32), np.array([1, 2, 3], dtype=np.float32))

  @pytest.mark.parametrize("shape_args", [((3, 4),), (3, 4), ((2, 1, 3),), (5,), ((),)])
  def test_zeros_ones_shapes(self, shape_args):
    shape = shape_args[0] if len(shape_args) == 1 and isinstance(shape_args[0], tuple) else shape_args
    check(Tensor.zeros(*shape_args), np.zeros(shape, dtype=np.float32))
    check(Tensor.ones(*shape_args), np.ones(shape, dtype=np.float32))

  @pytest.mark.parametrize("dt", [dtypes.float32, dtypes.float16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.bool])
  def test_zeros_ones_dtype(self, dt):
    check(Tensor.zeros(2, 3, dtype=dt), np.zeros((2, 3), dtype=dt.np))
    check(Tensor.ones(2, 3, dtype=dt), np.ones((2, 3), dtype=dt.np))

  @pytest.mark.parametrize("fill,dt,npdt", [(7, None, np.int32), (2.5, None, np.float32), (True, None, np.bool_),
                                            (-3, dtypes.float16, np.float16), (300, dtypes.int64, np.int64), (200, dtypes.uint8, np.uint8)])
  def test_full(self, fill, dt, npdt):
    check(Tensor.full((2, 3), fill, dtype=dt), np.full((2, 3), fill, dtype=npdt))
    check(Tensor.full(4, fill, dtype=dt), np.full(4, fill, dtype=npdt))

  def test_empty(self):
    t = Tensor.empty(3, 4)
    assert t.shape == (3, 4) and t.dtype == dtypes.float32
    assert t.numpy().shape == (3, 4)
    t2 = Tensor.empty(2, 2, dtype=dtypes.int64)
    assert t2.dtype == dtypes.int64 and t2.numpy().dtype == np.int64
    check(t.zeros_like() + 1, np.ones((3, 4), np.float32))  # usable in expressions (its own values are unspecified)

  def test_rand_range_and_shape(self):
    Tensor.manual_seed(1)
    r = Tensor.rand(200, 50).numpy()
    assert r.shape == (200, 50) and r.dtype == np.float32
    assert r.min() >= 0.0 and r.max() < 1.0
    assert abs(r.mean() - 0.5) < 0.02 and abs(r.std() - math.sqrt(1 / 12)) < 0.02
    assert len(np.unique(r)) > 9000

  def test_randn_stats(self):
    Tensor.manual_seed(2)
    r = Tensor.randn(100, 100).numpy()
    assert r.shape == (100, 100) and r.dtype == np.float32
    assert abs(r.mean()) < 0.05 and abs(r.std() - 1) < 0.05

  def test_rand_dtype(self):
    r = Tensor.rand(10, dtype=dtypes.float16)
    assert r.dtype == dtypes.float16 and r.numpy().dtype == np.float16

  def test_rand_half_stays_below_one(self):
    Tensor.manual_seed(0)
    r = Tensor.rand(100_000, dtype=dtypes.float16).numpy()
    assert r.min() >= 0 and r.max() < 1.0, f"{(r >= 1).sum()} samples are >= 1.0"

  def test_manual_seed_reproducible(self):
    Tensor.manual_seed(123)
    a, an = Tensor.rand(4, 5).numpy(), Tensor.randn(3).numpy()
    Tensor.manual_seed(123)
    b, bn = Tensor.rand(4, 5).numpy(), Tensor.randn(3).numpy()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(an, bn)
    Tensor.manual_seed(124)
    assert not np.array_equal(Tensor.rand(4, 5).numpy(), a)

  def test_rand_successive_calls_differ(self):
    Tensor.manual_seed(5)
    assert not np.array_equal(Tensor.rand(10).numpy(), Tensor.rand(10).numpy())

  @pytest.mark.parametrize("args,kw", [((5,), {}), ((2, 9), {}), ((10, 0, -3), {}), ((0, 1, 0.25), {}), ((-2.5, 2.5), {}),
                                       ((3, 10, 2), {"dtype": dtypes.int64}), ((4,), {"dtype": dtypes.float32}), ((0,), {}), ((5, 2), {})])
  def test_arange(self, args, kw):
    exp = np.arange(*args)
    if "dtype" in kw: exp = exp.astype(kw["dtype"].np)
    elif exp.dtype.kind == "f" or any(isinstance(a, float) for a in args): exp = exp.astype(np.float32)
    else: exp = exp.astype(np.int32)
    check(Tensor.arange(*args, **kw), exp)

  @pytest.mark.parametrize("n,m", [(1, None), (4, None), (3, 5), (5, 2)])
  def test_eye(self, n, m):
    check(Tensor.eye(n, m), np.eye(n, m, dtype=np.float32))
  def test_eye_dtype(self):
    check(Tensor.eye(3, dtype=dtypes.int32), np.eye(3, dtype=np.int32))

  @pytest.mark.parametrize("dt", [dtypes.float32, dtypes.float16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.bool])
  def test_like_constructors(self, dt):
    base = Tensor(np.zeros((2, 3)), dtype=dt)
    check(base.zeros_like(), np.zeros((2, 3), dtype=dt.np))
    check(base.ones_like(), np.ones((2, 3), dtype=dt.np))
    check(base.full_like(1), np.full((2, 3), 1, dtype=dt.np))
    e = base.empty_like()
    assert e.shape == (2, 3) and e.dtype == dt
  def test_like_dtype_override(self):
    check(Tensor([1, 2, 3]).full_like(2.5, dtype=dtypes.float32), np.full(3, 2.5, np.float32))
    check(Tensor([1.0, 2.0]).zeros_like(dtype=dtypes.int32), np.zeros(2, np.int32))
  def test_rand_like(self):
    r = Tensor.ones(3, 7).rand_like()
    assert r.shape == (3, 7)
    v = r.numpy()
    assert ((v >= 0) & (v < 1)).all()
    assert Tensor.ones(2, 2).randn_like().shape == (2, 2)

  def test_uniform_randint_ranges(self):
    Tensor.manual_seed(3)
    u = Tensor.uniform(1000, low=-2.0, high=3.0).numpy()
    assert u.min() >= -2.0 and u.max() < 3.0
    ri = Tensor.randint(1000, low=-3, high=4)
    assert ri.dtype == dtypes.int32
    v = ri.numpy()
    assert v.min() >= -3 and v.max() < 4 and len(np.unique(v)) == 7

  def test_item_tolist(self):
    assert Tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert Tensor([2.5]).item() == 2.5
    assert Tensor([[7]]).item() == 7
    assert np.asarray(Tensor([1.0, 2.0])).tolist() == [1.0, 2.0]

# ------------------------------------------------------------------ elementwise

UNARY = {
  # name: (lazynb fn, numpy fn, (lo, hi), atol, rtol)
  "neg": (lambda t: -t, lambda a: -a, (-10, 10), 0, 0),
  "relu": (lambda t: t.relu(), lambda a: np.maximum(a, 0), (-10, 10), 0, 0),
  "abs": (lambda t: t.abs(), np.abs, (-10, 10), 0, 0),
  "sign": (lambda t: t.sign(), np.sign, (-10, 10), 0, 0),
  "exp": (lambda t: t.exp(), np.exp, (-20, 20), 1e-6, 1e-5),
  "exp2": (lambda t: t.exp2(), np.exp2, (-20, 20), 1e-6, 1e-5),
  "log": (lambda t: t.log(), np.log, (1e-3, 1e3), 1e-5, 1e-5),
  "log2": (lambda t: t.log2(), np.log2, (1e-3, 1e3), 1e-5, 1e-5),
  "sqrt": (lambda t: t.sqrt(), np.sqrt, (0, 100), 1e-6, 1e-6),
  "rsqrt": (lambda t: t.rsqrt(), lambda a: 1 / np.sqrt(a), (1e-2, 100), 1e-6, 1e-5),
  "sin": (lambda t: t.sin(), np.sin, (-10, 10), 2e-6, 1e-5),
  "cos": (lambda t: t.cos(), np.cos, (-10, 10), 2e-6, 1e-5),
  "tanh": (lambda t: t.tanh(), np.tanh, (-10, 10), 2e-6, 1e-5),
  "sigmoid": (lambda t: t.sigmoid(), lambda a: 1 / (1 + np.exp(-a)), (-30, 30), 1e-6, 1e-5),
  "square": (lambda t: t.square(), np.square, (-10, 10), 1e-6, 1e-6),
  "reciprocal": (lambda t: t.reciprocal(), lambda a: 1 / a, (0.01, 10), 1e-6, 1e-6),
  "floor": (lambda t: t.floor(), np.floor, (-10, 10), 0, 0),
  "ceil": (lambda t: t.ceil(), np.ceil, (-10, 10), 0, 0),
  "trunc": (lambda t: t.trunc(), np.trunc, (-10, 10), 0, 0),
}

@pytest.mark.parametrize("name", list(UNARY))
@settings(max_examples=ex(8))
@given(data=st.data())
def test_unary_float32(name, data):
  fn, npfn, (lo, hi), atol, rtol = UNARY[name]
  a = data.draw(f32_arrays(data.draw(shapes), lo, hi))
  check(fn(Tensor(a)), npfn(a.astype(np.float64)).astype(np.float32), atol=atol, rtol=rtol)

@pytest.mark.parametrize("name", ["neg", "abs", "sign", "relu", "square"])
def test_unary_int32(name):
  fn, npfn = UNARY[name][:2]
  a = np.array([-7, -1, 0, 1, 5, 100], dtype=np.int32)
  check(fn(Tensor(a)), npfn(a).astype(np.int32))

@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "sigmoid", "tanh", "exp2", "log2", "rsqrt"])
def test_unary_on_int_gives_float32(name):
  fn, npfn = UNARY[name][:2]
  a = np.array([1, 2, 3, 9], dtype=np.int32)
  check(fn(Tensor(a)), npfn(a.astype(np.float64)).astype(np.float32), atol=1e-5, rtol=1e-5)

@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "sigmoid", "tanh", "neg", "abs", "relu"])
def test_unary_float16(name):
  fn, npfn, (lo, hi) = UNARY[name][:3]
  a = np.linspace(max(lo, -5), min(hi, 5), 13).astype(np.float16)
  if name == "log": a = np.linspace(0.1, 5, 13).astype(np.float16)
  check(fn(Tensor(a)), npfn(a.astype(np.float64)).astype(np.float16), atol=3e-3, rtol=3e-3)

def test_unary_special_values():
  x = np.array([-np.inf, -100.0, -1.0, 0.0, 1.0, 100.0, np.inf], dtype=np.float32)
  with np.errstate(all="ignore"):
    check(Tensor(x).exp(), np.exp(x))
    check(Tensor(x).sigmoid(), (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32), atol=1e-7)
    check(Tensor(x).tanh(), np.tanh(x), atol=1e-6)
    check(Tensor(x).relu(), np.maximum(x, 0))
    check(Tensor(x).abs(), np.abs(x))
    check(Tensor(x).sign(), np.sign(x))
  y = np.array([0.0, -1.0, np.inf, 4.0], dtype=np.float32)
  with np.errstate(all="ignore"):
    check(Tensor(y).log(), np.log(y))
    check(Tensor(y).log2(), np.log2(y))
    check(Tensor(y).sqrt(), np.sqrt(y))
    check(Tensor(np.array([0.0, 1e-30], np.float32)).reciprocal(), np.array([np.inf, 1e30], np.float32), rtol=1e-6)

def test_nan_propagates_through_arithmetic():
  x = Tensor([np.nan, 1.0])
  out = (x * 2 + 1).exp().numpy()
  assert np.isnan(out[0]) and out[1] == pytest.approx(math.exp(3), rel=1e-6)

@settings(max_examples=ex(15))
@given(data=st.data(), op=st.sampled_from(["add", "sub", "mul", "div", "max", "min", "lt", "gt", "le", "ge", "eq", "ne"]))
def test_binary_float32(data, op):
  shape = data.draw(shapes)
  a, b = data.draw(f32_arrays(shape)), data.draw(f32_arrays(shape))
  if op == "div": b = np.where(np.abs(b) < 1e-2, np.float32(1.5), b)
  ta, tb = Tensor(a), Tensor(b)
  a64, b64 = a.astype(np.float64), b.astype(np.float64)
  with np.errstate(divide="ignore", invalid="ignore"):  # numpy's a/b is computed for every op; only "div" avoids zeros
    fns = {"add": (lambda: ta + tb, a64 + b64), "sub": (lambda: ta - tb, a64 - b64), "mul": (lambda: ta * tb, a64 * b64),
           "div": (lambda: ta / tb, a64 / b64), "max": (lambda: ta.maximum(tb), np.maximum(a, b)), "min": (lambda: ta.minimum(tb), np.minimum(a, b)),
           "lt": (lambda: ta < tb, a < b), "gt": (lambda: ta > tb, a > b), "le": (lambda: ta <= tb, a <= b), "ge": (lambda: ta >= tb, a >= b),
           "eq": (lambda: ta == tb, a == b), "ne": (lambda: ta != tb, a != b)}
  fn, exp = fns[op]
  exp = np.asarray(exp)
  check(fn(), exp if exp.dtype == np.bool_ else exp.astype(np.float32), atol=1e-5, rtol=1e-6)

@settings(max_examples=ex(15))
@given(data=st.data(), op=st.sampled_from(["add", "sub", "mul", "floordiv", "mod", "max", "min", "lt", "eq", "and", "or", "xor"]))
def test_binary_int32(data, op):
  shape = data.draw(shapes)
  a, b = data.draw(i32_arrays(shape)), data.draw(i32_arrays(shape, -12, 12))
  ta, tb = Tensor(a), Tensor(b)
  with np.errstate(all="ignore"):
    fns = {"add": (ta + tb, a + b), "sub": (ta - tb, a - b), "mul": (ta * tb, a * b), "floordiv": (ta // tb, a // b), "mod": (ta % tb, a % b),
           "max": (ta.maximum(tb), np.maximum(a, b)), "min": (ta.minimum(tb), np.minimum(a, b)), "lt": (ta < tb, a < b), "eq": (ta == tb, a == b),
           "and": (ta & tb, a & b), "or": (ta | tb, a | b), "xor": (ta ^ tb, a ^ b)}
  got, exp = fns[op]
  check(got, exp)

@pytest.mark.parametrize("dt", [np.int32, np.int64])
def test_int_floordiv_mod_all_sign_combinations(dt):
  a = np.array([7, -7, 7, -7, 6, -6, 0, 1, -1, 100, -100], dtype=dt)
  b = np.array([2, 2, -2, -2, 3, -3, 5, 7, 7, -9, 9], dtype=dt)
  check(Tensor(a) // Tensor(b), a // b)
  check(Tensor(a) % Tensor(b), a % b)
  check(Tensor(a) // 3, a // dt(3))
  check(Tensor(a) % -3, a % dt(-3))
  check(17 // Tensor(b), dt(17) // b)
  check(-17 % Tensor(b), dt(-17) % b)

@pytest.mark.parametrize("dt", [np.int32, np.int64, np.uint8])
def test_int_division_by_zero_does_not_crash(dt):
  # numpy defines int x // 0 == 0 and x % 0 == 0 (with a warning)
  a = np.array([5, 0, 9, 1], dtype=dt)
  b = np.array([0, 0, 2, 0], dtype=dt)
  with np.errstate(all="ignore"):
    check(Tensor(a) // Tensor(b), a // b)
    check(Tensor(a) % Tensor(b), a % b)
    check(Tensor(a) // 0, a // dt(0))
    check(Tensor(a) % 0, a % dt(0))

def test_int_min_floordiv_minus_one_by_constant():
  a = np.array([-2**31, 5], dtype=np.int32)
  with np.errstate(all="ignore"):
    check(Tensor(a) // -1, a // np.int32(-1))
    check(Tensor(a) % -1, a % np.int32(-1))

@pytest.mark.parametrize("op", ["//", "%"])
def test_int_min_div_minus_one_tensor_does_not_crash(op):
  r = run_isolated(f"""
    import numpy as np
    from lazynb import Tensor
    a = Tensor(np.array([-2**31, 7], dtype=np.int32)); b = Tensor(np.array([-1, 2], dtype=np.int32))
    print((a {op} b).numpy().tolist())
  """)
  with np.errstate(all="ignore"):
    exp = eval(f"np.array([-2**31, 7], np.int32) {op} np.array([-1, 2], np.int32)").tolist()
  assert r.returncode == 0, f"process died with return code {r.returncode}: {r.stderr[-500:]}"
  assert r.stdout.strip() == str(exp)

def test_float_floordiv_mod():
  a = np.array([7.5, -7.5, 7.0, -7.0, 0.5, -0.25, 3.0], dtype=np.float32)
  b = np.array([2.0, 2.0, -2.0, -4.0, 0.25, 0.5, 8.0], dtype=np.float32)  # exact divisions: no rounding ambiguity
  check(Tensor(a) // Tensor(b), a // b)
  check(Tensor(a) % Tensor(b), a % b)
  check(Tensor(a) % 2, a % np.float32(2))

def test_scalar_reverse_ops():
  a = np.array([1.0, 2.0, 4.0, -0.5], dtype=np.float32)
  t = Tensor(a)
  check(3 - t, 3 - a)
  check(3 / t, (3 / a.astype(np.float64)).astype(np.float32), rtol=1e-6)
  check(2 + t, 2 + a)
  check(2 * t, 2 * a)
  check(2 ** t, (2.0 ** a.astype(np.float64)).astype(np.float32), rtol=1e-5)
  check(5 > t, 5 > a)
  check(1 < t, 1 < a)

@pytest.mark.parametrize("exp_", [0, 1, 2, 3, -1, -2, 5, 0.5, 1.5, -0.5, 2.7])
def test_pow_scalar_exponent(exp_):
  a = np.array([0.5, 1.0, 2.0, 3.0, 9.0], dtype=np.float32)
  check(Tensor(a) ** exp_, np.power(a.astype(np.float64), exp_).astype(np.float32), rtol=2e-5, atol=1e-6)

def test_pow_negative_base():
  a = np.array([-2.0, -3.0, -0.5, 2.0], dtype=np.float32)
  check(Tensor(a) ** 2, a ** 2)
  check(Tensor(a) ** 3, a ** 3)
  check(Tensor(a) ** -1, 1 / a)
  check(Tensor(a) ** 2.0, a ** 2)
  with np.errstate(invalid="ignore"):
    got = (Tensor(a) ** 0.5).numpy()
    got15 = (Tensor(a) ** 1.5).numpy()
  assert np.isnan(got[:3]).all() and got[3] == pytest.approx(math.sqrt(2), rel=1e-6)
  assert np.isnan(got15[:3]).all() and got15[3] == pytest.approx(2 ** 1.5, rel=1e-5)

def test_pow_zero_base_scalar_exponent():
  a = np.array([0.0, 2.0], np.float32)
  check(Tensor(a) ** 0, np.array([1.0, 1.0], np.float32))
  check(Tensor(a) ** 2.5, np.power(a, np.float32(2.5)), rtol=1e-5)
  check(Tensor(a) ** 0.0, np.array([1.0, 1.0], np.float32))

def test_pow_tensor_exponent_minimal():
  check(Tensor([2.0, 3.0]) ** Tensor([3.0, 2.0]), np.array([8.0, 9.0], np.float32), rtol=1e-5)

def test_pow_tensor_exponent_negative_base_and_zero():
  a = np.array([-2.0, -3.0, -0.5, 2.0, 0.0, 0.0], dtype=np.float32)
  b = np.array([2.0, 3.0, -1.0, 0.5, 0.0, 2.0], dtype=np.float32)
  check(Tensor(a) ** Tensor(b), np.power(a.astype(np.float64), b).astype(np.float32), rtol=1e-5)

def test_pow_method_with_tensor():
  check(Tensor([2.0, 4.0]).pow(Tensor([0.5, 0.5])), np.array([math.sqrt(2), 2.0], np.float32), rtol=1e-6)

@settings(max_examples=ex(15))
@given(data=st.data())
def test_pow_tensor_tensor(data):
  shape = data.draw(shapes)
  a = data.draw(f32_arrays(shape, 0.1, 5.0))
  b = data.draw(f32_arrays(shape, -3.0, 3.0))
  check(Tensor(a) ** Tensor(b), np.power(a.astype(np.float64), b.astype(np.float64)).astype(np.float32), rtol=1e-4, atol=1e-6)

def test_pow_int():
  a = np.array([-3, -1, 0, 2, 5], dtype=np.int32)
  check(Tensor(a) ** 2, a ** 2)
  check(Tensor(a) ** 3, a ** 3)
  check(Tensor(a) ** 0, np.ones(5, np.int32))
  check(2 ** Tensor(np.array([0, 1, 5, 10], np.int32)), 2 ** np.array([0, 1, 5, 10], np.int32))

@pytest.mark.parametrize("case", ["5**9 int32", "7**10 int32", "3**19 int32", "3**30 int64", "7**tensor(10)", "[3,5,7]**9"])
def test_pow_int_exact(case):
  base, e, dt = {"5**9 int32": ([5], 9, np.int32), "7**10 int32": ([7], 10, np.int32), "3**19 int32": ([3, -3], 19, np.int32),
                 "3**30 int64": ([3], 30, np.int64), "7**tensor(10)": ([7, 2], None, np.int32), "[3,5,7]**9": ([3, 5, 7], 9, np.int32)}[case]
  a = np.array(base, dt)
  if e is None:
    ee = np.array([10, 30], dt)
    check(Tensor(a) ** Tensor(ee), a ** ee)  # numpy and torch compute integer powers exactly
  else: check(Tensor(a) ** e, a ** dt(e))

def test_pow_int_tensor_exponent():
  a = np.array([-3, -1, 0, 2, 5], dtype=np.int32)
  check(Tensor(a) ** Tensor(np.array([2, 3, 4, 5, 2], np.int32)), a ** np.array([2, 3, 4, 5, 2], np.int32))

@settings(max_examples=ex(15))
@given(data=st.data())
def test_where(data):
  shape = data.draw(shapes)
  c = data.draw(hnp.arrays(np.bool_, shape))
  a, b = data.draw(f32_arrays(shape)), data.draw(f32_arrays(shape))
  check(Tensor(c).where(Tensor(a), Tensor(b)), np.where(c, a, b))
  check(Tensor(c).where(Tensor(a), 0.5), np.where(c, a, np.float32(0.5)))
  check(Tensor(c).where(2.0, Tensor(b)), np.where(c, np.float32(2.0), b))

def test_where_broadcast_and_scalars():
  c = np.array([[True], [False]])
  a = np.arange(3, dtype=np.float32)
  check(Tensor(c).where(Tensor(a), -1.0), np.where(c, a, np.float32(-1)))
  check(Tensor(c).where(1, 0), np.where(c, 1, 0).astype(np.int32))
  check(Tensor(c).where(1.5, 0), np.where(c, 1.5, 0).astype(np.float32))
  check(Tensor(np.array([0, 3, -1], np.int32)).where(10, 20), np.array([20, 10, 10], np.int32))

def test_where_int_tensors():
  c = np.array([True, False, True])
  a, b = np.array([1, 2, 3], np.int32), np.array([-1, -2, -3], np.int32)
  check(Tensor(c).where(Tensor(a), Tensor(b)), np.where(c, a, b))

@settings(max_examples=ex(8))
@given(data=st.data())
def test_clip(data):
  shape = data.draw(shapes)
  a = data.draw(f32_arrays(shape))
  lo = data.draw(st.floats(-5, 0, width=32))
  hi = data.draw(st.floats(0, 5, width=32))
  check(Tensor(a).clip(lo, hi), np.clip(a, np.float32(lo), np.float32(hi)))
  check(Tensor(a).clip(min_=lo), np.maximum(a, np.float32(lo)))
  check(Tensor(a).clip(max_=hi), np.minimum(a, np.float32(hi)))

def test_clip_int():
  a = np.array([-5, 0, 3, 10], dtype=np.int32)
  check(Tensor(a).clip(-1, 4), np.clip(a, -1, 4))

def test_maximum_minimum_scalars_and_broadcast():
  a = np.array([[-1.0, 2.0, 0.5]], dtype=np.float32)
  b = np.array([[0.0], [1.0]], dtype=np.float32)
  check(Tensor(a).maximum(Tensor(b)), np.maximum(a, b))
  check(Tensor(a).minimum(Tensor(b)), np.minimum(a, b))
  check(Tensor(a).maximum(0.7), np.maximum(a, np.float32(0.7)))
  check(Tensor(a).minimum(0), np.minimum(a, np.float32(0)))

def test_maximum_minimum_with_inf():
  a = np.array([-np.inf, 1.0, np.inf, -2.0], np.float32)
  b = np.array([0.0, np.inf, -np.inf, -np.inf], np.float32)
  check(Tensor(a).maximum(Tensor(b)), np.maximum(a, b))
  check(Tensor(a).minimum(Tensor(b)), np.minimum(a, b))

@pytest.mark.parametrize("name,fn,npfn", [
  ("leaky_relu", lambda t: t.leaky_relu(0.1), lambda a: np.where(a > 0, a, a * 0.1)),
  ("softplus", lambda t: t.softplus(), lambda a: np.log1p(np.exp(a))),
  ("silu", lambda t: t.silu(), lambda a: a / (1 + np.exp(-a))),
  ("relu6", lambda t: t.relu6(), lambda a: np.clip(a, 0, 6)),
  ("elu", lambda t: t.elu(), lambda a: np.where(a > 0, a, np.exp(a) - 1)),
  ("round", lambda t: t.round(), np.round),
  ("erf", lambda t: t.erf(), lambda a: np.vectorize(math.erf)(a)),
  ("tan", lambda t: t.tan(), np.tan),
])
def test_more_activations(name, fn, npfn):
  a = np.array([-8.0, -2.5, -1.5, -0.5, -0.1, 0.0, 0.3, 0.5, 1.0, 2.5, 3.5, 7.0], dtype=np.float32)
  if name == "tan": a = np.linspace(-1.4, 1.4, 11).astype(np.float32)
  check(fn(Tensor(a)), npfn(a.astype(np.float64)).astype(np.float32), atol=2e-6, rtol=1e-5)

# ------------------------------------------------------------------ broadcasting

@st.composite
def broadcastable_shapes(draw):
  out = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=5))
  def sub():
    nd = draw(st.integers(0, len(out)))
    tail = out[len(out) - nd:] if nd else ()
    return tuple(1 if draw(st.booleans()) else s for s in tail)
  return sub(), sub()

@settings(max_examples=ex(25))
@given(shp=broadcastable_shapes(), data=st.data())
def test_broadcasting(shp, data):
  sa, sb = shp
  a, b = data.draw(f32_arrays(sa)), data.draw(f32_arrays(sb))
  check(Tensor(a) + Tensor(b), a + b)
  check(Tensor(a) * Tensor(b), a * b)
  check(Tensor(a) < Tensor(b), a < b)

def test_broadcast_scalar_tensor():
  a = np.arange(6, dtype=np.float32).reshape(2, 3)
  check(Tensor(a) + Tensor(2.0), a + np.float32(2))
  check(Tensor(2.0) - Tensor(a), np.float32(2) - a)

# ------------------------------------------------------------------ reductions

@st.composite
def shape_and_axis(draw, min_dims=1, allow_tuple=True, allow_none=True):
  shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=4, min_side=1, max_side=5))
  nd = len(shape)
  kinds = ["int"] + (["none"] if allow_none else []) + (["tuple"] if allow_tuple and nd > 0 else [])
  kind = draw(st.sampled_from(kinds)) if nd > 0 else "none"
  if kind == "none": axis = None
  elif kind == "int": axis = draw(st.integers(-nd, nd - 1))
  else:
    axs = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
    axis = tuple(a - nd if draw(st.booleans()) else a for a in axs)
  return shape, axis

REDUCE = {
  "sum": (lambda t, ax, kd: t.sum(ax, keepdim=kd), lambda a, ax, kd: np.sum(a.astype(np.float64), axis=ax, keepdims=kd)),
  "max": (lambda t, ax, kd: t.max(ax, keepdim=kd), lambda a, ax, kd: np.max(a, axis=ax, keepdims=kd)),
  "min": (lambda t, ax, kd: t.min(ax, keepdim=kd), lambda a, ax, kd: np.min(a, axis=ax, keepdims=kd)),
  "mean": (lambda t, ax, kd: t.mean(ax, keepdim=kd), lambda a, ax, kd: np.mean(a.astype(np.float64), axis=ax, keepdims=kd)),
  "var": (lambda t, ax, kd: t.var(ax, keepdim=kd), lambda a, ax, kd: np.var(a.astype(np.float64), axis=ax, keepdims=kd, ddof=1)),
  "std": (lambda t, ax, kd: t.std(ax, keepdim=kd), lambda a, ax, kd: np.std(a.astype(np.float64), axis=ax, keepdims=kd, ddof=1)),
  "prod": (lambda t, ax, kd: t.prod(ax, keepdim=kd), lambda a, ax, kd: np.prod(a.astype(np.float64), axis=ax, keepdims=kd)),
}

@pytest.mark.parametrize("name", list(REDUCE))
@settings(max_examples=ex(10))
@given(sa=shape_and_axis(), keepdim=st.booleans(), data=st.data())
def test_reduce_float32(name, sa, keepdim, data):
  shape, axis = sa
  lo, hi = (0.5, 1.5) if name == "prod" else (-10.0, 10.0)
  a = data.draw(f32_arrays(shape, lo, hi))
  fn, npfn = REDUCE[name]
  with np.errstate(all="ignore"):
    import warnings
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      exp = np.asarray(npfn(a, axis, keepdim)).astype(np.float32)
  check(fn(Tensor(a), axis, keepdim), exp, atol=1e-4, rtol=1e-4)

@pytest.mark.parametrize("name", ["sum", "max", "min", "prod"])
@settings(max_examples=ex(6))
@given(sa=shape_and_axis(), keepdim=st.booleans(), data=st.data())
def test_reduce_int32(name, sa, keepdim, data):
  shape, axis = sa
  a = data.draw(i32_arrays(shape, -3, 3) if name == "prod" else i32_arrays(shape))
  npfn = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}[name]
  check(getattr(Tensor(a), name)(axis, keepdim=keepdim), npfn(a, axis=axis, keepdims=keepdim).astype(np.int32))

def test_reduce_axis_forms_equivalent():
  a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
  t = Tensor(a)
  check(t.sum((0, 2)), a.sum((0, 2)))
  check(t.sum((-1, 0)), a.sum((0, 2)))
  check(t.sum(axis=-2, keepdim=True), a.sum(-2, keepdims=True))
  check(t.max(axis=(1,)), a.max(1))
  check(t.mean(), np.float32(a.mean()))

@settings(max_examples=ex(15))
@given(sa=shape_and_axis(allow_tuple=False), keepdim=st.booleans(), data=st.data())
def test_argmax_argmin(sa, keepdim, data):
  shape, axis = sa
  a = data.draw(i32_arrays(shape, -3, 3)).astype(np.float32)  # few distinct values: lots of ties, numpy picks the first
  ex_max = np.argmax(a, axis=axis, keepdims=keepdim) if axis is not None else np.argmax(a)
  ex_min = np.argmin(a, axis=axis, keepdims=keepdim) if axis is not None else np.argmin(a)
  check(Tensor(a).argmax(axis, keepdim=keepdim), np.asarray(ex_max).astype(np.int32))
  check(Tensor(a).argmin(axis, keepdim=keepdim), np.asarray(ex_min).astype(np.int32))

def test_argmax_int_and_bool():
  a = np.array([[1, 5, 5], [7, -2, 7]], dtype=np.int32)
  check(Tensor(a).argmax(1), np.argmax(a, 1).astype(np.int32))
  check(Tensor(a).argmin(0), np.argmin(a, 0).astype(np.int32))
  b = np.array([[False, True, True], [False, False, False]])
  check(Tensor(b).argmax(1), np.argmax(b, 1).astype(np.int32))
  u = np.array([3, 250, 0, 250], dtype=np.uint8)
  check(Tensor(u).argmax(), np.int32(np.argmax(u)))
  check(Tensor(u).argmin(), np.int32(np.argmin(u)))

def np_softmax(a, axis):
  a = a.astype(np.float64)
  e = np.exp(a - a.max(axis=axis, keepdims=True))
  return e / e.sum(axis=axis, keepdims=True)

@settings(max_examples=ex(15))
@given(sa=shape_and_axis(allow_tuple=False, allow_none=False), data=st.data())
def test_softmax_log_softmax(sa, data):
  shape, axis = sa
  a = data.draw(f32_arrays(shape, -20, 20))
  sm = np_softmax(a, axis)
  check(Tensor(a).softmax(axis), sm.astype(np.float32), atol=1e-6, rtol=1e-5)
  with np.errstate(divide="ignore"):
    lsm = (a - a.max(axis=axis, keepdims=True)) - np.log(np.exp(a.astype(np.float64) - a.max(axis=axis, keepdims=True)).sum(axis=axis, keepdims=True))
  check(Tensor(a).log_softmax(axis), lsm.astype(np.float32), atol=1e-5, rtol=1e-5)

def test_softmax_large_values_stable():
  a = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1000.0, -1000.0]], dtype=np.float32)
  check(Tensor(a).softmax(), np_softmax(a, -1).astype(np.float32), atol=1e-6)
  check(Tensor(a).log_softmax(), np.log(np_softmax(a, -1)).astype(np.float32), atol=1e-5)

def test_logsumexp():
  a = np.array([[1.0, 2.0, 3.0], [-5.0, 0.0, 100.0]], dtype=np.float32)
  exp = np.log(np.exp(a.astype(np.float64) - a.max(1, keepdims=True)).sum(1)) + a.max(1)
  check(Tensor(a).logsumexp(1), exp.astype(np.float32), atol=1e-5)

def test_var_std_correction():
  a = np.array([[1.0, 2.0, 4.0, 7.0], [0.0, 0.0, 1.0, -1.0]], dtype=np.float32)
  check(Tensor(a).var(), np.float32(np.var(a, ddof=1)))
  check(Tensor(a).var(1), np.var(a, 1, ddof=1).astype(np.float32))
  check(Tensor(a).var(1, correction=0), np.var(a, 1).astype(np.float32))
  check(Tensor(a).std(0, keepdim=True), np.std(a, 0, ddof=1, keepdims=True).astype(np.float32))
  check(Tensor(a).std(1, correction=0), np.std(a, 1).astype(np.float32))

def test_var_single_element_is_nan():
  with np.errstate(all="ignore"):
    import warnings
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      check(Tensor([[3.0], [4.0]]).var(1), np.var(np.array([[3.0], [4.0]], np.float32), 1, ddof=1).astype(np.float32))

def test_mean_var_of_int_is_float():
  a = np.array([[1, 2], [3, 5]], dtype=np.int32)
  check(Tensor(a).mean(), np.float32(a.mean()))
  check(Tensor(a).mean(0), a.mean(0).astype(np.float32))
  check(Tensor(a).var(1), np.var(a, 1, ddof=1).astype(np.float32))

def test_any_all():
  a = np.array([[0, 1, 0], [0, 0, 0], [2, 3, 4]], dtype=np.int32)
  check(Tensor(a).any(1), a.any(1))
  check(Tensor(a).all(1), a.all(1))
  check(Tensor(a).any(), np.bool_(a.any()))
  check(Tensor(a).all(0, keepdim=True), a.all(0, keepdims=True))

def test_cumsum():
  a = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
  check(Tensor(a).cumsum(0), np.cumsum(a, 0))
  check(Tensor(a).cumsum(1), np.cumsum(a, 1))
  check(Tensor(a).cumsum(-1), np.cumsum(a, -1))

@pytest.mark.parametrize("n", [255, 256, 257, 1000, 5000])
@pytest.mark.parametrize("axis", [0, 1])
def test_cumulative_ops_in_blocks(n, axis):
  """Past 256 the cumulative ops go in blocks of 256 (the prefix inside each block, combined with the blocks before it):
  the same values as numpy for every kind (sum, max, prod, logsumexp, bool max, int sum), along either axis, and the
  gradient of cumsum as torch's (the reversed cumsum of the upstream gradient)."""
  rng = np.random.default_rng(n + axis)
  a = rng.standard_normal((3, n) if axis else (n, 3)).astype(np.float32)
  i = (a * 10).astype(np.int32)
  check(Tensor(a).cumsum(axis), np.cumsum(a.astype(np.float64), axis).astype(np.float32), rtol=1e-5, atol=1e-4)
  check(Tensor(i).cumsum(axis), np.cumsum(i, axis, dtype=np.int32))
  check(Tensor(a).cummax(axis), np.maximum.accumulate(a, axis))
  check(Tensor(a > 1).cummax(axis), np.maximum.accumulate(a > 1, axis))
  p = 1 + a * 1e-3
  check(Tensor(p).cumprod(axis), np.cumprod(p.astype(np.float64), axis).astype(np.float32), rtol=1e-4)
  check(Tensor(a).logcumsumexp(axis), np.logaddexp.accumulate(a.astype(np.float64), axis).astype(np.float32), rtol=1e-4, atol=1e-4)
  w = rng.standard_normal(a.shape).astype(np.float32)
  x = Tensor(a, requires_grad=True)
  (x.cumsum(axis) * Tensor(w)).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), np.flip(np.cumsum(np.flip(w, axis), axis), axis), rtol=1e-4, atol=1e-3)

def test_reduce_of_expression():
  a = np.linspace(-2, 2, 20, dtype=np.float32).reshape(4, 5)
  t = Tensor(a)
  check((t.exp() * 2 - 1).sum(1), (np.exp(a.astype(np.float64)) * 2 - 1).sum(1).astype(np.float32), rtol=1e-5)
  check((t - t.mean(1, keepdim=True)).square().sum(), np.float32(((a - a.mean(1, keepdims=True)) ** 2).sum()), rtol=1e-5)
  check(t.max(1).sum(), np.float32(a.max(1).sum()))
  check((t.sum(0) * t.max(0)).sum(), np.float32((a.sum(0) * a.max(0)).sum()), rtol=1e-5)

def test_reduce_then_broadcast_back():
  a = np.arange(12, dtype=np.float32).reshape(3, 4)
  t = Tensor(a)
  check(t / t.sum(1, keepdim=True), a / a.sum(1, keepdims=True), rtol=1e-6)
  check(t - t.max(0, keepdim=True), a - a.max(0, keepdims=True))

@pytest.mark.parametrize("case", ["ones.sum", "full.sum(axis)", "ones*2.sum", "0d.expand.sum", "full.prod", "ones.mean", "zeros_like+1.sum", "ones.var"])
def test_reduce_of_constant_tensor(case):
  exp = {"ones.sum": np.float32(5), "full.sum(axis)": np.full(3, 8.0, np.float32), "ones*2.sum": np.float32(6), "0d.expand.sum": np.float32(8),
         "full.prod": np.float32(8), "ones.mean": np.float32(1), "zeros_like+1.sum": np.float32(6), "ones.var": np.float32(0)}[case]
  got = {"ones.sum": lambda: Tensor.ones(5).sum(), "full.sum(axis)": lambda: Tensor.full((3, 4), 2.0).sum(1),
         "ones*2.sum": lambda: (Tensor.ones(3) * 2).sum(), "0d.expand.sum": lambda: Tensor(2.0).expand(4).sum(),
         "full.prod": lambda: Tensor.full((3,), 2.0).prod(), "ones.mean": lambda: Tensor.ones(4, 4).mean(),
         "zeros_like+1.sum": lambda: (Tensor.rand(2, 3).zeros_like() + 1).sum(), "ones.var": lambda: Tensor.ones(4).var()}[case]()
  check(got, exp)

@settings(max_examples=ex(15))
@given(sa=shape_and_axis(), keepdim=st.booleans(), op=st.sampled_from(["sum", "prod", "mean", "max", "min", "var"]),
       kind=st.sampled_from(["full", "full*2", "0d.expand", "zeros_like+v"]), v=st.sampled_from([1.5, -2.0, 0.5]))
def test_reduce_of_constant_hypothesis(sa, keepdim, op, kind, v):
  shape, axis = sa
  t = {"full": lambda: Tensor.full(shape, v), "full*2": lambda: Tensor.full(shape, v / 2) * 2,
       "0d.expand": lambda: Tensor(v).expand(shape), "zeros_like+v": lambda: Tensor.zeros(*shape).zeros_like() + v}[kind]()
  a = np.full(shape, v, np.float64)
  import warnings
  with np.errstate(all="ignore"), warnings.catch_warnings():
    warnings.simplefilter("ignore")
    exp = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "max": np.max, "min": np.min,
           "var": lambda x, axis, keepdims: np.var(x, axis=axis, keepdims=keepdims, ddof=1)}[op](a, axis=axis, keepdims=keepdim)
  check(getattr(t, op)(axis, keepdim=keepdim), np.asarray(exp).astype(np.float32), atol=1e-5, rtol=1e-5)

@settings(max_examples=ex(15))
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3), keepdim=st.booleans(), data=st.data())
def test_reduce_with_empty_dims(shape, keepdim, data):
  nd = len(shape)
  axis = data.draw(st.one_of(st.none(), st.integers(-nd, nd - 1)))
  a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
  import warnings
  with np.errstate(all="ignore"), warnings.catch_warnings():
    warnings.simplefilter("ignore")
    check(Tensor(a).sum(axis, keepdim=keepdim), np.asarray(a.sum(axis, keepdims=keepdim)))
    check(Tensor(a).prod(axis, keepdim=keepdim), np.asarray(a.prod(axis, keepdims=keepdim)))
    check(Tensor(a).mean(axis, keepdim=keepdim), np.asarray(a.mean(axis, keepdims=keepdim)).astype(np.float32))
    axes = range(nd) if axis is None else [axis % nd]
    if all(shape[i] for i in axes): check(Tensor(a).max(axis, keepdim=keepdim), np.asarray(a.max(axis, keepdims=keepdim)))
    check(Tensor(a.astype(np.int32)).sum(axis, keepdim=keepdim), np.asarray(a.astype(np.int32).sum(axis, keepdims=keepdim)).astype(np.int32))

def test_reduce_of_constant_tensor_padded_ok():
  check(Tensor.ones(3).pad(((1, 1),)).sum(), np.float32(3))
  check(Tensor([2.0]).expand(5).sum(), np.float32(10))

def test_sum_dtype_arg():
  a = np.array([100, 200, 250], dtype=np.uint8)
  check(Tensor(a).sum(), np.uint32(550))  # tinygrad 0.10 sums unsigned ints in uint32
  check(Tensor(a).sum(dtype=dtypes.int64), np.int64(550))
  check(Tensor(a).sum(dtype=dtypes.float32), np.float32(550))

# ------------------------------------------------------------------ large reductions

class TestLargeReductions:
  def test_sum_1e6_rand(self):
    Tensor.manual_seed(0)
    t = Tensor.rand(1_000_000)
    a = t.numpy()
    s = t.sum().numpy()
    assert s.dtype == np.float32
    np.testing.assert_allclose(float(s), a.astype(np.float64).sum(), rtol=1e-4)

  def test_sum_1e6_ones_exact(self):
    check(Tensor.ones(1_000_000).sum(), np.float32(1_000_000), atol=0, rtol=0)

  def test_sum_1e6_2d_axes(self):
    a = np.random.default_rng(1).standard_normal((1000, 1000)).astype(np.float32)
    t = Tensor(a)
    check(t.sum(0), a.astype(np.float64).sum(0).astype(np.float32), atol=1e-3, rtol=1e-4)
    check(t.sum(1), a.astype(np.float64).sum(1).astype(np.float32), atol=1e-3, rtol=1e-4)
    check(t.mean(), np.float32(a.astype(np.float64).mean()), atol=1e-5)

  def test_max_argmax_1e6(self):
    a = np.random.default_rng(2).random(1_000_000).astype(np.float32)
    a[654_321] = 5.0
    t = Tensor(a)
    check(t.max(), np.float32(5.0))
    check(t.argmax(), np.int32(654_321))
    check(t.min(), np.float32(a.min()))

  def test_int_sum_1e6(self):
    a = np.random.default_rng(3).integers(0, 10, 1_000_000).astype(np.int32)
    check(Tensor(a).sum(), np.int32(a.sum()))

  def test_var_std_1e6(self):
    a = np.random.default_rng(4).standard_normal(1_000_000).astype(np.float32) * 3 + 10
    check(Tensor(a).var(), np.float32(np.var(a.astype(np.float64), ddof=1)), rtol=1e-3)
    check(Tensor(a).std(), np.float32(np.std(a.astype(np.float64), ddof=1)), rtol=1e-3)

  def test_half_sum_accumulates_in_float32(self):
    a = np.full(4096, 0.01, dtype=np.float16)
    s = Tensor(a).sum()
    assert s.dtype == dtypes.float16
    np.testing.assert_allclose(float(s.numpy()), float(a.astype(np.float64).sum()), rtol=2e-3)

# ------------------------------------------------------------------ 0-d and empty tensors

class TestZeroDim:
  def test_ops(self):
    a, b = Tensor(3.0), Tensor(-1.5)
    check(a + b, np.float32(1.5))
    check(a * b, np.float32(-4.5))
    check((a * b).exp(), np.float32(np.exp(-4.5)), rtol=1e-6)
    check(a > b, np.bool_(True))
    check(a.maximum(b), np.float32(3.0))
    check(Tensor(True).where(a, b), np.float32(3.0))
  def test_broadcast_with_nd(self):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    check(Tensor(2.0) * Tensor(x), 2 * x)
    check(Tensor(x) - Tensor(1.0), x - 1)
  def test_reductions(self):
    t = Tensor(4.5)
    check(t.sum(), np.float32(4.5))
    check(t.max(), np.float32(4.5))
    check(t.min(), np.float32(4.5))
    check(t.mean(), np.float32(4.5))
    check(t.prod(), np.float32(4.5))
    check(t.argmax(), np.int32(0))
    check(Tensor(7).sum(), np.int32(7))
  def test_reshape_and_movement(self):
    t = Tensor(2.0)
    check(t.reshape(1, 1), np.full((1, 1), 2.0, np.float32))
    check(t.reshape(()), np.float32(2.0))
    check(t.expand(2, 3), np.full((2, 3), 2.0, np.float32))
    check(t.unsqueeze(0), np.array([2.0], np.float32))
    check(t.flatten(), np.array([2.0], np.float32))
    check(Tensor([5.0]).reshape(()), np.float32(5.0))
    check(Tensor([[5.0]])[0, 0], np.float32(5.0))
  def test_item(self):
    assert Tensor(3.25).item() == 3.25
    assert Tensor(-4).item() == -4
    assert Tensor(True).item() is True
  def test_zero_d_from_reduction_used_in_ops(self):
    x = np.array([1.0, 2.0, 3.0], np.float32)
    t = Tensor(x)
    check(t / t.sum(), x / x.sum())
    check(t - t.mean(), x - x.mean())

class TestEmpty:
  @pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3), (2, 0, 3)])
  def test_creation(self, shape):
    check(Tensor.zeros(*shape), np.zeros(shape, np.float32))
    check(Tensor.ones(*shape, dtype=dtypes.int32), np.ones(shape, np.int32))
    check(Tensor(np.zeros(shape, np.float32)), np.zeros(shape, np.float32))
    assert Tensor.zeros(*shape).numel() == 0
  def test_elementwise(self):
    a = np.zeros((2, 0, 3), np.float32)
    check(Tensor(a) + 1, a + 1)
    check((Tensor(a) * Tensor(a)).exp(), np.exp(a * a))
    check(Tensor(a) + Tensor(np.ones((1, 1, 3), np.float32)), a + np.ones((1, 1, 3), np.float32))
  def test_reduce_over_nonempty_axes(self):
    a = np.zeros((2, 0, 3), np.float32)
    check(Tensor(a).sum(0), a.sum(0))
    check(Tensor(a).max(0), a.max(0))
    check(Tensor(a).sum(2, keepdim=True), a.sum(2, keepdims=True))
    check(Tensor.zeros(0).sum(), np.float32(0.0))

  @pytest.mark.parametrize("case", ["sum()", "sum(1)", "prod(1)", "mean(1)", "int sum()", "1d sum", "(3,0).sum(1)"])
  def test_reduce_over_empty_axis(self, case):
    a = np.zeros((2, 0, 3), np.float32)
    import warnings
    with np.errstate(all="ignore"), warnings.catch_warnings():
      warnings.simplefilter("ignore")
      if case == "sum()": check(Tensor(a).sum(), np.float32(0.0))
      elif case == "sum(1)": check(Tensor(a).sum(1), a.sum(1))
      elif case == "prod(1)": check(Tensor(a).prod(1), a.prod(1))
      elif case == "mean(1)": check(Tensor(a).mean(1), a.mean(1))
      elif case == "int sum()": check(Tensor(np.zeros(0, np.int32)).sum(), np.int32(0))
      elif case == "1d sum": check(Tensor(np.zeros(0, np.float32)).sum(), np.float32(0))
      else: check(Tensor(np.zeros((3, 0), np.float32)).sum(1), np.zeros(3, np.float32))
  def test_movement(self):
    t = Tensor(np.zeros((2, 0, 3), np.float32))
    assert t.reshape(0, 6).shape == (0, 6)
    assert t.permute(2, 0, 1).numpy().shape == (3, 2, 0)
    assert t.pad(((0, 0), (1, 1), (0, 0))).numpy().shape == (2, 2, 3)
    check(t.pad(((0, 0), (1, 1), (0, 0)), value=2.0), np.full((2, 2, 3), 2.0, np.float32))
    x = np.arange(5, dtype=np.float32)
    check(Tensor(x)[3:1], x[3:1])
    check(Tensor(x)[5:], x[5:])
    check(Tensor(x).cat(Tensor(np.zeros(0, np.float32))), x)
    check(Tensor(np.zeros(0, np.float32)).cat(Tensor(x)), x)
  def test_empty_matmul(self):
    a, b = np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)
    check(Tensor(a) @ Tensor(b), a @ b)
    check(Tensor(np.zeros((0, 4), np.float32)) @ Tensor(np.ones((4, 2), np.float32)), np.zeros((0, 2), np.float32))

# ------------------------------------------------------------------ padding masks

class TestPaddingMasks:
  def test_pad_then_exp(self):
    a = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    check(Tensor(a).pad(((1, 2), (2, 1))).exp(), np.exp(np.pad(a, ((1, 2), (2, 1)))), rtol=1e-6)
  def test_pad_then_log_and_reciprocal(self):
    a = np.array([1.0, 4.0], np.float32)
    with np.errstate(divide="ignore"):
      check(Tensor(a).pad(((1, 1),)).log(), np.log(np.pad(a, 1)))
      check(Tensor(a).pad(((1, 1),)).reciprocal(), 1 / np.pad(a, 1))
  def test_pad_value_then_ops(self):
    a = np.array([[1.0, 2.0]], np.float32)
    p = np.pad(a, ((1, 0), (0, 2)), constant_values=-3.0)
    check(Tensor(a).pad(((1, 0), (0, 2)), value=-3.0), p)
    check(Tensor(a).pad(((1, 0), (0, 2)), value=-3.0).abs().sqrt(), np.sqrt(np.abs(p)), rtol=1e-6)
  def test_pad_then_sum_max(self):
    a = -np.arange(1, 7, dtype=np.float32).reshape(2, 3)  # all negative: the zero padding wins max
    p = np.pad(a, ((0, 1), (1, 0)))
    t = Tensor(a).pad(((0, 1), (1, 0)))
    check(t.sum(), np.float32(p.sum()))
    check(t.sum(0), p.sum(0))
    check(t.max(1), p.max(1))
    check(t.max(), np.float32(0))
    check(t.min(0), p.min(0))
  def test_pad_neg_inf_then_max(self):
    a = -np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    p = np.pad(a, ((1, 1), (1, 1)), constant_values=-np.inf)
    t = Tensor(a).pad(((1, 1), (1, 1)), value=-math.inf)
    check(t, p)
    check(t.max(1), p.max(1))
    check(t.max(), np.float32(a.max()))
  def test_pad_then_exp_sum(self):
    a = np.array([0.5, -1.0, 2.0], np.float32)
    p = np.pad(a, (2, 3))
    check(Tensor(a).pad(((2, 3),)).exp().sum(), np.float32(np.exp(p.astype(np.float64)).sum()), rtol=1e-6)
  def test_pad_then_compare_and_where(self):
    a = np.array([[1.0, -1.0]], np.float32)
    p = np.pad(a, ((1, 1), (1, 1)))
    t = Tensor(a).pad(((1, 1), (1, 1)))
    check(t < 0.5, p < 0.5)
    check((t > 0).where(t, 9.0), np.where(p > 0, p, np.float32(9)))
    check(t.eq(0), p == 0)
  def test_pad_int_and_bool(self):
    a = np.array([[1, 2], [3, 4]], np.int32)
    check(Tensor(a).pad(((1, 0), (0, 1))) * 3 - 1, np.pad(a, ((1, 0), (0, 1))) * 3 - 1)
    check(Tensor(a).pad(((1, 0), (0, 1)), value=-7), np.pad(a, ((1, 0), (0, 1)), constant_values=-7))
    b = np.array([True, False])
    check(Tensor(b).pad(((1, 1),)), np.pad(b, 1))
    check(Tensor(b).pad(((1, 1),)).logical_not(), ~np.pad(b, 1))
  def test_pad_of_elementwise_then_elementwise(self):
    a = np.array([[0.5, 1.5, -0.5]], np.float32)
    got = ((Tensor(a) + 1).pad(((1, 1), (2, 0))) * 2).exp2()
    check(got, np.exp2(np.pad(a + 1, ((1, 1), (2, 0))) * 2), rtol=1e-6)
  def test_pad_of_reduce(self):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    check(Tensor(a).sum(1).pad(((2, 1),)).exp2(), np.exp2(np.pad(a.sum(1), (2, 1))), rtol=1e-6)
  def test_sum_with_flat_pad(self):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    p = np.pad(a, ((3, 4), (1, 2)))  # torch order (1, 2) is the last dim
    t = Tensor(a).pad((1, 2, 3, 4))
    check(t, p)
    check(t.cos().sum(0), np.cos(p.astype(np.float64)).sum(0).astype(np.float32), atol=1e-5)

# ------------------------------------------------------------------ int and bool math

class TestIntBool:
  def test_bool_arith(self):
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    check(Tensor(a) + Tensor(b), a + b)
    check(Tensor(a) * Tensor(b), a * b)
    check(Tensor(a) & Tensor(b), a & b)
    check(Tensor(a) | Tensor(b), a | b)
    check(Tensor(a) ^ Tensor(b), a ^ b)
    check(~Tensor(a), ~a)
    check(Tensor(a).logical_not(), ~a)
    check(Tensor(a).logical_and(Tensor(b)), a & b)
    check(Tensor(a).logical_or(Tensor(b)), a | b)
    check(Tensor(a) == Tensor(b), a == b)
    check(Tensor(a) != Tensor(b), a != b)
    check(-Tensor(a), ~a)

  def test_bool_sum_counts(self):
    a = np.array([[True, False, True], [True, True, True]])
    check(Tensor(a).sum(), np.int32(5))
    check(Tensor(a).sum(1), a.sum(1).astype(np.int32))
    check(Tensor(a).max(1), a.max(1))
    check(Tensor(a).min(1), a.min(1))

  def test_bool_with_scalars(self):
    a = np.array([True, False])
    check(Tensor(a) + 1, np.array([2, 1], np.int32))
    check(Tensor(a) * 2.5, np.array([2.5, 0.0], np.float32))
    check(Tensor(a) & True, a)
    check(Tensor(a) | False, a)

  def test_bool_float_mix(self):
    a = np.array([True, False])
    check(Tensor(a) * Tensor(np.array([3.0, 4.0], np.float32)), np.array([3.0, 0.0], np.float32))
    check(Tensor(a) + Tensor(np.array([3, 4], np.int32)), np.array([4, 4], np.int32))

  def test_int_bitwise(self):
    a = np.array([0b1100, -1, 7, 0], np.int32)
    b = np.array([0b1010, 5, 2, 3], np.int32)
    check(Tensor(a) & Tensor(b), a & b)
    check(Tensor(a) | Tensor(b), a | b)
    check(Tensor(a) ^ Tensor(b), a ^ b)
    check(~Tensor(a), ~a)
    check(Tensor(b) << 2, b << 2)
    check(Tensor(np.array([64, 7, 255], np.int32)) >> 3, np.array([64, 7, 255], np.int32) >> 3)
    check(Tensor(np.array([1, 2], np.int32)) << Tensor(np.array([3, 4], np.int32)), np.array([8, 32], np.int32))

  def test_uint8_wraparound(self):
    a = np.array([200, 255, 0, 10], np.uint8)
    b = np.array([100, 1, 1, 20], np.uint8)
    check(Tensor(a) + Tensor(b), a + b)
    check(Tensor(a) - Tensor(b), a - b)
    check(Tensor(a) * Tensor(b), a * b)
    check(Tensor(a) + 100, a + np.uint8(100))
    with np.errstate(all="ignore"):
      check(-Tensor(a), -a)

  def test_uint8_compare_and_reduce(self):
    a = np.array([200, 255, 0, 10], np.uint8)
    check(Tensor(a) > 100, a > 100)
    check(Tensor(a).max(), np.uint8(255))
    check(Tensor(a).min(), np.uint8(0))
    check(Tensor(a).sum(), np.uint32(a.astype(np.int64).sum()))
    check(Tensor(a) // 7, a // np.uint8(7))
    check(Tensor(a) % 7, a % np.uint8(7))
    check(Tensor(a).abs(), a)

  def test_int32_overflow_wraps(self):
    a = np.array([2**31 - 1, -2**31], np.int32)
    with np.errstate(all="ignore"):
      check(Tensor(a) + 1, a + np.int32(1))
      check(Tensor(a) - 1, a - np.int32(1))
      check(Tensor(np.array([65536], np.int32)) * 65536, np.array([65536], np.int32) * np.int32(65536))

  def test_int64_large_values(self):
    a = np.array([2**40, -(2**40) + 3, 2**62], np.int64)
    check(Tensor(a) + 1, a + 1)
    check(Tensor(a) // 1024, a // 1024)
    check(Tensor(a) % 1000, a % 1000)
    check(Tensor(a).max(), np.int64(2**62))
    check(Tensor(a[:2]).sum(), np.int64(a[:2].sum()))
    check(Tensor(a) * 2, a * 2)

  def test_int_true_division_is_float(self):
    a = np.array([1, 7, -3], np.int32)
    check(Tensor(a) / 2, (a / 2).astype(np.float32))
    check(Tensor(a) / Tensor(np.array([2, 2, 4], np.int32)), (a / np.array([2, 2, 4])).astype(np.float32))

  def test_int_floordiv_random(self):
    rng = np.random.default_rng(7)
    a = rng.integers(-1000, 1000, 500).astype(np.int32)
    b = rng.integers(-20, 20, 500).astype(np.int32)
    with np.errstate(all="ignore"):
      check(Tensor(a) // Tensor(b), a // b)
      check(Tensor(a) % Tensor(b), a % b)
      check(Tensor(a.astype(np.int64)) // Tensor(b.astype(np.int64)), a.astype(np.int64) // b.astype(np.int64))

  def test_int_compare_chain(self):
    a = np.array([1, 5, 3], np.int32)
    check(Tensor(a) >= 3, a >= 3)
    check(Tensor(a) <= 3, a <= 3)
    check(((Tensor(a) > 1) & (Tensor(a) < 5)), (a > 1) & (a < 5))

# ------------------------------------------------------------------ matmul / dot / linear

@settings(max_examples=ex(20))
@given(m=st.integers(1, 6), k=st.integers(1, 6), n=st.integers(1, 6),
       kind=st.sampled_from(["2x2", "1x2", "2x1", "1x1", "3x3", "3x2", "2x3", "4x4b"]), data=st.data())
def test_matmul(m, k, n, kind, data):
  b1, b2 = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
  shapes_ = {"2x2": ((m, k), (k, n)), "1x2": ((k,), (k, n)), "2x1": ((m, k), (k,)), "1x1": ((k,), (k,)),
             "3x3": ((b1, m, k), (b1, k, n)), "3x2": ((b1, m, k), (k, n)), "2x3": ((m, k), (b1, k, n)), "4x4b": ((b1, 1, m, k), (1, b2, k, n))}
  sa, sb = shapes_[kind]
  a, b = data.draw(f32_arrays(sa, -3, 3)), data.draw(f32_arrays(sb, -3, 3))
  exp = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
  check(Tensor(a) @ Tensor(b), exp, atol=1e-4, rtol=1e-5)
  check(Tensor(a).dot(Tensor(b)), exp, atol=1e-4, rtol=1e-5)
  check(Tensor(a).matmul(Tensor(b)), exp, atol=1e-4, rtol=1e-5)

def test_matmul_int():
  a = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
  b = np.arange(8, dtype=np.int32).reshape(4, 2)
  check(Tensor(a) @ Tensor(b), a @ b)

def test_matmul_mixed_dtype():
  a = np.arange(6, dtype=np.int32).reshape(2, 3)
  b = np.linspace(0, 1, 6, dtype=np.float32).reshape(3, 2)
  check(Tensor(a) @ Tensor(b), (a @ b.astype(np.float64)).astype(np.float32), rtol=1e-6)

def test_matmul_half():
  a = np.linspace(-1, 1, 12).astype(np.float16).reshape(3, 4)
  b = np.linspace(0, 2, 8).astype(np.float16).reshape(4, 2)
  check(Tensor(a) @ Tensor(b), (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16), atol=5e-3, rtol=5e-3)

def test_matmul_transposed_operands():
  a = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
  b = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
  check(Tensor(a) @ Tensor(b).T, a @ b.T, atol=1e-5)
  check(Tensor(a).T @ Tensor(a), a.T @ a, atol=1e-5)
  check(Tensor(b)[::-1] @ Tensor(a).T, b[::-1] @ a.T, atol=1e-5)

def test_rmatmul_with_numpy_and_list():
  b = np.arange(6, dtype=np.float32).reshape(3, 2)
  check([[1.0, 2.0, 3.0]] @ Tensor(b), np.array([[1.0, 2.0, 3.0]], np.float32) @ b)

def test_matmul_larger():
  rng = np.random.default_rng(3)
  a, b = rng.standard_normal((64, 48)).astype(np.float32), rng.standard_normal((48, 32)).astype(np.float32)
  check(Tensor(a) @ Tensor(b), (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32), atol=1e-4, rtol=1e-4)

def test_linear():
  rng = np.random.default_rng(4)
  x, w, bias = rng.standard_normal((2, 5, 3)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
  check(Tensor(x).linear(Tensor(w), Tensor(bias)), x @ w + bias, atol=1e-5)
  check(Tensor(x).linear(Tensor(w)), x @ w, atol=1e-5)
  w1 = rng.standard_normal(3).astype(np.float32)
  check(Tensor(x).linear(Tensor(w1)), x * w1, atol=1e-6)

# ------------------------------------------------------------------ conv2d and pooling

def conv2d_ref(x, w, b=None, stride=(1, 1), padding=((0, 0), (0, 0)), dilation=(1, 1), groups=1):
  """Direct numpy convolution (cross-correlation, like torch) in float64."""
  x, w = x.astype(np.float64), w.astype(np.float64)
  bs, cin, H, W = x.shape
  cout, cpg, kh, kw = w.shape
  xp = np.pad(x, ((0, 0), (0, 0)) + tuple(padding))
  Hp, Wp = xp.shape[2:]
  (sh, sw), (dh, dw) = stride, dilation
  oh, ow = (Hp - dh * (kh - 1) - 1) // sh + 1, (Wp - dw * (kw - 1) - 1) // sw + 1
  out = np.zeros((bs, cout, oh, ow))
  opg = cout // groups
  for oc in range(cout):
    g = oc // opg
    for i in range(kh):
      for j in range(kw):
        patch = xp[:, g * cpg:(g + 1) * cpg, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
        out[:, oc] += np.einsum("bchw,c->bhw", patch, w[oc, :, i, j])
  if b is not None: out += b.astype(np.float64)[None, :, None, None]
  return out

@st.composite
def conv_cfg(draw):
  groups = draw(st.sampled_from([1, 1, 2, 3]))
  cpg, opg = draw(st.integers(1, 2)), draw(st.integers(1, 2))
  kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
  sh, sw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
  dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
  ph, pw = draw(st.integers(0, 2)), draw(st.integers(0, 2))
  H = draw(st.integers(max(1, dh * (kh - 1) + 1 - 2 * ph), 7))
  W = draw(st.integers(max(1, dw * (kw - 1) + 1 - 2 * pw), 7))
  bs = draw(st.integers(1, 2))
  bias = draw(st.booleans())
  return dict(bs=bs, groups=groups, cin=groups * cpg, cout=groups * opg, k=(kh, kw), stride=(sh, sw), dil=(dh, dw), pad=(ph, pw), HW=(H, W), bias=bias)

@settings(max_examples=ex(25))
@given(cfg=conv_cfg(), data=st.data())
def test_conv2d_vs_numpy(cfg, data):
  x = data.draw(f32_arrays((cfg["bs"], cfg["cin"], *cfg["HW"]), -2, 2))
  w = data.draw(f32_arrays((cfg["cout"], cfg["cin"] // cfg["groups"], *cfg["k"]), -2, 2))
  b = data.draw(f32_arrays((cfg["cout"],), -1, 1)) if cfg["bias"] else None
  (ph, pw) = cfg["pad"]
  exp = conv2d_ref(x, w, b, cfg["stride"], ((ph, ph), (pw, pw)), cfg["dil"], cfg["groups"]).astype(np.float32)
  got = Tensor(x).conv2d(Tensor(w), Tensor(b) if b is not None else None, groups=cfg["groups"], stride=cfg["stride"], dilation=cfg["dil"], padding=cfg["pad"])
  check(got, exp, atol=1e-4, rtol=1e-5)

def test_conv2d_int_args_and_asymmetric_padding():
  rng = np.random.default_rng(5)
  x = rng.standard_normal((2, 4, 6, 5)).astype(np.float32)
  w = rng.standard_normal((6, 2, 3, 2)).astype(np.float32)
  check(Tensor(x).conv2d(Tensor(w), groups=2, stride=2, padding=1, dilation=1),
        conv2d_ref(x, w, None, (2, 2), ((1, 1), (1, 1)), (1, 1), 2).astype(np.float32), atol=1e-4)
  # 4-tuple padding is torch F.pad order: (w_left, w_right, h_top, h_bottom)
  check(Tensor(x).conv2d(Tensor(w), groups=2, padding=(1, 0, 2, 1)),
        conv2d_ref(x, w, None, (1, 1), ((2, 1), (1, 0)), (1, 1), 2).astype(np.float32), atol=1e-4)

def test_conv2d_depthwise():
  rng = np.random.default_rng(6)
  x = rng.standard_normal((1, 3, 5, 5)).astype(np.float32)
  w = rng.standard_normal((3, 1, 3, 3)).astype(np.float32)
  check(Tensor(x).conv2d(Tensor(w), groups=3, padding=1), conv2d_ref(x, w, None, (1, 1), ((1, 1), (1, 1)), (1, 1), 3).astype(np.float32), atol=1e-4)

def test_conv2d_bigger():
  rng = np.random.default_rng(7)
  x = rng.standard_normal((2, 8, 16, 16)).astype(np.float32)
  w = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)
  b = rng.standard_normal(16).astype(np.float32)
  check(Tensor(x).conv2d(Tensor(w), Tensor(b), padding=1), conv2d_ref(x, w, b, (1, 1), ((1, 1), (1, 1))).astype(np.float32), atol=1e-3, rtol=1e-4)

def _torch():
  return pytest.importorskip("torch")

@pytest.mark.torch
@pytest.mark.parametrize("cfg", [
  dict(x=(1, 2, 5, 5), w=(3, 2, 3, 3), stride=1, padding=0, dilation=1, groups=1),
  dict(x=(2, 4, 7, 6), w=(4, 2, 2, 3), stride=(2, 1), padding=(1, 2), dilation=1, groups=2),
  dict(x=(1, 3, 8, 8), w=(6, 1, 3, 3), stride=2, padding=2, dilation=2, groups=3),
  dict(x=(2, 1, 4, 9), w=(2, 1, 1, 4), stride=(1, 3), padding=0, dilation=(1, 2), groups=1),
])
def test_conv2d_vs_torch(cfg):
  torch = _torch()
  rng = np.random.default_rng(8)
  x, w = rng.standard_normal(cfg["x"]).astype(np.float32), rng.standard_normal(cfg["w"]).astype(np.float32)
  b = rng.standard_normal(cfg["w"][0]).astype(np.float32)
  exp = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), stride=cfg["stride"], padding=cfg["padding"],
                                   dilation=cfg["dilation"], groups=cfg["groups"]).numpy()
  got = Tensor(x).conv2d(Tensor(w), Tensor(b), groups=cfg["groups"], stride=cfg["stride"], dilation=cfg["dilation"], padding=cfg["padding"])
  check(got, exp, atol=1e-4, rtol=1e-4)

def pool_ref(x, k, stride, padding, dilation, op, pad_value):
  kh, kw = k
  (sh, sw), (dh, dw), (ph, pw) = stride, dilation, padding
  xp = np.pad(x.astype(np.float64), ((0, 0),) * (x.ndim - 2) + ((ph, ph), (pw, pw)), constant_values=pad_value)
  H, W = xp.shape[-2:]
  oh, ow = (H - dh * (kh - 1) - 1) // sh + 1, (W - dw * (kw - 1) - 1) // sw + 1
  wins = np.stack([xp[..., i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw] for i in range(kh) for j in range(kw)], -1)
  return op(wins, axis=-1)

@st.composite
def pool_cfg(draw):
  kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
  stride = draw(st.one_of(st.none(), st.tuples(st.integers(1, 3), st.integers(1, 3))))
  dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
  ph, pw = draw(st.integers(0, kh // 2)), draw(st.integers(0, kw // 2))
  H = draw(st.integers(max(1, dh * (kh - 1) + 1 - 2 * ph), 7))
  W = draw(st.integers(max(1, dw * (kw - 1) + 1 - 2 * pw), 7))
  lead = draw(st.sampled_from([(1, 2), (2, 1), (3,)]))
  return dict(k=(kh, kw), stride=stride, dil=(dh, dw), pad=(ph, pw), shape=lead + (H, W))

@pytest.mark.parametrize("kind", ["max", "avg"])
@settings(max_examples=ex(20))
@given(cfg=pool_cfg(), data=st.data())
def test_pool2d_vs_numpy(kind, cfg, data):
  x = data.draw(f32_arrays(cfg["shape"], -5, 5))
  stride = cfg["stride"] if cfg["stride"] is not None else cfg["k"]
  if kind == "max":
    exp = pool_ref(x, cfg["k"], stride, cfg["pad"], cfg["dil"], np.max, -np.inf)
    got = Tensor(x).max_pool2d(cfg["k"], cfg["stride"], cfg["dil"], cfg["pad"])
  else:  # zeros in the padding are counted, like torch's default count_include_pad=True
    exp = pool_ref(x, cfg["k"], stride, cfg["pad"], cfg["dil"], np.mean, 0.0)
    got = Tensor(x).avg_pool2d(cfg["k"], cfg["stride"], cfg["dil"], cfg["pad"])
  check(got, exp.astype(np.float32), atol=1e-5, rtol=1e-5)

@pytest.mark.torch
@pytest.mark.parametrize("k,stride,padding,dilation", [((2, 2), None, 0, 1), (3, 2, 1, 1), ((3, 2), (1, 2), (1, 0), 1), (2, 1, 0, 2)])
def test_pool2d_vs_torch(k, stride, padding, dilation):
  torch = _torch()
  x = np.random.default_rng(9).standard_normal((2, 3, 7, 8)).astype(np.float32)
  tx = torch.from_numpy(x)
  exp_max = torch.nn.functional.max_pool2d(tx, k, stride, padding, dilation).numpy()
  check(Tensor(x).max_pool2d(k, stride, dilation, padding), exp_max, atol=1e-6)
  if dilation == 1:
    exp_avg = torch.nn.functional.avg_pool2d(tx, k, stride, padding).numpy()
    check(Tensor(x).avg_pool2d(k, stride, dilation, padding), exp_avg, atol=1e-5)

def test_max_pool_default_stride_and_int_kernel():
  x = np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)
  check(Tensor(x).max_pool2d(), x.reshape(1, 1, 3, 2, 3, 2).max((3, 5)))
  check(Tensor(x).avg_pool2d(3), x.reshape(1, 1, 2, 3, 2, 3).mean((3, 5)))
  check(Tensor(x).max_pool2d(kernel_size=2, stride=1), pool_ref(x, (2, 2), (1, 1), (0, 0), (1, 1), np.max, 0).astype(np.float32))

# ------------------------------------------------------------------ the PYTHON interpreter device

@pytest.mark.parametrize("case", ["elementwise", "reduce", "movement", "int"])
def test_python_device_matches_numpy(case):
  a = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
  t = Tensor(a, device="PYTHON")
  assert t.device == "PYTHON"
  if case == "elementwise": check((t * 2 + 1).exp2().sqrt(), np.sqrt(np.exp2(a.astype(np.float64) * 2 + 1)).astype(np.float32), rtol=1e-5)
  elif case == "reduce":
    check(t.sum(1), a.sum(1))
    check(t.max(0), a.max(0))
  elif case == "movement": check(t.T[::-1, 1:].pad(((1, 0), (0, 1))), np.pad(a.T[::-1, 1:], ((1, 0), (0, 1))))
  else:
    i = np.array([-7, 7, 5, -5], np.int32)
    check(Tensor(i, device="PYTHON") // Tensor(np.array([2, -2, 0, 3], np.int32), device="PYTHON"), np.array([-4, -4, 0, -2], np.int32))
    check(Tensor(i, device="PYTHON") % 3, i % 3)

def test_to_device_roundtrip():
  a = np.arange(6, dtype=np.float32)
  t = Tensor(a).to("PYTHON")
  assert t.device == "PYTHON"
  check((t + 1).to("CPU"), a + 1)

# ------------------------------------------------------------------ laziness / realize

def test_realize_and_reuse():
  a = Tensor([1.0, 2.0, 3.0])
  b = (a * 2).realize()
  check(b + 1, np.array([3.0, 5.0, 7.0], np.float32))
  check(b * b, np.array([4.0, 16.0, 36.0], np.float32))
  c = a.contiguous() + b
  check(c, np.array([3.0, 6.0, 9.0], np.float32))
  check(a.clone(), np.array([1.0, 2.0, 3.0], np.float32))

def test_same_expression_twice_same_result():
  x = np.linspace(-1, 1, 10, dtype=np.float32)
  check(Tensor(x).sin() + Tensor(x).sin(), 2 * np.sin(x), atol=1e-6)
