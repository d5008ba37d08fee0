"""Gradients of half tensors over long reductions: every sum a backward pass makes (the expand's gradient, a tied max's
count, a matmul's, a mean's, a softmax's, a convolution's) adds in float32 and rounds once, as tinygrad 0.10 does (its
test_backward_sum_acc_dtype). A sum kept in half stops growing at 2048 (2048 + 1 rounds back to 2048): a tied max over
10001 copies once got a gradient of 4.88 instead of 1. Each gradient is compared with torch's in float64 on the same
half inputs, to half's precision."""
import numpy as np
import pytest
import torch
from lazynb import Tensor, dtypes

pytestmark = pytest.mark.torch

def _rnd(*shape, seed=0): return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float16)
W = (np.arange(4096) / 4096).astype(np.float16)

# name -> (the loss from the inputs, lazynb's spelling; torch's spelling; the inputs)
CASES = {
  "tied max over an expand": (lambda x: x.reshape(2, 1).expand(2, 10001).max(), lambda x: x.reshape(2, 1).expand(2, 10001).max(),
                              [np.array([5, -5], np.float16)]),
  "sum of an expand": (lambda x: (x.reshape(3, 1).expand(3, 9000) * 0.5).sum(), lambda x: (x.reshape(3, 1).expand(3, 9000) * 0.5).sum(), [_rnd(3)]),
  "mean over 8192": (lambda x: (x * x).mean(), lambda x: (x * x).mean(), [_rnd(8192, seed=1)]),
  "matmul, k = 4096": (lambda a, b: (a @ b).sum(), lambda a, b: (a @ b).sum(), [_rnd(4, 4096, seed=2), _rnd(4096, 3, seed=3)]),
  "softmax over 4096": (lambda x: (x.softmax(-1) * Tensor(W)).sum(), lambda x: (x.softmax(-1) * torch.tensor(W.astype(np.float64))).sum(),
                        [_rnd(2, 4096, seed=4)]),
  "conv2d, 64 channels": (lambda x, w: x.conv2d(w).sum(), lambda x, w: torch.nn.functional.conv2d(x, w).sum(),
                          [_rnd(2, 64, 12, 12, seed=5), _rnd(4, 64, 3, 3, seed=6)]),
}

@pytest.mark.parametrize("name", list(CASES))
def test_half_gradients_over_long_sums_as_torch(name):
  ours_fn, torch_fn, arrs = CASES[name]
  ours = [Tensor(a, dtype=dtypes.half, requires_grad=True) for a in arrs]
  ours_fn(*ours).backward()
  theirs = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in arrs]
  torch_fn(*theirs).backward()
  for t, w in zip(ours, theirs):
    assert t.grad.dtype is dtypes.half
    want = w.grad.numpy()
    np.testing.assert_allclose(t.grad.numpy().astype(np.float64), want, rtol=2e-2, atol=2e-3 * max(1.0, float(np.abs(want).max())))
