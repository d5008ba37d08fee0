"""lazynb.nn layers checked against torch.nn with copied weights: outputs, gradients, training/eval behaviour.
Open bugs found here are marked xfail(strict=True) with a `bug:` reason.
"""
import numpy as np
import pytest
from lazynb import Tensor, dtypes
from lazynb import nn
from lazynb.nn.state import get_parameters

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

def rnd(*shape, seed=0, scale=1.0):
  return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)

def T(a): return torch.tensor(np.asarray(a))

def copy_into(lz, tm, names=("weight", "bias")):
  """Copy a torch module's parameters into a lazynb layer (fresh realized buffers, like load_state_dict would)."""
  for n in names:
    tp = getattr(tm, n, None)
    if tp is None: continue
    setattr(lz, n, Tensor(tp.detach().numpy().copy()))

def close(got, exp, atol=1e-5, rtol=1e-4):
  np.testing.assert_allclose(got.numpy() if isinstance(got, Tensor) else got, exp.detach().numpy() if hasattr(exp, "detach") else exp,
                             atol=atol, rtol=rtol)

@pytest.fixture(autouse=True)
def _eval_mode():
  old_t, old_ng = Tensor.training, Tensor.no_grad
  Tensor.training, Tensor.no_grad = False, False
  yield
  Tensor.training, Tensor.no_grad = old_t, old_ng

# ------------------------------------------------------------------ Linear

def backward_and_compare(out_l, out_t, w, xl, xt, lz, tm, bias=True, atol=1e-4):
  """Backpropagate sum(out * w) through both models; outputs, input grads and parameter grads must agree."""
  (out_t * T(w)).sum().backward()
  (out_l * Tensor(w)).sum().backward()
  close(out_l, out_t, atol=atol)
  close(xl.grad, xt.grad, atol=atol)
  close(lz.weight.grad, tm.weight.grad, atol=atol)
  if bias: close(lz.bias.grad, tm.bias.grad, atol=atol)

def test_linear_default_init_shapes_and_bounds():
  Tensor.manual_seed(1)
  l = nn.Linear(20, 7)
  assert l.weight.shape == (7, 20) and l.bias.shape == (7,)
  w = l.weight.numpy()
  assert np.abs(w).max() <= 1 / np.sqrt(20) + 1e-7
  assert w.std() > 0.05, "weights should be random, not constant"
  assert nn.Linear(3, 2, bias=False).bias is None

@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch_forward_and_grads(bias):
  torch.manual_seed(0)
  tm = torch.nn.Linear(4, 3, bias=bias)
  lz = nn.Linear(4, 3, bias=bias)
  copy_into(lz, tm)
  x = rnd(5, 4, seed=1)
  xt, xl = T(x).requires_grad_(), Tensor(x, requires_grad=True)
  for p in get_parameters(lz): p.requires_grad = True
  out_t, out_l = tm(xt), lz(xl)
  w = rnd(5, 3, seed=2)
  backward_and_compare(out_l, out_t, w, xl, xt, lz, tm, bias, atol=1e-5)

def test_linear_on_3d_input():
  torch.manual_seed(1)
  tm, lz = torch.nn.Linear(3, 2), nn.Linear(3, 2)
  copy_into(lz, tm)
  x = rnd(2, 4, 3, seed=3)
  close(lz(Tensor(x)), tm(T(x)))

# ------------------------------------------------------------------ Conv2d

CONV = [dict(), dict(stride=2), dict(padding=1), dict(padding=2, stride=(2, 1)), dict(groups=2), dict(groups=2, padding=1, dilation=2)]

@pytest.mark.parametrize("cfg", CONV, ids=[str(sorted(c.items())) for c in CONV])
def test_conv2d_matches_torch(cfg):
  torch.manual_seed(2)
  tm = torch.nn.Conv2d(4, 6, 3, **cfg)
  lz = nn.Conv2d(4, 6, 3, **cfg)
  assert lz.weight.shape == tuple(tm.weight.shape)
  copy_into(lz, tm)
  x = rnd(2, 4, 7, 6, seed=4)
  xt, xl = T(x).requires_grad_(), Tensor(x, requires_grad=True)
  for p in get_parameters(lz): p.requires_grad = True
  out_t, out_l = tm(xt), lz(xl)
  assert out_l.shape == tuple(out_t.shape)
  w = rnd(*out_t.shape, seed=5)
  backward_and_compare(out_l, out_t, w, xl, xt, lz, tm)

def test_conv2d_no_bias_rect_kernel():
  torch.manual_seed(3)
  tm, lz = torch.nn.Conv2d(2, 3, (3, 2), bias=False), nn.Conv2d(2, 3, (3, 2), bias=False)
  assert lz.bias is None
  copy_into(lz, tm)
  x = rnd(1, 2, 5, 5, seed=6)
  close(lz(Tensor(x)), tm(T(x)), atol=1e-4)

def test_conv2d_default_init_bound():
  Tensor.manual_seed(4)
  c = nn.Conv2d(3, 8, 3)
  assert c.weight.shape == (8, 3, 3, 3)
  assert np.abs(c.weight.numpy()).max() <= 1 / np.sqrt(27) + 1e-7

# ------------------------------------------------------------------ BatchNorm

def make_bn(C, seed, **kw):
  torch.manual_seed(seed)
  tm = torch.nn.BatchNorm2d(C, **kw)
  with torch.no_grad():
    tm.weight.copy_(torch.randn(C) * 0.5 + 1)
    tm.bias.copy_(torch.randn(C) * 0.5)
  lz = nn.BatchNorm2d(C, **kw)
  copy_into(lz, tm)
  return tm, lz

def test_batchnorm_training_uses_batch_stats_and_updates_running_stats():
  tm, lz = make_bn(3, 10, momentum=0.1)
  tm.train()
  for step in range(3):
    x = rnd(4, 3, 5, 5, seed=20 + step, scale=2.0) + 1.5
    with Tensor.train():
      assert Tensor.training
      out_l = lz(Tensor(x))
    out_t = tm(T(x))
    close(out_l, out_t, atol=1e-4)
    close(lz.running_mean, tm.running_mean, atol=1e-5)
    close(lz.running_var, tm.running_var, atol=1e-4)
  assert lz.num_batches_tracked.numpy().reshape(-1)[0] == 3 == tm.num_batches_tracked.item()
  assert not Tensor.training

def test_batchnorm_running_stats_update_even_if_output_unused():
  tm, lz = make_bn(2, 11, momentum=0.3)
  tm.train()
  x = rnd(3, 2, 4, 4, seed=30) * 3 + 2
  with Tensor.train(): lz(Tensor(x))  # output discarded, like a forward pass only for the statistics
  tm(T(x))
  close(lz.running_mean, tm.running_mean)
  close(lz.running_var, tm.running_var, atol=1e-4)

def test_batchnorm_eval_uses_running_stats():
  tm, lz = make_bn(3, 12, momentum=0.5)
  tm.train()
  for step in range(2):
    x = rnd(4, 3, 3, 3, seed=40 + step) + 0.7
    with Tensor.train(): lz(Tensor(x)).realize()
    tm(T(x))
  tm.eval()
  xe = rnd(2, 3, 3, 3, seed=50)
  assert not Tensor.training
  rm_before = lz.running_mean.numpy().copy()
  close(lz(Tensor(xe)), tm(T(xe)), atol=1e-5)
  np.testing.assert_array_equal(lz.running_mean.numpy(), rm_before)  # eval must not touch the running stats

def test_batchnorm_eval_after_training_forward_is_stable():
  tm, lz = make_bn(2, 21)
  tm.train()
  x = rnd(4, 2, 3, 3, seed=45) + 1
  with Tensor.train(): lz(Tensor(x)).realize()  # only the output is read, as in a training loop
  tm(T(x))
  tm.eval()
  xe = Tensor(rnd(2, 2, 3, 3, seed=46))
  o1, o2 = lz(xe).numpy(), lz(xe).numpy()
  np.testing.assert_allclose(o1, tm(T(xe.numpy())).detach().numpy(), atol=1e-5, rtol=1e-4)
  np.testing.assert_allclose(o2, o1, atol=1e-6)

def test_pending_assign_runs_once():
  r = Tensor([0.0, 0.0]).contiguous().realize()
  x = Tensor([4.0, 6.0])
  r.assign(r * 0.5 + x.mean())
  (x * 2).realize()  # x gets realized by an unrelated computation
  np.testing.assert_array_equal((r * 1).numpy(), [5.0, 5.0])
  np.testing.assert_array_equal((r * 1).numpy(), [5.0, 5.0])
  np.testing.assert_array_equal(r.numpy(), [5.0, 5.0])

def test_two_fresh_realized_buffers_are_independent():
  a = Tensor.zeros(13).contiguous().realize()
  b = Tensor.zeros(13).contiguous().realize()
  a.assign(a + 1).realize()
  av, bv = a.numpy(), b.numpy()
  del a, b  # if they did alias, a live written "zeros(13)" buffer would be what later zeros(13).contiguous() gets
  np.testing.assert_array_equal(av, np.ones(13))
  np.testing.assert_array_equal(bv, np.zeros(13))

def test_batchnorm_default_init_trains_like_torch():
  torch.manual_seed(22)
  tm, lz = torch.nn.BatchNorm2d(3), nn.BatchNorm2d(3)  # both with their own default init: weight 1, bias 0
  tm.train()
  for step in range(2):
    x = rnd(4, 3, 2, 2, seed=47 + step) * 2 + 1
    with Tensor.train(): out = lz(Tensor(x))
    close(out, tm(T(x)), atol=1e-4)
    close(lz.running_mean, tm.running_mean, atol=1e-5)
    close(lz.running_var, tm.running_var, atol=1e-4)
  close(lz.weight, tm.weight)
  close(lz.bias, tm.bias)

def test_batchnorm_inference_mode_uses_running_stats():
  tm, lz = make_bn(3, 13)
  tm.train()
  x = rnd(4, 3, 3, 3, seed=60) * 2 + 1
  with Tensor.train(): lz(Tensor(x)).realize()
  tm(T(x))
  tm.eval()
  xe = rnd(2, 3, 3, 3, seed=61)
  with Tensor.train():
    with Tensor.inference_mode():
      assert not Tensor.training and Tensor.no_grad
      out = lz(Tensor(xe))
      close(out, tm(T(xe)), atol=1e-5)
    assert Tensor.training and not Tensor.no_grad

def test_batchnorm_training_gradients_match_torch():
  tm, lz = make_bn(2, 14)
  tm.train()
  x = rnd(3, 2, 3, 3, seed=70) + 1
  xt, xl = T(x).requires_grad_(), Tensor(x, requires_grad=True)
  lz.weight.requires_grad = lz.bias.requires_grad = True
  w = rnd(3, 2, 3, 3, seed=71)
  with Tensor.train(): out_l = lz(xl)
  out_t = tm(xt)
  backward_and_compare(out_l, out_t, w, xl, xt, lz, tm)

def test_batchnorm_1d_input():
  torch.manual_seed(15)
  tm, lz = torch.nn.BatchNorm1d(4), nn.BatchNorm(4)
  tm.train()
  x = rnd(6, 4, seed=80) * 2 + 3
  with Tensor.train(): out = lz(Tensor(x))
  close(out, tm(T(x)), atol=1e-4)
  close(lz.running_mean, tm.running_mean)
  close(lz.running_var, tm.running_var, atol=1e-4)

def test_batchnorm_no_affine_no_running_stats():
  torch.manual_seed(16)
  tm = torch.nn.BatchNorm2d(2, affine=False, track_running_stats=False)
  lz = nn.BatchNorm2d(2, affine=False, track_running_stats=False)
  x = rnd(3, 2, 2, 2, seed=81) + 2
  close(lz(Tensor(x)), tm(T(x)), atol=1e-4)  # no running stats: batch stats even in eval mode
  assert lz.weight is None and lz.bias is None

# ------------------------------------------------------------------ LayerNorm, Embedding

@pytest.mark.parametrize("shape", [4, (3, 4)])
def test_layernorm_matches_torch(shape):
  torch.manual_seed(17)
  tm = torch.nn.LayerNorm(shape)
  with torch.no_grad():
    tm.weight.copy_(torch.randn(tm.weight.shape))
    tm.bias.copy_(torch.randn(tm.bias.shape))
  lz = nn.LayerNorm(shape)
  copy_into(lz, tm)
  x = rnd(2, 3, 4, seed=90) * 3 + 1
  xt, xl = T(x).requires_grad_(), Tensor(x, requires_grad=True)
  lz.weight.requires_grad = lz.bias.requires_grad = True
  w = rnd(2, 3, 4, seed=91)
  out_l, out_t = lz(xl), tm(xt)
  backward_and_compare(out_l, out_t, w, xl, xt, lz, tm)

def test_layernorm_no_affine_and_bad_shape():
  lz = nn.LayerNorm(4, elementwise_affine=False)
  x = rnd(2, 4, seed=92)
  close(lz(Tensor(x)), torch.nn.functional.layer_norm(T(x), (4,)), atol=1e-5)
  with pytest.raises(ValueError, match="trailing shape"):
    nn.LayerNorm(5)(Tensor(x))

def test_embedding_matches_torch_forward_and_grad():
  torch.manual_seed(18)
  tm, lz = torch.nn.Embedding(6, 3), nn.Embedding(6, 3)
  copy_into(lz, tm, ("weight",))
  idx = np.array([[0, 5, 2], [2, 2, 1]], np.int32)
  lz.weight.requires_grad = True
  out_l, out_t = lz(Tensor(idx)), tm(torch.tensor(idx, dtype=torch.long))
  w = rnd(2, 3, 3, seed=93)
  (out_l * Tensor(w)).sum().backward()
  (out_t * T(w)).sum().backward()
  assert out_l.shape == (2, 3, 3)
  close(out_l, out_t, atol=0, rtol=0)
  close(lz.weight.grad, tm.weight.grad, atol=1e-6)  # repeated index 2 accumulates, unused rows 3, 4 get zero

def test_embedding_default_init_shape():
  e = nn.Embedding(10, 4)
  assert e.weight.shape == (10, 4) and e.weight.dtype is dtypes.float32

# ------------------------------------------------------------------ Tensor.sequential, a small model

def test_sequential_mlp_matches_torch():
  torch.manual_seed(19)
  t1, t2 = torch.nn.Linear(4, 8), torch.nn.Linear(8, 3)
  l1, l2 = nn.Linear(4, 8), nn.Linear(8, 3)
  copy_into(l1, t1); copy_into(l2, t2)  # noqa: E702
  x = rnd(5, 4, seed=100)
  out_l = Tensor(x).sequential([l1, Tensor.relu, l2, lambda t: t.log_softmax(-1)])
  out_t = torch.nn.Sequential(t1, torch.nn.ReLU(), t2, torch.nn.LogSoftmax(-1))(T(x))
  close(out_l, out_t, atol=1e-5)

def test_sequential_empty_is_identity():
  x = rnd(2, 2, seed=101)
  np.testing.assert_array_equal(Tensor(x).sequential([]).numpy(), x)

def test_small_cnn_with_batchnorm_matches_torch():
  torch.manual_seed(20)
  tc, tb, tl = torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.Linear(4 * 3 * 3, 2)
  lc, lb, ll = nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.Linear(4 * 3 * 3, 2)
  copy_into(lc, tc); copy_into(lb, tb); copy_into(ll, tl)  # noqa: E702
  x = rnd(2, 1, 6, 6, seed=102)
  tb.train()
  with Tensor.train():
    out_l = Tensor(x).sequential([lc, lb, Tensor.relu, lambda t: t.max_pool2d(2), lambda t: t.flatten(1), ll])
  out_t = tl(torch.nn.functional.max_pool2d(tb(tc(T(x))).relu(), 2).flatten(1))
  close(out_l, out_t, atol=1e-4)
  close(lb.running_var, tb.running_var, atol=1e-4)
