"""The rest of tinygrad 0.10's nn against torch: transposed and 1-d convolutions, 'same'/'valid' padding, the other
norms, LSTMCell, Tensor.batchnorm, the losses with reduction / ignore_index / label_smoothing, dropout,
scaled_dot_product_attention, the small activations, Tensor.train/test as context managers and decorators.
Each comparison checks the forward values and the gradients of sum(out * w) for every input."""
import numpy as np
import pytest
from lazynb import Tensor, dtypes
from lazynb import nn

torch = pytest.importorskip("torch")
F = torch.nn.functional
pytestmark = pytest.mark.torch

def rnd(*shape, seed=0, scale=1.0):
  return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)

@pytest.fixture(autouse=True)
def _modes():
  old = Tensor.training, Tensor.no_grad
  Tensor.training, Tensor.no_grad = False, False
  yield
  Tensor.training, Tensor.no_grad = old

def check(lz_fn, th_fn, arrays, atol=1e-5, rtol=1e-4, consts=()):
  """lz_fn(*Tensors, *consts) against th_fn(*float64 torch tensors, *consts): values and the gradient of sum(out * w)
  for every array (consts are passed as they are, without gradients)."""
  ts = [Tensor(a, requires_grad=True) for a in arrays]
  ps = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in arrays]
  out, tout = lz_fn(*ts, *consts), th_fn(*ps, *consts)
  assert out.shape == tuple(tout.shape), f"shape {out.shape} != torch {tuple(tout.shape)}"
  w = rnd(*tout.shape, seed=99) if tout.ndim else np.float32(1.3)
  (out * Tensor(w)).sum().backward()
  (tout * torch.tensor(np.asarray(w, dtype=np.float64))).sum().backward()
  np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), atol=atol, rtol=rtol, err_msg="forward")
  for i, (t, p) in enumerate(zip(ts, ps)):
    assert t.grad is not None, f"input {i} got no gradient"
    np.testing.assert_allclose(t.grad.numpy(), p.grad.numpy(), atol=atol * 10, rtol=rtol * 10, err_msg=f"grad of input {i}")

def copy_params(lz, tm, names):
  for n in names: setattr(lz, n, Tensor(getattr(tm, n).detach().numpy().copy()))

# ------------------------------------------------------------------ transposed convolution

CONVT = [  # (x shape, weight shape, kwargs)
  ((1, 2, 5, 5), (2, 3, 3, 3), {}),
  ((2, 2, 4, 5), (2, 3, 3, 2), dict(stride=2)),
  ((1, 2, 4, 4), (2, 3, 3, 3), dict(stride=2, padding=1, output_padding=1)),
  ((1, 4, 5, 4), (4, 2, 3, 3), dict(groups=2, stride=(2, 3), padding=(1, 0), output_padding=(1, 2))),
  ((1, 4, 4, 4), (4, 1, 3, 3), dict(groups=4, dilation=2, padding=2)),                  # depthwise, dilated
  ((1, 6, 3, 4), (6, 2, 2, 3), dict(groups=3, stride=2, dilation=(2, 1), output_padding=1)),
  ((2, 3, 5, 5), (3, 2, 1, 1), dict(padding=1)),                                        # padding > dilation*(k-1): crops
  ((1, 2, 6, 5), (2, 2, 4, 3), dict(stride=3, padding=2, dilation=2, output_padding=(2, 1))),
]

@pytest.mark.parametrize("xs,ws,kw", CONVT)
def test_conv_transpose2d_matches_torch(xs, ws, kw):
  b = rnd(ws[1] * kw.get("groups", 1), seed=3)
  check(lambda x, w, b: x.conv_transpose2d(w, b, **kw), lambda x, w, b: F.conv_transpose2d(x, w, b, **kw),
        [rnd(*xs, seed=1), rnd(*ws, seed=2), b])

@pytest.mark.parametrize("kw", [{}, dict(stride=2), dict(stride=3, padding=1, output_padding=2), dict(groups=2, dilation=3, padding=2)])
def test_conv_transpose1d_matches_torch(kw):
  check(lambda x, w: x.conv_transpose2d(w, **kw), lambda x, w: F.conv_transpose1d(x, w, **kw), [rnd(2, 4, 6, seed=4), rnd(4, 3, 3, seed=5)])

def test_conv_transpose2d_is_one_kernel():
  x, w = Tensor(rnd(1, 4, 8, 8)).realize(), Tensor(rnd(4, 3, 3, 3)).realize()
  out = x.conv_transpose2d(w, stride=2, padding=1, output_padding=1)
  assert out.shape == (1, 3, 16, 16) and len(out.schedule()) == 1

def test_conv_transpose2d_bad_arguments_raise():
  x = Tensor(rnd(1, 4, 5, 5))
  with pytest.raises(ValueError): x.conv_transpose2d(Tensor(rnd(3, 2, 3, 3)))              # 4 input channels, weight has 3
  with pytest.raises(ValueError): x.conv_transpose2d(Tensor(rnd(4, 2, 3, 3)), stride=2, output_padding=2)
  with pytest.raises(ValueError): x.conv_transpose2d(Tensor(rnd(4, 2, 3)))                 # 1-d weight, 2-d input
  with pytest.raises(ValueError): x.conv_transpose2d(Tensor(rnd(4, 2, 3, 3)), groups=3)
  for kw in (dict(stride=2, output_padding=2), dict(groups=3)):  # torch refuses the same
    with pytest.raises(RuntimeError): F.conv_transpose2d(torch.zeros(1, 4, 5, 5), torch.zeros(4, 2, 3, 3), **kw)

@pytest.mark.parametrize("dims,kw", [(2, dict(stride=2, padding=1, output_padding=1)), (2, dict(groups=2, dilation=2)), (1, dict(stride=3, padding=2))])
def test_conv_transpose_layers_match_torch(dims, kw):
  torch.manual_seed(0)
  tm = (torch.nn.ConvTranspose2d if dims == 2 else torch.nn.ConvTranspose1d)(4, 6, 3, **kw)
  lz = (nn.ConvTranspose2d if dims == 2 else nn.ConvTranspose1d)(4, 6, 3, **kw)
  assert lz.weight.shape == tuple(tm.weight.shape) and lz.bias.shape == tuple(tm.bias.shape)
  copy_params(lz, tm, ("weight", "bias"))
  x = rnd(2, 4, *(5,) * dims, seed=6)
  np.testing.assert_allclose(lz(Tensor(x)).numpy(), tm(torch.tensor(x)).detach().numpy(), atol=1e-5, rtol=1e-4)

def test_conv_transpose_default_init_bound():
  Tensor.manual_seed(2)
  w = nn.ConvTranspose2d(8, 6, 3, groups=2).weight.numpy()
  bound = 1 / np.sqrt(8 * 9)  # tinygrad: 1/sqrt(in_channels * prod(kernel_size))
  assert w.shape == (8, 3, 3, 3) and np.abs(w).max() <= bound + 1e-7 and np.abs(w).max() > 0.8 * bound

# ------------------------------------------------------------------ Conv1d, padding="same" / "valid"

@pytest.mark.parametrize("kw", [{}, dict(stride=2, padding=1), dict(groups=2, dilation=2), dict(padding="same"), dict(padding="valid"),
                                dict(padding="same", dilation=3)])
@pytest.mark.parametrize("k", [3, 4])
def test_conv1d_matches_torch(kw, k):
  torch.manual_seed(1)
  tm, lz = torch.nn.Conv1d(4, 6, k, **kw), nn.Conv1d(4, 6, k, **kw)
  copy_params(lz, tm, ("weight", "bias"))
  x = rnd(2, 4, 11, seed=7)
  np.testing.assert_allclose(lz(Tensor(x)).numpy(), tm(torch.tensor(x)).detach().numpy(), atol=1e-5, rtol=1e-4)

@pytest.mark.parametrize("k,d", [(3, 1), (4, 1), ((2, 5), 1), ((3, 4), (2, 1)), (4, 3)])
def test_conv2d_padding_same_keeps_shape_like_torch(k, d):
  torch.manual_seed(2)
  tm, lz = torch.nn.Conv2d(2, 3, k, padding="same", dilation=d), nn.Conv2d(2, 3, k, padding="same", dilation=d)
  copy_params(lz, tm, ("weight", "bias"))
  x = rnd(1, 2, 9, 8, seed=8)
  out = lz(Tensor(x))
  assert out.shape == (1, 3, 9, 8)
  np.testing.assert_allclose(out.numpy(), tm(torch.tensor(x)).detach().numpy(), atol=1e-5, rtol=1e-4)

def test_conv2d_padding_valid_is_no_padding():
  lz = nn.Conv2d(2, 3, 3, padding="VALID")
  x = rnd(1, 2, 6, 7, seed=9)
  exp = F.conv2d(torch.tensor(x), torch.tensor(lz.weight.numpy()), torch.tensor(lz.bias.numpy()))
  np.testing.assert_allclose(lz(Tensor(x)).numpy(), exp.numpy(), atol=1e-5, rtol=1e-4)

def test_conv2d_bad_padding_strings_raise_value_error():
  with pytest.raises(ValueError, match="strided"): nn.Conv2d(2, 3, 3, stride=2, padding="same")
  with pytest.raises(ValueError): nn.Conv2d(2, 3, 3, padding="full")
  with pytest.raises(ValueError): nn.Conv1d(2, 3, 3, stride=2, padding="same")
  with pytest.raises(ValueError): torch.nn.Conv2d(2, 3, 3, stride=2, padding="same")  # torch agrees

def test_padding_strings_are_for_layers_only():
  x = Tensor(rnd(1, 2, 5, 5))
  with pytest.raises(TypeError): x.conv2d(Tensor(rnd(3, 2, 3, 3)), padding="same")
  with pytest.raises(TypeError): x.conv_transpose2d(Tensor(rnd(2, 3, 3, 3)), padding="same")
  with pytest.raises(TypeError): x.max_pool2d(padding="same")

def test_conv2d_init_bound_is_tinygrads():
  Tensor.manual_seed(3)
  w = nn.Conv2d(8, 4, 3, groups=4).weight.numpy()
  bound = 1 / np.sqrt(8 * 9)
  assert w.shape == (4, 2, 3, 3) and np.abs(w).max() <= bound + 1e-7 and np.abs(w).max() > 0.8 * bound

# ------------------------------------------------------------------ norms

@pytest.mark.parametrize("shape,groups,affine", [((2, 6, 4, 4), 3, True), ((3, 4, 5), 2, False), ((2, 8, 3, 2, 2), 8, True), ((2, 4, 3, 3), 1, True)])
def test_groupnorm_matches_torch(shape, groups, affine):
  lz, tm = nn.GroupNorm(groups, shape[1], affine=affine), torch.nn.GroupNorm(groups, shape[1], affine=affine).double()
  args = [rnd(*shape, seed=10, scale=2) + 1]
  if affine:
    args += [rnd(shape[1], seed=11), rnd(shape[1], seed=12)]
    def lz_fn(x, w, b): lz.weight, lz.bias = w, b; return lz(x)
    def th_fn(x, w, b): return F.group_norm(x, groups, w, b)
  else: lz_fn, th_fn = lz, tm
  check(lz_fn, th_fn, args)

def test_groupnorm_needs_divisible_channels():
  with pytest.raises(ValueError): nn.GroupNorm(4, 6)
  with pytest.raises(ValueError): torch.nn.GroupNorm(4, 6)

@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 2, 7)])
def test_instancenorm_matches_torch(shape):
  lz = nn.InstanceNorm(shape[1])
  assert lz.weight.numpy().tolist() == [1.0] * shape[1] and lz.bias.numpy().tolist() == [0.0] * shape[1]
  def lz_fn(x, w, b): lz.weight, lz.bias = w, b; return lz(x)
  check(lz_fn, lambda x, w, b: F.instance_norm(x, weight=w, bias=b), [rnd(*shape, seed=13, scale=3) - 1, rnd(shape[1], seed=14), rnd(shape[1], seed=15)])

def test_layernorm2d_matches_torch():
  lz = nn.LayerNorm2d(3)
  def lz_fn(x, w, b): lz.weight, lz.bias = w, b; return lz(x)
  def th_fn(x, w, b): return F.layer_norm(x.permute(0, 2, 3, 1), (3,), w, b).permute(0, 3, 1, 2)
  check(lz_fn, th_fn, [rnd(2, 3, 4, 5, seed=16, scale=2), rnd(3, seed=17), rnd(3, seed=18)])

@pytest.mark.parametrize("shape", [(4, 8), (2, 3, 5)])
def test_rmsnorm_matches_torch(shape):
  lz = nn.RMSNorm(shape[-1])
  assert lz.eps == 1e-6 and lz.weight.numpy().tolist() == [1.0] * shape[-1]
  def lz_fn(x, w): lz.weight = w; return lz(x)
  check(lz_fn, lambda x, w: F.rms_norm(x, (shape[-1],), w, eps=1e-6), [rnd(*shape, seed=19, scale=3), rnd(shape[-1], seed=20)])

def test_rmsnorm_half_input():
  """Normalized in float32, rounded to half, times the float32 weight: float32 out, as in tinygrad."""
  x = rnd(3, 4, seed=21)
  out = nn.RMSNorm(4)(Tensor(x).cast(dtypes.half))
  assert out.dtype == dtypes.float32
  np.testing.assert_allclose(out.numpy().astype(np.float32), F.rms_norm(torch.tensor(x), (4,), eps=1e-6).numpy(), atol=2e-3, rtol=2e-3)

def test_batchnorm3d_training_matches_torch():
  torch.manual_seed(3)
  tm, lz = torch.nn.BatchNorm3d(3).train(), nn.BatchNorm3d(3)
  x = rnd(2, 3, 2, 3, 4, seed=22, scale=2) + 0.5
  xl, xt = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
  with Tensor.train(): out = lz(xl)
  exp = tm(xt)
  w = rnd(*x.shape, seed=23)
  (out * Tensor(w)).sum().backward(); (exp * torch.tensor(w)).sum().backward()
  np.testing.assert_allclose(out.numpy(), exp.detach().numpy(), atol=1e-5, rtol=1e-4)
  np.testing.assert_allclose(xl.grad.numpy(), xt.grad.numpy(), atol=1e-4, rtol=1e-3)
  np.testing.assert_allclose(lz.running_var.numpy(), tm.running_var.numpy(), atol=1e-6, rtol=1e-5)
  np.testing.assert_allclose(lz.running_mean.numpy(), tm.running_mean.numpy(), atol=1e-6, rtol=1e-5)

@pytest.mark.parametrize("affine", [True, False])
def test_tensor_batchnorm_matches_torch(affine):
  x, mean, var = rnd(2, 3, 4, seed=24), rnd(3, seed=25), np.abs(rnd(3, seed=26)) + 0.5
  w, b = rnd(3, seed=27), rnd(3, seed=28)
  invstd = (1 / np.sqrt(var + 1e-5)).astype(np.float32)
  if affine: check(lambda x, w, b: x.batchnorm(w, b, Tensor(mean), Tensor(invstd)),
                   lambda x, w, b: F.batch_norm(x, T64(mean), T64(var), w, b, eps=1e-5), [x, w, b])
  else: check(lambda x: x.batchnorm(None, None, Tensor(mean), Tensor(invstd)), lambda x: F.batch_norm(x, T64(mean), T64(var), eps=1e-5), [x])

def test_tensor_batchnorm_other_axis():
  x, mean, invstd = rnd(2, 3, 4, seed=29), rnd(4, seed=30), np.abs(rnd(4, seed=31))
  np.testing.assert_allclose(Tensor(x).batchnorm(None, None, Tensor(mean), Tensor(invstd), axis=2).numpy(), (x - mean) * invstd, atol=1e-6)
  np.testing.assert_allclose(Tensor(x).batchnorm(None, None, Tensor(mean), Tensor(invstd), axis=-1).numpy(), (x - mean) * invstd, atol=1e-6)

def T64(a): return torch.tensor(np.asarray(a, dtype=np.float64))

def test_layernorm_method_matches_torch():
  check(lambda x: x.layernorm(axis=(-2, -1), eps=1e-3), lambda x: F.layer_norm(x, (3, 4), eps=1e-3), [rnd(2, 3, 4, seed=32, scale=3)])

# ------------------------------------------------------------------ LSTMCell

@pytest.mark.parametrize("bias,with_state", [(True, True), (True, False), (False, True)])
def test_lstmcell_matches_torch(bias, with_state):
  torch.manual_seed(4)
  tm, lz = torch.nn.LSTMCell(3, 5, bias=bias).double(), nn.LSTMCell(3, 5, bias=bias)
  assert lz.weight_ih.shape == (20, 3) and lz.weight_hh.shape == (20, 5)
  assert (lz.bias_ih is None) == (not bias)
  names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if bias else [])
  params = [getattr(tm, n).detach().numpy().astype(np.float32) for n in names]
  if bias: params[2:] = [rnd(20, seed=33), rnd(20, seed=34)]  # torch's biases are random, tinygrad's start at 0: use new ones
  state = [rnd(2, 5, seed=35), rnd(2, 5, seed=36)] if with_state else []
  def lz_fn(x, *ps):
    for n, p in zip(names, ps): setattr(lz, n, p)
    h, c = lz(x, tuple(ps[len(names):]) if with_state else None)
    return h.cat(c, dim=1)
  def th_fn(x, *ps):
    h, c = torch._VF.lstm_cell(x, tuple(ps[len(names):]) if with_state else (torch.zeros(2, 5, dtype=x.dtype),) * 2, *ps[:len(names)],
                               *([] if bias else [None, None]))
    return torch.cat([h, c], dim=1)
  check(lz_fn, th_fn, [rnd(2, 3, seed=37)] + params + state)

def test_lstmcell_default_init():
  Tensor.manual_seed(5)
  lz = nn.LSTMCell(4, 16)
  w = lz.weight_hh.numpy()
  assert np.abs(w).max() <= 0.25 + 1e-7 and np.abs(w).max() > 0.2 and not lz.bias_ih.numpy().any()

# ------------------------------------------------------------------ losses

REDUCTIONS = ["mean", "sum", "none"]

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ls", [0.0, 0.25])
def test_sparse_categorical_crossentropy_matches_torch(reduction, ls):
  y = np.array([[0, 3, 1], [4, 4, 2]])  # (2, 3) labels for (2, 3, 5) logits: the class axis is the last one
  check(lambda x: x.sparse_categorical_crossentropy(Tensor(y), label_smoothing=ls, reduction=reduction),
        lambda x: F.cross_entropy(x.permute(0, 2, 1), torch.tensor(y), label_smoothing=ls, reduction=reduction), [rnd(2, 3, 5, seed=40)])

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ls", [0.0, 0.1])
def test_sparse_categorical_crossentropy_ignore_index(reduction, ls):
  y = np.array([0, 7, 2, 7, 1], np.int32)
  check(lambda x: x.sparse_categorical_crossentropy(Tensor(y), ignore_index=7, label_smoothing=ls, reduction=reduction),
        lambda x: F.cross_entropy(x, torch.tensor(y, dtype=torch.long), ignore_index=7, label_smoothing=ls, reduction=reduction),
        [rnd(5, 4, seed=41)])

def test_sparse_categorical_crossentropy_default_counts_minus_one_like_tinygrad():
  """ignore_index=-1 (the default) means "ignore nothing" in tinygrad: a -1 label adds 0 (it matches no class) but
  still counts in the mean's denominator."""
  y = np.array([0, -1, 2, -1], np.int32)
  x = rnd(4, 3, seed=42)
  per = F.cross_entropy(torch.tensor(x), torch.tensor(y, dtype=torch.long), ignore_index=-1, reduction="none")
  np.testing.assert_allclose(Tensor(x).sparse_categorical_crossentropy(Tensor(y)).numpy(), per.sum().item() / 4, rtol=1e-5)
  np.testing.assert_allclose(Tensor(x).sparse_categorical_crossentropy(Tensor(y), reduction="none").numpy(), per.numpy(), rtol=1e-5, atol=1e-6)

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ls", [0.0, 0.3])
@pytest.mark.parametrize("xs,ys", [((4, 5), (4,)), ((2, 3, 4, 2), (2, 4, 2))])
def test_cross_entropy_class_indices(reduction, ls, xs, ys):
  y = np.random.default_rng(43).integers(0, xs[1], ys)
  check(lambda x: x.cross_entropy(Tensor(y), reduction=reduction, label_smoothing=ls),
        lambda x: F.cross_entropy(x, torch.tensor(y), reduction=reduction, label_smoothing=ls), [rnd(*xs, seed=44)])

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ls", [0.0, 0.2])
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5)])
def test_cross_entropy_probabilities(reduction, ls, shape):
  p = torch.softmax(torch.tensor(rnd(*shape, seed=45)), 1).numpy()
  check(lambda x, p: x.cross_entropy(p, reduction=reduction, label_smoothing=ls),
        lambda x, p: F.cross_entropy(x, p, reduction=reduction, label_smoothing=ls), [rnd(*shape, seed=46), p])

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted,ignore", [(False, None), (True, None), (False, 2), (True, 1)])
@pytest.mark.parametrize("xs,ys", [((5, 3), (5,)), ((2, 3, 4), (2, 4))])
def test_nll_loss_matches_torch(reduction, weighted, ignore, xs, ys):
  y = np.random.default_rng(47).integers(0, 3, ys)
  y.reshape(-1)[:2] = [1, 2]  # make sure an ignored class occurs
  wt = np.abs(rnd(3, seed=48)) + 0.1
  check(lambda x: x.log_softmax(1).nll_loss(Tensor(y), Tensor(wt) if weighted else None, ignore_index=ignore, reduction=reduction),
        lambda x: F.nll_loss(x.log_softmax(1), torch.tensor(y), T64(wt) if weighted else None, ignore_index=-100 if ignore is None else ignore,
                             reduction=reduction), [rnd(*xs, seed=49)])

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_crossentropy_matches_torch(reduction):
  y = np.random.default_rng(50).random((3, 4)).astype(np.float32)
  check(lambda x, y: x.sigmoid().binary_crossentropy(y, reduction=reduction),
        lambda x, y: F.binary_cross_entropy(x.sigmoid(), y, reduction=reduction), [rnd(3, 4, seed=51), y])
  check(lambda x, y: x.binary_crossentropy_logits(y, reduction=reduction),
        lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction=reduction), [rnd(3, 4, seed=52, scale=4), y])

def test_loss_bad_arguments_raise_value_error():
  x, y = Tensor(rnd(2, 3)), Tensor([0, 1])
  for f in (lambda: x.sparse_categorical_crossentropy(y, reduction="avg"), lambda: x.cross_entropy(y, reduction="avg"),
            lambda: x.binary_crossentropy_logits(x, reduction="avg"), lambda: x.nll_loss(y, reduction="avg"),
            lambda: x.sparse_categorical_crossentropy(y, label_smoothing=1.5), lambda: x.cross_entropy(y, label_smoothing=-0.1)):
    with pytest.raises(ValueError): f()
  with pytest.raises(ValueError): x.sparse_categorical_crossentropy(Tensor([0, 1, 2]))
  with pytest.raises(TypeError): x.nll_loss(Tensor([0.0, 1.0]))

# ------------------------------------------------------------------ dropout

def test_dropout_only_in_training():
  x = Tensor(rnd(50, 40, seed=53))
  assert x.dropout(0.5) is x
  with Tensor.train(): assert x.dropout(0.0) is x

def test_dropout_scales_kept_values_and_gradient():
  Tensor.manual_seed(6)
  x = Tensor(np.ones((100, 100), np.float32) * 2, requires_grad=True)
  with Tensor.train(): out = x.dropout(0.3)
  out.sum().backward()
  o = out.numpy()
  kept = o != 0
  assert 0.65 < kept.mean() < 0.75
  np.testing.assert_allclose(o[kept], 2 / 0.7, rtol=1e-6)
  np.testing.assert_allclose(x.grad.numpy(), kept / 0.7, rtol=1e-6)

# ------------------------------------------------------------------ attention

@pytest.mark.parametrize("qs,ks", [((2, 5, 4), (2, 5, 4)), ((1, 2, 3, 8), (1, 2, 6, 8)), ((2, 2, 6, 4), (2, 2, 4, 4))])
@pytest.mark.parametrize("mode", ["plain", "causal", "bool", "float"])
def test_scaled_dot_product_attention_matches_torch(qs, ks, mode):
  L, S = qs[-2], ks[-2]
  bmask = np.random.default_rng(54).random((L, S)) > 0.3
  bmask[:, 0] = True  # no row fully masked (that would be NaN in both)
  fmask = rnd(1, L, S, seed=55)
  vs = ks[:-1] + (3,)
  def kw(mask_lib):
    if mode == "causal": return dict(is_causal=True)
    if mode == "bool": return dict(attn_mask=mask_lib(bmask))
    if mode == "float": return dict(attn_mask=mask_lib(fmask))
    return {}
  check(lambda q, k, v: q.scaled_dot_product_attention(k, v, **kw(Tensor)),
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kw(lambda a: torch.tensor(a if a.dtype == bool else a.astype(np.float64)))),
        [rnd(*qs, seed=56), rnd(*ks, seed=57), rnd(*vs, seed=58)])

@pytest.mark.parametrize("mode", ["causal", "bool"])
def test_half_attention_stays_half(mode):
  """With half q, k, v (and any mask) the result is half, as tinygrad's (q @ k^T sums in float32, the softmax runs in
  half); values as torch's float64 within half's precision."""
  q, k, v = (rnd(2, 4, 6, 8, seed=s) for s in (62, 63, 64))
  mask = np.tril(np.ones((6, 6), bool))
  kw = dict(is_causal=True) if mode == "causal" else dict(attn_mask=Tensor(mask))
  out = Tensor(q, dtype=dtypes.half).scaled_dot_product_attention(Tensor(k, dtype=dtypes.half), Tensor(v, dtype=dtypes.half), **kw)
  assert out.dtype is dtypes.half
  h = lambda a: torch.tensor(a.astype(np.float16).astype(np.float64))  # noqa: E731 (the inputs as the halves they became)
  want = F.scaled_dot_product_attention(h(q), h(k), h(v), **(kw if mode == "causal" else dict(attn_mask=torch.tensor(mask))))
  np.testing.assert_allclose(out.numpy().astype(np.float64), want.numpy(), atol=2e-2, rtol=1e-2)

def test_attention_mask_with_causal_raises():
  q = Tensor(rnd(1, 3, 4))
  with pytest.raises(RuntimeError): q.scaled_dot_product_attention(q, q, attn_mask=Tensor.ones(3, 3, dtype=dtypes.bool), is_causal=True)

def test_attention_dropout_only_in_training():
  q, k, v = (Tensor(rnd(1, 4, 8, seed=s)) for s in (59, 60, 61))
  ref = F.scaled_dot_product_attention(*(torch.tensor(t.numpy()) for t in (q, k, v)))
  np.testing.assert_allclose(q.scaled_dot_product_attention(k, v, dropout_p=0.5).numpy(), ref.numpy(), atol=1e-5)
  Tensor.manual_seed(7)
  with Tensor.train(): out = q.scaled_dot_product_attention(k, v, dropout_p=0.5).numpy()
  assert not np.allclose(out, ref.numpy(), atol=1e-3)

# ------------------------------------------------------------------ activations

ACTS = [("hardswish", {}, F.hardswish), ("hardtanh", {}, F.hardtanh), ("hardtanh", dict(min_val=-0.5, max_val=2), F.hardtanh),
        ("celu", {}, F.celu), ("celu", dict(alpha=0.5), F.celu), ("softsign", {}, F.softsign), ("relu6", {}, F.relu6),
        ("hardsigmoid", {}, F.hardsigmoid), ("leaky_relu", {}, F.leaky_relu), ("silu", {}, F.silu), ("mish", {}, F.mish)]

@pytest.mark.parametrize("name,kw,tf", ACTS)
def test_activations_match_torch(name, kw, tf):
  x = rnd(4, 25, seed=62, scale=4)
  check(lambda x: getattr(x, name)(**kw), lambda x: tf(x, **kw), [x])

def test_selu_matches_torch():
  """tinygrad's constants are torch's rounded to 6 digits."""
  check(lambda x: x.selu(), F.selu, [rnd(4, 25, seed=63, scale=4)], rtol=1e-5 * 10, atol=1e-5)

def test_activations_do_not_overflow():
  x = Tensor([-200.0, -100.0, 0.5, 100.0, 200.0], requires_grad=True)
  y = x.selu() + x.celu(0.5) + x.softsign() + x.hardswish()
  y.sum().backward()
  xt = torch.tensor([-200.0, -100.0, 0.5, 100.0, 200.0], requires_grad=True)
  yt = F.selu(xt) + F.celu(xt, 0.5) + F.softsign(xt) + F.hardswish(xt)
  yt.sum().backward()
  np.testing.assert_allclose(y.numpy(), yt.detach().numpy(), rtol=1e-4)
  np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-4)

# ------------------------------------------------------------------ Tensor.train / Tensor.test

def test_train_and_test_as_context_managers_restore():
  with Tensor.train():
    assert Tensor.training
    with Tensor.train(False): assert not Tensor.training
    assert Tensor.training
    with Tensor.test():
      assert Tensor.no_grad and Tensor.training  # as tinygrad: test() turns gradients off, training stays
    assert not Tensor.no_grad
  assert not Tensor.training

def test_train_and_test_as_decorators():
  @Tensor.train()
  def f(): return Tensor.training, Tensor.no_grad
  @Tensor.test()
  def g(): return Tensor.training, Tensor.no_grad
  assert f() == (True, False) and f() == (True, False)  # reusable
  assert g() == (False, True)
  assert not Tensor.training and not Tensor.no_grad

def test_train_restores_after_exception():
  with pytest.raises(KeyError):
    with Tensor.train(): raise KeyError
  assert not Tensor.training

# ------------------------------------------------------------------ optimizers: LARS, SGD(classic=), OptimizerGroup

def lars_reference(p, c, steps, lr, momentum, weight_decay, nesterov, classic, tcoef):
  """LARS on loss = sum(p * c) + sum(p^2) / 2 (gradient c + p), straight from the definition in numpy (float64)."""
  p, b = p.astype(np.float64), np.zeros_like(p, dtype=np.float64)
  for _ in range(steps):
    g = c + p
    pn, gn = np.linalg.norm(p), np.linalg.norm(g)
    r = tcoef * pn / (gn + weight_decay * pn) if tcoef and pn > 0 and gn > 0 else 1.0
    g = g + weight_decay * p
    if classic: g = g * r * lr
    b = momentum * b + g
    if momentum: g = g + momentum * b if nesterov else b
    if not classic: g = g * r * lr
    p = p - g
  return p

@pytest.mark.parametrize("kw", [dict(), dict(nesterov=True), dict(classic=False), dict(momentum=0.0), dict(weight_decay=0.0, tcoef=0.0),
                                dict(tcoef=0.0, classic=True, momentum=0.5)])
def test_lars_matches_reference(kw):
  from lazynb.nn.optim import LARS
  p0, c = rnd(3, 4, seed=70), rnd(3, 4, seed=71)
  args = dict(lr=0.1, momentum=0.9, weight_decay=1e-2, nesterov=False, classic=True, tcoef=0.02) | kw
  p = Tensor(p0, requires_grad=True)
  opt = LARS([p], **args)
  with Tensor.train():
    for _ in range(3):
      opt.zero_grad()
      ((p * Tensor(c)).sum() + p.square().sum() / 2).backward()
      opt.step()
  np.testing.assert_allclose(p.numpy(), lars_reference(p0, c, 3, **args), rtol=1e-5, atol=1e-6)

@pytest.mark.usefixtures("training_mode")
def test_sgd_classic_momentum_applies_lr_before_the_buffer():
  from lazynb.nn.optim import SGD
  p0, c = rnd(5, seed=72), rnd(5, seed=73)
  p = Tensor(p0, requires_grad=True)
  opt = SGD([p], lr=0.05, momentum=0.8, weight_decay=0.1, classic=True)
  for _ in range(3):
    opt.zero_grad()
    ((p * Tensor(c)).sum() + p.square().sum() / 2).backward()
    opt.step()
  exp = lars_reference(p0, c, 3, lr=0.05, momentum=0.8, weight_decay=0.1, nesterov=False, classic=True, tcoef=0.0)
  np.testing.assert_allclose(p.numpy(), exp, rtol=1e-5, atol=1e-6)

@pytest.mark.usefixtures("training_mode")
def test_optimizer_group_steps_every_optimizer_like_torch():
  from lazynb.nn.optim import SGD, Adam, OptimizerGroup
  a0, b0, x = rnd(4, 3, seed=74), rnd(3, seed=75), rnd(2, 4, seed=76)
  a, b = Tensor(a0, requires_grad=True), Tensor(b0, requires_grad=True)
  ta, tb = torch.tensor(a0, requires_grad=True), torch.tensor(b0, requires_grad=True)
  opt = OptimizerGroup(SGD([a], lr=0.1, momentum=0.9), Adam([b], lr=0.01))
  topts = [torch.optim.SGD([ta], lr=0.1, momentum=0.9), torch.optim.Adam([tb], lr=0.01)]
  assert opt[1].params[0] is b and len(opt.params) == 2
  for _ in range(3):
    opt.zero_grad()
    for o in topts: o.zero_grad()
    (Tensor(x) @ a + b).tanh().sum().backward()
    (torch.tensor(x) @ ta + tb).tanh().sum().backward()
    opt.step()
    for o in topts: o.step()
  np.testing.assert_allclose(a.numpy(), ta.detach().numpy(), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(b.numpy(), tb.detach().numpy(), rtol=1e-5, atol=1e-6)

def test_one_hot_like_tinygrad():
  y = np.array([[0, 3], [2, 1]], np.int32)
  out = Tensor(y).one_hot(5)
  assert out.dtype == dtypes.int32 and out.shape == (2, 2, 5)
  np.testing.assert_array_equal(out.numpy(), F.one_hot(torch.tensor(y, dtype=torch.long), 5).numpy())
  np.testing.assert_array_equal(Tensor(y).one_hot().numpy(), F.one_hot(torch.tensor(y, dtype=torch.long)).numpy())  # 4 classes
  with pytest.raises(RuntimeError): Tensor([0.0, 1.0]).one_hot(2)

def test_layernorm_names_its_axes():
  """LayerNorm.axis: the trailing axes it normalizes over (tinygrad 0.10), what numpy's reference needs."""
  layer = nn.LayerNorm([3, 4])
  assert layer.axis == (-2, -1) and nn.LayerNorm(5).axis == (-1,)
  x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
  y = x - x.mean(layer.axis, keepdims=True)
  np.testing.assert_allclose(layer(Tensor(x)).numpy(), y / np.sqrt((y * y).mean(layer.axis, keepdims=True) + layer.eps), atol=1e-5)
