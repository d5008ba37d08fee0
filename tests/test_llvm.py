"""The LLVM device: the CPU's kernels written as LLVM IR and compiled inside the process (runtime/ops_llvm.py).

Values are checked against numpy (and, where numpy has no word, against the CPU device's C, which other tests check
against numpy); the IR is checked for what it promises (no compiler process, the same kernels as the C device, a
line map the viewer can use); bad IR and a missing llvmlite are clear errors. The whole ops/dtype suite also runs on
this device in CI (`.ci/run`, the DEVICE=LLVM pass), and the differential fuzzer includes it.
"""
import os, re, subprocess, sys
import numpy as np
import pytest
from lazynb import Tensor, Device, dtypes, Variable
from lazynb.device import CompileError
from lazynb.codegen import get_program
from lazynb.helpers import Context

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG = np.random.default_rng(7)

def llvm(x, dtype=None): return Tensor(x, device="LLVM", dtype=dtype)

def programs(out: Tensor, device: str = "LLVM"):
  return [get_program(si.ast, Device[device].renderer) for si in out.schedule() if si.kind == "kernel"]

def test_kernels_are_llvm_ir_compiled_without_a_compiler_process(monkeypatch):
  a = RNG.standard_normal((33, 17)).astype(np.float32)
  out = (llvm(a) * 3 + 1).relu().sum(axis=1)
  (p,) = programs(out)
  assert p.language == "LLVMRenderer" and f"define void @{p.name}(" in p.src and "alloca" in p.src
  def no_process(*a, **k): raise AssertionError("a process was started")
  monkeypatch.setattr(subprocess, "run", no_process)
  monkeypatch.setattr(subprocess, "Popen", no_process)
  np.testing.assert_allclose(out.numpy(), np.maximum(a * 3 + 1, 0).sum(axis=1), rtol=1e-5, atol=1e-5)

def test_same_kernels_as_the_c_device():
  a = RNG.standard_normal((64, 48)).astype(np.float32)
  def build(d): return (Tensor(a, device=d) @ Tensor(a.T.copy(), device=d)).softmax(axis=1)
  want, got = programs(build("CPU"), "CPU"), programs(build("LLVM"))
  assert [p.name for p in got] == [p.name for p in want] and len(got) >= 2
  np.testing.assert_allclose(build("LLVM").numpy(), build("CPU").numpy(), rtol=1e-5, atol=1e-6)

def test_line_map_covers_every_line():
  a = RNG.standard_normal((16, 16)).astype(np.float32)
  for p in programs((llvm(a) @ llvm(a)).exp2().max(axis=0)):
    assert len(p.line_map) == len(p.src.splitlines())
    lines = p.src.splitlines()
    for ln, us in zip(lines, p.line_map):  # an instruction line names the UOp it came from
      if "= load" in ln and "%val" in ln: assert us and p.uops[us[0]].op.name == "LOAD", ln

@pytest.mark.parametrize("dt", [dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32, dtypes.int64, dtypes.uint64])
def test_integer_arithmetic_wraps_like_numpy(dt):
  """Every int width, as numpy computes it (wrapping); found by the fuzzer: relu of an int8 was rejected IR."""
  info = np.iinfo(dt.fmt)
  a = RNG.integers(info.min, info.max, 64, dtype=dt.fmt, endpoint=True)
  b = RNG.integers(1, min(info.max, 1000), 64, dtype=dt.fmt)
  A, B = llvm(a), llvm(b)
  with np.errstate(over="ignore"):
    np.testing.assert_array_equal((A + B).numpy(), a + b)
    np.testing.assert_array_equal((A * B).numpy(), a * b)
    np.testing.assert_array_equal((A - B).numpy(), a - b)
    np.testing.assert_array_equal((A // B).numpy(), a // b)
    np.testing.assert_array_equal((A % B).numpy(), a % b)
    np.testing.assert_array_equal(A.maximum(B).numpy(), np.maximum(a, b))
    # the ops whose float forms test for NaN (x != x): relu, minimum, clip, max; an int has no NaN and LLVM no fcmp of ints
    np.testing.assert_array_equal(A.relu().numpy(), np.maximum(a, 0))
    np.testing.assert_array_equal(A.minimum(B).numpy(), np.minimum(a, b))
    np.testing.assert_array_equal(A.clip(0, 100).numpy(), np.clip(a, 0, 100))
    np.testing.assert_array_equal(A.max().numpy(), a.max())
    np.testing.assert_array_equal((A < B).numpy(), a < b)
    np.testing.assert_array_equal((A ^ B).numpy(), a ^ b)
    np.testing.assert_array_equal((A >> 3).numpy(), a >> 3)

@pytest.mark.parametrize("dt", [dtypes.int8, dtypes.int32, dtypes.int64])
def test_an_int_compared_with_itself_is_no_float_compare(dt):
  """Found by the fuzzer: relu of -(bool as int8) simplifies to where(x != x, x, 0) (x > 0 cannot hold), the form of a
  float's NaN test, which the LLVM device wrote as `fcmp ord i8` and LLVM rejected."""
  b = np.array([True, False, True])
  x = -llvm(b).cast(dt)
  np.testing.assert_array_equal(x.relu().numpy(), np.maximum(-b.astype(dt.fmt), 0))
  np.testing.assert_array_equal(x.maximum(-1).numpy(), np.maximum(-b.astype(dt.fmt), -1))

def test_floats_nan_inf_and_signed_zero_match_the_c_device():
  x = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 3e38, -1e-40, 7.0], np.float32)
  y = np.array([-0.0, 0.0, np.nan, 1.0, np.inf, 2.0, 5.0, -3e38, 1e-40, -7.0], np.float32)
  for f in (lambda a, b: a.maximum(b), lambda a, b: a < b, lambda a, b: a != b, lambda a, b: a / b, lambda a, b: (a * b + a),
            lambda a, b: a.sqrt(), lambda a, b: a.exp2(), lambda a, b: a.log2(), lambda a, b: a.sin(), lambda a, b: a.trunc()):
    got, want = f(llvm(x), llvm(y)).numpy(), f(Tensor(x, device="CPU"), Tensor(y, device="CPU")).numpy()
    np.testing.assert_array_equal(np.signbit(got) & ~np.isnan(got), np.signbit(want) & ~np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
  np.testing.assert_array_equal(llvm(x).maximum(llvm(y)).numpy(), np.maximum(x, y))  # NaN from either side

@pytest.mark.parametrize("dt", [dtypes.int8, dtypes.uint8, dtypes.int32, dtypes.uint32, dtypes.int64, dtypes.bool])
def test_float_to_int_casts_as_numpy(dt):
  """NaN, inf and out-of-range values too: what numpy gives on x86 (renderer/prerender.py's rule)."""
  x = np.array([np.nan, np.inf, -np.inf, 1e20, -1e20, 3e9, -3e9, 300.7, -300.7, 127.9, -128.9, 0.5, -0.5, 3.0], np.float32)
  got = llvm(x).cast(dt).numpy()
  np.testing.assert_array_equal(got, Tensor(x, device="CPU").cast(dt).numpy())
  with np.errstate(invalid="ignore", over="ignore"): np.testing.assert_array_equal(got, x.astype(dt.np))

def test_float16_rounds_every_operation_like_numpy():
  if not Device["LLVM"].supports(dtypes.float16): pytest.skip("this CPU lacks F16C: the LLVM device has no float16")
  a = RNG.standard_normal(256).astype(np.float16)
  b = RNG.standard_normal(256).astype(np.float16)
  A, B = llvm(a), llvm(b)
  np.testing.assert_array_equal((A * B + A).numpy(), a * b + a)
  np.testing.assert_array_equal((A / B).numpy(), a * (np.float16(1) / b))  # x / y is x * (1/y), as in tinygrad
  one, tie = np.float16(1), np.float16(2.0 ** -11)
  np.testing.assert_array_equal((llvm(np.array([one], np.float16)) + float(tie)).numpy(), np.array([one + tie]))

def test_bfloat16_is_bit_exact_with_the_c_device():
  x = np.concatenate([RNG.standard_normal(200).astype(np.float32) * 100, np.array([np.nan, np.inf, -np.inf, 3.3895e38, 1e-39], np.float32)])
  def f(d):
    t = Tensor(x, device=d).cast(dtypes.bfloat16)
    return ((t * 3 + t) / 7).maximum(t).cast(dtypes.float32).numpy()
  np.testing.assert_array_equal(f("LLVM").view(np.uint32), f("CPU").view(np.uint32))
  # and the rounding itself: to nearest even on the top 16 bits of a float
  v = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -9], np.float32)
  np.testing.assert_array_equal(llvm(v).cast(dtypes.bfloat16).cast(dtypes.float32).numpy(), np.array([1.0, 1 + 2 ** -6, 1.0], np.float32))

def test_bool_logic():
  a, b = RNG.integers(0, 2, 50).astype(bool), RNG.integers(0, 2, 50).astype(bool)
  A, B = llvm(a), llvm(b)
  np.testing.assert_array_equal((A + B).numpy(), a | b)
  np.testing.assert_array_equal((A * B).numpy(), a & b)
  np.testing.assert_array_equal((A != B).numpy(), a != b)
  np.testing.assert_array_equal(A.logical_not().numpy(), ~a)
  np.testing.assert_array_equal(A.where(3.0, -1.0).numpy(), np.where(a, 3.0, -1.0).astype(np.float32))

def test_padding_gated_loads_threads_and_a_big_reduce():
  a = RNG.standard_normal((512, 300)).astype(np.float32)
  out = llvm(a).pad(((2, 3), (5, 1)), value=0).reshape(517 * 306 // 3, 3).sum(axis=1)
  want = np.pad(a, ((2, 3), (5, 1))).reshape(-1, 3).sum(axis=1)
  (p,) = programs(out)  # a padded element reads element 0 (inside the buffer) and throws it away: no branch
  assert re.search(r"%(t\d+) = select i1 %t\d+, i32 %t\d+, i32 0\n  %p\d+ = getelementptr inbounds float, ptr %data1, i32 %\1\n", p.src), p.src
  np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
  big = RNG.standard_normal((256, 256)).astype(np.float32)
  (p,) = programs(llvm(big) @ llvm(big))
  assert "%tidx0.arg" in p.src or Device["LLVM"].renderer.threads == 1  # the matmul is split over threads
  np.testing.assert_allclose((llvm(big) @ llvm(big)).numpy(), big @ big, rtol=1e-4, atol=1e-3)

def test_conv_and_its_gradients_match_torch():
  torch = pytest.importorskip("torch")
  x = RNG.standard_normal((4, 3, 12, 12)).astype(np.float32)
  w = RNG.standard_normal((8, 3, 3, 3)).astype(np.float32)
  X, W = llvm(x).requires_grad_(), llvm(w).requires_grad_()
  X.conv2d(W, padding=1).relu().sum().backward()
  tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
  torch.nn.functional.conv2d(tx, tw, padding=1).relu().sum().backward()
  np.testing.assert_allclose(X.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(W.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-3)

def test_a_variable_bound_is_an_argument():
  a = RNG.standard_normal((10, 8)).astype(np.float32)
  t = llvm(a)
  for n, name in ((3, "n"), (7, "data1"), (10, "acc0"), (5, "t0")):  # names the C kernel would shadow are fine here
    v = Variable(name, 1, 10).bind(n)
    got = t.shrink(((0, v), None)).sum(axis=0).numpy()
    np.testing.assert_allclose(got, a[:n].sum(axis=0), rtol=1e-5, atol=1e-5)

def test_bad_ir_is_a_compile_error_with_llvm_words():
  comp = Device["LLVM"].compiler
  with pytest.raises(CompileError, match="(?s)LLVM rejected the kernel's IR.*use of undefined value '%nope'"):
    comp.compile("define void @k(ptr %a) {\nentry:\n  store float %nope, ptr %a\n  ret void\n}\n")

def test_without_llvmlite_the_device_says_what_to_install():
  code = ("import sys; sys.modules['llvmlite'] = None; sys.modules['llvmlite.binding'] = None\n"
          "from lazynb import Device\nok, why = Device.available('LLVM'); print(ok); print(why)")
  p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
  assert p.returncode == 0, p.stderr
  ok, why = p.stdout.strip().splitlines()
  assert ok == "False" and "pip install llvmlite" in why

def test_an_old_llvmlite_is_named_with_the_version_needed():
  code = ("import sys, types; m, b = types.ModuleType('llvmlite'), types.ModuleType('llvmlite.binding')\n"
          "m.__version__, m.binding = '0.43.0', b; sys.modules.update({'llvmlite': m, 'llvmlite.binding': b})\n"
          "from lazynb import Device\nok, why = Device.available('LLVM'); print(ok); print(why)")
  p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
  assert p.returncode == 0, p.stderr
  ok, why = p.stdout.strip().splitlines()
  assert ok == "False" and "0.45 or newer" in why and "0.43.0" in why and "pip install -U" in why

def test_the_disk_cache_serves_a_second_process(tmp_path):
  code = ("import numpy as np; from lazynb import Tensor; from lazynb.runtime import ops_llvm\n"
          "calls = []; orig = ops_llvm.LLVMCompiler.compile\n"
          "ops_llvm.LLVMCompiler.compile = lambda self, src: (calls.append(1), orig(self, src))[1]\n"
          "x = Tensor(np.arange(12, dtype=np.float32), device='LLVM'); print((x * 5 - 1).sum().item(), len(calls))")
  env = dict(os.environ, PYTHONPATH=ROOT, LAZYNB_CACHE=str(tmp_path))
  runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env) for _ in range(2)]
  for p in runs: assert p.returncode == 0, p.stderr
  (v1, n1), (v2, n2) = (p.stdout.split() for p in runs)
  assert float(v1) == float(v2) == float((np.arange(12) * 5 - 1).sum())
  assert int(n1) >= 1 and int(n2) == 0

@pytest.mark.slow
def test_noopt_and_beam_kernels_run_right(monkeypatch):
  monkeypatch.setenv("BEAM_PROGRESS", "0")
  a = RNG.standard_normal((40, 24)).astype(np.float32)
  want = (a @ a.T).max(axis=1)
  for ctx in ({"NOOPT": 1}, {"BEAM": 1}):
    with Context(**ctx):
      np.testing.assert_allclose((llvm(a) @ llvm(a.T.copy())).max(axis=1).numpy(), want, rtol=1e-5, atol=1e-4)

def test_the_magic_shows_the_llvm_ir():
  from lazynb.notebook.magic import run_code, effective, parse_args
  from lazynb.notebook import viz
  ns = {"Tensor": Tensor}
  run = run_code("a = Tensor([1.0, 2.0, 3.0])\nb = (a * 3 + 1).realize()", ns, effective(parse_args("--device LLVM")))
  assert run.error is None and ns["b"].tolist() == [4.0, 7.0, 10.0]
  (k,) = run.trace.to_json()["kernels"]
  assert k["device"] == "LLVM" and k["language"] == "LLVMRenderer" and f"define void @{k['name']}(" in k["source"]
  page = viz.text_fallback(run.trace.to_json())
  assert f"define void @{k['name']}(" in page and "fmul" in page and "(LLVM, 1 run)" in page

def test_float_constants_reach_the_kernel_exactly():
  """Constants are written in decimal (the shortest that reads back); each must arrive as the very same float."""
  consts = np.concatenate([RNG.standard_normal(6) * 10.0 ** RNG.integers(-40, 38, 6), [1e-45, 3.4028235e38, -0.0, 0.1, 1 / 3]]).astype(np.float32)
  x = np.array([1.0, -2.5, 3.0], np.float32)
  for c in consts:
    np.testing.assert_array_equal((llvm(x) + float(c)).numpy(), x + c)
  d = np.array([1.0], np.float64)
  for c in (0.1, 1 / 3, 1e-300, 2.2250738585072014e-308, 1.7976931348623157e308):
    np.testing.assert_array_equal((llvm(d) * c).numpy(), d * c)
