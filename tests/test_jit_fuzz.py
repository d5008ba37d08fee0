"""TinyJit against the plain function: a differential fuzzer.

Hypothesis draws a small function body from a vocabulary (elementwise ops and reductions, movement views of the inputs,
in-place writes into inputs or views of them -- assign, setitem with slices, ints or index tensors, += --, random numbers,
host data, Python scalars passed as frozen arguments, a global tensor it reads and one it updates) and what it returns
(computed tensors, inputs, views of inputs, constants, in a tuple, list or dict), and the caller's inputs: buffers, lazy
host data, lazy expressions, and views of bigger tensors whose base the caller keeps or drops (holding other views of
that base, or of the input, or not). The function runs plainly and through TinyJit for CALLS calls, each with fresh inputs
of the same values on both sides and `Tensor.manual_seed(call)` first. After each call everything the caller can see is
compared with the plain run: what the call returned, each input, each base and view the caller holds (also those of
earlier calls: memory a call never touched must be left alone), the global tensors; then the caller writes through each
returned view of an input (it must reach that input as in the plain run) and all is compared again.

A JitError is accepted where docs/jit.md says TinyJit raises one (then the jitted run stops);
a wrong value, a changed buffer or any other exception fails, with the whole program as runnable source. The plain run
is the reference (tests/test_view_writes.py checks the plain writes against numpy). HYPOTHESIS_SCALE=10 runs ten times
the examples; the slow tier has a long run.
"""
import textwrap
import numpy as np
import pytest
from hypothesis import given, settings, seed, strategies as st, HealthCheck, assume
from lazynb import Tensor, TinyJit, Device
from lazynb.engine.jit import JitError
from test_view_writes import ex, view_op, basic_index

CALLS = 5
DEVICES = ["CPU", "PYTHON", "LLVM"]
SHAPES = [(4,), (2, 3), (3, 2), (2, 2, 2)]
# the JitErrors docs/jit.md lists (no kernel ran; host data or Python arguments that change;
# inputs that change or share memory; a returned view with a variable size of its own): any other JitError is a failure
DOCUMENTED = ("nothing was jitted", "different data from Python values", "non-Tensor arguments changed", "inputs changed",
              "shares its memory", "variable of its own")
FUZZ = settings(deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                        HealthCheck.filter_too_much])

def vals(shape, call: int, k: int) -> np.ndarray:
  """The values of the caller's k-th array on this call: small integers (exact in float32), new on every call."""
  return np.random.default_rng(1000 * call + k).integers(-4, 5, size=shape).astype(np.float32)

# ---------------------------------------------------------------- drawing a program

def _shape_of(shape, op) -> tuple:
  k, arg = op
  if k == "reshape": return arg
  if k == "permute": return tuple(shape[a] for a in arg)
  return shape[::-1] if k == "T" else np.empty(shape)[arg].shape if k == "index" else shape

def _view_src(name: str, op) -> str:
  k, arg = op
  return {"index": f"{name}[{arg!r}]", "flip": f"{name}.flip({arg})", "permute": f"{name}.permute({arg})", "T": f"{name}.T",
          "detach": f"{name}.detach()", "reshape": f"{name}.reshape({arg})"}[k]

def _caller(draw, shape, n_in: int) -> tuple[str, list[tuple[str, bool]]]:
  """The source of make(i): call i's inputs and what the caller holds. And (name, writable) for each held tensor."""
  lines, held, k = [], [], 0
  for j in range(n_in):
    kind = draw(st.sampled_from(["buffer", "lazy", "expr", "view", "view", "view"]))
    x = f"x{j}"
    if kind == "buffer": lines.append(f"{x} = Tensor(vals({shape}, i, {j})).realize()")
    elif kind == "lazy": lines.append(f"{x} = Tensor(vals({shape}, i, {j}))")
    elif kind == "expr": lines.append(f"{x} = Tensor(vals({shape}, i, {j})) * 2 - 1")
    else:
      how = draw(st.sampled_from(["row", "step", "permute", "flip", "reshape"]))
      if how == "row": bshape, view = (2, *shape), f"b{j}[{draw(st.integers(0, 1))}]"
      elif how == "step": bshape, view = (2 * shape[0], *shape[1:]), f"b{j}[{draw(st.integers(0, 1))}::2]"
      elif how == "permute": bshape, view = shape[::-1], f"b{j}.permute({tuple(reversed(range(len(shape))))})"
      elif how == "flip": bshape, view = shape, f"b{j}.flip(0)"
      else: bshape, view = (int(np.prod(shape)),), f"b{j}.reshape({shape})"
      lines.append(f"b{j} = Tensor(vals({bshape}, i, {j}))" + draw(st.sampled_from([".realize()", "", " * 2 - 1"])))  # data, lazy data, an expression
      lines.append(f"{x} = {view}")
      if draw(st.booleans()):
        lines.append(f"w{j} = b{j}[:1]")  # another view of the base (it overlaps x or not)
        held.append((f"w{j}", True))
      if draw(st.booleans()): held.append((f"b{j}", True))
      else: lines.append(f"del b{j}")  # the base is gone: x (and w) stand alone
    if draw(st.booleans()):
      lines.append(f"u{j} = {x}.flip(0)")  # a view of the input, made by the caller
      held.append((f"u{j}", True))
    if draw(st.integers(0, 3)) == 0:
      lines.append(f"z{j} = {x} * 2 + 1")  # a lazy value of the input's contents before the call
      held.append((f"z{j}", False))
    k += 1
  lines.append("other = Tensor(vals((3,), i, 99)).realize()")  # memory the function never sees
  held.append(("other", False))
  ret = "[" + ", ".join(f"x{j}" for j in range(n_in)) + "], {" + ", ".join(f"{n!r}: {n}" for n, _ in held) + "}"
  glob = f"W = Tensor(vals({shape}, 7, 7)).realize()  # a global the function reads\nS = Tensor.zeros(3).contiguous().realize()  # one it updates\n"
  return glob + "def make(i):\n" + textwrap.indent("\n".join(lines) + f"\nreturn {ret}", "  "), held

@st.composite
def programs(draw):
  """(the caller's source, the function's source, call with keywords, the keys of the returned values that view an input)."""
  shape = draw(st.sampled_from(SHAPES))
  n_in = draw(st.integers(1, 3))
  make_src, _ = _caller(draw, shape, n_in)
  kint = 1  # the k every call passes (check)
  # the function's values: name -> (shape, writable, the input it views or None)
  env: dict[str, tuple] = {f"x{j}": (shape, True, j) for j in range(n_in)}
  env["W"] = (shape, False, None)  # a global it reads (never writes)
  lines, fresh = [], iter(f"v{n}" for n in range(100))
  def pick(pred=lambda n, e: True, inputs_first=False):
    names = [n for n, e in env.items() if pred(n, e)]
    if not names: return None
    if inputs_first and draw(st.booleans()):
      rooted = [n for n in names if env[n][2] is not None]
      if rooted: names = rooted
    return draw(st.sampled_from(names))
  def value(shp) -> str:
    """Source of a value of this shape."""
    same = [n for n, e in env.items() if e[0] == shp]
    k = draw(st.sampled_from(["entry", "entry", "rand", "full", "host", "arith"] if same else ["rand", "full", "host"]))
    if k == "entry": return draw(st.sampled_from(same))
    if k == "rand": return f"Tensor.rand(*{shp})"
    if k == "full": return f"Tensor.full({shp}, {draw(st.integers(-3, 3))}.0)"
    if k == "host": return f"Tensor(np.arange({int(np.prod(shp))}, dtype=np.float32).reshape({shp}))"
    return f"({draw(st.sampled_from(same))} * s - 1)"
  for _ in range(draw(st.integers(1, 6))):
    op = draw(st.sampled_from(["view", "view", "ew", "ew", "reduce", "realize", "contiguous", "rand", "index_k",
                               "assign", "assign", "setitem", "setitem", "fancy", "iadd", "iadd", "state"]))
    writable = lambda n, e: e[1]  # noqa: E731
    if op == "view":
      a = pick(inputs_first=True)
      vo = draw(view_op(env[a][0]))
      v = next(fresh)
      lines.append(f"{v} = {_view_src(a, vo)}")
      env[v] = (_shape_of(env[a][0], vo), env[a][1], env[a][2])
    elif op == "index_k":
      if (a := pick(lambda n, e: len(e[0]) > 0 and e[0][0] > kint, inputs_first=True)) is None: continue
      v = next(fresh)
      lines.append(f"{v} = {a}[k]")
      env[v] = (env[a][0][1:], env[a][1], env[a][2])
    elif op == "ew":
      a, v = pick(), next(fresh)
      shp = env[a][0]
      form = draw(st.sampled_from(["{a} + {b}", "{a} * {b}", "({a} - {b}).relu()", "{a}.maximum({b})", "({a} < {b}).where({a}, {b})",
                                   "-{a}", "{a} * s + {b}", "{a} + {a}.sum()"]))
      lines.append(f"{v} = " + form.format(a=a, b=value(shp) if draw(st.booleans()) else draw(st.sampled_from(["1.0", "s", "W.sum()"]))))
      env[v] = (shp, True, None)
    elif op == "reduce":
      a, v = pick(), next(fresh)
      shp = env[a][0]
      if not shp or draw(st.booleans()): lines.append(f"{v} = {a}.sum()"); env[v] = ((), True, None)  # noqa: E702
      else:
        ax, keep = draw(st.integers(0, len(shp) - 1)), draw(st.booleans())
        fn = "max" if 0 not in shp and draw(st.booleans()) else "sum"
        lines.append(f"{v} = {a}.{fn}({ax}, keepdim={keep})")
        env[v] = (shp[:ax] + ((1,) if keep else ()) + shp[ax + 1:], True, None)
    elif op == "realize": lines.append(f"{pick()}.realize()")
    elif op == "contiguous":
      a, v = pick(), next(fresh)
      lines.append(f"{v} = {a}.contiguous()")
      env[v] = (env[a][0], True, None)
    elif op == "rand":
      v = next(fresh)
      lines.append(f"{v} = Tensor.rand(*{shape})")
      env[v] = (shape, True, None)
    elif op == "state": lines.append(f"S.assign(S + {pick(inputs_first=True)}.sum())")  # (often an input it writes later)
    else:
      t = pick(writable, inputs_first=True)
      shp = env[t][0]
      if op == "assign": lines.append(f"{t}.assign({value(shp)})")
      elif op == "iadd": lines.append(f"{t} += {value(shp) if draw(st.booleans()) else '2.0'}")
      elif op == "setitem":
        idx = draw(basic_index(shp)) if shp else (Ellipsis,)
        tshp = np.empty(shp)[idx].shape
        lines.append(f"{t}[{idx!r}] = {value(tshp) if draw(st.booleans()) else draw(st.sampled_from(['7.0', 's']))}")
      elif shp and shp[0]:  # fancy: an index tensor (host data, frozen)
        rows = draw(st.lists(st.integers(-shp[0], shp[0] - 1), min_size=1, max_size=3))
        lines.append(f"{t}[Tensor({rows})] " + ("+= 1" if draw(st.booleans()) else "= 2"))
  # what it returns
  items = [draw(st.sampled_from([n for n in env if n != "W"] + ["3", "s"])) for _ in range(draw(st.integers(0, 4)))]
  box = draw(st.sampled_from(["single", "tuple", "list", "dict"]))
  if box == "single": items = items[:1]
  keys = [f"r{n}" if box == "dict" else n if box in ("tuple", "list") else "" for n in range(len(items))]
  probes = [key for key, it in zip(keys, items) if it in env and env[it][2] is not None]
  if box == "single" or not items: ret = items[0] if items else "None"
  elif box == "dict": ret = "{" + ", ".join(f"'r{n}': {it}" for n, it in enumerate(items)) + "}"
  else: ret = ("(" if box == "tuple" else "[") + ", ".join(items) + ("," if len(items) == 1 and box == "tuple" else "") + (")" if box == "tuple" else "]")
  args = ", ".join(f"x{j}" for j in range(n_in))
  fn_src = f"def f({args}, s, k):\n" + textwrap.indent("\n".join(lines + [f"return {ret}"]), "  ")
  return make_src, fn_src, draw(st.booleans()), probes

# ---------------------------------------------------------------- running it both ways

def _leaves(ret) -> list:
  if isinstance(ret, dict): return list(ret.items())
  if isinstance(ret, (tuple, list)): return list(enumerate(ret))
  return [("", ret)]

def _look(t) -> tuple:
  return ("tensor", tuple(t.shape), str(t.dtype), t.numpy()) if isinstance(t, Tensor) else ("value", t)

class Side:
  """One run: the plain function or its TinyJit, with its own globals, and everything the caller held on each call."""
  def __init__(self, make_src: str, fn_src: str, jit: bool):
    self.ns = {"Tensor": Tensor, "np": np, "vals": vals}
    exec(make_src, self.ns)  # noqa: S102
    exec(fn_src, self.ns)  # noqa: S102
    self.fn = TinyJit(self.ns["f"]) if jit else self.ns["f"]
    self.kept: list[tuple[str, Tensor]] = []  # every call's inputs and held tensors (the caller keeps them all)

  def call(self, i: int, keywords: bool):
    """Call i: what it returned, and a look at everything the caller can see after it (label -> value)."""
    inputs, held = self.ns["make"](i)
    self.kept += [(f"call {i + 1}'s x{j}", x) for j, x in enumerate(inputs)] + [(f"call {i + 1}'s {n}", t) for n, t in held.items()]
    Tensor.manual_seed(i)
    ret = self.fn(**{f"x{j}": x for j, x in enumerate(inputs)}, s=0.5, k=1) if keywords else self.fn(*inputs, 0.5, 1)
    return ret, inputs

  def look(self, ret, inputs) -> list[tuple[str, tuple]]:
    seen = [("the container returned", ("value", type(ret).__name__ if isinstance(ret, (tuple, list, dict)) else "single"))]
    for key, r in _leaves(ret):
      seen.append((f"returned [{key!r}]", _look(r)))
      seen.append((f"returned [{key!r}] is an input", ("value", [j for j, x in enumerate(inputs) if r is x])))
    seen += [(name, _look(t)) for name, t in self.kept]
    seen += [("the global W", _look(self.ns["W"])), ("the global S", _look(self.ns["S"]))]
    return seen

def _compare(got, want, where: str):
  assert [g[0] for g in got] == [w[0] for w in want], where
  for (label, g), (_, w) in zip(got, want):
    msg = f"{where}: {label}"
    assert g[0] == w[0], f"{msg}: {g[0]}, the plain function gives a {w[0]}"
    if g[0] == "value": assert g[1] == w[1], f"{msg}: {g[1]!r}, the plain function gives {w[1]!r}"
    else:
      assert g[1:3] == w[1:3], f"{msg}: shape and dtype {g[1:3]}, the plain function gives {w[1:3]}"
      np.testing.assert_allclose(g[3], w[3], rtol=1e-6, atol=1e-6, err_msg=msg)

def _probe(ret, inputs, views: list) -> None:
  """The caller writes through each returned tensor that views an input (by the source: v = x0.T, ...): +1 everywhere."""
  for key, r in _leaves(ret):
    if isinstance(r, Tensor) and key in views: r += 1

# what the plain function may refuse (the program is then no valid one): a write through a view that pads or broadcasts.
# Any other exception of the plain run is a bug of its own (a StaleReadError there hid a lost read: the fuzzer found it).
REFUSED = ("cannot write through this view",)

def _refused(e: Exception, where: str, i: int):
  if not any(r in str(e) for r in REFUSED): raise AssertionError(f"{where}call {i + 1}: the plain function raised {type(e).__name__}: {e}") from e
  assume(False)

def check(dev: str, make_src: str, fn_src: str, keywords: bool, probes: list):
  where = f"on {dev}, {'keyword' if keywords else 'positional'} inputs, s=0.5, k=1:\n{make_src}\n{fn_src}\n"
  old, Device.DEFAULT = Device.DEFAULT, dev
  try:
    plain, jit = Side(make_src, fn_src, False), Side(make_src, fn_src, True)
    for i in range(CALLS):
      try:
        ret, inputs = plain.call(i, keywords)
        want = plain.look(ret, inputs)
      except Exception as e: _refused(e, where, i)
      try:
        jret, jinputs = jit.call(i, keywords)
        got = jit.look(jret, jinputs)
      except JitError as e:
        assert any(d in str(e) for d in DOCUMENTED), f"{where}call {i + 1}: a JitError docs/jit.md does not list: {e}"
        return "JitError: " + next(d for d in DOCUMENTED if d in str(e))
      except Exception as e: raise AssertionError(f"{where}call {i + 1}: the jitted function raised {type(e).__name__}: {e}") from e
      _compare(got, want, f"{where}after call {i + 1}")
      keys = [key for key, _ in _leaves(ret) if key in probes]
      if not keys: continue
      try:
        _probe(ret, inputs, keys)
        want = plain.look(ret, inputs)
      except Exception as e: _refused(e, where, i)
      try:
        _probe(jret, jinputs, keys)
        got = jit.look(jret, jinputs)
      except Exception as e: raise AssertionError(f"{where}call {i + 1}: a write through a returned view raised {type(e).__name__}: {e}") from e
      _compare(got, want, f"{where}after call {i + 1} and a write through the returned views of inputs")
    return "ok"
  finally: Device.DEFAULT = old

@seed(2028)
@settings(FUZZ, max_examples=ex(18))
@given(p=programs())
@pytest.mark.parametrize("dev", ["CPU", "PYTHON"])
def test_jit_matches_the_plain_function(dev, p): check(dev, *p)

@seed(31)
@settings(FUZZ, max_examples=ex(6))
@given(p=programs())
def test_jit_matches_the_plain_function_llvm(p): check("LLVM", *p)

@settings(FUZZ, max_examples=ex(10))
@given(p=programs())
def test_jit_matches_the_plain_function_random_seed(p): check("CPU", *p)

@pytest.mark.slow
@seed(7)
@settings(FUZZ, max_examples=ex(400))
@given(p=programs())
@pytest.mark.parametrize("dev", DEVICES)
def test_jit_matches_the_plain_function_long_run(dev, p): check(dev, *p)
