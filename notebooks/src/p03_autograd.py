# %% [markdown]
# # Project 3: autograd
#
# Reverse-mode differentiation walks the graph backwards: each operation knows how to turn the gradient of
# its output into gradients for its inputs, and the chain rule strings these local rules together. In lazynb
# the gradient is itself a lazy UOp graph, so it is scheduled, fused and compiled like any other computation.
#
# You will check gradients you can work out on paper, read the backward rules, train a tiny MLP on XOR, and
# test a custom loss against finite differences.
#
# **Differences from the course text.** The course sends you to `tinygrad/tensor.py` to find `class Function`
# and its `backward` methods. That was tinygrad's older design. lazynb, like tinygrad today, has no Function
# class: the rules are entries of a `PatternMatcher` called `pm_gradient`, in `lazynb/gradient.py` (tinygrad
# keeps it in `tinygrad/gradient.py`). `_broadcasted` is still in `lazynb/tensor.py`.

# %%
%load_ext lazynb
import inspect
import numpy as np
from lazynb import Tensor, GlobalCounters, nn
from lazynb.nn.state import get_parameters
from lazynb.notebook.quiz import quiz

# %% [markdown]
# ## 1. Gradients you can check on paper
#
# Part 6's first gradient again: `(x * x).sum()` has the gradient `2x`, here `[4, 6]`.

# %%
%%tinygrad --show schedule,kernels,graph
x = Tensor([2.0, 3.0], requires_grad=True)
y = (x * x).sum()
y.backward()
grad_sq = x.grad.tolist()

# %%
print("x.grad =", grad_sq)
assert grad_sq == [4.0, 6.0]

# %% [markdown]
# Two more by hand: for `(x * w).sum()` the gradient with respect to `w` is `x`, and the derivative of the
# sigmoid is `s * (1 - s)` (at x = 0, 0.5 · 0.5 = 0.25).

# %%
xs = np.array([2.0, -3.0, 0.0], np.float32)
ws = np.array([0.1, 0.2, -0.7], np.float32)
x, w = Tensor(xs, requires_grad=True), Tensor(ws, requires_grad=True)
(x * w).sum().backward()
print("d/dw sum(x*w) =", w.grad.tolist(), "  x =", xs.tolist())
assert np.allclose(w.grad.numpy(), xs) and np.allclose(x.grad.numpy(), ws)

x = Tensor(xs, requires_grad=True)
x.sigmoid().sum().backward()
s = 1 / (1 + np.exp(-xs))
print("sigmoid'(x) =", x.grad.numpy().round(6).tolist(), "  s(1-s) =", (s * (1 - s)).round(6).tolist())
assert np.allclose(x.grad.numpy(), s * (1 - s), atol=1e-6) and np.isclose(x.grad.numpy()[2], 0.25)

# %% [markdown]
# `Tensor.gradient(*targets)` returns gradients instead of storing them in `.grad`. The chain rule at work:
# d/dx log(x^2 + 1) = 2x / (x^2 + 1), which is 0.8 at x = 2.

# %%
x = Tensor([2.0], requires_grad=True)
(g1,) = (x ** 2 + 3 * x + 1).sum().gradient(x)
(g2,) = (x ** 2 + 1).log().sum().gradient(x)
print("d/dx (x^2 + 3x + 1) at 2 =", g1.item(), "   d/dx log(x^2 + 1) at 2 =", round(g2.item(), 6))
assert np.isclose(g1.item(), 7.0) and np.isclose(g2.item(), 0.8, atol=1e-6)

# %% [markdown]
# ## 2. The backward rules
#
# Each rule gets `ctx` (the gradient arriving at the op's output) and `ret` (the op itself), and returns one
# gradient per input. Here are the rules for MUL, ADD and the SUM reduce:

# %%
from lazynb import gradient
src = inspect.getsource(gradient)
for key in ("(UPat(Ops.MUL,", "(UPat(Ops.ADD)", "if op is Ops.ADD: return"):
  print(next(l for l in src.splitlines() if key in l).strip())

# %% [markdown]
# - **MUL**, out = a * b: nudging a by da moves out by b * da, so a receives `b * ctx` and b receives `a * ctx`.
# - **ADD**, out = a + b: each input moves the output one for one, so both receive `ctx` unchanged.
# - **SUM** over an axis: every input element contributes once to its output element, so each receives that
#   output's gradient: `ctx` expanded back to the input's shape.
#
# The three rules at work on an upstream gradient of [10, 100], with a = [3, 4] and b = [5, -1]: through the MUL, a
# receives b · [10, 100] = [50, -100] and b receives [30, 400].

# %%
a, b = Tensor([3.0, 4.0], requires_grad=True), Tensor([5.0, -1.0], requires_grad=True)
up = Tensor([10.0, 100.0])
ga, gb = (a * b).gradient(a, b, gradient=up)
print("MUL: grad a =", ga.tolist(), " grad b =", gb.tolist())
assert ga.tolist() == [50.0, -100.0] and gb.tolist() == [30.0, 400.0]
ga, gb = (a + b).gradient(a, b, gradient=up)
assert ga.tolist() == gb.tolist() == [10.0, 100.0]
m = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
(gm,) = m.sum(axis=1).gradient(m, gradient=up)
print("SUM over axis 1: grad =", gm.tolist())
assert gm.tolist() == [[10.0] * 3, [100.0] * 3]

# %% [markdown]
# ## 3. An MLP that memorizes XOR
#
# Ten samples of XOR (the four corners, some repeated with a little noise). XOR can't be split by one straight
# line, which is what a model with no hidden layer draws. Predict before training both.

# %%
rng = np.random.default_rng(0)
corners = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], np.float32)
pick = np.array([0, 1, 2, 3, 0, 1, 2, 3, 1, 2])
X = corners[pick] + np.where(np.arange(10)[:, None] >= 4, rng.normal(0, 0.05, (10, 2)), 0).astype(np.float32)
Y = np.logical_xor(corners[pick, 0], corners[pick, 1]).astype(np.float32).reshape(10, 1)
Xt, Yt = Tensor(X), Tensor(Y)

class MLP:
  def __init__(self, hidden=16): self.l1, self.l2 = nn.Linear(2, hidden), nn.Linear(hidden, 1)
  def __call__(self, x): return self.l2(self.l1(x).tanh())

class NoHidden:
  def __init__(self): self.l = nn.Linear(2, 1)
  def __call__(self, x): return self.l(x)

def train(model, steps=150, lr=0.05):
  opt = nn.optim.Adam(get_parameters(model), lr=lr)
  with Tensor.train():   # an optimizer steps only in training mode (as tinygrad)
    for i in range(steps):
      opt.zero_grad()
      loss = (model(Xt).sigmoid() - Yt).square().mean()
      loss.backward()
      opt.step()   # one schedule: the gradients, the loss and the update
  return loss.item()

# %%
q_xor = quiz("After 150 Adam steps, which model gets the mean squared error below 0.001?",
             ["both", "only the 2-layer MLP", "only the model with no hidden layer", "neither"], key="p03_autograd.q_xor")

# %% [markdown]
# One training step under the microscope first: the forward pass, the gradient graph and Adam's update all
# run from a single schedule.

# %%
%%tinygrad --show schedule,timing
Tensor.manual_seed(1)
probe = MLP()
popt = nn.optim.Adam(get_parameters(probe), lr=0.05)
GlobalCounters.reset()
popt.zero_grad()
ploss = (probe(Xt).sigmoid() - Yt).square().mean()
ploss.backward()
with Tensor.train(): popt.step()
step_kernels = GlobalCounters.kernel_count

# %%
print("kernels in one training step:", step_kernels)
assert step_kernels > 3
Tensor.manual_seed(1)
mlp, lin = MLP(), NoHidden()
loss_mlp, loss_lin = train(mlp), train(lin)
pred = mlp(Xt).sigmoid().numpy()
print(f"final loss: MLP {loss_mlp:.6f}, no hidden layer {loss_lin:.4f}")
print("MLP predictions:", " ".join(f"{v:.2f}" for v in pred.ravel()), " targets:", " ".join(f"{v:.0f}" for v in Y.ravel()))
assert loss_mlp < 1e-3 and ((pred > 0.5) == (Y > 0.5)).all()
assert loss_lin > 0.1
q_xor.reveal()

# %% [markdown]
# ## 4. A custom loss: Huber
#
# Huber loss is quadratic for small residuals and linear for large ones, so outliers pull less. Built from
# primitives with `where`, then checked against central finite differences, (f(x+e) - f(x-e)) / 2e.

# %%
def huber(pred, target, delta=1.0):
  r = pred - target
  a = r.abs()
  return (a <= delta).where(0.5 * r * r, delta * (a - 0.5 * delta)).mean()

q_hub = quiz("Six predictions, target 0, delta 1. For the prediction 2.5, what is d(loss)/d(pred)?",
             ["2.5 / 6", "1 / 6", "0", "2.5"], key="p03_autograd.q_hub")

# %%
pred = np.array([0.3, -0.4, 2.5, -3.0, 0.05, 1.6], np.float32)   # none close to the kink at |r| = 1
target = np.zeros_like(pred)
p = Tensor(pred, requires_grad=True)
huber(p, Tensor(target)).backward()
auto = p.grad.numpy()
def f(v): return huber(Tensor(v), Tensor(target)).item()
eps, fd = 1e-2, np.zeros_like(pred)
for i in range(pred.size):
  hi, lo = pred.copy(), pred.copy(); hi[i] += eps; lo[i] -= eps
  fd[i] = (f(hi) - f(lo)) / (2 * eps)
print("autograd:   ", " ".join(f"{v:+.4f}" for v in auto))
print("finite diff:", " ".join(f"{v:+.4f}" for v in fd))

# %%
assert np.allclose(auto, fd, atol=2e-3)
assert np.allclose(auto, np.where(np.abs(pred) <= 1, pred, np.sign(pred)) / pred.size, atol=1e-6)
assert np.isclose(auto[2], 1 / 6)
q_hub.reveal()
print("autograd agrees with finite differences")

# %% [markdown]
# ## Exercise 1: your own gradient checker
#
# Write `finite_diff(f, v)`: for a function `f` of a numpy array `v` that returns a float, return the array of
# slopes `df/dv[i]` by central differences, the way §4 checked the Huber loss. Don't change `v`. The check runs it
# on functions whose derivatives are known in closed form.

# %%
# EXERCISE p03.finite_diff
def finite_diff(f, v, eps=1e-4):
  # YOUR CODE: one slope per element of v, as a numpy array of v's shape
  raise NotImplementedError

# %%
from lazynb.notebook.exercise import check
check("p03.finite_diff", finite_diff)

# %% [markdown]
# ## Exercise 2: the pseudo-Huber loss
#
# A smooth cousin of §4's Huber loss: `mean(delta**2 * (sqrt(1 + (r/delta)**2) - 1))` with `r = pred - target`.
# Build it from Tensor ops so autograd can differentiate it; the check compares the value and `pred.grad` with
# the formulas for several `delta` (you can check your gradient with your `finite_diff` first).

# %%
# EXERCISE p03.pseudo_huber
def pseudo_huber(pred, target, delta=1.0):
  # YOUR CODE
  raise NotImplementedError

# %%
from lazynb.notebook.exercise import check
check("p03.pseudo_huber", pseudo_huber)
