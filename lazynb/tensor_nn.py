"""Tensor methods built from the others (none is a primitive: each is a few calls of elementwise, reduce and movement
methods of Tensor): matmul, convolution and pooling (windows made of movement ops), and the losses and helpers of neural
networks. Kept apart from tensor.py to keep each module readable; tensor.py makes these functions its methods."""
from __future__ import annotations
import math
from typing import TYPE_CHECKING, Callable, Sequence
from lazynb.dtype import dtypes, to_dtype, least_upper_dtype
from lazynb.helpers import prod, unwrap
from lazynb.gradient import custom_gradient
from lazynb.shape.sizes import ArgumentError
from lazynb.shape import windows
if TYPE_CHECKING: from lazynb.tensor import Tensor

# ---------------------------------------------------------------- linear algebra and convolution
def dot(self: Tensor, w: Tensor, dtype=None) -> Tensor:
  """Matrix product as a broadcast multiply and a sum over the shared axis. (On a CPU the schedule stage may copy a big
  w into panels first: renderer/layout.py.) The sum accumulates as sum() does (int8s in int32...), the result has
  the operands' promoted dtype (wrapping there, as numpy's int8 @ int8) unless dtype says."""
  if not isinstance(w, type(self)): w = type(self)(w, device=self.device)
  out = to_dtype(dtype) if dtype is not None else least_upper_dtype(self.dtype, w.dtype)
  n1, n2 = self.ndim, w.ndim
  if n1 == 0 or n2 == 0: raise ArgumentError(f"matmul needs tensors with at least 1 dim, got {self.shape} and {w.shape}")
  k = self.shape[-1]
  if k != w.shape[-min(n2, 2)]: raise ArgumentError(f"matmul shape mismatch: {self.shape} @ {w.shape} ({k} != {w.shape[-min(n2, 2)]})")
  x = self.reshape(self.shape[:-1] + (1,) * min(n1 - 1, n2 - 1, 1) + (k,))
  w2 = w.reshape(w.shape[:-2] + (1,) * min(n1 - 1, n2 - 1, 1) + w.shape[-min(n2, 2):]).transpose(-1, -min(n2, 2))
  return (x * w2).sum(-1, dtype=dtype).cast(out)
def matmul(self: Tensor, w: Tensor, dtype=None) -> Tensor: return self.dot(w, dtype)

def linear(self: Tensor, weight: Tensor, bias: Tensor | None = None, dtype=None) -> Tensor:
  if dtype is not None: return self.cast(dtype).linear(weight.cast(dtype), None if bias is None else bias.cast(dtype))  # all in dtype
  x = self.mul(weight) if weight.ndim == 1 else self.dot(weight)
  return x if bias is None else x + bias
def sequential(self: Tensor, ll: Sequence[Callable[[Tensor], Tensor]]) -> Tensor:
  x = self
  for f in ll: x = f(x)
  return x

def _pool(self: Tensor, k_: tuple[int, ...], stride=1, dilation=1) -> Tensor:
  """Sliding windows over the last len(k_) dims, as movement ops only: (..., *out, *k_) (shape/windows.py)."""
  nd = len(k_)
  if self.ndim < nd: raise ValueError(f"pooling with kernel {k_} needs at least {nd} dims, got {self.shape}")
  s_ = (stride,) * nd if isinstance(stride, int) else tuple(stride)
  d_ = (dilation,) * nd if isinstance(dilation, int) else tuple(dilation)
  return type(self)(windows.pool(self.uop, tuple(k_), s_, d_))

def _padding_pairs(padding, nd: int) -> list[tuple[int, int]]:
  if isinstance(padding, int): return [(padding, padding)] * nd
  if isinstance(padding, str): raise TypeError(f"padding={padding!r}: Tensor methods take ints; 'same' is nn.Conv2d's")
  padding = tuple(padding)
  if len(padding) == nd: return [(p, p) for p in padding]
  if len(padding) == 2 * nd: return [(padding[2 * i], padding[2 * i + 1]) for i in range(nd)][::-1]  # torch order
  raise ValueError(f"padding {padding} must be an int, {nd} ints, or {2 * nd} ints")

def conv2d(self: Tensor, weight: Tensor, bias: Tensor | None = None, groups: int = 1, stride=1, dilation=1, padding=0) -> Tensor:
  """Convolution = windows of the input (movement ops) * weights, summed over (cin, kh, kw)."""
  (bs, cin_), (cout, cin), HW = self.shape[:2], weight.shape[:2], weight.shape[2:]
  if self.ndim != len(HW) + 2: raise ValueError(f"conv input {self.shape} and weight {weight.shape} have different spatial dims")
  if groups * cin != cin_: raise ValueError(f"conv: input has {cin_} channels, weight expects {groups}x{cin} (groups={groups})")
  if cout % groups: raise ValueError(f"conv: {cout} output channels are not divisible by groups={groups}")
  pads = self._padding_pairs(padding, len(HW))
  x = self.pad(((0, 0), (0, 0)) + tuple(pads)) if any(p != (0, 0) for p in pads) else self
  s_, d_ = [(v,) * len(HW) if isinstance(v, int) else tuple(v) for v in (stride, dilation)]
  win, w = windows.conv_operands(x.uop, weight.uop, groups, s_, d_)  # (bs, groups, cout/groups, *out, cin, *HW)
  ret = (type(self)(win) * type(self)(w)).sum(tuple(-1 - i for i in range(1 + len(HW))), keepdim=True).reshape(bs, cout, *unwrap(win.shape)[3:3 + len(HW)])
  if dtypes.is_float(self.dtype) and self.dtype == weight.dtype == ret.dtype:
    custom_gradient(ret.uop, "conv2d", (self.uop, weight.uop), self._conv_backward(weight, groups, stride, dilation, pads))
  return ret if bias is None else ret + bias.reshape(1, -1, *[1] * len(HW))

def _conv_backward(self: Tensor, weight: Tensor, groups: int, stride, dilation, pads: list[tuple[int, int]]) -> Callable:
  """conv2d's own gradient rule, as PyTorch's: d/dx a conv_transpose2d, d/dw windows times grad (docs/internals.md, "Convolution and pooling")."""
  T, nd = type(self), weight.ndim - 2
  s_, d_ = [(v,) * nd if isinstance(v, int) else tuple(v) for v in (stride, dilation)]
  def backward(grad, inputs, wanted: tuple[bool, bool]) -> tuple:
    xu, wu = inputs
    # the output gradient is read once per window position and output channel: computed once into memory, not
    # fused (an upstream ReLU and BatchNorm gradient would be recomputed k*k*channels times in each kernel)
    g, x, w = T(grad).contiguous(), T(xu), T(wu)
    (cout, cin), k_ = w.shape[:2], w.shape[2:]
    dx = dw = None
    if wanted[0]:
      # the rows of the padded input past the last window get no gradient: output_padding covers them
      rest = [(i + pb + pa - d * (k - 1) - 1) % s for i, (pb, pa), k, s, d in zip(x.shape[2:], pads, k_, s_, d_)]
      flat_pads = tuple(p for pair in reversed(pads) for p in pair)  # torch order: last dim first
      dx = g.conv_transpose2d(w, groups=groups, stride=s_, dilation=d_, padding=flat_pads, output_padding=rest).uop
    if wanted[1]:
      xp = x.pad(((0, 0), (0, 0)) + tuple(pads)) if any(p != (0, 0) for p in pads) else x
      win, gg = windows.weight_grad_operands(xp.uop, g.uop, groups, tuple(k_), s_, d_)  # (bs, G, cout/G, cin, *out, *k)
      dw = (T(win) * T(gg)).sum((0, *range(4, 4 + nd))).reshape(cout, cin, *k_).uop
    return dx, dw
  return backward

def conv_transpose2d(self: Tensor, weight: Tensor, bias: Tensor | None = None, groups: int = 1, stride=1, dilation=1, padding=0,
                     output_padding=0) -> Tensor:
  """conv2d's gradient for its input, as a conv2d (docs/internals.md, "Convolution and pooling"); weight: (cin, cout // groups, *k), as torch."""
  HW, nd = weight.shape[2:], weight.ndim - 2
  if self.ndim != nd + 2: raise ValueError(f"conv_transpose input {self.shape} and weight {weight.shape} have different spatial dims")
  if self.shape[1] != weight.shape[0] or weight.shape[0] % groups:
    raise ValueError(f"conv_transpose: input has {self.shape[1]} channels, weight {weight.shape} expects {weight.shape[0]} in {groups} groups")
  s_, d_, op_ = [(v,) * nd if isinstance(v, int) else tuple(v) for v in (stride, dilation, output_padding)]
  if any(op >= max(s, d) for op, s, d in zip(op_, s_, d_)):
    raise ValueError(f"output_padding {op_} must be smaller than stride {s_} or dilation {d_}")
  x, bs, cin = self, self.shape[0], self.shape[1]
  if any(s > 1 for s in s_):  # (n,) -> (n, 1) -> pad to (n, s) -> (n*s,) -> drop the trailing s-1 zeros
    x = x.reshape(bs, cin, *sum([(n, 1) for n in x.shape[2:]], ()))
    x = x.pad(((0, 0), (0, 0)) + sum([((0, 0), (0, s - 1)) for s in s_], ()))
    x = x.reshape(bs, cin, *[n * s for n, s in zip(self.shape[2:], s_)])
    x = x.shrink(((0, bs), (0, cin)) + tuple((0, n * s - (s - 1)) for n, s in zip(self.shape[2:], s_)))
  w = weight.reshape(groups, cin // groups, weight.shape[1], *HW).transpose(1, 2).flip(tuple(range(3, 3 + nd)))
  w = w.reshape(groups * weight.shape[1], cin // groups, *HW)
  pads = [(d * (k - 1) - pb, d * (k - 1) - pa + op) for (pb, pa), k, d, op in zip(self._padding_pairs(padding, nd), HW, d_, op_)]
  return x.pad(((0, 0), (0, 0)) + tuple(pads)).conv2d(w, bias, groups, 1, d_)

def _pool_args(self: Tensor, kernel_size, stride, dilation, padding, ceil_mode: bool):
  """kernel, stride, dilation, pads, ceil_mode's extra pads (docs/internals.md, "Convolution and pooling"), pooled axes (< 0), every dim's pads."""
  k_ = (kernel_size,) * 2 if isinstance(kernel_size, int) else tuple(kernel_size)
  nd = len(k_)
  if nd > self.ndim: raise ValueError(f"kernel_size {k_} pools {nd} dims, the tensor {self.shape} has {self.ndim}")
  s_, d_ = [(v,) * nd if isinstance(v, int) else tuple(v) for v in (k_ if stride is None else stride, dilation)]
  if len(s_) != nd or len(d_) != nd: raise ValueError(f"stride {s_} and dilation {d_} need one value per kernel dim {k_}")
  if any(v < 1 for v in k_ + s_ + d_): raise ValueError(f"kernel_size {k_}, stride {s_} and dilation {d_} must be >= 1")
  pads, extra = self._padding_pairs(padding, nd), []
  for i, k, s, d, (pb, pa) in zip(self.shape[-nd:], k_, s_, d_, pads):
    span, L = d * (k - 1) + 1, i + pb + pa
    o = (-(-(L - span) // s) if ceil_mode else (L - span) // s) + 1  # ceil_mode: a window may hang past the end (torch)
    if ceil_mode and (o - 1) * s >= i + pb: o -= 1
    if o < 1: raise ValueError(f"kernel {k_} (dilation {d_}) is larger than the padded input {self.shape[-nd:]} (padding {pads})")
    extra.append(max(0, (o - 1) * s + span - L))
  allp = ((0, 0),) * (self.ndim - nd) + tuple((b, a + e) for (b, a), e in zip(pads, extra))
  return k_, s_, d_, pads, extra, tuple(range(-nd, 0)), allp

def max_pool2d(self: Tensor, kernel_size=(2, 2), stride=None, dilation=1, padding=0, ceil_mode=False, return_indices=False):
  """The max over each window of the last len(kernel_size) dims. return_indices: also where each max came from, a flat
  int32 index into its (unpadded) plane, the first in the window when tied, as torch (max_unpool2d takes it)."""
  k_, s_, d_, pads, extra, axes, allp = self._pool_args(kernel_size, stride, dilation, padding, ceil_mode)
  # padded with the dtype's lowest value (dtypes.min): -inf for floats, the minimum for ints, False for bools (-inf would make them float)
  x = self.pad(allp, value=dtypes.min(self.dtype)) if any(p != (0, 0) for p in allp) else self
  win = x._pool(k_, s_, d_)
  ret = win.max(axes)
  if not return_indices: return ret
  T, plane = type(self), self.shape[-len(k_):]
  n = prod(plane)
  idx = T.arange(n, dtype=dtypes.int32, device=self.device).reshape(plane)
  idx = idx.pad(allp[-len(plane):], value=n) if any(p != (0, 0) for p in allp) else idx
  hit, iw = win == ret.reshape(ret.shape + (1,) * len(plane)), idx._pool(k_, s_, d_)
  first = hit.where(iw, n).min(axes)  # in a window, flat indices grow along the scan: the least is the first
  if dtypes.is_float(self.dtype):  # a NaN is the max, and torch names the last NaN of the window (NaN == NaN is False)
    last_nan = (win != win).where(iw, -1).max(axes)
    first = (last_nan >= 0).where(last_nan, first)
  return ret, first.detach()

def avg_pool2d(self: Tensor, kernel_size=(2, 2), stride=None, dilation=1, padding=0, ceil_mode=False, count_include_pad=True) -> Tensor:
  """The mean of each window. The divisor counts the padding when count_include_pad, but never the extra places
  ceil_mode adds after it (as torch). Ints and bools average to the default float."""
  k_, s_, d_, pads, extra, axes, allp = self._pool_args(kernel_size, stride, dilation, padding, ceil_mode)
  x = self._float()
  if all(p == (0, 0) for p in allp): return x._pool(k_, s_, d_).mean(axes)
  if count_include_pad and not any(extra) and all(b >= 0 and a >= 0 for b, a in pads): return x.pad(allp)._pool(k_, s_, d_).mean(axes)
  T, plane = type(self), self.shape[-len(k_):]
  ones = T.ones(*plane, dtype=x.dtype, device=self.device)
  if count_include_pad: ones = ones.pad(tuple(pads), value=1.0)  # the pads count, the ceil_mode extra does not
  count = ones.pad(tuple((0 if count_include_pad else b, e if count_include_pad else a + e) for (b, a), e in zip(pads, extra)))
  return x.pad(allp)._pool(k_, s_, d_).sum(axes) / count._pool(k_, s_, d_).sum(axes)

# ---------------------------------------------------------------- normalization, dropout, attention
def layernorm(self: Tensor, axis=-1, eps: float = 1e-5) -> Tensor:
  y = self - self.mean(axis, keepdim=True)
  return y * (y.square().mean(axis, keepdim=True) + eps).rsqrt()
def batchnorm(self: Tensor, weight: Tensor | None, bias: Tensor | None, mean: Tensor, invstd: Tensor, axis=1) -> Tensor:
  """(x - mean) * weight * invstd + bias, the per-channel tensors laid along `axis` (an int or a tuple)."""
  axes = {self._resolve_axis(a) for a in ((axis,) if isinstance(axis, int) else axis)}
  shape = tuple(s if i in axes else 1 for i, s in enumerate(self.shape))
  x = self - mean.reshape(shape)
  if weight is not None: x = x * weight.reshape(shape)
  x = x * (invstd.reshape(shape) if invstd.ndim == len(axes) else invstd)
  return x if bias is None else x + bias.reshape(shape)
def dropout(self: Tensor, p: float = 0.5) -> Tensor:
  """Zeroes each element with probability p and scales the rest by 1/(1-p), only while Tensor.training."""
  if not type(self).training or p == 0: return self
  mask = type(self).rand(*self.shape, device=self.device) >= p  # the draw tinygrad makes: its seeded masks are ours
  return mask.where(self, 0) / (1.0 - p)
def scaled_dot_product_attention(self: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False) -> Tensor:
  """softmax(q @ k^T / sqrt(d) + mask) @ v. A bool mask keeps the True positions; a float mask is added.
  is_causal lets query i see keys 0..i only. q @ k^T sums in float32 at least; the softmax and the result are in q's dtype
  (as tinygrad's)."""
  qk = self.matmul(key.transpose(-2, -1), dtype=least_upper_dtype(self.dtype, key.dtype, dtypes.float32)) / math.sqrt(self.shape[-1])
  if is_causal:
    if attn_mask is not None: raise RuntimeError("cannot set attn_mask when is_causal=True")
    L, S = qk.shape[-2:]
    T = type(self)
    attn_mask = T.arange(L, device=self.device).reshape(L, 1) >= T.arange(S, device=self.device).reshape(1, S)
  if attn_mask is not None: qk = qk + (attn_mask.where(0.0, -math.inf) if attn_mask.dtype == dtypes.bool else attn_mask)
  return qk.cast(self.dtype).softmax(-1).dropout(dropout_p) @ value

# ---------------------------------------------------------------- activations without overflow concerns
def relu6(self: Tensor) -> Tensor: return (self >= 6).where(6, self.relu())  # (not relu(x) - relu(x - 6): inf - inf, and ints wrap)
def hardsigmoid(self: Tensor, alpha: float = 1 / 6, beta: float = 0.5) -> Tensor:
  """clip(alpha*x + beta, 0, 1), with torch's zero gradient at the corners (found on x: alpha*x + beta rounds there)."""
  y = (x := self._float()) * alpha + beta
  return ((y >= 1) | (alpha > 0 and x >= (1 - beta) / alpha)).where(1.0, ((y <= 0) | (alpha > 0 and x <= -beta / alpha)).where(0.0, y))
def leaky_relu(self: Tensor, neg_slope: float = 0.01) -> Tensor: return (self > 0).where(self, self * neg_slope)
def silu(self: Tensor) -> Tensor: return self * self.sigmoid()
def swish(self: Tensor) -> Tensor: return self.silu()
def quick_gelu(self: Tensor) -> Tensor: return self * (self * 1.702).sigmoid()
def mish(self: Tensor) -> Tensor: return self * self.softplus().tanh()
def hardswish(self: Tensor) -> Tensor: return ((x := self._float()) > 3).where(x, x * (x + 3).relu6() * (1 / 6))  # (torch's slope 1 at inf)
def hardtanh(self: Tensor, min_val=-1, max_val=1) -> Tensor:  # floats: torch's zero slope at the corners (clip's is 1/2 there)
  return (self >= max_val).where(max_val, (self <= min_val).where(min_val, self)) if dtypes.is_float(self.dtype) else self.clip(min_val, max_val)
def celu(self: Tensor, alpha: float = 1.0) -> Tensor: return (self / alpha).elu() * alpha
def selu(self: Tensor, alpha: float = 1.67326, gamma: float = 1.0507) -> Tensor: return self.elu(alpha) * gamma
def softsign(self: Tensor) -> Tensor: return self / (1 + self.abs())
