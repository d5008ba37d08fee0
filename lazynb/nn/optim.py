"""Optimizers: each step() builds the update graph for every parameter and realizes it in one schedule,
writing the new values into the parameters' buffers (Tensor.assign)."""
from __future__ import annotations
from lazynb.tensor import Tensor, last_backward
from lazynb.dtype import dtypes, least_upper_dtype
from lazynb.helpers import unwrap

class Optimizer:
  def __init__(self, params: list[Tensor], lr: float):
    for p in params:
      if p.requires_grad is None: p.requires_grad = dtypes.is_float(p.dtype)
    self.params = [p for p in dict.fromkeys(params) if p.requires_grad]
    if not self.params: raise ValueError("optimizer got no parameters that require grad")
    self.buffers = [p for p in params if not p.requires_grad]
    self.lr = lr
    # every parameter gets memory of its own, so step() can update it in place (and TinyJit can replay that)
    for p in self.params:
      p._own_memory()  # (one that only reads memory another tensor owns gets its own)
  def zero_grad(self):
    for p in self.params: p.grad = None
  def step(self): Tensor.realize_all(*self.schedule_step())
  def schedule_step(self) -> list[Tensor]:
    """The tensors to realize for one update: the parameters and optimizer state, and with them the
    gradients and the loss of the last backward() (they read the old parameters, so they run first)."""
    if Tensor.no_grad: raise RuntimeError("optimizer step while gradients are off")
    if not Tensor.training:  # as tinygrad 0.10: training mode is what turns dropout (and batchnorm's batch statistics) on
      raise RuntimeError("Tensor.training is False: an optimizer steps only in training mode. Run the step inside "
                         "`with Tensor.train():` (or decorate it with @Tensor.train(), or set Tensor.training = True)")
    grads = []
    for p in self.params:
      if p.grad is None: raise RuntimeError(f"parameter of shape {p.shape} has no .grad: call loss.backward() before step()")
      grads.append(p.grad)
    loss = [t] if (t := last_backward()) is not None else []
    return self._step() + self.params + self.buffers + grads + loss
  def _step(self) -> list[Tensor]: raise NotImplementedError

class OptimizerGroup(Optimizer):
  """Several optimizers (say, one per parameter group) stepped together in one schedule."""
  def __init__(self, *optimizers: Optimizer):  # no super().__init__: the parameters already belong to the optimizers
    self.optimizers = optimizers
    self.params = [p for o in optimizers for p in o.params]
    self.buffers = [b for o in optimizers for b in o.buffers]
  def __getitem__(self, i: int) -> Optimizer: return self.optimizers[i]
  def zero_grad(self):
    for o in self.optimizers: o.zero_grad()
  def schedule_step(self) -> list[Tensor]: return [t for o in self.optimizers for t in o.schedule_step()]

class LARS(Optimizer):
  """SGD with momentum whose step is scaled per parameter by the trust ratio r = tcoef*|p| / (|g| + wd*|p|) (1 when
  either norm is 0; tcoef=0 turns it off). `classic` applies lr (and r) before the momentum buffer, else after it."""
  def __init__(self, params, lr=0.001, momentum=0.9, weight_decay=1e-4, nesterov=False, classic=True, tcoef=0.001):
    super().__init__(params, lr)
    self.momentum, self.wd, self.nesterov, self.classic, self.tcoef = momentum, weight_decay, nesterov, classic, tcoef
    self.b = [Tensor.zeros(*p.shape, dtype=p.dtype, device=p.device, requires_grad=False).contiguous().realize() for p in self.params] if momentum else []
  def _step(self) -> list[Tensor]:
    for i, p in enumerate(self.params):
      g = unwrap(p.grad).detach()  # (step() checked it)
      scale: Tensor | float = self.lr
      if self.tcoef:
        pn, gn = p.detach().square().sum().sqrt(), g.square().sum().sqrt()
        scale = (pn > 0).where((gn > 0).where(self.tcoef * pn / (gn + self.wd * pn), 1.0), 1.0) * self.lr
      if self.wd: g = g + self.wd * p.detach()
      if self.classic: g = g * scale
      if self.momentum:
        self.b[i].assign(self.momentum * self.b[i] + g)
        g = (g + self.momentum * self.b[i]) if self.nesterov else self.b[i]
      if not self.classic: g = g * scale
      p.assign((p.detach() - g).cast(p.dtype))
    return self.b

def SGD(params, lr=0.001, momentum=0.0, weight_decay=0.0, nesterov=False, classic=False) -> LARS:
  """SGD with optional momentum (and Nesterov) and L2 weight decay; with classic=False it is torch.optim.SGD."""
  return LARS(params, lr, momentum, weight_decay, nesterov, classic, tcoef=0.0)

class LAMB(Optimizer):
  """Adam-family optimizer; Adam and AdamW are special cases (no trust ratio)."""
  def __init__(self, params, lr=0.001, b1=0.9, b2=0.999, eps=1e-6, weight_decay=0.0, adam=False):
    super().__init__(params, lr)
    self.b1, self.b2, self.eps, self.wd, self.adam = b1, b2, eps, weight_decay, adam
    self.b1_t = Tensor.ones(dtype=dtypes.float32, requires_grad=False).contiguous().realize()  # 0-d: broadcasts with any parameter
    self.b2_t = Tensor.ones(dtype=dtypes.float32, requires_grad=False).contiguous().realize()
    # the moments in float32 at least (as tinygrad): with half parameters (or dtypes.default_float = half) v = g*g underflows
    self.m = [Tensor.zeros(*p.shape, dtype=least_upper_dtype(p.dtype, dtypes.float32), device=p.device, requires_grad=False).contiguous().realize() for p in self.params]
    self.v = [Tensor.zeros(*p.shape, dtype=least_upper_dtype(p.dtype, dtypes.float32), device=p.device, requires_grad=False).contiguous().realize() for p in self.params]
  def _step(self) -> list[Tensor]:
    self.b1_t.assign(self.b1_t * self.b1)
    self.b2_t.assign(self.b2_t * self.b2)
    for i, p in enumerate(self.params):
      g = unwrap(p.grad).detach()  # (step() checked it)
      self.m[i].assign(self.b1 * self.m[i] + (1.0 - self.b1) * g)
      self.v[i].assign(self.b2 * self.v[i] + (1.0 - self.b2) * (g * g))
      m_hat = self.m[i] / (1.0 - self.b1_t)
      v_hat = self.v[i] / (1.0 - self.b2_t)
      up = (m_hat / (v_hat.sqrt() + self.eps)) + self.wd * p.detach()
      r: Tensor | float = 1.0  # Adam: no trust ratio
      if not self.adam:
        r1, r2 = p.detach().square().sum().sqrt(), up.square().sum().sqrt()
        r = (r1 > 0).where((r2 > 0).where(r1 / r2, 1.0), 1.0)
      p.assign((p.detach() - self.lr * r * up).cast(p.dtype))
    return [self.b1_t, self.b2_t] + self.m + self.v

def Adam(params, lr=0.001, b1=0.9, b2=0.999, eps=1e-8): return LAMB(params, lr, b1, b2, eps, 0.0, adam=True)
def AdamW(params, lr=0.001, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.01):
  """Adam with decoupled weight decay (torch.optim.AdamW): p -= lr * (update + wd * p)."""
  return LAMB(params, lr, b1, b2, eps, weight_decay, adam=True)
