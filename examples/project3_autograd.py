"""Course Project 3: autograd, checked against the math and against finite differences.

  python examples/project3_autograd.py

1. gradients you can work out by hand: d/dx sum(x^2) = 2x, d/dw sum(x*w) = x, sigmoid' = s(1-s)
2. a 2-layer MLP overfits a 10-sample XOR dataset (loss near zero, every sample right)
3. where the backward rules live: the course points at tinygrad/tensor.py's `class Function`; lazynb (like
   today's tinygrad) has no Function class: every rule is one line of a PatternMatcher in lazynb/gradient.py.
   The rules for MUL, ADD and a SUM reduce are printed and explained below, and checked numerically.
4. a custom loss (Huber), its autograd gradient compared with central finite differences
"""
from __future__ import annotations
import inspect
import numpy as np
from lazynb import Tensor, nn
from lazynb.nn.state import get_parameters

def task1_hand_gradients():
  print("== 1. gradients you can check by hand")
  xs = np.array([2.0, -3.0, 0.5], np.float32)
  x = Tensor(xs, requires_grad=True)
  x.pow(2).sum().backward()
  print("  d/dx sum(x^2) =", x.grad.tolist())
  assert np.allclose(x.grad.numpy(), 2 * xs)

  ws = np.array([0.1, 0.2, -0.7], np.float32)
  x, w = Tensor(xs, requires_grad=True), Tensor(ws, requires_grad=True)
  (x * w).sum().backward()
  assert np.allclose(w.grad.numpy(), xs) and np.allclose(x.grad.numpy(), ws)

  x = Tensor(xs, requires_grad=True)
  s = x.sigmoid()
  s.sum().backward()  # sum() so the gradient of every element is 1 * sigmoid'(x)
  sn = 1 / (1 + np.exp(-xs))
  print("  sigmoid'(x) =", x.grad.tolist(), " s(1-s) =", (sn * (1 - sn)).tolist())
  assert np.allclose(x.grad.numpy(), sn * (1 - sn), atol=1e-6)

  # Tensor.gradient returns the gradients instead of storing them in .grad
  x = Tensor([2.0], requires_grad=True)
  (g,) = (x ** 2 + 3 * x + 1).sum().gradient(x)
  assert np.isclose(g.item(), 7.0)                      # 2x + 3 at x = 2
  (g,) = (x ** 2 + 1).log().sum().gradient(x)
  assert np.isclose(g.item(), 0.8, atol=1e-6)           # 2x / (x^2 + 1) at x = 2

class MLP:
  def __init__(self, hidden: int = 16):
    self.l1, self.l2 = nn.Linear(2, hidden), nn.Linear(hidden, 1)
  def __call__(self, x: Tensor) -> Tensor: return self.l2(self.l1(x).tanh())

def task2_xor(steps: int = 150) -> float:
  print("== 2. a 2-layer MLP overfits XOR")
  # 10 samples: the 4 corners of XOR, plus 6 repeats of them with a little noise
  rng = np.random.default_rng(0)
  corners = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], np.float32)
  pick = np.array([0, 1, 2, 3, 0, 1, 2, 3, 1, 2])
  X = corners[pick] + np.where(np.arange(10)[:, None] >= 4, rng.normal(0, 0.05, (10, 2)), 0).astype(np.float32)
  Y = np.logical_xor(corners[pick, 0], corners[pick, 1]).astype(np.float32).reshape(10, 1)
  Tensor.manual_seed(1)
  model = MLP()
  opt = nn.optim.Adam(get_parameters(model), lr=0.05)
  Xt, Yt = Tensor(X), Tensor(Y)
  loss_v = float("nan")
  for i in range(steps):
    with Tensor.train():  # an optimizer steps only in training mode (as tinygrad)
      opt.zero_grad()
      loss = (model(Xt).sigmoid() - Yt).square().mean()
      loss.backward()
      opt.step()  # realizes the gradients, the loss and the update in one schedule
    loss_v = loss.item()
    if i % 50 == 0 or i == steps - 1: print(f"  step {i:3d} loss {loss_v:.5f}")
  pred = model(Xt).sigmoid().numpy()
  print("  predictions:", " ".join(f"{v:.2f}" for v in pred.ravel()), " targets:", " ".join(f"{v:.0f}" for v in Y.ravel()))
  assert loss_v < 1e-3, loss_v
  assert ((pred > 0.5) == (Y > 0.5)).all()
  return loss_v

def task3_read_the_rules():
  print("== 3. the backward rules (lazynb/gradient.py)")
  from lazynb import gradient
  src = inspect.getsource(gradient)
  for key in ("(UPat(Ops.MUL,", "(UPat(Ops.ADD)", "if op is Ops.ADD: return"):
    line = next(l for l in src.splitlines() if key in l)
    print("  ", line.strip())
  # MUL: out = a * b. A small change da changes out by b * da, so a's gradient is b * (upstream gradient),
  #      and b's is a * (upstream). The rule returns (ret.src[1] * ctx, ret.src[0] * ctx).
  # ADD: out = a + b. Both inputs move the output one for one, so both get the upstream gradient unchanged: (ctx, ctx).
  # SUM (REDUCE_AXIS with ADD): every input element adds into its output element once, so each gets that
  #      output's gradient: the upstream gradient expanded back to the input's shape, ctx.expand(x.shape).
  a, b = Tensor([3.0, 4.0], requires_grad=True), Tensor([5.0, -1.0], requires_grad=True)
  up = Tensor([10.0, 100.0])
  ga, gb = (a * b).gradient(a, b, gradient=up)
  assert ga.tolist() == [50.0, -100.0] and gb.tolist() == [30.0, 400.0]     # b*up, a*up
  ga, gb = (a + b).gradient(a, b, gradient=up)
  assert ga.tolist() == gb.tolist() == [10.0, 100.0]                        # up, up
  m = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
  (gm,) = m.sum(axis=1).gradient(m, gradient=up)
  assert gm.tolist() == [[10.0] * 3, [100.0] * 3]                           # up expanded over the summed axis

def huber(pred: Tensor, target: Tensor, delta: float = 1.0) -> Tensor:
  """Mean Huber loss: quadratic for |r| <= delta, linear beyond (built from primitives)."""
  r = pred - target
  a = r.abs()
  return (a <= delta).where(0.5 * r * r, delta * (a - 0.5 * delta)).mean()

def finite_difference(f, x: np.ndarray, eps: float = 1e-2) -> np.ndarray:
  """Central differences (f(x+eps) - f(x-eps)) / 2eps, one coordinate at a time."""
  g = np.zeros_like(x)
  for i in range(x.size):
    xp, xm = x.copy(), x.copy()
    xp.flat[i] += eps
    xm.flat[i] -= eps
    g.flat[i] = (f(xp) - f(xm)) / (2 * eps)
  return g

def task4_huber():
  print("== 4. Huber loss: autograd vs finite differences")
  # residuals on both sides of the kink at |r| = delta, none close to it (the kink has no second derivative)
  pred = np.array([0.3, -0.4, 2.5, -3.0, 0.05, 1.6], np.float32)
  target = np.zeros_like(pred)
  p = Tensor(pred, requires_grad=True)
  huber(p, Tensor(target)).backward()
  auto = p.grad.numpy()
  fd = finite_difference(lambda v: huber(Tensor(v), Tensor(target)).item(), pred)
  # the exact gradient: r / n inside delta, delta * sign(r) / n outside
  exact = np.where(np.abs(pred) <= 1, pred, np.sign(pred)) / pred.size
  print("  autograd:", " ".join(f"{v:+.4f}" for v in auto))
  print("  finite d:", " ".join(f"{v:+.4f}" for v in fd))
  assert np.allclose(auto, exact, atol=1e-6)
  assert np.allclose(auto, fd, atol=2e-3), np.abs(auto - fd).max()

def main():
  task1_hand_gradients()
  task2_xor()
  task3_read_the_rules()
  task4_huber()
  print("project 3: all checks passed")

if __name__ == "__main__":
  main()
