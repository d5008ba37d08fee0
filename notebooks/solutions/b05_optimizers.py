# %% EXERCISE b05.sgd
from lazynb import Tensor
from lazynb.nn.optim import Optimizer

class MySGD(Optimizer):
  def __init__(self, params, lr=0.01, momentum=0.9):
    super().__init__(params, lr)
    self.momentum = momentum
    self.b = [Tensor.zeros(*p.shape, requires_grad=False).contiguous().realize() for p in self.params]
  def _step(self):
    for p, b in zip(self.params, self.b):
      b.assign(self.momentum * b + p.grad.detach())
      p.assign(p.detach() - self.lr * b)
    return self.b

# %% EXERCISE b05.adam
from lazynb import Tensor
from lazynb.nn.optim import Optimizer

class MyAdam(Optimizer):
  def __init__(self, params, lr=0.001, b1=0.9, b2=0.999, eps=1e-8):
    super().__init__(params, lr)
    self.b1, self.b2, self.eps = b1, b2, eps
    self.b1_t = Tensor.ones(requires_grad=False).contiguous().realize()
    self.b2_t = Tensor.ones(requires_grad=False).contiguous().realize()
    self.m = [Tensor.zeros(*p.shape, requires_grad=False).contiguous().realize() for p in self.params]
    self.v = [Tensor.zeros(*p.shape, requires_grad=False).contiguous().realize() for p in self.params]
  def _step(self):
    self.b1_t.assign(self.b1_t * self.b1)
    self.b2_t.assign(self.b2_t * self.b2)
    for p, m, v in zip(self.params, self.m, self.v):
      g = p.grad.detach()
      m.assign(self.b1 * m + (1 - self.b1) * g)
      v.assign(self.b2 * v + (1 - self.b2) * g * g)
      m_hat, v_hat = m / (1 - self.b1_t), v / (1 - self.b2_t)
      p.assign(p.detach() - self.lr * m_hat / (v_hat.sqrt() + self.eps))
    return [self.b1_t, self.b2_t] + self.m + self.v
