"""Autograd checked against torch: every differentiable frontend op, forward value and gradient.

Each check builds the same function in lazynb and in torch (float64 as the reference), weights the output
with a fixed random upstream gradient (so e.g. softmax's gradient is not trivially zero), and compares
both the forward values and d(loss)/d(input) for every input.
Open bugs found here are marked xfail(strict=True) with a `bug:` reason.
"""
import math, zlib
import numpy as np
import pytest
from lazynb import Tensor

torch = pytest.importorskip("torch")
F = torch.nn.functional
pytestmark = pytest.mark.torch

# ------------------------------------------------------------------ helpers

def rnd(*shape, seed=0, lo=None, hi=None):
  g = np.random.default_rng(seed)
  if lo is not None: return g.uniform(lo, hi, shape).astype(np.float32)
  return g.standard_normal(shape).astype(np.float32)

def away_from_zero(*shape, seed=0, lo=0.2, hi=2.0):
  """Values with |x| in [lo, hi] and random signs (keeps kinks like relu/abs/sign away from 0)."""
  g = np.random.default_rng(seed)
  return (g.uniform(lo, hi, shape) * g.choice([-1.0, 1.0], shape)).astype(np.float32)

def check(lz_fn, th_fn, arrays, atol=1e-5, rtol=1e-4, via="backward", grad_atol=None, grad_rtol=None):
  """Compare lz_fn(*Tensors) with th_fn(*torch tensors): values and the gradient of sum(out * w)."""
  ts = [Tensor(a, requires_grad=True) for a in arrays]
  ps = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in arrays]
  out, tout = lz_fn(*ts), th_fn(*ps)
  assert out.shape == tuple(tout.shape), f"shape {out.shape} != torch {tuple(tout.shape)}"
  w = rnd(*tout.shape, seed=1234) if tout.ndim else np.float32(1.3)
  loss = (out * Tensor(w)).sum()
  (tout * torch.tensor(np.asarray(w, dtype=np.float64))).sum().backward()
  # differentiate before reading values (reading first is covered by test_backward_after_reading_the_loss and friends)
  if via == "backward":
    loss.backward()
    grads = [t.grad for t in ts]
  else:
    grads = loss.gradient(*ts)
  Tensor.realize_all(out, *[g for g in grads if g is not None])
  np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), atol=atol, rtol=rtol, err_msg="forward")
  for i, (g, p) in enumerate(zip(grads, ps)):
    assert g is not None, f"input {i} got no gradient"
    assert g.shape == tuple(p.shape), f"grad {i} shape {g.shape} != {tuple(p.shape)}"
    exp = p.grad.numpy() if p.grad is not None else np.zeros(p.shape)
    np.testing.assert_allclose(g.numpy(), exp, atol=grad_atol or atol * 10, rtol=grad_rtol or rtol * 10, err_msg=f"grad of input {i}")

# ------------------------------------------------------------------ seeds' worked examples

def test_seed_polynomial_derivative_at_2():
  x = Tensor([2.0], requires_grad=True)
  (x ** 2 + 3 * x + 1).sum().backward()
  assert x.grad.numpy().tolist() == [7.0]

def test_seed_log_derivative_at_2():
  x = Tensor([2.0], requires_grad=True)
  (x ** 2 + 1).log().sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), [0.8], rtol=1e-6)

def test_seed_sigmoid_gradient_is_s_times_1_minus_s():
  a = rnd(7, seed=3)
  x = Tensor(a, requires_grad=True)
  x.sigmoid().sum().backward()
  s = 1 / (1 + np.exp(-a.astype(np.float64)))
  np.testing.assert_allclose(x.grad.numpy(), s * (1 - s), rtol=1e-5, atol=1e-7)

def test_seed_x_times_x_sum_gives_2x():
  a = rnd(3, 4, seed=4)
  x = Tensor(a, requires_grad=True)
  (x * x).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), 2 * a, rtol=1e-6)

def test_gradient_accumulates_over_two_backward_calls():
  a = rnd(5, seed=5)
  x = Tensor(a, requires_grad=True)
  (x * x).sum().backward()
  (x * 3).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), 2 * a + 3, rtol=1e-6)
  (x * x).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), 4 * a + 3, rtol=1e-6)

def test_backward_on_non_scalar_needs_gradient_argument():
  x = Tensor(rnd(2, 3), requires_grad=True)
  with pytest.raises(RuntimeError, match=r"non-scalar.*\(2, 3\)"):
    (x * 2).backward()
  with pytest.raises(RuntimeError, match="non-scalar"):
    (x * 2).gradient(x)

def test_backward_on_non_scalar_with_explicit_gradient():
  a, g = rnd(2, 3, seed=1), rnd(2, 3, seed=2)
  x = Tensor(a, requires_grad=True)
  (x * x).backward(Tensor(g))
  np.testing.assert_allclose(x.grad.numpy(), 2 * a * g, rtol=1e-6)

def test_backward_gradient_argument_shape_mismatch_raises():
  x = Tensor(rnd(2, 3), requires_grad=True)
  with pytest.raises(ValueError, match="does not match"):
    (x * 2).backward(Tensor(rnd(3, 2)))

def test_backward_without_any_grad_tensor_raises():
  x = Tensor(rnd(3))
  with pytest.raises(RuntimeError, match="requires_grad"):
    (x * 2).sum().backward()

def test_backward_under_inference_mode_raises():
  x = Tensor(rnd(3), requires_grad=True)
  loss = (x * 2).sum()
  with Tensor.inference_mode():
    with pytest.raises(RuntimeError, match="no_grad|gradients are off"):
      loss.backward()

def test_gradients_are_lazy_until_read():
  a = rnd(4, seed=6)
  x = Tensor(a, requires_grad=True)
  (x.exp() * 2).sum().backward()
  assert x.grad is not None
  assert not x.grad.uop.is_realized, "the gradient should be a graph, not computed yet"
  assert x.grad.schedule(), "reading the gradient should need at least one kernel"
  np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(a), rtol=1e-5)
  assert x.grad.uop.is_realized

def test_gradient_of_relu_sum_schedules_into_few_kernels():
  a, b = rnd(8, 8, seed=7), rnd(8, 8, seed=8)
  ta, tb = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
  ga, = (ta + tb).relu().sum().gradient(ta)
  kernels = [si for si in ga.schedule() if si.kind == "kernel"]
  assert len(kernels) == 1, f"the gradient is elementwise (a mask): it should fuse into one kernel, got {len(kernels)}"
  np.testing.assert_array_equal(ga.numpy(), (a + b > 0).astype(np.float32))

def test_gradient_wrt_intermediate_tensor():
  a = rnd(3, seed=9)
  x = Tensor(a)
  y = x * 2
  gy, = (y * y).sum().gradient(y)
  np.testing.assert_allclose(gy.numpy(), 4 * a, rtol=1e-6)

def test_gradient_of_unused_target_is_zero():
  x, z = Tensor(rnd(3), requires_grad=True), Tensor(rnd(2, 2), requires_grad=True)
  gx, gz = (x * 2).sum().gradient(x, z)
  np.testing.assert_array_equal(gx.numpy(), [2, 2, 2])
  np.testing.assert_array_equal(gz.numpy(), np.zeros((2, 2)))

def test_detach_stops_gradient():
  a = rnd(4, seed=10)
  x = Tensor(a, requires_grad=True)
  (x * x.detach()).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), a, rtol=1e-6)

def test_second_derivative_via_gradient_of_gradient():
  a = rnd(4, seed=11)
  x = Tensor(a, requires_grad=True)
  g, = (x ** 3).sum().gradient(x)
  gg, = g.sum().gradient(x)
  np.testing.assert_allclose(g.numpy(), 3 * a * a, rtol=1e-5)
  np.testing.assert_allclose(gg.numpy(), 6 * a, rtol=1e-5)

def test_backward_after_reading_the_loss():
  a = rnd(3, seed=14)
  x = Tensor(a, requires_grad=True)
  loss = (x * x).sum()
  np.testing.assert_allclose(loss.item(), (a * a).sum(), rtol=1e-5)
  loss.backward()
  np.testing.assert_allclose(x.grad.numpy(), 2 * a, rtol=1e-6)

def test_gradient_after_intermediate_was_read():
  a = rnd(3, seed=15)
  x = Tensor(a, requires_grad=True)
  y = x * x
  y.numpy()
  g, = y.sum().gradient(x)
  np.testing.assert_allclose(g.numpy(), 2 * a, rtol=1e-6)

def test_zero_dim_numpy_leaf_keeps_shape_and_grad_shape():
  x = Tensor(np.array(3.0, np.float32), requires_grad=True)
  assert x.shape == ()
  (x * x).backward()
  assert x.grad.shape == ()

def test_scalar_leaf_gradient():
  x = Tensor(3.0, requires_grad=True)
  (x * x * x).backward()
  assert x.grad.shape == ()
  np.testing.assert_allclose(x.grad.numpy(), 27.0)

def test_constant_valued_leaf_is_distinct_from_equal_literal():
  x = Tensor(2.0, requires_grad=True)
  (x * 2.0).backward()
  assert x.grad.item() == 2.0  # torch: d(2x)/dx = 2

def test_two_ones_leaves_get_separate_gradients():
  a = Tensor.ones(3, requires_grad=True)
  b = Tensor.ones(3, requires_grad=True)
  (a * b * Tensor([1.0, 2.0, 3.0])).sum().backward()
  np.testing.assert_array_equal(a.grad.numpy(), [1.0, 2.0, 3.0])  # = b * w
  np.testing.assert_array_equal(b.grad.numpy(), [1.0, 2.0, 3.0])

def test_gradient_via_tensor_gradient_matches_backward():
  a = rnd(3, 4, seed=12)
  check(lambda x: (x * x).exp().sum(1), lambda x: (x * x).exp().sum(1), [a * 0.5], via="gradient")

# ------------------------------------------------------------------ elementwise unary

POS = dict(lo=0.3, hi=2.5)
UNARY = [
  # name, lazynb, torch, input maker
  ("neg", lambda x: -x, lambda x: -x, rnd),
  ("relu", lambda x: x.relu(), lambda x: x.relu(), away_from_zero),
  ("exp", lambda x: x.exp(), lambda x: x.exp(), rnd),
  ("log", lambda x: x.log(), lambda x: x.log(), lambda *s, seed=0: rnd(*s, seed=seed, **POS)),
  ("exp2", lambda x: x.exp2(), lambda x: x.exp2(), rnd),
  ("log2", lambda x: x.log2(), lambda x: x.log2(), lambda *s, seed=0: rnd(*s, seed=seed, **POS)),
  ("sqrt", lambda x: x.sqrt(), lambda x: x.sqrt(), lambda *s, seed=0: rnd(*s, seed=seed, **POS)),
  ("rsqrt", lambda x: x.rsqrt(), lambda x: x.rsqrt(), lambda *s, seed=0: rnd(*s, seed=seed, **POS)),
  ("sin", lambda x: x.sin(), lambda x: x.sin(), rnd),
  ("cos", lambda x: x.cos(), lambda x: x.cos(), rnd),
  ("tan", lambda x: x.tan(), lambda x: x.tan(), lambda *s, seed=0: rnd(*s, seed=seed, lo=-1.2, hi=1.2)),
  ("tanh", lambda x: x.tanh(), lambda x: x.tanh(), rnd),
  ("sigmoid", lambda x: x.sigmoid(), lambda x: x.sigmoid(), rnd),
  ("abs", lambda x: x.abs(), lambda x: x.abs(), away_from_zero),
  ("square", lambda x: x.square(), lambda x: x.square(), rnd),
  ("reciprocal", lambda x: x.reciprocal(), lambda x: x.reciprocal(), away_from_zero),
  ("leaky_relu", lambda x: x.leaky_relu(), lambda x: F.leaky_relu(x), away_from_zero),
  ("leaky_relu_0.2", lambda x: x.leaky_relu(0.2), lambda x: F.leaky_relu(x, 0.2), away_from_zero),
  ("elu", lambda x: x.elu(), lambda x: F.elu(x), away_from_zero),
  ("elu_alpha", lambda x: x.elu(0.5), lambda x: F.elu(x, 0.5), away_from_zero),
  ("softplus", lambda x: x.softplus(), lambda x: F.softplus(x), rnd),
  ("softplus_beta", lambda x: x.softplus(2.0), lambda x: F.softplus(x, beta=2.0), rnd),
  ("silu", lambda x: x.silu(), lambda x: F.silu(x), rnd),
  ("gelu_tanh", lambda x: x.gelu(), lambda x: F.gelu(x, approximate="tanh"), rnd),
  ("quick_gelu", lambda x: x.quick_gelu(), lambda x: x * torch.sigmoid(1.702 * x), rnd),
  ("mish", lambda x: x.mish(), lambda x: F.mish(x), rnd),
  ("relu6", lambda x: (x * 4).relu6(), lambda x: F.relu6(x * 4), away_from_zero),
  ("erf", lambda x: x.erf(), lambda x: torch.erf(x), away_from_zero),
  ("clip", lambda x: x.clip(-0.5, 0.7), lambda x: x.clamp(-0.5, 0.7), rnd),
  ("clip_min_only", lambda x: x.clip(min_=0.1), lambda x: x.clamp(min=0.1), rnd),
  ("pow_2", lambda x: x ** 2, lambda x: x ** 2, rnd),
  ("pow_3", lambda x: x ** 3, lambda x: x ** 3, rnd),
  ("pow_neg2", lambda x: x ** -2, lambda x: x ** -2, away_from_zero),
  ("pow_half", lambda x: x ** 0.5, lambda x: x ** 0.5, lambda *s, seed=0: rnd(*s, seed=seed, **POS)),
  ("pow_2.5", lambda x: x ** 2.5, lambda x: x ** 2.5, lambda *s, seed=0: rnd(*s, seed=seed, **POS)),
  ("rpow", lambda x: 2.0 ** x, lambda x: 2.0 ** x, rnd),
  ("add_const", lambda x: x + 1.5, lambda x: x + 1.5, rnd),
  ("rsub_const", lambda x: 1.5 - x, lambda x: 1.5 - x, rnd),
  ("rdiv_const", lambda x: 3.0 / x, lambda x: 3.0 / x, away_from_zero),
  ("div_const", lambda x: x / 3.0, lambda x: x / 3.0, rnd),
  ("lerp", lambda x: x.lerp(x * 3, 0.25), lambda x: torch.lerp(x, x * 3, 0.25), rnd),
]

@pytest.mark.parametrize("name,lz,th,mk", UNARY, ids=[u[0] for u in UNARY])
def test_unary_grad(name, lz, th, mk):
  tol = dict(atol=1e-4, rtol=1e-3) if name in ("erf", "tan", "gelu_tanh", "mish") else {}
  check(lz, th, [mk(2, 3, seed=zlib.crc32(name.encode()) % 1000)], **tol)

def test_sign_has_zero_gradient():
  a = away_from_zero(2, 3, seed=13)
  x = Tensor(a, requires_grad=True)
  out = x.sign() * 3 + x
  out.sum().backward()
  np.testing.assert_array_equal(out.numpy(), np.sign(a) * 3 + a)
  np.testing.assert_array_equal(x.grad.numpy(), np.ones_like(a))

def test_erf_forward_close_to_torch_everywhere():
  a = np.linspace(-4, 4, 41).astype(np.float32)
  np.testing.assert_allclose(Tensor(a).erf().numpy(), torch.erf(torch.tensor(a)).numpy(), atol=2e-7 * 10)

# ------------------------------------------------------------------ binary ops with broadcasting

BIN = [
  ("add", lambda a, b: a + b, lambda a, b: a + b),
  ("sub", lambda a, b: a - b, lambda a, b: a - b),
  ("mul", lambda a, b: a * b, lambda a, b: a * b),
  ("div", lambda a, b: a / b, lambda a, b: a / b),
  ("pow", lambda a, b: a.abs() ** b, lambda a, b: a.abs() ** b),
  ("pow_rev", lambda a, b: b.pow(a.abs(), reverse=True), lambda a, b: a.abs() ** b),
  ("maximum", lambda a, b: a.maximum(b), lambda a, b: torch.maximum(a, b)),
  ("minimum", lambda a, b: a.minimum(b), lambda a, b: torch.minimum(a, b)),
  ("where", lambda a, b: (a > b).where(a * 2, b), lambda a, b: torch.where(a > b, a * 2, b)),
]
BIN = [pytest.param(*b, id=b[0]) if type(b) is tuple else b for b in BIN]
SHAPES = [((2, 3), (2, 3)), ((3, 1), (1, 4)), ((2, 3), (3,)), ((4,), (2, 1, 1)), ((1,), (2, 3)), ((2, 3), ())]

@pytest.mark.parametrize("sa,sb", SHAPES, ids=[f"{a}x{b}" for a, b in SHAPES])
@pytest.mark.parametrize("name,lz,th", BIN)
def test_binary_broadcast_grad(name, lz, th, sa, sb):
  a = away_from_zero(*sa, seed=1)
  b = away_from_zero(*sb, seed=2)
  check(lz, th, [a, b])

def test_maximum_ties_split_gradient_like_torch():
  a = np.array([1.0, 2.0, 3.0], np.float32)
  b = np.array([1.0, 5.0, 3.0], np.float32)
  check(lambda x, y: x.maximum(y), lambda x, y: torch.maximum(x, y), [a, b])

def test_minimum_ties_split_gradient_like_torch():
  a = np.array([1.0, 2.0, 3.0], np.float32)
  b = np.array([1.0, 5.0, 3.0], np.float32)
  check(lambda x, y: x.minimum(y), lambda x, y: torch.minimum(x, y), [a, b])

def test_where_with_tensor_condition_both_branches():
  c = np.array([[True, False, True], [False, False, True]])
  a, b = rnd(2, 3, seed=3), rnd(1, 3, seed=4)
  check(lambda x, y: Tensor(c).where(x, y), lambda x, y: torch.where(torch.tensor(c), x, y), [a, b])

def test_where_with_scalar_branch():
  a = rnd(2, 3, seed=5)
  check(lambda x: (x > 0).where(x * 3, 0.5), lambda x: torch.where(x > 0, x * 3, torch.tensor(0.5, dtype=x.dtype)), [a])

def test_same_tensor_used_twice_in_binary_op():
  a = rnd(3, seed=6)
  check(lambda x: x * x + x / (x.abs() + 1), lambda x: x * x + x / (x.abs() + 1), [a])

# ------------------------------------------------------------------ reductions

AXES = [None, 0, 1, 2, (0, 2)]

def _dims(axis, nd):
  return tuple(range(nd)) if axis is None else axis

def th_prod(x, axis, keepdim):
  dims = _dims(axis, x.ndim)
  dims = (dims,) if isinstance(dims, int) else dims
  for d in sorted((d % x.ndim for d in dims), reverse=True): x = x.prod(d, keepdim=True)
  if not keepdim: x = x.squeeze(tuple(d % 3 for d in dims))
  return x

REDUCE = [
  ("sum", lambda x, a, k: x.sum(a, keepdim=k), lambda x, a, k: x.sum(_dims(a, x.ndim), keepdim=k), rnd),
  ("mean", lambda x, a, k: x.mean(a, keepdim=k), lambda x, a, k: x.mean(_dims(a, x.ndim), keepdim=k), rnd),
  ("max", lambda x, a, k: x.max(a, keepdim=k), lambda x, a, k: x.amax(_dims(a, x.ndim), keepdim=k), rnd),
  ("min", lambda x, a, k: x.min(a, keepdim=k), lambda x, a, k: x.amin(_dims(a, x.ndim), keepdim=k), rnd),
  ("var", lambda x, a, k: x.var(a, keepdim=k), lambda x, a, k: x.var(_dims(a, x.ndim), keepdim=k), rnd),
  ("std", lambda x, a, k: x.std(a, keepdim=k), lambda x, a, k: x.std(_dims(a, x.ndim), keepdim=k), rnd),
  ("prod", lambda x, a, k: x.prod(a, keepdim=k), th_prod, lambda *s, seed=0: away_from_zero(*s, seed=seed, lo=0.6, hi=1.5)),
  ("logsumexp", lambda x, a, k: x.logsumexp(a, keepdim=k), lambda x, a, k: x.logsumexp(_dims(a, x.ndim), keepdim=k), rnd),
]

@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=[str(a) for a in AXES])
@pytest.mark.parametrize("name,lz,th,mk", REDUCE, ids=[r[0] for r in REDUCE])
def test_reduce_grad(name, lz, th, mk, axis, keepdim):
  a = mk(2, 3, 4, seed=21)
  check(lambda x: lz(x, axis, keepdim), lambda x: th(x, axis, keepdim), [a])

@pytest.mark.parametrize("name", ["sum", "max", "var", "logsumexp"])
def test_reduce_grad_negative_axes(name):
  lz, th, mk = next((r[1], r[2], r[3]) for r in REDUCE if r[0] == name)
  check(lambda x: lz(x, (-1, -3), True), lambda x: th(x, (-1, -3), True), [mk(2, 3, 4, seed=25)])

def test_var_std_correction_0():
  a = rnd(3, 4, seed=22)
  check(lambda x: x.var(1, correction=0), lambda x: x.var(1, correction=0), [a])
  check(lambda x: x.std(0, correction=0), lambda x: x.std(0, correction=0), [a])

@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_softmax_grad(axis):
  check(lambda x: x.softmax(axis), lambda x: x.softmax(axis), [rnd(2, 3, 4, seed=23)])

@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_log_softmax_grad(axis):
  check(lambda x: x.log_softmax(axis), lambda x: x.log_softmax(axis), [rnd(2, 3, 4, seed=24)])

def test_softmax_large_logits_stable_gradient():
  a = np.array([[1000.0, 999.0, 998.0], [-1000.0, -1001.0, -1003.0]], np.float32)
  check(lambda x: x.log_softmax(-1), lambda x: x.log_softmax(-1), [a])

def test_max_ties_split_gradient_like_torch_amax():
  a = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]], np.float32)
  check(lambda x: x.max(1), lambda x: x.amax(1), [a])
  check(lambda x: x.max(), lambda x: x.amax(), [a])

def test_prod_grad_with_a_zero():
  a = np.array([[2.0, 0.0, 3.0], [1.5, 2.0, -1.0]], np.float32)
  check(lambda x: x.prod(1), lambda x: x.prod(1), [a])

# ------------------------------------------------------------------ movement ops

MOVE = [
  ("reshape", lambda x: x.reshape(4, 6), lambda x: x.reshape(4, 6)),
  ("reshape_minus1", lambda x: x.reshape(-1, 2), lambda x: x.reshape(-1, 2)),
  ("permute", lambda x: x.permute(2, 0, 1), lambda x: x.permute(2, 0, 1)),
  ("transpose", lambda x: x.transpose(0, 2), lambda x: x.transpose(0, 2)),
  ("T_2d", lambda x: x[0].T, lambda x: x[0].T),
  ("expand", lambda x: x[:, :1].expand(2, 5, 4), lambda x: x[:, :1].expand(2, 5, 4)),
  ("expand_new_dim", lambda x: x.reshape(1, 2, 3, 4).expand(3, 2, 3, 4), lambda x: x.reshape(1, 2, 3, 4).expand(3, 2, 3, 4)),
  ("pad", lambda x: x.pad(((0, 1), (2, 0), (1, 1))), lambda x: F.pad(x, (1, 1, 2, 0, 0, 1))),
  ("pad_flat_torch_order", lambda x: x.pad((1, 2, 0, 1)), lambda x: F.pad(x, (1, 2, 0, 1))),
  ("pad_value", lambda x: x.pad(((1, 0), (0, 0), (0, 2)), value=2.5), lambda x: F.pad(x, (0, 2, 0, 0, 1, 0), value=2.5)),
  ("pad_negative", lambda x: x.pad((-1, 1)), lambda x: F.pad(x, (-1, 1))),
  ("shrink", lambda x: x.shrink(((1, 2), None, (1, 3))), lambda x: x[1:2, :, 1:3]),
  ("flip0", lambda x: x.flip(0), lambda x: x.flip(0)),
  ("flip_multi", lambda x: x.flip((0, 2)), lambda x: x.flip((0, 2))),
  ("flatten", lambda x: x.flatten(1), lambda x: x.flatten(1)),
  ("unsqueeze_squeeze", lambda x: x.unsqueeze(1).squeeze(1) * x.unsqueeze(-1).squeeze(), lambda x: x.unsqueeze(1).squeeze(1) * x.unsqueeze(-1).squeeze()),
  ("getitem_int", lambda x: x[1], lambda x: x[1]),
  ("getitem_neg_int", lambda x: x[:, -1], lambda x: x[:, -1]),
  ("getitem_step2", lambda x: x[:, ::2], lambda x: x[:, ::2]),
  ("getitem_step3_offset", lambda x: x[..., 1::3], lambda x: x[..., 1::3]),
  ("getitem_neg_step", lambda x: x[:, ::-1], lambda x: x.flip(1)),
  ("getitem_neg_step2", lambda x: x[:, :, ::-2], lambda x: x.flip(2)[:, :, ::2]),
  ("getitem_neg_step_range", lambda x: x[:, 2:0:-1, 3:0:-2], lambda x: x[:, 1:3].flip(1)[:, :, [3, 1]]),
  ("getitem_none_ellipsis", lambda x: x[None, ..., 2], lambda x: x[None, ..., 2]),
  ("getitem_tensor_index", lambda x: x[Tensor(np.array([1, 0, 1, 1], np.int32))], lambda x: x[torch.tensor([1, 0, 1, 1])]),
  ("repeat", lambda x: x.repeat(2, 1, 3), lambda x: x.repeat(2, 1, 3)),
  ("repeat_new_dims", lambda x: x[0].repeat(2, 1, 2), lambda x: x[0].repeat(2, 1, 2)),
  ("split", lambda x: x.split(1, 1)[1] * x.split([3, 1], 2)[1][:, 1:2], lambda x: x.split(1, 1)[1] * x.split([3, 1], 2)[1][:, 1:2]),
  ("chunk", lambda x: x.chunk(2, 2)[1], lambda x: x.chunk(2, 2)[1]),
]

@pytest.mark.parametrize("name,lz,th", MOVE, ids=[m[0] for m in MOVE])
def test_movement_grad(name, lz, th):
  check(lz, th, [rnd(2, 3, 4, seed=31)])

@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_grad(dim):
  a, b, c = rnd(2, 3, seed=1), rnd(2, 3, seed=2), rnd(2, 3, seed=3)
  check(lambda x, y, z: x.cat(y, z, dim=dim), lambda x, y, z: torch.cat([x, y, z], dim), [a, b, c])

def test_cat_grad_unequal_sizes():
  a, b = rnd(2, 1, seed=1), rnd(2, 4, seed=2)
  check(lambda x, y: x.cat(y, dim=1), lambda x, y: torch.cat([x, y], 1), [a, b])

@pytest.mark.parametrize("dim", [0, 1, 2])
def test_stack_grad(dim):
  a, b = rnd(2, 3, seed=4), rnd(2, 3, seed=5)
  check(lambda x, y: x.stack(y, dim=dim), lambda x, y: torch.stack([x, y], dim), [a, b])

def test_cat_same_tensor_twice():
  a = rnd(2, 3, seed=6)
  check(lambda x: x.cat(x * 2, dim=0), lambda x: torch.cat([x, x * 2], 0), [a])

def test_cumsum_grad():
  check(lambda x: x.cumsum(1), lambda x: x.cumsum(1), [rnd(2, 4, seed=7)])

# ------------------------------------------------------------------ matmul / dot / linear

MATMUL = [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((4,), (4, 5)), ((3, 4), (4,)),
          ((4,), (4,)), ((2, 1, 3, 4), (5, 4, 2))]

@pytest.mark.parametrize("sa,sb", MATMUL, ids=[f"{a}@{b}" for a, b in MATMUL])
def test_matmul_grad(sa, sb):
  check(lambda x, y: x @ y, lambda x, y: x @ y, [rnd(*sa, seed=41), rnd(*sb, seed=42)])

def test_dot_method_grad():
  check(lambda x, y: x.dot(y), lambda x, y: x @ y, [rnd(2, 3, seed=43), rnd(3, 2, seed=44)])

def test_linear_grad():
  x, w, b = rnd(4, 3, seed=45), rnd(5, 3, seed=46), rnd(5, seed=47)
  check(lambda x, w, b: x.linear(w.T, b), lambda x, w, b: F.linear(x, w, b), [x, w, b])

def test_linear_batched_no_bias():
  x, w = rnd(2, 4, 3, seed=48), rnd(3, 5, seed=49)
  check(lambda x, w: x.linear(w), lambda x, w: x @ w, [x, w])

def test_linear_1d_weight_is_elementwise():
  x, w, b = rnd(4, 3, seed=50), rnd(3, seed=51), rnd(3, seed=52)
  check(lambda x, w, b: x.linear(w, b), lambda x, w, b: x * w + b, [x, w, b])

# ------------------------------------------------------------------ convolution and pooling

CONV = [
  dict(x=(1, 2, 5, 5), w=(3, 2, 3, 3)),
  dict(x=(2, 2, 6, 5), w=(3, 2, 3, 2), stride=2),
  dict(x=(1, 2, 5, 5), w=(2, 2, 3, 3), padding=1),
  dict(x=(1, 2, 4, 5), w=(2, 2, 3, 3), padding=(1, 2)),
  dict(x=(1, 1, 7, 7), w=(2, 1, 3, 3), dilation=2),
  dict(x=(1, 4, 5, 5), w=(4, 2, 3, 3), groups=2),
  dict(x=(1, 4, 4, 4), w=(4, 1, 3, 3), groups=4, padding=1),  # depthwise
  dict(x=(2, 4, 7, 6), w=(6, 2, 3, 2), groups=2, stride=(2, 1), padding=(1, 1), dilation=(1, 2)),
  dict(x=(1, 3, 4, 4), w=(2, 3, 1, 1)),
]

@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("cfg", CONV, ids=[str(sorted(c.items())) for c in CONV])
def test_conv2d_grad(cfg, bias):
  cfg = dict(cfg)
  xs, ws = cfg.pop("x"), cfg.pop("w")
  arrays = [rnd(*xs, seed=61), rnd(*ws, seed=62)] + ([rnd(ws[0], seed=63)] if bias else [])
  def lz(x, w, b=None): return x.conv2d(w, b, **cfg)
  def th(x, w, b=None): return F.conv2d(x, w, b, **cfg)
  check(lz, th, arrays, atol=1e-4)

POOL = [dict(kernel_size=2), dict(kernel_size=(2, 3)), dict(kernel_size=3, stride=2), dict(kernel_size=3, stride=1, padding=1),
        dict(kernel_size=2, stride=1)]

@pytest.mark.parametrize("cfg", POOL, ids=[str(sorted(c.items())) for c in POOL])
def test_max_pool2d_grad(cfg):
  a = np.random.default_rng(71).permutation(2 * 2 * 6 * 6).reshape(2, 2, 6, 6).astype(np.float32) / 10  # no ties
  check(lambda x: x.max_pool2d(**cfg), lambda x: F.max_pool2d(x, **cfg), [a])

TILED = [dict(kernel_size=2), dict(kernel_size=(2, 3)), dict(kernel_size=3, padding=1), dict(kernel_size=(3, 2), stride=(3, 2))]

@pytest.mark.parametrize("cfg", TILED, ids=[str(sorted(c.items())) for c in TILED])
def test_tiled_pool_grads_on_sizes_the_windows_do_not_divide(cfg):
  """stride == kernel (the windows tile the input: a cut and a reshape) on 7x11: the rows and columns past the last
  window get no gradient, padding with -inf (max) or 0 (avg) sits outside the cut."""
  a = np.random.default_rng(74).permutation(2 * 3 * 7 * 11).reshape(2, 3, 7, 11).astype(np.float32) / 10  # no ties
  check(lambda x: x.max_pool2d(**cfg), lambda x: F.max_pool2d(x, **cfg), [a])
  check(lambda x: x.avg_pool2d(**cfg), lambda x: F.avg_pool2d(x, **cfg), [a])

def test_max_pool2d_dilation_grad():
  a = np.random.default_rng(72).permutation(49).reshape(1, 1, 7, 7).astype(np.float32)
  check(lambda x: x.max_pool2d(2, stride=1, dilation=2), lambda x: F.max_pool2d(x, 2, stride=1, dilation=2), [a])

@pytest.mark.parametrize("cfg", POOL, ids=[str(sorted(c.items())) for c in POOL])
def test_avg_pool2d_grad(cfg):
  check(lambda x: x.avg_pool2d(**cfg), lambda x: F.avg_pool2d(x, **cfg), [rnd(2, 2, 6, 6, seed=73)])

# ------------------------------------------------------------------ losses

def test_sparse_categorical_crossentropy_grad():
  y = np.array([0, 3, 1, 4], np.int32)
  check(lambda x: x.sparse_categorical_crossentropy(Tensor(y)), lambda x: F.cross_entropy(x, torch.tensor(y, dtype=torch.long)),
        [rnd(4, 5, seed=81)])

def test_sparse_categorical_crossentropy_ignore_index():
  y = np.array([0, 9, 2, 9], np.int32)  # (the default ignore_index=-1 ignores nothing, as in tinygrad: tests/test_nn_layers.py)
  check(lambda x: x.sparse_categorical_crossentropy(Tensor(y), ignore_index=9),
        lambda x: F.cross_entropy(x, torch.tensor(y, dtype=torch.long), ignore_index=9), [rnd(4, 3, seed=82)])

def test_sparse_categorical_crossentropy_label_smoothing():
  y = np.array([2, 0, 1], np.int32)
  check(lambda x: x.sparse_categorical_crossentropy(Tensor(y), label_smoothing=0.2),
        lambda x: F.cross_entropy(x, torch.tensor(y, dtype=torch.long), label_smoothing=0.2), [rnd(3, 4, seed=83)])

def test_cross_entropy_int_labels():
  y = np.array([1, 1, 0], np.int32)
  check(lambda x: x.cross_entropy(Tensor(y)), lambda x: F.cross_entropy(x, torch.tensor(y, dtype=torch.long)), [rnd(3, 4, seed=84)])

def test_cross_entropy_probability_targets():
  p = np.random.default_rng(85).dirichlet(np.ones(4), 3).astype(np.float32)
  check(lambda x: x.cross_entropy(Tensor(p)), lambda x: F.cross_entropy(x, torch.tensor(p, dtype=torch.float64)), [rnd(3, 4, seed=86)])

def test_cross_entropy_probability_targets_label_smoothing():
  p = np.random.default_rng(87).dirichlet(np.ones(4), 3).astype(np.float32)
  check(lambda x: x.cross_entropy(Tensor(p), label_smoothing=0.1),
        lambda x: F.cross_entropy(x, torch.tensor(p, dtype=torch.float64), label_smoothing=0.1), [rnd(3, 4, seed=88)])

def test_binary_crossentropy_grad():
  y = (np.random.default_rng(89).random((3, 4)) > 0.5).astype(np.float32)
  check(lambda x: x.sigmoid().binary_crossentropy(Tensor(y)), lambda x: F.binary_cross_entropy(x.sigmoid(), torch.tensor(y, dtype=torch.float64)),
        [rnd(3, 4, seed=90)])

def test_binary_crossentropy_logits_grad():
  y = np.random.default_rng(91).random((3, 4)).astype(np.float32)
  check(lambda x: x.binary_crossentropy_logits(Tensor(y)),
        lambda x: F.binary_cross_entropy_with_logits(x, torch.tensor(y, dtype=torch.float64)), [rnd(3, 4, seed=92) * 3])

def test_binary_crossentropy_grad_wrt_targets_too():
  y = np.random.default_rng(93).uniform(0.1, 0.9, (2, 3)).astype(np.float32)
  check(lambda x, t: x.binary_crossentropy_logits(t), lambda x, t: F.binary_cross_entropy_with_logits(x, t), [rnd(2, 3, seed=94), y])

# ------------------------------------------------------------------ normalization, dropout

def test_layernorm_grad_last_axis():
  check(lambda x: x.layernorm(), lambda x: F.layer_norm(x, (4,)), [rnd(2, 3, 4, seed=101)], atol=1e-4)

def test_layernorm_grad_two_axes():
  check(lambda x: x.layernorm((-2, -1), eps=1e-3), lambda x: F.layer_norm(x, (3, 4), eps=1e-3), [rnd(2, 3, 4, seed=102)], atol=1e-4)

def test_dropout_p0_in_training_is_identity_with_unit_gradient():
  with Tensor.train():
    check(lambda x: x.dropout(0.0), lambda x: F.dropout(x, 0.0, training=True), [rnd(3, 4, seed=103)])

def test_dropout_in_eval_mode_is_identity():
  assert not Tensor.training
  check(lambda x: x.dropout(0.5), lambda x: F.dropout(x, 0.5, training=False), [rnd(3, 4, seed=104)])

def test_dropout_training_gradient_matches_mask():
  a = away_from_zero(8, 8, seed=105)
  x = Tensor(a, requires_grad=True)
  with Tensor.train():
    out = x.dropout(0.25)
  out.sum().backward()
  o = out.numpy()
  kept = o != 0
  assert 0 < kept.sum() < kept.size
  np.testing.assert_allclose(o[kept], a[kept] / 0.75, rtol=1e-6)
  np.testing.assert_allclose(x.grad.numpy(), kept / 0.75, rtol=1e-6)

# ------------------------------------------------------------------ a small composite: MLP with a loss

def test_mlp_cross_entropy_all_grads():
  x, w1, b1, w2, b2 = rnd(4, 3, seed=111), rnd(3, 5, seed=112), rnd(5, seed=113), rnd(5, 2, seed=114), rnd(2, seed=115)
  y = np.array([0, 1, 1, 0], np.int32)
  def lz(x, w1, b1, w2, b2): return (x @ w1 + b1).relu().linear(w2, b2).sparse_categorical_crossentropy(Tensor(y))
  def th(x, w1, b1, w2, b2): return F.cross_entropy((x @ w1 + b1).relu() @ w2 + b2, torch.tensor(y, dtype=torch.long))
  check(lz, th, [x, w1, b1, w2, b2])

def test_gradient_rules_come_first_fall_through_and_are_held_to_the_sources():
  """lazynb.gradient.gradient_rules (the build track's seam): a rule of yours runs before lazynb's, an op it does not
  match (or a None) falls through, and a gradient of the wrong count or shape is a clear error, never broadcast."""
  from lazynb.gradient import gradient_rules
  from lazynb.uop.ops import UPat, PatternMatcher, Ops
  a = np.array([1.0, 2.0, 3.0], np.float32)
  def grad(pm):
    x = Tensor(a, requires_grad=True)
    with gradient_rules(pm): (x.exp() * x).sum().backward()
    return x.grad.numpy()
  want = np.exp(a) * (1 + a)
  np.testing.assert_allclose(grad(PatternMatcher([(UPat(Ops.MUL), lambda ctx: None)])), want, rtol=1e-5)  # None: lazynb's rule
  doubled = PatternMatcher([(UPat(Ops.EXP2, name="ret"), lambda ctx, ret: (ctx * ret * 2 * math.log(2),))])
  np.testing.assert_allclose(grad(doubled), np.exp(a) * (1 + 2 * a), rtol=1e-5)  # yours ran (a wrong rule, on purpose)
  with pytest.raises(ValueError, match="one gradient .or None. per source: Ops.MUL has 2"):
    grad(PatternMatcher([(UPat(Ops.MUL), lambda ctx: (ctx,))]))
  with pytest.raises(ValueError, match=r"gave a gradient of shape \(1,\) to a source of shape \(3,\)"):
    grad(PatternMatcher([(UPat(Ops.EXP2, name="ret"), lambda ctx, ret: (ctx.r(Ops.ADD, (0,)),))]))
  with pytest.raises(TypeError, match="takes a PatternMatcher"):
    with gradient_rules([]): pass

def test_a_value_made_from_a_leaf_no_longer_referenced_gets_its_gradient():
  """t = Tensor(data, requires_grad=True).reshape(...) keeps no name for the leaf: backward() still fills t.grad (as
  tinygrad, whose test_mean_half_precision_overflow does this; torch would give the leaf's .grad), where it used to
  say that no tensor with requires_grad=True contributes. A graph with no such leaf at all still says so."""
  import gc
  t = Tensor(np.arange(6, dtype=np.float32), requires_grad=True).reshape(2, 3) * 2
  gc.collect()
  (t * t).sum().backward()
  np.testing.assert_allclose(t.grad.numpy(), 2 * t.numpy())
  x = Tensor([1.0, 2.0], requires_grad=True)
  y = x.reshape(2, 1).detach() * 3  # through a detach: no gradient reaches y from x
  del x
  gc.collect()
  with pytest.raises(RuntimeError, match="no tensor with requires_grad=True contributes"): (y * y).sum().backward()
  with pytest.raises(RuntimeError, match="no tensor with requires_grad=True contributes"): Tensor([1.0, 2.0]).sum().backward()

REWRITTEN = {  # values whose graph the scheduler rewrites before it cuts kernels (engine/schedule.py's tensor-graph passes)
  "permuted reduce": ((2, 3, 4), lambda x, m: x.sum(0, keepdim=True).permute(2, 1, 0) * 3, {}),
  "long sum in two stages": ((2**17,), lambda x, m: (m.sqrt(x * x + 1) if m is torch else (x * x + 1).sqrt()).sum() * 2, {}),
  "max of an upcast": ((3, 5), lambda x, m: x.half().float().max(1) * 3 + 1 if m is not torch else x.half().float().amax(1) * 3 + 1, {}),
  "reduce under an expand": ((4, 5), lambda x, m: x.sum(1).reshape(4, 1).expand(4, 5) * x, {"DONT_REALIZE_EXPAND": 1}),
  "two reduces in a kernel": ((4, 5), lambda x, m: x.sum(1) * 2 + (x * x).sum(1), {"DONT_GROUP_REDUCES": 1}),
}

@pytest.mark.parametrize("name", sorted(REWRITTEN))
def test_backward_through_a_realized_value_whose_graph_the_scheduler_rewrote(name):
  """Realized first (.numpy()), then differentiated: the buffer is traced back to the tensor's own graph, not the
  scheduler's rewritten one (which nothing holds: backward said no tensor contributes). Gradients as torch's."""
  from lazynb.helpers import Context
  shape, f, settings = REWRITTEN[name]
  xn = np.random.default_rng(9).uniform(-1, 1, shape).astype(np.float32)
  x, tx = Tensor(xn, requires_grad=True), torch.tensor(xn, requires_grad=True)
  with Context(**settings):
    out = f(x, Tensor)
    out.numpy()
    (out * 0.5).sum().backward()
  (f(tx, torch) * 0.5).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
