"""The Tensor methods of tinygrad 0.10 added for issue #12 (lazynb/tensor_math.py, lazynb/tensor_index.py), checked
against numpy and torch: values, dtypes, gradients and the errors of bad input."""
import math
import numpy as np
import pytest
import torch
from lazynb import Tensor, dtypes

RNG = np.random.default_rng(12)

def close(got, want, rtol=1e-5, atol=1e-6):
  want = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
  got = got.numpy() if isinstance(got, Tensor) else np.asarray(got)
  assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
  np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)

def grad_of(fn_lazynb, fn_torch, x: np.ndarray, **kw):
  """d sum(f(x) * w) / dx from both libraries (a random w, so that every output's gradient counts)."""
  t = Tensor(x, requires_grad=True)
  out = fn_lazynb(t)
  w = RNG.standard_normal(out.shape).astype(np.float32)
  (out * Tensor(w)).sum().backward()
  tt = torch.tensor(x, requires_grad=True)
  (fn_torch(tt) * torch.tensor(w)).sum().backward()
  close(t.grad, tt.grad, **kw)

# ---------------------------------------------------------------- trig
X_UNIT = np.array([-1, -0.999, -0.7, -0.3, -1e-5, 0, 1e-6, 0.2, 0.5, 0.9, 0.9999, 1, 1.5, -2, np.nan], np.float32)
X_ANY = np.array([-1e20, -88, -30, -3, -1, -0.04, -1e-4, 0, 1e-7, 0.02, 0.3, 1, 2.5, 10, 80, 1e20, np.inf, -np.inf, np.nan], np.float32)

@pytest.mark.parametrize("name,npf,x", [("asin", np.arcsin, X_UNIT), ("acos", np.arccos, X_UNIT), ("atanh", np.arctanh, X_UNIT),
                                        ("atan", np.arctan, X_ANY), ("sinh", np.sinh, X_ANY), ("cosh", np.cosh, X_ANY),
                                        ("asinh", np.arcsinh, X_ANY), ("acosh", np.arccosh, np.abs(X_ANY) + np.float32(1))])
def test_trig_matches_numpy(name, npf, x):
  with np.errstate(all="ignore"): want = npf(x.astype(np.float64)).astype(np.float32)
  got = getattr(Tensor(x), name)()
  assert got.dtype == dtypes.float32
  close(got, want, rtol=1e-5, atol=0)

@pytest.mark.parametrize("name", ["asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"])
def test_trig_dtypes_and_gradients(name):
  assert getattr(Tensor([0, 1]), name)().dtype == dtypes.float32
  assert getattr(Tensor([0.5], dtype=dtypes.float16), name)().dtype == dtypes.float16
  x = np.array([1.2, 1.7, 3.0], np.float32) if name == "acosh" else np.array([-0.8, -0.3, 0.0, 0.4, 0.9], np.float32)
  grad_of(lambda t: getattr(t, name)(), lambda t: getattr(torch, name)(t), x, rtol=1e-4)

# ---------------------------------------------------------------- elementwise helpers
def test_copysign_isfinite_isclose():
  a = np.array([1.0, -0.0, 2.0, -3.0, np.inf, 0.0], np.float32)
  b = np.array([-0.0, 1.0, -3.0, 2.0, -1.0, -2.0], np.float32)
  close(Tensor(a).copysign(Tensor(b)), np.copysign(a, b))
  assert np.array_equal(np.signbit(Tensor(a).copysign(Tensor(b)).numpy()), np.signbit(np.copysign(a, b)))
  close(Tensor(a).copysign(-1), np.copysign(a, -1))
  i = Tensor([-7, 5, 3])
  assert i.copysign(-1).dtype == dtypes.int32 and i.copysign(-1).tolist() == [-7, -5, -3]
  x = np.array([1.0, np.inf, -np.inf, np.nan, -0.0], np.float32)
  np.testing.assert_array_equal(Tensor(x).isfinite().numpy(), np.isfinite(x))
  assert Tensor([1, 2]).isfinite().dtype == dtypes.bool and Tensor([1, 2]).isfinite().tolist() == [True, True]
  p = np.array([1.0, np.nan, 1e-9, np.inf, np.inf, 100.0, 1.0], np.float32)
  q = np.array([1.00001, np.nan, 0.0, np.inf, -np.inf, 100.001, np.nan], np.float32)
  for kw in ({}, {"equal_nan": True}, {"rtol": 1e-3, "atol": 0.0}):
    np.testing.assert_array_equal(Tensor(p).isclose(Tensor(q), **kw).numpy(), np.isclose(p, q, **kw), err_msg=str(kw))

@pytest.mark.parametrize("dt", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64"])
def test_isclose_of_ints_as_numpy_at_the_edges(dt):
  """x - y must not wrap: uint8 0 and 255 are 255 apart, not 1 (they were close with atol=1), int8 127 and -128 too."""
  lo, hi = (0, 1) if dt == "bool" else (int(np.iinfo(dt).min), int(np.iinfo(dt).max))
  v = sorted({p for p in (lo, -3, -1, 0, 1, 2, hi) if lo <= p <= hi})
  a = np.array([p for p in v for _ in v], dtype=dt)
  b = np.array([q for _ in v for q in v], dtype=dt)
  for kw in ({}, {"atol": 1, "rtol": 0}, {"atol": 0, "rtol": 0.5}, {"atol": 300, "rtol": 0}):
    np.testing.assert_array_equal(Tensor(a).isclose(Tensor(b), **kw).numpy(), np.isclose(a, b, **kw), err_msg=f"{dt} {kw}")

def test_isclose_of_an_int_and_a_float_tensor_as_numpy():
  """numpy compares an int array with a float32 one in float64: 2**24 + 1 is not 2**24 (float32 has no 2**24 + 1)."""
  a, f = np.array([2**24 + 1, 2**31 - 1, -7, 3], np.int64), np.array([2.0**24, 2.0**31, -7.0, 3.5], np.float32)
  for kw in ({"rtol": 0, "atol": 0}, {"rtol": 0, "atol": 0.5}, {}):
    for p, q in ((a, f), (f, a), (a.astype(np.int32), f), (a, 3.0), (f, 3)):
      np.testing.assert_array_equal(Tensor(p).isclose(Tensor(q) if isinstance(q, np.ndarray) else q, **kw).numpy(), np.isclose(p, q, **kw),
                                    err_msg=f"{p.dtype} {getattr(q, 'dtype', type(q))} {kw}")

def test_bitwise_shifts_and_idiv():
  a, b = np.array([-7, 5, 3, 12, 0], np.int32), np.array([2, -3, 6, 5, 7], np.int32)
  A, B = Tensor(a), Tensor(b)
  np.testing.assert_array_equal(A.bitwise_and(B).numpy(), a & b)
  np.testing.assert_array_equal(A.bitwise_or(6, reverse=True).numpy(), 6 | a)
  np.testing.assert_array_equal(A.bitwise_xor(B).numpy(), a ^ b)
  np.testing.assert_array_equal(A.bitwise_not().numpy(), ~a)
  assert Tensor([True, False]).bitwise_not().tolist() == [False, True]
  np.testing.assert_array_equal(A.lshift(2).numpy(), a << 2)
  np.testing.assert_array_equal(A.rshift(1).numpy(), a >> 1)
  want = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode="trunc").numpy()
  got = A.idiv(B)
  assert got.dtype == dtypes.int32
  np.testing.assert_array_equal(got.numpy(), want)
  np.testing.assert_array_equal(B.idiv(7, reverse=True).numpy(), torch.div(7, torch.tensor(b), rounding_mode="trunc").numpy())
  f = Tensor([1.5])
  for bad in (lambda: f.bitwise_not(), lambda: f.bitwise_and(1), lambda: f.idiv(2), lambda: f.lshift(1)):
    with pytest.raises(TypeError): bad()

def test_const_like_size_bytes():
  t = Tensor.ones(2, 3, dtype=dtypes.uint8)
  c = t.const_like(7)
  assert c.dtype == dtypes.uint8 and c.tolist() == [[7] * 3] * 2
  assert t.size() == (2, 3) and t.size(1) == 3 and t.size(-2) == 2
  assert t.numel() == 6 and t.element_size() == 1 and t.nbytes() == 6
  assert Tensor.zeros(4, 5).nbytes() == 80

# ---------------------------------------------------------------- cumulative ops, sort, topk
def test_cumulative_ops_match_torch():
  x = RNG.standard_normal((3, 5)).astype(np.float32)
  for axis in (0, 1, -1):
    close(Tensor(x).cummax(axis), torch.cummax(torch.tensor(x), axis).values)
    close(Tensor(x).cumprod(axis), torch.cumprod(torch.tensor(x), axis))
    close(Tensor(x).logcumsumexp(axis), torch.logcumsumexp(torch.tensor(x), axis))
  i = np.array([[1, 3, -2], [2, 0, 4]], np.int32)
  assert Tensor(i).cummax(1).dtype == dtypes.int32 and Tensor(i).cumprod(1).dtype == dtypes.int32
  np.testing.assert_array_equal(Tensor(i).cummax(1).numpy(), np.maximum.accumulate(i, 1))
  np.testing.assert_array_equal(Tensor(i).cumprod(1).numpy(), np.cumprod(i, 1))
  for small in (np.int8, np.uint8, np.int16, np.bool_):  # widened as prod and cumsum are (numpy and torch too): no int8 wrap at 100 * 3
    s = np.array([[100, 3, 1], [1, 0, 2]]).astype(small)
    assert Tensor(s).cumprod(1).dtype == Tensor(s).cumsum(1).dtype == Tensor(s).prod().dtype, small
    np.testing.assert_array_equal(Tensor(s).cumprod(1).numpy(), np.cumprod(s, 1), err_msg=str(small))
  assert Tensor([1, 2, 3]).logcumsumexp().dtype == dtypes.float32
  e = np.array([-np.inf, -1000.0, 0.0, -np.inf], np.float32)  # no overflow, no -inf - -inf
  close(Tensor(e).logcumsumexp(), torch.logcumsumexp(torch.tensor(e), 0))
  grad_of(lambda t: t.cumprod(1), lambda t: torch.cumprod(t, 1), x)
  grad_of(lambda t: t.logcumsumexp(0), lambda t: torch.logcumsumexp(t, 0), x, rtol=1e-4)
  grad_of(lambda t: t.cummax(1), lambda t: torch.cummax(t, 1).values, x)

@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_torch(descending):
  cases = [np.array([3, 1, 2, 1, np.nan, -np.inf, 2, np.inf, np.nan, 0], np.float32), RNG.standard_normal((4, 7)).astype(np.float32),
           RNG.integers(-3, 3, (3, 9)).astype(np.int32), np.array([5, 4, 3, 2, 1], np.int32), np.array([7.0], np.float32)]
  for x in cases:
    for dim in ((-1, 0) if x.ndim > 1 else (-1,)):
      v, i = Tensor(x).sort(dim, descending=descending)
      tv, ti = torch.sort(torch.tensor(x), dim=dim, descending=descending, stable=True)
      assert v.dtype == Tensor(x).dtype and i.dtype == dtypes.int32
      close(v, tv, rtol=0, atol=0)
      np.testing.assert_array_equal(i.numpy(), ti.numpy(), err_msg=f"{x} dim={dim}")
  b = np.array([True, False, True, False])
  v, i = Tensor(b).sort(descending=descending)
  assert v.dtype == dtypes.bool
  tv, ti = torch.sort(torch.tensor(b), descending=descending, stable=True)
  np.testing.assert_array_equal(v.numpy(), tv.numpy())
  np.testing.assert_array_equal(i.numpy(), ti.numpy())

def test_sort_and_topk_gradients_and_topk_values():
  x = RNG.permutation(12).reshape(3, 4).astype(np.float32)  # distinct values: the order is unique
  grad_of(lambda t: t.sort(1, descending=True)[0], lambda t: torch.sort(t, 1, descending=True)[0], x)
  for k, largest, dim in [(2, True, -1), (3, False, 1), (2, True, 0), (0, True, -1), (4, False, -1)]:
    v, i = Tensor(x).topk(k, dim, largest)
    tv, ti = torch.topk(torch.tensor(x), k, dim, largest)
    close(v, tv, rtol=0, atol=0)
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
  grad_of(lambda t: t.topk(2, 1)[0], lambda t: torch.topk(t, 2, 1)[0], x)
  with pytest.raises(ValueError): Tensor([1.0, 2.0]).topk(3)

# ---------------------------------------------------------------- shape helpers
def test_triu_tril_roll_repeat_interleave():
  x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
  for d in (-2, -1, 0, 1, 3):
    close(Tensor(x).triu(d), np.triu(x, d))
    close(Tensor(x).tril(d), np.tril(x, d))
  assert Tensor.ones(3, 3, dtype=dtypes.int32).tril().dtype == dtypes.int32
  np.testing.assert_array_equal(Tensor(np.ones((3, 3), bool)).triu().numpy(), np.triu(np.ones((3, 3), bool)))
  with pytest.raises(IndexError): Tensor.ones(3).triu()
  for shifts, dims in [(1, 1), ((1, -4), (0, 2)), (7, -1), (-2, 0), (0, 1)]:
    close(Tensor(x).roll(shifts, dims), np.roll(x, shifts, dims))
  with pytest.raises(ValueError): Tensor(x).roll((1, 2), 0)
  i = np.array([[1, 2], [3, 4]], np.int32)
  np.testing.assert_array_equal(Tensor(i).repeat_interleave(2).numpy(), np.repeat(i, 2))
  np.testing.assert_array_equal(Tensor(i).repeat_interleave(3, 1).numpy(), np.repeat(i, 3, 1))
  assert Tensor(i).repeat_interleave(0, 0).shape == (0, 2)
  grad_of(lambda t: t.roll(2, 1).triu(), lambda t: torch.triu(torch.roll(t, 2, 1)), x[0])

def test_std_mean_var_mean_meshgrid_linspace():
  x = RNG.standard_normal((3, 4)).astype(np.float32)
  for axis, corr in [(None, 1), (1, 0), (0, 1)]:
    s, m = Tensor(x).std_mean(axis, correction=corr)
    ts, tm = torch.std_mean(torch.tensor(x), dim=axis, correction=corr)
    close(s, ts)
    close(m, tm)
    v, m = Tensor(x).var_mean(axis, keepdim=True, correction=corr)
    tv, tm = torch.var_mean(torch.tensor(x), dim=axis, keepdim=True, correction=corr)
    close(v, tv)
    close(m, tm)
  a, b, c = np.array([1, 2, 3]), np.array([4, 5]), np.array([6, 7, 8, 9])
  for indexing in ("ij", "xy"):
    got = Tensor(a).meshgrid(Tensor(b), Tensor(c), indexing=indexing)
    for g, w in zip(got, np.meshgrid(a, b, c, indexing=indexing)): np.testing.assert_array_equal(g.numpy(), w)
  with pytest.raises(RuntimeError): Tensor(a).meshgrid(Tensor(b), indexing="ab")
  for args in [(0, 1, 5), (-3.5, 2, 7), (2, 3, 1), (2, 3, 0), (10, 0, 4)]:
    close(Tensor.linspace(*args), np.linspace(*args, dtype=np.float32))
  got = Tensor.linspace(0, 10, 4, dtype=dtypes.int32)
  assert got.dtype == dtypes.int32 and got.tolist() == np.linspace(0, 10, 4).astype(np.int32).tolist()
  with pytest.raises(ValueError): Tensor.linspace(0, 1, -1)

# ---------------------------------------------------------------- einsum, rearrange, interpolate
@pytest.mark.parametrize("formula,shapes", [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii", [(3, 3)]),
                                            ("ii->i", [(3, 3)]), ("ij->", [(2, 3)]), ("ba", [(2, 3)]), ("i,j->ij", [(2,), (3,)]),
                                            ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("...j,jk->...k", [(2, 5, 3), (3, 4)]),
                                            ("i,i", [(4,), (4,)]), ("ijk->kji", [(2, 3, 4)]), ("ij,ij->i", [(3, 4), (3, 4)]),
                                            ("iij->j", [(3, 3, 2)])])
def test_einsum_matches_numpy(formula, shapes):
  ops = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
  close(Tensor.einsum(formula, *[Tensor(o) for o in ops]), np.einsum(formula, *ops), rtol=1e-5, atol=1e-5)
  close(Tensor.einsum(formula, [Tensor(o) for o in ops]), np.einsum(formula, *ops), rtol=1e-5, atol=1e-5)

def test_einsum_dtypes_gradient_errors():
  got = Tensor.einsum("i,i", Tensor([1, 2, 3]), Tensor([100, 100, 100]))
  assert got.dtype == dtypes.int32 and got.item() == 600
  assert Tensor.einsum("i,i", Tensor([1.0, 2.0]), Tensor([3.0, 4.0]), dtype=dtypes.float16).dtype == dtypes.float16
  a, b = RNG.standard_normal((2, 3)).astype(np.float32), RNG.standard_normal((3, 4)).astype(np.float32)
  grad_of(lambda t: Tensor.einsum("ij,jk->ik", t, Tensor(b)), lambda t: torch.einsum("ij,jk->ik", t, torch.tensor(b)), a)
  with pytest.raises(ValueError): Tensor.einsum("ij,jk->ik", Tensor(a), Tensor(a))
  with pytest.raises(ValueError): Tensor.einsum("ij,jk->ik", Tensor(a))

def test_rearrange_matches_numpy():
  x = np.arange(24).reshape(2, 3, 4)
  T = Tensor(x.astype(np.int32))
  np.testing.assert_array_equal(T.rearrange("a b c -> c (a b)").numpy(), x.transpose(2, 0, 1).reshape(4, 6))
  np.testing.assert_array_equal(Tensor(np.arange(6)).rearrange("(h w) -> w h", h=2).numpy(), np.arange(6).reshape(2, 3).T)
  assert Tensor(np.arange(6)).rearrange("a -> a 1").shape == (6, 1)
  np.testing.assert_array_equal(T.rearrange("a ... -> ... a").numpy(), x.transpose(1, 2, 0))
  np.testing.assert_array_equal(T.rearrange("a b (c d) -> (a c) b d", d=2).numpy(), x.reshape(2, 3, 2, 2).transpose(0, 2, 1, 3).reshape(4, 3, 2))
  for bad in ("a b -> a", "a b c -> a b d", "a b -> a b", "a b c d -> a b c d"):
    with pytest.raises(ValueError): T.rearrange(bad)

@pytest.mark.parametrize("mode,align", [("linear", False), ("linear", True), ("nearest", False), ("nearest-exact", False)])
def test_interpolate_matches_torch(mode, align):
  F = torch.nn.functional
  for shape, size in [((1, 2, 5), (8,)), ((1, 1, 6), (4,)), ((2, 1, 3, 4), (5, 7)), ((1, 2, 5, 4), (2, 3)), ((1, 1, 2, 2, 3), (3, 4, 2))]:
    x = RNG.standard_normal(shape).astype(np.float32)
    tmode = {"linear": ["linear", "bilinear", "trilinear"][len(size) - 1]}.get(mode, mode)
    want = F.interpolate(torch.tensor(x), size=size, mode=tmode, **({"align_corners": align} if mode == "linear" else {}))
    close(Tensor(x).interpolate(size, mode=mode, align_corners=align), want, rtol=1e-5, atol=1e-5)
  if mode == "linear" and not align:
    x = RNG.standard_normal((1, 1, 3, 4)).astype(np.float32)
    grad_of(lambda t: t.interpolate((5, 6)), lambda t: F.interpolate(t, size=(5, 6), mode="bilinear"), x)
    got = Tensor(np.arange(4, dtype=np.int32).reshape(1, 1, 2, 2)).interpolate((3, 3))
    assert got.dtype == dtypes.int32 and got.numpy().reshape(3, 3).tolist() == [[0, 0, 1], [1, 1, 2], [2, 2, 3]]  # as tinygrad: truncated
  with pytest.raises(ValueError): Tensor.ones(1, 1, 3).interpolate((4,), mode="cubic")

@pytest.mark.parametrize("align", [False, True])
def test_interpolate_uint8_images_match_torch_exactly(align):
  """uint8 bilinear as torch computes it (fixed-point weights, rounded after each axis), not a truncated float mix:
  every value equal over up- and downsampling, small and full-range pixels (tinygrad's TestOpsUint8 checks one case)."""
  for hi in (40, 256):
    x = torch.tensor(RNG.integers(0, hi, (2, 3, 64, 64)).astype(np.uint8))
    for size in [(10, 10), (100, 37), (64, 64), (7, 130), (2, 3), (3, 200)]:
      want = torch.nn.functional.interpolate(x, size=size, mode="bilinear", align_corners=align).numpy()
      got = Tensor(x.numpy()).interpolate(size, align_corners=align)
      assert got.dtype == dtypes.uint8
      np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{hi} {size}")

# ---------------------------------------------------------------- gather, scatter, masks
def test_gather_matches_torch():
  x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
  for dim, ishape in [(0, (2, 4, 5)), (1, (3, 6, 2)), (2, (1, 2, 7)), (-1, (3, 4, 1))]:
    idx = RNG.integers(0, x.shape[dim], ishape)
    close(Tensor(x).gather(dim, Tensor(idx)), torch.gather(torch.tensor(x), dim, torch.tensor(idx)), rtol=0, atol=0)
    grad_of(lambda t: t.gather(dim, Tensor(idx)), lambda t: torch.gather(t, dim, torch.tensor(idx)), x)
  b = np.array([[True, False], [False, True]])
  np.testing.assert_array_equal(Tensor(b).gather(1, Tensor([[1, 1], [0, 1]])).numpy(), np.take_along_axis(b, np.array([[1, 1], [0, 1]]), 1))
  with pytest.raises(TypeError): Tensor(x).gather(1, Tensor(np.zeros((3, 1, 5), np.float32)))
  with pytest.raises(ValueError): Tensor(x).gather(1, Tensor(np.zeros((3, 1), np.int32)))
  with pytest.raises(ValueError): Tensor(x).gather(1, Tensor(np.zeros((4, 1, 5), np.int32)))

def test_scatter_matches_torch():
  x = RNG.standard_normal((3, 5)).astype(np.float32)
  src = RNG.standard_normal((3, 5)).astype(np.float32)
  for dim in (0, 1):
    idx = np.stack([RNG.permutation(x.shape[dim])[:2] for _ in range(3)], 0) if dim == 1 else np.stack([RNG.permutation(3)[:2] for _ in range(4)], 1)
    want = torch.tensor(x).scatter(dim, torch.tensor(idx), torch.tensor(src))
    close(Tensor(x).scatter(dim, Tensor(idx), Tensor(src)), want, rtol=0, atol=0)
    close(Tensor(x).scatter(dim, Tensor(idx), 2.5), torch.tensor(x).scatter(dim, torch.tensor(idx), 2.5), rtol=0, atol=0)
    for r in ("add", "multiply"):
      close(Tensor(x).scatter(dim, Tensor(idx), 2.0, reduce=r), torch.tensor(x).scatter(dim, torch.tensor(idx), 2.0, reduce=r), rtol=1e-6)
  dup = Tensor.zeros(2, 3).scatter(1, Tensor([[1, 1], [2, 0]]), Tensor([[9.0, 10.0], [7.0, 8.0]]))  # the last write wins, as tinygrad
  assert dup.tolist() == [[0.0, 10.0, 0.0], [8.0, 0.0, 7.0]]
  with pytest.raises(TypeError): Tensor(x).scatter(0, Tensor([[0]]), Tensor([[1.0]]), reduce="add")
  with pytest.raises(TypeError): Tensor(x).scatter(0, Tensor([[0]]), 1.0, reduce="max")
  with pytest.raises(RuntimeError): Tensor.zeros(2, 3, dtype=dtypes.int32).scatter(1, Tensor([[0]]), Tensor([[1.5]]))

@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_matches_torch(reduce, include_self):
  x = RNG.standard_normal((3, 5)).astype(np.float32)
  src = RNG.standard_normal((3, 4)).astype(np.float32)
  idx = RNG.integers(0, 5, (3, 4))  # repeats: several sources meet at a place, some places get none
  want = torch.tensor(x).scatter_reduce(1, torch.tensor(idx), torch.tensor(src), reduce, include_self=include_self)
  close(Tensor(x).scatter_reduce(1, Tensor(idx), Tensor(src), reduce, include_self=include_self), want, rtol=1e-5)
  if reduce in ("sum", "mean"):
    grad_of(lambda t: Tensor(x).scatter_reduce(1, Tensor(idx), t, reduce, include_self=include_self),
            lambda t: torch.tensor(x).scatter_reduce(1, torch.tensor(idx), t, reduce, include_self=include_self), src)

def test_scatter_reduce_ints_and_errors():
  got = Tensor([[1, 2, 3]]).scatter_reduce(1, Tensor([[2, 2]]), Tensor([[7, 8]]), reduce="mean")
  assert got.dtype == dtypes.float32 and got.tolist() == [[1.0, 2.0, 6.0]]  # as tinygrad (torch floors it to an int)
  got = Tensor([[1, 2, 3]]).scatter_reduce(1, Tensor([[2, 0]]), Tensor([[7, -8]]), reduce="amax")
  assert got.dtype == dtypes.int32 and got.tolist() == [[1, 2, 7]]
  with pytest.raises(RuntimeError): Tensor([[1, 2]]).scatter_reduce(1, Tensor([[0]]), Tensor([[1]]), reduce="max")

def test_masked_fill_and_masked_select():
  x = RNG.standard_normal((3, 4)).astype(np.float32)
  m = x > 0.2
  close(Tensor(x).masked_fill(Tensor(m), -1.0), torch.tensor(x).masked_fill(torch.tensor(m), -1.0))
  close(Tensor(x).masked_fill(Tensor(m[0]), Tensor(9.0)), np.where(m[0], 9.0, x))
  got = Tensor([1, 2]).masked_fill(Tensor([True, False]), 2.5)
  assert got.dtype == dtypes.float32 and got.tolist() == [2.5, 2.0]
  close(Tensor(x).masked_select(Tensor(m)), x[m])
  close(Tensor(x).masked_select(Tensor(m[1])), torch.masked_select(torch.tensor(x), torch.tensor(m[1])))
  assert Tensor(x).masked_select(Tensor(x > 100)).shape == (0,)
  grad_of(lambda t: t.masked_select(Tensor(m)), lambda t: torch.masked_select(t, torch.tensor(m)), x)

# ---------------------------------------------------------------- x[idx] and x[idx] = v with index tensors
A = np.arange(60).reshape(3, 4, 5).astype(np.float32)
INDICES = [lambda T: (T([2, 0, -1]),), lambda T: (T([[0], [2]]), T([1, 3])), lambda T: (slice(None), T([3, 0, -1])),
           lambda T: (T([0, 1]), slice(None), T([1, 2])), lambda T: (1, T([0, 3]), slice(None)), lambda T: (None, T([1]), Ellipsis, 2),
           lambda T: (T([0, 1]), slice(1, None), None, T([[1], [2]])), lambda T: (Ellipsis, T([4, 0])), lambda T: (slice(None), T([[1, 2]]), T([2])),
           lambda T: (T([1, 1, 0]), T([0, 0, 3]), T([4, 4, 2])), lambda T: ([0, 2], slice(None, None, 2)),
           lambda T: (T([0, 2]), slice(None, None, -2), T([1, 3]))]

@pytest.mark.parametrize("k", range(len(INDICES)))
def test_getitem_with_index_tensors_matches_numpy(k):
  def as_np(i): return np.asarray(i.numpy()) if isinstance(i, Tensor) else i
  idx = INDICES[k](lambda v: Tensor(np.array(v, np.int32)))
  want = A[tuple(as_np(i) for i in idx)]
  close(Tensor(A)[idx], want, rtol=0, atol=0)
  if not any(isinstance(i, slice) and (i.step or 1) < 0 for i in idx):  # torch has no negative steps
    grad_of(lambda t: t[idx], lambda t: t[tuple(torch.tensor(as_np(i)) if isinstance(i, (Tensor, list)) else i for i in idx)], A)

@pytest.mark.parametrize("dt", ["int8", "uint8", "int16", "uint16"])
def test_narrow_int_index_tensors_reach_every_row(dt):
  """An int8 index may count from the end of an axis longer than int8 reaches (-1 of 300 rows is row 299), as numpy."""
  big = np.arange(600, dtype=np.float32).reshape(300, 2)
  i = np.array([1, -1, 5, -128] if dt[0] == "i" else [1, 255, 5, 250], dtype=dt)
  np.testing.assert_array_equal(Tensor(big)[Tensor(i)].numpy(), big[i])
  t, want = Tensor(big.copy()).contiguous().realize(), big.copy()
  t[Tensor(i)] = 7.0
  want[i] = 7.0
  np.testing.assert_array_equal(t.numpy(), want)

def test_an_int_index_is_basic_as_in_tinygrad():
  # numpy counts the int in A[1, :, [0, 4]] as an advanced index (its axes go first: shape (2, 4)); tinygrad 0.10 applies
  # it first, as a basic index (A[1][:, [0, 4]], shape (4, 2)), and so does lazynb
  close(Tensor(A)[1, :, Tensor([0, 4])], A[1][:, [0, 4]], rtol=0, atol=0)
  t, want = Tensor(A.copy()).contiguous().realize(), A.copy()
  t[1, :, Tensor([0, 4])] = Tensor(np.arange(8, dtype=np.float32).reshape(4, 2))
  want[1][:, [0, 4]] = np.arange(8).reshape(4, 2)
  np.testing.assert_array_equal(t.numpy(), want)

def test_getitem_index_tensor_errors_and_out_of_range():
  with pytest.raises(IndexError): Tensor(A)[Tensor([0.0])]
  with pytest.raises(IndexError): Tensor(A)[Tensor([True, False, True])]
  assert Tensor(A)[Tensor([5])].numpy().tolist() == np.zeros((1, 4, 5)).tolist()  # out of range reads 0, as tinygrad

@pytest.mark.parametrize("k", range(len(INDICES)))
def test_setitem_with_index_tensors_matches_numpy(k):
  idx = INDICES[k](lambda v: Tensor(np.array(v, np.int32)))
  np_idx = tuple(np.asarray(i.numpy()) if isinstance(i, Tensor) else i for i in idx)
  shape = A[np_idx].shape
  for value in (7.0, np.float32(-3), RNG.standard_normal(shape[-1:]).astype(np.float32), RNG.standard_normal(shape).astype(np.float32)):
    t, want = Tensor(A.copy()).contiguous().realize(), A.copy()
    t[idx] = Tensor(value) if isinstance(value, np.ndarray) else value
    want[np_idx] = value
    np.testing.assert_array_equal(t.numpy(), want)

def test_setitem_duplicates_dtypes_views_and_self_reads():
  t = Tensor(np.arange(12, dtype=np.int32).reshape(3, 4)).contiguous().realize()
  t[Tensor([1, 1])] = Tensor([[1, 2, 3, 4], [5, 6, 7, 8]])  # the last write wins, as numpy and tinygrad
  w = np.arange(12, dtype=np.int32).reshape(3, 4)
  w[[1, 1]] = [[1, 2, 3, 4], [5, 6, 7, 8]]
  np.testing.assert_array_equal(t.numpy(), w)
  t[Tensor([0, 0, 0]), Tensor([1, 1, 1])] = Tensor([7, 8, 9])
  assert t.numpy()[0, 1] == 9
  t[Tensor([2])] = Tensor([2.7, -1.2, 3.9, 0.0])  # another dtype is cast, as tinygrad
  assert t.dtype == dtypes.int32 and t.numpy()[2].tolist() == [2, -1, 3, 0]
  base = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4)).contiguous().realize()
  view = base[1:]
  view[Tensor([0])] = 99.0  # a view writes into the tensor it views
  assert base.numpy()[1].tolist() == [99.0] * 4 and base.numpy()[0].tolist() == [0, 1, 2, 3]
  x = Tensor(np.arange(5, dtype=np.float32)).contiguous().realize()
  before = x * 1
  x[Tensor([1, 2, 3])] = x[Tensor([0, 1, 2])] * 10  # the value reads x before the write
  assert x.tolist() == [0.0, 0.0, 10.0, 20.0, 4.0] and before.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
  lazy = Tensor.arange(6).reshape(2, 3)
  lazy[Tensor([1])] = 0
  assert lazy.tolist() == [[0, 1, 2], [0, 0, 0]]
  with pytest.raises(ValueError): t[Tensor([0])] = Tensor([1, 2])

# ---------------------------------------------------------------- constructors, *_like, empty reductions, gradients of intermediates
def test_random_constructors():
  Tensor.manual_seed(3)
  p = Tensor.randperm(50)
  assert p.dtype == dtypes.int32 and sorted(p.tolist()) == list(range(50))
  assert Tensor.randperm(5, dtype=dtypes.int64).dtype == dtypes.int64
  w = np.array([0.1, 0.0, 0.6, 0.3], np.float32)
  s = Tensor(w).multinomial(20000, replacement=True)
  assert s.shape == (20000,) and s.dtype == dtypes.int32
  freq = np.bincount(s.numpy(), minlength=4) / 20000
  np.testing.assert_allclose(freq, w, atol=0.02)
  assert freq[1] == 0
  s2 = Tensor([[0.0, 1.0, 0.0], [5.0, 0.0, 0.0]]).multinomial(3, replacement=True)
  assert s2.tolist() == [[1, 1, 1], [0, 0, 0]]
  picks = Tensor([[1.0, 0.0, 2.0, 3.0]] * 200).multinomial(3)  # without replacement: distinct, never the zero weight
  assert all(len(set(r)) == 3 and 1 not in r for r in picks.tolist())
  with pytest.raises(ValueError): Tensor.ones(1, 1, 2).multinomial()
  with pytest.raises(ValueError): Tensor.ones(3).multinomial(4)
  with pytest.raises(AssertionError): Tensor.ones(3).multinomial(4)  # (tinygrad's class for it)
  k = Tensor.kaiming_normal(256, 512).numpy()
  assert abs(k.std() - math.sqrt(2 / (1 + 0.01 ** 2)) / math.sqrt(512)) < 3e-3 and abs(k.mean()) < 3e-3
  g = Tensor.glorot_uniform(64, 32).numpy()
  bound = math.sqrt(6 / (64 + 32))
  assert g.min() >= -bound and g.max() <= bound and g.max() > 0.9 * bound
  u = Tensor.uniform(3, 4, low=-2, high=5, requires_grad=True)
  assert u.requires_grad and u.numpy().min() >= -2 and u.numpy().max() < 5
  (u * 3).sum().backward()
  np.testing.assert_array_equal(u.grad.numpy(), np.full((3, 4), 3.0, np.float32))

def test_like_constructors_keep_the_dtype():
  t = Tensor([1, 2, 3], dtype=dtypes.uint8)
  assert t.zeros_like().dtype == t.ones_like().dtype == t.randn_like().dtype == dtypes.uint8
  assert t.full_like(2.5).dtype == dtypes.uint8 and t.full_like(2.5).tolist() == [2, 2, 2]
  h = Tensor([1.0], dtype=dtypes.float16)
  assert h.rand_like().dtype == h.randn_like().dtype == dtypes.float16
  assert h.full_like(3, dtype=dtypes.int32).dtype == dtypes.int32 and h.rand_like(dtype=dtypes.float32).dtype == dtypes.float32
  assert h.zeros_like(requires_grad=True).requires_grad
  with pytest.raises(ValueError): t.rand_like()
  for f in (Tensor.empty_like, Tensor.zeros_like, Tensor.ones_like, Tensor.randn_like, Tensor.rand_like):  # dtype= and device= as tinygrad
    got = f(h, dtype=dtypes.float32, device="PYTHON")
    assert got.dtype == dtypes.float32 and got.device == "PYTHON" and got.shape == h.shape and f(h).device == h.device

def test_reductions_of_empty_tensors():
  e = Tensor([])
  assert e.max().item() == -math.inf and e.min().item() == math.inf
  assert e.sum().item() == 0 and e.prod().item() == 1 and math.isnan(e.mean().item())
  assert math.isnan(e.std().item()) and e.logsumexp().item() == -math.inf
  assert Tensor(np.zeros(0, np.int32)).max().item() == np.iinfo(np.int32).min
  z = np.zeros((2, 0), np.float32)
  close(Tensor(z).max(1), np.max(z, 1, initial=-np.inf))
  close(Tensor(z).min(1, keepdim=True), np.min(z, 1, keepdims=True, initial=np.inf))

def test_gradients_of_intermediates_as_torch_retain_grad():
  x0 = np.array([0.5, -1.0, 2.0], np.float32)
  x = Tensor(x0, requires_grad=True)
  y = x * 2
  w = y.exp()
  z = (w * 3).sum()
  d = x.detach() * 5  # not computed from x through a gradient: no .grad, as tinygrad
  z.backward()
  tx = torch.tensor(x0, requires_grad=True)
  ty = tx * 2
  tw = ty.exp()
  tz = (tw * 3).sum()
  for t in (ty, tw, tz): t.retain_grad()
  tz.backward()
  close(y.grad, ty.grad)
  close(w.grad, tw.grad)
  close(z.grad, tz.grad)
  close(x.grad, tx.grad)
  assert d.grad is None
  v = Tensor([1.0, 2.0], requires_grad=True)
  q = (v * 2).realize()  # realized before backward: still its gradient
  (q * q).sum().backward()
  assert q.grad.tolist() == [4.0, 8.0] and v.grad.tolist() == [8.0, 16.0]

def test_requires_grad_to_replace_contiguous_backward():
  t = Tensor([1.0, 2.0])
  assert t.requires_grad_() is t and t.requires_grad is True
  assert t.to_("CPU") is t and t.device == "CPU" and t.tolist() == [1.0, 2.0]
  r = Tensor([0.0, 0.0])
  assert r.replace(Tensor([3.0, 4.0])) is r and r.tolist() == [3.0, 4.0]
  with pytest.raises(ValueError): r.replace(Tensor([1.0]))
  assert r.replace(Tensor([1.0]), allow_shape_mismatch=True).shape == (1,)
  c = Tensor([1.0, 2.0], requires_grad=True)
  (c.contiguous_backward() * 3).sum().backward()
  assert c.grad.tolist() == [3.0, 3.0]

@pytest.mark.parametrize("shape,kw", [((2, 3, 6, 6), dict(kernel_size=2)), ((2, 3, 7, 5), dict(kernel_size=3, stride=2, padding=1)),
                                      ((1, 2, 6, 7), dict(kernel_size=(2, 3), stride=(1, 2))), ((1, 1, 5, 5), dict(kernel_size=2, dilation=2))])
def test_max_unpool2d_matches_torch(shape, kw):
  F = torch.nn.functional
  x = RNG.standard_normal(shape).astype(np.float32)
  v, i = F.max_pool2d(torch.tensor(x), return_indices=True, **kw)
  want = F.max_unpool2d(v, i, output_size=shape[2:], **{k: a for k, a in kw.items() if k != "dilation"})  # torch's has no dilation
  close(Tensor(v.numpy()).max_unpool2d(Tensor(i.numpy()), output_size=shape, **kw), want, rtol=0, atol=0)
  if shape == (2, 3, 6, 6):  # the default output size
    close(Tensor(v.numpy()).max_unpool2d(Tensor(i.numpy().astype(np.int32)), **kw), F.max_unpool2d(v, i, **kw), rtol=0, atol=0)
    grad_of(lambda t: t.max_unpool2d(Tensor(i.numpy()), **kw), lambda t: F.max_unpool2d(t, i, **kw), v.numpy())
  got = Tensor([[[[1, 2], [3, 4]]]]).max_unpool2d(Tensor([[[[0, 3], [8, 15]]]]))
  assert got.dtype == dtypes.int32 and got.numpy().reshape(4, 4).tolist() == [[1, 0, 0, 2], [0, 0, 0, 0], [3, 0, 0, 0], [0, 0, 0, 4]]

def test_from_uop():
  t = Tensor([1.0, 2.0]) * 3
  u = Tensor.from_uop(t.uop)
  assert u.uop is t.uop and u.tolist() == [3.0, 6.0]
