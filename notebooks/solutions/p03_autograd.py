import numpy as np
from lazynb import Tensor

def finite_diff(f, v, eps=1e-4):
  v = np.asarray(v, dtype=np.float64)
  g = np.zeros_like(v)
  for i in range(v.size):
    hi, lo = v.copy(), v.copy()
    hi.flat[i] += eps
    lo.flat[i] -= eps
    g.flat[i] = (f(hi) - f(lo)) / (2 * eps)
  return g

def pseudo_huber(pred: Tensor, target: Tensor, delta=1.0) -> Tensor:
  r = (pred - target) / delta
  return (delta * delta * ((1 + r * r).sqrt() - 1)).mean()
