"""Arithmetic details as tinygrad 0.10 documents them (issue 31.2), values from outside oracles: torch for
div(rounding_mode=), numpy for tuples inside an index, tinygrad 0.10.3 itself for ints that wrap when a list is made."""
import numpy as np, pytest, torch
from lazynb import Tensor, dtypes
tinygrad = pytest.importorskip("tinygrad")  # (the test extra pins tinygrad==0.10.3)

INTS = [7, -7, 5, -5, 0, 1, -1, 100, -100, 2**31 - 1, -2**31 + 1]  # (torch traps on INT_MIN / -1: tested below)
DIVS = [2, -2, 3, -3, 1, -1, 7, 1000]

@pytest.mark.parametrize("mode", ["trunc", "floor"])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_div_rounding_mode_ints(mode, dtype):
  a = [x for x in INTS for _ in DIVS]
  b = [d for _ in INTS for d in DIVS]
  got = Tensor(a, dtype=dtype).div(Tensor(b, dtype=dtype), rounding_mode=mode)
  want = torch.div(torch.tensor(a, dtype=getattr(torch, dtype)), torch.tensor(b, dtype=getattr(torch, dtype)), rounding_mode=mode)
  assert got.dtype == getattr(dtypes, dtype) and got.tolist() == want.tolist()

@pytest.mark.parametrize("mode", ["trunc", "floor", None])
def test_div_rounding_mode_floats_broadcast_and_reverse(mode):
  a = np.array([[7.5, -7.5, 0.0, -0.0, 1e30, np.inf, np.nan, 5.0]], np.float32)
  b = np.array([[2.0], [-2.0], [0.0], [np.inf]], np.float32)
  got = Tensor(a).div(Tensor(b), rounding_mode=mode).numpy()
  want = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode=mode).numpy()
  if mode == "floor":  # with an inf, torch (and Python) floor through fmod: inf // 2 is NaN, -7.5 // inf is -1; lazynb
    # (as tinygrad's definition, whose float floor breaks at inf) takes floor(x / y): inf and -0.0
    inf = np.broadcast_to(np.isinf(a) | np.isinf(b), want.shape)
    want[inf] = np.floor(np.divide(*np.broadcast_arrays(a, b)))[inf]
  np.testing.assert_allclose(got, want, rtol=1e-6)
  assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()
  np.testing.assert_allclose(Tensor(a).div(3.0, reverse=True, rounding_mode=mode).numpy(),
                             torch.div(torch.tensor(3.0), torch.tensor(a), rounding_mode=mode).numpy(), rtol=1e-6)

@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_int_min_by_minus_one_wraps(mode):
  """The one overflowing int division: C traps (SIGFPE, torch dies of it); lazynb wraps to the minimum, as numpy does."""
  for dt, lo in (("int32", -2**31), ("int64", -2**63)):
    assert Tensor([lo, lo], dtype=dt).div(Tensor([-1, 0], dtype=dt), rounding_mode=mode).tolist() == [lo, 0]

def test_div_rounding_mode_of_ints_is_exact_beyond_float_precision():
  """tinygrad divides ints through floats (2**53 + 1 is lost there); lazynb divides them as ints."""
  x = Tensor([2**53 + 1, -(2**62) - 3], dtype=dtypes.int64)
  assert x.div(1, rounding_mode="trunc").tolist() == [2**53 + 1, -(2**62) - 3]
  assert x.div(-2, rounding_mode="trunc").tolist() == [-(2**52), 2**61 + 1]

@pytest.mark.parametrize("idx", [((0, 2),), (slice(None), (0, 3)), ((2, 0), (1, 3)), ((0, 2), slice(1, 3)), ((-1, 0),)])
def test_tuple_inside_an_index_selects_as_a_list(idx):
  a = np.arange(24).reshape(3, 8)
  assert Tensor(a)[idx].tolist() == a[tuple(list(i) if isinstance(i, tuple) else i for i in idx)].tolist()

@pytest.mark.parametrize("dtype,data", [("int8", [255, 128, -129, 127, -1]), ("uint8", [-1, 256, 511, 0]),
                                        ("int16", [[300, -1], [2**63, 5]]), ("int64", [2**64 - 1, -2**63, 2**63]),
                                        ("uint16", [[1, 2], [3, 70000]]), ("uint32", [-1, 2**32 + 5])])
def test_ints_that_do_not_fit_wrap_as_tinygrad(dtype, data):
  assert Tensor(data, dtype=dtype).tolist() == tinygrad.Tensor(data, dtype=dtype).tolist()
