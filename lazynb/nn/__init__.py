"""Layers. A layer is a plain object holding Tensors and a __call__; there is no Module base class.
`lazynb.nn.state.get_parameters(model)` finds every Tensor inside, however deeply nested."""
from __future__ import annotations
import math
from lazynb.tensor import Tensor
from lazynb.helpers import prod, unwrap
from lazynb.dtype import dtypes
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

def _tuple(v, n: int) -> tuple[int, ...]: return (v,) * n if isinstance(v, int) else tuple(v)

class Conv2d:
  """Convolution over the last len(kernel_size) dims (2 for an int). padding: an int, one int per dim, a torch-order
  flat tuple, or "same" (output as large as the input; stride 1 only) / "valid" (no padding)."""
  def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1, bias: bool = True):
    self.kernel_size = _tuple(kernel_size, 2)
    if isinstance(padding, str):
      if padding.lower() not in ("same", "valid"): raise ValueError(f"invalid padding string {padding!r}: use 'same' or 'valid'")
      if padding.lower() == "same" and stride != 1: raise ValueError("padding='same' is not supported for strided convolutions")
      total = [d * (k - 1) for d, k in zip(_tuple(dilation, len(self.kernel_size)), self.kernel_size)]
      padding = 0 if padding.lower() == "valid" else sum([(t // 2, t - t // 2) for t in reversed(total)], ())  # torch order
    self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
    bound = 1 / math.sqrt(in_channels * prod(self.kernel_size))  # tinygrad's bound (torch divides in_channels by groups)
    self.weight = Tensor.uniform(out_channels, in_channels // groups, *self.kernel_size, low=-bound, high=bound)
    self.bias = Tensor.uniform(out_channels, low=-bound, high=bound) if bias else None
  def __call__(self, x: Tensor) -> Tensor: return x.conv2d(self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding)

def Conv1d(in_channels: int, out_channels: int, kernel_size: int, stride=1, padding=0, dilation=1, groups: int = 1, bias: bool = True) -> Conv2d:
  """A Conv2d with a 1-d kernel: input (N, C, L)."""
  return Conv2d(in_channels, out_channels, _tuple(kernel_size, 1), stride, padding, dilation, groups, bias)

class ConvTranspose2d(Conv2d):
  """Transposed convolution (Tensor.conv_transpose2d); weight (in_channels, out_channels // groups, *kernel_size)."""
  def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, dilation=1,
               groups: int = 1, bias: bool = True):
    # Conv2d's weight and bias are drawn first, then this weight: tinygrad 0.10 draws in this order, so a seeded
    # ConvTranspose2d gets its numbers (the first weight is dropped)
    super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)
    self.output_padding = output_padding
    bound = 1 / math.sqrt(in_channels * prod(self.kernel_size))
    self.weight = Tensor.uniform(in_channels, out_channels // groups, *self.kernel_size, low=-bound, high=bound)
  def __call__(self, x: Tensor) -> Tensor:
    return x.conv_transpose2d(self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding, self.output_padding)

def ConvTranspose1d(in_channels: int, out_channels: int, kernel_size: int, stride=1, padding=0, output_padding=0, dilation=1,
                    groups: int = 1, bias: bool = True) -> ConvTranspose2d:
  return ConvTranspose2d(in_channels, out_channels, _tuple(kernel_size, 1), stride, padding, output_padding, dilation, groups, bias)

class BatchNorm:
  """Normalizes each channel (axis 1) with the batch's statistics while training and with running averages otherwise."""
  def __init__(self, sz: int, eps: float = 1e-5, affine: bool = True, track_running_stats: bool = True, momentum: float = 0.1):
    self.eps, self.momentum, self.track_running_stats = eps, momentum, track_running_stats
    self.weight: Tensor | None = Tensor.ones(sz).contiguous().realize() if affine else None
    self.bias: Tensor | None = Tensor.zeros(sz).contiguous().realize() if affine else None
    self.num_batches_tracked = _buffer(Tensor.zeros(1, dtype="int32"))
    if track_running_stats: self.running_mean, self.running_var = _buffer(Tensor.zeros(sz)), _buffer(Tensor.ones(sz))
  def __call__(self, x: Tensor) -> Tensor:
    axes = tuple(i for i in range(x.ndim) if i != 1)
    if Tensor.training or not self.track_running_stats:
      mean = x.mean(axes)
      var = (x - mean.reshape((1, -1) + (1,) * (x.ndim - 2))).square().mean(axes)
      if Tensor.training and self.track_running_stats:
        n = prod(x.shape[i] for i in axes)
        self.running_mean.assign((1 - self.momentum) * self.running_mean + self.momentum * mean.detach())
        self.running_var.assign((1 - self.momentum) * self.running_var + self.momentum * var.detach() * (n / max(1, n - 1)))
        self.num_batches_tracked.assign(self.num_batches_tracked + 1)
    else: mean, var = self.running_mean, self.running_var
    return x.batchnorm(self.weight, self.bias, mean, (var + self.eps).rsqrt())
BatchNorm2d = BatchNorm3d = BatchNorm

class LayerNorm:
  def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True):
    self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    self.axis, self.eps = tuple(range(-len(self.normalized_shape), 0)), eps  # the axes it normalizes
    self.weight = Tensor.ones(*self.normalized_shape) if elementwise_affine else None
    self.bias = Tensor.zeros(*self.normalized_shape) if elementwise_affine else None
  def __call__(self, x: Tensor) -> Tensor:
    if x.shape[-len(self.normalized_shape):] != self.normalized_shape:
      raise ValueError(f"LayerNorm expects trailing shape {self.normalized_shape}, got {x.shape}")
    x = x.layernorm(self.axis, self.eps)
    return x if self.weight is None else x * self.weight + self.bias

class LayerNorm2d(LayerNorm):
  """LayerNorm over the channels of (N, C, H, W) at each pixel."""
  def __call__(self, x: Tensor) -> Tensor: return super().__call__(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

class GroupNorm:
  """Normalizes each group of num_channels // num_groups channels (with all their pixels) of each sample."""
  def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True):
    if num_channels % num_groups: raise ValueError(f"num_channels={num_channels} must be divisible by num_groups={num_groups}")
    self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
    self.weight = Tensor.ones(num_channels) if affine else None
    self.bias = Tensor.zeros(num_channels) if affine else None
  def __call__(self, x: Tensor) -> Tensor:
    x = x.reshape(x.shape[0], self.num_groups, -1).layernorm(eps=self.eps).reshape(x.shape)
    if self.weight is None: return x
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return x * self.weight.reshape(shape) + unwrap(self.bias).reshape(shape)  # (affine: both)

class InstanceNorm(GroupNorm):
  """GroupNorm with one channel per group: each channel of each sample is normalized over its pixels."""
  def __init__(self, num_features: int, eps: float = 1e-5, affine: bool = True):
    super().__init__(num_features, num_features, eps, affine)
    self.num_features = num_features

class RMSNorm:
  """x / sqrt(mean(x^2) + eps) over the last axis (computed in float32), times a learned weight."""
  def __init__(self, dim: int, eps: float = 1e-6): self.eps, self.weight = eps, Tensor.ones(dim)
  def __call__(self, x: Tensor) -> Tensor:
    f = x.cast(dtypes.float32)
    return (f * (f.square().mean(-1, keepdim=True) + self.eps).rsqrt()).cast(x.dtype) * self.weight

class LSTMCell:
  """One LSTM step: (x, (h, c)) -> (h', c'). Gates i, f, g, o are stacked in that order in the weights (as torch)."""
  def __init__(self, input_size: int, hidden_size: int, bias: bool = True):
    bound = 1 / math.sqrt(hidden_size)
    self.weight_ih = Tensor.uniform(hidden_size * 4, input_size, low=-bound, high=bound)
    self.weight_hh = Tensor.uniform(hidden_size * 4, hidden_size, low=-bound, high=bound)
    self.bias_ih = Tensor.zeros(hidden_size * 4) if bias else None
    self.bias_hh = Tensor.zeros(hidden_size * 4) if bias else None
  def __call__(self, x: Tensor, hc: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
    if hc is None: hc = (Tensor.zeros(x.shape[0], self.weight_hh.shape[1], dtype=x.dtype, device=x.device),) * 2
    gates = x.linear(self.weight_ih.T, self.bias_ih) + hc[0].linear(self.weight_hh.T, self.bias_hh)
    i, f, g, o = gates.chunk(4, dim=1)
    c = f.sigmoid() * hc[1] + i.sigmoid() * g.tanh()
    return (o.sigmoid() * c.tanh()).contiguous(), c.contiguous()

class Embedding:
  def __init__(self, vocab_size: int, embed_size: int):
    self.vocab_size, self.embed_size = vocab_size, embed_size
    self.weight = Tensor.glorot_uniform(vocab_size, embed_size)
  def __call__(self, idx: Tensor) -> Tensor: return self.weight[idx]
