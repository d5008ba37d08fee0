"""Convolutions against torch: values and both gradients over shapes that take the different kernel-opt paths
(issue 16: a 5-7 wide kernel row is upcast whole in the weight gradient; 3-wide and wider rows keep the usual tile).
"""
import numpy as np
import pytest
from lazynb import Tensor, Device
from lazynb.codegen.kernel import Kernel, Opt, OptOps, AxisType, hand_coded_optimizations, _short_broadcast_row

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

def _weight_grad_kernel(k: int, cin=8, cout=8, H=12):
  rng = np.random.default_rng(0)
  x = Tensor(rng.standard_normal((2, cin, H, H)).astype(np.float32))
  w = Tensor(rng.standard_normal((cout, cin, k, k)).astype(np.float32), requires_grad=True)
  up = Tensor(rng.standard_normal((2, cout, H - k + 1, H - k + 1)).astype(np.float32))  # an upstream gradient in memory
  (x.conv2d(w) * up).sum().backward()
  items = [si for si in w.grad.schedule() if si.ast.op.name == "SINK"]
  return Kernel(items[-1].ast, Device["CPU"].renderer)

def test_5x5_weight_grad_upcasts_its_kx_row_whole():
  k = _weight_grad_kernel(5)
  row = _short_broadcast_row(k)
  assert row is not None and k.full_shape[row] == 5
  opts = hand_coded_optimizations(k)
  assert opts[0] == Opt(OptOps.UPCAST, row, 0)
  assert sum(1 for o in opts if o.op is OptOps.UPCAST) == 2  # the row and one tile axis: no third upcast
  assert k.upcast_size() <= 5 * 8 * 4
  assert 5 in [s for s, t in zip(k.full_shape, k.axis_types) if t is AxisType.UPCAST]

@pytest.mark.parametrize("ksz", [3, 4, 8])
def test_other_kernel_rows_keep_the_tile(ksz):
  assert _short_broadcast_row(_weight_grad_kernel(ksz)) is None

def test_small_matmuls_stay_right_and_elementwise_is_untouched():
  a, b = Tensor.rand(16, 5), Tensor.rand(5, 5)
  # a 5-wide matmul output row qualifies too (a is broadcast along it, b moves by 1): the result must stay right
  np.testing.assert_allclose((a @ b).numpy(), a.numpy() @ b.numpy(), rtol=1e-5, atol=1e-5)
  c, d = Tensor.rand(16, 6), Tensor.rand(6, 6)
  np.testing.assert_allclose((c @ d.T).numpy(), c.numpy() @ d.numpy().T, rtol=1e-5, atol=1e-5)
  e = Tensor.rand(6, 7)
  k = Kernel((e * 2 + 1).schedule()[-1].ast, Device["CPU"].renderer)
  assert _short_broadcast_row(k) is None  # elementwise: no reduce, the heuristic's other branch
