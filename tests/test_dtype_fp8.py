"""The 8-bit floats (issue 31): names, promotion and the host-side conversions, against ml_dtypes and tinygrad 0.10.3.
Kernels do not compute in fp8 yet: every way into one must raise UnsupportedDTypeError, never return a wrong value."""
import math
import numpy as np
import pytest
from lazynb import Tensor
from lazynb.device import is_dtype_supported
from lazynb.dtype import dtypes, float_to_fp8, fp8_to_float, least_upper_dtype, truncate, UnsupportedDTypeError

ml_dtypes = pytest.importorskip("ml_dtypes")
FP8 = [(dtypes.fp8e4m3, ml_dtypes.float8_e4m3fn, 448.0), (dtypes.fp8e5m2, ml_dtypes.float8_e5m2, 57344.0)]

def same(a: float, b: float) -> bool: return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))

@pytest.mark.parametrize("d,ml,top", FP8)
def test_every_byte_reads_as_ml_dtypes(d, ml, top):
  bad = [b for b in range(256) if not same(fp8_to_float(b, d), float(np.uint8(b).view(ml)))]
  assert not bad, f"{d}: bytes {bad[:8]} read differently from ml_dtypes"

def _probes(d) -> np.ndarray:
  """Random magnitudes over the whole range, every representable value, every midpoint between neighbours (the ties) and
  the float32s either side of each. float32s: ml_dtypes converts a float64 through float32 (rounding twice), tinygrad and
  lazynb round a float64 once; on float32 inputs the two agree, and ml_dtypes is the oracle."""
  rng = np.random.default_rng(1)
  vals = np.array([fp8_to_float(b, d) for b in range(256)])
  vals = vals[np.isfinite(vals)]
  vals.sort()
  mids = (vals[1:] + vals[:-1]) / 2
  rand = rng.standard_normal(5000) * 10.0 ** rng.integers(-12, 6, 5000)
  mids = mids.astype(np.float32)
  nudged = np.concatenate([np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf))])
  return np.concatenate([vals, mids, nudged, rand]).astype(np.float32).astype(np.float64)

@pytest.mark.parametrize("d,ml,top", FP8)
def test_rounding_matches_ml_dtypes_in_range(d, ml, top):
  bad = [x for x in _probes(d) if abs(x) < top and float_to_fp8(float(x), d) != int(np.array(x).astype(ml).view(np.uint8))]
  assert not bad, f"{d}: {bad[:5]} round differently from ml_dtypes"

@pytest.mark.parametrize("d,ml,top", FP8)
def test_out_of_range_saturates_and_nan_keeps_sign(d, ml, top):
  # beyond the largest finite value (and at infinity) the byte is the largest finite one, as tinygrad 0.10.3's float_to_fp8
  for x in (top, top * 1.01, 1e30, math.inf):
    assert fp8_to_float(float_to_fp8(x, d), d) == top and fp8_to_float(float_to_fp8(-x, d), d) == -top
  assert math.isnan(fp8_to_float(float_to_fp8(math.nan, d), d)) and float_to_fp8(-math.nan, d) & 0x80

@pytest.mark.parametrize("d,ml,top", FP8)
def test_same_bytes_as_tinygrad(d, ml, top):
  tg = pytest.importorskip("tinygrad.dtype")
  tgd = getattr(tg.dtypes, {"float8_e4m3": "fp8e4m3", "float8_e5m2": "fp8e5m2"}[d.name])
  mids = [(fp8_to_float(b, d) + fp8_to_float(b + 1, d)) / 2 for b in range(0x7a)]  # float64s just off a tie: rounded once
  xs = list(_probes(d)[::7]) + [np.nextafter(m, s * np.inf) for m in mids for s in (1, -1)] + [top * 2, -top * 2, math.inf, -math.inf, math.nan, -math.nan, 0.0, -0.0]
  bad = [x for x in xs if float_to_fp8(float(x), d) != tg.float_to_fp8(float(x), tgd)]
  assert not bad, f"{d}: {bad[:5]} give other bytes than tinygrad"
  assert all(same(fp8_to_float(b, d), tg.fp8_to_float(b, tgd)) for b in range(256))
  assert all(same(truncate[d](float(x)), tg.truncate[tgd](float(x))) for x in xs)

def test_names_and_promotion_as_tinygrad():
  tg = pytest.importorskip("tinygrad.dtype")
  assert sorted(dtypes.fields()) == sorted(tg.dtypes.fields())
  for n in ("fp8e4m3", "fp8e5m2"):
    ours, theirs = getattr(dtypes, n), getattr(tg.dtypes, n)
    assert (ours.name, ours.itemsize, dtypes.is_float(ours), dtypes.finfo(ours)) == (theirs.name, theirs.itemsize, True, tg.dtypes.finfo(theirs))
  ours, theirs = dtypes.fields(), tg.dtypes.fields()
  for a in ours:
    for b in ("fp8e4m3", "fp8e5m2"):
      assert least_upper_dtype(ours[a], ours[b]) is ours[tg.INVERSE_DTYPES_DICT[tg.least_upper_dtype(theirs[a], theirs[b]).name]], (a, b)

@pytest.mark.parametrize("make", [lambda d: Tensor([1.0, 2.0], dtype=d), lambda d: Tensor(np.ones(3), dtype=d), lambda d: Tensor.zeros(2, dtype=d),
                                  lambda d: Tensor.rand(3, dtype=d), lambda d: Tensor([1.0]).cast(d).float(), lambda d: Tensor([1, 2], dtype="uint8").bitcast(d)])
@pytest.mark.parametrize("d", dtypes.fp8s)
def test_kernels_in_fp8_raise_clearly(make, d):
  assert not is_dtype_supported(d, "CPU")  # tinygrad's tests skip fp8 by this answer
  with pytest.raises(UnsupportedDTypeError, match="fp8|float8"): make(d).numpy()
