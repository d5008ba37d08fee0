"""Convolutions against torch: values and both gradients (input, weight, bias) over kernel sizes 3-7 (square and not),
strides, padding, dilation and groups, with a non-uniform upstream gradient held in memory. These are the kernels a
convolution speed-up (issue 16) changes: the forward window product, the weight gradient, the input-window gradient
and the fold of the windows back onto the input.
"""
import numpy as np
import pytest
from lazynb import Tensor

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

CASES = [  # (batch, cin, cout, H, W, k, stride, padding, dilation, groups)
  (2, 3, 4, 12, 12, 5, 1, 0, 1, 1),
  (2, 4, 8, 11, 9, 5, 1, 2, 1, 1),
  (3, 2, 4, 13, 13, 5, 2, 1, 1, 1),
  (2, 3, 5, 14, 14, (5, 7), 1, 0, 1, 1),
  (2, 2, 3, 16, 15, 6, (2, 1), 3, 1, 1),
  (1, 4, 4, 15, 15, 7, 1, 3, 1, 2),
  (2, 3, 4, 15, 15, 5, 1, 0, 2, 1),
  (2, 8, 8, 9, 9, 3, 1, 1, 1, 1),
  (2, 4, 6, 10, 10, 3, 2, 0, 1, 1),
  (4, 8, 16, 12, 12, 5, 1, 0, 1, 1),
]

def _conv_check(b, cin, cout, H, W, k, stride, padding, dilation, groups, transpose=False):
  rng = np.random.default_rng(hash((b, cin, cout, H, W, str(k), str(stride), padding, dilation, groups, transpose)) % 2**32)
  ks = (k, k) if isinstance(k, int) else k
  xs = rng.standard_normal((b, cin, H, W)).astype(np.float32)
  ws = (rng.standard_normal((cin, cout // groups, *ks)) if transpose else rng.standard_normal((cout, cin // groups, *ks))).astype(np.float32)
  bs = rng.standard_normal(cout).astype(np.float32)
  tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (xs, ws, bs))
  lx, lw, lb = (Tensor(a, requires_grad=True) for a in (xs, ws, bs))
  if transpose:
    to = torch.nn.functional.conv_transpose2d(tx, tw, tb, stride=stride, padding=padding, dilation=dilation, groups=groups)
    lo = lx.conv_transpose2d(lw, lb, groups=groups, stride=stride, dilation=dilation, padding=padding)
  else:
    to = torch.nn.functional.conv2d(tx, tw, tb, stride=stride, padding=padding, dilation=dilation, groups=groups)
    lo = lx.conv2d(lw, lb, groups=groups, stride=stride, dilation=dilation, padding=padding)
  up = rng.standard_normal(tuple(to.shape)).astype(np.float32)  # a non-uniform upstream gradient
  (to * torch.tensor(up)).sum().backward()
  (lo * Tensor(up)).sum().backward()
  np.testing.assert_allclose(lo.numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(lw.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=2e-4)
  np.testing.assert_allclose(lb.grad.numpy(), tb.grad.numpy(), rtol=1e-4, atol=2e-4)

@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c)))
def test_conv2d_values_and_grads_match_torch(case):
  _conv_check(*case)

@pytest.mark.parametrize("case", [(2, 3, 4, 6, 6, 5, 1, 0, 1, 1), (2, 4, 2, 5, 7, 5, 2, 1, 1, 1), (1, 4, 4, 6, 6, 7, 1, 2, 1, 2)],
                         ids=lambda c: "x".join(map(str, c)))
def test_conv_transpose2d_values_and_grads_match_torch(case):
  _conv_check(*case, transpose=True)
