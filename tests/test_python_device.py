"""The PYTHON device: kernels interpreted UOp by UOp, no compiler. Small shapes against numpy."""
import math
import numpy as np
import pytest
from lazynb import Tensor, Device, GlobalCounters, Context, dtypes
from lazynb.trace import Recorder
from lazynb.engine import realize as realize_mod

PY = "PYTHON"

def rnd(*shape, seed=0):
  return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

def T(a): return Tensor(a, device=PY)

@pytest.fixture
def restore_default():
  old = Device.DEFAULT
  yield
  Device.DEFAULT = old

# ---------------------------------------------------------------- placement

def test_tensor_lives_on_python_device():
  t = T(rnd(2, 3))
  assert t.device == PY
  assert (t + 1).device == PY
  # data from Python already sits on PYTHON: no copy needed
  assert [si.kind for si in (t + 1).schedule()] == ["kernel"]

def test_default_device_switch(restore_default):
  Device.DEFAULT = PY
  t = Tensor([1.0, 2.0, 3.0])
  assert t.device == PY
  assert (t * 2).tolist() == [2.0, 4.0, 6.0]

def test_kernels_count_and_program_is_uop_listing():
  a = T(rnd(3, 4))
  realize_mod.method_cache.clear()
  k0 = GlobalCounters.kernel_count
  with Recorder(rewrites=False) as rec: (a * 3 + 1).realize()
  assert GlobalCounters.kernel_count - k0 == 1
  src = rec.of("program")[0].data["program"].src
  assert src.startswith("#") and "'STORE'" in src and "'LOAD'" in src

def test_noopt_has_loop():
  realize_mod.method_cache.clear()
  with Context(NOOPT=1), Recorder(rewrites=False) as rec: (T(rnd(2, 3)) + 1).realize()
  src = rec.of("program")[0].data["program"].src
  assert "'RANGE'" in src and "'ENDRANGE'" in src

# ---------------------------------------------------------------- elementwise

@pytest.mark.parametrize("op,ref", [
  (lambda x, y: x + y, lambda x, y: x + y), (lambda x, y: x * y, lambda x, y: x * y), (lambda x, y: x - y, lambda x, y: x - y),
  (lambda x, y: x / y, lambda x, y: x / y), (lambda x, y: x.maximum(y), np.maximum), (lambda x, y: (x < y).where(x, y), np.minimum),
], ids=["add", "mul", "sub", "div", "maximum", "where"])
def test_binary(op, ref):
  a, b = rnd(3, 4, seed=1), rnd(3, 4, seed=2)
  np.testing.assert_allclose(op(T(a), T(b)).numpy(), ref(a, b), rtol=1e-5, atol=1e-6)

@pytest.mark.parametrize("op,ref", [
  (lambda x: x.relu(), lambda x: np.maximum(x, 0)), (lambda x: x.exp(), np.exp), (lambda x: x.abs().log(), lambda x: np.log(np.abs(x))),
  (lambda x: x.abs().sqrt(), lambda x: np.sqrt(np.abs(x))), (lambda x: x.sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
  (lambda x: x.sin(), np.sin), (lambda x: -x, lambda x: -x), (lambda x: x * x + x.sin(), lambda x: x * x + np.sin(x)),
], ids=["relu", "exp", "log", "sqrt", "sigmoid", "sin", "neg", "custom"])
def test_unary(op, ref):
  a = rnd(2, 5, seed=3)
  np.testing.assert_allclose(op(T(a)).numpy(), ref(a), rtol=1e-5, atol=1e-6)

def test_broadcast():
  a, b = rnd(3, 1, seed=4), rnd(1, 4, seed=5)
  np.testing.assert_allclose((T(a) * T(b) + 2).numpy(), a * b + 2, rtol=1e-6)

def test_int_arithmetic_matches_numpy():
  a = np.array([[-7, -3, 0, 5], [9, -1, 4, 8]], dtype=np.int32)
  t = T(a)
  assert (t + 3 + 4).tolist() == (a + 7).tolist()
  assert (t // 3).tolist() == (a // 3).tolist()   # floor division, like numpy
  assert (t % 3).tolist() == (a % 3).tolist()
  assert (t * t).dtype is dtypes.int32

def test_seed_t_plus_3_plus_4():
  t = Tensor([1, 2, 3, 4], device=PY)
  assert (t + 3 + 4).tolist() == [8, 9, 10, 11]
  assert (t * 2).tolist() == [2, 4, 6, 8]

# ---------------------------------------------------------------- reduce and matmul

@pytest.mark.parametrize("axis", [None, 0, 1])
def test_sum(axis):
  a = rnd(3, 5, seed=6)
  np.testing.assert_allclose(T(a).sum(axis=axis).numpy(), a.sum(axis=axis), rtol=1e-5, atol=1e-6)

def test_mean_keepdim():
  a = rnd(4, 3, seed=7)
  np.testing.assert_allclose(T(a).mean(axis=0, keepdim=True).numpy(), a.mean(0, keepdims=True), rtol=1e-5, atol=1e-6)

@pytest.mark.parametrize("axis", [None, 1])
def test_max(axis):
  a = rnd(3, 5, seed=8)
  np.testing.assert_allclose(T(a).max(axis=axis).numpy(), a.max(axis=axis))

def test_softmax():
  a = rnd(2, 4, seed=9)
  e = np.exp(a - a.max(1, keepdims=True))
  np.testing.assert_allclose(T(a).softmax().numpy(), e / e.sum(1, keepdims=True), rtol=1e-5)

def test_inf_constant():
  """Regression: inf/nan constants (the float max identity) used to break the PYTHON program parser."""
  assert (T(np.array([1.0, -2.0], dtype=np.float32)) * math.inf).tolist() == [math.inf, -math.inf]

def test_max_of_ints():
  a = np.array([[3, -1, 7], [2, 9, -5]], dtype=np.int32)
  assert T(a).max(axis=1).tolist() == [7, 9]

@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((1, 3), (3, 1)), ((4, 4), (4, 4)), ((2, 3, 4), (4, 2))])
def test_matmul(shapes):
  sa, sb = shapes
  a, b = rnd(*sa, seed=10), rnd(*sb, seed=11)
  np.testing.assert_allclose((T(a) @ T(b)).numpy(), a @ b, rtol=1e-5, atol=1e-5)

def test_matmul_relu_sum_two_kernels():
  a, b = rnd(4, 4, seed=12), rnd(4, 4, seed=13)
  z = (T(a) @ T(b)).relu().sum(axis=0)
  assert len([si for si in z.schedule() if si.kind == "kernel"]) == 2
  np.testing.assert_allclose(z.numpy(), np.maximum(a @ b, 0).sum(0), rtol=1e-5, atol=1e-5)

def test_movement_then_reduce():
  a = rnd(2, 3, 4, seed=14)
  out = T(a).permute(2, 0, 1)[1:3].flip(2).sum(axis=1)
  np.testing.assert_allclose(out.numpy(), a.transpose(2, 0, 1)[1:3, :, ::-1].sum(1), rtol=1e-5, atol=1e-6)

def test_conv2d():
  x, w = rnd(1, 2, 5, 5, seed=15), rnd(3, 2, 3, 3, seed=16)
  got = T(x).conv2d(T(w)).numpy()
  ref = np.zeros((1, 3, 3, 3), np.float32)
  for o in range(3):
    for i in range(3):
      for j in range(3): ref[0, o, i, j] = (x[0, :, i:i + 3, j:j + 3] * w[o]).sum()
  np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)

# ---------------------------------------------------------------- moving data between devices

def test_copy_python_to_cpu_and_back():
  a = rnd(2, 3, seed=17)
  t = T(a)
  c = t.to("CPU")
  assert c.device == "CPU"
  assert [si.kind for si in (c + 1).schedule()] == ["copy", "kernel"]
  back = (c + 1).to(PY) * 2
  assert back.device == PY
  np.testing.assert_allclose(back.numpy(), (a + 1) * 2, rtol=1e-6)

def test_python_and_cpu_agree():
  a, b = rnd(3, 4, seed=18), rnd(4, 2, seed=19)
  def f(x, y): return ((x @ y) * 2 - 1).relu().sum(axis=1)
  np.testing.assert_allclose(f(T(a), T(b)).numpy(), f(Tensor(a, device="CPU"), Tensor(b, device="CPU")).numpy(), rtol=1e-5, atol=1e-6)

def test_mixing_devices_is_an_error():
  with pytest.raises(ValueError):
    T(rnd(2)) + Tensor(rnd(2), device="CPU")
