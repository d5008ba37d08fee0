"""Loss functions as Tensor methods (functions of a Tensor: tensor.py makes them its methods). `reduction` is "mean", "sum" or "none", as in
tinygrad and torch; the class axis is the last one for sparse_categorical_crossentropy and axis 1 otherwise."""
from __future__ import annotations
from typing import TYPE_CHECKING
from lazynb.dtype import dtypes
if TYPE_CHECKING: from lazynb.tensor import Tensor

def _check(reduction: str, label_smoothing: float = 0.0):
  if reduction not in ("mean", "sum", "none"): raise ValueError(f"reduction={reduction!r} must be one of 'mean', 'sum', 'none'")
  if not 0.0 <= label_smoothing <= 1.0: raise ValueError(f"label_smoothing={label_smoothing} must be in [0.0, 1.0]")


def _do_reduction(self: Tensor, reduction: str) -> Tensor:
  _check(reduction)
  return self.mean() if reduction == "mean" else self.sum() if reduction == "sum" else self
def one_hot(self: Tensor, num_classes: int = -1) -> Tensor:
  """Integer labels (...) -> (..., num_classes) of 0/1 ints; num_classes=-1 takes max(label) + 1 (this reads the data)."""
  if not dtypes.is_int(self.dtype): raise RuntimeError(f"one_hot needs integer labels, got {self.dtype}")
  if num_classes == -1: num_classes = int(self.max().item()) + 1
  return (self.unsqueeze(-1) == type(self).arange(num_classes, device=self.device)).cast(dtypes.default_int)
def _pick(self: Tensor, Y: Tensor, axis: int) -> Tensor:
  """self[..., Y, ...] along `axis` (Y has self's shape without that axis), by a one-hot mask. A where, not a
  product, so that a -inf elsewhere in the row cannot make 0 * -inf = NaN."""
  if not dtypes.is_int(Y.dtype): raise TypeError(f"class labels must be integers, got {Y.dtype}")
  axis = self._resolve_axis(axis, what="a loss over classes (its class axis)")
  if Y.shape != self.shape[:axis] + self.shape[axis + 1:]: raise ValueError(f"input {self.shape} and labels {Y.shape} do not match")
  classes = type(self).arange(self.shape[axis], device=self.device).reshape(-1, *[1] * (self.ndim - axis - 1))
  return (Y.unsqueeze(axis) == classes).where(self, 0).sum(axis)

def sparse_categorical_crossentropy(self: Tensor, Y: Tensor, ignore_index: int = -1, label_smoothing: float = 0.0, reduction: str = "mean") -> Tensor:
  """Cross-entropy of logits (..., C) against integer labels (...). Labels equal to ignore_index (if it is not -1,
  tinygrad's "none") add nothing and are left out of the mean."""
  _check(reduction, label_smoothing)
  log_probs = self.log_softmax()
  loss = -log_probs._smoothed_pick(Y, -1, label_smoothing)
  if ignore_index == -1: return loss._do_reduction(reduction)
  loss = (mask := Y != ignore_index).where(loss, 0)
  return loss.sum() / mask.sum() if reduction == "mean" else loss._do_reduction(reduction)
def _smoothed_pick(self: Tensor, Y: Tensor, axis: int, label_smoothing: float) -> Tensor:
  """The log-probability at each label, mixed with the mean over classes when smoothing (only then: a masked -inf
  class would make 0 * mean(-inf) NaN)."""
  picked = self._pick(Y, axis)
  return picked if not label_smoothing else (1 - label_smoothing) * picked + label_smoothing * self.mean(axis)
def cross_entropy(self: Tensor, Y: Tensor, reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
  """Cross-entropy of logits (N, C, ...) against class indices (N, ...) or class probabilities (N, C, ...)."""
  _check(reduction, label_smoothing)
  log_probs = self.log_softmax(1)
  if Y.shape == self.shape: loss = -(log_probs * ((1 - label_smoothing) * Y + label_smoothing / self.shape[1])).sum(1)
  else: loss = -log_probs._smoothed_pick(Y, 1, label_smoothing)
  return loss._do_reduction(reduction)
def nll_loss(self: Tensor, Y: Tensor, weight: Tensor | None = None, ignore_index: int | None = None, reduction: str = "mean") -> Tensor:
  """Negative log-likelihood of log-probabilities (N, C, ...) at class indices Y (N, ...); `weight` weighs each
  class, and the mean divides by the total weight of the counted labels (as torch)."""
  _check(reduction)
  if weight is None: w = Y.ones_like(dtype=self.dtype)
  else: w = (Y.unsqueeze(-1) == type(self).arange(weight.shape[0], device=self.device)).where(weight, 0).sum(-1)
  if ignore_index is not None: w = (Y != ignore_index).where(w, 0)
  loss = -self._pick(Y, 1) * w
  return loss.sum() / w.sum() if reduction == "mean" else loss._do_reduction(reduction)
def binary_crossentropy(self: Tensor, Y: Tensor, reduction: str = "mean") -> Tensor:
  """Cross-entropy of probabilities `self` against targets Y in [0, 1]."""
  return (-Y * self.log() - (1 - Y) * (1 - self).log())._do_reduction(reduction)
def binary_crossentropy_logits(self: Tensor, Y: Tensor, reduction: str = "mean") -> Tensor:
  """binary_crossentropy(sigmoid(self), Y) without forming the sigmoid: max(x, 0) - x*y + log(1 + exp(-|x|))."""
  return (self.maximum(0) - Y * self + (1 + (-self.abs()).exp()).log())._do_reduction(reduction)
