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

@pytest.mark.parametrize("dtype,value", [("int8", 300), ("uint8", -1), ("int64", 2**64 - 1), ("uint64", 2**64 - 1), ("int16", -40000)])
def test_scalar_ints_wrap_as_tinygrad(dtype, value):
  assert Tensor(value, dtype=dtype).tolist() == tinygrad.Tensor(value, dtype=dtype).tolist()

@pytest.mark.parametrize("axis,correction", [((0, 3), 1), ((0, 3), 5), ((0, 4), 5), ((0, 4), 6), ((0, 4), 1), ((0, 3), 0)])
def test_var_with_no_degrees_of_freedom_as_torch(axis, correction):
  """var divides by max(0, n - correction), as torch: inf when nothing is left, NaN where also every value is the mean."""
  a = np.random.default_rng(0).standard_normal((1, 2, 3, 1, 5)).astype(np.float32)
  want = torch.tensor(a).var(dim=axis, correction=correction).numpy()
  np.testing.assert_allclose(Tensor(a).var(axis=axis, correction=correction).numpy(), want, rtol=1e-5)
  np.testing.assert_allclose(Tensor(a).std(axis=axis, correction=correction).numpy(), np.sqrt(want), rtol=1e-5)

def test_reshape_none_keeps_an_axis():
  assert Tensor.ones(4, 3, 6, 6).reshape((None, None, 36)).shape == (4, 3, 36)

_X = np.random.default_rng(0).standard_normal((2, 5, 6, 5, 3, 4)).astype(np.float32)
_I = {n: np.random.default_rng(i).integers(0, s, (1, 1, 1)) for i, (n, s) in enumerate(zip("abcde", (2, 5, 6, 5, 3)))}
FANCY = {  # a list that holds more than ints is a tuple of indices; tuples inside an index select as lists (torch)
  "[[0]]": lambda m, t: m[[[0]]], "[[0],b,c,d,:]": lambda m, t: m[[0], t("b"), t("c"), t("d"), :],
  "[[[[0]]],b,c,d,[[1]]]": lambda m, t: m[[[[0]]], t("b"), t("c"), t("d"), [[1]]], "[[a]]": lambda m, t: m[[t("a")]],
  "[[a,1]]": lambda m, t: m[[t("a"), 1]], "[[a,[1,1]]]": lambda m, t: m[[t("a"), [1, 1]]], "[[a,(1,1)]]": lambda m, t: m[[t("a"), (1, 1)]],
  "[[a,b,c,d,e]]": lambda m, t: m[[t("a"), t("b"), t("c"), t("d"), t("e")]], "[1,b,None,d,1]": lambda m, t: m[1, t("b"), None, t("d"), 1],
  "[...,1,e,None]": lambda m, t: m[..., 1, t("e"), None], "[(((0,),),)]": lambda m, t: m[(((0,),),)], "[[1,0]]": lambda m, t: m[[1, 0]],
  "[(1,0),b,c,d,:]": lambda m, t: m[(1, 0), t("b"), t("c"), t("d"), :],
  "[None,a,2,d,None]": lambda m, t: m[None, t("a"), 2, t("d"), None], "[a,:,2,d]": lambda m, t: m[t("a"), :, 2, t("d")],
  "[:,b,1,d,e]": lambda m, t: m[:, t("b"), 1, t("d"), t("e")], "[a,None,b]": lambda m, t: m[t("a"), None, t("b")]}

@pytest.mark.parametrize("case", FANCY)
def test_list_and_tuple_indices_as_torch(case):
  want = FANCY[case](torch.tensor(_X), lambda n: torch.tensor(_I[n])).numpy()
  got = FANCY[case](Tensor(_X), lambda n: Tensor(_I[n].astype(np.int32))).numpy()
  assert got.shape == want.shape and np.array_equal(got, want)

@pytest.mark.parametrize("scale", [1.0, 3.0, 6.0])
def test_softmax_gradients_as_torch(scale):
  """softmax's gradient as torch computes it, (g - sum(g*s)) * s: through the division the chain rule left sum(s) - 1
  (~1e-7) times s, 100x torch's error, where the exact gradient of sum(softmax) is 0 (tinygrad's test_softmax, atol 1e-7)."""
  a = ((np.random.default_rng(1).random((45, 65)) - 0.5) * scale).astype(np.float32)
  w = np.random.default_rng(2).standard_normal((45, 65)).astype(np.float32)
  x = Tensor(a, requires_grad=True)
  x.softmax().sum().backward()
  assert np.abs(x.grad.numpy()).max() < 1e-7
  for lz, th in ((Tensor.softmax, lambda t: torch.softmax(t, 1)), (Tensor.log_softmax, lambda t: torch.log_softmax(t, 1))):
    x, tx = Tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (lz(x) * Tensor(w)).sum().backward()
    (th(tx) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-6, rtol=1e-4)

@pytest.mark.parametrize("case", ["int ** float tensor", "float ** int tensor", "int ** 0.5", "int ** 2.0", "int ** -2.0", "int ** 0-d -1.0"])
def test_pow_of_an_int_tensor_stays_int_as_tinygrad(case):
  """tinygrad 0.10 rounds a power of an integer tensor and casts it back (torch would promote to float); the NaN of
  (-1) ** -1.5 becomes int32's smallest value, as x86 casts it (tinygrad's docstring example)."""
  make = {"int ** float tensor": lambda T: T([-1, 2, 3]).pow(T([-1.5, 0.5, 1.5])), "float ** int tensor": lambda T: 2.0 ** T([-1, 2, 3]),
          "int ** 0.5": lambda T: T([1, 5, 9]) ** 0.5, "int ** 2.0": lambda T: T([-3, 2, 3]) ** 2.0,
          "int ** -2.0": lambda T: T([-1, 1, 2, 3]) ** -2.0, "int ** 0-d -1.0": lambda T: T([-1, 1, 2]).pow(T(-1.0))}[case]
  ours, theirs = make(Tensor), make(tinygrad.Tensor)
  assert ours.dtype.name == theirs.dtype.name and ours.tolist() == theirs.tolist()

def test_clone_keeps_a_copy_of_the_gradient_and_lets_gradients_through():
  """tinygrad's clone() copies .grad (torch's does not); as in both, the clone is part of the graph: its gradient reaches
  the original."""
  a = Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
  (a * 5).sum().backward()
  b = a.clone()
  assert b.grad is not None and b.grad is not a.grad and b.grad.tolist() == a.grad.tolist() == [[5.0, 5.0], [5.0, 5.0]]
  x = Tensor([2.0, 3.0], requires_grad=True)
  (x.clone() * x.clone()).sum().backward()
  assert x.grad.tolist() == [4.0, 6.0]

def test_lists_of_numpy_arrays_and_dtype_errors_as_tinygrad():
  """A list of numpy arrays (0-d ones too) makes a tensor of their values, with the dtype the same list of Python numbers
  gets (tinygrad 0.10.3 makes any such list float); a dtype that is none is an AttributeError (tinygrad looks the name
  up on dtypes) that is also a TypeError."""
  for data in ([np.array([1, 2, 3]), np.array([4, 5, 6])], [np.array([1.5, 2.0]), np.array([1, 2])], [np.array(1.0), np.array(2.0)]):
    t = Tensor(data)
    np.testing.assert_array_equal(t.numpy(), tinygrad.Tensor(data).numpy())
    assert t.dtype is Tensor([np.asarray(a).tolist() for a in data]).dtype
  for bad in ("typo", (dtypes.int,)):
    with pytest.raises(AttributeError): Tensor([3], dtype=bad)
    with pytest.raises(TypeError): Tensor([3], dtype=bad)

def test_trunc_and_ceil_give_tinygrads_zero_floor_keeps_numpys_sign():
  """trunc and ceil of (-1, 0] are +0.0, as tinygrad 0.10 documents them (it truncates through an int); floor keeps
  -0.0 at -0.0, as numpy (tinygrad: +0.0)."""
  x = [-3.5, -1.5, -0.5, -0.0, 0.0, 0.5, 2.5, 1e30, -1e30, float("inf"), float("-inf")]
  for name in ("trunc", "ceil"):
    ours, theirs = getattr(Tensor(x), name)().numpy(), getattr(tinygrad.Tensor(x), name)().numpy()
    fin = np.isfinite(np.array(x)) & (np.abs(x) < 2**31)  # (tinygrad's int cast breaks past int32)
    np.testing.assert_array_equal(ours[fin], theirs[fin])
    assert (np.signbit(ours) == np.signbit(theirs))[fin].all() and not np.signbit(ours[np.abs(x) < 1]).any()
    np.testing.assert_array_equal(ours[~fin], getattr(np, name)(np.float32(x))[~fin])  # big and infinite values: numpy's
  np.testing.assert_array_equal(np.signbit(Tensor(x).floor().numpy()), np.signbit(np.floor(np.float32(x))))
