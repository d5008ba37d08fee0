"""Exercises with instant checks for the course notebooks.

A stub cell defines a function or class whose body says `# YOUR CODE` and raises NotImplementedError; the next cell
calls `check("p01.mse", mse)`. The check runs hidden tests that compare the learner's code with numpy or with
finite differences on fresh random inputs (not with stored answers), prints a pass or a hint that never gives the
answer away, and never raises, so a notebook with its stubs untouched still runs top to bottom.
Reference solutions live in notebooks/solutions/, outside the notebooks; tests/test_exercises.py proves that every
check here fails on its notebook's stub and passes on the reference solution.
"""
from __future__ import annotations
import contextlib, itertools, re
from typing import Callable
import numpy as np
from lazynb.codegen.kernel import Opt, KernelOptError
from lazynb.helpers import plural
from lazynb.notebook.playground import Playground

class Fail(AssertionError):
  """A hidden test failed; the message is the hint shown to the learner."""

EXERCISES: dict[str, Callable] = {}

def exercise(key: str):
  """Register the hidden tests of one exercise: a function of the learner's object that raises Fail(hint)."""
  def deco(fn):
    if key in EXERCISES: raise ValueError(f"exercise {key!r} is registered twice")
    EXERCISES[key] = fn
    return fn
  return deco

def run(key: str, obj) -> tuple[bool, str]:
  """(passed?, message) for the learner's object. Never raises for anything the learner's code does."""
  if key not in EXERCISES: raise KeyError(f"no exercise named {key!r}; known: {sorted(EXERCISES)}")
  try: EXERCISES[key](obj)
  except Fail as e: return False, str(e)
  except NotImplementedError: return False, "not written yet: replace the `raise NotImplementedError` under # YOUR CODE."
  except Exception as e: return False, f"your code raised {type(e).__name__}: {e}"
  return True, "all hidden tests pass."

def check(key: str, obj) -> None:
  """Run exercise `key`'s hidden tests on `obj` and print \u2713 or \u2717 with a hint. Returns nothing, so the
  notebook's check cell (which ends with this call) shows the message and no bare True/False Out[] line; code that
  wants the verdict as a value calls run(). A build-track stage that passes is kept (lazynb/notebook/build.py)."""
  ok, msg = run(key, obj)
  print(f"{key}: " + ("\u2713 pass, " if ok else "\u2717 not yet, ") + msg)
  if ok and key in build.STAGE_OF: build.keep(build.STAGE_OF[key], obj)  # the build track: a stage that passes is kept

# ---------------------------------------------------------------- helpers for the hidden tests

def need(cond, hint: str):
  if not cond: raise Fail(hint)

def _rng(seed: int): return np.random.default_rng(seed)

def _np(t, what: str) -> np.ndarray:
  from lazynb import Tensor
  need(t is not None, f"{what} returned None: it must return a Tensor.")
  need(isinstance(t, Tensor), f"{what} must return a lazynb Tensor, got {type(t).__name__}.")
  return t.numpy()

_EXP_OVERFLOW = "large inputs overflow exp: subtract the largest value first"

def _close(got: np.ndarray, want: np.ndarray, what: str, rtol=1e-4, atol=1e-5, nan_hint="a division by zero, or a log or sqrt of a negative?"):
  need(tuple(got.shape) == tuple(want.shape), f"{what}: the result has shape {tuple(got.shape)}, expected {tuple(want.shape)}.")
  need(np.all(np.isfinite(got) == np.isfinite(want)), f"{what}: some results are inf or nan where they should not be ({nan_hint}).")
  need(np.allclose(got, want, rtol=rtol, atol=atol), f"{what}: the values are wrong (largest error {np.nanmax(np.abs(got - want)):.3g}).")

@contextlib.contextmanager
def _forbid(*names: str, cls=None, why: str = "this exercise is to build it from smaller ops"):
  """Make methods of cls (Tensor by default) raise while the learner's code runs (the exercise is to write them)."""
  from lazynb import Tensor
  cls = Tensor if cls is None else cls
  own = {n: cls.__dict__[n] for n in names if n in cls.__dict__}   # inherited ones (OpMixin's) are shadowed, then unshadowed
  def blocked(n):
    def f(*a, **k): raise Fail(f"{why}: {cls.__name__}.{n} is not allowed here.")
    return f
  for n in names:
    if hasattr(cls, n): setattr(cls, n, blocked(n))
  try: yield
  finally:
    for n in names:
      if n in own: setattr(cls, n, own[n])
      elif n in cls.__dict__: delattr(cls, n)

def _backward(t, what: str):
  """t.backward(), where a loss that does not depend on the input (computed in numpy, say) is a hint, not a RuntimeError."""
  try: t.backward()
  except RuntimeError as e:
    if "requires_grad" not in str(e): raise
    raise Fail(f"no gradient reached {what}: build the result from Tensor ops on {what}, not from values read out of it.") from None

def _kernels(fn) -> int:
  from lazynb import GlobalCounters
  GlobalCounters.reset()
  fn()
  return GlobalCounters.kernel_count

# ---------------------------------------------------------------- Project 1

@exercise("p01.mse")
def _(mse):
  from lazynb import Tensor
  for seed, shape in enumerate([(5,), (3, 4), (2, 3, 4)]):
    a, b = _rng(seed).standard_normal(shape).astype(np.float32), _rng(seed + 10).standard_normal(shape).astype(np.float32)
    ta, tb = Tensor(a).realize(), Tensor(b).realize()
    res = []
    n = _kernels(lambda: res.append(mse(ta, tb)) or (res[0] is None or res[0].realize()))
    out = res[0]
    need(out is not None, "mse returned None: it must return a Tensor.")
    need(getattr(out, "shape", None) == (), f"the mean of all elements is a scalar: shape (), got {getattr(out, 'shape', None)}.")
    _close(_np(out, "mse"), np.mean((a - b) ** 2, dtype=np.float64).astype(np.float32), f"shape {shape}")
    need(n == 1, f"it should run as ONE fused kernel, it ran {n}: don't realize() in the middle.")

# ---------------------------------------------------------------- Project 2

@exercise("p02.address")
def _(address):
  base = np.arange(2 * 3 * 4 * 5, dtype=np.int64).reshape(2, 3, 4, 5)
  views = {"permute": base.transpose(2, 0, 3, 1), "slice": base[1:, ::2, 1:3], "flip": base[:, ::-1, :, ::-2],
           "expand": np.broadcast_to(base[:, :1], (2, 7, 4, 5)), "reshape": base.reshape(6, 20)}
  for what, v in views.items():
    strides = tuple(s // base.itemsize for s in v.strides)
    offset = (v.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.itemsize
    for idx in itertools.product(*[range(n) for n in v.shape]):
      got = address(idx, strides, offset)
      need(isinstance(got, (int, np.integer)), f"address must return an int, got {type(got).__name__}.")
      need(base.ravel()[got] == v[idx] if 0 <= got < base.size else False,
           f"{what} view (strides {strides}, offset {offset}): index {idx} reads the wrong element.")

@exercise("p02.bmm")
def _(batched_matmul):
  from lazynb import Tensor
  for seed, (B, M, K, N) in enumerate([(2, 3, 4, 5), (1, 1, 3, 1), (3, 2, 1, 2)]):
    a, b = _rng(seed).standard_normal((B, M, K)).astype(np.float32), _rng(seed + 5).standard_normal((B, K, N)).astype(np.float32)
    ta, tb = Tensor(a), Tensor(b)
    with _forbid("matmul", "dot", "__matmul__", "einsum", "numpy", "tolist", "item", "data", "__array__",
                 why="this exercise is to build it from movement ops, a multiply and a sum"):
      out = batched_matmul(ta, tb)
    need(isinstance(out, Tensor), f"batched_matmul must return a lazynb Tensor, got {type(out).__name__}.")
    graph = set(out.uop.toposort())
    need(ta.uop in graph and tb.uop in graph, "the result is not computed from a and b: return the lazy Tensor your ops build "
         "(no realize() inside, and no detour through numpy or a new Tensor made from values).")
    _close(_np(out, "batched_matmul"), a @ b, f"({B}, {M}, {K}) @ ({B}, {K}, {N})")

# ---------------------------------------------------------------- Project 3

@exercise("p03.finite_diff")
def _(finite_diff):
  cases = [(lambda v: float(np.sum(np.sin(v))), np.cos), (lambda v: float(np.sum(v ** 3)), lambda v: 3 * v ** 2),
           (lambda v: float(np.prod(v)), lambda v: np.prod(v) / v)]
  for i, (f, df) in enumerate(cases):
    v = _rng(i).uniform(0.5, 1.5, 4)
    v0 = v.copy()
    g = finite_diff(f, v)
    need(g is not None, "finite_diff returned None: return an array with one slope per input.")
    g = np.asarray(g, dtype=np.float64)
    need((v == v0).all(), "finite_diff changed the input array: nudge a copy.")
    need(g.shape == v.shape, f"one slope per input: expected shape {v.shape}, got {g.shape}.")
    need(np.allclose(g, df(v), rtol=1e-6, atol=1e-8), "the slopes are off: nudge one input at a time, both ways, "
         "and divide the difference by the full distance between the two points.")

@exercise("p03.pseudo_huber")
def _(pseudo_huber):
  from lazynb import Tensor
  for seed, delta in [(0, 1.0), (1, 0.5), (2, 3.0)]:
    pred, target = _rng(seed).standard_normal(7).astype(np.float32) * 3, _rng(seed + 9).standard_normal(7).astype(np.float32)
    p = Tensor(pred, requires_grad=True)
    loss = pseudo_huber(p, Tensor(target), delta)
    r = (pred - target).astype(np.float64)
    _close(_np(loss, "pseudo_huber"), np.array(np.mean(delta ** 2 * (np.sqrt(1 + (r / delta) ** 2) - 1)), np.float32), f"delta={delta}")
    _backward(loss, "pred")
    need(p.grad is not None, "no gradient reached pred: build the loss from Tensor ops on pred.")
    _close(p.grad.numpy(), (r / np.sqrt(1 + (r / delta) ** 2) / r.size).astype(np.float32), f"the gradient with delta={delta}")

# ---------------------------------------------------------------- Project 4

@exercise("p04.cross_entropy")
def _(cross_entropy):
  from lazynb import Tensor
  for seed, scale in [(0, 1.0), (1, 50.0)]:
    logits = (_rng(seed).standard_normal((6, 10)) * scale).astype(np.float32)
    logits[0, 3] = 1000.0 if scale > 1 else logits[0, 3]
    labels = _rng(seed).integers(0, 10, 6)
    x = Tensor(logits, requires_grad=True)
    with _forbid("sparse_categorical_crossentropy", "cross_entropy", "log_softmax", "softmax", "logsumexp"): loss = cross_entropy(x, Tensor(labels.astype(np.int32)))
    z = logits.astype(np.float64) - logits.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    _close(_np(loss, "cross_entropy"), np.array(-logp[np.arange(6), labels].mean(), np.float32), f"logits of size ~{scale:g}", rtol=1e-3,
           nan_hint=_EXP_OVERFLOW)
    _backward(loss, "the logits")
    need(x.grad is not None, "no gradient reached the logits: build the loss from Tensor ops on them.")
    want = (np.exp(logp) - np.eye(10)[labels]) / 6
    _close(x.grad.numpy(), want.astype(np.float32), "the gradient", rtol=1e-3, atol=1e-5)

# ---------------------------------------------------------------- Project 5

def _show(u) -> str:
  """A small expression as text for a hint: `(i*1)`, `(1.0*f)`; anything else by its op."""
  from lazynb.uop.ops import Ops, sym_str
  try: return sym_str(u) if all(n.op in (Ops.DEFINE_VAR, Ops.CONST, Ops.CAST, Ops.ADD, Ops.MUL, Ops.IDIV, Ops.MOD) for n in u.toposort()) else str(u.op)
  except Exception: return repr(u)

@exercise("p05.fold_rules")
def _(rules):
  from lazynb.uop.ops import UOp, Ops, PatternMatcher, graph_rewrite
  from lazynb.dtype import dtypes
  need(isinstance(rules, PatternMatcher), f"the rules must be a PatternMatcher, got {type(rules).__name__}.")
  i, j = UOp.variable("i", 0, 8), UOp.variable("j", 1, 4)
  f = UOp(Ops.CAST, dtypes.float, (i,))
  # built with UOp(...) directly: the operators already drop an int `+ 0` or `* 1` when the expression is built,
  # which would leave the rules nothing to do
  add, mul = (lambda a, b: UOp(Ops.ADD, a.dtype, (a, b))), (lambda a, b: UOp(Ops.MUL, a.dtype, (a, b)))
  one, zero = i.const_like(1), i.const_like(0)
  cases = [(mul(i, one), i), (mul(one, i), i), (add(i, zero), i), (add(zero, i), i), (mul(f, f.const_like(1.0)), f),
           (add(f.const_like(0.0), f), f), (mul(add(mul(j, one), zero), one), j), (add(mul(i, one), add(zero, j)), add(i, j))]
  for e, want in cases:
    got = graph_rewrite(e, rules)
    need(got is want, f"{_show(e)} should become {_show(want)}, your rules gave {_show(got)}"
         + (": a multiply by 1 or an add of 0 leaves x itself, not a constant." if got.op is Ops.CONST else "."))
  for e in [mul(i, i.const_like(2)), add(i, one), mul(i, j), add(i, j), mul(i, zero), add(f, f.const_like(1.0)), mul(f, f.const_like(0.5))]:
    got = graph_rewrite(e, rules)
    need(got is e or (e.op is Ops.MUL and zero in e.src and got is zero), f"{_show(e)} must stay as it is, your rules gave {_show(got)}: only a multiply by exactly 1 or an add of exactly 0 may go.")

# ---------------------------------------------------------------- Project 6

@exercise("p06.layer_norm")
def _(layer_norm):
  from lazynb import Tensor
  def want(x, eps):
    x64 = x.astype(np.float64)
    mu, var = x64.mean(-1, keepdims=True), x64.var(-1, keepdims=True)
    return ((x64 - mu) / np.sqrt(var + eps)).astype(np.float32)
  for seed, shape in enumerate([(4, 8), (2, 3, 5), (1, 16)]):
    x = (_rng(seed).standard_normal(shape) * 3 + 2).astype(np.float32)
    with _forbid("layernorm", "layer_norm"): out = layer_norm(Tensor(x))
    _close(_np(out, "layer_norm"), want(x, 1e-5), f"shape {shape}", rtol=1e-3, atol=1e-4)
  # rows that are almost constant (variance ~1e-8): here eps decides the result, it keeps the division finite and small
  x = (0.5 + _rng(5).standard_normal((3, 8)) * 1e-4).astype(np.float32)
  with _forbid("layernorm", "layer_norm"): out = layer_norm(Tensor(x))
  _close(_np(out, "layer_norm"), want(x, 1e-5), "rows that are almost constant (variance ~1e-8, so eps=1e-5 matters): add eps to "
         "the variance, inside the square root", rtol=2e-2, atol=2e-3)
  x = (_rng(6).standard_normal((4, 6)) * 0.5).astype(np.float32)
  with _forbid("layernorm", "layer_norm"): out = layer_norm(Tensor(x), 0.1)
  _close(_np(out, "layer_norm"), want(x, 0.1), "layer_norm(x, 0.1): use the eps you are given, added to the variance inside the "
         "square root", rtol=1e-3, atol=1e-4)

# ---------------------------------------------------------------- Project 7: a Python device, part by part

@exercise("p07.allocator")
def _(BytesAllocator):
  from lazynb.device import Allocator
  need(isinstance(BytesAllocator, type) and issubclass(BytesAllocator, Allocator), "BytesAllocator must be a class derived from Allocator.")
  a = BytesAllocator()
  for seed, n in enumerate([1, 4, 37]):
    host = _rng(seed).standard_normal(n).astype(np.float32)
    buf = a.alloc(host.nbytes)
    need(buf is not None and len(buf) >= host.nbytes, f"alloc({host.nbytes}) must give a buffer of at least {plural(host.nbytes, 'byte')}.")
    other = a.alloc(host.nbytes)
    need(other is not buf, "each alloc must give a new buffer.")
    a.copyin(buf, memoryview(host).cast("B"))
    back = np.zeros_like(host)
    a.copyout(memoryview(back).cast("B"), buf)
    need((back == host).all(), "copyout(copyin(x)) does not give x back: copy all the bytes, in order.")
    a.copyout(memoryview(back).cast("B"), other)
    need(not (back == host).all() or n == 0, "copyin wrote into another buffer too: buffers must not share memory.")
    a.free(buf, host.nbytes)

@exercise("p07.compiler")
def _(PyCompiler) -> None:
  from lazynb.device import Compiler, CompileError
  need(isinstance(PyCompiler, type) and issubclass(PyCompiler, Compiler), "PyCompiler must be a class derived from Compiler.")
  c = PyCompiler()
  src = "def k(out, x, gid):\n  out[gid] = x[gid] * 2\n"
  lib = c.compile(src)
  need(isinstance(lib, bytes), f"compile must return bytes, got {type(lib).__name__}.")
  ns: dict = {}
  try: exec(lib.decode(), ns)
  except Exception as e: raise Fail(f"the bytes must be the program's text, encoded (exec(lib.decode()) gave {type(e).__name__}).") from None
  need("k" in ns, "the bytes must hold the program (its text is fine: Python needs no binary).")
  try:
    c.compile("def k(out:\n  pass\n")
    raise Fail("a program with a syntax error must raise CompileError, so the error shows at compile time.")
  except CompileError: pass
  except SyntaxError: raise Fail("turn the SyntaxError into lazynb.device.CompileError (raise ... from e).") from None

@exercise("p07.runner")
def _(PyRunner):
  from lazynb.device import Runner
  need(isinstance(PyRunner, type) and issubclass(PyRunner, Runner), "PyRunner must be a class derived from Runner.")
  lib = b"def scale(out, x, g0, g1, g2):\n  out[g0 * 3 + g1] = x[g0 * 3 + g1] * 10 + g2\n"
  r = PyRunner("scale", lib)
  x = list(range(6))
  out = [0] * 6
  ret = r(out, x, global_size=(2, 3, 1))
  need(out == [v * 10 for v in x], f"after running over the grid (2, 3, 1) out should be x*10 everywhere; got {out}.")
  need(ret is None, "without wait=True the runner returns None.")
  out2 = [0] * 6
  t = r(out2, x, global_size=(2, 3, 1), wait=True)
  need(isinstance(t, float) and t >= 0, "with wait=True the runner returns the run time in seconds, a float.")
  # a library with several functions: a helper before the kernel, another kernel after it
  lib = (b"def helper(v):\n  return v + 1\n"
         b"def shift(out, x, g0, g1, g2):\n  out[g0] = helper(x[g0])\n"
         b"def twice(out, x, g0, g1, g2):\n  out[g0] = x[g0] * 2\n")
  for name, want in [("shift", [6, 7, 8, 9]), ("twice", [10, 12, 14, 16])]:
    out3 = [0] * 4
    try: PyRunner(name, lib)(out3, [5, 6, 7, 8], global_size=(4, 1, 1))
    except Exception as e: raise Fail(f"PyRunner({name!r}, lib) on a library that defines helper, shift and twice raised "
                                      f"{type(e).__name__}: {e}. Does it run the function called {name!r}?") from None
    need(out3 == want, f"PyRunner({name!r}, lib) on a library that defines helper, shift and twice ran the wrong function "
         f"(out became {out3}): look the function up by the name you are given.")

# ---------------------------------------------------------------- the parts

@exercise("02.count_kernels")
def _(count_kernels):
  from lazynb import Tensor, GlobalCounters
  from lazynb.trace import capture
  r = _rng(2)
  m, n = (int(v) for v in r.integers(3, 9, 2))
  fresh = lambda *shape: Tensor.randn(*shape).realize()   # new inputs on every call: a realized graph would run nothing again
  def matmul_then_scale():
    x = fresh(m, n)
    (x @ fresh(n, m)).relu().sum(axis=0).realize()
    (x * 3).realize()
  cases = [("(x + 1).realize()", lambda: (fresh(m, n) + 1).realize()),
           ("(x - x.mean()).realize()", lambda: (lambda x: (x - x.mean()).realize())(fresh(m, n))),
           ("building x * 2 without realizing it", lambda: fresh(m, n) * 2),
           ("(x @ y).relu().sum(axis=0).realize() and then (x * 3).realize()", matmul_then_scale)]
  for what, fn in cases:
    with capture(rewrites=False) as tr: fn()
    want = len(tr.kernels)                        # measured by the trace, the same computation run on its own
    (fresh(m, n) + 0.5).realize()                 # kernels that ran before the call must not count
    total = GlobalCounters.kernel_count
    calls = []
    got = count_kernels(lambda: calls.append(1) or fn())
    after = GlobalCounters.kernel_count
    need(GlobalCounters.kernel_count >= total, "count_kernels reset the running totals: other code may be counting "
         "too, leave GlobalCounters as they were and count the difference.")
    need(len(calls) == 1, f"count_kernels must call fn exactly once, it called it {plural(len(calls), 'time')}.")
    need(isinstance(got, (int, np.integer)) and not isinstance(got, bool), f"count_kernels must return an int, got {type(got).__name__}.")
    need(got == want, f"for {what} you counted {plural(got, 'kernel')}, the trace saw {want}"
         + (": that is the running total, with kernels that ran before fn too: count from where it stood before the call."
            if got == after != want else "."))

_ANSI = re.compile(r"\x1b\[[0-9;]*m")

@exercise("02.debug_lines")
def _(kernel_lines):
  from lazynb import Tensor
  from lazynb.helpers import DEBUG
  from lazynb.trace import capture
  r = _rng(3)
  m, n = (int(v) for v in r.integers(3, 9, 2))
  fresh = lambda *shape: Tensor.randn(*shape).realize()
  cases = [("(x * 2).realize()", lambda: (fresh(m, n) * 2).realize()),
           ("(x - x.mean()).realize()", lambda: (lambda x: (x - x.mean()).realize())(fresh(m, n))),
           ("x @ y, then its sum", lambda: (fresh(m, n) @ fresh(n, m)).realize().sum().realize())]
  level = DEBUG.value
  for what, fn in cases:
    with capture(rewrites=False) as tr: fn()
    names = [k["name"] for k in tr.kernels]       # measured by the trace, the same computation run on its own
    calls = []
    got = kernel_lines(lambda: calls.append(1) or fn())
    if DEBUG.value != level:
      leaked, DEBUG.value = DEBUG.value, level   # put it back, so the rest of the notebook is not flooded
      raise Fail(f"after kernel_lines DEBUG was {leaked}, before it was {level}: set it for the call only, then restore it.")
    need(len(calls) == 1, f"kernel_lines must call fn exactly once, it called it {plural(len(calls), 'time')}.")
    need(isinstance(got, (list, tuple)) and all(isinstance(x, str) for x in got), "kernel_lines must return a list of strings (the lines).")
    need(len(got) > 0 or not names, f"for {what} you returned no lines, but {plural(len(names), 'kernel')} ran: was DEBUG 2 while fn ran? A "
         "change to os.environ after lazynb is imported is not seen.")
    need(all(x.startswith("***") for x in got), "return only the kernel lines, the ones that start with ***, without their newline.")
    need(len(got) == len(names), f"for {what} you returned {plural(len(got), 'line')}, the trace saw {plural(len(names), 'kernel')}.")
    plain = [_ANSI.sub("", x) for x in got]
    need(all(nm in line for nm, line in zip(names, plain)), "the lines are not the ones printed for these kernels, in the order they ran.")

@exercise("01.relu")
def _(my_relu):
  from lazynb import Tensor
  x = np.array([-2.5, -0.0, 0.0, 1e-3, 3.0, -1e30, 7.25], np.float32)
  with _forbid("relu", "maximum", "clip", "clamp"): out = my_relu(Tensor(x))
  _close(_np(out, "my_relu"), np.maximum(x, 0), "relu")
  with _forbid("relu", "maximum", "clip", "clamp"): n = _kernels(lambda: my_relu(Tensor(x).realize()).realize())
  need(n == 1, f"relu is one elementwise kernel, yours ran {n}.")

@exercise("03.one_hot")
def _(one_hot):
  from lazynb import Tensor
  for seed, (n, k) in enumerate([(5, 3), (1, 4), (8, 10)]):
    labels = _rng(seed).integers(0, k, n)
    with _forbid("one_hot"): out = one_hot(Tensor(labels.astype(np.int32)), k)
    got = _np(out, "one_hot")
    need(got.dtype != np.bool_, "one_hot gave booleans (a comparison's True/False): turn them into numbers, 1 and 0, so "
         "the labels can be multiplied and summed.")
    need(got.shape == (n, k), f"{n} labels and {k} classes give shape ({n}, {k}), got {got.shape}.")
    need(np.array_equal(got.astype(np.float64), np.eye(k)[labels]), "each row must be 1 at its label's column and 0 elsewhere.")

@exercise("04.lazy")
def _(sum_of_squares):
  from lazynb import Tensor, GlobalCounters
  arrs = [_rng(i).standard_normal((3, 4)).astype(np.float32) for i in range(4)]
  ts = [Tensor(a).realize() for a in arrs]
  GlobalCounters.reset()
  out = sum_of_squares(ts)
  need(GlobalCounters.kernel_count == 0, f"building the result ran {plural(GlobalCounters.kernel_count, 'kernel')}: return the lazy Tensor, "
       "don't realize(), numpy(), item() or print it inside.")
  _close(_np(out, "sum_of_squares"), sum(a * a for a in arrs), "the value")

@exercise("05.softmax")
def _(softmax):
  from lazynb import Tensor
  for seed, (shape, scale) in enumerate([((3, 5), 1.0), ((2, 4, 6), 1.0), ((2, 7), 200.0)]):
    x = (_rng(seed).standard_normal(shape) * scale).astype(np.float32)
    with _forbid("softmax", "log_softmax", "logsumexp"): out = softmax(Tensor(x))
    z = np.exp(x.astype(np.float64) - x.max(-1, keepdims=True))
    _close(_np(out, "softmax"), (z / z.sum(-1, keepdims=True)).astype(np.float32), f"shape {shape}, inputs of size ~{scale:g}",
           nan_hint=_EXP_OVERFLOW)

@exercise("06.swish_grad")
def _(swish_grad):
  f = lambda v: v / (1 + np.exp(-v))
  x = np.linspace(-6, 6, 25)
  g = swish_grad(x.copy())
  need(g is not None, "swish_grad returned None: return a numpy array, one slope per input.")
  g = np.asarray(g, dtype=np.float64)
  need(g.shape == x.shape, f"one slope per input: expected shape {x.shape}, got {g.shape}.")
  eps = 1e-5
  need(np.allclose(g, (f(x + eps) - f(x - eps)) / (2 * eps), rtol=1e-5, atol=1e-7),
       "the slopes don't match finite differences of x*sigmoid(x): use the product rule, and sigmoid' = s*(1-s).")
  # the formula is exact to float64 rounding; a numeric difference is off by ~1e-10 here, and far off where x is so
  # large that x + a small step rounds back to x
  x = np.concatenate([x, [1e9, 3e13]])
  s = 1 / (1 + np.exp(-x))
  g = np.asarray(swish_grad(x.copy()), dtype=np.float64)
  err = np.abs(g - (s + x * s * (1 - s)))
  k = int(np.nanargmax(np.where(np.isnan(err), np.inf, err))) if g.shape == x.shape else 0
  need(g.shape == x.shape and np.all(err <= 1e-12 + 1e-12 * np.abs(g)), f"the slopes match finite differences but are not exact "
       f"(at x={x[k]:g} the slope is {s[k] + x[k] * s[k] * (1 - s[k]):.17g}, yours {g[k]:.17g}): a numeric difference is off by "
       "that much. Write the derivative as a formula in x.")

@exercise("07.int_rules")
def _(rules):
  from lazynb.uop.ops import UOp, PatternMatcher, graph_rewrite
  need(isinstance(rules, PatternMatcher), f"the rules must be a PatternMatcher, got {type(rules).__name__}.")
  i, j = UOp.variable("i", 0, 8), UOp.variable("j", 1, 4)
  for e, want in [(i // 1, i), (i % 1, i.const_like(0)), ((i + j) // 1, i + j), ((j // 1) % 1, j.const_like(0))]:
    got = graph_rewrite(e, rules)
    need(got is want, f"{_show(e)} should become {_show(want)}, your rules gave {_show(got)}.")
  for e in [i // 2, i % 3, i // j, i % j]:
    got = graph_rewrite(e, rules)
    need(got is e, f"{_show(e)} must stay as it is, your rules gave {_show(got)}: only a divisor of exactly 1 may go.")

@exercise("11.softsign")
def _(softsign):
  from lazynb import Tensor
  x = np.array([-30.0, -2.0, -0.5, 0.25, 1.0, 4.0, 100.0], np.float32)
  t = Tensor(x, requires_grad=True)
  with _forbid("softsign"): out = softsign(t)
  _close(_np(out, "softsign"), x / (1 + np.abs(x)), "the values")
  _backward(out.sum(), "x")
  need(t.grad is not None, "no gradient reached x: build softsign from Tensor ops on x.")
  _close(t.grad.numpy(), 1 / (1 + np.abs(x)) ** 2, "the gradient")

@exercise("08.alu")
def _(alu):
  from lazynb.uop.ops import Ops
  r = _rng(8)
  a, b = r.uniform(0.5, 4, 6).astype(np.float32), r.uniform(-3, 3, 6).astype(np.float32)
  b[:2] = a[:2]   # equal pairs: CMPLT is strictly less, MAX of equals is either
  c = r.integers(0, 2, 6).astype(bool)
  want = {Ops.ADD: (a, b, a + b), Ops.MUL: (a, b, a * b), Ops.MAX: (a, b, np.maximum(a, b)), Ops.CMPLT: (a, b, a < b),
          Ops.NEG: (b, None, -b), Ops.RECIP: (a, None, 1 / a), Ops.EXP2: (b, None, np.exp2(b)), Ops.LOG2: (a, None, np.log2(a)),
          Ops.SQRT: (a, None, np.sqrt(a)), Ops.WHERE: (c, a, np.where(c, a, b))}
  for op, (x, y, w) in want.items():
    args = (x,) if y is None else (x, y) if op is not Ops.WHERE else (x, y, b)
    got = alu(op, *args)
    need(got is not None, f"alu({op.name}, ...) returned None.")
    got = np.asarray(got)
    need(got.shape == w.shape, f"alu({op.name}, ...) gives shape {got.shape}, expected {w.shape}: one result per element.")
    bad = ~np.isclose(got.astype(np.float64), w.astype(np.float64), rtol=1e-5)
    if bad.any():
      k = int(np.argmax(bad))
      raise Fail(f"{op.name} gives the wrong values: for sources {tuple(v[k].item() for v in args)} it should give {w[k].item()}, "
                 f"yours gives {got[k].item()}.")
    if op is Ops.CMPLT: need(got.dtype == np.bool_, f"CMPLT gives booleans (True/False), yours gives {got.dtype}.")

@exercise("10.toposort")
def _(toposort):
  from lazynb import Tensor
  from lazynb.uop.ops import UOp
  x, y = Tensor.rand(3, 4), Tensor.rand(4)
  for t in [(x + y).relu().sum(), (x * x + x).exp(), x @ Tensor.rand(4, 2)]:
    root = t.uop
    with _forbid("toposort", cls=UOp, why="this exercise is to write the walk yourself"): order = toposort(root)
    need(order is not None, "toposort returned None: return a list of UOps.")
    order = list(order)
    seen, stack = set(), [root]
    while stack:
      u = stack.pop()
      if u in seen: continue
      seen.add(u); stack.extend(u.src)  # noqa: E702
    need(len(order) == len(set(order)), "each node must appear once, even when it is shared (x + x).")
    need(set(order) == seen, f"the graph has {plural(len(seen), 'node')}, your list has {len(set(order))} different ones.")
    pos = {u: i for i, u in enumerate(order)}
    need(all(pos[s] < pos[u] for u in order for s in u.src), "every node must come after all of its sources.")

BEAT_MARGIN = 1.15  # the learner's kernel must be this much faster than the heuristic's: timing noise cannot flip it

@exercise("07.beat_heuristic")
def _(my_opts):
  from lazynb import Tensor
  r = _rng(7)
  a, b = r.standard_normal((64, 64), dtype=np.float32), r.standard_normal((64, 64), dtype=np.float32)
  pg = Playground(Tensor(a) @ Tensor(b), reference=a @ b, runs=5)
  opts = my_opts()
  need(opts is not None, "my_opts returned None: return a list of Opt, e.g. [Opt(OptOps.UPCAST, 1, 4)].")
  opts = list(opts)
  need(all(isinstance(o, Opt) for o in opts), "every item must be an Opt(OptOps.SOMETHING, axis, amount).")
  try: pg.set(opts)
  except KernelOptError as e: raise Fail(f"these opts cannot be applied to this kernel: {e}. Axis numbers change after each "
                                         "opt: pg.legal() lists what is legal from the current state.") from None
  need(pg.measure()["correct"], "with your opts the kernel computes a different result: that is a bug in lazynb, please report it.")
  mine, theirs = pg.race(opts, pg.heuristic)
  need(mine * BEAT_MARGIN < theirs,
       f"your opts ran {mine * 1e6:.1f} us, the heuristic's {pg.heuristic} ran {theirs * 1e6:.1f} us (medians of 45 interleaved "
       f"runs each; yours must be at least {round((BEAT_MARGIN - 1) * 100)}% faster, so noise cannot decide). Start from the heuristic's "
       "opts and ask of each one what it costs on a kernel this small, not only what it saves: undo them one at a time and "
       "watch the time.")

from lazynb.notebook import build  # noqa: E402,F401  (registers the build track's exercises)
