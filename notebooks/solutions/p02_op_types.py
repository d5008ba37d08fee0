from lazynb import Tensor

def address(idx, strides, offset):
  return offset + sum(i * s for i, s in zip(idx, strides))

def batched_matmul(a: Tensor, b: Tensor) -> Tensor:
  (B, M, K), N = a.shape, b.shape[2]
  return (a.reshape(B, M, K, 1) * b.reshape(B, 1, K, N)).sum(axis=2)
