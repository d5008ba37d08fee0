"""tinygrad 0.10's full dtype set: int8/int16/uint16/uint32/uint64, float64 and bfloat16, against numpy and torch.

numpy has no bfloat16: torch is the reference for it (round to nearest even on every conversion and operation).
"""
import itertools, os, subprocess, sys
import numpy as np
import pytest
import torch
from lazynb import Tensor, dtypes, Device
from lazynb.dtype import least_upper_dtype, to_dtype, sum_acc_dtype
from lazynb.device import is_dtype_supported

NUMPY_BACKED = [dtypes.bool, dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32, dtypes.int64,
                dtypes.uint64, dtypes.float16, dtypes.float32, dtypes.float64]
EVERY = NUMPY_BACKED + [dtypes.bfloat16]
NEW_INTS = [dtypes.int8, dtypes.int16, dtypes.uint16, dtypes.uint32, dtypes.uint64]
DEVICES = ["CPU", "PYTHON", "CL"]

# ---------------------------------------------------------------- names and properties

def test_fields_names_and_sizes_match_numpy():
  f = dtypes.fields()
  for name in ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64", "bool"]:
    assert f[name].itemsize == np.dtype(name).itemsize and f[name].np == np.dtype(name).type
  # tinygrad's C-style aliases name the same types
  for alias, name in [("char", "int8"), ("uchar", "uint8"), ("short", "int16"), ("ushort", "uint16"), ("int", "int32"), ("uint", "uint32"),
                      ("long", "int64"), ("ulong", "uint64"), ("half", "float16"), ("float", "float32"), ("double", "float64")]:
    assert f[alias] is f[name] is getattr(dtypes, alias) is to_dtype(name.upper())
  assert f["bfloat16"].itemsize == 2 and set(f.values()) == set(EVERY) | set(dtypes.fp8s)

@pytest.mark.parametrize("dt", NUMPY_BACKED)
def test_kind_predicates_and_ranges_match_numpy(dt):
  k = np.dtype(dt.np).kind
  assert (dtypes.is_float(dt), dtypes.is_int(dt), dtypes.is_unsigned(dt)) == (k == "f", k in "iu", k == "u")
  if k in "iu": assert (dtypes.min(dt), dtypes.max(dt)) == (np.iinfo(dt.np).min, np.iinfo(dt.np).max)
  if k == "f":
    fi = np.finfo(dt.np)
    assert dtypes.finfo(dt) == (fi.bits - fi.nmant - 1, fi.nmant) and dtypes.min(dt) == -np.inf
  else:
    with pytest.raises(ValueError): dtypes.finfo(dt)

def test_bfloat16_properties_match_torch():
  fi = torch.finfo(torch.bfloat16)
  assert dtypes.finfo(dtypes.bfloat16) == (fi.bits - 7 - 1, 7) and 2.0 ** -7 == fi.eps  # 7 stored mantissa bits
  assert dtypes.is_float(dtypes.bfloat16) and not dtypes.is_int(dtypes.bfloat16)
  assert Tensor([1.0], dtype=dtypes.bfloat16).is_floating_point() and not Tensor([1]).is_floating_point()

# ---------------------------------------------------------------- promotion

def expected_promotion(a, b):
  """numpy's promote_types, except where tinygrad's lattice differs (each a documented rule):
  - an int or bool meeting a float gives that float (numpy may widen, e.g. int32 + float16 -> float64);
  - a signed int + uint64 gives float16: the lowest type above both in tinygrad's lattice (numpy: float64);
  - bfloat16 is not in numpy: it sits beside float16 (above every int, below float32), so it meets ints and
    bool as float16 does, and float16 + bfloat16 is float32."""
  if a is dtypes.bfloat16 or b is dtypes.bfloat16:
    other = b if a is dtypes.bfloat16 else a
    if other in (dtypes.bfloat16, dtypes.float16): return dtypes.bfloat16 if other is dtypes.bfloat16 else dtypes.float32
    r = expected_promotion(dtypes.float16, other)
    return dtypes.bfloat16 if r is dtypes.float16 else r
  fa, fb = dtypes.is_float(a), dtypes.is_float(b)
  if fa != fb: return a if fa else b
  if dtypes.uint64 in (a, b) and any(dtypes.is_int(d) and not dtypes.is_unsigned(d) for d in (a, b)): return dtypes.float16
  return {d.np: d for d in NUMPY_BACKED}[np.promote_types(a.np, b.np).type]

@pytest.mark.parametrize("a,b", list(itertools.product(EVERY, EVERY)))
def test_least_upper_dtype_every_pair(a, b):
  want = expected_promotion(a, b)
  assert least_upper_dtype(a, b) is want and least_upper_dtype(b, a) is want

def test_promotion_in_real_ops():
  for a, b in [(dtypes.int8, dtypes.uint8), (dtypes.uint16, dtypes.int16), (dtypes.uint32, dtypes.int8), (dtypes.uint64, dtypes.float64)]:
    x, y = np.array([3, 7]).astype(a.np), np.array([2, 5]).astype(b.np)
    r = Tensor(x) * Tensor(y)
    assert r.dtype is least_upper_dtype(a, b)
    np.testing.assert_array_equal(r.numpy(), x.astype(r.dtype.np) * y.astype(r.dtype.np))

# ---------------------------------------------------------------- host data keeps its dtype

def test_numpy_arrays_and_scalars_keep_their_dtype():
  for dt in NUMPY_BACKED:
    a = np.array([1, 0, 1]).astype(dt.np)
    assert Tensor(a).dtype is dt and Tensor(a[0]).dtype is dt  # a numpy scalar is a 0-d array of its dtype
    np.testing.assert_array_equal(Tensor(a).numpy(), a)
  assert Tensor(np.float64(0.1)).item() == 0.1 and Tensor([0.1]).dtype is dtypes.float32  # Python floats: default float

def test_float64_keeps_double_precision():
  a = np.array([1e16, 1.0, -1e16, 1.0, 0.1, 2.0 ** -60])
  t = Tensor(a)
  np.testing.assert_array_equal((t + 1).numpy(), a + 1)
  assert t.sum().item() == a.sum() and t.sum().dtype is dtypes.float64
  for f, g in [(Tensor.exp, np.exp), (Tensor.log, np.log), (Tensor.sqrt, np.sqrt), (Tensor.sin, np.sin)]:
    x = np.array([0.5, 1.25, 3.0, 10.0])
    np.testing.assert_allclose(f(Tensor(x)).numpy(), g(x), rtol=1e-13)
  assert Tensor(a).mean().dtype is dtypes.float64 and Tensor(a).mean().item() == pytest.approx(a.mean(), rel=1e-15)

def test_default_float_from_environment():
  code = "from lazynb import Tensor, dtypes; print(Tensor([1.5]).dtype, (Tensor([1]) / 2).dtype, dtypes.default_float)"
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # this checkout's lazynb, not an installed one
  env = {**os.environ, "DEFAULT_FLOAT": "HALF", "PYTHONPATH": root}
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=root).stdout.split()
  assert out == ["dtypes.half"] * 3
  bad = subprocess.run([sys.executable, "-c", code], env={**env, "DEFAULT_FLOAT": "INT"}, capture_output=True, text=True, cwd=root)
  assert bad.returncode != 0 and "DEFAULT_FLOAT=INT" in bad.stderr

# ---------------------------------------------------------------- arithmetic on every device

def _ints(dt, n=64, seed=0):
  lo, hi = max(dtypes.min(dt), -2**62), min(dtypes.max(dt), 2**62)
  return np.random.default_rng(seed).integers(lo, hi, n, endpoint=True).astype(dt.np)

@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dt", NEW_INTS)
def test_new_int_arithmetic_wraps_like_numpy(dev, dt):
  x, y = _ints(dt, seed=1), _ints(dt, seed=2)
  y[y == 0] = 1
  X, Y = Tensor(x, device=dev), Tensor(y, device=dev)
  with np.errstate(over="ignore"):
    for got, want in [(X + Y, x + y), (X * Y, x * y), (X - Y, x - y), (X.maximum(Y), np.maximum(x, y)), (X < Y, x < y),
                      (X & Y, x & y), (X ^ Y, x ^ y)]:
      assert got.dtype.np == want.dtype
      np.testing.assert_array_equal(got.numpy(), want)
  assert X.max().item() == x.max() and X.min().item() == x.min()
  acc = sum_acc_dtype(dt)
  assert X.sum().dtype is acc and X.sum().item() == int(x.astype(acc.np).sum(dtype=acc.np))  # wraps in acc, as tinygrad

@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("dt", NEW_INTS)
def test_float_to_new_int_casts_as_numpy(dev, dt):
  """Out-of-range and NaN float -> int casts give what numpy gives on x86 (renderer/prerender.py's rule) for the new
  types too, from float64, float32 and float16."""
  lo, hi = (dtypes.min(dt), dtypes.max(dt)) if dt.itemsize >= 4 else (dtypes.min(dtypes.int32), dtypes.max(dtypes.int32))
  f = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, float(hi) * 4, float(lo) - 1e6, 3e9, -3e9, 3.7, -3.7, 0.0, -1e4])
  for src in (np.float64, np.float32, np.float16):
    if not is_dtype_supported(dtypes.from_np(src), dev): continue
    x = f.astype(src)
    with np.errstate(invalid="ignore", over="ignore"): want = x.astype(dt.np)
    got = Tensor(x, device=dev).cast(dt).numpy()
    assert got.dtype == dt.np and got.tolist() == want.tolist(), src

@pytest.mark.parametrize("dev", DEVICES)
def test_casts_between_all_numpy_dtypes(dev):
  vals = np.array([0, 1, 5, 100, 127, 200, 255, 300, 65535, 70000, 2**31 - 1, 2**40, 2**53])
  types = [d for d in NUMPY_BACKED if is_dtype_supported(d, dev)]
  for src, dst in itertools.product(types, types):
    if dtypes.is_float(src) and dtypes.is_int(dst): continue  # out-of-range values: tested above
    x = vals.astype(src.np) if not dtypes.is_float(src) else vals[vals < 60000].astype(src.np)
    with np.errstate(over="ignore", invalid="ignore"):
      want = x.astype(dst.np)
    np.testing.assert_array_equal(Tensor(x, device=dev).cast(dst).numpy(), want, err_msg=f"{src} -> {dst}")

# ---------------------------------------------------------------- bfloat16 against torch

def _f32_patterns():
  rng = np.random.default_rng(3)
  bits = np.concatenate([rng.integers(0, 2**32, 4000, dtype=np.uint64),
                         # ties and near-ties of the 16 dropped bits, around odd and even kept bits
                         (rng.integers(0, 2**16, 400, dtype=np.uint64) << 16) | np.array([0x8000, 0x7fff, 0x8001], dtype=np.uint64).repeat(400)[:400]])
  f = bits.astype(np.uint32).view(np.float32)
  extra = np.array([0.0, -0.0, np.inf, -np.inf, 3.3895314e38, 3.4e38, 1e-40, -1e-45, 1.0, 1.00390625, 1.005859375], dtype=np.float32)
  return np.concatenate([f[~np.isnan(f)], extra])

@pytest.mark.parametrize("dev", DEVICES)
def test_float32_to_bfloat16_rounds_like_torch(dev):
  f = _f32_patterns()
  want = torch.from_numpy(f).to(torch.bfloat16).float().numpy()
  got = Tensor(f, device=dev).cast(dtypes.bfloat16).numpy()
  assert got.dtype == np.float32  # numpy has no bfloat16: .numpy() gives float32 values, as tinygrad
  np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
  assert np.isnan(Tensor([np.nan], device=dev).cast(dtypes.bfloat16).numpy()).all()

@pytest.mark.parametrize("dev", DEVICES)
def test_bfloat16_ops_round_every_step_like_torch(dev):
  rng = np.random.default_rng(4)
  a, b, c = (rng.standard_normal(256).astype(np.float32) * 10 for _ in range(3))
  ta, tb, tc = (torch.from_numpy(v).to(torch.bfloat16) for v in (a, b, c))
  A, B, C = (Tensor(v, device=dev).cast(dtypes.bfloat16) for v in (a, b, c))
  for got, want in [(A * B + C, ta * tb + tc), (A - B * 3, ta - tb * 3), (A / B, ta * tb.reciprocal()),  # x / y is x * (1/y), each rounded, as tinygrad
                     (A.maximum(B), torch.maximum(ta, tb)),
                    ((A * B).sqrt(), (ta * tb).sqrt()), (A.cast(dtypes.int32), ta.to(torch.int32))]:
    assert got.dtype in (dtypes.bfloat16, dtypes.int32)
    np.testing.assert_array_equal(got.numpy(), want.float().numpy() if want.dtype == torch.bfloat16 else want.numpy())
  # a sum adds in float32 and rounds once at the end (tinygrad's accumulator for bfloat16)
  s = A.sum()
  assert s.dtype is dtypes.bfloat16 and s.item() == torch.tensor(ta.float().sum().item()).to(torch.bfloat16).item()

def test_bfloat16_constructors():
  t = Tensor([1.0, 3.14159, -2.5], dtype=dtypes.bfloat16)
  assert t.dtype is dtypes.bfloat16 and t.tolist() == torch.tensor([1.0, 3.14159, -2.5]).to(torch.bfloat16).float().tolist()
  assert Tensor.full((2,), 1.01, dtype=dtypes.bfloat16).numpy().tolist() == [torch.tensor(1.01).to(torch.bfloat16).item()] * 2
  r = Tensor.rand(1000, dtype=dtypes.bfloat16).numpy()
  assert r.min() >= 0 and r.max() < 1 and len(np.unique(r)) > 50
  w = Tensor([0.5, 0.25], dtype=dtypes.bfloat16, requires_grad=True)
  assert w.numpy().tolist() == [0.5, 0.25]

# ---------------------------------------------------------------- bitcast

@pytest.mark.parametrize("dev", DEVICES)
def test_bitcast_matches_numpy_view(dev):
  x = np.array([[1.5, -2.0, 3.25, 1e30], [0.0, -0.0, np.inf, 7.0]], dtype=np.float32)
  base = x.view(np.uint8)
  for src, dst in itertools.product(NUMPY_BACKED, NUMPY_BACKED):
    if src is dtypes.bool or dst is dtypes.bool or not (is_dtype_supported(src, dev) and is_dtype_supported(dst, dev)): continue
    a = base.view(src.np)
    want = a.view(dst.np)
    got = Tensor(a, device=dev).bitcast(dst).numpy()
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=f"{src} -> {dst}")

def test_bitcast_bfloat16_and_bool():
  bits = np.array([0x3fc0, 0xc000, 0x7f80, 0x0001], dtype=np.uint16)
  want = torch.from_numpy(bits.astype(np.int16)).view(torch.bfloat16).float().numpy()
  np.testing.assert_array_equal(Tensor(bits).bitcast(dtypes.bfloat16).numpy(), want)
  np.testing.assert_array_equal(Tensor(bits).bitcast(dtypes.bfloat16).bitcast(dtypes.uint16).numpy(), bits)
  f = np.array([1.0, 0.0], dtype=np.float32)
  np.testing.assert_array_equal(Tensor(f).bitcast(dtypes.bool).numpy(), f.view(np.uint8) != 0)

def test_bitcast_errors():
  with pytest.raises(RuntimeError, match="unsupported size"): Tensor([1.0, 2.0, 3.0]).bitcast(dtypes.float64)
  with pytest.raises(RuntimeError, match="unsupported size"): Tensor(1.0).bitcast(dtypes.int16)
  with pytest.raises(RuntimeError, match="backprop"): Tensor([1.0], requires_grad=True).bitcast(dtypes.int32)

# ---------------------------------------------------------------- devices

def test_is_dtype_supported_tells_the_truth():
  import pyopencl as cl
  ext = cl.get_platforms()[0].get_devices()[0].extensions.split()
  for dt in EVERY:
    assert is_dtype_supported(dt, "CPU") and is_dtype_supported(dt, "PYTHON")
    want = {dtypes.float16: "cl_khr_fp16" in ext, dtypes.float64: "cl_khr_fp64" in ext}.get(dt, True)
    assert is_dtype_supported(dt, "CL") == want
    t = Tensor([1, 2], device="CL").cast(dt) * 3
    if want: assert t.numpy().tolist() == [3, 6] if dt is not dtypes.bool else [True, True]
    else:
      with pytest.raises(Exception): t.numpy()  # an unsupported type really does not compile
  assert is_dtype_supported(dtypes.float32) and not is_dtype_supported(dtypes.float32, "NOSUCHDEVICE")

def test_cuda_renders_and_compiles_every_dtype():
  pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC not installed: pip install cuda-bindings nvidia-cuda-nvrtc")
  from lazynb.codegen import get_program
  from lazynb.engine.schedule import create_schedule
  dev = Device["CUDA"]
  for dt in EVERY:
    x = Tensor.empty(16, device="CUDA", dtype=dt)
    out = (x * x + x).max() if dt is not dtypes.bool else (x & x).max()
    items, _ = create_schedule([out.uop])
    for si in [si for si in items if si.kind == "kernel"]:
      prg = get_program(si.ast, dev.renderer)
      ptx = dev.compiler.compile(prg.src).decode()
      assert f".entry {prg.name}(" in ptx
      if dt is dtypes.bfloat16: assert "__nv_bfloat16" in prg.src and "cuda_bf16.h" in prg.src

def test_safetensors_roundtrip_new_dtypes(tmp_path):
  from lazynb.nn.state import safe_save, safe_load
  ts = {dt.name: Tensor(np.array([1, 2, 3]).astype(dt.np)) for dt in NUMPY_BACKED}
  safe_save(ts, tmp_path / "m.safetensors")
  back = safe_load(tmp_path / "m.safetensors")
  for k, t in ts.items():
    assert back[k].dtype is t.dtype and back[k].numpy().tolist() == t.numpy().tolist()

def test_float64_gradients_match_torch():
  v = [1.5, -2.25, 7.0]
  x = Tensor(np.array(v), requires_grad=True)
  ((x * x) % 2.5 + x.exp()).sum().backward()
  tx = torch.tensor(v, dtype=torch.float64, requires_grad=True)
  ((tx * tx) % 2.5 + tx.exp()).sum().backward()
  assert x.grad.dtype is dtypes.float64
  np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)

def test_safetensors_bfloat16(tmp_path):
  from safetensors.torch import save_file
  from lazynb.nn.state import safe_save, safe_load
  w = torch.tensor([[1.5, -2.0, 3.140625]], dtype=torch.bfloat16)
  save_file({"w": w, "b": torch.tensor([1.0, 2.0], dtype=torch.float64)}, str(tmp_path / "bf.safetensors"))
  back = safe_load(tmp_path / "bf.safetensors")
  assert back["w"].dtype is dtypes.bfloat16 and back["w"].numpy().tolist() == w.float().tolist()
  assert back["b"].dtype is dtypes.float64 and back["b"].numpy().tolist() == [1.0, 2.0]
  # written back (with other dtypes and metadata) and read by torch's safetensors: the same bits
  x = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32) * 1e3
  ours = {"w": back["w"], "x": Tensor(x).cast(dtypes.bfloat16), "i": Tensor(np.arange(6, dtype=np.int16).reshape(2, 3)), "f": Tensor(x)}
  safe_save(ours, tmp_path / "out.safetensors", metadata={"step": "7"})
  from safetensors.torch import load_file
  from safetensors import safe_open
  got = load_file(str(tmp_path / "out.safetensors"))
  assert got["w"].dtype == torch.bfloat16 and torch.equal(got["w"], w)
  assert torch.equal(got["x"].view(torch.int16), torch.from_numpy(x).to(torch.bfloat16).view(torch.int16))  # torch's own rounding
  assert got["i"].dtype == torch.int16 and got["i"].tolist() == [[0, 1, 2], [3, 4, 5]] and torch.equal(got["f"], torch.from_numpy(x))
  with safe_open(str(tmp_path / "out.safetensors"), "pt") as f: assert f.metadata() == {"step": "7"}
  again = safe_load(tmp_path / "out.safetensors")
  assert again["x"].dtype is dtypes.bfloat16 and again["x"].numpy().tolist() == got["x"].float().tolist()

@pytest.mark.parametrize("dt", NEW_INTS)
def test_compare_new_ints_with_out_of_range_python_ints(dt):
  """A Python int the dtype cannot hold is compared exactly (never wrapped into the dtype)."""
  x = np.array([0, 5, dtypes.max(dt)], dtype=dt.np)
  for y in [-1, -300, 2**40, dtypes.max(dt) + 1, dtypes.min(dt) - 1]:
    if abs(y) >= 2**63: continue
    want = np.array([int(v) > y for v in x]), np.array([int(v) == y for v in x]), np.array([int(v) < y for v in x])
    got = (Tensor(x) > y).numpy(), (Tensor(x) == y).numpy(), (Tensor(x) < y).numpy()
    for g, w in zip(got, want): np.testing.assert_array_equal(g, w, err_msg=f"{dt} vs {y}")

@pytest.mark.parametrize("dt", NEW_INTS + [dtypes.float64])
def test_mean_of_new_dtypes(dt):
  x = np.array([1, 2, 4, 100]).astype(dt.np)
  m = Tensor(x).mean()
  assert m.dtype is (dtypes.float64 if dt is dtypes.float64 else dtypes.float32) and m.item() == pytest.approx(x.astype(np.float64).mean(), rel=1e-6)

@pytest.mark.parametrize("dev", DEVICES)
def test_extreme_constants_render_exactly(dev):
  """The 64-bit extremes and a float64 constant that float32 cannot hold, written into kernels as literals."""
  t = Tensor(np.array([5, -7], np.int64), device=dev)
  np.testing.assert_array_equal(t.minimum(-2**63).numpy(), np.minimum(np.array([5, -7], np.int64), np.int64(-2**63)))
  u = Tensor(np.array([1, 2], np.uint64), device=dev)
  np.testing.assert_array_equal(u.maximum(2**64 - 1).numpy(), np.full(2, 2**64 - 1, np.uint64))
  np.testing.assert_array_equal((Tensor(np.array([1.5]), device=dev) * 0.1).numpy(), np.array([1.5]) * 0.1)
  np.testing.assert_array_equal((Tensor(np.array([1, 2], np.uint32), device=dev) + 4294967290).numpy(), np.array([4294967291, 4294967292], np.uint32))

def test_safetensors_bfloat16_with_ml_dtypes_imported(tmp_path):
  """Importing ml_dtypes (as jax does) teaches numpy bfloat16, and the safetensors package then returns such arrays."""
  pytest.importorskip("ml_dtypes")
  from safetensors.torch import save_file
  from lazynb.nn.state import safe_load
  w = torch.tensor([1.5, -2.0, 3.140625], dtype=torch.bfloat16)
  save_file({"w": w}, str(tmp_path / "bf.safetensors"))
  back = safe_load(tmp_path / "bf.safetensors")["w"]
  assert back.dtype is dtypes.bfloat16 and back.numpy().tolist() == w.float().tolist()

INTS = [dtypes.bool, dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32, dtypes.int64]
@pytest.mark.parametrize("a,b", list(itertools.product(INTS, INTS)))
def test_int_matmul_has_the_promoted_dtype_and_wraps_as_numpy(a, b):
  """x @ w accumulates wide (as sum) and gives the operands' promoted dtype, wrapped there: numpy's (and tinygrad's)
  result, e.g. int8 @ int8 is int8. Values big enough that the small types overflow."""
  rng = np.random.default_rng(3)
  x = rng.integers(0, 2 if a is dtypes.bool else 120, (3, 5)).astype(a.np)
  w = rng.integers(0, 2 if b is dtypes.bool else 120, (5, 4)).astype(b.np)
  r = Tensor(x) @ Tensor(w)
  want = x @ w
  assert r.dtype is least_upper_dtype(a, b) and r.dtype.np == want.dtype.type
  np.testing.assert_array_equal(r.numpy(), want)

@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("src,dt", [(dtypes.float16, dtypes.float32), (dtypes.float32, dtypes.float16), (dtypes.float32, dtypes.float64)])
def test_softmax_dtype_argument_as_torch(fn, src, dt):
  """softmax(axis, dtype=) computes in dtype and returns it (torch casts the input first); the gradient reaches the input
  in the input's dtype."""
  tdt = {dtypes.float16: torch.float16, dtypes.float32: torch.float32, dtypes.float64: torch.float64}
  data = [[1.0, 2.0, 3.5], [-1.0, 0.25, 4.0]]
  x, tx = Tensor(data, dtype=src, requires_grad=True), torch.tensor(data, dtype=tdt[src], requires_grad=True)
  out, tout = getattr(x, fn)(1, dtype=dt), getattr(tx, fn)(1, dtype=tdt[dt])
  assert out.dtype is dt and tout.dtype == tdt[dt]
  tol = 2e-3 if dtypes.float16 in (src, dt) else 1e-6
  np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=tol, atol=tol)
  (out * Tensor([[1.0, -2.0, 0.5]], dtype=dt)).sum().backward()
  (tout * torch.tensor([[1.0, -2.0, 0.5]], dtype=tdt[dt])).sum().backward()
  assert x.grad.dtype is src
  np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)

def test_linear_dtype_argument_as_tinygrad():
  tg = pytest.importorskip("tinygrad")
  for w_shape in [(2,), (2, 3)]:
    for dt in ["int8", "half", "float", "int32"]:
      x, w, b = np.array([[0, 1], [2, 3]], np.int8), np.ones(w_shape, np.uint8), np.arange(w_shape[-1], dtype=np.int16)
      ours = Tensor(x).linear(Tensor(w), Tensor(b), dtype=dt)
      theirs = tg.Tensor(x).linear(tg.Tensor(w), tg.Tensor(b), dtype=dt)
      assert repr(ours.dtype) == repr(theirs.dtype) and ours.numpy().tolist() == theirs.numpy().tolist()
      assert repr(Tensor(x).linear(Tensor(w), Tensor(b)).dtype) == repr(tg.Tensor(x).linear(tg.Tensor(w), tg.Tensor(b)).dtype)
  # computed in dtype, not cast at the end: in half 2049 + 1 is 2048 + 1 = 2048 (ties to even); in int16, 2050
  x, w = np.array([[2049, 1]], np.int16), np.ones((2, 1), np.uint8)
  assert Tensor(x).linear(Tensor(w), dtype="half").numpy().tolist() == tg.Tensor(x).linear(tg.Tensor(w), dtype="half").numpy().tolist() == [[2048]]
