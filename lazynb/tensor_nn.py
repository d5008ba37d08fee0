"""Tensor methods built from the others: matmul, convolution and pooling (windows made of movement ops), and the
losses and helpers of neural networks. Kept apart from tensor.py to keep each module readable; Tensor inherits them.
Nothing here is a primitive: every method is a few calls of elementwise, reduce and movement methods of Tensor."""
from __future__ import annotations
import math
from typing import TYPE_CHECKING, Callable, Sequence
from lazynb.dtype import dtypes
from lazynb.helpers import ceildiv
if TYPE_CHECKING: from lazynb.tensor import Tensor

class NNMixin:
  __slots__ = ()

  # ---------------------------------------------------------------- linear algebra and convolution
  def dot(self, w: Tensor, dtype=None) -> Tensor:
    """Matrix product as a broadcast multiply and a sum over the shared axis."""
    if not isinstance(w, type(self)): w = type(self)(w, device=self.device)
    n1, n2 = self.ndim, w.ndim
    if n1 == 0 or n2 == 0: raise ValueError(f"matmul needs tensors with at least 1 dim, got {self.shape} and {w.shape}")
    k = self.shape[-1]
    if k != w.shape[-min(n2, 2)]: raise ValueError(f"matmul shape mismatch: {self.shape} @ {w.shape} ({k} != {w.shape[-min(n2, 2)]})")
    x = self.reshape(self.shape[:-1] + (1,) * min(n1 - 1, n2 - 1, 1) + (k,))
    w2 = w.reshape(w.shape[:-2] + (1,) * min(n1 - 1, n2 - 1, 1) + w.shape[-min(n2, 2):]).transpose(-1, -min(n2, 2))
    return (x * w2).sum(-1, dtype=dtype)
  def matmul(self, w: Tensor, dtype=None) -> Tensor: return self.dot(w, dtype)
  def linear(self, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    x = self.mul(weight) if weight.ndim == 1 else self.dot(weight)
    return x if bias is None else x + bias
  def sequential(self, ll: Sequence[Callable[[Tensor], Tensor]]) -> Tensor:
    x = self
    for f in ll: x = f(x)
    return x

  def _pool(self, k_: tuple[int, ...], stride=1, dilation=1) -> Tensor:
    """Sliding windows over the last len(k_) dims, as movement ops only: (..., *out, *k_).
    Each spatial dim is repeated, re-strided by a reshape that skips `d` elements per row (so row j starts
    j*d further on), then cut to the output positions and the stride."""
    nd = len(k_)
    if self.ndim < nd: raise ValueError(f"pooling with kernel {k_} needs at least {nd} dims, got {self.shape}")
    s_ = (stride,) * nd if isinstance(stride, int) else tuple(stride)
    d_ = (dilation,) * nd if isinstance(dilation, int) else tuple(dilation)
    noop, i_ = self.shape[:-nd], self.shape[-nd:]
    o_ = tuple((i - d * (k - 1) - 1) // s + 1 for i, k, s, d in zip(i_, k_, s_, d_))
    if any(o <= 0 for o in o_): raise ValueError(f"kernel {k_} (dilation {d_}) is larger than the input {i_}")
    L_ = tuple(i * max(1, ceildiv(o * s - d, i)) + d for i, o, s, d in zip(i_, o_, s_, d_))  # row length: = d (mod i)
    x = self.repeat((1,) * len(noop) + tuple(ceildiv(k * L, i) for k, L, i in zip(k_, L_, i_)))
    x = x.shrink(tuple((0, s) for s in noop) + tuple((0, k * L) for k, L in zip(k_, L_)))
    x = x.reshape(noop + sum([(k, L) for k, L in zip(k_, L_)], ()))
    x = x.shrink(tuple((0, s) for s in noop) + sum([((0, k), (0, o * s)) for k, o, s in zip(k_, o_, s_)], ()))
    x = x.reshape(noop + sum([(k, o, s) for k, o, s in zip(k_, o_, s_)], ()))
    x = x.shrink(tuple((0, s) for s in noop) + sum([((0, k), (0, o), (0, 1)) for k, o in zip(k_, o_)], ()))
    x = x.reshape(noop + sum([(k, o) for k, o in zip(k_, o_)], ()))
    n = len(noop)
    return x.permute(tuple(range(n)) + tuple(n + 2 * i + 1 for i in range(nd)) + tuple(n + 2 * i for i in range(nd)))

  @staticmethod
  def _padding_pairs(padding, nd: int) -> list[tuple[int, int]]:
    if isinstance(padding, int): return [(padding, padding)] * nd
    padding = tuple(padding)
    if len(padding) == nd: return [(p, p) for p in padding]
    if len(padding) == 2 * nd: return [(padding[2 * i], padding[2 * i + 1]) for i in range(nd)][::-1]  # torch order
    raise ValueError(f"padding {padding} must be an int, {nd} ints, or {2 * nd} ints")

  def conv2d(self, weight: Tensor, bias: Tensor | None = None, groups: int = 1, stride=1, dilation=1, padding=0) -> Tensor:
    """Convolution = windows of the input (movement ops) * weights, summed over (cin, kh, kw)."""
    (bs, cin_), (cout, cin), HW = self.shape[:2], weight.shape[:2], weight.shape[2:]
    if self.ndim != len(HW) + 2: raise ValueError(f"conv input {self.shape} and weight {weight.shape} have different spatial dims")
    if groups * cin != cin_: raise ValueError(f"conv: input has {cin_} channels, weight expects {groups}x{cin} (groups={groups})")
    if cout % groups: raise ValueError(f"conv: {cout} output channels are not divisible by groups={groups}")
    pads = self._padding_pairs(padding, len(HW))
    x = self.pad(((0, 0), (0, 0)) + tuple(pads)) if any(p != (0, 0) for p in pads) else self
    x = x._pool(HW, stride, dilation)  # (bs, groups*cin, *oyx, *HW)
    rcout, oyx = cout // groups, x.shape[2:2 + len(HW)]
    x = x.reshape(bs, groups, cin, 1, *oyx, *HW).expand(bs, groups, cin, rcout, *oyx, *HW)
    nd = len(oyx)
    x = x.permute(0, 1, 3, *[4 + i for i in range(nd)], 2, *[4 + nd + i for i in range(len(HW))])  # (bs, g, rcout, *oyx, cin, *HW)
    w = weight.reshape(1, groups, rcout, *[1] * nd, cin, *HW)
    ret = (x * w).sum(tuple(-1 - i for i in range(1 + len(HW))), keepdim=True).reshape(bs, cout, *oyx)
    return ret if bias is None else ret + bias.reshape(1, -1, *[1] * nd)

  def max_pool2d(self, kernel_size=(2, 2), stride=None, dilation=1, padding=0) -> Tensor:
    k = (kernel_size,) * 2 if isinstance(kernel_size, int) else tuple(kernel_size)
    pads = self._padding_pairs(padding, len(k))
    x = self.pad(((0, 0),) * (self.ndim - len(k)) + tuple(pads), value=-math.inf) if any(p != (0, 0) for p in pads) else self
    return x._pool(k, stride if stride is not None else k, dilation).max(tuple(range(-len(k), 0)))
  def avg_pool2d(self, kernel_size=(2, 2), stride=None, dilation=1, padding=0) -> Tensor:
    k = (kernel_size,) * 2 if isinstance(kernel_size, int) else tuple(kernel_size)
    pads = self._padding_pairs(padding, len(k))
    x = self.pad(((0, 0),) * (self.ndim - len(k)) + tuple(pads)) if any(p != (0, 0) for p in pads) else self
    return x._pool(k, stride if stride is not None else k, dilation).mean(tuple(range(-len(k), 0)))

  # ---------------------------------------------------------------- nn helpers and losses
  def layernorm(self, axis=-1, eps: float = 1e-5) -> Tensor:
    y = self - self.mean(axis, keepdim=True)
    return y * (y.square().mean(axis, keepdim=True) + eps).rsqrt()
  def dropout(self, p: float = 0.5) -> Tensor:
    if not type(self).training or p == 0: return self
    mask = type(self).rand(*self.shape, device=self.device) >= p
    return mask.where(self, 0) * (1 / (1.0 - p))
  def one_hot(self, num_classes: int) -> Tensor:
    if not dtypes.is_int(self.dtype): raise TypeError(f"one_hot needs integer labels, got {self.dtype}")
    return (self.unsqueeze(-1) == type(self).arange(num_classes, device=self.device)).cast(dtypes.default_float)
  def sparse_categorical_crossentropy(self, Y: Tensor, ignore_index: int = -1, label_smoothing: float = 0.0) -> Tensor:
    """Mean cross-entropy of logits `self` (N, C) against integer labels Y (N,)."""
    if self.ndim != Y.ndim + 1 or self.shape[:-1] != Y.shape: raise ValueError(f"logits {self.shape} and labels {Y.shape} do not match")
    log_probs = self.log_softmax()
    Y = Y.cast(dtypes.int32)
    mask = Y.ne(ignore_index)
    y = (Y.unsqueeze(-1) == type(self).arange(self.shape[-1], device=self.device)) & mask.unsqueeze(-1)
    nll = -y.where(log_probs, 0).sum(-1)  # a masked (-inf) logit of another class must not make 0 * -inf = NaN
    loss = nll if label_smoothing == 0 else (1 - label_smoothing) * nll + label_smoothing * -log_probs.mean(-1) * mask.cast(log_probs.dtype)
    return loss.sum() / mask.cast(loss.dtype).sum()
  def cross_entropy(self, Y: Tensor, label_smoothing: float = 0.0) -> Tensor:
    if dtypes.is_int(Y.dtype): return self.sparse_categorical_crossentropy(Y, label_smoothing=label_smoothing)
    Y = (1 - label_smoothing) * Y + label_smoothing / self.shape[-1]
    return -(self.log_softmax() * Y).sum(-1).mean()
  def binary_crossentropy(self, Y: Tensor) -> Tensor:
    return -(Y * self.log() + (1 - Y) * (1 - self).log()).mean()
  def binary_crossentropy_logits(self, Y: Tensor) -> Tensor:
    return (self.maximum(0) - Y * self + (1 + (-self.abs()).exp()).log()).mean()
