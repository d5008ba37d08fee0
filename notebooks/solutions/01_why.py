from lazynb import Tensor

def my_relu(x: Tensor) -> Tensor:
  return (x > 0).where(x, 0)
