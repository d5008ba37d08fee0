"""Optimizers checked step by step against torch.optim on a small MLP with copied weights and the same data.
Known lazynb bugs are marked xfail(strict=True) with a `bug:` reason.
"""
import numpy as np
import pytest
from lazynb import Tensor, nn
from lazynb.nn import optim

torch = pytest.importorskip("torch")
# optimizers step only in training mode (as tinygrad)
pytestmark = [pytest.mark.torch, pytest.mark.usefixtures("training_mode")]

STEPS = 5

def rnd(*shape, seed=0): return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

X = rnd(6, 3, seed=1)
Y = np.array([0, 1, 1, 0, 1, 0], np.int32)

class LzMLP:
  def __init__(self, tm):
    self.l1, self.l2 = nn.Linear(3, 4), nn.Linear(4, 2)
    for lz, t in ((self.l1, tm[0]), (self.l2, tm[2])):
      lz.weight = Tensor(t.weight.detach().numpy().copy())
      lz.bias = Tensor(t.bias.detach().numpy().copy())
  def __call__(self, x): return self.l2(self.l1(x).relu())

def make_models(seed=0):
  torch.manual_seed(seed)
  tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
  return tm, LzMLP(tm)

def lz_params(m): return [m.l1.weight, m.l1.bias, m.l2.weight, m.l2.bias]

def run_pair(make_lz_opt, make_th_opt, steps=STEPS, zero_grad=True, rtol=1e-4, atol=1e-5):
  tm, lm = make_models()
  lopt, topt = make_lz_opt(lz_params(lm)), make_th_opt(list(tm.parameters()))
  xt, yt = torch.tensor(X), torch.tensor(Y, dtype=torch.long)
  xl, yl = Tensor(X), Tensor(Y)
  for step in range(steps):
    if zero_grad:
      lopt.zero_grad()
      topt.zero_grad()
    loss_l = lm(xl).sparse_categorical_crossentropy(yl)
    loss_l.backward()
    lv = loss_l.item()  # read after backward() (the graph is differentiated already) and before step()
    lopt.step()
    loss_t = torch.nn.functional.cross_entropy(tm(xt), yt)
    loss_t.backward()
    topt.step()
    np.testing.assert_allclose(lv, loss_t.item(), rtol=rtol, atol=atol, err_msg=f"loss at step {step}")
    for i, (pl, pt) in enumerate(zip(lz_params(lm), tm.parameters())):
      np.testing.assert_allclose(pl.numpy(), pt.detach().numpy(), rtol=rtol, atol=atol, err_msg=f"param {i} after step {step}")
  return lm, tm

# ------------------------------------------------------------------ SGD

SGD_CFGS = [dict(), dict(momentum=0.9), dict(momentum=0.9, nesterov=True),
            dict(weight_decay=0.1), dict(momentum=0.5, weight_decay=0.05),
            dict(momentum=0.8, nesterov=True, weight_decay=0.02)]

@pytest.mark.parametrize("cfg", SGD_CFGS, ids=lambda c: str(sorted(c.items())))
def test_sgd_matches_torch(cfg):
  run_pair(lambda p: optim.SGD(p, lr=0.1, **cfg), lambda p: torch.optim.SGD(p, lr=0.1, **cfg))

def test_sgd_plain_matches_torch_when_grads_are_realized_first():
  """The same SGD run with the gradients realized before step() (the order the step must respect anyway)."""
  tm, lm = make_models()
  lopt, topt = optim.SGD(lz_params(lm), lr=0.1, weight_decay=0.1), torch.optim.SGD(list(tm.parameters()), lr=0.1, weight_decay=0.1)
  for step in range(STEPS):
    lopt.zero_grad(); topt.zero_grad()  # noqa: E702
    lm(Tensor(X)).sparse_categorical_crossentropy(Tensor(Y)).backward()
    Tensor.realize_all(*[p.grad for p in lopt.params])
    lopt.step()
    torch.nn.functional.cross_entropy(tm(torch.tensor(X)), torch.tensor(Y, dtype=torch.long)).backward()
    topt.step()
    for pl, pt in zip(lz_params(lm), tm.parameters()):
      np.testing.assert_allclose(pl.numpy(), pt.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=f"after step {step}")

def test_sgd_two_params_whose_grads_read_each_other():
  a = Tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
  b = Tensor(np.array([3.0, 4.0], np.float32), requires_grad=True)
  opt = optim.SGD([a, b], lr=1.0)
  (a * b).sum().backward()
  opt.step()
  np.testing.assert_allclose(a.numpy(), [-2.0, -2.0])  # a - grad_a = a - b
  np.testing.assert_allclose(b.numpy(), [2.0, 2.0])    # b - grad_b = b - a (old a)

def test_adam_matches_torch():
  run_pair(lambda p: optim.Adam(p, lr=0.01), lambda p: torch.optim.Adam(p, lr=0.01))

def test_adam_custom_betas_eps():
  run_pair(lambda p: optim.Adam(p, lr=0.05, b1=0.5, b2=0.9, eps=1e-3), lambda p: torch.optim.Adam(p, lr=0.05, betas=(0.5, 0.9), eps=1e-3))

@pytest.mark.parametrize("wd", [0.01, 0.3])
def test_adamw_matches_torch(wd):
  run_pair(lambda p: optim.AdamW(p, lr=0.02, weight_decay=wd), lambda p: torch.optim.AdamW(p, lr=0.02, weight_decay=wd))

def test_lamb_matches_numpy_reference():
  """No torch LAMB: check one step of lazynb's LAMB against the formulas written out in numpy."""
  a, g = rnd(3, 4, seed=5), rnd(3, 4, seed=6)
  p = Tensor(a, requires_grad=True)
  opt = optim.LAMB([p], lr=0.1, b1=0.9, b2=0.99, eps=1e-6, weight_decay=0.01)
  (p * Tensor(g)).sum().backward()
  opt.step()
  m, v = 0.1 * g, 0.01 * g * g
  up = (m / 0.1) / (np.sqrt(v / 0.01) + 1e-6) + 0.01 * a
  r = np.linalg.norm(a) / np.linalg.norm(up)
  np.testing.assert_allclose(p.numpy(), a - 0.1 * r * up, rtol=1e-4, atol=1e-6)

# ------------------------------------------------------------------ zero_grad, step, errors

def test_zero_grad_clears_grads():
  tm, lm = make_models()
  opt = optim.SGD(lz_params(lm), lr=0.1)
  lm(Tensor(X)).sum().backward()
  assert all(p.grad is not None for p in opt.params)
  opt.zero_grad()
  assert all(p.grad is None for p in opt.params)

def test_step_without_backward_raises():
  tm, lm = make_models()
  opt = optim.SGD(lz_params(lm), lr=0.1)
  with pytest.raises(RuntimeError, match="backward"):
    opt.step()

def test_optimizer_marks_params_requires_grad():
  tm, lm = make_models()
  ps = lz_params(lm)
  assert all(p.requires_grad is None for p in ps)
  optim.Adam(ps)
  assert all(p.requires_grad is True for p in ps)

def test_optimizer_with_no_trainable_params_raises():
  with pytest.raises(ValueError, match="no parameters"):
    optim.SGD([Tensor([1.0, 2.0], requires_grad=False)])

def test_step_updates_in_place_same_buffer():
  p = Tensor(np.array([1.0, -2.0], np.float32), requires_grad=True)
  opt = optim.SGD([p], lr=0.5)
  alias = p  # the same Tensor object keeps being the parameter
  (p * p).sum().backward()
  opt.step()
  np.testing.assert_allclose(alias.numpy(), [0.0, 0.0])
  assert p.uop.is_realized

def test_step_under_inference_mode_raises():
  p = Tensor(np.array([1.0], np.float32), requires_grad=True)
  opt = optim.SGD([p], lr=0.5)
  (p * 2).sum().backward()
  with Tensor.inference_mode():
    with pytest.raises(RuntimeError, match="gradients are off"):
      opt.step()

def test_duplicate_params_updated_once():
  p = Tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
  opt = optim.SGD([p, p], lr=0.1)
  (p * 3).sum().backward()
  opt.step()
  np.testing.assert_allclose(p.numpy(), [0.7, 1.7], rtol=1e-6)

def test_training_loop_lowers_loss():
  tm, lm = make_models(3)
  opt = optim.Adam(lz_params(lm), lr=0.05)
  losses = []
  for _ in range(8):
    opt.zero_grad()
    loss = lm(Tensor(X)).sparse_categorical_crossentropy(Tensor(Y))
    loss.backward()
    losses.append(loss.item())
    opt.step()
  assert losses[-1] < losses[0] * 0.8, losses

@pytest.mark.parametrize("make", [
  pytest.param(lambda p: optim.SGD(p, lr=0.1), id="SGD"),
  pytest.param(lambda p: optim.SGD(p, lr=0.1, momentum=0.9), id="SGD-momentum"),
  pytest.param(lambda p: optim.Adam(p, lr=0.1), id="Adam"),
  pytest.param(lambda p: optim.AdamW(p, lr=0.1), id="AdamW"),
])
def test_optimizer_on_scalar_parameter(make):
  p = Tensor(3.0).contiguous().realize()  # a real 0-d buffer
  p.requires_grad = True
  assert p.shape == ()
  opt = make([p])
  (p * p).backward()
  opt.step()
  assert p.shape == ()
  assert p.item() < 3.0

@pytest.mark.parametrize("mom", [0.0, 0.9])
def test_sgd_without_zero_grad_accumulates_like_torch(mom):
  run_pair(lambda p: optim.SGD(p, lr=0.1, momentum=mom), lambda p: torch.optim.SGD(p, lr=0.1, momentum=mom), steps=3, zero_grad=False)

def test_loss_read_after_step_is_the_pre_step_loss():
  a = np.array([1.0, 2.0, 3.0], np.float32)
  w = Tensor(a, requires_grad=True)
  opt = optim.SGD([w], lr=0.1)
  loss = (w * w).sum()
  loss.backward()
  opt.step()
  np.testing.assert_allclose(w.numpy(), a * 0.8, rtol=1e-6)
  np.testing.assert_allclose(loss.item(), 14.0, rtol=1e-6)

def test_grad_read_after_step_is_the_gradient_that_was_applied():
  a = np.array([1.0, 2.0, 3.0], np.float32)
  w = Tensor(a, requires_grad=True)
  opt = optim.SGD([w], lr=0.1)
  (w * w).sum().backward()
  opt.step()
  np.testing.assert_allclose(w.grad.numpy(), 2 * a, rtol=1e-6)

def test_optimizer_state_buffers_are_independent():
  p1 = Tensor(rnd(2, 2, seed=20), requires_grad=True)
  p2 = Tensor(rnd(2, 2, seed=21), requires_grad=True)
  adam = optim.Adam([p1, p2])
  sgd = optim.SGD([p1, p2], lr=0.1, momentum=0.9)
  bufs = adam.m + adam.v + sgd.b
  assert len({id(b.uop.base) for b in bufs}) == len(bufs), "every optimizer state tensor needs its own buffer"

def test_sgd_momentum_two_params_of_the_same_shape_matches_torch():
  a, b, x = rnd(3, 3, seed=22), rnd(3, 3, seed=23), rnd(4, 3, seed=24)
  pa, pb = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
  ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
  opt, topt = optim.SGD([pa, pb], lr=0.1, momentum=0.9), torch.optim.SGD([ta, tb], lr=0.1, momentum=0.9)
  for step in range(3):
    opt.zero_grad(); topt.zero_grad()  # noqa: E702
    ((Tensor(x) @ pa).tanh() @ pb).square().mean().backward()
    opt.step()
    ((torch.tensor(x) @ ta).tanh() @ tb).square().mean().backward()
    topt.step()
    np.testing.assert_allclose(pa.numpy(), ta.detach().numpy(), rtol=1e-4, atol=1e-6, err_msg=f"a after step {step}")
    np.testing.assert_allclose(pb.numpy(), tb.detach().numpy(), rtol=1e-4, atol=1e-6, err_msg=f"b after step {step}")


def test_step_outside_training_mode_raises_as_tinygrad():
  """tinygrad 0.10's Optimizer refuses to step unless Tensor.training is set (RuntimeError); the message names the fix."""
  Tensor.training = False  # (the module's fixture restores it)
  w = Tensor([1.0, 2.0], requires_grad=True)
  opt = optim.SGD([w], lr=0.1)
  (w * w).sum().backward()
  with pytest.raises(RuntimeError, match=r"with Tensor.train\(\):"): opt.step()
  np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])  # nothing was written
  with Tensor.train(): opt.step()
  np.testing.assert_allclose(w.numpy(), [0.8, 1.6])

@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_mixed_precision_steps_as_torch(name):
  """dtypes.default_float = half with float32 parameters and lr 1e10: an update that only float32 state can hold. The
  moments and momentum buffers used to take the default float (half): Adam's first step was off by 4e-4 (tinygrad's
  test_mixed_precision)."""
  from lazynb import dtypes
  w0, x0 = rnd(4, 4, seed=3), rnd(1, 4, seed=4)
  old, dtypes.default_float = dtypes.default_float, dtypes.half
  try:
    w, x = Tensor(w0.copy(), requires_grad=True), Tensor(x0)
    opt = getattr(optim, name)([w], lr=1e10)
    for _ in range(3 if name == "SGD" else 1):
      opt.zero_grad(); (x @ w).relu().log_softmax(1).sum().backward(); opt.step()  # noqa: E702
    got = w.numpy()
  finally: dtypes.default_float = old
  tw = torch.tensor(w0.copy(), requires_grad=True)
  topt = getattr(torch.optim, name)([tw], lr=1e10)
  for _ in range(3 if name == "SGD" else 1):
    topt.zero_grad(); (torch.tensor(x0) @ tw).relu().log_softmax(1).sum().backward(); topt.step()  # noqa: E702
  np.testing.assert_allclose(got, tw.detach().numpy(), rtol=1e-4, atol=1e-4)

@pytest.mark.parametrize("make", [lambda p: optim.Adam(p), lambda p: optim.SGD(p, momentum=0.9)])
def test_state_dtypes_and_half_parameters(make):
  """The state of a half parameter is float32 (Adam's moments) or its own dtype (momentum); the parameter stays half."""
  from lazynb import dtypes
  w = Tensor(rnd(3, 3).astype(np.float16), requires_grad=True)
  opt = make([w])
  opt.zero_grad(); (w * w).sum().backward(); opt.step()  # noqa: E702
  state, want = (opt.m + opt.v, dtypes.float32) if hasattr(opt, "m") else (opt.b, dtypes.half)
  assert w.dtype == dtypes.half and state and all(t.dtype == want for t in state)
