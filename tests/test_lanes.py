"""Lane groups written as vectors (renderer/lanes.py, ClangRenderer.lane_vectors, on for gcc): every lane computes what
its scalar computed, in the same order, so results are bit-identical with the scalar C and close to numpy/torch; only
groups that really are lanes become vectors (gated, strided or reordered loads stay scalar)."""
import re, shutil
import numpy as np
import pytest
import torch
from lazynb import Tensor, Device
from lazynb.engine import realize
from lazynb.runtime.ops_cpu import CPUDevice

def open_cpu(monkeypatch, cc: str, lanes: bool | None, march: str = "native") -> str:
  """A new CPU device for `cc` (lane vectors forced on/off, or as the device chooses with None), its own kernel cache."""
  assert shutil.which(cc), f"{cc} is not installed (apt-get install -y {cc})"
  monkeypatch.setenv("CC", cc)
  monkeypatch.setenv("LAZYNB_MARCH", march)
  dev = CPUDevice("CPU")
  if lanes is not None: dev.renderer.lane_vectors = lanes
  monkeypatch.setitem(Device._opened, "CPU", dev)
  monkeypatch.setattr(realize, "method_cache", {})
  return "CPU"

def sources() -> list[str]: return [r.p.src for r in realize.method_cache.values()]

rng = np.random.default_rng(7)
X = rng.standard_normal((8, 4, 24, 24)).astype(np.float32)
W = rng.standard_normal((8, 4, 5, 5)).astype(np.float32)
A, B = rng.standard_normal((33, 40)).astype(np.float32), rng.standard_normal((40, 64)).astype(np.float32)
C = rng.standard_normal((20, 30)).astype(np.float32)

def conv_and_grads(dev: str) -> list[np.ndarray]:
  x, w = Tensor(X, device=dev, requires_grad=True), Tensor(W, device=dev, requires_grad=True)
  out = x.conv2d(w).relu()
  (out * out).sum().backward()
  return [out.numpy(), x.grad.numpy(), w.grad.numpy()]

def matmuls(dev: str) -> list[np.ndarray]:
  a, b = Tensor(A, device=dev), Tensor(B, device=dev)
  c = Tensor(C, device=dev)
  return [(a @ b).numpy(), (a @ b + 1).sum(axis=0).numpy(), (c @ c.T[:, :20].pad(((0, 0), (0, 12)))).numpy()]

@pytest.mark.parametrize("march", ["native", "x86-64"])
def test_vectors_compute_what_the_scalars_did(monkeypatch, march):
  open_cpu(monkeypatch, "gcc", lanes=False, march=march)
  scalar = conv_and_grads("CPU") + matmuls("CPU")
  assert not any("lz_v" in s for s in sources())
  open_cpu(monkeypatch, "gcc", lanes=None, march=march)  # gcc: the device turns them on
  vector = conv_and_grads("CPU") + matmuls("CPU")
  width = Device["CPU"].renderer.simd_floats
  vec_srcs = [s for s in sources() if f"lz_v{width} accv0 = {{0}};" in s]
  assert len(vec_srcs) >= 2, "no kernel was written with vectors"  # (a matmul, a conv gradient)
  for s, v in zip(scalar, vector): np.testing.assert_array_equal(s, v)
  # and both are right
  xt, wt = torch.tensor(X, requires_grad=True), torch.tensor(W, requires_grad=True)
  ot = torch.nn.functional.conv2d(xt, wt).relu()
  (ot * ot).sum().backward()
  for got, want in zip(vector[:3], [ot.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()]):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
  np.testing.assert_allclose(vector[3], A @ B, rtol=1e-5, atol=1e-4)
  np.testing.assert_allclose(vector[4], (A @ B + 1).sum(0), rtol=1e-5, atol=1e-3)
  np.testing.assert_allclose(vector[5], C @ np.pad(C.T[:, :20], ((0, 0), (0, 12))), rtol=1e-5, atol=1e-4)

def test_clang_keeps_scalars(monkeypatch):
  open_cpu(monkeypatch, "clang", lanes=None)
  matmuls("CPU")
  assert sources() and not any("lz_v" in s for s in sources())

def test_the_weight_gradient_of_the_course_conv_loads_shifted_windows(monkeypatch):
  """The kernel gcc was slow on: acc[16j+l] += x[j+l] * g[l], the windows x[j..j+15] as vector loads."""
  open_cpu(monkeypatch, "gcc", lanes=None)
  x = rng.standard_normal((16, 8, 24, 24)).astype(np.float32)
  g = rng.standard_normal((16, 8, 20, 20)).astype(np.float32)
  w = Tensor.zeros(8, 8, 5, 5, requires_grad=True)
  (Tensor(x).conv2d(w) * Tensor(g)).sum().backward()  # the CPU's rule lays this weight gradient along rows
  dw = w.grad.numpy()
  want = torch.nn.grad.conv2d_weight(torch.tensor(x), (8, 8, 5, 5), torch.tensor(g)).numpy()
  np.testing.assert_allclose(dw, want, rtol=1e-4, atol=1e-3)
  loads = [m for s in sources() for m in re.findall(r"\(\*\(lz_v\d+\*\)\(data\d\+\(?alu\d+(?:\+(\d+))?", s)]
  assert {"", "1", "2", "3", "4"} <= set(loads), loads  # windows shifted by 0..4

def test_not_lanes_stay_scalar(monkeypatch):
  """Padding (a gated load), a stride-2 read and a max reduce are not lane groups; their kernels have no vectors."""
  open_cpu(monkeypatch, "gcc", lanes=None)
  a = rng.standard_normal((16, 64)).astype(np.float32)
  t = Tensor(a)
  cases = [(t.pad(((0, 0), (3, 5))).reshape(16, 8, 9).sum(axis=2), np.pad(a, ((0, 0), (3, 5))).reshape(16, 8, 9).sum(2)),
           (t.reshape(16, 32, 2)[:, :, 0].reshape(16, 4, 8).sum(axis=1), a.reshape(16, 32, 2)[:, :, 0].reshape(16, 4, 8).sum(1)),
           (t.reshape(16, 4, 16).max(axis=1), a.reshape(16, 4, 16).max(1))]
  for got, want in cases: np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
  for s in sources(): assert "lz_v" not in s, s

def test_a_batch_of_vector_kernels_compiles_as_one_unit(monkeypatch):
  """Two kernels with the same vector typedef in one translation unit (compile_batch): C11 allows the repeat."""
  open_cpu(monkeypatch, "gcc", lanes=None)
  a, b = Tensor(A), Tensor(B)
  m1, m2 = a @ b, (a * 2) @ (b + 1)
  Tensor.realize(m1, m2)
  np.testing.assert_allclose(m1.numpy(), A @ B, rtol=1e-5, atol=1e-4)
  np.testing.assert_allclose(m2.numpy(), (A * 2) @ (B + 1), rtol=1e-5, atol=1e-3)
  assert sum("lz_v" in s for s in sources()) >= 2
