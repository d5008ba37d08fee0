"""BEAM never changes an answer. Every action BEAM may take (engine/search.py's `neighbours`: add, drop or resize one opt)
must give each kernel the values the unoptimized (NOOPT) kernel gives, on data that makes the lanes PADTO adds dangerous:
zeros in divisors (x / 0 = inf, log(0) = -inf, and an integer // 0 traps in C), negative numbers, NaN from real lanes.

Three tests: the direct one applies every action BEAM may try, and one more after each PADTO (where padded lanes meet
UPCAST, UNROLL, GROUP), to kernels of the reproducers and of the differential fuzzer's programs, and compares values with
NOOPT; a BEAM=2 run with a fresh cache over the fuzzer's programs; the issue's reproducers against numpy under BEAM=2.
A SIGFPE kills the process it happens in, so each runs in a child process: a trap is a failed test, not a dead pytest."""
from __future__ import annotations
import ast, os, pathlib, signal, subprocess, sys
from collections import Counter
import numpy as np
import pytest
from hypothesis import given, settings, seed, Phase, HealthCheck, strategies as st

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", 100))

def in_child(call: str, tmp_path, timeout: int = 1200, **env):
  """Run `call` (Python source, this module imported as t) in a fresh process with its own empty disk cache."""
  src = f"import sys; sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / 'tests')!r}]; import test_beam_safety as t; {call}"
  e = {**os.environ, "LAZYNB_CACHE": str(tmp_path / "cache"), "BEAM_PROGRESS": "0", "PYTHONPATH": str(ROOT), **env}
  p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=timeout, env=e, cwd=str(ROOT))
  how = f"killed by {signal.Signals(-p.returncode).name}" if p.returncode < 0 else f"exit {p.returncode}"
  assert p.returncode == 0, f"{call}: {how}\n--- stdout\n{p.stdout[-4000:]}\n--- stderr\n{p.stderr[-6000:]}"
  return p.stdout

# ---------------------------------------------------------------- the kernels: reproducers and their siblings

def _data(seed_: int):
  r = np.random.default_rng(seed_)
  pos = lambda *s: (r.random(s) + 0.25).astype(np.float32)  # noqa: E731
  signed = lambda *s: (r.integers(-8, 9, s) / 4).astype(np.float32)  # noqa: E731  zeros and negatives included
  ints = lambda dt, *s: r.integers(-7, 8, s).astype(dt)  # noqa: E731  zeros in every divisor of 17 or more
  return pos, signed, ints

def cases() -> dict:
  """name -> a function making the tensor (on `device`). Odd sizes (17, 21, 31, 33) are what PADTO pads."""
  from lazynb import Tensor, dtypes  # noqa: F401
  pos, signed, ints = _data(0)
  def T(a, d): return Tensor(a, device=d)
  x33, y33, x17, y17 = pos(3, 33), pos(3, 33), pos(4, 17), pos(4, 17)
  s31, s33, p31 = signed(4, 31), signed(33, 5), pos(4, 31)
  m7, m33 = signed(7, 33), signed(33, 5)
  x3d, y3d, w12 = pos(6, 8, 17), signed(6, 8, 17), signed(12, 22)
  a33, b33 = ints("int32", 33), ints("int32", 33)
  a31, b31 = ints("int32", 3, 31), ints("int32", 1, 31)
  i8a, i8b = ints("int8", 33), ints("int8", 33)
  big = np.array([np.iinfo(np.int32).min, 7, -7, 0] * 8 + [5], np.int32)
  minus = np.array([-1, -1, 0, 3] * 8 + [-1], np.int32)
  u8a, u8b = np.arange(17, dtype=np.uint8) * 13, np.arange(17, dtype=np.uint8) % 4
  return {
    "div_sum": lambda d: (T(x33, d) / T(y33, d)).sum(1),
    "log_mul_sum": lambda d: (T(x17, d) * T(y17, d).log()).sum(1),
    "div_by_zero_sum": lambda d: (T(p31, d) / T(s31, d)).sum(1),
    "recip_max": lambda d: (1 / T(s31, d)).max(1),
    "exp_sum": lambda d: T(s31, d).exp().sum(1),
    "log_min_axis0": lambda d: T(s33, d).log().min(0),
    "sqrt_mean": lambda d: T(s31, d).sqrt().mean(1),
    "div_elementwise": lambda d: T(x33[0], d) / T(s33[:, 0], d),
    "matmul_33": lambda d: T(m7, d) @ T(m33, d),
    "softmax_33": lambda d: T(s33.T, d).softmax(1),
    "div_sum_two_axes": lambda d: (T(x3d, d) / T(y3d, d)).sum((0, 2)),
    "log_sum_12x22": lambda d: (T(w12, d).log() * 2).sum(0),
    "bool_sum": lambda d: (T(s31, d) > 0).sum(1),
    "int_floordiv_abs": lambda d: (T(a33, d) // T(b33, d)).abs(),
    "int_mod": lambda d: T(a33[:17], d) % T(b33[:17], d),
    "int_floordiv_sum": lambda d: (T(a31, d) // T(b31, d)).sum(1),
    "int_mod_max": lambda d: (T(a31, d) % T(b31, d)).max(1),
    "int_const_div": lambda d: T(a33, d) // 3 + T(a33, d) % -5,
    "int_min_by_minus_one": lambda d: T(big, d) // T(minus, d) + T(big, d) % T(minus, d),
    "int8_floordiv": lambda d: T(i8a, d) // T(i8b, d),
    "uint8_mod_sum": lambda d: (T(u8a, d) % T(u8b, d)).reshape(1, 17).sum(1),
  }

# ---------------------------------------------------------------- one kernel, every action

def action_space(k):
  """The kernels BEAM may reach in one step (`neighbours`) from the plain kernel and from the heuristic's, where it starts,
  and one more step from each with a PADTO (the padded axis split by UPCAST, UNROLL or GROUP), within BEAM's size limits."""
  from lazynb.codegen.kernel import hand_coded_optimizations
  from lazynb.engine.search import neighbours, too_big
  heur = k.copy()
  hand_coded_optimizations(heur)
  out = {tuple(kk.applied_opts): kk for base in (k, heur) for kk in [base] + neighbours(base) if not too_big(kk)}
  for kk in [kk for opts, kk in out.items() if any(o.op.name == "PADTO" for o in opts)]:
    out.update({tuple(n.applied_opts): n for n in neighbours(kk) if not too_big(n)})
  return out

def _same(got: np.ndarray, want: np.ndarray) -> bool:
  if np.issubdtype(want.dtype, np.floating):  # UNROLL and GROUP add in another order: close, and the same NaN and inf
    return bool(np.all(np.isnan(got) == np.isnan(want)) and np.allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True))
  return bool(np.array_equal(got, want))

def check_kernels(t, label: str, device: str) -> int:
  """Run `t`'s schedule item by item; each kernel is run with NOOPT (its reference, and what later kernels read) and with
  every kernel in its action space, on the same inputs. Counts the variants compared, in all and per opt they use."""
  from lazynb import Device
  from lazynb.codegen import get_program
  from lazynb.codegen.kernel import Kernel
  from lazynb.engine.realize import CompiledRunner, exec_item
  from lazynb.engine.schedule import create_schedule
  from lazynb.engine.search import _Timer
  items, _ = create_schedule([t.uop])
  counts: Counter = Counter()
  for si in items:
    if si.kind != "kernel" or si.bufs[0].size == 0 or si.var_vals:
      exec_item(si)
      continue
    for b in si.bufs: b.allocate()
    renderer = Device[si.bufs[0].device].renderer
    outs = sorted({s.src[0].arg for s in si.ast.src})
    if any(si.bufs[o] in si.bufs[:o] + si.bufs[o + 1:] for o in outs): raise AssertionError(f"{label}: an output is also an input")
    plain = CompiledRunner(get_program(si.ast, renderer, []))
    plain(list(si.bufs))
    want = [si.bufs[o].numpy().copy() for o in outs]
    space = action_space(Kernel(si.ast, renderer))
    timer = _Timer(list(si.bufs))
    try: runners = timer.compile_all(list(space.values()))
    finally: timer.close()
    assert not timer.skipped, f"{label}: candidates that did not compile: {timer.skipped[:5]}"
    kname = Kernel(si.ast, renderer).function_name
    for opts, r in zip(space, runners):
      print(f"{label}: {kname} {list(opts)}", flush=True)  # the last line names the culprit if the process dies
      for o in outs:  # a sentinel where the result goes: a store that is skipped shows
        si.bufs[o].copyin(memoryview(np.full(si.bufs[o].size, 77, si.bufs[o].dtype.np).view(np.uint8)))
      r(list(si.bufs))
      for o, w in zip(outs, want):
        got = si.bufs[o].numpy()
        assert _same(got, w), f"{label} on {device}: kernel {kname} with {list(opts)} gives\n{got}\nNOOPT gives\n{w}"
      counts.update(["variants", *{o.op.name for o in opts}])
    for o, w in zip(outs, want): si.bufs[o].copyin(memoryview(np.ascontiguousarray(w).view(np.uint8)))  # later kernels read NOOPT's values
  return counts

def sweep_cases(device: str, names: list[str] | None = None):
  cs = cases()
  total: Counter = Counter()
  for name in names or list(cs):
    total += (c := check_kernels(cs[name](device), name, device))
    assert c["PADTO"], f"{name}: no kernel with a PADTO was tried"
  print(f"compared {dict(total)}")

# a fuzzer program's value v (made float32 F or int32 I) through ops whose padded lanes go wrong: x / 0, log(0), int // 0
TAILS = [None, "(F / F.flip(0)).sum(-1)", "(F * F.abs().log()).sum()", "F.reciprocal().max(-1)", "(F.sqrt() + F).mean(0)",
         "F.exp().sum(-1)", "(I // I.flip(0)).abs()", "(I % (I - 1)).sum(-1)", "I // 3 - I % -5"]

def _fuzz_program_tensor(p, device: str, tail: str | None):
  from lazynb import Tensor, dtypes
  ns = {"Tensor": Tensor, "dtypes": dtypes, "np": np, **{f"I{i}": a for i, a in enumerate(p.inputs)}}
  for line in p.tlines: exec(line.replace("DEV", repr(device)), ns)
  v = ns[f"v{p.n - 1}"]
  if tail is None: return v
  v = v.reshape(1) if v.ndim == 0 else v
  if "max" in tail and v.shape[-1] == 0: return v  # no identity
  return eval(tail, {"F": v.cast(dtypes.float32), "I": v.cast(dtypes.int32)})

def _program_source(p, device: str, ctx: dict, tail: str | None) -> str:
  return p.source(device, ctx) + (f"\n# then, with v the last value (reshaped to (1,) if 0-d), F = v.cast(float32), I = v.cast(int32):\n# {tail}" if tail else "")

def _fuzzed(run, examples: int, seed_: int):
  """Run `run(program, tail)` over the differential fuzzer's programs (tests/test_fuzz_differential.py draws them), each
  followed by one of TAILS; no shrinking (every step of it would be a search)."""
  from test_fuzz_differential import programs, NO_HALF
  @seed(seed_)
  @settings(max_examples=examples, deadline=None, phases=[Phase.generate], database=None, print_blob=True, suppress_health_check=list(HealthCheck))
  @given(programs(NO_HALF), st.sampled_from(TAILS))
  def go(p, tail): run(p, tail)
  go()

def sweep_fuzz(device: str, examples: int, seed_: int):
  """Each kernel of the fuzzer's programs through its action space, against NOOPT."""
  total: Counter = Counter()
  def run(p, tail):
    try: total.update(check_kernels(_fuzz_program_tensor(p, device, tail), "a fuzzer program", device))
    except AssertionError as e: raise AssertionError(f"{e}\n--- the program:\n{_program_source(p, device, {}, tail)}") from None
  _fuzzed(run, examples, seed_)
  print(f"compared {dict(total)}")

def beam_fuzz(device: str, examples: int, seed_: int):
  """BEAM=2 (the disk cache is fresh: a real search) against NOOPT on the fuzzer's programs."""
  from lazynb.helpers import Context
  def run(p, tail):
    with Context(NOOPT=1): want = _fuzz_program_tensor(p, device, tail).numpy()
    with Context(BEAM=2): got = _fuzz_program_tensor(p, device, tail).numpy()
    assert got.shape == want.shape and _same(got, want), \
      f"BEAM=2 gives\n{got}\nNOOPT gives\n{want}\n--- the program:\n{_program_source(p, device, {'BEAM': 2}, tail)}"
  _fuzzed(run, examples, seed_)

def beam_reproducers(device: str):
  """The issue's reproducers under BEAM=2 against numpy: float division and log products summed over odd sizes, and
  integer // and % with zeros in the divisor."""
  from lazynb import Tensor
  from lazynb.helpers import Context
  pos, _, ints = _data(1)
  with Context(BEAM=2):
    for n in (5, 17, 21, 31, 33):
      x, y = pos(3, n), pos(3, n)
      np.testing.assert_allclose((Tensor(x, device=device) / Tensor(y, device=device)).sum(1).numpy(), (x / y).sum(1), rtol=1e-5)
      np.testing.assert_allclose((Tensor(x, device=device) * Tensor(y, device=device).log()).sum(1).numpy(), (x * np.log(y)).sum(1),
                                 rtol=1e-5, atol=1e-5)
    for n in (17, 31, 33):
      a, b = ints("int32", n), ints("int32", n)
      b[::5] = 0
      with np.errstate(all="ignore"): fd, md = np.abs(np.floor_divide(a, b)), np.mod(a, b)
      np.testing.assert_array_equal((Tensor(a, device=device) // Tensor(b, device=device)).abs().numpy(), np.where(b == 0, 0, fd))
      np.testing.assert_array_equal((Tensor(a, device=device) % Tensor(b, device=device)).numpy(), np.where(b == 0, 0, md))
  print("ok")

# ---------------------------------------------------------------- the tests

def _devices():
  from lazynb import Device
  out = ["CPU", "LLVM"]
  try: Device["CL"]; out.append("CL")  # noqa: E702  local and shared memory: LOCAL, GROUP and GROUPTOP are in its action space
  except Exception: pass
  return out

@pytest.mark.parametrize("device", ["CPU", "LLVM", "CL"])
def test_every_beam_action_keeps_values(device, tmp_path):
  if device not in _devices(): pytest.skip(f"no {device} device")
  counts = ast.literal_eval(in_child(f"t.sweep_cases({device!r})", tmp_path).rsplit("compared ", 1)[1])
  assert counts["PADTO"] >= 100 and counts["UPCAST"] and counts["UNROLL"], counts
  if device == "CL": assert counts["LOCAL"] and counts["GROUPTOP"], counts
  else: assert counts["THREAD"], counts

def test_every_beam_action_keeps_values_on_fuzzer_programs(tmp_path):
  in_child(f"t.sweep_fuzz('CPU', {max(4, EXAMPLES // 4)}, 30)", tmp_path)

def test_beam_search_matches_noopt_on_fuzzer_programs(tmp_path):
  in_child(f"t.beam_fuzz('CPU', {max(4, EXAMPLES // 4)}, 2808)", tmp_path)

@pytest.mark.parametrize("device", ["CPU", "LLVM"])
def test_beam_reproducers_against_numpy(device, tmp_path):
  assert "ok" in in_child(f"t.beam_reproducers({device!r})", tmp_path)
