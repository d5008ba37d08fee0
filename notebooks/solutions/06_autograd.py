import numpy as np

def swish_grad(x):
  s = 1 / (1 + np.exp(-x))
  return s + x * s * (1 - s)
