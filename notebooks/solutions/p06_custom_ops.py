from lazynb import Tensor

def layer_norm(x: Tensor, eps=1e-5) -> Tensor:
  c = x - x.mean(axis=-1, keepdim=True)
  return c / ((c * c).mean(axis=-1, keepdim=True) + eps).sqrt()
