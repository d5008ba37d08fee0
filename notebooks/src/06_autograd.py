# %% [markdown]
# # Part 6 — Autograd
#
# lazynb, like tinygrad and PyTorch, does **reverse-mode automatic differentiation** (backprop): starting from a
# scalar loss, it walks the graph backwards and applies the chain rule at every node. What is particular to the
# tinygrad design is *how*: the backward pass is a **graph rewrite**. One rule per op says how the gradient of that
# op's output flows to each of its inputs; applying the rules produces a *new UOp graph* for the gradients. That
# graph is lazy like any other, and gets scheduled, fused and compiled the same way.

# %%
%load_ext lazynb
import math, tempfile, os
import numpy as np
from lazynb import Tensor, Device, Context, GlobalCounters, dtypes, Ops, nn
from lazynb.trace import capture
from lazynb.notebook.quiz import quiz, ask_number

# %% [markdown]
# ## 1. A first gradient
#
# Mark the tensors you want gradients for with `requires_grad=True`, build a scalar, call `.backward()`, read `.grad`.
# For `x = [2, 3]` and `(x * x).sum()` the gradient is `2x = [4, 6]`. The question is when it is computed.

# %%
q_lazy = ask_number("x = Tensor([2.0, 3.0], requires_grad=True); y = (x * x).sum(). How many kernels does the call to "
                    "y.backward() itself run?", key="06_autograd.q_lazy")

# %%
%%tinygrad --show schedule,graph,kernels
x = Tensor([2.0, 3.0], requires_grad=True)
y = (x * x).sum()
GlobalCounters.reset()
y.backward()
by_backward = GlobalCounters.kernel_count
print("kernels run by backward():", by_backward)
g = x.grad.numpy()
print("x.grad =", g, "  kernels run to read it:", GlobalCounters.kernel_count)

# %% [markdown]
# **What you see.** In **Tensor graph**, the lazy graph that was scheduled is the *gradient*: the sum's gradient (a
# constant 1.0) expanded back to shape (2,), then multiplied by x, twice, and added (the MUL rule sends
# `other * grad` to each of its two inputs, both x here). The **Kernels** tab shows it compiled to a single kernel.

# %%
assert by_backward == 0 and GlobalCounters.kernel_count == 1
q_lazy.reveal(by_backward)
assert g.tolist() == [4.0, 6.0]
with capture(rewrites=False) as tr:
  x2 = Tensor([2.0, 3.0], requires_grad=True)
  (x2 * x2).sum().backward()
assert tr.schedule == [] and x2.grad.uop.op is not Ops.BUFFER  # nothing scheduled: the gradient is still a graph

# %% [markdown]
# So the first module's line "no computation happens until you call `.backward()` or `.realize()`" needs a small
# correction: `backward()` computes nothing either. It is `realize()` (or `numpy()`, or an optimizer's `step()`)
# that runs kernels.
#
# ## 2. The rules
#
# The first module shows tinygrad's `pm_gradient` from `tinygrad/gradient.py`. lazynb's is in
# `lazynb/gradient.py` and works the same way: a `PatternMatcher` whose rules receive `ctx` (the gradient arriving
# at the node) and `ret` (the node) and return one gradient per source.

# %%
from lazynb.gradient import pm_gradient
for pat, fn in pm_gradient.patterns: print(" ", repr(pat)[:100])
print(len(pm_gradient.patterns), "rules")

# %% [markdown]
# A few to read closely (from `lazynb/gradient.py`):
#
# ```python
# (UPat(Ops.ADD), lambda ctx: (ctx, ctx)),                                            # both inputs get the gradient as is
# (UPat(Ops.MUL, name="ret"), lambda ctx, ret: (ret.src[1]*ctx, ret.src[0]*ctx)),     # each gets the other times it
# (UPat(Ops.EXP2, name="ret"), lambda ctx, ret: (ret * ctx * math.log(2),)),          # d 2^x = 2^x ln 2
# (UPat(Ops.RESHAPE, name="ret"), lambda ctx, ret: (ctx.reshape(ret.src[0].shape),)), # undo the reshape
# ```
#
# A reduce's gradient is an EXPAND, and an EXPAND's gradient is a sum: broadcasting and reducing are each other's
# backward. The slides say tinygrad once needed "28 derivatives" (its old `function.py`); lazynb needs a similar
# handful, because every other op is built from these.

# %%
assert 15 <= len(pm_gradient.patterns) <= 30
ops_with_rules = set().union(*(p.op for p, _ in pm_gradient.patterns if p.op is not None))
print(f"{len(pm_gradient.patterns)} gradient rules cover {len(ops_with_rules)} ops (the slides' count was 28):",
      " ".join(sorted(o.name for o in ops_with_rules)))
assert {Ops.ADD, Ops.MUL, Ops.EXP2, Ops.LOG2, Ops.RECIP, Ops.REDUCE_AXIS, Ops.EXPAND, Ops.WHERE} <= ops_with_rules

# %% [markdown]
# ## 3. `gradient()` and the chain rule
#
# `loss.gradient(x)` returns the gradient as a new tensor instead of storing it in `x.grad`. The tinygrad intro blog
# uses it on y = x² + 3x + 1 at x = 2, where dy/dx = 2x + 3 = 7, and then on z = log(x² + 1), where the chain rule
# gives dz/dx = 2x / (x² + 1) = 0.8. The blog prints x and y first, which realizes them before the gradient is
# taken; that works:

# %%
x = Tensor([2.0], requires_grad=True)
y = x ** 2 + 3 * x + 1
loss = y.sum()
print(x.item(), y.item())
grad, = loss.gradient(x)
print("dy/dx =", grad.item())
x = Tensor([2.0], requires_grad=True)
z = (x ** 2 + 1).log()
loss = z.sum()
print(x.item(), z.item())
grad, = loss.gradient(x)
print("dz/dx =", grad.item())

# %%
assert abs(grad.item() - 0.8) < 1e-6 and abs(z.item() - math.log(5)) < 1e-6
x = Tensor([2.0], requires_grad=True)
assert (x ** 2 + 3 * x + 1).sum().gradient(x)[0].item() == 7.0

# %% [markdown]
# Check a rule against a finite difference, (f(x+ε) − f(x−ε)) / 2ε, on something the rules only know in pieces:
# tanh is built from exp2, add and reciprocal, yet its gradient must come out as 1 − tanh².

# %%
xs = np.linspace(-2, 2, 9).astype(np.float32)
x = Tensor(xs, requires_grad=True)
x.tanh().sum().backward()
eps = 1e-3
numeric = (np.tanh(xs.astype(np.float64) + eps) - np.tanh(xs.astype(np.float64) - eps)) / (2 * eps)
print(np.round(x.grad.numpy(), 4))
np.testing.assert_allclose(x.grad.numpy(), 1 - np.tanh(xs) ** 2, rtol=1e-4, atol=1e-5)
np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-3, atol=1e-4)

# %% [markdown]
# ## 4. Gradients fuse like everything else
#
# Because the gradient is just more graph, the scheduler can fuse it with the forward pass. One linear layer with
# a relu and a mean-squared loss, forward and backward, for the weight gradient only:

# %%
q_layer = ask_number("For loss = ((x @ w).relu() - t).square().mean(), realizing w.grad (not the loss) needs how many kernels?",
                     key="06_autograd.q_layer")

# %%
%%tinygrad --show schedule,graph
Tensor.manual_seed(0)
xb, t = Tensor.randn(8, 4), Tensor.randn(8, 3)
w = Tensor.randn(4, 3, requires_grad=True)
loss = ((xb @ w).relu() - t).square().mean()
loss.backward()
wg = w.grad.realize()

# %%
with capture(rewrites=False) as tr:
  w3 = Tensor.randn(4, 3, requires_grad=True)
  ((xb @ w3).relu() - t).square().mean().backward()
  w3.grad.realize()
print([(s["kind"], s["reason"]) for s in tr.schedule])
y_ = np.maximum(xb.numpy() @ w3.numpy(), 0)
ref = xb.numpy().T @ ((y_ > 0) * 2 * (y_ - t.numpy()) / 24)
np.testing.assert_allclose(w3.grad.numpy(), ref, rtol=1e-4, atol=1e-6)
q_layer.reveal(len(tr.kernels))

# %% [markdown]
# ## 5. The training loop
#
# The course's pattern, with its 784 → 128 → 10 MLP on a fake batch: `zero_grad`, forward, loss, `backward`,
# `step`. There is no `nn.Module`: a model is any object whose attributes hold tensors, and the optimizer gets the
# list of tensors to train.
#
# One question a lazy framework has to answer: the course prints `loss.item()` *after* `optim.step()`. In PyTorch
# the loss was computed eagerly during the forward pass, so that prints this step's loss. Here the loss is still a
# graph that reads the weights, and `step()` overwrites the weights in place.

# %%
q_step = quiz("w = Tensor([1.0, 2.0], requires_grad=True); SGD with lr=0.1; loss = (w*w).sum(); probe = (w*10).sum(); "
              "loss.backward(); opt.step(). Then loss.item() and probe.item() give ...",
              ["5.0 and 30.0: both read the old weights", "5.0 and 24.0: the loss the old weights, probe the new [0.8, 1.6]",
               "3.2 and 24.0: both read the new weights"], key="06_autograd.q_step")

# %% [markdown]
# First, one line the course's snippet leaves out: an optimizer steps only in **training mode**. tinygrad 0.10 raises
# `RuntimeError` when `Tensor.training` is False, and so does lazynb. `with Tensor.train():` turns it on for a block;
# this notebook switches it on for the rest of its cells.

# %%
try: nn.optim.SGD([Tensor([1.0], requires_grad=True)]).step()
except RuntimeError as e: refused = str(e)
print("outside training mode:", refused[:70], "...")
assert refused.startswith("Tensor.training is False")
Tensor.training = True

# %%
w = Tensor([1.0, 2.0], requires_grad=True)
opt = nn.optim.SGD([w], lr=0.1)
loss = (w * w).sum()
probe = (w * 10).sum()
loss.backward()
with capture(rewrites=False) as tr_step:
  opt.step()
loss_done, probe_done = loss.uop.is_realized, probe.uop.is_realized
print(f"loss: {loss.item()}   probe: {probe.item():.1f}   w: {w.tolist()}")
print("the step's schedule:", [(s["kind"], s["reason"]) for s in tr_step.schedule])

# %%
assert loss.item() == 5.0 and abs(probe.item() - 30.0) < 1e-5 and np.allclose(w.numpy(), [0.8, 1.6])
q_step.reveal()
assert loss_done and probe_done   # the step computed both before it overwrote the weights

# %% [markdown]
# So in lazynb, like in PyTorch, the loss you read after `step()` is the loss of that step, and so is every other
# value you defined before it, like `probe`. tinygrad 0.10 leaves this to you: there `probe` reads whatever the buffer
# holds when it is finally realized (24.0), and its MNIST example writes `loss.realize(*opt.schedule_step())` to get
# the loss and the update from one schedule (that works here too).
#
# Now the course's loop, 20 steps instead of 1000:

# %%
from lazynb.nn.optim import Adam, SGD
Tensor.manual_seed(0)

class MLP:
  def __init__(self):
    self.l1 = Tensor.randn(784, 128) * 0.01
    self.l2 = Tensor.randn(128, 10) * 0.01
  def __call__(self, x): return x.linear(self.l1).relu().linear(self.l2)

model = MLP()
optim = Adam([model.l1, model.l2], lr=0.001)
x, y_target = Tensor.randn(32, 784), Tensor.zeros(32, 10)   # a fake batch and fake labels
losses, kernels_per_step = [], []
for step in range(20):
  GlobalCounters.reset()
  optim.zero_grad()
  y_pred = model(x)
  loss = (y_pred - y_target).pow(2).mean()   # MSE loss
  loss.backward()
  optim.step()
  losses.append(loss.item())
  kernels_per_step.append(GlobalCounters.kernel_count)
  if step % 5 == 0: print(f"step {step:2d}, loss={losses[-1]:.6f}, kernels this step: {kernels_per_step[-1]}")

# %%
assert losses[-1] < losses[0] * 0.1, losses
assert len(set(kernels_per_step)) == 1   # every step runs the same kernels (compiled once, then cached)
print(f"loss went from {losses[0]:.2e} to {losses[-1]:.2e}, {kernels_per_step[0]} kernels per step")

# %% [markdown]
# ## 6. The `nn` package
#
# Layers are plain classes holding tensors (`Linear`, `Conv2d`, `BatchNorm`, `LayerNorm`, `Embedding`), optimizers
# take a list of tensors (`SGD`, `Adam`, `AdamW`, `LAMB`), and `nn.state` finds and saves the tensors of any object.
# The imports are the course's with `lazynb` for `tinygrad`:

# %%
from lazynb.nn import Linear, BatchNorm, Conv2d
from lazynb.nn.optim import Adam, SGD, AdamW
from lazynb.nn.state import get_parameters, get_state_dict, load_state_dict, safe_save, safe_load

layer = Linear(128, 64, bias=True)
conv = Conv2d(in_channels=3, out_channels=64, kernel_size=3, stride=1, padding=1)
print({k: v.shape for k, v in get_state_dict(layer).items()}, {k: v.shape for k, v in get_state_dict(conv).items()})
params = get_parameters(model)
print(len(params), "parameters in the MLP:", [p.shape for p in params])
assert [p.shape for p in params] == [(784, 128), (128, 10)]
assert conv(Tensor.rand(1, 3, 8, 8)).shape == (1, 64, 8, 8) and layer(Tensor.rand(2, 128)).shape == (2, 64)

# %% [markdown]
# Saving and loading go through safetensors files. A round trip must give back a model that computes exactly the
# same thing:

# %%
try:
  import safetensors  # noqa: F401
  have_safetensors = True
except ImportError:
  have_safetensors = False
  print("safetensors is not installed (pip install safetensors): skipping the save/load round trip")
if have_safetensors:
  with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "model.safetensors")
    safe_save(get_state_dict(model), path)
    fresh = MLP()
    load_state_dict(fresh, safe_load(path))
  probe = Tensor.randn(4, 784)
  same = np.array_equal(model(probe).numpy(), fresh(probe).numpy())
  print("reloaded model gives identical outputs:", same)
  assert same and sorted(get_state_dict(fresh)) == ["l1", "l2"]

# %% [markdown]
# ## 7. Which operations compute gradients?
#
# The first module asks this as a quick check. With lazy tensors the answer has two halves, and you measured both in
# section 1: `backward()` only builds the gradient graph; `opt.step()` (or any realize) runs its kernels. Once more,
# on the MLP's training step:

# %%
optim.zero_grad()
loss = (model(x) - y_target).pow(2).mean()
GlobalCounters.reset()
loss.backward()
in_backward = GlobalCounters.kernel_count
optim.step()
in_step = GlobalCounters.kernel_count - in_backward
print(f"kernels in backward(): {in_backward}, in step(): {in_step}")
assert in_backward == 0 and in_step > 0

# %% [markdown]
# Next: **07_pipeline**, what happens to a graph between `realize()` and the C code that runs.

# %% [markdown]
# ## Exercise: the backward of a new op
#
# Swish is `x * sigmoid(x)`. Write its derivative `swish_grad(x)` for a numpy array `x` (on paper first: the product
# rule). The check compares your formula with finite differences of swish, and with the exact slope to float64
# precision, which a finite difference does not reach; you can compare it with lazynb's autograd on `x * x.sigmoid()`
# yourself.

# %%
# EXERCISE 06.swish_grad
import numpy as np
def swish_grad(x):
  # YOUR CODE: one slope per element, as a numpy array
  raise NotImplementedError

# %%
from lazynb.notebook.exercise import check
check("06.swish_grad", swish_grad)
