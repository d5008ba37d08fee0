"""Every device agrees: random chains of elementwise, reduce, movement, matmul and cast ops run on CPU, PYTHON, CPU with
NOOPT=1, LLVM (the same kernels as LLVM IR), CPU with tinygrad's DONT_GROUP_REDUCES=1 and DONT_REALIZE_EXPAND=1 (other kernels:
two reduces in one, a reduce recomputed under an expand) and (a subset) CPU with BEAM=1, each compared with numpy computing the same chain under lazynb's documented
semantics (lazynb/dtype.py: the promotion lattice, weak Python scalars, sums of bool/int8/int16 in int32, of uint8/uint16 in uint32; integers
wrap around; `//` and `%` floor like numpy, and x // 0 == x % 0 == 0 as numpy gives).

A program is generated as source text, one line per op for lazynb and one for numpy, so a failure prints a program that
runs as it is. Values stay where float results are exact or nearly so (multiples of 1/4, bounded magnitudes): no NaN or
inf (their semantics are tested elsewhere). Budget: a fixed-seed run and a random-seed run, ~1 minute together.
Float16 needs a C compiler that can do half arithmetic (on a CPU without AVX512-FP16, clang 14 cannot: use CC=gcc).
"""
import os, textwrap
import numpy as np
import pytest
from hypothesis import given, settings, seed, strategies as st, HealthCheck
from lazynb import Tensor, dtypes
from lazynb.helpers import Context

DTYPES = ["bool", "uint8", "int32", "int64", "float16", "float32"]   # the promotion lattice, in order (lazynb/dtype.py)
# the wider set: uint64 is left out (a signed int meeting it gives float16 in tinygrad's lattice, tested in test_dtypes_more.py)
WIDE = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "float32", "float64"]
INTS = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32")
FLOATS = ("float16", "float32", "float64")
FLOAT_LIMIT = {"float16": 1024.0, "float32": float(1 << 20), "float64": float(1 << 40)}  # quarters below these are exact, sums of them too
# tinygrad's switches build other kernels: reduces side by side in one kernel, a reduce read through an expand recomputed
SWITCHES = {"DONT_GROUP_REDUCES": 1, "DONT_REALIZE_EXPAND": 1}
CONFIGS = [("CPU", {}), ("PYTHON", {}), ("CPU", {"NOOPT": 1}), ("LLVM", {}), ("CPU", SWITCHES), ("CPU", {"BEAM": 1})]
BEAM_EVERY = 5  # BEAM searches are slow: about every 5th example only

def lub(a: str, b: str) -> str:
  """numpy's promotion, except an int meeting a float gives that float (tinygrad's rule; numpy may widen to float64)."""
  if (a in FLOATS) != (b in FLOATS): return a if a in FLOATS else b
  return "bool" if a == b == "bool" else str(np.promote_types(a, b))
def sum_dtype(d: str) -> str:  # tinygrad: bools and small signed ints sum in int32, small unsigned ones in uint32
  return "int32" if d in ("bool", "int8", "int16") else "uint32" if d in ("uint8", "uint16") else d
def int_limit(d: str) -> float: return float(np.iinfo(d).max) if d in UNSIGNED else float(-np.iinfo(d).min)  # the largest magnitude

# ---------------------------------------------------------------- the numpy side of each op

def np_bin(op: str, a: np.ndarray, b: np.ndarray, dt: str) -> np.ndarray:
  a, b = a.astype(dt), b.astype(dt)
  with np.errstate(all="ignore"):
    if op == "add": return np.logical_or(a, b) if dt == "bool" else a + b
    if op == "mul": return np.logical_and(a, b) if dt == "bool" else a * b
    if op == "sub": return a - b
    if op == "maximum": return np.maximum(a, b)
    if op == "minimum": return np.minimum(a, b)
    if op == "lt": return a < b
    if op == "eq": return a == b
    if op == "ne": return a != b
    if op == "floordiv": return np.floor_divide(a, b)
    if op == "mod": return np.mod(a, b)
  raise AssertionError(op)

def np_unary(op: str, a: np.ndarray) -> np.ndarray:
  with np.errstate(all="ignore"):
    if op == "neg": return np.logical_not(a) if a.dtype == np.bool_ else -a
    if op == "relu": return np.where(a > 0, a, np.zeros((), a.dtype))
    if op == "abs": return a if a.dtype == np.bool_ or str(a.dtype) in UNSIGNED else np.abs(a)
  raise AssertionError(op)

def np_reduce(op: str, a: np.ndarray, axis, keepdim: bool) -> np.ndarray:
  dt = str(a.dtype) if a.dtype != np.bool_ else "bool"
  if op == "sum":
    acc = "float32" if dt == "float16" else sum_dtype(dt)
    with np.errstate(all="ignore"): return np.sum(a.astype(acc), axis=axis, keepdims=keepdim).astype(sum_dtype(dt))
  if op == "max": return np.max(a, axis=axis, keepdims=keepdim)
  if op == "min": return np.min(a, axis=axis, keepdims=keepdim)
  if op == "mean":
    out = dt if dt in FLOATS else "float32"
    return np.mean(a.astype(np.float64), axis=axis, keepdims=keepdim).astype(out)
  raise AssertionError(op)

def np_matmul(a: np.ndarray, b: np.ndarray, dt: str) -> np.ndarray:
  """lazynb's dot: a broadcast multiply in the promoted dtype (ints wrap), a sum under sum's rules, and the result in
  the promoted dtype again (numpy's and tinygrad's: int8 @ int8 is int8, wrapped)."""
  with np.errstate(all="ignore"): prod = a.astype(dt)[..., :, None] * b.astype(dt)
  return np_cast(np_reduce("sum", prod, -2, False), dt)

def np_cast(a: np.ndarray, dt: str) -> np.ndarray:
  with np.errstate(all="ignore"): return a.astype(dt)

# ---------------------------------------------------------------- programs

class Program:
  """Lines of lazynb code and the numpy model, over inputs I0, I1, ... (numpy arrays)."""
  def __init__(self): self.inputs, self.tlines, self.nlines, self.n, self.beam = [], [], [], 0, False
  def input(self, arr: np.ndarray) -> str:
    self.inputs.append(arr)
    return f"I{len(self.inputs) - 1}"
  def step(self, tsrc: str, nsrc: str) -> str:
    v = f"v{self.n}"
    self.n += 1
    self.tlines.append(f"{v} = {tsrc}")
    self.nlines.append(f"{v} = {nsrc}")
    return v
  def source(self, device: str, ctx: dict) -> str:
    ins = "\n".join(f"I{i} = np.array({a.tolist()!r}, dtype=np.{a.dtype}).reshape({a.shape})" for i, a in enumerate(self.inputs))
    body = "\n".join(self.tlines).replace("DEV", repr(device))
    return (f"import numpy as np\nfrom lazynb import Tensor, dtypes\nfrom lazynb.helpers import Context\n{ins}\n"
            f"with Context(**{ctx!r}):\n{textwrap.indent(body, '  ')}\n  print(v{self.n - 1}.dtype, v{self.n - 1}.numpy())")

def _values(rng: np.random.Generator, shape, dt: str) -> np.ndarray:
  return np.asarray(_draw_values(rng, shape, dt))  # shape () gives a numpy scalar, which Tensor() reads as a Python number

def _draw_values(rng: np.random.Generator, shape, dt: str):
  if dt == "bool": return rng.integers(0, 2, shape).astype(bool)
  if dt == "uint8": return rng.integers(0, 256, shape).astype(np.uint8)
  if dt in UNSIGNED: return rng.integers(0, 13, shape).astype(dt)
  if dt in INTS: return rng.integers(-6, 7, shape).astype(dt)
  return (rng.integers(-16, 17, shape) / 4).astype(dt)

@st.composite
def programs(draw, dts=tuple(DTYPES)):
  rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
  p = Program()
  p.beam = draw(st.integers(0, BEAM_EVERY - 1)) == 0  # drawn, so that a failing example shrinks under the same configs
  shape = tuple(draw(st.lists(st.integers(1, 6) | st.just(0), min_size=1, max_size=4)))  # sometimes empty
  dt = draw(st.sampled_from(dts))
  arr = _values(rng, shape, dt)
  mag = float(np.abs(arr.astype(np.float64)).max(initial=0))
  name0 = p.input(arr)
  v = p.step(f"Tensor({name0}, device=DEV)", name0)
  def fresh(shape, dt):
    a = _values(rng, shape, dt)
    return p.input(a), float(np.abs(a.astype(np.float64)).max(initial=0))
  def fits(d: str, m: float) -> bool: return d not in FLOATS or m <= FLOAT_LIMIT[d]
  def wrap(d: str, m: float) -> float: return 1.0 if d == "bool" else min(m, int_limit(d)) if d in INTS else m
  kinds = ["binary", "binary", "const", "unary", "reduce", "movement", "movement", "movement", "matmul", "cast", "where", "self", "self", "pair"]
  for _ in range(draw(st.integers(2, 7))):
    kind = draw(st.sampled_from(kinds))
    nd = len(shape)
    if nd == 0 and kind in ("self", "pair"): kind = "movement"  # a scalar: reshaped
    if kind in ("binary", "where"):
      # the other operand: a fresh input, broadcastable (some dims 1) and of any dtype
      oshape = tuple(s if draw(st.booleans()) else 1 for s in shape)
      odt = draw(st.sampled_from(dts))
      name, omag = fresh(oshape, odt)
      u = lub(dt, odt)
      if kind == "where":
        m2 = wrap(u, max(mag, omag))
        if not fits(u, m2): continue
        v = p.step(f"({v} > 0).where({v}, Tensor({name}, device=DEV))", f"np.where({v} > 0, {v}.astype('{u}'), {name}.astype('{u}'))")
        mag, dt = m2, u
        continue
      ops = ["add", "mul", "maximum", "minimum", "lt", "eq", "ne"] + (["sub"] if u != "bool" else []) + (["floordiv", "mod"] if u in INTS else [])
      op = draw(st.sampled_from(ops))
      m2 = {"add": mag + omag, "sub": mag + omag, "mul": mag * omag, "floordiv": mag, "mod": omag}.get(op, max(mag, omag))
      if op in ("lt", "eq", "ne"): m2 = 1.0
      rdt = "bool" if op in ("lt", "eq", "ne") else u
      if not fits(u, max(m2, mag, omag)): continue
      tsrc = {"lt": f"{v} < T", "eq": f"{v}.eq(T)", "ne": f"{v}.ne(T)", "floordiv": f"{v} // T", "mod": f"{v} % T", "add": f"{v} + T",
              "sub": f"{v} - T", "mul": f"{v} * T", "maximum": f"{v}.maximum(T)", "minimum": f"{v}.minimum(T)"}[op]
      v = p.step(tsrc.replace("T", f"Tensor({name}, device=DEV)"), f"np_bin({op!r}, {v}, {name}, {u!r})")
      mag, dt = wrap(rdt, m2), rdt
    elif kind == "self":
      # the value combined with a view or a reduce of itself: several kernels, or one kernel reading a buffer twice
      ax = draw(st.integers(0, nd - 1))
      other, nother, odt, omag = draw(st.sampled_from([
        (f"{v}.flip({ax})", f"np.flip({v}, {ax})", dt, mag),
        (f"{v}.max({ax}, keepdim=True)", f"np_reduce('max', {v}, {ax}, True)", dt, mag),
        (f"{v}.sum({ax}, keepdim=True)", f"np_reduce('sum', {v}, {ax}, True)", sum_dtype(dt), wrap(sum_dtype(dt), mag * shape[ax])),
        (f"{v}.permute({tuple(range(nd))[::-1]!r})", f"{v}.transpose({tuple(range(nd))[::-1]!r})", dt, mag)]))
      if "permute" in other and shape != shape[::-1] or ".max" in other and shape[ax] == 0: continue
      u = lub(dt, odt)
      op = draw(st.sampled_from(["add", "mul", "maximum"] + (["sub"] if u != "bool" else [])))
      m2 = mag * omag if op == "mul" else mag + omag
      if not fits(u, max(m2, omag)): continue
      tsrc = {"add": f"{v} + ({other})", "sub": f"{v} - ({other})", "mul": f"{v} * ({other})", "maximum": f"{v}.maximum({other})"}[op]
      v = p.step(tsrc, f"np_bin({op!r}, {v}, {nother}, {u!r})")
      mag, dt = wrap(u, m2), u
    elif kind == "pair":
      # two reduces of the value over the same axis, combined: side by side in one kernel under DONT_GROUP_REDUCES=1
      ax, keep = draw(st.integers(0, nd - 1)), draw(st.booleans())
      # the max is of v, or of a fresh input as long or longer along the axis (those two reduces must not share loops)
      m = draw(st.sampled_from([0, shape[ax], shape[ax] + 1, shape[ax] + 3]))
      other, omag = (v, mag) if not m else fresh(shape[:ax] + (m,) + shape[ax + 1:], dt)
      if m: other = p.step(f"Tensor({other}, device=DEV)", other)
      n, u = shape[ax], lub(sum_dtype(dt), dt)
      if n == 0 or not fits(u, mag * n + omag): continue
      v = p.step(f"{v}.sum({ax}, keepdim={keep}) + {other}.max({ax}, keepdim={keep})",
                 f"np_bin('add', np_reduce('sum', {v}, {ax}, {keep}), np_reduce('max', {other}, {ax}, {keep}), {u!r})")
      shape = np.empty(shape).sum(axis=ax, keepdims=keep).shape
      mag, dt = wrap(u, mag * n + omag), u
    elif kind == "const":
      if dt == "bool": continue
      # a Python int the dtype cannot hold is an OverflowError (numpy 2 agrees): no negative constants for uint8
      c = draw(st.integers(0 if dt in UNSIGNED else -3, 3)) if dt in INTS else draw(st.integers(-12, 12)) / 4
      # `//` and `%` by constants, also after wrapped products (lazynb/uop/symbolic.py rewrites them only when exact)
      op = draw(st.sampled_from(["+", "*", "-"] + (["//", "%"] if dt in INTS else [])))
      if op in ("//", "%"):  # by 0 gives 0; a negative constant wraps for uint8 first (a weak scalar takes the tensor's dtype)
        name = {"//": "floordiv", "%": "mod"}[op]
        v = p.step(f"{v} {op} {c!r}", f"np_bin({name!r}, {v}, np_cast(np.array({c!r}), {dt!r}), {dt!r})")
        mag = wrap(dt, mag if op == "//" else int_limit(dt) if dt in UNSIGNED else abs(c))
        continue
      m2 = mag + abs(c) if op != "*" else mag * abs(c)
      if not fits(dt, m2): continue
      v = p.step(f"{v} {op} {c!r}", f"np_cast(np_cast({v}, 'float64' if {dt!r} in FLOATS else 'int64') {op} {c!r}, {dt!r})")
      mag = wrap(dt, m2)
    elif kind == "unary":
      op = draw(st.sampled_from(["neg", "relu", "abs"] if dt != "bool" else ["neg"]))
      v = p.step({"neg": f"-{v}", "relu": f"{v}.relu()", "abs": f"{v}.abs()"}[op], f"np_unary({op!r}, {v})")
      mag = wrap(dt, int_limit(dt) if dt in UNSIGNED and op == "neg" else mag)
    elif kind == "reduce":
      op = draw(st.sampled_from(["sum", "max", "min", "mean"]))
      axis = draw(st.sampled_from([None] + list(range(nd)) + ([tuple(range(nd))[::-1][:2]] if nd >= 2 else [])))
      keep = draw(st.booleans())
      n = int(np.prod([shape[a] for a in ((axis,) if isinstance(axis, int) else axis or range(nd))]))
      if n == 0 and op in ("max", "min", "mean"): continue  # no identity (both raise) / NaN (tested elsewhere)
      rdt = {"sum": sum_dtype(dt), "mean": dt if dt in FLOATS else "float32"}.get(op, dt)
      m2 = mag * n if op == "sum" else mag
      if not fits(rdt, m2 if op != "mean" else mag * n) or (op == "mean" and dt in INTS + ("bool",) and mag * n > FLOAT_LIMIT["float32"]): continue
      v = p.step(f"{v}.{op}(axis={axis!r}, keepdim={keep})", f"np_reduce({op!r}, {v}, {axis!r}, {keep})")
      shape = np.empty(shape).sum(axis=axis, keepdims=keep).shape
      mag, dt = wrap(rdt, m2), rdt
    elif kind == "movement":
      op = draw(st.sampled_from(["reshape", "permute", "expand", "pad", "flip", "slice"]))
      if op == "reshape" or nd == 0:
        size = int(np.prod(shape))
        if size == 0: continue
        d = draw(st.sampled_from([x for x in range(1, size + 1) if size % x == 0]))
        new = draw(st.sampled_from([(size,), (d, size // d), (size // d, 1, d)]))
        v = p.step(f"{v}.reshape({new!r})", f"{v}.reshape({new!r})")
        shape = new
      elif op == "permute":
        order = tuple(draw(st.permutations(range(nd))))
        v = p.step(f"{v}.permute({order!r})", f"{v}.transpose({order!r})")
        shape = tuple(shape[i] for i in order)
      elif op == "expand":
        ax = draw(st.integers(0, nd))
        k = draw(st.integers(2, 3))
        new = shape[:ax] + (k,) + shape[ax:]
        if len(new) > 4: continue
        v = p.step(f"{v}.unsqueeze({ax}).expand({new!r})", f"np.broadcast_to(np.expand_dims({v}, {ax}), {new!r})")
        shape = new
      elif op == "pad":
        pads = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in shape)
        v = p.step(f"{v}.pad({pads!r})", f"np.pad({v}, {pads!r})")
        shape = tuple(s + a + b for s, (a, b) in zip(shape, pads))
        mag = max(mag, 0.0)
      elif op == "flip":
        ax = draw(st.integers(0, nd - 1))
        v = p.step(f"{v}.flip({ax})", f"np.flip({v}, {ax})")
      else:
        ax = draw(st.integers(0, nd - 1))
        lo, hi = draw(st.integers(-shape[ax], shape[ax])), draw(st.integers(-shape[ax], shape[ax]))
        step = draw(st.sampled_from([1, 2, 3, -1, -2]))
        sl = (slice(None),) * ax + (slice(lo, hi, step),)
        new = np.empty(shape)[sl].shape
        if 0 in new: continue
        v = p.step(f"{v}[{sl!r}]", f"{v}[{sl!r}]")
        shape = new
    elif kind == "matmul":
      if dt == "bool" or nd == 0: continue
      m = draw(st.integers(1, 4))
      odt = draw(st.sampled_from([d for d in dts if d != "bool"]))
      name, omag = fresh((shape[-1], m), odt)
      u = lub(dt, odt)
      m2 = mag * omag * shape[-1]
      if not fits(u, m2) or u == "float16" and mag * omag > FLOAT_LIMIT["float16"]: continue
      v = p.step(f"{v} @ Tensor({name}, device=DEV)", f"np_matmul({v}, {name}, {u!r})")
      shape, dt, mag = shape[:-1] + (m,), u, wrap(u, m2)
    elif kind == "cast":
      to = draw(st.sampled_from(dts))
      if dt in FLOATS and to in UNSIGNED: continue  # float -> unsigned of a negative value is undefined in C
      if dt in FLOATS and to in INTS and mag >= int_limit(to) / 2: continue  # and of a value out of the int's range
      if not fits(to, mag): continue
      v = p.step(f"{v}.cast(dtypes.{to})", f"np_cast({v}, {to!r})")
      mag, dt = wrap(to, mag if to != "bool" else 1.0), to
  return p

# ---------------------------------------------------------------- running and comparing

def expected(p: Program) -> np.ndarray:
  ns = dict(globals(), **{f"I{i}": a for i, a in enumerate(p.inputs)})
  for line in p.nlines: exec(line, ns)
  return np.asarray(ns[f"v{p.n - 1}"])

def run(p: Program, device: str, ctx: dict) -> np.ndarray:
  ns = {"Tensor": Tensor, "dtypes": dtypes, "np": np, **{f"I{i}": a for i, a in enumerate(p.inputs)}}
  with Context(**ctx):
    for line in p.tlines: exec(line.replace("DEV", repr(device)), ns)
    t = ns[f"v{p.n - 1}"]
    return str(np.dtype(t.dtype.np)), t.numpy()

def check(p: Program, configs):
  want = expected(p)
  want_dt = "bool" if want.dtype == np.bool_ else str(want.dtype)
  for device, ctx in configs:
    try:
      got_dt, got = run(p, device, ctx)
      assert got_dt == want_dt, f"dtype {got_dt}, numpy model says {want_dt}"
      assert got.shape == want.shape, f"shape {got.shape}, numpy model says {want.shape}"
      if want_dt in FLOATS:
        tol = 2e-3 if want_dt == "float16" else 1e-5
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
      else: np.testing.assert_array_equal(got, want)
    except Exception as e:
      raise AssertionError(f"{device} {ctx} disagrees with numpy: {type(e).__name__}: {e}\n--- reproduce with:\n{p.source(device, ctx)}\n"
                           f"--- numpy model:\n" + "\n".join(p.nlines[1:]) + f"\n--- expected ({want_dt}):\n{want}") from None

def check_some(p: Program): check(p, CONFIGS if p.beam else CONFIGS[:-1])

# the fast tier's budget (FUZZ_EXAMPLES changes it); the slow tier adds a long run below
FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", 30)), deadline=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
NO_HALF = tuple(d for d in DTYPES if d != "float16")

@pytest.fixture(autouse=True)
def _quiet_beam(monkeypatch): monkeypatch.setenv("BEAM_PROGRESS", "0")

@seed(15)
@FUZZ
@given(programs(NO_HALF))
def test_devices_agree_with_numpy_fixed_seed(p): check_some(p)

@FUZZ
@given(programs(NO_HALF))
def test_devices_agree_with_numpy_random_seed(p): check_some(p)

@seed(1504)
@settings(FUZZ, max_examples=max(1, FUZZ.max_examples // 2))
@given(programs(tuple(DTYPES)))
def test_devices_agree_with_numpy_half(p): check_some(p)

@seed(2026)
@settings(FUZZ, max_examples=max(1, FUZZ.max_examples // 2))
@given(programs(tuple(WIDE)))
def test_devices_agree_with_numpy_every_int_width_and_float64(p): check_some(p)

@pytest.mark.slow
@seed(7)
@settings(FUZZ, max_examples=8 * FUZZ.max_examples)
@given(programs(tuple(WIDE)))
def test_devices_agree_with_numpy_long_run(p): check_some(p)

# ---------------------------------------------------------------- what the fuzzer and the issue found

def test_python_device_reads_empty_buffers():
  """An empty buffer is 1 byte of storage: PYTHON viewed it as float32 and failed (CPU never reads it)."""
  for dev in ("PYTHON", "CPU"):
    e = Tensor(np.zeros(0, np.float32), device=dev)
    np.testing.assert_array_equal(e.pad(((1, 1),)).numpy(), [0, 0])
    np.testing.assert_array_equal(e.cat(Tensor([1.0, 2.0], device=dev)).numpy(), [1, 2])
    np.testing.assert_array_equal((e.pad(((2, 0),)) + Tensor([1.0, 2.0], device=dev)).numpy(), [1, 2])

@pytest.mark.parametrize("beam", [1, 2])
def test_beam_on_a_fully_masked_view(beam):
  """The view below a pad of an empty slice has size 0: its index math divided by 0 and BEAM sized a scratch buffer from it."""
  with Context(BEAM=beam):
    np.testing.assert_array_equal(Tensor([1, 2])[2:].pad(((1, 1),)).numpy(), [0, 0])
    np.testing.assert_array_equal((Tensor([1, 2])[2:].pad(((1, 2),)) + Tensor([1, 2, 3])).numpy(), [1, 2, 3])
  for device, ctx in CONFIGS:
    with Context(**ctx):
      np.testing.assert_array_equal(Tensor([1, 2], device=device)[2:].pad(((1, 1),)).numpy(), [0, 0])

def test_uint8_arithmetic_wraps_before_it_is_widened():
  """Found by the fuzzer: C computes uchar arithmetic in int, so an inlined `a*b` or `-a` cast to int32 (a matmul's sum)
  kept 35371 where numpy wraps to 43."""
  a, b = np.array([217, 3, 255], np.uint8), np.array([163, 250, 2], np.uint8)
  with np.errstate(all="ignore"):
    want = [(a * b).astype(np.int32), (a + b).astype(np.int32), (-a).astype(np.int32), (a - b).astype(np.int32),
            np.array([(a * b).astype(np.int32).sum()])]
  for device, ctx in CONFIGS[:3]:
    with Context(**ctx):
      x, y = Tensor(a, device=device), Tensor(b, device=device)
      got = [(x * y).cast(dtypes.int32), (x + y).cast(dtypes.int32), (-x).cast(dtypes.int32), (x - y).cast(dtypes.int32),
             x.reshape(1, 3).dot(y.reshape(3, 1), dtype=dtypes.int32).reshape(1)]  # products wrap in uint8, summed in int32
      for g, w in zip(got, want): np.testing.assert_array_equal(g.numpy(), w, err_msg=f"{device} {ctx}")

def test_beam_on_a_flipped_padded_expand(monkeypatch):
  """Found by the fuzzer: with three views (expand, pad, flip) the rendered index has no useful bound past the mask, and
  BEAM sized its scratch buffer from that bound (~2^63 elements). The bottom view's extent bounds what is read."""
  monkeypatch.setenv("IGNORE_BEAM_CACHE", "1")
  a = Tensor([[1], [2]]).realize()
  with Context(BEAM=1):
    x = a.expand(2, 2).pad(((0, 0), (1, 0)))
    np.testing.assert_array_equal((x + x.flip(0)).numpy(), [[0, 3, 3], [0, 3, 3]])
