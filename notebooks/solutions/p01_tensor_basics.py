from lazynb import Tensor

def mse(a: Tensor, b: Tensor) -> Tensor:
  d = a - b
  return (d * d).mean()
