"""Padding modes and pooling as tinygrad 0.10.3 has them: torch (and numpy's np.pad) are the oracles of the values
and gradients, tinygrad 0.10.3 of which arguments are refused."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from lazynb import Tensor, dtypes

tinygrad = pytest.importorskip("tinygrad")
RNG = np.random.default_rng(31)
NP_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}

def _grad_check(f_ours, f_torch, a: np.ndarray, atol=1e-5):
  """Values and the gradient of sum(out * w) (w random, so every output place counts) against torch."""
  t, tt = Tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
  r, rr = f_ours(t), f_torch(tt)
  assert r.shape == tuple(rr.shape)
  w = RNG.standard_normal(r.shape).astype(np.float32)
  (r * Tensor(w)).sum().backward()
  (rr * torch.tensor(w)).sum().backward()
  np.testing.assert_allclose(r.numpy(), rr.detach().numpy(), atol=atol)
  np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), atol=atol)

# ---------------------------------------------------------------- pad modes
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("pad", [(1, 2), (0, 3, 2, 1), (2, 2, 1, 1), (3, 0, 0, 0)])
def test_pad_mode_torch(mode, pad):
  a = RNG.standard_normal((2, 3, 5, 4)).astype(np.float32)
  p4 = pad + (0, 0) * (2 - len(pad) // 2)
  _grad_check(lambda t: t.pad(pad, mode=mode), lambda t: F.pad(t, p4, mode=mode), a)

@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("pad", [(3, 0, -1, 2), (-2, 3, 0, 0), (2, -3, 1, -1), (-1, -1, -2, -1)])
def test_pad_mode_negative_torch(mode, pad):
  """A negative pad cuts after the edges are padded (reflect (-2, 3) mirrors the whole row, then cuts 2)."""
  a = RNG.standard_normal((2, 3, 5, 4)).astype(np.float32)
  _grad_check(lambda t: t.pad(pad, mode=mode), lambda t: F.pad(t, pad, mode=mode), a)

@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_mode_numpy_every_dim(mode):
  """Every dim padded, grouped pairs and None, any rank: against np.pad (torch pads at most the last three)."""
  a = RNG.integers(-50, 50, (3, 4, 5)).astype(np.int32)
  for pairs in [((1, 2), (3, 0), (2, 2)), (None, (0, 3), (1, 1)), ((2, 1), None, None)]:
    r = Tensor(a).pad(pairs, mode=mode)
    assert r.dtype == dtypes.int32
    np.testing.assert_equal(r.numpy(), np.pad(a, [(0, 0) if p is None else p for p in pairs], mode=NP_MODE[mode]))
  b = np.array([True, False, False])
  np.testing.assert_equal(Tensor(b).pad((2, 2), mode=mode).numpy(), np.pad(b, (2, 2), mode=NP_MODE[mode]))

def test_pad_mode_full_size():
  """The largest pads each mode takes: reflect n-1, circular n, replicate any."""
  a = np.arange(4, dtype=np.float32)
  for mode, p in [("reflect", 3), ("circular", 4), ("replicate", 9)]:
    np.testing.assert_equal(Tensor(a).pad((p, p), mode=mode).numpy(), np.pad(a, (p, p), mode=NP_MODE[mode]))

def _both_raise(f, cls):
  """tinygrad 0.10.3 refuses the call with cls, and so do we."""
  with pytest.raises(cls): f(tinygrad.Tensor)
  with pytest.raises(cls): f(Tensor)

@pytest.mark.parametrize("f, cls", [
  (lambda T: T.ones(2, 4).pad((1, 1), mode="foo"), NotImplementedError),
  (lambda T: T.ones(2, 4).pad((1, 1), mode="zeros"), NotImplementedError),
  (lambda T: T.ones(2, 4).pad((4, 0), mode="reflect"), ValueError),
  (lambda T: T.ones(2, 1).pad((1, 1), mode="reflect"), ValueError),
  (lambda T: T.ones(2, 4).pad((5, 0), mode="circular"), ValueError),
  (lambda T: T.ones(2, 4).pad((-1, 2), mode="circular"), NotImplementedError),
  (lambda T: T.ones(2, 4).pad((1, 1, 1)), ValueError),
  (lambda T: T.ones(2, 4).pad((1, 1, 1, 1, 1, 1)), ValueError),
  (lambda T: T.ones(2, 4).pad(((1, 1),)), ValueError),
])
def test_pad_errors_as_tinygrad(f, cls):
  _both_raise(f, cls)

def test_pad_value_with_edge_mode():
  """tinygrad 0.10.3 ignores value= in the edge modes (a silent surprise); we refuse it, as torch does. value=0 is the default."""
  with pytest.raises(ValueError, match="constant"): Tensor.ones(2, 4).pad((1, 1), mode="reflect", value=1.0)
  np.testing.assert_equal(Tensor.ones(2, 4).pad((1, 1), mode="reflect", value=0).numpy(), np.ones((2, 6)))
  np.testing.assert_equal(Tensor.ones(2, 4).pad((1, 1), "constant", 2.0).numpy(), np.pad(np.ones((2, 4)), ((0, 0), (1, 1)), constant_values=2))

# ---------------------------------------------------------------- pools
# (H, W, kernel, stride, padding, dilation): ceil_mode cases where the last window would start in the padding
# (so torch drops it: 5 with k2 s2 p1), odd strides, dilation, padding not counted
POOL_CASES = [(5, 5, 2, 2, 1, 1), (7, 6, 3, 2, 1, 1), (6, 7, 3, 3, 1, 1), (8, 5, 2, 3, 0, 1), (7, 7, 3, 2, 1, 2),
              (9, 6, (3, 2), (2, 3), (1, 0), (1, 2)), (4, 4, 3, 1, 1, 1), (6, 6, 2, 2, 0, 1), (5, 8, 4, 3, 2, 1)]

@pytest.mark.parametrize("H, W, k, s, p, d", POOL_CASES)
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_max_pool2d_torch(H, W, k, s, p, d, ceil_mode):
  a = RNG.standard_normal((2, 3, H, W)).astype(np.float32)
  _grad_check(lambda t: t.max_pool2d(k, s, d, p, ceil_mode=ceil_mode), lambda t: F.max_pool2d(t, k, s, p, d, ceil_mode=ceil_mode), a)
  out, idx = Tensor(a).max_pool2d(k, s, d, p, ceil_mode=ceil_mode, return_indices=True)
  tout, tidx = F.max_pool2d(torch.tensor(a), k, s, p, d, ceil_mode=ceil_mode, return_indices=True)
  assert idx.dtype == dtypes.int32
  np.testing.assert_equal(idx.numpy(), tidx.numpy())
  np.testing.assert_equal(out.numpy(), tout.numpy())

@pytest.mark.parametrize("H, W, k, s, p, d", [c for c in POOL_CASES if c[-1] == 1])
@pytest.mark.parametrize("ceil_mode, count_include_pad", [(False, True), (False, False), (True, True), (True, False)])
def test_avg_pool2d_torch(H, W, k, s, p, d, ceil_mode, count_include_pad):
  a = RNG.standard_normal((2, 3, H, W)).astype(np.float32)
  _grad_check(lambda t: t.avg_pool2d(k, s, 1, p, ceil_mode=ceil_mode, count_include_pad=count_include_pad),
              lambda t: F.avg_pool2d(t, k, s, p, ceil_mode=ceil_mode, count_include_pad=count_include_pad), a)

def test_max_pool_indices_ties_first():
  """Tied maxima: the first in the window (torch's choice), also across overlapping windows and in int tensors."""
  a = RNG.integers(0, 3, (1, 2, 7, 7)).astype(np.int32)
  for k, s, p in [(2, 2, 0), (3, 1, 1), (3, 2, 1)]:
    out, idx = Tensor(a).max_pool2d(k, s, 1, p, return_indices=True)
    tout, tidx = F.max_pool2d(torch.tensor(a, dtype=torch.float32), k, s, p, return_indices=True)
    assert out.dtype == dtypes.int32
    np.testing.assert_equal(out.numpy(), tout.numpy())
    np.testing.assert_equal(idx.numpy(), tidx.numpy())

def test_max_pool_indices_nan():
  """A window with NaN: the max is NaN and its index torch's (the last NaN), never a place outside the plane."""
  a = RNG.standard_normal((1, 2, 6, 6)).astype(np.float32)
  a[0, 0, 0, 0] = a[0, 0, 1, 3] = a[0, 1, 2, 2] = a[0, 1, 3, 3] = a[0, 1, 5, 5] = np.nan
  for k, s, p in [(2, 2, 0), (3, 1, 1), (3, 2, 1)]:
    out, idx = Tensor(a).max_pool2d(k, s, 1, p, return_indices=True)
    tout, tidx = F.max_pool2d(torch.tensor(a), k, s, p, return_indices=True)
    np.testing.assert_equal(out.numpy(), tout.numpy())
    np.testing.assert_equal(idx.numpy(), tidx.numpy())

def test_pool_dtypes_as_tinygrad():
  i = np.arange(50, dtype=np.int32).reshape(1, 2, 5, 5)
  for T in (tinygrad.Tensor, Tensor):
    assert str(T(i).avg_pool2d().dtype) == "dtypes.float" and str(T(i).max_pool2d().dtype) == "dtypes.int"
    assert str(T(i > 20).max_pool2d().dtype) == "dtypes.bool" and str(T(i > 20).avg_pool2d().dtype) == "dtypes.float"
    assert str(T(i).cast("half").avg_pool2d(padding=1, count_include_pad=False).dtype) == "dtypes.half"

# ---------------------------------------------------------------- unpool, fed by return_indices
@pytest.mark.parametrize("H, W, k, s, p", [(4, 4, 2, 2, 0), (6, 5, 3, 2, 1), (5, 5, 2, 2, 1), (7, 6, 3, 3, 0)])
def test_max_unpool2d_torch(H, W, k, s, p):
  a = RNG.standard_normal((2, 3, H, W)).astype(np.float32)
  out, idx = Tensor(a).max_pool2d(k, s, 1, p, return_indices=True)
  _, tidx = F.max_pool2d(torch.tensor(a), k, s, p, return_indices=True)
  osz = (H, W)
  _grad_check(lambda t: t.max_unpool2d(idx, k, s, 1, p, output_size=osz),
              lambda t: F.max_unpool2d(t, tidx, k, s, p, output_size=osz), out.numpy())

def test_max_unpool2d_default_size_and_3d():
  x = Tensor(RNG.standard_normal((1, 2, 4, 6, 4)).astype(np.float32))
  out, idx = x.max_pool2d((2, 2, 2), return_indices=True)
  tout, tidx = F.max_pool3d(torch.tensor(x.numpy()), 2, return_indices=True)
  np.testing.assert_equal(idx.numpy(), tidx.numpy())
  np.testing.assert_equal(out.max_unpool2d(idx, (2, 2, 2)).numpy(), F.max_unpool3d(tout, tidx, 2).numpy())
  np.testing.assert_equal(out.max_unpool2d(idx, (2, 2, 2), output_size=(1, 2, 4, 6, 4)).numpy(), F.max_unpool3d(tout, tidx, 2).numpy())

def test_max_unpool2d_errors():
  _both_raise(lambda T: T.ones(1, 1, 2, 2).max_unpool2d(T.ones(1, 1, 2, 2)), RuntimeError)  # float indices
  with pytest.raises(ValueError): Tensor.ones(1, 1, 2, 2).max_unpool2d(Tensor.ones(1, 1, 2, 3, dtype=dtypes.int32))

# ---------------------------------------------------------------- 1-D and 3-D pools: the kernel's length picks the dims
@pytest.mark.parametrize("k, s, p, d, ceil_mode", [(3, 2, 1, 1, True), (2, 1, 0, 2, False), ((2, 3, 2), (1, 2, 2), (1, 1, 0), 1, True)])
def test_pool3d_torch(k, s, p, d, ceil_mode):
  a = RNG.standard_normal((2, 2, 5, 6, 7)).astype(np.float32)
  k3 = (k,) * 3 if isinstance(k, int) else k
  _grad_check(lambda t: t.max_pool2d(k3, s, d, p, ceil_mode=ceil_mode), lambda t: F.max_pool3d(t, k, s, p, d, ceil_mode=ceil_mode), a)
  if d == 1:
    for cip in (True, False):
      _grad_check(lambda t: t.avg_pool2d(k3, s, 1, p, ceil_mode=ceil_mode, count_include_pad=cip),
                  lambda t: F.avg_pool3d(t, k, s, p, ceil_mode=ceil_mode, count_include_pad=cip), a)
  idx = Tensor(a).max_pool2d(k3, s, d, p, ceil_mode=ceil_mode, return_indices=True)[1]
  np.testing.assert_equal(idx.numpy(), F.max_pool3d(torch.tensor(a), k, s, p, d, ceil_mode=ceil_mode, return_indices=True)[1].numpy())

@pytest.mark.parametrize("ceil_mode", [False, True])
def test_pool1d_torch(ceil_mode):
  a = RNG.standard_normal((2, 3, 9)).astype(np.float32)
  _grad_check(lambda t: t.max_pool2d((3,), 2, 1, 1, ceil_mode=ceil_mode), lambda t: F.max_pool1d(t, 3, 2, 1, ceil_mode=ceil_mode), a)
  _grad_check(lambda t: t.avg_pool2d((3,), 2, 1, 1, ceil_mode=ceil_mode, count_include_pad=False),
              lambda t: F.avg_pool1d(t, 3, 2, 1, ceil_mode=ceil_mode, count_include_pad=False), a)

@pytest.mark.parametrize("f", [
  lambda T: T.ones(1, 1, 5, 5).max_pool2d(kernel_size=6),
  lambda T: T.ones(1, 1, 5, 5).max_pool2d(stride=0),
  lambda T: T.ones(1, 1, 5, 5).avg_pool2d(padding=(1, 1, 1)),
  lambda T: T.ones(1, 5, 5).max_pool2d(kernel_size=(1, 1, 2, 2)),
  lambda T: T.ones(1, 1, 5, 5).max_pool2d(kernel_size=(1, 1, 1, 2, 2)),
])
def test_pool_argument_errors(f):
  """Calls tinygrad 0.10.3 refuses (some with an assert or a ZeroDivisionError): ours say why, as a ValueError."""
  with pytest.raises(Exception): f(tinygrad.Tensor)
  with pytest.raises(ValueError): f(Tensor)

def test_pool_arguments_tinygrad_takes():
  """Padding bigger than half the kernel, or negative (a cut), which torch refuses: tinygrad 0.10.3 pools them, so do we."""
  a = RNG.standard_normal((1, 2, 6, 6)).astype(np.float32)
  for kw in [dict(kernel_size=2, padding=2), dict(kernel_size=3, padding=-1), dict(kernel_size=(2, 3), padding=(0, 2, 1, 0), ceil_mode=True)]:
    np.testing.assert_allclose(Tensor(a).max_pool2d(**kw).numpy(), tinygrad.Tensor(a).max_pool2d(**kw).numpy())
    np.testing.assert_allclose(Tensor(a).avg_pool2d(**kw).numpy(), tinygrad.Tensor(a).avg_pool2d(**kw).numpy(), atol=1e-6)

def _pool_sweep(sizes, kernels, strides, dilations):
  """Every small 1-D window geometry, ceil_mode on and off, against torch: the same output or both refuse."""
  for W in sizes:
    a = RNG.standard_normal((1, 1, W)).astype(np.float32)
    for k in kernels:
      for s in strides:
        for d in dilations:
          for p in range(k // 2 + 1):  # torch refuses padding over half the kernel
            for ceil_mode in (False, True):
              def ours(): return Tensor(a).max_pool2d((k,), s, d, p, ceil_mode=ceil_mode).numpy()
              try: want = F.max_pool1d(torch.tensor(a), k, s, p, d, ceil_mode=ceil_mode).numpy()
              except RuntimeError:
                with pytest.raises(ValueError): ours()
                continue
              np.testing.assert_equal(ours(), want, err_msg=f"W={W} k={k} s={s} d={d} p={p} ceil_mode={ceil_mode}")
              if d == 1:
                got = Tensor(a).avg_pool2d((k,), s, 1, p, ceil_mode=ceil_mode, count_include_pad=False).numpy()
                np.testing.assert_allclose(got, F.avg_pool1d(torch.tensor(a), k, s, p, ceil_mode=ceil_mode, count_include_pad=False).numpy(), rtol=1e-6)

def test_pool_window_hanging_past_the_end():
  """ceil_mode keeps a last window that starts inside the input however far it hangs past the end (a kernel of 3 over
  1 value with stride 3 pools that value, as torch); a window that would start past the end is dropped or refused."""
  x = Tensor([[[[3.5], [0.75], [0.5], [-1.25]]]])
  np.testing.assert_equal(x.max_pool2d(3, 3, ceil_mode=True).numpy(), [[[[3.5], [-1.25]]]])
  np.testing.assert_allclose(x.avg_pool2d(3, 3, ceil_mode=True).numpy(), [[[[1.5833334], [-1.25]]]])
  _pool_sweep(sizes=(1, 2), kernels=(2, 3), strides=(1, 3), dilations=(1, 2))

@pytest.mark.slow
def test_pool_window_geometry_sweep_torch():
  _pool_sweep(sizes=range(1, 6), kernels=range(1, 5), strides=range(1, 4), dilations=(1, 2))
