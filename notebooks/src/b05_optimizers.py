# %% [markdown]
# # Build 5: the optimizers, yours
#
# An optimizer is not a stage of the compiler, but it is the last piece between a gradient and a trained model, and
# in a lazy library it is a small compiler lesson of its own: `step()` does not change any number. It builds the
# update of every parameter as a graph, and lazynb turns all of those graphs into kernels in one schedule.
#
# You write two: SGD with momentum, then Adam. The check trains a small model with yours and with lazynb's
# (`nn.optim.SGD`, `nn.optim.Adam`) side by side and compares the parameters after every step, once as plain calls
# and once under `TinyJit`. When Adam passes, it is kept, and the capstone trains MNIST with it.

# %%
%load_ext lazynb
import numpy as np
from lazynb import Tensor, TinyJit, nn
from lazynb.nn.optim import Optimizer
from lazynb.notebook.exercise import check

# %% [markdown]
# ## What `Optimizer` does for you
#
# `lazynb.nn.optim.Optimizer` keeps the list of parameters (`self.params`) and the learning rate (`self.lr`), and gives
# every parameter a buffer of its own, so it can be updated in place. Its `step()` calls your `_step()`, which must:
#
# - read each parameter's gradient as `p.grad.detach()` (detached: the update is not part of the next backward pass);
# - write the new value **into** the parameter with `p.assign(new_value)`: the same buffer, changed in place (with
#   `p = p - ...` you would only rebind a Python name);
# - return the list of state tensors it assigned (momentum buffers and the like), so that they are computed in the same
#   schedule as the parameters.
#
# State that lives from one step to the next is a tensor made once, in `__init__`:
# `Tensor.zeros(*p.shape, requires_grad=False).contiguous().realize()` (realized: it has memory to be assigned into).
#
# Here is one plain SGD step, `p = p - lr * g`, run by hand. Watch the schedule: one kernel per parameter update.

# %%
class PlainSGD(Optimizer):
  def _step(self):
    for p in self.params: p.assign(p.detach() - self.lr * p.grad.detach())
    return []

w = Tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
opt = PlainSGD([w], lr=0.1)
with Tensor.train():
  loss = (w * w).sum()
  loss.backward()
  opt.step()
print(w.numpy())  # the gradient of sum(w*w) is 2w, so each entry became w - 0.1*2w = 0.8w
assert np.allclose(w.numpy(), 0.8 * np.array([[1.0, -2.0], [0.5, 3.0]]))

# %% [markdown]
# ## Exercise 1: SGD with momentum
#
# Momentum keeps a running direction `b` for each parameter, starting at zero:
#
# $$b \leftarrow \mu\, b + g, \qquad p \leftarrow p - \mathrm{lr}\cdot b$$
#
# with $\mu$ the `momentum` argument (0 gives plain SGD). This is `torch.optim.SGD` with momentum, and lazynb's
# `nn.optim.SGD`. The check uses other values than the defaults, so read them from the arguments.

# %%
# EXERCISE b05.sgd
from lazynb import Tensor
from lazynb.nn.optim import Optimizer

class MySGD(Optimizer):
  """SGD with momentum: b = momentum * b + g, then p = p - lr * b (b starts at zero, one per parameter)."""
  def __init__(self, params, lr=0.01, momentum=0.9):
    super().__init__(params, lr)
    raise NotImplementedError  # YOUR CODE: keep momentum; make the buffers b
  def _step(self):
    raise NotImplementedError  # YOUR CODE: update every b and every parameter with assign; return the buffers

# %%
check("b05.sgd", MySGD)

# %% [markdown]
# ## Exercise 2: Adam
#
# Adam keeps two running averages per parameter, of the gradient and of its square, both starting at zero, and
# divides one by the root of the other, so each weight gets a step size of its own. At step $t$ (counting from 1):
#
# $$m \leftarrow \beta_1 m + (1-\beta_1)\,g, \qquad v \leftarrow \beta_2 v + (1-\beta_2)\,g^2$$
# $$\hat m = \frac{m}{1-\beta_1^{\,t}}, \qquad \hat v = \frac{v}{1-\beta_2^{\,t}}, \qquad
#   p \leftarrow p - \mathrm{lr}\cdot\frac{\hat m}{\sqrt{\hat v} + \epsilon}$$
#
# The hats undo the pull towards zero of averages that started at zero (the *bias correction*).
#
# One trap is particular to a lazy library with a JIT: $\beta_1^{\,t}$ changes every step. If you compute it in
# Python (a step counter `t` and `self.b1 ** t`), the number is baked into the kernels as a constant, and `TinyJit`,
# which replays the kernels of its first calls, replays the old constant forever. Whatever changes from step to step
# must live in a tensor that the step itself updates with `assign`. The check runs your Adam under `TinyJit` too.

# %%
# EXERCISE b05.adam
from lazynb import Tensor
from lazynb.nn.optim import Optimizer

class MyAdam(Optimizer):
  """Adam: running averages m and v of g and g*g, bias-corrected, p = p - lr * m_hat / (sqrt(v_hat) + eps)."""
  def __init__(self, params, lr=0.001, b1=0.9, b2=0.999, eps=1e-8):
    super().__init__(params, lr)
    raise NotImplementedError  # YOUR CODE: keep b1, b2, eps; make m, v and what the bias correction needs
  def _step(self):
    raise NotImplementedError  # YOUR CODE: update the state and every parameter with assign; return the state tensors

# %%
check("b05.adam", MyAdam)

# %% [markdown]
# ## Your Adam, training
#
# A passing Adam is kept (`my_compiler/optimizer.py`). Here it fits a small regression under `TinyJit`, next to
# lazynb's Adam from the same start; the `%%tinygrad` view shows the kernels of one step: the update of every
# parameter and its state, fused into a few kernels. (Before your Adam passes, both runs use lazynb's.)

# %%
%%tinygrad
from lazynb.notebook.build import kept_pieces
Adam = kept_pieces().get("optimizer", nn.optim.Adam)
print("optimizer:", "yours" if Adam is not nn.optim.Adam else "lazynb's (yours is not kept yet)")
rng = np.random.default_rng(0)
x, y = rng.standard_normal((64, 8)).astype(np.float32), rng.standard_normal((64, 1)).astype(np.float32)
w0 = rng.standard_normal((8, 1)).astype(np.float32)

def fit(opt_cls):
  w = Tensor(w0.copy(), requires_grad=True)
  opt = opt_cls([w], lr=0.05)
  @TinyJit
  def step(xt, yt):
    with Tensor.train():
      opt.zero_grad()
      loss = ((xt @ w - yt) ** 2).mean()
      loss.backward()
      opt.step()
      return loss
  return [step(Tensor(x), Tensor(y)).item() for _ in range(40)]

mine, theirs = fit(Adam), fit(nn.optim.Adam)
print(f"loss: {mine[0]:.4f} -> {mine[-1]:.4f} (lazynb's Adam: {theirs[0]:.4f} -> {theirs[-1]:.4f})")
assert np.allclose(mine, theirs, rtol=1e-3) and mine[-1] < mine[0]
