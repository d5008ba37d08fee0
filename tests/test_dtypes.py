"""dtypes: defaults, promotion between tensors, weak Python scalars, casts, and per-dtype math, against numpy.

Among these six dtypes the promotion lattice is bool < uint8 < int32 < int64 < float16 < float32. It agrees with numpy
except that int + float gives the float type (int32 + float32 -> float32, int64 + float16 -> float16), never float64.
The other dtypes (int8, uint16, float64, bfloat16, ...) are tested in test_dtypes_more.py.
"""
import itertools, os
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp
from lazynb import Tensor, dtypes

# HYPOTHESIS_SCALE=10 multiplies every example budget below, for a longer bug hunt
def ex(n: int) -> int: return n * int(os.environ.get('HYPOTHESIS_SCALE', '1'))
from lazynb.dtype import DType  # noqa: E402

ALL = [dtypes.bool, dtypes.uint8, dtypes.int32, dtypes.int64, dtypes.float16, dtypes.float32]
NP = {dtypes.bool: np.bool_, dtypes.uint8: np.uint8, dtypes.int32: np.int32, dtypes.int64: np.int64, dtypes.float16: np.float16, dtypes.float32: np.float32}
ORDER = {d: i for i, d in enumerate(ALL)}

def check(got: Tensor, expected, atol=0.0, rtol=0.0, dtype=None):
  e = np.asarray(expected)
  want = np.dtype(dtype) if dtype is not None else e.dtype
  g = got.numpy()
  assert got.dtype.np == want, f"Tensor.dtype {got.dtype} != expected {want}"
  assert g.dtype == want, f"numpy() dtype {g.dtype} != expected {want}"
  assert g.shape == e.shape, f"shape {g.shape} != {e.shape}"
  if want.kind == "f": np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), atol=atol, rtol=rtol, equal_nan=True)
  else: np.testing.assert_array_equal(g, e.astype(want))

def expected_promotion(a: DType, b: DType) -> DType:
  """numpy's result type, except that a float wins over any int/bool without widening to float64."""
  fa, fb = dtypes.is_float(a), dtypes.is_float(b)
  if fa and fb: return a if ORDER[a] >= ORDER[b] else b
  if fa: return a
  if fb: return b
  r = np.result_type(NP[a], NP[b])
  return {np.dtype(v): k for k, v in NP.items()}[r]

SAMPLE = {dtypes.bool: [True, False, True, True], dtypes.uint8: [0, 7, 200, 255], dtypes.int32: [-5, 0, 3, 1000],
          dtypes.int64: [-(2**40), 2, 0, 9], dtypes.float16: [0.5, -1.25, 3.0, 100.0], dtypes.float32: [1.5, -0.1, 0.0, 1e6]}

# ------------------------------------------------------------------ defaults

def test_default_dtypes():
  assert dtypes.default_float == dtypes.float32
  assert dtypes.default_int == dtypes.int32
  assert Tensor([1, 2]).dtype == dtypes.int32
  assert Tensor([1.0, 2]).dtype == dtypes.float32
  assert Tensor([True]).dtype == dtypes.bool
  assert Tensor(1).dtype == dtypes.int32
  assert Tensor(1.0).dtype == dtypes.float32
  assert Tensor(False).dtype == dtypes.bool
  assert Tensor.zeros(2).dtype == dtypes.float32
  assert Tensor.arange(3).dtype == dtypes.int32
  assert Tensor.arange(3.0).dtype == dtypes.float32
  assert Tensor.rand(2).dtype == dtypes.float32
  assert Tensor.eye(2).dtype == dtypes.float32
  assert Tensor.full((2,), 3).dtype == dtypes.int32
  assert Tensor.full((2,), 3.0).dtype == dtypes.float32

# every numpy dtype keeps its own dtype (tinygrad 0.10: a float64 array is a float64 tensor)
@pytest.mark.parametrize("npdt,want", [(np.float64, dtypes.float64), (np.float32, dtypes.float32), (np.float16, dtypes.float16), (np.int64, dtypes.int64),
                                       (np.int32, dtypes.int32), (np.int16, dtypes.int16), (np.int8, dtypes.int8), (np.uint8, dtypes.uint8),
                                       (np.uint16, dtypes.uint16), (np.uint32, dtypes.uint32), (np.uint64, dtypes.uint64), (np.bool_, dtypes.bool)])
def test_numpy_dtype_mapping(npdt, want):
  a = np.array([0, 1, 2], dtype=npdt)
  t = Tensor(a)
  assert t.dtype == want
  check(t, a.astype(want.np))

def test_numpy_uint16_values_preserved():
  a = np.array([0, 40000, 65535], dtype=np.uint16)
  check(Tensor(a), a)

def test_numpy_uint32_values_preserved():
  a = np.array([1, 2**31, 2**32 - 1], dtype=np.uint32)
  np.testing.assert_array_equal(Tensor(a).numpy().astype(np.int64), a.astype(np.int64))

@pytest.mark.parametrize("name,want", [("float32", dtypes.float32), ("float", dtypes.float32), ("float16", dtypes.float16), ("half", dtypes.float16),
                                       ("int32", dtypes.int32), ("int", dtypes.int32), ("int64", dtypes.int64), ("long", dtypes.int64),
                                       ("uint8", dtypes.uint8), ("bool", dtypes.bool)])
def test_dtype_by_name(name, want):
  t = Tensor([1, 0, 2], dtype=name)
  assert t.dtype == want
  check(t, np.array([1, 0, 2]).astype(want.np))
  assert Tensor([1]).cast(name).dtype == want

def test_dtype_by_numpy_dtype():
  assert Tensor([1, 2], dtype=np.float16).dtype == dtypes.float16
  assert Tensor([1, 2], dtype=np.int64).dtype == dtypes.int64

def test_dtype_aliases_and_properties():
  assert dtypes.float is dtypes.float32 and dtypes.half is dtypes.float16 and dtypes.int is dtypes.int32 and dtypes.long is dtypes.int64
  assert [d.itemsize for d in ALL] == [1, 1, 4, 8, 2, 4]
  t = Tensor.zeros(3, 5, dtype=dtypes.int64)
  assert t.element_size() == 8 and t.nbytes() == 120  # a method in tinygrad 0.10

# ------------------------------------------------------------------ promotion between tensors

@pytest.mark.parametrize("a,b", list(itertools.product(ALL, ALL)))
def test_promotion_add_mul(a, b):
  want = expected_promotion(a, b)
  x, y = np.array(SAMPLE[a], NP[a]), np.array(SAMPLE[b], NP[b])
  got_add, got_mul = Tensor(x) + Tensor(y), Tensor(x) * Tensor(y)
  assert got_add.dtype == want, f"{a} + {b} -> {got_add.dtype}, expected {want}"
  assert got_mul.dtype == want
  xw, yw = x.astype(want.np), y.astype(want.np)
  with np.errstate(all="ignore"):
    tol = dict(rtol=2e-3, atol=1e-3) if want == dtypes.float16 else dict(rtol=1e-6)
    check(got_add, (xw | yw) if want == dtypes.bool else xw + yw, **tol)
    check(got_mul, (xw & yw) if want == dtypes.bool else xw * yw, **tol)

@pytest.mark.parametrize("a,b", [(a, b) for a, b in itertools.product(ALL, ALL) if not (a == dtypes.bool and b == dtypes.bool)])
def test_promotion_sub_compare_max(a, b):
  want = expected_promotion(a, b)
  x, y = np.array(SAMPLE[a], NP[a]), np.array(SAMPLE[b], NP[b])
  xw, yw = x.astype(want.np), y.astype(want.np)
  with np.errstate(all="ignore"):
    tol = dict(rtol=2e-3, atol=1e-3) if want == dtypes.float16 else dict(rtol=1e-6)
    check(Tensor(x) - Tensor(y), xw - yw, **tol)
  check(Tensor(x) < Tensor(y), xw < yw)
  check(Tensor(x).maximum(Tensor(y)), np.maximum(xw, yw))  # == and minimum: see test_random_dtype_binary

def test_promotion_is_symmetric_and_transitive_chain():
  for a, b in itertools.product(ALL, ALL):
    assert (Tensor([1], dtype=a) + Tensor([1], dtype=b)).dtype == (Tensor([1], dtype=b) + Tensor([1], dtype=a)).dtype

@pytest.mark.parametrize("a,b", [(dtypes.int32, dtypes.float32), (dtypes.int64, dtypes.float32), (dtypes.uint8, dtypes.float16), (dtypes.int32, dtypes.float16)])
def test_int_float_is_not_float64(a, b):
  t = Tensor([3], dtype=a) / Tensor([2], dtype=b)
  assert t.dtype == b
  check(t, np.array([1.5], NP[b]))

def test_true_division_dtypes():
  assert (Tensor([1, 2]) / Tensor([2, 2])).dtype == dtypes.float32
  assert (Tensor([1, 2], dtype=dtypes.float16) / 2).dtype == dtypes.float16
  assert (Tensor([True]) / Tensor([True])).dtype == dtypes.float32
  check(Tensor(np.array([1, 3], np.uint8)) / Tensor(np.array([2, 4], np.uint8)), np.array([0.5, 0.75], np.float32))

# ------------------------------------------------------------------ weak Python scalars

@pytest.mark.parametrize("dt,scalar,want", [
  (dtypes.int32, 2.5, dtypes.float32), (dtypes.int32, 2, dtypes.int32), (dtypes.int32, True, dtypes.int32),
  (dtypes.float16, 2.5, dtypes.float16), (dtypes.float16, 3, dtypes.float16), (dtypes.float32, 2, dtypes.float32),
  (dtypes.uint8, 3, dtypes.uint8), (dtypes.uint8, 1.5, dtypes.float32), (dtypes.int64, 2, dtypes.int64), (dtypes.int64, 0.5, dtypes.float32),
  (dtypes.bool, True, dtypes.bool), (dtypes.bool, 2, dtypes.int32), (dtypes.bool, 2.5, dtypes.float32),
])
def test_weak_scalar_mul(dt, scalar, want):
  x = np.array(SAMPLE[dt], NP[dt])
  got = Tensor(x) * scalar
  assert got.dtype == want, f"{dt} * {scalar!r} -> {got.dtype}, expected {want}"
  assert (scalar * Tensor(x)).dtype == want
  with np.errstate(all="ignore"):
    exp = (x.astype(want.np) & bool(scalar)) if want == dtypes.bool else x.astype(want.np) * np.array(scalar).astype(want.np)
  check(got, exp, rtol=2e-3 if want == dtypes.float16 else 1e-6)

@pytest.mark.parametrize("dt", [dtypes.int32, dtypes.float16, dtypes.uint8, dtypes.int64, dtypes.float32])
def test_weak_scalar_add_sub_compare(dt):
  x = np.array(SAMPLE[dt], NP[dt])
  with np.errstate(all="ignore"):
    check(Tensor(x) + 1, x + NP[dt](1), rtol=2e-3)
    check(Tensor(x) - 1, x - NP[dt](1), rtol=2e-3)
    check(10 - Tensor(x), NP[dt](10) - x, rtol=2e-3)
  check(Tensor(x) < 3, x < 3)
  check(Tensor(x) >= 3, x >= 3)
  check(Tensor(x) == 0, x == 0)

def test_numpy_scalars_are_weak_too():
  assert (Tensor([1, 2], dtype=dtypes.float16) * np.float32(2.0)).dtype == dtypes.float16
  assert (Tensor([1, 2]) * np.int64(2)).dtype == dtypes.int32
  check(Tensor([1, 2]) * np.float64(0.5), np.array([0.5, 1.0], np.float32))

def test_half_scalar_overflow_to_inf():
  with np.errstate(over="ignore"):
    check(Tensor([1000.0], dtype=dtypes.float16) * 100.0, np.array([1000.0], np.float16) * np.float16(100.0))

# ------------------------------------------------------------------ casts

def cast_ref(x: np.ndarray, to: DType) -> np.ndarray:
  return x.astype(to.np)

SAFE = {  # values whose cast is defined in C and numpy alike for every target (no negative/out-of-range float->unsigned)
  dtypes.bool: [True, False, True], dtypes.uint8: [0, 1, 255], dtypes.int32: [0, 1, 77], dtypes.int64: [0, 5, 123],
  dtypes.float16: [0.0, 1.5, 7.75], dtypes.float32: [0.0, 2.9, 100.25],
}

@pytest.mark.parametrize("src,dst", list(itertools.product(ALL, ALL)))
def test_cast_all_pairs(src, dst):
  x = np.array(SAFE[src], NP[src])
  check(Tensor(x).cast(dst), cast_ref(x, dst))

def test_cast_float_to_int_truncates_toward_zero():
  x = np.array([-2.7, -0.5, 0.5, 2.7, 1e5], np.float32)
  check(Tensor(x).cast(dtypes.int32), x.astype(np.int32))
  check(Tensor(x).cast(dtypes.int64), x.astype(np.int64))
  check(Tensor(x).int(), x.astype(np.int32))
  check(Tensor(x).long(), x.astype(np.int64))

def test_cast_to_bool_is_nonzero():
  check(Tensor(np.array([0.0, -0.0, 0.1, -3.0, np.nan], np.float32)).bool(), np.array([0.0, -0.0, 0.1, -3.0, np.nan], np.float32).astype(np.bool_))
  check(Tensor(np.array([0, -1, 256, 2], np.int32)).bool(), np.array([False, True, True, True]))
  check(Tensor(np.array([0, 256], np.int64)).cast(dtypes.bool), np.array([False, True]))

def test_cast_int_wraps():
  x = np.array([300, -1, 255, 256, -129], np.int32)
  check(Tensor(x).cast(dtypes.uint8), x.astype(np.uint8))
  y = np.array([2**40 + 5, -(2**33) - 1, 2**31], np.int64)
  check(Tensor(y).cast(dtypes.int32), y.astype(np.int32))

def test_cast_float_rounding_to_half():
  x = np.array([1.0001, 65504.0, 70000.0, 1e-8, -3.14159], np.float32)
  with np.errstate(over="ignore"):
    check(Tensor(x).half(), x.astype(np.float16))
  check(Tensor(np.array([1.5, np.inf, -np.inf, np.nan], np.float16)).float(), np.array([1.5, np.inf, -np.inf, np.nan], np.float32))

def test_cast_large_ints_to_float():
  x = np.array([2**24 + 1, -(2**30) - 3], np.int32)
  check(Tensor(x).float(), x.astype(np.float32))
  y = np.array([2**53 + 1, 2**62], np.int64)
  check(Tensor(y).float(), y.astype(np.float32))

def test_cast_is_lazy_and_chains():
  x = np.array([1.7, -2.2, 3.9], np.float32)
  check(Tensor(x).int().float() * 2, x.astype(np.int32).astype(np.float32) * 2)
  check(Tensor(x).half().float(), x.astype(np.float16).astype(np.float32))
  check(Tensor(x).cast(dtypes.float32), x)

@settings(max_examples=ex(15))
@given(src=st.sampled_from(ALL), dst=st.sampled_from(ALL), data=st.data())
def test_cast_random_values(src, dst, data):
  shape = data.draw(st.sampled_from([(3,), (2, 3), (4, 1)]))
  if dtypes.is_float(src):
    lo = 0.0 if dst == dtypes.uint8 else -200.0  # float->uint8 of negatives / >255 is undefined in C
    hi = 255.0 if dst == dtypes.uint8 else 200.0
    x = data.draw(hnp.arrays(NP[src], shape, elements=st.floats(lo, hi, width=16 if src == dtypes.float16 else 32)))
  elif src == dtypes.bool: x = data.draw(hnp.arrays(np.bool_, shape))
  else:
    info = np.iinfo(NP[src])
    x = data.draw(hnp.arrays(NP[src], shape, elements=st.integers(max(info.min, -(2**40)), min(info.max, 2**40))))
  check(Tensor(x).cast(dst), x.astype(dst.np))

# ------------------------------------------------------------------ per-dtype math

@pytest.mark.parametrize("dt", ALL)
def test_reductions_per_dtype(dt):
  x = np.array([[1, 0, 3], [2, 5, 1]]).astype(NP[dt])
  t = Tensor(x)
  check(t.max(1), x.max(1))
  check(t.min(0), x.min(0))
  sum_dt = {dtypes.bool: np.int32, dtypes.uint8: np.uint32, dtypes.int32: np.int32, dtypes.int64: np.int64, dtypes.float16: np.float16, dtypes.float32: np.float32}[dt]
  check(t.sum(), x.astype(np.float64).sum().astype(sum_dt), rtol=1e-3)
  check(t.sum(0), x.astype(np.float64).sum(0).astype(sum_dt), rtol=1e-3)
  check(t.mean(1), x.astype(np.float64).mean(1).astype(np.float16 if dt == dtypes.float16 else np.float32), rtol=1e-3)
  check(t.argmax(1), np.argmax(x, 1).astype(np.int32))

@pytest.mark.parametrize("dt", [dtypes.uint8, dtypes.int32, dtypes.int64, dtypes.float16, dtypes.float32])
def test_elementwise_per_dtype(dt):
  x = np.array([1, 0, 3, 8, 5, 2]).astype(NP[dt])
  y = np.array([2, 1, 1, 3, 5, 7]).astype(NP[dt])
  tx, ty = Tensor(x), Tensor(y)
  with np.errstate(all="ignore"):
    check(tx + ty, x + y)
    check(tx * ty, x * y, rtol=1e-3)
    check(tx - ty, x - y)
    check(tx // ty, x // y)
    check(tx % ty, x % y)
    check(tx.maximum(ty), np.maximum(x, y))
    check(tx.where(tx, ty), np.where(x != 0, x, y))
    check(tx.abs(), np.abs(x))
    check(tx.sign(), np.sign(x))
    check(tx.relu(), np.maximum(x, 0).astype(NP[dt]))
    check(tx.square(), np.square(x))
    check(tx.clip(1, 4), np.clip(x, NP[dt](1), NP[dt](4)))

@pytest.mark.parametrize("dt", [dtypes.uint8, dtypes.int32, dtypes.int64])
def test_int_unary_float_ops_give_float32(dt):
  x = np.array([1, 4, 9]).astype(NP[dt])
  check(Tensor(x).sqrt(), np.sqrt(x.astype(np.float64)).astype(np.float32), rtol=1e-6)
  check(Tensor(x).exp(), np.exp(x.astype(np.float64)).astype(np.float32), rtol=1e-5)
  check(Tensor(x).log(), np.log(x.astype(np.float64)).astype(np.float32), atol=1e-6, rtol=1e-5)
  check(Tensor(x).mean(), np.float32(x.mean()), rtol=1e-6)

def test_float16_math():
  x = np.array([0.1, 0.5, 1.0, 2.0, 10.0, 60000.0], np.float16)
  t = Tensor(x)
  with np.errstate(over="ignore"):
    check(t * 2, x * np.float16(2), rtol=1e-3)
  check(t.sqrt(), np.sqrt(x.astype(np.float64)).astype(np.float16), rtol=1e-3)
  check(t.reciprocal(), (1 / x.astype(np.float64)).astype(np.float16), rtol=1e-3)
  check(t.max(), np.float16(60000.0))
  check(t[:5].sum(), np.float16(13.6), rtol=1e-3)
  check((t[:5] * Tensor(x[:5])).sum(), np.float16((x[:5].astype(np.float64) ** 2).sum()), rtol=2e-3)
  check(t.softmax(), np.exp(x.astype(np.float64) - 60000) / np.exp(x.astype(np.float64) - 60000).sum(), atol=1e-3, dtype=np.float16)

def test_float16_sum_accumulates_wider():
  # a float16 running sum of 0.1s stalls at 256 (spacing 0.25 there); accumulating in float32 gives ~409.5
  x = np.full(4096, 0.1, np.float16)
  check(Tensor(x).sum(), np.float16(x.astype(np.float64).sum()), rtol=1e-3)

@pytest.mark.parametrize("case", ["mean", "mean-axis", "avg_pool2d"])
def test_float16_mean_does_not_overflow(case):
  a = np.full((4, 100), 1000.0, np.float16)  # the mean (1000) fits in float16; the sum (100000) does not
  if case == "mean": check(Tensor(a).mean(), np.mean(a), rtol=1e-3)  # numpy and torch give 1000
  elif case == "mean-axis": check(Tensor(a).mean(1), np.mean(a, 1), rtol=1e-3)
  else: check(Tensor(np.full((1, 1, 4, 4), 60000.0, np.float16)).avg_pool2d(2), np.full((1, 1, 2, 2), 60000.0, np.float16), rtol=1e-3)

def test_float16_mean_small():
  a = np.linspace(-3, 5, 24).astype(np.float16).reshape(4, 6)
  check(Tensor(a).mean(1), np.mean(a.astype(np.float64), 1).astype(np.float16), rtol=2e-3, atol=2e-3)
  check(Tensor(a).mean(), np.float16(np.mean(a.astype(np.float64))), rtol=2e-3, atol=2e-3)

def test_int64_exact_beyond_float_precision():
  x = np.array([2**53 + 1, 2**53 + 3], np.int64)
  check(Tensor(x) + 1, x + 1)
  check(Tensor(x).sum(), np.int64(x.sum()))
  check(Tensor(x).max(), np.int64(2**53 + 3))
  check(Tensor(x) * Tensor(np.array([1, 1], np.int64)), x)

def test_uint32_sum_of_uint8_does_not_wrap_at_256():
  x = np.full(1000, 255, np.uint8)
  check(Tensor(x).sum(), np.uint32(255000))  # tinygrad 0.10 sums unsigned ints in uint32

def test_bool_promotes_with_int_and_float_tensors():
  b = np.array([True, False, True])
  check(Tensor(b) + Tensor(np.array([1, 2, 3], np.uint8)), np.array([2, 2, 4], np.uint8))
  check(Tensor(b) * Tensor(np.array([1.5, 2.5, 3.5], np.float16)), np.array([1.5, 0, 3.5], np.float16))
  check(Tensor(b).where(Tensor(np.array([1, 2, 3], np.int64)), 0), np.array([1, 0, 3], np.int64))

def test_where_dtype_from_branches():
  c = Tensor([True, False])
  assert c.where(1, 0).dtype == dtypes.int32
  assert c.where(1.0, 0).dtype == dtypes.float32
  assert c.where(Tensor([1, 2], dtype=dtypes.uint8), 0).dtype == dtypes.uint8
  assert c.where(Tensor([1, 2], dtype=dtypes.float16), 0.5).dtype == dtypes.float16
  assert c.where(Tensor([1, 2]), Tensor([1.0, 2.0])).dtype == dtypes.float32
  check(c.where(Tensor([1, 2], dtype=dtypes.float16), 0.5), np.array([1, 0.5], np.float16))

def test_matmul_dtypes():
  a = np.array([[1, 2], [3, 4]], np.int32)
  check(Tensor(a) @ Tensor(a), a @ a)
  check(Tensor(a.astype(np.int64)) @ Tensor(a.astype(np.int64)), (a @ a).astype(np.int64))
  # matmul accumulates like sum() and gives the operands' dtype: uint8 @ uint8 is uint8, wrapped (numpy, tinygrad 0.10)
  big = np.array([[200, 200], [3, 4]], np.uint8)
  check(Tensor(big) @ Tensor(big), big @ big)
  check(Tensor(a) @ Tensor(a.astype(np.float32)), (a @ a).astype(np.float32))

# ------------------------------------------------------------------ random dtype pairs, ops and broadcast shapes

def arrays_of(dt: DType, shape):
  if dt == dtypes.bool: return hnp.arrays(np.bool_, shape)
  if dt == dtypes.uint8: return hnp.arrays(np.uint8, shape, elements=st.integers(0, 15))
  if dtypes.is_int(dt): return hnp.arrays(NP[dt], shape, elements=st.integers(-50, 50))
  return hnp.arrays(NP[dt], shape, elements=st.floats(-50, 50, width=16 if dt == dtypes.float16 else 32))

@settings(max_examples=ex(30))
@given(a_dt=st.sampled_from(ALL), b_dt=st.sampled_from(ALL), op=st.sampled_from(["add", "sub", "mul", "max", "min", "lt", "eq", "where"]),
       shapes=st.sampled_from([((3,), (3,)), ((2, 1), (1, 3)), ((), (2, 2)), ((4, 1, 2), (3, 1))]), data=st.data())
def test_random_dtype_binary(a_dt, b_dt, op, shapes, data):
  if op == "sub" and a_dt == dtypes.bool and b_dt == dtypes.bool: return  # bool - bool is a TypeError (tested in test_errors)
  x, y = data.draw(arrays_of(a_dt, shapes[0])), data.draw(arrays_of(b_dt, shapes[1]))
  want = expected_promotion(a_dt, b_dt)
  xw, yw = x.astype(want.np), y.astype(want.np)
  tx, ty = Tensor(x), Tensor(y)
  with np.errstate(all="ignore"):
    got, exp = {
      "add": (lambda: tx + ty, lambda: (xw | yw) if want == dtypes.bool else xw + yw),
      "sub": (lambda: tx - ty, lambda: xw - yw),
      "mul": (lambda: tx * ty, lambda: (xw & yw) if want == dtypes.bool else xw * yw),
      "max": (lambda: tx.maximum(ty), lambda: np.maximum(xw, yw)),
      "min": (lambda: tx.minimum(ty), lambda: np.minimum(xw, yw)),
      "lt": (lambda: tx < ty, lambda: xw < yw),
      "eq": (lambda: tx == ty, lambda: xw == yw),
      "where": (lambda: (tx > 0).where(tx, ty), lambda: np.where(x > 0, xw, yw)),
    }[op]
    tol = dict(rtol=2e-3, atol=2e-2) if want == dtypes.float16 else dict(rtol=1e-6, atol=1e-6)
    check(got(), exp(), **tol)
