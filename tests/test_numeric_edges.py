"""Numeric edge cases give the answer an outside reference gives (numpy, or torch where numpy has none), on every
device, at every opt level and after constant folding - never a plausible wrong number.

The rules chosen where references differ are documented in docs/architecture.md ("Numerics"): NaN propagates
through max/min/maximum/minimum/relu/clip and argmax/argmin point at the first NaN (numpy); a float->int cast of NaN,
inf or a value past the range gives what numpy and torch give on x86 (C leaves it undefined; renderer/prerender.py).
"""
import math
import numpy as np
import pytest
import torch
from lazynb import Tensor
from lazynb.dtype import dtypes
from lazynb.helpers import Context
from lazynb.engine.realize import method_cache
from lazynb.codegen import get_program
from lazynb.device import Device
from lazynb.uop.ops import Ops

nan, inf = math.nan, math.inf
DEVICES = ["CPU", "PYTHON"]
OPT_LEVELS = [{"NOOPT": 1}, {}, {"BEAM": 1}]

# ---------------------------------------------------------------- loops and sums past 2**31

def _program(t: Tensor):
  return get_program(t.schedule()[-1].ast, Device[t.device].renderer)

def test_loop_bound_of_2_31_gets_a_64_bit_loop_variable():
  """A single loop of exactly 2**31 steps: an `int` loop variable can never reach the bound (with clang the loop ran
  0 steps, with gcc -fwrapv it never ended), so the source is checked before the kernel runs."""
  n, k = 2**31, 2**16
  a = Tensor.arange(k, dtype=dtypes.int64).realize()
  with Context(NOOPT=1):
    s = a.reshape(1, k).expand(n // k, k).reshape(n).sum()
    assert "for (long long ridx0 = 0; ridx0 < 2147483648;" in _program(s).src
    assert s.item() == (n // k) * (k * (k - 1) // 2)

@pytest.mark.parametrize("device", DEVICES)
def test_sum_of_ones_2_33(device):
  """The issue's example: 2**33 ones (never allocated: an expanded constant) sum to 2**33 exactly, every run. A float32
  loop would stop counting at 2**24 (and interpreting 2**31 steps on PYTHON would take hours): the reduce of a
  constant folds to constant * count, before any kernel is made (fold_consts) and inside a kernel (symbolic), so no
  loop is left."""
  for opts in ({}, {"NOOPT": 1}):
    with Context(**opts):
      s = Tensor.ones(2**33, device=device).sum()
      assert s.schedule() == []  # folded in the tensor graph: no kernel
      assert s.item() == 2**33
      s = Tensor.ones(2**33, device=device).sum() + Tensor.zeros(1, device=device).contiguous()  # a kernel, with the sum in it
      assert not any(u.op is Ops.RANGE for u in _program(s).uops)
      assert s.item() == 2**33

@pytest.mark.parametrize("dtype,value", [(dtypes.uint8, 255), (dtypes.bool, True)])
def test_small_int_sum_of_a_real_buffer_past_2_31(dtype, value):
  """A reduce over a broadcast buffer whose total passes 2**32 accumulates in 64 bits (32 would wrap around)."""
  k, rows = 2**16, 2**15 + 1
  x = Tensor.full((k,), value, dtype=dtype).contiguous().realize()
  s = x.reshape(1, k).expand(rows, k).sum()
  wide, narrow = (dtypes.uint64, dtypes.uint32) if dtype is dtypes.uint8 else (dtypes.int64, dtypes.int32)  # tinygrad: uint8 sums in uint32
  assert s.dtype is wide and s.item() == int(value) * rows * k
  assert Tensor.ones(2**31 + 5, dtype=dtype).sum().item() == 2**31 + 5
  # a sum that cannot overflow int32 keeps tinygrad's result dtype
  assert x.sum().dtype is narrow and x.sum().item() == int(value) * k

def test_mean_of_ints_counts_past_2_24():
  """A float32 running sum stops growing at 2**24 (16777216 + 1 == 16777216): an int mean sums exactly first."""
  n = 2**25
  x = Tensor.full((n,), 3, dtype=dtypes.uint8).contiguous().realize()
  assert x.mean().item() == 3.0
  assert Tensor.full((n,), 7, dtype=dtypes.int32).contiguous().mean().item() == 7.0

# ---------------------------------------------------------------- NaN: the same everywhere

NAN_ROWS = np.array([[1.0, nan, 3.0, nan], [nan, -1.0, 2.0, 0.0], [1.0, 2.0, -inf, nan], [5.0, -2.0, 5.0, 0.5]], dtype=np.float32)

def _nan_ops(x: Tensor) -> dict:
  return {"max": x.max(1), "min": x.min(1), "max_all": x.max(), "argmax": x.argmax(1), "argmin": x.argmin(1), "argmax_all": x.argmax(),
          "maximum": x.maximum(1.5), "rmaximum": Tensor(1.5, device=x.device).maximum(x), "minimum": x.minimum(1.5), "relu": x.relu(),
          "clip": x.clip(-0.5, 2.5), "clamp_max": x.clamp(max_=0.0)}

def _nan_want(a: np.ndarray) -> dict:
  return {"max": a.max(1), "min": a.min(1), "max_all": a.max(), "argmax": a.argmax(1), "argmin": a.argmin(1), "argmax_all": a.argmax(),
          "maximum": np.maximum(a, 1.5), "rmaximum": np.maximum(1.5, a), "minimum": np.minimum(a, 1.5), "relu": np.maximum(a, 0),
          "clip": np.clip(a, -0.5, 2.5), "clamp_max": np.minimum(a, 0.0)}

@pytest.mark.parametrize("opts", OPT_LEVELS, ids=["NOOPT", "default", "BEAM"])
@pytest.mark.parametrize("device", DEVICES)
def test_nan_semantics_follow_numpy(device, opts):
  want = _nan_want(NAN_ROWS)
  with Context(**opts):
    got = _nan_ops(Tensor(NAN_ROWS, device=device).realize())
    for name, t in got.items(): np.testing.assert_array_equal(t.numpy(), want[name], err_msg=f"{name} on {device} {opts}")

@pytest.mark.parametrize("device", DEVICES)
def test_nan_semantics_after_constant_folding(device):
  """Scalar constants fold at graph-building time (exec_alu), not in a kernel: the same rule must hold there."""
  for a, b in [(nan, 1.0), (1.0, nan), (nan, -inf), (2.0, 1.0)]:
    x, y = Tensor(a, device=device), Tensor(b, device=device)
    np.testing.assert_array_equal(x.maximum(y).numpy(), np.maximum(np.float32(a), np.float32(b)))
    np.testing.assert_array_equal(x.minimum(y).numpy(), np.minimum(np.float32(a), np.float32(b)))
  np.testing.assert_array_equal(Tensor(nan, device=device).relu().numpy(), np.float32(nan))
  np.testing.assert_array_equal(Tensor(nan, device=device).clip(0, 1).numpy(), np.float32(nan))
  np.testing.assert_array_equal(Tensor.full((3, 4), nan, device=device).max(1).numpy(), np.full(3, nan, np.float32))
  assert Tensor.full((5,), nan, device=device).argmax().item() == 0

def test_argmax_is_always_in_range():
  rng = np.random.default_rng(0)
  a = rng.standard_normal((6, 7)).astype(np.float32)
  a[rng.random((6, 7)) < 0.3] = nan
  for axis in (0, 1):
    for dev in DEVICES:
      np.testing.assert_array_equal(Tensor(a, device=dev).argmax(axis).numpy(), a.argmax(axis))
      np.testing.assert_array_equal(Tensor(a, device=dev).argmin(axis).numpy(), a.argmin(axis))

# ---------------------------------------------------------------- float -> int casts

CAST_VALUES = [inf, -inf, nan, 3e9, -3e9, 1e20, -1e20, 300.0, 255.5, -5.5, -0.5, 2.7, 0.0]

def _numpy_cast(vals, dt) -> np.ndarray:
  """numpy's cast: x86's (these machines are x86): NaN, inf and values past a 32- or 64-bit int's range -> its smallest
  value, 8 and 16 bits through int32 (its low bits wrap: -5.5 -> uint8 251)."""
  with np.errstate(invalid="ignore", over="ignore"): return np.asarray(vals).astype(dt.np)

@pytest.mark.parametrize("dt", [dtypes.uint8, dtypes.int8, dtypes.uint16, dtypes.int16], ids=str)
def test_small_int_casts_as_numpy_and_torch(dt):
  """Within int32's range the rule is what numpy, torch (and tinygrad) give on x86: a wrap of the int32 value."""
  import torch
  vals = np.float32([-300.5, -257.0, -1.5, -0.5, 0.5, 1.7, 255.9, 256.0, 300.2, 1000.0, -1e9, 1e9, 40000.5, -40000.5])
  want = torch.tensor(vals).to(getattr(torch, dt.np.__name__)).numpy()
  np.testing.assert_array_equal(vals.astype(dt.np), want)
  np.testing.assert_array_equal(Tensor(vals).realize().cast(dt).numpy(), want)
  np.testing.assert_array_equal([Tensor(float(v)).cast(dt).item() for v in vals], want)
  np.testing.assert_array_equal(Tensor(vals, dtype=dt).numpy(), want)

@pytest.mark.parametrize("dt", [dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint32, dtypes.uint64], ids=str)
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_float_to_int_cast_as_numpy_everywhere(device, dt):
  want = _numpy_cast(np.float32(CAST_VALUES), dt)
  np.testing.assert_array_equal(Tensor(CAST_VALUES, device=device).realize().cast(dt).numpy(), want)            # in a kernel
  np.testing.assert_array_equal([Tensor(v, device=device).cast(dt).item() for v in CAST_VALUES], want)           # folded
  np.testing.assert_array_equal(Tensor(CAST_VALUES, device=device, dtype=dtypes.float16).realize().cast(dt).numpy(),
                                _numpy_cast(np.float16(CAST_VALUES), dt))
  with Context(NOOPT=1): np.testing.assert_array_equal((Tensor(CAST_VALUES, device=device).realize() * 1).cast(dt).numpy(), want)

def test_max_pool_of_ints_pads_with_the_int_minimum():
  """Padding for max_pool is the dtype's lowest value: the int minimum on every device, and the result stays int."""
  a = np.array([[[[-5, -3], [-7, -9]]]], dtype=np.int32)
  for dev in DEVICES:
    out = Tensor(a, device=dev).max_pool2d(2, stride=1, padding=1)
    assert out.dtype == dtypes.int32
    np.testing.assert_array_equal(out.numpy()[0, 0, 0], [-5, -3, -3])

def test_max_pool_of_bools_pads_with_false():
  """bool max_pool with padding: -inf cast to bool was True, so every window at the border came out True."""
  a = np.arange(16).reshape(1, 1, 4, 4) < 3
  p = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
  want = np.array([[p[0, 0, i:i + 3, j:j + 3].max() for j in range(4)] for i in range(4)])
  for dev in DEVICES:
    out = Tensor(a, device=dev).max_pool2d(3, stride=1, padding=1)
    assert out.dtype == dtypes.bool
    np.testing.assert_array_equal(out.numpy()[0, 0], want)

PAD_VALUES = [("int32", -inf), ("int32", 1.5), ("int32", 2), ("int32", 0.0), ("int32", True), ("int8", 5), ("bool", 2), ("bool", 0.5),
              ("bool", False), ("float16", 1e6), ("float32", nan), ("float32", -0.0), ("uint8", 7)]

def test_pad_value_promotes_like_a_python_scalar():
  """pad(value=v) has the dtype `t + v` has (v is a weak Python scalar): an int tensor padded with -inf was INT_MIN, it is
  float with -inf (tinygrad 0.10.3, run here as the reference: dtypes and values)."""
  import json, os, subprocess, sys
  script = ("import json, math, numpy as np\nfrom tinygrad import Tensor, dtypes\nout = []\n"
            f"for dt, v in {PAD_VALUES!r}:\n"
            "  t = Tensor(np.array([1, 0, 3]).astype(dt)).pad(((1, 2),), value=v)\n"
            "  out.append([str(t.numpy().dtype), [repr(float(x)) for x in t.numpy().astype(np.float64)]])\n"
            "print(json.dumps(out))")
  env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "CPU": "1"}  # tinygrad's CPU device, not an OpenCL it finds
  p = subprocess.run([sys.executable, "-c", script.replace("-inf", "-math.inf").replace("nan", "math.nan")], capture_output=True, text=True,
                     env=env, cwd="/", timeout=300)
  if p.returncode != 0: pytest.skip(f"tinygrad 0.10.3 did not run: {p.stderr.strip().splitlines()[-1:]}")
  for (dt, v), (tdt, tvals) in zip(PAD_VALUES, json.loads(p.stdout.strip().splitlines()[-1])):
    for dev in DEVICES:
      got = Tensor(np.array([1, 0, 3]).astype(dt), device=dev).pad(((1, 2),), value=v)
      assert str(got.numpy().dtype) == tdt, f"{dt} padded with {v!r}: {got.dtype}, tinygrad {tdt}"
      np.testing.assert_array_equal(got.numpy().astype(np.float64), [float(x) for x in tvals], err_msg=f"{dt} padded with {v!r} on {dev}")
  # where lazynb differs on purpose: a bool tensor padded with True stays bool (tinygrad makes it int32), as `t + True` does
  for dev in DEVICES: np.testing.assert_array_equal(Tensor([False, True], device=dev).pad(((1, 0),), value=True).numpy(), [True, False, True])

# ---------------------------------------------------------------- logsumexp

@pytest.mark.parametrize("axis,keepdim", [(None, False), (1, False), (1, True), (0, True)])
def test_logsumexp_of_minus_inf(axis, keepdim):
  a = np.array([[-inf, -inf, -inf], [0.0, -inf, 1.0], [inf, 1.0, -inf]], dtype=np.float32)
  want = torch.logsumexp(torch.from_numpy(a), dim=tuple(range(2)) if axis is None else axis, keepdim=keepdim).numpy()
  for dev in DEVICES: np.testing.assert_allclose(Tensor(a, device=dev).logsumexp(axis, keepdim).numpy(), want, rtol=1e-6)
  assert Tensor([-inf, -inf]).logsumexp().item() == -inf

# ---------------------------------------------------------------- Python ints beyond int32

BIG = [2**31, -2**31 - 1, 2**40, -2**40]

@pytest.mark.parametrize("v", BIG)
def test_big_python_int_arithmetic_raises_instead_of_wrapping(v):
  t = Tensor([1, 2, 3])
  for f in (lambda: t + v, lambda: v - t, lambda: t * v, lambda: t // v, lambda: (t > 1).where(t, v), lambda: (t > 1).where(v, t),
            lambda: Tensor.full((2,), v, dtype=dtypes.int32), lambda: t.pad((1, 1), value=v),
            lambda: Tensor([1], dtype=dtypes.uint8) + 256, lambda: t.maximum(v)):
    with pytest.raises(OverflowError, match="does not fit"): f().realize()

@pytest.mark.parametrize("v", BIG)
def test_big_python_int_comparisons_are_exact(v):
  a = np.array([1, -2, 3], dtype=np.int32)
  t = Tensor(a)
  for got, want in [(t < v, a < v), (t > v, a > v), (t <= v, a <= v), (t >= v, a >= v), (t == v, a == v), (t != v, a != v),
                    (v < t, v < a)]:
    np.testing.assert_array_equal(got.numpy(), want)

INT_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]

@pytest.mark.parametrize("dt", INT_DTYPES)
def test_int_activations_and_clip_never_wrap(dt):
  """relu6, hardtanh and clip of ints give numpy's np.clip at the dtype's edges: relu6 is not relu(x) - relu(x - 6), which
  wraps (uint8 [0, 1, 7, 255] gave [6, 6, 6, 6]), and a Python int bound past the dtype's range on the side where it
  changes nothing is fine, as in numpy (uint8 hardtanh's -1); one that would change values and does not fit is an
  OverflowError (numpy's too)."""
  info = np.iinfo(dt)
  a = np.array(sorted({v for v in (info.min, info.min + 1, -7, -1, 0, 1, 5, 6, 7, 127, 255, info.max - 1, info.max)
                       if info.min <= v <= info.max}), dtype=dt)
  np.testing.assert_equal(Tensor(a).relu6().numpy(), np.clip(a, 0, 6))
  np.testing.assert_equal(Tensor(a).relu().numpy(), np.maximum(a, 0))
  np.testing.assert_equal(Tensor(a).hardtanh().numpy(), np.clip(a, -1, 1))
  for lo, hi in [(-1, 1), (0, 6), (-200, 300), (-2**70, 2**70), (None, 2**70), (-2**70, None)]:
    np.testing.assert_equal(Tensor(a).clip(lo, hi).numpy(), np.clip(a, lo, hi), err_msg=f"clip({lo}, {hi})")
  if dt in ("int8", "uint8", "int16", "int32", "int64"):  # the dtypes torch has
    np.testing.assert_equal(Tensor(a).relu6().numpy(), torch.nn.functional.relu6(torch.tensor(a)).numpy())
  with pytest.raises(OverflowError, match="does not fit"): Tensor(a).clip(int(info.max) + 1, None).realize()

def test_big_python_ints_promote_where_tinygrad_promotes():
  """Creation without a dtype and a bool tensor with an int pick a dtype that holds the value (numpy too)."""
  assert Tensor.full((2,), 2**40).numpy().tolist() == [2**40] * 2
  assert (Tensor([True, False]) + 2**40).numpy().tolist() == [2**40 + 1, 2**40]
  assert (Tensor([1, 2], dtype=dtypes.int64) + 2**40).numpy().tolist() == [2**40 + 1, 2**40 + 2]
  assert (~Tensor([1, 254], dtype=dtypes.uint8)).numpy().tolist() == [254, 1]

# ---------------------------------------------------------------- functions and gradients at extreme inputs

GRID = np.array([-np.inf, -1e4, -100, -30, -5, -3, -1, -1e-3, -1e-7, -1e-30, 0, 1e-30, 1e-7, 1e-3, 1, 3, 5, 6, 30, 100, 1e4, np.inf], dtype=np.float32)
F = torch.nn.functional
# name: (lazynb function, torch function, atol); values and gradients are compared with rtol=1e-4
FUNCS = {
  "sigmoid": (Tensor.sigmoid, torch.sigmoid, 1e-7), "tanh": (Tensor.tanh, torch.tanh, 1e-7),
  "gelu": (Tensor.gelu, lambda x: F.gelu(x, approximate="tanh"), 1e-6),
  "quick_gelu": (Tensor.quick_gelu, lambda x: x * torch.sigmoid(1.702 * x), 1e-6),
  "hardsigmoid": (lambda x: x.hardsigmoid(), F.hardsigmoid, 1e-7), "softplus": (Tensor.softplus, F.softplus, 1e-7),
  "softplus_beta2": (lambda x: x.softplus(2.0), lambda x: F.softplus(x, beta=2.0), 1e-7), "silu": (Tensor.silu, F.silu, 1e-7),
  "elu": (Tensor.elu, F.elu, 1e-7), "mish": (Tensor.mish, F.mish, 1e-6), "erf": (Tensor.erf, torch.erf, 2e-6),
  "exp": (Tensor.exp, torch.exp, 1e-7), "log": (Tensor.log, torch.log, 1e-6), "relu": (Tensor.relu, torch.relu, 0),
  "relu6": (Tensor.relu6, F.relu6, 0), "hardswish": (Tensor.hardswish, F.hardswish, 1e-6),
  "asin": (Tensor.asin, torch.asin, 1e-6), "acos": (Tensor.acos, torch.acos, 1e-6), "hardtanh": (lambda x: x.hardtanh(), F.hardtanh, 0),
  "hardtanh(0, 6)": (lambda x: x.hardtanh(0, 6), lambda x: F.hardtanh(x, 0, 6), 0),
  "clamp(-1, 1)": (lambda x: x.clip(-1, 1), lambda x: torch.clamp(x, -1, 1), 0), "clamp(min=0)": (lambda x: x.clamp(0), lambda x: torch.clamp(x, 0), 0), "leaky_relu": (Tensor.leaky_relu, F.leaky_relu, 0), "sqrt": (Tensor.sqrt, torch.sqrt, 1e-7),
  "abs": (Tensor.abs, torch.abs, 0), "square": (Tensor.square, torch.square, 0),
  "pow2.5": (lambda x: x ** 2.5, lambda x: x ** 2.5, 1e-6), "pow3": (lambda x: x ** 3, lambda x: x ** 3, 1e-6),
  "pow-1.5": (lambda x: x ** -1.5, lambda x: x ** -1.5, 1e-6), "2**x": (lambda x: 2 ** x, lambda x: 2 ** x, 1e-7),
  "softmax": (lambda x: x.softmax(), lambda x: torch.softmax(x, -1), 1e-7),
  "log_softmax": (lambda x: x.log_softmax(), lambda x: torch.log_softmax(x, -1), 1e-4),
  "logsumexp": (lambda x: x.logsumexp(0), lambda x: torch.logsumexp(x, 0), 1e-4),
  "softmax_small": (lambda x: x[4:14].softmax(), lambda x: torch.softmax(x[4:14], -1), 1e-7),
  "log_softmax_small": (lambda x: x[4:14].log_softmax(), lambda x: torch.log_softmax(x[4:14], -1), 1e-6),
}

def _close(got: np.ndarray, want: np.ndarray, atol: float, what: str, skip=None):
  """Finite where torch is finite (and near it), the same inf where torch has one, NaN only where torch has NaN.
  `skip`: entries not compared (the gradient at an input whose value is NaN, such as (-1) ** 2.5, means nothing)."""
  bad = []
  for i, (g, w) in enumerate(zip(got.reshape(-1), want.reshape(-1))):
    if skip is not None and skip[i]: continue
    ok = np.isnan(g) if np.isnan(w) else g == w if np.isinf(w) else np.isfinite(g) and abs(g - w) <= atol + 1e-4 * abs(w)
    if not ok: bad.append((float(GRID[i]) if got.size == GRID.size else i, float(g), float(w)))
  assert not bad, f"{what}: (input, lazynb, torch) {bad}"

@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_functions_and_gradients_match_torch_at_extremes(dt):
  """One table, every mismatch reported at once (softmax, exp, log, sqrt... were right before: they guard the rest).
  float64 too: a corner found on a rounded value (hardsigmoid's -3 * (1/6) + 0.5 is 5.6e-17 there) moves a slope."""
  grid, w = GRID.astype(dt), np.linspace(0.5, 1.5, GRID.size, dtype=dt)  # weights, so a softmax's gradient is not identically zero
  errors = []
  for name, (fn, tfn, atol) in FUNCS.items():
    tx = torch.tensor(grid, requires_grad=True)
    ty = tfn(tx)
    (ty * torch.tensor(w[:ty.numel()]).reshape(ty.shape)).sum().backward()
    x = Tensor(grid, requires_grad=True)
    y = fn(x)
    (y * Tensor(w[:y.numel()]).reshape(y.shape)).sum().backward()
    for what, got, want, skip in [("value", y.numpy(), ty.detach().numpy(), None),
                                  ("gradient", x.grad.numpy(), tx.grad.numpy(), np.isnan(ty.detach().numpy()) if ty.shape == tx.shape else None)]:
      try: _close(got, want, atol, f"{name} {what}", skip)
      except AssertionError as e: errors.append(str(e))
  assert not errors, "\n".join(errors)

def test_a_nan_input_keeps_a_nan_gradient_where_torch_does():
  """A NaN must not be hidden by a zero gradient (erf's clamp of |x| at 10 with minimum() sent NaN's gradient to the
  constant). Where torch's gradient at NaN is a number (elu, hardswish: 1 from its branches), lazynb may give NaN."""
  bad = []
  for name, (fn, tfn, _) in FUNCS.items():
    tx, x = torch.tensor([math.nan, 1.0], requires_grad=True), Tensor([math.nan, 1.0], requires_grad=True)
    tfn(tx).sum().backward()
    fn(x).sum().backward()
    if np.isnan(tx.grad.numpy()).any() and not np.array_equal(np.isnan(x.grad.numpy()), np.isnan(tx.grad.numpy())): bad.append(name)
  assert not bad, f"a NaN input's gradient is a number in lazynb, NaN in torch: {bad}"

def test_a_graph_built_under_no_grad_has_the_same_gradient():
  """tinygrad (and lazynb) differentiate a graph built while Tensor.no_grad was set; the methods with gradient rules of
  their own (asin/acos at +-1, pow at 0, softmax, conv2d, max_unpool2d) gave them only to graphs built with it unset."""
  x_np = np.array([-1.0, -0.5, 0.0, 0.5, 1.0, 3.0], np.float32)
  fns = {**{k: v[0] for k, v in FUNCS.items()},
         "conv2d": lambda x: x.reshape(1, 1, 2, 3).conv2d(Tensor.ones(2, 1, 2, 2) * Tensor([1.0, -2.0]).reshape(2, 1, 1, 1), padding=1),
         "max_unpool2d": lambda x: x.reshape(1, 1, 2, 3).max_unpool2d(Tensor([[[[0, 1, 5], [2, 3, 4]]]]), kernel_size=(2, 3), output_size=(2, 3)),
         "pow-2": lambda x: x ** -2, "0**x": lambda x: x.zeros_like() ** x}
  bad = []
  for name, fn in fns.items():
    grads = []
    for off in (False, True):
      x = Tensor(x_np, requires_grad=True)
      Tensor.no_grad = off
      try: y = fn(x)
      finally: Tensor.no_grad = False
      (y * Tensor(np.linspace(0.5, 1.5, y.numel(), dtype=np.float32)).reshape(y.shape)).sum().backward()
      grads.append(x.grad.numpy())
    if not np.array_equal(grads[0], grads[1], equal_nan=True): bad.append((name, grads[0].tolist(), grads[1].tolist()))
  assert not bad, f"(built with gradients on, built under no_grad): {bad}"

def test_tanh_gradient_at_minus_100_is_zero():
  x = Tensor([-100.0, 100.0], requires_grad=True)
  x.tanh().sum().backward()
  assert x.grad.numpy().tolist() == [0.0, 0.0]

@pytest.fixture(autouse=True)
def _fresh_method_cache():
  yield
  method_cache.clear()  # the BEAM runs time many variants; do not keep them alive for other tests

# ---------------------------------------------------------------- neighbours: the same class of silent wrong answers

@pytest.mark.parametrize("device", DEVICES)
def test_min_of_ints_at_the_int_minimum(device):
  """min was -max(-x): -(-2**31) wraps to -2**31, so min([-2**31, 5]) came out 5 and argmin pointed at 5."""
  a = np.array([[5, -2**31, 7], [-2**31, 3, -2**31]], dtype=np.int32)
  t = Tensor(a, device=device)
  np.testing.assert_array_equal(t.min(1).numpy(), a.min(1))
  np.testing.assert_array_equal(t.argmin(1).numpy(), a.argmin(1))
  np.testing.assert_array_equal(t.minimum(Tensor([[5, 4, -2**31]], device=device)).numpy(), np.minimum(a, [[5, 4, -2**31]]))
  b = np.array([2**62, -2**63, 0], dtype=np.int64)
  assert Tensor(b, device=device).min().item() == -2**63 and Tensor(b, device=device).argmin().item() == 1

@pytest.mark.parametrize("device", DEVICES)
def test_sign_of_nan_and_cumsum_with_inf_and_nan(device):
  a = np.array([1.0, inf, nan, 2.0, -inf], dtype=np.float32)
  np.testing.assert_array_equal(Tensor(a, device=device).sign().numpy(), np.sign(a))
  np.testing.assert_array_equal(Tensor(a, device=device).cumsum().numpy(), np.cumsum(a))  # was all NaN: inf * 0 in a masked product
  np.testing.assert_array_equal(Tensor(a[:2], device=device).cumsum().numpy(), np.cumsum(a[:2]))

def test_cross_entropy_with_a_masked_logit_is_finite():
  """A -inf logit (a masked class) that is not the label: torch's loss is finite; 0 * -inf made ours NaN."""
  logits = np.array([[2.0, -inf, 0.5], [-inf, 1.0, 3.0]], dtype=np.float32)
  y = np.array([0, 2])
  want = torch.nn.functional.cross_entropy(torch.from_numpy(logits), torch.from_numpy(y)).item()
  np.testing.assert_allclose(Tensor(logits).sparse_categorical_crossentropy(Tensor(y)).item(), want, rtol=1e-6)

@pytest.mark.parametrize("device", DEVICES)
def test_cos_of_large_inputs(device):
  """cos was sin(pi/2 - x): in float32 pi/2 - 3e9 loses every digit below 256, so cos(3e9) was -0.99 (right: -0.16)."""
  a = np.array([0.0, 1e-3, 1.0, 3.0, 100.0, 1e4, 1e5, 3e9, -3e9, 1e20], dtype=np.float32)
  want = np.cos(a.astype(np.float64))
  np.testing.assert_allclose(Tensor(a, device=device).cos().numpy(), want, rtol=1e-5, atol=2e-7)
  x = Tensor(a, device=device, requires_grad=True)
  x.sin().sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5, atol=2e-7)

def _near_poles(dt) -> np.ndarray:
  """Around every k*pi/2 for |k| <= 41 and a few far ones: the nearest values of dt and 8 neighbours each side, and +-eps."""
  out = []
  for c in [k * np.pi / 2 for k in range(-41, 42)] + [1001 * np.pi / 2, 100001 * np.pi / 2, 1e4 + 0.5]:
    a = b = dt(c)
    out.append(a)
    for _ in range(8):
      a, b = np.nextafter(a, dt(-np.inf)), np.nextafter(b, dt(np.inf))
      out += [a, b]
    out += [dt(c + e) for e in (1e-6, -1e-6, 1e-4, -1e-4, 1e-2, -1e-2)]
  return np.array([x for x in out if x != 0], dtype=dt)

@pytest.mark.parametrize("device", DEVICES + ["LLVM"])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_tan_and_cos_near_their_poles_and_zeros(device, dt):
  """cos near its zeros (so tan near its poles) must be accurate relative to its value: 1 - 2 sin(x/2)^2 cancels there
  to an absolute accuracy only, and tan just past pi/2 came out positive (numpy: -2.3e7)."""
  x = _near_poles(dt)
  tol = 2e-6 if dt is np.float32 else 1e-14
  for name, got, want in (("tan", Tensor(x, device=device).tan().numpy(), np.tan(x)), ("cos", Tensor(x, device=device).cos().numpy(), np.cos(x)),
                          ("sin", Tensor(x, device=device).sin().numpy(), np.sin(x))):
    bad = np.nonzero(np.sign(got) != np.sign(want))[0]
    assert len(bad) == 0, f"{name}: wrong sign at {x[bad][:5]}: {got[bad][:5]}, numpy {want[bad][:5]}"
    np.testing.assert_allclose(got, want, rtol=tol, atol=0, err_msg=name)

def test_host_side_float_to_int_follows_the_same_rule():
  """Tensor(floats, dtype=int) is cast on the host (by lazynb's rule, not the machine's, or numpy's error about a
  'ragged list'): it must give what .cast() gives in a kernel."""
  a = np.array([nan, 3e9, -inf, 2.7, -3.9, 1e30])
  for dt in (dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint32, dtypes.uint64):
    want = _numpy_cast(a, dt)
    np.testing.assert_array_equal(Tensor(a, dtype=dt).numpy(), want)
    np.testing.assert_array_equal(Tensor(a.tolist(), dtype=dt).numpy(), want)
    np.testing.assert_array_equal(Tensor(a).cast(dt).numpy(), _numpy_cast(a.astype(np.float32), dt))

def test_shifts_past_the_width_agree_with_numpy():
  """x86's scalar shift takes the count mod 32 (its vector shift gives 0), so 1 << 33 was 2 or 0 on CPU depending on
  the opts, and 0 on PYTHON; numpy and torch give 0 (or -1 for >> of a negative number)."""
  a, n = np.array([1, -8, 5], np.int32), np.array([33, 35, 32], np.int32)
  for device in DEVICES:
    t, tn = Tensor(a, device=device), Tensor(n, device=device)
    for opts in ({}, {"NOOPT": 1}):
      with Context(**opts):
        np.testing.assert_array_equal((t << tn).numpy(), np.left_shift(a, n))
        np.testing.assert_array_equal((t >> tn).numpy(), np.right_shift(a, n))
        np.testing.assert_array_equal((t >> 40).numpy(), np.right_shift(a, 40))
    u = np.array([200, 3], np.uint8)
    np.testing.assert_array_equal((Tensor(u, device=device) >> Tensor(np.array([8, 1], np.uint8), device=device)).numpy(), [0, 1])
    np.testing.assert_array_equal((Tensor(u, device=device) << 3).numpy(), np.left_shift(u, 3))

# ---------------------------------------------------------------- float % is exact (fmod, then the divisor's sign)
MOD_A = np.array([1e20, -1e20, 7.5, -7.5, 7.5, -7.5, 0.0, -0.0, 5.0, -1.0, 1.0, np.inf, 3.0, 1e-30, 2.0**24 + 1, 1e10], np.float32)
MOD_B = np.array([3, 3, 2, -2, -2, 2, 3, 3, 0, np.inf, -np.inf, 3, np.nan, 7, 3, 1e-3], np.float32)

@pytest.mark.parametrize("noopt", [0, 1])
@pytest.mark.parametrize("device", ["CPU", "PYTHON", "CL"])
def test_float_mod_matches_numpy_at_extremes(device, noopt):
  """x - floor(x/y)*y loses everything for huge x (1e20 % 3 was -4.4e12 with a fused multiply-add, 0 without; numpy: 2)."""
  with np.errstate(invalid="ignore"): want = MOD_A % MOD_B
  with Context(NOOPT=noopt): got = (Tensor(MOD_A, device=device) % Tensor(MOD_B, device=device)).numpy()
  np.testing.assert_array_equal(got, want)
  assert (Tensor(1e20) % 3).item() == float(np.float32(1e20) % np.float32(3))  # folded

def test_float_mod_gradient_matches_torch():
  x, y = Tensor([7.5, -7.5, 1e3, 0.25], requires_grad=True), Tensor([2.0, 2.0, -7.0, 0.5], requires_grad=True)
  (x % y).sum().backward()
  tx, ty = torch.tensor([7.5, -7.5, 1e3, 0.25], requires_grad=True), torch.tensor([2.0, 2.0, -7.0, 0.5], requires_grad=True)
  torch.remainder(tx, ty).sum().backward()
  np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
  np.testing.assert_array_equal(y.grad.numpy(), ty.grad.numpy())

# ---------------------------------------------------------------- values with no elements

@pytest.mark.parametrize("device", DEVICES)
def test_reduces_over_an_empty_axis_give_the_identity_and_run_no_kernel(device):
  """sum 0, prod 1, max the dtype's lowest, mean NaN (0 / 0), as numpy: folded before any kernel, which would load from
  memory that has no elements (the PYTHON device checks every load: the reduce's load, hoisted out of a loop that runs 0
  times, read index 0 of an empty buffer when such a kernel ran)."""
  for shape in [(0,), (0, 3), (3, 0), (2, 0, 4)]:
    for dt in ["float32", "int32", "bool"]:
      a = np.zeros(shape, dtype=dt)
      for ax in [None, *range(len(shape))]:
        t = Tensor(a, device=device)
        assert len(t.sum(ax).schedule()) <= 1  # (at most the copy of a in)
        np.testing.assert_equal(t.sum(ax).numpy(), a.sum(ax))
        np.testing.assert_equal(t.prod(ax).numpy(), a.prod(ax))
        if dt != "bool": np.testing.assert_equal(t.max(ax).numpy(), a.max(ax, initial=-np.inf if dt == "float32" else np.iinfo(dt).min))
        with np.errstate(invalid="ignore"), __import__("warnings").catch_warnings():
          __import__("warnings").simplefilter("ignore")
          np.testing.assert_equal(t.mean(ax).numpy(), a.astype(np.float32).mean(ax))

@pytest.mark.parametrize("device", DEVICES)
def test_an_empty_reduce_of_an_assign_loads_nothing(device):
  """The reduce cannot be folded away (the assign must run), so its kernel runs a loop of 0 steps: the kernel gives the
  identity without loading (its load, hoisted out of the loop, read index 0 of the empty buffer; PYTHON checks it)."""
  a = Tensor.zeros(0, 4, device=device).contiguous().realize()
  assert a.assign(a + 1).sum(0).tolist() == [0.0] * 4
  assert a.assign(a * 2).max(0).tolist() == [-math.inf] * 4

def test_backward_through_a_result_with_no_elements_gives_zero_gradients():
  """As torch: x[2:2], an empty x, an empty masked_select... were a RuntimeError ('no tensor with requires_grad=True
  contributes'): the empty reduce was folded to a constant while the graph was built, so backward no longer saw x."""
  cases = {"empty slice": lambda t: t[2:2].sum(), "empty slice, scaled": lambda t: (t[1:1] * 3).exp().sum(),
           "max of an empty axis": lambda t: t.reshape(3, 1)[:, 1:].max(1).sum(), "matmul over 0": lambda t: t[:0] @ t[:0]}
  for name, f in cases.items():
    x, tx = Tensor([1.0, 2.0, 3.0], requires_grad=True), torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    if name == "max of an empty axis":
      f(x).backward()
      assert x.grad.tolist() == [0.0, 0.0, 0.0]
      continue
    f(x).backward()
    f(tx).backward()
    np.testing.assert_equal(x.grad.numpy(), tx.grad.numpy(), err_msg=name)
  e = Tensor.zeros(0, 3, requires_grad=True)
  (e.transpose(0, 1) * 2).sum().backward()
  assert e.grad.shape == (0, 3)

def test_backward_through_a_realized_result_with_no_elements():
  """Realized first, then used: the scheduler folds an empty reduce (and a value with no elements) to a constant, which
  has no way back to x; a tensor holding such a value that a gradient may go through keeps its graph (found by an outside
  review: x.grad stayed None, or 'no tensor with requires_grad=True contributes')."""
  x, w = Tensor.ones(2, 4, 3, requires_grad=True), Tensor.ones(2, 3, requires_grad=True)
  y = x[:, 1:1].sum(1).realize()
  assert y.tolist() == [[0.0] * 3] * 2
  (y * w).sum().backward()
  assert x.grad is not None and x.grad.shape == (2, 4, 3) and not x.grad.numpy().any() and w.grad.tolist() == [[0.0] * 3] * 2
  x.grad = None
  z = (x[1:1] * 2).realize()
  (z.sum() + w.sum()).backward()
  assert x.grad is not None and x.grad.shape == (2, 4, 3)
