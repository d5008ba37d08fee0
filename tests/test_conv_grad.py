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

# ---------------------------------------------------------------- conv2d's own gradient rule (issue 16 goal 2)
# conv2d's input gradient is a transposed convolution of the output gradient and its weight gradient a sum of windows
# times the output gradient (lazynb.gradient.custom_gradient), not the gradient of the window views.

def _torch_conv(nd):
  return {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d, 3: torch.nn.functional.conv3d}[nd]

ND_CASES = [  # (batch, cin, cout, spatial, k, stride, pads (before, after) per dim, dilation, groups)
  (2, 3, 4, (17,), 4, 3, [(1, 2)], 1, 1),
  (3, 4, 6, (23,), 3, 2, [(0, 0)], 2, 2),
  (2, 3, 2, (7, 9, 8), 3, 1, [(1, 1), (0, 0), (2, 1)], 1, 1),
  (1, 4, 4, (9, 8, 7), (2, 3, 2), (2, 1, 3), [(0, 1), (1, 0), (0, 0)], (1, 2, 1), 2),
  (2, 3, 5, (13, 11), 3, 3, [(2, 0), (1, 3)], 1, 1),
  (2, 4, 6, (15, 14), (3, 2), 2, [(1, 1), (0, 1)], 2, 2),
  (1, 6, 3, (10, 9), 2, (3, 2), [(0, 0), (0, 0)], (2, 3), 3),
  (2, 2, 2, (5, 6), 5, 1, [(4, 4), (0, 0)], 1, 1),  # padding as large as the kernel: the gradient's pads go negative
]

@pytest.mark.parametrize("case", ND_CASES, ids=lambda c: "_".join(str(v).replace(" ", "") for v in c))
def test_conv_nd_odd_strides_asymmetric_pads_match_torch(case):
  """1-D, 2-D and 3-D convolutions with odd sizes, strides 2-3, dilation 2-3, groups 2-3 and asymmetric padding (torch
  pads first, lazynb takes the pairs): values and input/weight gradients."""
  b, cin, cout, sp, k, stride, pads, dil, groups = case
  nd = len(sp)
  ks = (k,) * nd if isinstance(k, int) else k
  rng = np.random.default_rng(len(sp) * 1000 + cin * 10 + cout)
  xs = rng.standard_normal((b, cin, *sp)).astype(np.float32)
  ws = rng.standard_normal((cout, cin // groups, *ks)).astype(np.float32)
  tx, tw = torch.tensor(xs, requires_grad=True), torch.tensor(ws, requires_grad=True)
  flat = tuple(p for pair in reversed(pads) for p in pair)  # torch order: last dim first
  to = _torch_conv(nd)(torch.nn.functional.pad(tx, flat), tw, stride=stride, dilation=dil, groups=groups)
  lx, lw = Tensor(xs, requires_grad=True), Tensor(ws, requires_grad=True)
  lo = lx.conv2d(lw, groups=groups, stride=stride, dilation=dil, padding=flat)
  up = rng.standard_normal(tuple(to.shape)).astype(np.float32)
  (to * torch.tensor(up)).sum().backward()
  (lo * Tensor(up)).sum().backward()
  np.testing.assert_allclose(lo.numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(lw.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=2e-4)

def _gradient_steps(fn):
  from lazynb import trace
  with trace.Recorder() as rec: fn()
  return [s for e in rec.of("rewrite") if e.data["name"] == "gradient" for s in e.data["steps"]]

def test_the_gradient_pass_reports_the_conv_rule_and_skips_the_input_gradient_when_not_needed():
  """The trace's gradient pass shows one step for the whole conv (its rule), not one per window movement op; with an
  input that needs no gradient (a first layer), the rule builds the weight gradient only."""
  x, w = Tensor.rand(2, 3, 9, 9), Tensor.rand(4, 3, 3, 3, requires_grad=True)
  steps = _gradient_steps(lambda: x.conv2d(w).relu().sum().backward())
  conv = [s for s in steps if repr(s[2]) == "custom gradient: conv2d"]
  assert len(conv) == 1 and len(conv[0][1].src) == 1, steps  # one gradient built: the weight's
  # the windows' movement ops were not differentiated: the steps are the sum's, the relu's and the conv rule's
  assert [s[0].op.name for s in steps if repr(s[2]) != "custom gradient: conv2d"] == ["RESHAPE", "REDUCE_AXIS", "WHERE"], steps
  x.requires_grad = True
  steps = _gradient_steps(lambda: x.conv2d(w).relu().sum().backward())
  assert [len(s[1].src) for s in steps if repr(s[2]) == "custom gradient: conv2d"] == [2]

def test_a_target_inside_the_conv_falls_back_to_the_plain_graph():
  """Asking for the gradient of a node inside the conv (here the padded input, which the rule would skip) uses the
  movement ops' own gradients; the answer still matches torch."""
  xs = np.random.default_rng(3).standard_normal((2, 3, 7, 7)).astype(np.float32)
  ws = np.random.default_rng(4).standard_normal((4, 3, 3, 3)).astype(np.float32)
  x = Tensor(xs)
  w = Tensor(ws)
  xp = x.pad(((0, 0), (0, 0), (1, 1), (1, 1))).contiguous()
  xp.requires_grad = True
  y = xp.conv2d(w)
  (gxp,) = y.sum().gradient(xp)
  txp = torch.nn.functional.pad(torch.tensor(xs), (1, 1, 1, 1)).requires_grad_()
  torch.nn.functional.conv2d(txp, torch.tensor(ws)).sum().backward()
  np.testing.assert_allclose(gxp.numpy(), txp.grad.numpy(), rtol=1e-4, atol=1e-4)

def test_second_order_gradients_through_the_rule_match_torch():
  """The rule's gradients are convolutions built by conv2d, which carry the rule again: a gradient of a gradient
  (here d/dw of |d(loss)/dx|^2, as in a gradient penalty) matches torch's create_graph=True."""
  rng = np.random.default_rng(5)
  xs, ws, gs = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 9, 8), (4, 3, 3, 3), (2, 4, 5, 3)))
  tx, tw = torch.tensor(xs, requires_grad=True), torch.tensor(ws, requires_grad=True)
  ty = torch.nn.functional.conv2d(tx, tw, stride=2, padding=(1, 0))
  (tgx,) = torch.autograd.grad((ty * torch.tensor(gs)).sum(), tx, create_graph=True)
  (tgw,) = torch.autograd.grad((tgx * tgx).sum(), tw)
  lx, lw = Tensor(xs, requires_grad=True), Tensor(ws, requires_grad=True)
  (lgx,) = (lx.conv2d(lw, stride=2, padding=(1, 0)) * Tensor(gs)).sum().gradient(lx)
  (lgw,) = (lgx * lgx).sum().gradient(lw)
  np.testing.assert_allclose(lgx.numpy(), tgx.detach().numpy(), rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(lgw.numpy(), tgw.numpy(), rtol=1e-3, atol=1e-3)

def test_conv_gradients_under_tinyjit_follow_new_inputs():
  """A TinyJit'd conv forward+backward replays with new inputs and new weights: every call matches torch."""
  from lazynb import TinyJit
  w = Tensor(np.zeros((4, 2, 3, 3), np.float32), requires_grad=True)
  @TinyJit
  def step(x, g):
    w.grad = None
    (x.conv2d(w, stride=2, padding=1) * g).sum().backward()
    return w.grad.realize()
  rng = np.random.default_rng(6)
  for _ in range(4):
    xs, ws, gs = (rng.standard_normal(s).astype(np.float32) for s in ((2, 2, 9, 9), (4, 2, 3, 3), (2, 4, 5, 5)))
    w.assign(Tensor(ws)).realize()
    tw = torch.tensor(ws, requires_grad=True)
    (torch.nn.functional.conv2d(torch.tensor(xs), tw, stride=2, padding=1) * torch.tensor(gs)).sum().backward()
    np.testing.assert_allclose(step(Tensor(xs), Tensor(gs)).numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-4)

def _backward_kernels(x, w):
  """Run the conv's forward and both gradients; the exec events of the kernels."""
  from lazynb import trace
  y = x.conv2d(w)
  (y * Tensor.rand(*y.shape)).sum().backward()
  with trace.Recorder(rewrites=False) as rec: Tensor.realize_all(y, x.grad, w.grad)
  return [e.data for e in rec.of("exec") if e.data["kind"] == "kernel"]

@pytest.mark.parametrize("shape", [((8, 32, 24, 24), (32, 32, 5, 5)), ((8, 32, 10, 10), (64, 32, 3, 3))], ids=["conv2", "conv3"])
def test_conv_backward_makes_no_window_buffer_and_no_div_mod(shape):
  """The course CNN's conv2 and conv3 (stride 1): no buffer much larger than the input or output (the window gradient of
  conv2 alone was (bs, cin, 20, 20, 5, 5): 25x the output), and no division or modulo in any kernel's C source (the
  fold of windows back onto the input divided by 25, 125 and 3125)."""
  x, w = Tensor.rand(*shape[0], requires_grad=True).realize(), Tensor.rand(*shape[1], requires_grad=True).realize()
  execs = _backward_kernels(x, w)
  biggest = max(b.nbytes for d in execs for b in d["bufs"])
  # at most 1.5x the input or output (a stride-1 conv's output is computed along whole rows: (W - ox)/W more), or the
  # weight gradient's partial sums: one vector of lanes per weight (16 with AVX-512, else 8; a batch of 8 is one chunk)
  assert biggest <= max(1.5 * max(x.numel(), x.shape[0] * w.shape[0] * x.shape[2] * x.shape[3]), 16 * w.numel()) * 4, biggest
  assert len(execs) >= 3
  for d in execs:
    body = d["program"].src.split("for (", 1)[-1]  # the loops (the thread id is reduced modulo the threads before them)
    assert "/" not in body and "%" not in body, (d["name"], body)

def test_the_rule_survives_a_realized_input():
  """backward() puts the expression back in place of a realized input (a TinyJit argument is realized before the
  step), which rebuilds every node above it: the conv's rule moves to the rebuilt node (without that, a jitted CNN
  step differentiated its window views again: 17 s per step instead of about 2)."""
  x = Tensor(np.random.default_rng(7).standard_normal((2, 3, 9, 9)).astype(np.float32)).realize()
  w = Tensor.rand(4, 3, 3, 3, requires_grad=True)
  steps = _gradient_steps(lambda: x.conv2d(w).relu().sum().backward())
  assert [repr(s[2]) for s in steps].count("custom gradient: conv2d") == 1, steps

ROWS_CASES = [  # (batch, cin, cout, H, W, k, padding (torch order), groups): big enough for the rows layout
  (4, 8, 16, 40, 40, 5, 0, 1),
  (4, 8, 12, 33, 37, 3, (1, 2, 0, 1), 2),
  (3, 16, 8, 30, 26, (5, 3), 2, 1),
  (3, 6, 32, 29, 31, (2, 4), (0, 3, 1, 0), 2),
  (40, 4, 8, 20, 20, 3, 0, 1),  # batches the weight gradient sums in two chunks (_batch_chunk: 20 images each)
  (48, 4, 8, 18, 18, 3, 1, 2),
]

@pytest.mark.parametrize("case", ROWS_CASES, ids=lambda c: "x".join(str(v).replace(" ", "") for v in c))
def test_rows_layout_values_and_grads_match_torch(case):
  """Stride-1 convs big enough for the rows layout (windows along whole input rows, weight gradient in 8 partial sums):
  odd sizes, asymmetric padding, groups, bias, a fused ReLU and BatchNorm-like upstream gradient."""
  from lazynb.renderer.layout import use_rows, batch_chunk
  b, cin, cout, H, W, k, pad, groups = case
  ks = (k, k) if isinstance(k, int) else k
  rng = np.random.default_rng(H * W)
  xs, ws, bs_ = rng.standard_normal((b, cin, H, W)).astype(np.float32), rng.standard_normal((cout, cin // groups, *ks)).astype(np.float32), \
    rng.standard_normal(cout).astype(np.float32)
  flat = (pad,) * 4 if isinstance(pad, int) else pad
  assert use_rows((b, cin, H + flat[2] + flat[3], W + flat[0] + flat[1]), ks, cout)
  assert batch_chunk(b) == (b if b < 40 else b // 2)
  tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (xs, ws, bs_))
  to = torch.nn.functional.conv2d(torch.nn.functional.pad(tx, flat), tw, tb, groups=groups).relu()
  lx, lw, lb = (Tensor(a, requires_grad=True) for a in (xs, ws, bs_))
  lo = lx.conv2d(lw, lb, groups=groups, padding=flat).relu()
  up = rng.standard_normal(tuple(to.shape)).astype(np.float32)
  ((to - to.mean()) * torch.tensor(up)).sum().backward()
  ((lo - lo.mean()) * Tensor(up)).sum().backward()
  np.testing.assert_allclose(lo.numpy(), to.detach().numpy(), rtol=1e-4, atol=1e-3)
  np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-3)
  np.testing.assert_allclose(lw.grad.numpy(), tw.grad.numpy(), rtol=1e-3, atol=5e-3)
  np.testing.assert_allclose(lb.grad.numpy(), tb.grad.numpy(), rtol=1e-3, atol=5e-3)

def test_rows_layout_is_the_cpu_devices_rule_in_the_schedule_stage():
  """conv2d and its gradient write the same plain windows for every device; the CPU's own rule of the schedule stage
  lays a big stride-1 conv and its weight gradient along rows (an input copy: one more kernel), says so in the trace,
  and a device without the rule (PYTHON) keeps the plain windows. Values: the rows layout against torch."""
  from lazynb.engine.schedule import create_schedule
  from lazynb.trace import capture
  from lazynb.helpers import PLAIN as plain
  for dev, want in (("CPU", 1 if plain else 2), ("PYTHON", 1)):
    y = Tensor.empty(8, 1, 28, 28, device=dev).conv2d(Tensor.empty(32, 1, 5, 5, device=dev))
    assert not any(u.op.name == "CONTIGUOUS" for u in y.uop.toposort()), "the frontend chose a layout: it is the device's choice"
    assert len([s for s in create_schedule([y.uop])[0] if s.kind == "kernel"]) == want, dev
  rng = np.random.default_rng(5)
  xs, ws = rng.standard_normal((8, 3, 28, 28)).astype(np.float32), rng.standard_normal((16, 3, 5, 5)).astype(np.float32)
  x, w = Tensor(xs, requires_grad=True), Tensor(ws, requires_grad=True)
  with capture() as tr:
    y = x.conv2d(w)
    (y * y).sum().backward()
    got = [t.numpy() for t in (y, x.grad, w.grad)]
  # the default device's rule (CPU, or LLVM in CI's LLVM pass: both are CPUs); none on the plain path
  from lazynb import Device
  from lazynb.helpers import PLAIN
  steps = [s["pattern"] for r in tr.to_json()["rewrites"] if r["name"] == f"{Device.DEFAULT}: convolutions along rows" for s in r["steps"]]
  assert (len(steps) >= 2) if not PLAIN else not steps
  assert all(r["stage"] == "tensor graph" for r in tr.to_json()["rewrites"] if r["name"].endswith("convolutions along rows"))
  tx, tw = torch.tensor(xs, requires_grad=True), torch.tensor(ws, requires_grad=True)
  ty = torch.nn.functional.conv2d(tx, tw)
  (ty * ty).sum().backward()
  for g, t in zip(got, (ty, tx.grad, tw.grad)): np.testing.assert_allclose(g, t.detach().numpy(), rtol=2e-4, atol=2e-3)
