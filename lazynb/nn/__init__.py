"""Layers. A layer is a plain object holding Tensors and a __call__; there is no Module base class.
`lazynb.nn.state.get_parameters(model)` finds every Tensor inside, however deeply nested."""
from __future__ import annotations
import math
from lazynb.tensor import Tensor
from lazynb.helpers import prod
from lazynb.nn import optim, state, datasets  # noqa: F401

def _buffer(t: Tensor) -> Tensor:
  """A realized tensor that is state, not a parameter (no gradient)."""
  t = t.contiguous().realize()
  t.requires_grad = False
  return t

class Linear:
  def __init__(self, in_features: int, out_features: int, bias: bool = True):
    bound = 1 / math.sqrt(in_features)
    self.weight = Tensor.uniform(out_features, in_features, low=-bound, high=bound)
    self.bias = Tensor.uniform(out_features, low=-bound, high=bound) if bias else None
  def __call__(self, x: Tensor) -> Tensor: return x.linear(self.weight.transpose(), self.bias)

class Conv2d:
  def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1, bias: bool = True):
    self.kernel_size = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
    fan_in = in_channels // groups * prod(self.kernel_size)
    bound = 1 / math.sqrt(fan_in)
    self.weight = Tensor.uniform(out_channels, in_channels // groups, *self.kernel_size, low=-bound, high=bound)
    self.bias = Tensor.uniform(out_channels, low=-bound, high=bound) if bias else None
  def __call__(self, x: Tensor) -> Tensor:
    return x.conv2d(self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding)

class BatchNorm:
  """Normalizes each channel (axis 1) with the batch's statistics while training and with running
  averages otherwise."""
  def __init__(self, sz: int, eps: float = 1e-5, affine: bool = True, track_running_stats: bool = True, momentum: float = 0.1):
    self.eps, self.momentum, self.track_running_stats = eps, momentum, track_running_stats
    self.weight: Tensor | None = Tensor.ones(sz).contiguous().realize() if affine else None
    self.bias: Tensor | None = Tensor.zeros(sz).contiguous().realize() if affine else None
    self.num_batches_tracked = _buffer(Tensor.zeros(1, dtype="int32"))
    if track_running_stats: self.running_mean, self.running_var = _buffer(Tensor.zeros(sz)), _buffer(Tensor.ones(sz))
  def __call__(self, x: Tensor) -> Tensor:
    axes = tuple(i for i in range(x.ndim) if i != 1)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if Tensor.training or not self.track_running_stats:
      mean = x.mean(axes)
      var = (x - mean.reshape(shape)).square().mean(axes)
      if Tensor.training and self.track_running_stats:
        n = prod(x.shape[i] for i in axes)
        self.running_mean.assign((1 - self.momentum) * self.running_mean + self.momentum * mean.detach())
        self.running_var.assign((1 - self.momentum) * self.running_var + self.momentum * var.detach() * (n / max(1, n - 1)))
        self.num_batches_tracked.assign(self.num_batches_tracked + 1)
    else: mean, var = self.running_mean, self.running_var
    out = (x - mean.reshape(shape)) * (var + self.eps).rsqrt().reshape(shape)
    if self.weight is not None: out = out * self.weight.reshape(shape) + self.bias.reshape(shape)
    return out
BatchNorm2d = BatchNorm

class LayerNorm:
  def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True):
    self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    self.eps = eps
    self.weight = Tensor.ones(*self.normalized_shape) if elementwise_affine else None
    self.bias = Tensor.zeros(*self.normalized_shape) if elementwise_affine else None
  def __call__(self, x: Tensor) -> Tensor:
    if x.shape[-len(self.normalized_shape):] != self.normalized_shape:
      raise ValueError(f"LayerNorm expects trailing shape {self.normalized_shape}, got {x.shape}")
    x = x.layernorm(tuple(range(-len(self.normalized_shape), 0)), self.eps)
    return x if self.weight is None else x * self.weight + self.bias

class Embedding:
  def __init__(self, vocab_size: int, embed_size: int):
    self.vocab_size, self.embed_size = vocab_size, embed_size
    self.weight = Tensor.glorot_uniform(vocab_size, embed_size)
  def __call__(self, idx: Tensor) -> Tensor: return self.weight[idx]
