"""float16 on the CPU device with either C compiler, a native or a baseline -march, and the compiler's _Float16 or
the emulation (16 bits in memory, float in registers), compared bit for bit with numpy.

Each test installs a CPU device built under its knobs (CC, LAZYNB_MARCH and LAZYNB_HALF are read when a device
opens) and an empty kernel cache, so configurations never share a compiled kernel; both are restored afterwards.
"""
import itertools, shutil, subprocess
import numpy as np
import pytest
from lazynb import Tensor, Device, dtypes
from lazynb.device import CompileError, DeviceUnavailable
from lazynb.engine import realize
from lazynb.runtime import compiler_process, ops_cpu
from lazynb.runtime.ops_cpu import ClangCompiler, CPUDevice, half_support, simd_shape

CONFIGS = list(itertools.product(("clang", "gcc"), ("native", "x86-64"), ("auto", "emulate")))
IDS = ["-".join(c) for c in CONFIGS]
# the fast tier keeps each compiler's native, auto configuration; the baseline -march and the emulation are slow-tier
PARAMS = [pytest.param(c, id=i, marks=() if c[1:] == ("native", "auto") else pytest.mark.slow) for c, i in zip(CONFIGS, IDS)]

def open_device(monkeypatch, cc: str, march: str, half: str) -> str:
  """The CPU device, rebuilt under these knobs, with a kernel cache of its own for the test's duration."""
  monkeypatch.setenv("CC", cc)
  monkeypatch.setenv("LAZYNB_MARCH", march)
  monkeypatch.setenv("LAZYNB_HALF", half)
  monkeypatch.setitem(Device._opened, "CPU", CPUDevice("CPU"))
  monkeypatch.setattr(realize, "method_cache", {})
  return "CPU"

def sources(dev: str) -> list[str]: return [r.p.src for k, r in realize.method_cache.items() if k[0] == dev]

def same_bits(got: np.ndarray, want: np.ndarray, nan_payload: bool):
  """Bit-exact, -0.0 and inf included. NaNs must be NaNs of the same sign; their payload must match too when
  `nan_payload` (our emulation keeps it as numpy does; F16C hardware sets the quiet bit)."""
  assert got.dtype == want.dtype and got.shape == want.shape
  u = {2: np.uint16, 4: np.uint32}[got.dtype.itemsize]
  gb, wb, gn, wn = got.view(u), want.view(u), np.isnan(got), np.isnan(want)
  bad = np.nonzero((gn != wn) | (~wn & (gb != wb)) | (wn & (np.signbit(got) != np.signbit(want))) | (wn & nan_payload & (gb != wb)))[0]
  assert len(bad) == 0, f"{len(bad)} differ, e.g. " + ", ".join(f"{hex(gb[i])} != numpy {hex(wb[i])}" for i in bad[:6])

def all_halves() -> np.ndarray: return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)

def hard_floats() -> np.ndarray:
  """Every half, the midpoint between each two neighbours (the ties), one float ulp either side of each midpoint,
  the overflow edge (65504, 65520 and around), float subnormals, huge values, infs, NaNs with payloads, random bits."""
  h = all_halves()
  h = np.sort(h[np.isfinite(h)].astype(np.float64))
  h = np.unique(h)
  mid = ((h[:-1] + h[1:]) / 2).astype(np.float32)
  assert (mid.astype(np.float64) == (h[:-1] + h[1:]) / 2).all()  # a midpoint of halves is exact in float
  near = np.concatenate([np.nextafter(mid, np.float32(np.inf)), np.nextafter(mid, np.float32(-np.inf))])
  edge = np.array([65504, 65519, 65519.996, 65520, 65520.004, 65536, 1e5, 3.4e38, np.inf, -np.inf, 2.0**-24, 2.0**-25,
                   2.0**-25 * 1.0000001, 2.0**-26, 1e-45, -1e-45, 1.1754942e-38, 0.0, -0.0], np.float32)
  nans = np.array([0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7f802000, 0x7fbfffff, 0x7f801fff, 0x7fffffff], np.uint32).view(np.float32)
  rnd = np.random.default_rng(0).integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
  return np.concatenate([h.astype(np.float32), mid, near, edge, nans, rnd])

@pytest.mark.parametrize("cfg", PARAMS)
def test_half_to_float_every_bit_pattern(monkeypatch, cfg):
  dev = open_device(monkeypatch, *cfg)
  h = all_halves()
  with np.errstate(invalid="ignore"): want = h.astype(np.float32)
  same_bits(Tensor(h, device=dev).float().numpy(), want, nan_payload=cfg[2] == "emulate")

@pytest.mark.parametrize("cfg", PARAMS)
def test_float_to_half_rounds_like_numpy(monkeypatch, cfg):
  dev = open_device(monkeypatch, *cfg)
  f = hard_floats()
  with np.errstate(all="ignore"): want = f.astype(np.float16)
  same_bits(Tensor(f, device=dev).half().numpy(), want, nan_payload=cfg[2] == "emulate")

@pytest.mark.parametrize("cfg", PARAMS)
def test_every_half_op_rounds_to_half(monkeypatch, cfg):
  """numpy rounds each float16 operation to half. (1 + 2^-11) * 3 is 3 that way; kept in float it would be 3 + 2^-9."""
  dev = open_device(monkeypatch, *cfg)
  rng = np.random.default_rng(1)
  a = np.concatenate([[1.0, 65504, 2.0**-24, -0.0, 1000, 0.1], rng.standard_normal(250) * 30]).astype(np.float16)
  b = np.concatenate([[2.0**-11, 65504, 2.0**-24, 0.0, 100, 0.2], rng.standard_normal(250)]).astype(np.float16)
  c = np.concatenate([[3.0, 2, 0.5, 1, 1000, 3], rng.standard_normal(250) * 4]).astype(np.float16)
  ta, tb, tc = (Tensor(x, device=dev) for x in (a, b, c))
  with np.errstate(all="ignore"):
    cases = [((ta + tb) * tc, (a + b) * c), (ta * tb + tc, a * b + c), (ta - tb * tc, a - b * c),
             (ta / tb, a * np.reciprocal(b)), ((ta * tc).sqrt() * tb, np.sqrt(a * c) * b), (ta.reciprocal() + tc, np.reciprocal(a) + c),
             (ta.maximum(tc) * tb, np.maximum(a, c) * b), ((ta < tb).where(ta * tc, tb * tc), np.where(a < b, a * c, b * c)),
             (-ta * tb, -a * b), ((ta + tb).cast(dtypes.int32), (a + b).astype(np.int32)),
             (Tensor(np.arange(-70000, 70000, 7, dtype=np.int32), device=dev).half(), np.arange(-70000, 70000, 7, dtype=np.int32).astype(np.float16))]
    for got, want in cases:
      if got.dtype is dtypes.int32: np.testing.assert_array_equal(got.numpy()[np.isfinite(a + b)], want[np.isfinite(a + b)])
      else: same_bits(got.numpy(), want, nan_payload=False)
  assert ((ta[:1] + tb[:1]) * tc[:1]).numpy()[0] == 3.0

@pytest.mark.parametrize("cfg", PARAMS)
def test_half_reductions_and_matmul(monkeypatch, cfg):
  dev = open_device(monkeypatch, *cfg)
  x = np.random.default_rng(2).standard_normal((16, 24)).astype(np.float16)
  y = np.random.default_rng(3).standard_normal((24, 8)).astype(np.float16)
  tx = Tensor(x, device=dev)
  same_bits(tx.max(1).numpy(), x.max(1), nan_payload=False)
  np.testing.assert_allclose(tx.sum(0).numpy().astype(np.float64), x.astype(np.float64).sum(0), rtol=2e-3, atol=2e-3)
  np.testing.assert_allclose((tx @ Tensor(y, device=dev)).numpy().astype(np.float64), x.astype(np.float64) @ y, rtol=5e-3, atol=5e-3)

@pytest.mark.parametrize("cfg", PARAMS)
def test_auto_uses_float16_only_where_the_compiler_has_it(monkeypatch, cfg):
  """auto picks _Float16 exactly when the probe passed; emulate never writes it. Independent check: a compiler that
  cannot even parse _Float16 (clang 14 without AVX512-FP16) must not be used natively."""
  cc, march, half = cfg
  dev = open_device(monkeypatch, cc, march, half)
  (Tensor([1.5, 2.5], dtype=dtypes.float16, device=dev) * 3).realize()
  src = "\n".join(sources(dev))
  native = half == "auto" and Device[dev].compiler.half_native()
  assert ("_Float16" in src) == native and ("lz_h2f" in src) == (not native)
  parses = subprocess.run([cc, f"-march={march}", "-fsyntax-only", "-x", "c", "-"], input=b"_Float16 f(_Float16 a) { return a * a; }",
                          capture_output=True).returncode == 0
  if not parses: assert not Device[dev].compiler.half_native()

@pytest.mark.parametrize("cc,march", list(itertools.product(("clang", "gcc"), ("native", "x86-64"))))
def test_forced_native_half_works_or_says_why(monkeypatch, cc, march):
  dev = open_device(monkeypatch, cc, march, "native")
  t = Tensor(np.array([1, 2.0**-11, 3], np.float16), device=dev)
  if half_support(cc, Device[dev].compiler.half_args) == "":
    assert ((t[:1] + t[1:2]) * t[2:]).numpy()[0] == 3.0
    assert "_Float16" in "\n".join(sources(dev))
  else:
    with pytest.raises(CompileError, match="LAZYNB_HALF=native.*LAZYNB_HALF=auto"): (t * 2).realize()

def record_commands(monkeypatch) -> list:
  """Every command ops_cpu runs from now on (they still run): its probes, and the kernel compiles (which may go to a
  compiler started ahead of time, see compiler_process; their command gets `-o <memory>`)."""
  calls = []
  real_run, real_compile = subprocess.run, compiler_process.run
  def recording(cmd, *a, **kw):
    calls.append(cmd)
    return real_run(cmd, *a, **kw)
  def compiling(cmd, *a, **kw):
    calls.append(list(cmd) + ["-o", "<memory>"])
    return real_compile(cmd, *a, **kw)
  monkeypatch.setattr(ops_cpu.subprocess, "run", recording)
  monkeypatch.setattr(compiler_process, "run", compiling)
  return calls

def test_probe_runs_once_and_only_for_half_kernels(monkeypatch):
  monkeypatch.setattr(ops_cpu, "_half_probe", {})
  calls = record_commands(monkeypatch)
  dev = open_device(monkeypatch, "clang", "native", "auto")
  n0 = len(calls)  # opening the device asks only for the target's macros (cached per compiler and -march)
  (Tensor([1.0, 2.0], device=dev) + 1).realize()
  assert ops_cpu._half_probe == {}
  for _ in range(3): (Tensor([1.0, 2.0], dtype=dtypes.float16, device=dev) * 3).realize()
  assert list(ops_cpu._half_probe) == [("clang", Device[dev].compiler.half_args)]
  probes = [c for c in calls[n0:] if "-o" in c and c[-1].endswith("probe.so")]
  assert len(probes) == 1

def test_every_knob_is_in_the_compile_cache_key(monkeypatch):
  keys = {}
  for cc, march, half in itertools.product(("clang", "gcc"), ("native", "x86-64"), ("auto", "native", "emulate")):
    monkeypatch.setenv("CC", cc)
    monkeypatch.setenv("LAZYNB_MARCH", march)
    monkeypatch.setenv("LAZYNB_HALF", half)
    key = ClangCompiler().cachekey
    assert cc in key and f"-march={march}" in key and f"half={half}" in key
    keys[key] = (cc, march, half)
  assert len(keys) == 12

@pytest.mark.parametrize("env,err,match", [({"LAZYNB_HALF": "fast"}, ValueError, "LAZYNB_HALF='fast'.*auto, native, emulate"),
                                           ({"LAZYNB_MARCH": "no-such-cpu"}, ValueError, "rejects -march=no-such-cpu .LAZYNB_MARCH."),
                                           ({"LAZYNB_MARCH": "native -O0"}, ValueError, "not a -march name"),
                                           ({"CC": "no-such-compiler-xyz"}, DeviceUnavailable, "not on the PATH: install it")])
def test_bad_knob_values_are_clear_errors(monkeypatch, env, err, match):
  for k, v in env.items(): monkeypatch.setenv(k, v)
  with pytest.raises(err, match=match): CPUDevice("CPU")

def test_no_compiler_says_what_to_install(monkeypatch):
  monkeypatch.delenv("CC", raising=False)
  monkeypatch.setattr(ops_cpu.shutil, "which", lambda name: None)
  with pytest.raises(DeviceUnavailable, match="apt-get install -y clang"): CPUDevice("CPU")

def test_march_this_cpu_cannot_run_is_refused(monkeypatch):
  """Kernels built for instructions the CPU lacks die with SIGILL, taking Python with them: refuse the -march first.
  (Pretend -march=native has no vector extensions at all, so that the baseline's SSE2 is 'missing'.)"""
  monkeypatch.setitem(ops_cpu._macros, ("gcc", "native"), frozenset({"__x86_64__"}))
  monkeypatch.setenv("CC", "gcc")
  monkeypatch.setenv("LAZYNB_MARCH", "x86-64")
  with pytest.raises(DeviceUnavailable, match="LAZYNB_MARCH=x86-64: gcc would use .*__SSE2__.*Illegal instruction"): CPUDevice("CPU")

@pytest.mark.parametrize("cc", ["clang", "gcc"])
def test_register_tile_follows_the_march(monkeypatch, cc):
  """The kernel heuristic tiles for the vector registers the compiler will use: SSE at the baseline, AVX2, AVX-512."""
  assert simd_shape(cc, "x86-64") == (4, 16) and simd_shape(cc, "x86-64-v3") == (8, 16) and simd_shape(cc, "x86-64-v4") == (16, 32)
  dev = open_device(monkeypatch, cc, "x86-64", "auto")
  assert (Device[dev].renderer.simd_floats, Device[dev].renderer.simd_regs) == (4, 16)

@pytest.mark.parametrize("cc", ["clang", "gcc"])
def test_compile_error_shows_line_and_message(monkeypatch, cc):
  monkeypatch.setenv("CC", cc)
  with pytest.raises(CompileError, match=rf"(?s){cc} failed to compile.*line 2: int y = undeclared_name;.*error: .*undeclared_name"):
    ClangCompiler().compile("void k(float* a) {\n  int y = undeclared_name;\n}")

def test_both_compilers_are_installed():
  """CI must have both (.ci/run installs them): the tests above are only worth something if they ran with each."""
  assert shutil.which("clang") and shutil.which("gcc")

# ---------------------------------------------------------------- a compiler's own bugs
@pytest.mark.slow
@pytest.mark.parametrize("cc", ["clang", "gcc"])
def test_reduce_over_flipped_views_with_each_compiler(monkeypatch, cc):
  """gcc 12's loop vectorizer summed a loop walking memory backwards wrongly (flip(1) of a (4, 2) tensor summed to -35,
  not -28): every small shape and flip, summed whole and along each axis, with both compilers."""
  dev = open_device(monkeypatch, cc, "native", "auto")
  for shape in [s for n in (1, 2, 3) for s in itertools.product((1, 2, 3, 4), repeat=n)]:
    a = (np.arange(int(np.prod(shape)), dtype=np.float32) - 7).reshape(shape)
    for k in range(1, len(shape) + 1):
      for axes in itertools.combinations(range(len(shape)), k):
        t = Tensor(a, device=dev).flip(axes)
        np.testing.assert_allclose(t.sum().numpy(), np.flip(a, axes).sum(), err_msg=f"{cc} {shape} flip{axes}")
        np.testing.assert_allclose(t.sum(-1).numpy(), np.flip(a, axes).sum(-1), err_msg=f"{cc} {shape} flip{axes} sum(-1)")

@pytest.mark.parametrize("cc", ["clang", "gcc"])
def test_half_kernels_round_every_step_and_float_kernels_keep_fma(monkeypatch, cc):
  """One schedule with a float16 kernel and a float32 kernel: the half kernel is compiled without fused multiply-adds
  (a - b*c rounds b*c to half first: 65504 - 65504*2 is -inf, as numpy; fused it would be -65504), the float kernel in
  the same schedule still with them. The compiler commands are read as they run."""
  dev = open_device(monkeypatch, cc, "native", "auto")
  monkeypatch.setattr(Device[dev].compiler, "lookup", lambda src: None)  # compiled now, not read from the disk cache
  cmds = record_commands(monkeypatch)
  a, b = np.array([65504, 1, 3], np.float16), np.array([2, 2.0**-11, 0.5], np.float16)
  x = np.random.default_rng(4).standard_normal((8, 8)).astype(np.float32)
  th, tb, tx = Tensor(a, device=dev), Tensor(b, device=dev), Tensor(x, device=dev)
  h, f = th - th * tb, (tx @ tx) + 1
  Tensor.realize(h, f)
  with np.errstate(all="ignore"): same_bits(h.numpy(), a - a * b, nan_payload=False)
  np.testing.assert_allclose(f.numpy(), x @ x + 1, rtol=1e-5, atol=1e-5)
  builds = [c for c in cmds if "-o" in c and not c[-1].endswith("probe.so")]
  native = Device[dev].compiler.half_native()
  assert native == (half_support(cc, Device[dev].compiler.half_args) == "")
  flags = {("_Float16" in s): Device[dev].compiler.args_for(s) for s in sources(dev)}
  assert "-ffp-contract=fast" in flags[False]
  if native: assert "-ffp-contract=off" in flags[True] and "-ffp-contract=fast" not in flags[True]
  assert builds and all(("-ffp-contract=off" in c) or ("-ffp-contract=fast" in c) for c in builds)
  assert any("-ffp-contract=fast" in c for c in builds) and (not native or any("-ffp-contract=off" in c for c in builds))
