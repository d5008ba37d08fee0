from lazynb import Tensor

def softmax(x: Tensor) -> Tensor:
  e = (x - x.max(axis=-1, keepdim=True)).exp()
  return e / e.sum(axis=-1, keepdim=True)
