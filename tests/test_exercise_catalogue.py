"""A catalogue of plausible wrong answers for every exercise in lazynb/notebook/exercise.py: each must fail its check
with a hint that says what is wrong (the part of the hint expected is written next to it), and valid answers written
differently from the reference solution must pass. A new exercise cannot be added without a catalogue entry."""
import contextlib, functools, io, itertools, math, operator, time, types
import numpy as np
import pytest
from lazynb import Tensor, GlobalCounters, Context
from lazynb.device import Allocator, Compiler, CompileError, Runner
from lazynb.dtype import dtypes
from lazynb.uop.ops import UPat, PatternMatcher, Ops
from lazynb.notebook import exercise as ex

WRONG: dict[str, list[tuple[str, object, str]]] = {}   # key -> [(what the mistake is, the answer, a part of the hint)]
RIGHT: dict[str, list[tuple[str, object]]] = {}         # key -> [(how it differs from the reference, the answer)]

def wrong(key, what, hint, obj=None):
  if obj is not None: WRONG.setdefault(key, []).append((what, obj, hint))
  return lambda fn: WRONG.setdefault(key, []).append((what, fn, hint)) or fn

def right(key, what, obj=None):
  if obj is not None: RIGHT.setdefault(key, []).append((what, obj))
  return lambda fn: RIGHT.setdefault(key, []).append((what, fn)) or fn

def onehot_mask(labels, n): return labels.reshape(-1, 1) == Tensor.arange(n).reshape(1, -1)

# ---------------------------------------------------------------- p01.mse

wrong("p01.mse", "absolute instead of squared", "values are wrong", lambda a, b: (a - b).abs().mean())
wrong("p01.mse", "sum instead of mean", "values are wrong", lambda a, b: ((a - b) * (a - b)).sum())
wrong("p01.mse", "the root of the mean (RMSE)", "values are wrong", lambda a, b: ((a - b) * (a - b)).mean().sqrt())
wrong("p01.mse", "mean over the first axis only", "scalar", lambda a, b: ((a - b) * (a - b)).mean(axis=0))
wrong("p01.mse", "realized in the middle", "ONE fused kernel", lambda a, b: ((a - b) * (a - b)).realize().mean())
right("p01.mse", "a power and a sum divided by the count", lambda a, b: ((a - b) ** 2).sum() / math.prod(a.shape))

# ---------------------------------------------------------------- p02.address

wrong("p02.address", "forgets the offset", "wrong element", lambda idx, st, off: sum(i * s for i, s in zip(idx, st)))
wrong("p02.address", "strides in reverse order", "wrong element", lambda idx, st, off: off + sum(i * s for i, s in zip(idx, st[::-1])))
wrong("p02.address", "counts indices from 1", "wrong element", lambda idx, st, off: off + sum((i + 1) * s for i, s in zip(idx, st)))
wrong("p02.address", "drops the sign of a stride (flips)", "flip view", lambda idx, st, off: off + sum(i * abs(s) for i, s in zip(idx, st)))
wrong("p02.address", "returns a float", "must return an int", lambda idx, st, off: float(off + sum(i * s for i, s in zip(idx, st))))
@right("p02.address", "numpy's dot product")
def _address_dot(idx, strides, offset): return offset + int(np.dot(np.asarray(idx, np.int64), np.asarray(strides, np.int64)))

# ---------------------------------------------------------------- p02.bmm

def _bmm_parts(a, b):
  (B, M, K), N = a.shape, b.shape[2]
  return a.reshape(B, M, K, 1), b.reshape(B, 1, K, N)
wrong("p02.bmm", "calls the built-in @", "not allowed", lambda a, b: a @ b)
wrong("p02.bmm", "goes through numpy", "not allowed", lambda a, b: Tensor(a.numpy() @ b.numpy()))
wrong("p02.bmm", "sums the wrong axis", "the result has shape", lambda a, b: (lambda x, y: (x * y).sum(axis=3))(*_bmm_parts(a, b)))
wrong("p02.bmm", "uses the first batch of b for every batch", "values are wrong",
      lambda a, b: (lambda x, y: (x * y[:1]).sum(axis=2))(*_bmm_parts(a, b)))
wrong("p02.bmm", "realizes the result inside", "not computed from a and b", lambda a, b: (lambda x, y: (x * y).sum(axis=2).realize())(*_bmm_parts(a, b)))
@right("p02.bmm", "b transposed, both expanded to (B, M, N, K), sum of the last axis")
def _bmm_permute(a, b):
  (B, M, K), N = a.shape, b.shape[2]
  return (a.reshape(B, M, 1, K).expand(B, M, N, K) * b.permute(0, 2, 1).reshape(B, 1, N, K).expand(B, M, N, K)).sum(axis=-1)

# ---------------------------------------------------------------- p03.finite_diff

def _fd(step):
  def finite_diff(f, v, eps=1e-4):
    g = np.zeros_like(v, dtype=np.float64)
    for i in range(v.size): g.flat[i] = step(f, v, i, eps)
    return g
  return finite_diff
def _nudged(v, i, d):
  w = v.copy(); w.flat[i] += d  # noqa: E702
  return w
wrong("p03.finite_diff", "forward difference", "slopes are off", _fd(lambda f, v, i, e: (f(_nudged(v, i, e)) - f(v)) / e))
wrong("p03.finite_diff", "divides by eps, not 2 eps", "slopes are off", _fd(lambda f, v, i, e: (f(_nudged(v, i, e)) - f(_nudged(v, i, -e))) / e))
wrong("p03.finite_diff", "wrong sign", "slopes are off", _fd(lambda f, v, i, e: (f(_nudged(v, i, -e)) - f(_nudged(v, i, e))) / (2 * e)))
wrong("p03.finite_diff", "one slope for all inputs", "one slope per input", lambda f, v, eps=1e-4: np.array((f(v + eps) - f(v - eps)) / (2 * eps)))
@wrong("p03.finite_diff", "nudges v itself and leaves it changed", "changed the input array")
def _fd_in_place(f, v, eps=1e-4):
  g = np.zeros_like(v)
  for i in range(v.size):
    v[i] += eps; hi = f(v); v[i] -= 2 * eps; lo = f(v)  # noqa: E702
    g[i] = (hi - lo) / (2 * eps)
  return g
@right("p03.finite_diff", "rows of an identity matrix as the nudges")
def _fd_eye(f, v, eps=1e-5):
  return np.array([(f(v + eps * e) - f(v - eps * e)) / (2 * eps) for e in np.eye(v.size)]).reshape(v.shape)

# ---------------------------------------------------------------- p03.pseudo_huber

wrong("p03.pseudo_huber", "forgets delta squared", "values are wrong",
      lambda p, t, d=1.0: ((1 + ((p - t) / d) ** 2).sqrt() - 1).mean())
wrong("p03.pseudo_huber", "sum instead of mean", "values are wrong",
      lambda p, t, d=1.0: (d * d * ((1 + ((p - t) / d) ** 2).sqrt() - 1)).sum())
wrong("p03.pseudo_huber", "r not divided by delta", "delta=0.5", lambda p, t, d=1.0: (d * d * ((1 + (p - t) ** 2).sqrt() - 1)).mean())
wrong("p03.pseudo_huber", "computed in numpy: no gradient", "no gradient reached pred",
      lambda p, t, d=1.0: Tensor(np.mean(d * d * (np.sqrt(1 + ((p.numpy() - t.numpy()) / d) ** 2) - 1)), dtype=dtypes.float32))
right("p03.pseudo_huber", "delta squared inside the root, sum over the count",
      lambda p, t, d=1.0: ((d * d + (p - t) * (p - t)).sqrt() * d - d * d).sum() / p.shape[0])

# ---------------------------------------------------------------- p04.cross_entropy

wrong("p04.cross_entropy", "no max subtracted", "inf or nan",
      lambda lg, y: -(onehot_mask(y, lg.shape[1]).where((lg.exp() / lg.exp().sum(axis=1, keepdim=True)).log(), 0).sum(axis=1)).mean())
wrong("p04.cross_entropy", "the built-in log_softmax", "not allowed",
      lambda lg, y: -(onehot_mask(y, lg.shape[1]).where(lg.log_softmax(axis=1), 0).sum(axis=1)).mean())
wrong("p04.cross_entropy", "the built-in softmax, then log", "not allowed",
      lambda lg, y: -(onehot_mask(y, lg.shape[1]).where(lg.softmax(axis=1).log(), 0).sum(axis=1)).mean())
def _ce(axis=1, sign=-1.0, reduce="mean"):
  def cross_entropy(lg, y):
    z = lg - lg.max(axis=axis, keepdim=True)
    logp = z - z.exp().sum(axis=axis, keepdim=True).log()
    picked = onehot_mask(y, lg.shape[1]).where(logp, 0).sum(axis=1)
    return sign * (picked.mean() if reduce == "mean" else picked.sum())
  return cross_entropy
wrong("p04.cross_entropy", "softmax over the batch axis", "values are wrong", _ce(axis=0))
wrong("p04.cross_entropy", "forgets the minus sign", "values are wrong", _ce(sign=1.0))
wrong("p04.cross_entropy", "sum over rows instead of mean", "values are wrong", _ce(reduce="sum"))
@right("p04.cross_entropy", "logsumexp minus the picked logit, picked by a float mask")
def _ce_lse(logits, labels):
  m = logits.max(axis=1, keepdim=True)
  lse = m.reshape(-1) + (logits - m).exp().sum(axis=1).log()
  return (lse - (logits * onehot_mask(labels, logits.shape[1]).float()).sum(axis=1)).mean()

# ---------------------------------------------------------------- p05.fold_rules

X = UPat.var("x")
wrong("p05.fold_rules", "x+0 becomes 0", "not a constant", PatternMatcher([(X * 1, lambda x: x), (X + 0, lambda x: x.const_like(0))]))
wrong("p05.fold_rules", "only the multiply rule", "should become", PatternMatcher([(X * 1, lambda x: x)]))
wrong("p05.fold_rules", "any constant factor goes", "must stay", PatternMatcher([(X * UPat.cvar("c"), lambda x, c: x), (X + 0, lambda x: x)]))
wrong("p05.fold_rules", "the constant only on the right", "(1*i) should become i",
      PatternMatcher([(UPat(Ops.MUL, src=(X, UPat.const(None, 1))), lambda x: x), (UPat(Ops.ADD, src=(X, UPat.const(None, 0))), lambda x: x)]))
wrong("p05.fold_rules", "ints only", "should become", PatternMatcher([(UPat.var("x", dtypes.int) * 1, lambda x: x), (UPat.var("x", dtypes.int) + 0, lambda x: x)]))
wrong("p05.fold_rules", "x*0 becomes x", "must stay", PatternMatcher([(X * 1, lambda x: x), (X * 0, lambda x: x), (X + 0, lambda x: x)]))
right("p05.fold_rules", "any constant, checked in the function",
      PatternMatcher([(X * UPat.cvar("c"), lambda x, c: x if c.arg == 1 else None), (X + UPat.cvar("c"), lambda x, c: x if c.arg == 0 else None)]))

# ---------------------------------------------------------------- p06.layer_norm

def _ln(eps_at="inside", fixed=None, ddof=0, axis=-1, center=True):
  def layer_norm(x, eps=1e-5):
    e = eps if fixed is None else fixed
    c = x - x.mean(axis=axis, keepdim=True) if center else x
    var = (c * c).sum(axis=axis, keepdim=True) / (x.shape[axis] - ddof)
    return c / (var + e).sqrt() if eps_at == "inside" else c / var.sqrt() if eps_at == "none" else c / (var.sqrt() + e)
  return layer_norm
wrong("p06.layer_norm", "no eps", "almost constant", _ln(eps_at="none"))
wrong("p06.layer_norm", "eps added outside the root", "almost constant", _ln(eps_at="outside"))
wrong("p06.layer_norm", "eps hard-coded, the argument ignored", "layer_norm(x, 0.1)", _ln(fixed=1e-5))
wrong("p06.layer_norm", "variance divided by n-1", "values are wrong", _ln(ddof=1))
wrong("p06.layer_norm", "normalizes the first axis", "values are wrong", _ln(axis=0))
wrong("p06.layer_norm", "forgets to subtract the mean", "values are wrong", _ln(center=False))
wrong("p06.layer_norm", "the built-in layernorm", "not allowed", lambda x, eps=1e-5: x.layernorm(eps=eps))
@right("p06.layer_norm", "E[x^2] - E[x]^2, times rsqrt")
def _ln_moments(x, eps=1e-5):
  m = x.mean(axis=-1, keepdim=True)
  return (x - m) * ((x * x).mean(axis=-1, keepdim=True) - m * m + eps).rsqrt()

# ---------------------------------------------------------------- p07.allocator

def _allocator(alloc=None, copyin=None, copyout=None):
  class A(Allocator):
    def _alloc(self, size, options=None): return alloc(size) if alloc else bytearray(size)
    def copyin(self, dst, src): return copyin(dst, src) if copyin else dst.__setitem__(slice(0, len(src)), src)
    def copyout(self, dst, src): return copyout(dst, src) if copyout else dst.__setitem__(slice(None), src[:len(dst)])
  return A
_shared = bytearray(1024)
wrong("p07.allocator", "every alloc gives the same buffer", "new buffer", _allocator(alloc=lambda n: _shared))
wrong("p07.allocator", "size taken as a count of floats", "at least", _allocator(alloc=lambda n: bytearray(n // 4)))
wrong("p07.allocator", "copyin rebinds dst instead of writing into it", "copyout(copyin(x))", _allocator(copyin=lambda d, s: bytearray(s)))
wrong("p07.allocator", "copyout drops the last 4 bytes", "copyout(copyin(x))",
      _allocator(copyout=lambda d, s: d.__setitem__(slice(0, max(len(d) - 4, 0)), s[:max(len(d) - 4, 0)])))
wrong("p07.allocator", "not derived from Allocator", "derived from Allocator", type("Loose", (), {"_alloc": lambda self, n, o=None: bytearray(n)}))
class _ViewAllocator(Allocator):
  def _alloc(self, size, options=None): return bytearray(b"\0" * size)
  def copyin(self, dst, src): memoryview(dst)[:src.nbytes] = src
  def copyout(self, dst, src): dst[:] = memoryview(src)[:dst.nbytes]
right("p07.allocator", "memoryview slices", _ViewAllocator)

# ---------------------------------------------------------------- p07.compiler

def _compiler(fn): return type("C", (Compiler,), {"compile": lambda self, src: fn(src)})
wrong("p07.compiler", "never checks the syntax", "must raise CompileError", _compiler(lambda src: src.encode()))
wrong("p07.compiler", "lets SyntaxError through", "turn the SyntaxError", _compiler(lambda src: (compile(src, "k", "exec"), src.encode())[1]))
wrong("p07.compiler", "returns str, not bytes", "must return bytes", _compiler(lambda src: src))
wrong("p07.compiler", "returns a marshalled code object, not the text", "the program's text",
      _compiler(lambda src: __import__("marshal").dumps(compile(src, "k", "exec"))))
@right("p07.compiler", "ast.parse for the syntax, utf-8 bytes")
class _AstCompiler(Compiler):
  def compile(self, src):
    import ast
    try: ast.parse(src)
    except SyntaxError as e: raise CompileError(str(e)) from e
    return bytes(src, "utf-8")

# ---------------------------------------------------------------- p07.runner

def _runner(pick=lambda name, ns: ns[name], grid=lambda gs: itertools.product(*map(range, gs)), timed=lambda wait, t: t if wait else None):
  class R(Runner):
    def __init__(self, name, lib):
      ns: dict = {}
      exec(lib.decode(), ns)
      self.fxn = pick(name, {k: v for k, v in ns.items() if not k.startswith("__")})
    def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False):
      st = time.perf_counter()
      for g in grid(global_size): self.fxn(*bufs, *g)
      return timed(wait, time.perf_counter() - st)
  return R
wrong("p07.runner", "runs the first function of the library", "called 'shift'", _runner(pick=lambda name, ns: next(iter(ns.values()))))
wrong("p07.runner", "runs the last function of the library", "ran the wrong function", _runner(pick=lambda name, ns: list(ns.values())[-1]))
wrong("p07.runner", "loops over the first grid axis only", "over the grid", _runner(grid=lambda gs: ((g, 0, 0) for g in range(gs[0]))))
wrong("p07.runner", "returns the time even without wait", "returns None", _runner(timed=lambda wait, t: t))
wrong("p07.runner", "returns the time as an int of ns", "a float", _runner(timed=lambda wait, t: int(t * 1e9) if wait else None))
class _ModuleRunner(Runner):
  def __init__(self, name, lib):
    mod = types.ModuleType("kernels")
    exec(lib.decode(), mod.__dict__)
    self.fxn = getattr(mod, name)
  def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False):
    st = time.monotonic()
    for g0 in range(global_size[0]):
      for g1 in range(global_size[1]):
        for g2 in range(global_size[2]): self.fxn(*bufs, g0, g1, g2)
    return float(time.monotonic() - st) if wait else None
right("p07.runner", "a module object and three nested loops", _ModuleRunner)

# ---------------------------------------------------------------- 02.count_kernels

@wrong("02.count_kernels", "resets the counters", "reset the running totals")
def _count_reset(fn):
  GlobalCounters.reset(); fn()  # noqa: E702
  return GlobalCounters.kernel_count
@wrong("02.count_kernels", "returns the running total", "running total")
def _count_total(fn):
  fn()
  return GlobalCounters.kernel_count
@wrong("02.count_kernels", "calls fn twice", "exactly once")
def _count_twice(fn):
  fn(); before = GlobalCounters.kernel_count; fn()  # noqa: E702
  return GlobalCounters.kernel_count - before
@wrong("02.count_kernels", "returns a float", "must return an int")
def _count_float(fn):
  before = GlobalCounters.kernel_count; fn()  # noqa: E702
  return float(GlobalCounters.kernel_count - before)
@wrong("02.count_kernels", "off by one", "you counted")
def _count_off_by_one(fn):
  before = GlobalCounters.kernel_count; fn()  # noqa: E702
  return GlobalCounters.kernel_count - before + 1
@right("02.count_kernels", "the trace's kernel list")
def _count_by_trace(fn):
  from lazynb.trace import capture
  with capture(rewrites=False) as tr: fn()
  return len(tr.kernels)

# ---------------------------------------------------------------- 02.debug_lines

def _printed(fn, level):
  out = io.StringIO()
  with Context(DEBUG=level), contextlib.redirect_stdout(out): fn()
  return out.getvalue().splitlines()
@wrong("02.debug_lines", "sets os.environ after import", "os.environ")
def _lines_environ(fn):
  import os
  os.environ["DEBUG"] = "2"
  try:
    out = io.StringIO()
    with contextlib.redirect_stdout(out): fn()
  finally: del os.environ["DEBUG"]
  return [s for s in out.getvalue().splitlines() if s.startswith("***")]
@wrong("02.debug_lines", "leaves DEBUG at 2", "then restore it")
def _lines_leak(fn):
  from lazynb.helpers import DEBUG
  DEBUG.value = 2
  out = io.StringIO()
  with contextlib.redirect_stdout(out): fn()
  return [s for s in out.getvalue().splitlines() if s.startswith("***")]
wrong("02.debug_lines", "every printed line", "start with ***", lambda fn: _printed(fn, 2))
wrong("02.debug_lines", "strips the *** marker", "start with ***", lambda fn: [s[3:].strip() for s in _printed(fn, 2) if s.startswith("***")])
@wrong("02.debug_lines", "runs fn twice (once to warm up)", "exactly once")
def _lines_twice(fn):
  fn()
  return [s for s in _printed(fn, 2) if s.startswith("***")]
@right("02.debug_lines", "DEBUG.value saved and put back by hand")
def _lines_by_hand(fn):
  from lazynb.helpers import DEBUG
  old, buf = DEBUG.value, io.StringIO()
  DEBUG.value = 2
  try:
    with contextlib.redirect_stdout(buf): fn()
  finally: DEBUG.value = old
  return list(filter(lambda s: s[:3] == "***", buf.getvalue().split("\n")))

# ---------------------------------------------------------------- 01.relu

wrong("01.relu", "the built-in maximum", "not allowed", lambda x: x.maximum(0))
wrong("01.relu", "the comparison the wrong way round", "values are wrong", lambda x: (x < 0).where(x, 0))
wrong("01.relu", "returns the input", "values are wrong", lambda x: x)
wrong("01.relu", "realizes the mask first", "one elementwise kernel", lambda x: (x > 0).realize().where(x, 0))
wrong("01.relu", "the built-in clip", "not allowed", lambda x: x.clip(0, None))
right("01.relu", "x times its mask", lambda x: x * (x > 0))
right("01.relu", "(x + |x|) / 2", lambda x: (x + x.abs()) / 2)

# ---------------------------------------------------------------- 03.one_hot

wrong("03.one_hot", "a bool result", "booleans", lambda lb, k: onehot_mask(lb, k))
wrong("03.one_hot", "transposed: (classes, labels)", "give shape", lambda lb, k: (lb.reshape(1, -1) == Tensor.arange(k).reshape(-1, 1)).float())
wrong("03.one_hot", "classes counted from 1", "1 at its label", lambda lb, k: (lb.reshape(-1, 1) == Tensor.arange(1, k + 1).reshape(1, -1)).float())
wrong("03.one_hot", "the built-in one_hot", "not allowed", lambda lb, k: lb.one_hot(k))
right("03.one_hot", "a difference equal to zero, as ints", lambda lb, k: (lb.unsqueeze(1) - Tensor.arange(k).unsqueeze(0) == 0).where(1, 0))

# ---------------------------------------------------------------- 04.lazy

@wrong("04.lazy", "realizes as it goes", "ran")
def _lazy_eager(ts):
  total = ts[0] * ts[0]
  for t in ts[1:]: total = (total + t * t).realize()
  return total
@wrong("04.lazy", "prints the partial sums", "ran")
def _lazy_print(ts):
  total = ts[0] * ts[0]
  for t in ts[1:]:
    total = total + t * t
    with contextlib.redirect_stdout(io.StringIO()): print(total.numpy())
  return total
wrong("04.lazy", "forgets to square", "values are wrong", lambda ts: functools.reduce(operator.add, ts))
wrong("04.lazy", "squares only the first", "values are wrong", lambda ts: functools.reduce(operator.add, ts[1:], ts[0] * ts[0]))
right("04.lazy", "Python's sum of a generator", lambda ts: sum((t * t for t in ts[1:]), ts[0] * ts[0]))

# ---------------------------------------------------------------- 05.softmax

wrong("05.softmax", "no max subtracted", "inf or nan", lambda x: x.exp() / x.exp().sum(axis=-1, keepdim=True))
wrong("05.softmax", "normalizes the first axis", "values are wrong",
      lambda x: (x - x.max(axis=0, keepdim=True)).exp() / (x - x.max(axis=0, keepdim=True)).exp().sum(axis=0, keepdim=True))
wrong("05.softmax", "the built-in softmax", "not allowed", lambda x: x.softmax(-1))
wrong("05.softmax", "returns the log-softmax", "values are wrong",
      lambda x: (lambda z: z - z.exp().sum(axis=-1, keepdim=True).log())(x - x.max(axis=-1, keepdim=True)))
wrong("05.softmax", "divides by the sum of the whole tensor", "values are wrong",
      lambda x: (lambda e: e / e.sum())((x - x.max(axis=-1, keepdim=True)).exp()))
@right("05.softmax", "exp2 of a scaled shift, times the reciprocal")
def _softmax_exp2(x):
  e = ((x - x.max(axis=-1, keepdim=True)) * (1 / math.log(2))).exp2()
  return e * e.sum(axis=-1, keepdim=True).reciprocal()

# ---------------------------------------------------------------- 06.swish_grad

def _swish(v): return v / (1 + np.exp(-v))
wrong("06.swish_grad", "central finite difference", "not exact", lambda x: (_swish(x + 1e-5) - _swish(x - 1e-5)) / 2e-5)
wrong("06.swish_grad", "forgets the product rule: sigmoid only", "finite differences", lambda x: 1 / (1 + np.exp(-x)))
wrong("06.swish_grad", "a minus in the product rule", "finite differences", lambda x: (lambda s: s - x * s * (1 - s))(1 / (1 + np.exp(-x))))
wrong("06.swish_grad", "sigmoid' taken as s*s", "finite differences", lambda x: (lambda s: s + x * s * s)(1 / (1 + np.exp(-x))))
right("06.swish_grad", "sigmoid from tanh, factored", lambda x: (lambda s: s * (1 + x * (1 - s)))(0.5 + 0.5 * np.tanh(x / 2)))

# ---------------------------------------------------------------- 07.int_rules

wrong("07.int_rules", "x%1 becomes x", "should become 0", PatternMatcher([(X // 1, lambda x: x), (X % 1, lambda x: x)]))
wrong("07.int_rules", "x//1 becomes 0", "should become i", PatternMatcher([(X // 1, lambda x: x.const_like(0)), (X % 1, lambda x: x.const_like(0))]))
wrong("07.int_rules", "only the // rule", "should become 0", PatternMatcher([(X // 1, lambda x: x)]))
wrong("07.int_rules", "any constant divisor goes", "must stay",
      PatternMatcher([(X // UPat.cvar("c"), lambda x, c: x), (X % 1, lambda x: x.const_like(0))]))
right("07.int_rules", "any constant, checked in the function",
      PatternMatcher([(UPat(Ops.IDIV, src=(X, UPat.cvar("c"))), lambda x, c: x if c.arg == 1 else None),
                      (UPat(Ops.MOD, src=(X, UPat.cvar("c"))), lambda x, c: x.const_like(0) if c.arg == 1 else None)]))

# ---------------------------------------------------------------- 11.softsign

wrong("11.softsign", "forgets the abs", "values are wrong", lambda x: x / (1 + x))
wrong("11.softsign", "a minus in the denominator", "inf or nan", lambda x: x / (1 - x.abs()))
wrong("11.softsign", "a root instead of the abs", "values are wrong", lambda x: x / (1 + x * x).sqrt())
wrong("11.softsign", "computed in numpy: no gradient", "no gradient reached x",
      lambda x: Tensor((lambda v: v / (1 + np.abs(v)))(x.numpy())))
right("11.softsign", "sign(x) * (1 - 1/(1+|x|))", lambda x: x.sign() * (1 - (1 + x.abs()).reciprocal()))

# ---------------------------------------------------------------- 08.alu

_ALU = {Ops.ADD: np.add, Ops.MUL: np.multiply, Ops.MAX: np.maximum, Ops.CMPLT: np.less, Ops.NEG: np.negative,
        Ops.RECIP: np.reciprocal, Ops.EXP2: np.exp2, Ops.LOG2: np.log2, Ops.SQRT: np.sqrt, Ops.WHERE: np.where}
def _alu_with(**swap):
  table = {**_ALU, **{Ops[k]: v for k, v in swap.items()}}
  return lambda op, *src: table[op](*src)
wrong("08.alu", "multiplies everything", "wrong values", lambda op, *s: s[0] * s[1] if len(s) > 1 else s[0])
wrong("08.alu", "LOG2 as the natural log", "LOG2", _alu_with(LOG2=np.log))
wrong("08.alu", "EXP2 as exp", "EXP2", _alu_with(EXP2=np.exp))
wrong("08.alu", "CMPLT as less-or-equal", "CMPLT", _alu_with(CMPLT=np.less_equal))
wrong("08.alu", "CMPLT gives 0.0 and 1.0", "booleans", _alu_with(CMPLT=lambda a, b: (a < b).astype(np.float32)))
wrong("08.alu", "WHERE with its branches swapped", "WHERE", _alu_with(WHERE=lambda c, a, b: np.where(c, b, a)))
wrong("08.alu", "MAX as min", "MAX", _alu_with(MAX=np.minimum))
_OPS = {Ops.ADD: operator.add, Ops.MUL: operator.mul, Ops.MAX: lambda a, b: np.where(a > b, a, b), Ops.CMPLT: operator.lt,
        Ops.NEG: operator.neg, Ops.RECIP: lambda a: 1 / a, Ops.EXP2: lambda a: 2.0 ** a, Ops.LOG2: lambda a: np.log(a) / np.log(2),
        Ops.SQRT: lambda a: a ** 0.5, Ops.WHERE: lambda c, a, b: c * a + ~c * b}
right("08.alu", "operators and powers", lambda op, *src: _OPS[op](*src))

# ---------------------------------------------------------------- 10.toposort

wrong("10.toposort", "calls UOp.toposort", "UOp.toposort is not allowed", lambda root: root.toposort())
@wrong("10.toposort", "no seen-set: shared nodes repeat", "appear once")
def _topo_dups(root):
  out = []
  def visit(u):
    for s in u.src: visit(s)
    out.append(u)
  visit(root)
  return out
@wrong("10.toposort", "appends a node before its sources", "after all of its sources")
def _topo_pre(root):
  out, seen = [], set()
  def visit(u):
    if u in seen: return
    seen.add(u); out.append(u)  # noqa: E702
    for s in u.src: visit(s)
  visit(root)
  return out
wrong("10.toposort", "only the root and its direct sources", "the graph has", lambda root: [*dict.fromkeys(root.src), root])
@right("10.toposort", "Kahn's algorithm: count the users, emit the nodes nothing waits on")
def _topo_kahn(root):
  users: dict = {}
  stack, seen = [root], {root}
  while stack:
    u = stack.pop()
    for s in u.src:
      users.setdefault(s, set()).add(u)
      if s not in seen: seen.add(s); stack.append(s)  # noqa: E702
  waiting = {u: len(set(u.src)) for u in seen}
  ready, out = [u for u in seen if waiting[u] == 0], []
  while ready:
    u = ready.pop()
    out.append(u)
    for v in users.get(u, ()):
      waiting[v] -= 1
      if waiting[v] == 0: ready.append(v)
  return out

# ---------------------------------------------------------------- 07.beat_heuristic

from lazynb.codegen.kernel import Opt, OptOps  # noqa: E402
wrong("07.beat_heuristic", "returns nothing", "returned None", lambda: None)
wrong("07.beat_heuristic", "tuples instead of Opt", "must be an Opt", lambda: [(OptOps.UPCAST, 0, 4)])
wrong("07.beat_heuristic", "an axis the kernel does not have", "cannot be applied", lambda: [Opt(OptOps.UPCAST, 7, 4)])
def _heuristic_opts():
  from lazynb.notebook.playground import Playground
  a = np.zeros((64, 64), np.float32)
  return list(Playground(Tensor(a) @ Tensor(a), runs=1).heuristic)
wrong("07.beat_heuristic", "the heuristic's own opts", "must be at least", _heuristic_opts)
# (a smaller 8x8 tile without threads lost to the heuristic on a loaded CI machine: a valid answer must win by the margin
# everywhere, so the alternative keeps the heuristic's tile and drops only what costs more than it saves here, the threads)
right("07.beat_heuristic", "the heuristic's opts without its threads", lambda: [o for o in _heuristic_opts() if o.op is not OptOps.THREAD])

# ---------------------------------------------------------------- the build track: b01.compile, b01.load, b01.launch, b02.render, b03.linearize, b04.simplify

def _solution(stem):
  """A fresh copy of the reference solution's module (a wrong answer may change its tables without touching another's)."""
  from build_track import load_solution
  return load_solution(stem)

def _cc(src, *flags):
  import os, subprocess, tempfile
  from lazynb.notebook.build import _find_cc
  d = tempfile.mkdtemp()
  out = os.path.join(d, "k.so")
  subprocess.run([*_find_cc(), *flags, "-x", "c", "-", "-o", out], input=src.encode(), capture_output=True)
  return out

wrong("b01.compile", "returns the source as bytes", "not a compiled library", lambda device, src: src.encode())
wrong("b01.compile", "returns the library's file name", "must return the library's bytes", lambda device, src: _cc(src, "-shared", "-fPIC"))
wrong("b01.compile", "an object file (-c)", "not a shared library", lambda device, src: open(_cc(src, "-c"), "rb").read())
wrong("b01.compile", "ignores the compiler's failure", "what the compiler wrote to stderr",
      lambda device, src: open(_cc(src, "-shared", "-fPIC"), "rb").read())
def _first_library_forever():
  cache = {}
  def my_compile(device, src): return cache.setdefault(device, _solution("b01_runtime").my_compile(device, src))
  return my_compile
wrong("b01.compile", "keeps the first library for every kernel (cached by device, not by source)", "undefined symbol", _first_library_forever())
@right("b01.compile", "a named temporary file, -O1, the flags in another order")
def _compile_with_named_temp_file(device, src):
  import subprocess, tempfile
  from lazynb.notebook.build import _find_cc
  with tempfile.NamedTemporaryFile(suffix=".so") as f:
    done = subprocess.run([*_find_cc(), "-O1", "-fPIC", "-shared", "-o", f.name, "-xc", "-"], input=src.encode(), capture_output=True)
    if done.returncode: raise RuntimeError(done.stderr.decode())
    return f.read()

def _load_with(call):
  """The reference load, with the C function called by call(fxn, bufs, vals)."""
  def my_load(device, name, lib):
    import ctypes, os, tempfile
    fd, path = tempfile.mkstemp(suffix=".so")
    with os.fdopen(fd, "wb") as f: f.write(lib)
    fxn = getattr(ctypes.CDLL(path), name)
    def program(*bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False):
      call(fxn, bufs, vals)
      return 0.0
    return program
  return my_load
import ctypes  # noqa: E402
wrong("b01.load", "passes addresses as plain ints (ctypes makes them 32-bit)", "killed by",
      _load_with(lambda fxn, bufs, vals: fxn(*[b.ctypes.data for b in bufs], *vals)))
wrong("b01.load", "passes the buffers in reverse order", "differs",
      _load_with(lambda fxn, bufs, vals: fxn(*[ctypes.c_void_p(b.ctypes.data) for b in reversed(bufs)], *[ctypes.c_int(v) for v in vals])))
wrong("b01.load", "forgets the variables' values", "symbolic",
      _load_with(lambda fxn, bufs, vals: fxn(*[ctypes.c_void_p(b.ctypes.data) for b in bufs])))
wrong("b01.load", "returns the C function itself", "failed after your load stage", lambda device, name, lib: getattr(ctypes.CDLL(_so_file(lib)), name))
def _so_file(lib):
  import tempfile
  with tempfile.NamedTemporaryFile(suffix=".so", delete=False) as f: f.write(lib)
  return f.name
right("b01.load", "keeps the library file, passes pointers with from_buffer", _load_with(
  lambda fxn, bufs, vals: fxn(*[ctypes.cast((ctypes.c_char * b.nbytes).from_buffer(b), ctypes.c_void_p) for b in bufs], *map(ctypes.c_int, vals))))

def _grid_load_with(launch):
  """The reference grid load, with the kernel launched by launch(fxn, args, ids, vals): args are the buffers' pointers, ids
  is global_size[0], vals the variables' values (not yet in args)."""
  def my_grid_load(device, name, lib):
    fxn = getattr(ctypes.CDLL(_so_file(lib)), name)
    def program(*bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False):
      launch(fxn, [ctypes.c_void_p(b.ctypes.data) for b in bufs], global_size[0], [ctypes.c_int(v) for v in vals])
      return 0.0
    return program
  return my_grid_load
def _each_id(ids):
  """A launch calling the kernel once with no id when there is no thread axis, else once per id in ids(n)."""
  def launch(fxn, args, n, vals):
    if n == 1: fxn(*args, *vals)
    else:
      for t in ids(n): fxn(*args, *vals, ctypes.c_int(t))
  return launch
wrong("b01.launch", "calls the kernel once (the answer to b01.load)", "the kernel ran once", lambda device, name, lib: _solution("b01_runtime").my_load(device, name, lib))
wrong("b01.launch", "thread ids 1..n", "thread ids start at 0", _grid_load_with(_each_id(lambda n: range(1, n + 1))))
wrong("b01.launch", "a fixed count of ids (4), whatever global_size says", "range(global_size[0])", _grid_load_with(_each_id(lambda n: range(4))))
wrong("b01.launch", "drops the variables' values", "was not 1234",
      _grid_load_with(lambda fxn, args, n, vals: [fxn(*args, ctypes.c_int(t)) for t in range(n)]))
wrong("b01.launch", "the thread id before the variables' values", "was not 1234",
      _grid_load_with(lambda fxn, args, n, vals: [fxn(*args, ctypes.c_int(t), *vals) for t in range(n)]))
def _probe_only(device, name, lib):
  """Launches every id for a kernel named probe, and every other kernel once with id 0: what only the corpus can catch."""
  if name == "probe": return _solution("b01_runtime").my_grid_load(device, name, lib)
  return _grid_load_with(lambda fxn, args, n, vals: fxn(*args, *vals, ctypes.c_int(0)))(device, name, lib)
wrong("b01.launch", "launches over the grid for the probe kernel only", "differs", _probe_only)
def _pooled(fxn, args, n, vals):
  from concurrent.futures import ThreadPoolExecutor
  if n == 1: return fxn(*args, *vals)
  with ThreadPoolExecutor(n) as pool: list(pool.map(lambda t: fxn(*args, *vals, ctypes.c_int(t)), range(n)))
right("b01.launch", "the ids on a thread pool", _grid_load_with(_pooled))

def _render_edit(edit):
  """The reference renderer with its C text changed by edit(src)."""
  base = _solution("b02_renderer").my_render
  return lambda name, uops, renderer: edit(base(name, uops, renderer))
def _render_tables(change):
  """The reference renderer of a fresh solution module whose tables change(mod) altered."""
  mod = _solution("b02_renderer")
  change(mod)
  return mod.my_render
import re  # noqa: E402
wrong("b02.render", "reads a padded load without its valid (out of bounds)", "movement",
      _render_edit(lambda src: re.sub(r"= \((.*)\) \? (\*\([^;]*\)) : [^;]*;", r"= \2;", src)))
wrong("b02.render", "starts every accumulator at 0 (max of negatives)", "reduce",
      _render_edit(lambda src: re.sub(r"(float|int) (acc\d+) = [^;]*;", r"\1 \2 = 0;", src)))
wrong("b02.render", "MAX written as the smaller", "elementwise", _render_edit(lambda src: src.replace(" > ", " < ")))
wrong("b02.render", "CMPLT the other way round", "differs", _render_tables(lambda m: m.INFIX.update({Ops.CMPLT: ">"})))
wrong("b02.render", "casts everything to float", "differs", _render_tables(lambda m: m.C_TYPE.update({dtypes.int: "float"})))
wrong("b02.render", "closes no loop", "compile", _render_edit(lambda src: src.replace("\n  }\n", "\n")))
right("b02.render", "64-bit loop counters and double-precision constants",
      _render_edit(lambda src: re.sub(r"\bint ridx", "long long ridx", re.sub(r"(\d\.\d+(e-?\d+)?)f\b", r"\1", src))))

# ---------------------------------------------------------------- b05.sgd, b05.adam

def _optimizers():
  from build_track import load_solution
  sol = load_solution("b05_optimizers")
  class FreshMomentum(sol.MySGD):  # a new zero buffer every step: plain SGD from step 2 on
    def _step(self):
      for p in self.params: p.assign(p.detach() - self.lr * (self.momentum * Tensor.zeros(*p.shape) + p.grad.detach()))
      return []
  class RebindsBuffer(sol.MySGD):  # b = ... rebinds the Python name; the buffer stays zero
    def _step(self):
      for p, b in zip(self.params, self.b):
        b = self.momentum * b + p.grad.detach()
        p.assign(p.detach() - self.lr * b)
      return self.b
  class DampenedMomentum(sol.MySGD):  # b = mu*b + (1-mu)*g: an average, not torch's SGD
    def _step(self):
      for p, b in zip(self.params, self.b):
        b.assign(self.momentum * b + (1 - self.momentum) * p.grad.detach())
        p.assign(p.detach() - self.lr * b)
      return self.b
  class Wrapped(sol.MySGD):  # calls lazynb's SGD for the update
    def __init__(self, params, lr=0.01, momentum=0.9):
      super().__init__(params, lr, momentum)
      from lazynb.nn import optim
      self.inner = optim.SGD(params, lr, momentum)
    def _step(self): return self.inner._step()
  class PythonCounter(sol.MyAdam):  # b1**t with t a Python int: frozen by TinyJit
    def __init__(self, *a, **k):
      super().__init__(*a, **k)
      self.t = 0
    def _step(self):
      self.t += 1
      for p, m, v in zip(self.params, self.m, self.v):
        g = p.grad.detach()
        m.assign(self.b1 * m + (1 - self.b1) * g)
        v.assign(self.b2 * v + (1 - self.b2) * g * g)
        p.assign(p.detach() - self.lr * (m / (1 - self.b1 ** self.t)) / ((v / (1 - self.b2 ** self.t)).sqrt() + self.eps))
      return self.m + self.v
  class NoBiasCorrection(sol.MyAdam):
    def _step(self):
      for p, m, v in zip(self.params, self.m, self.v):
        g = p.grad.detach()
        m.assign(self.b1 * m + (1 - self.b1) * g)
        v.assign(self.b2 * v + (1 - self.b2) * g * g)
        p.assign(p.detach() - self.lr * m / (v.sqrt() + self.eps))
      return self.m + self.v
  class EpsInsideRoot(sol.MyAdam):
    def _step(self):
      self.b1_t.assign(self.b1_t * self.b1)
      self.b2_t.assign(self.b2_t * self.b2)
      for p, m, v in zip(self.params, self.m, self.v):
        g = p.grad.detach()
        m.assign(self.b1 * m + (1 - self.b1) * g)
        v.assign(self.b2 * v + (1 - self.b2) * g * g)
        p.assign(p.detach() - self.lr * (m / (1 - self.b1_t)) / (v / (1 - self.b2_t) + self.eps).sqrt())
      return [self.b1_t, self.b2_t] + self.m + self.v
  class StatesReturnedNot(sol.MySGD):  # the buffers are read by the parameters' update, so they are computed anyway
    def _step(self):
      super()._step()
      return []
  return sol, locals()
_sol, _opt = _optimizers()
wrong("b05.sgd", "a fresh momentum buffer every step", "the first step was right", _opt["FreshMomentum"])
wrong("b05.sgd", "b = ... rebinds the name instead of assign", "updated in place with assign", _opt["RebindsBuffer"])
wrong("b05.sgd", "dampened momentum (an average of the gradients)", "after step 1", _opt["DampenedMomentum"])
wrong("b05.sgd", "calls lazynb's SGD", "write the update yourself", _opt["Wrapped"])
wrong("b05.adam", "b1**t with a Python step counter", "TinyJit", _opt["PythonCounter"])
wrong("b05.adam", "no bias correction", "the first step is already wrong", _opt["NoBiasCorrection"])
wrong("b05.adam", "eps inside the square root", "off by up to", _opt["EpsInsideRoot"])
wrong("b05.adam", "lazynb's own Adam class", "must be a class", lambda params, **kw: None)
right("b05.sgd", "the buffers not returned (the parameters' update reads them)", _opt["StatesReturnedNot"])
def _adam_step_tensor():
  from lazynb.nn.optim import Optimizer
  class AdamStepTensor(Optimizer):
    def __init__(self, params, lr=0.001, b1=0.9, b2=0.999, eps=1e-8):
      super().__init__(params, lr)
      self.b1, self.b2, self.eps = b1, b2, eps
      self.t = Tensor.zeros((), requires_grad=False).contiguous().realize()
      self.state = [Tensor.zeros(2, *p.shape, requires_grad=False).contiguous().realize() for p in self.params]  # m and v stacked
    def _step(self):
      self.t.assign(self.t + 1)
      for p, mv in zip(self.params, self.state):
        g = p.grad.detach()
        mv.assign(Tensor.stack(self.b1 * mv[0] + (1 - self.b1) * g, self.b2 * mv[1] + (1 - self.b2) * g * g))
        step = (mv[0] / (1 - self.b1 ** self.t)) / ((mv[1] / (1 - self.b2 ** self.t)).sqrt() + self.eps)
        p.assign(p.detach() - self.lr * step)
      return [self.t] + self.state
  return AdamStepTensor
right("b05.adam", "the step count in one tensor, m and v stacked in one buffer", _adam_step_tensor())
# ---------------------------------------------------------------- b06.gradients

def _rules_with(op, rule=None, drop=False):
  """The reference solution's rules with the one for `op` replaced by `rule` (or dropped)."""
  def my_gradient_rules():
    from build_track import load_solution
    base = load_solution("b06_gradients").my_gradient_rules()
    pats = [(p, rule if p.op and op in p.op else f) for p, f in base.patterns if not (drop and p.op and op in p.op)]
    return PatternMatcher(pats)
  return my_gradient_rules
def _max_ties_to_a(ctx, ret):
  a, b = ret.src
  a_wins = b.alu(Ops.CMPLT, a).ne(a.ne(b))  # a >= b: ties all go to a
  return (a_wins.where(ctx, ctx.const_like(0.0)), a_wins.where(ctx.const_like(0.0), ctx))
wrong("b06.gradients", "MUL's gradients swapped", "x * y", _rules_with(Ops.MUL, lambda ctx, ret: (ctx * ret.src[0], ctx * ret.src[1])))
wrong("b06.gradients", "EXP2 without the ln 2", "exp(x)", _rules_with(Ops.EXP2, lambda ctx, ret: (ctx * ret,)))
wrong("b06.gradients", "LOG2 without the ln 2", "log(x)", _rules_with(Ops.LOG2, lambda ctx, ret: (ctx * ret.src[0].alu(Ops.RECIP),)))
wrong("b06.gradients", "RECIP's sign lost", "1 / x", _rules_with(Ops.RECIP, lambda ctx, ret: (ctx * ret * ret,)))
wrong("b06.gradients", "MAX gives a tie all to the first input", "with ties", _rules_with(Ops.MAX, _max_ties_to_a))
wrong("b06.gradients", "every reduce treated as a sum", "max(axis=1)", _rules_with(Ops.REDUCE_AXIS, lambda ctx, ret: (ctx.expand(ret.src[0].shape),)))
wrong("b06.gradients", "EXPAND's gradient not summed back", "a gradient of shape (3, 4) to a source of shape (1, 4)", _rules_with(Ops.EXPAND, lambda ctx, ret: (ctx,)))
wrong("b06.gradients", "a rule returning a UOp, not a tuple", "one gradient (or None) per source", _rules_with(Ops.ADD, lambda ctx: ctx))
wrong("b06.gradients", "no rule for SQRT (lazynb's did it)", "yours never did", _rules_with(Ops.SQRT, drop=True))
wrong("b06.gradients", "a list of rules, not a PatternMatcher", "must return a PatternMatcher", lambda: [])
right("b06.gradients", "MUL and RECIP written with named sources",
      _rules_with(Ops.RECIP, lambda ctx, x: (-ctx * (x * x).alu(Ops.RECIP),)) and (lambda: PatternMatcher(
        [(UPat(Ops.RECIP, src=(UPat.var("x"),)), lambda ctx, x: (-ctx * (x * x).alu(Ops.RECIP),)),
         (UPat(Ops.MUL, src=(UPat.var("a"), UPat.var("b"))), lambda ctx, a, b: (b * ctx, a * ctx))] + _rules_with(Ops.MUL, drop=True)().patterns)))

# ---------------------------------------------------------------- b08.boundaries

def _boundaries(outputs=True, copy_src=False, assigns=True, broadcast=False, pad=True, shared=True):
  """A decision of what becomes a kernel, written like the reference solution's walk, with one of its rules changed."""
  from lazynb.uop.ops import UOp, GroupOp
  def my_boundaries(outs):
    nodes = UOp.sink(*outs).toposort()
    realize = {o.base for o in outs if o.base.op not in (Ops.BUFFER, Ops.CONST)} if outputs else set()
    if copy_src: realize |= {n.src[0].base for n in nodes if n.op is Ops.COPY}
    realize |= {n for n in nodes if n.op in ((Ops.COPY, Ops.CONTIGUOUS, Ops.ASSIGN) if assigns else (Ops.COPY, Ops.CONTIGUOUS))}
    owner, todo, done = {}, list(realize) or [o.base for o in outs], set()
    while todo:
      root = todo.pop()
      if root in done: continue
      done.add(root)
      reduce = root if root.op is Ops.REDUCE_AXIS else None
      stack, seen = [(s, root.op is not Ops.REDUCE_AXIS, False) for s in root.src], set()
      while stack:
        n, in_place, padded = stack.pop()
        if (n, in_place, padded) in seen or n.op is Ops.BUFFER: continue
        seen.add((n, in_place, padded))
        if n.op is Ops.REDUCE_AXIS and in_place and reduce is None and (not shared or owner.setdefault(n, root) is root): reduce, in_place = n, False
        elif n.op is Ops.REDUCE_AXIS or (pad and padded and n.op in GroupOp.UnsafePad): realize.add(n)
        if n in realize:
          todo.append(n)
          continue
        through = (Ops.RESHAPE, Ops.REDUCE_AXIS) + ((Ops.EXPAND,) if broadcast else ())
        stack.extend((s, in_place and (n.op in GroupOp.Elementwise or n.op in through), padded or n.op is Ops.PAD) for s in n.src)
    return realize
  return my_boundaries
def _every_node(outs):
  from lazynb.uop.ops import UOp
  return {n for n in UOp.sink(*outs).toposort() if n.op not in (Ops.BUFFER, Ops.DEVICE, Ops.UNIQUE, Ops.SINK)}
wrong("b08.boundaries", "realizes every node (nothing fused)", "Too many kernels", _every_node)
wrong("b08.boundaries", "forgets the outputs", "leaves the output", _boundaries(outputs=False))
wrong("b08.boundaries", "fuses a reduce into its broadcasting consumer (softmax's max into x - max)", "reads it through a movement op",
      _boundaries(broadcast=True))
wrong("b08.boundaries", "realizes what each COPY reads (a BUFFER, a tensor realized before)", "in memory already", _boundaries(copy_src=True))
wrong("b08.boundaries", "forgets the ASSIGN", "is always a kernel's output", _boundaries(assigns=False))
wrong("b08.boundaries", "fuses exp under a pad", "the padding would compute", _boundaries(pad=False))
wrong("b08.boundaries", "fuses a reduce into each of two kernels that read it", "another kernel reads it too", _boundaries(shared=False))
wrong("b08.boundaries", "returns a list of reasons, not the nodes", "must return a set of UOps", lambda outs: ["realize" for _ in outs])
@right("b08.boundaries", "recursive, one kernel at a time until nothing changes; a reduce two kernels reach in place realized afterwards")
def _boundaries_by_kernels(outs):
  from lazynb.uop.ops import UOp, GroupOp
  keep = {n for n in UOp.sink(*outs).toposort() if n.op in (Ops.COPY, Ops.CONTIGUOUS, Ops.ASSIGN)}
  keep |= {o.base for o in outs if o.base.op not in (Ops.BUFFER, Ops.CONST)}
  def kernel(root):
    """(the reduce this kernel computes or None, the nodes it must read from memory)"""
    fused, loaded, seen = [], set(), set()
    def go(n, ok, pad):
      if (n, ok, pad) in seen or n.op is Ops.BUFFER or (n is not root and n in keep): return
      seen.add((n, ok, pad))
      if n is not root and (n.op is Ops.REDUCE_AXIS and (not ok or fused) or pad and n.op in GroupOp.UnsafePad): return loaded.add(n)
      if n is not root and n.op is Ops.REDUCE_AXIS: fused.append(n)
      for s in n.src: go(s, ok and (n.op in GroupOp.Elementwise or n.op is Ops.RESHAPE), pad or n.op is Ops.PAD)
    go(root, root.op is not Ops.REDUCE_AXIS, False)
    return (fused or [None])[0], loaded
  while True:
    claims: dict = {}
    before = len(keep)
    for root in list(keep):
      fused, loaded = kernel(root)
      keep |= loaded
      if fused is not None: claims.setdefault(fused, set()).add(root)
    keep |= {r for r, roots in claims.items() if len(roots) > 1}
    if len(keep) == before: return keep

# ---------------------------------------------------------------- b07.index_math

def _views_math(one=None, unflatten=None, below_valid=True, stack=True):
  """The reference solution's index math with its single-view function `one`, its unflattening, or its stacking changed."""
  from build_track import load_solution
  sol = load_solution("b07_views")
  one = one or sol.view_index
  def default_unflatten(idx, shape):
    dims, rest = [], idx
    for size in reversed(shape):
      dims.append(rest % size)
      rest = rest // size
    return dims[::-1]
  unflatten = unflatten or default_unflatten
  def my_index_math(views, idxs):
    idx, valid = one(views[-1], idxs)
    for view in (reversed(views[:-1]) if stack else ()):
      idx, below = one(view, unflatten(idx, view.shape))
      if below_valid: valid = valid & below
    return idx, valid
  return my_index_math
def _one_view(lo_test, hi_test=lambda i, hi: i < hi, use_mask=True):
  from lazynb.uop.ops import UOp
  def one(view, idxs):
    idx, valid = UOp.const(dtypes.index, view.offset), UOp.const(dtypes.bool, True)
    for i, st in zip(idxs, view.strides): idx = idx + i * st
    for i, (lo, hi) in zip(idxs, (view.mask or ()) if use_mask else ()):
      valid = valid & lo_test(i, lo) & hi_test(i, hi)
    return idx, valid
  return one
wrong("b07.index_math", "ignores the mask", "your valid is True, it should be False", _views_math(one=_one_view(None, use_mask=False)))
wrong("b07.index_math", "a mask's lower bound off by one (i > lo)", "off by one", _views_math(one=_one_view(lambda i, lo: i > lo)))
wrong("b07.index_math", "a mask's upper bound included (i <= hi)", "off by one", _views_math(one=_one_view(lambda i, lo: i >= lo, lambda i, hi: i <= hi)))
wrong("b07.index_math", "only the top view", "the element is at", _views_math(stack=False))
wrong("b07.index_math", "unflattens with the first dimension fastest", "the element is at",
      _views_math(unflatten=lambda idx, shape: [(idx // math.prod(shape[:k])) % s for k, s in enumerate(shape)]))
wrong("b07.index_math", "forgets the mask of the view below", "check every view's mask", _views_math(below_valid=False))
wrong("b07.index_math", "returns Python numbers", "two UOps", lambda views, idxs: (0, True))
right("b07.index_math", "every stride multiplied in (zeros too), valid as a product of comparisons",
      _views_math(one=_one_view(lambda i, lo: i >= lo)))
def _simplify_rules(change):
  """The reference simplify of a fresh solution module whose rule list change(mod, rules) returns (None: unchanged).
  The reference's rules, in order: 0 bounds that meet, 1-4 identities, 5 two constants, 6 a True valid, 7 x % c, 8-9 sums."""
  mod = _solution("b04_simplify")
  rules = change(mod, list(mod.rules.patterns))
  if rules is not None: mod.rules = PatternMatcher(rules)
  return mod.my_simplify
def _simplify_sums(ok):
  """The reference simplify with its sum rule's test of x, the rest and c replaced by ok(x, rest_terms, rest, c)."""
  def change(mod, rules):
    def split(x, c):
      q, r = [], []
      for t in mod.terms(x):
        y, k = (t.src[0], t.src[1].arg) if t.op is Ops.MUL and t.src[1].op is Ops.CONST else (t, 1)
        (q.append(y * (k // c)) if t.op is not Ops.CONST and k % c == 0 else r.append(t))
      rest = sum(r[1:], r[0]) if r else UOp.const(dtypes.index, 0)
      return (sum(q[1:], q[0]), rest) if q and ok(x, r, rest, c) else None
    mod.split = split
  return _simplify_rules(change)
def _bounds_by_factor(x, r, rest, c):  # factor * vmin .. factor * vmax for each term: a negative factor swaps them
  f = [(t.src[0], t.src[1].arg) if t.op is Ops.MUL and t.src[1].op is Ops.CONST else (t, 1) for t in r]
  return x.vmin >= 0 and 0 <= sum(k * y.vmin for y, k in f) and sum(k * y.vmax for y, k in f) < c
from lazynb.uop.ops import UOp  # noqa: E402
wrong("b04.simplify", "returns the lowered SINK unchanged (right values, nothing folded)", "an op that changes nothing", lambda sink: sink)
wrong("b04.simplify", "no rule for a valid that is always True", "a valid that is always True", _simplify_rules(lambda m, r: r[:6] + r[7:]))
wrong("b04.simplify", "no rules for a sum under // and %", "a // or % that needs no division", _simplify_rules(lambda m, r: r[:8]))
wrong("b04.simplify", "no rule for two constants added in a row", "one constant and then another", _simplify_rules(lambda m, r: r[:5] + r[6:]))
wrong("b04.simplify", "folds what the bounds fix for index ops only (comparisons stay)", "whose value the loop sizes fix",
      _simplify_rules(lambda m, r: [(r[0][0], lambda x: m.fixed(x) if x.dtype is dtypes.index else None)] + r[1:]))
wrong("b04.simplify", "x % c is x when x is at most c (it can reach c)", "into `(1+gidx0)`, but where gidx0=2",
      _simplify_rules(lambda m, r: r[:7] + [(r[7][0], lambda x, c: x if 0 <= x.vmin and x.vmax <= c.arg else None)] + r[8:]))
wrong("b04.simplify", "x // c is 0 when x is at most c (it can reach c)", "into `0`, but where gidx0=2", _simplify_rules(lambda m, r: [
  (UPat.var("x", dtypes.index) // UPat.cvar("c"), lambda x, c: UOp.const(dtypes.index, 0) if 0 <= x.vmin and x.vmax <= c.arg else None)] + r))
wrong("b04.simplify", "a sum's rest may reach c", "into `gidx0`, but where gidx0=0, ridx0=2",
      _simplify_sums(lambda x, r, rest, c: x.vmin >= 0 and rest.vmin >= 0 and rest.vmax <= c))
wrong("b04.simplify", "a sum's rest is never tested (only the multiples of c are kept)", "elements 1 to 9", _simplify_sums(lambda x, r, rest, c: True))
wrong("b04.simplify", "no sign tests (x and the rest may be negative, from a padding's -1)", "`((((gidx0*4)+ridx0)-1)//4)` into `gidx0`",
      _simplify_sums(lambda x, r, rest, c: rest.vmax < c))
wrong("b04.simplify", "the rest's bounds as factor * vmin .. factor * vmax (a negative factor swaps them)", "into `(gidx0*2)`",
      _simplify_sums(_bounds_by_factor))
wrong("b04.simplify", "drops a valid that can be True (vmax) rather than one that is always True (vmin)", "the first reads nothing",
      _simplify_rules(lambda m, r: r + [(UPat(Ops.INDEX, src=(UPat.var("b"), UPat.var("i"), UPat.var("v"))),
                                         lambda b, i, v: UOp(Ops.INDEX, b.dtype, (b, i)) if v.vmax else None)]))
wrong("b04.simplify", "x < c is True when x is at most c (it can reach c)", "into `True`, but where", _simplify_rules(lambda m, r: [
  (UPat.var("x", dtypes.index) < UPat.cvar("c"), lambda x, c: UOp.const(dtypes.bool, True) if x.vmax <= c.arg else None)] + r))
@right("b04.simplify", "lazynb's own simplify (every rule of lazynb/uop/symbolic.py)")
def _simplify_as_lazynb(sink):
  from lazynb import pipeline
  return pipeline.reference("simplify")(sink)
@right("b04.simplify", "sums as {term: factor} forms, a rest within any one multiple of c, other rule order, bottom_up rewrite")
def _simplify_linear_forms(sink):
  from lazynb.uop.ops import UOp, UPat, Ops, PatternMatcher, graph_rewrite
  from lazynb.dtype import dtypes
  IDX, BOOL = dtypes.index, dtypes.bool
  def linear(x):
    if x.op is Ops.CONST: return {}, x.arg
    if x.op is Ops.ADD:
      (fa, ca), (fb, cb) = linear(x.src[0]), linear(x.src[1])
      return {t: fa.get(t, 0) + fb.get(t, 0) for t in fa | fb}, ca + cb
    if x.op is Ops.MUL and x.src[1].op is Ops.CONST:
      f, c = linear(x.src[0])
      return {t: k * x.src[1].arg for t, k in f.items()}, c * x.src[1].arg
    return {x: 1}, 0
  def build(f, c):
    out = UOp.const(IDX, c)
    for t, k in f.items(): out = t * k + out if k else out
    return out
  def divmod_(x, d, ret):
    if d.arg <= 0 or x.vmin < 0: return None
    f, c = linear(x)
    q = {t: k // d.arg for t, k in f.items() if k % d.arg == 0}
    r = build({t: k for t, k in f.items() if t not in q}, c)
    if not q and ret.op is Ops.IDIV or r.vmin // d.arg != r.vmax // d.arg: return None
    m = r.vmin // d.arg
    return build(q, m) if ret.op is Ops.IDIV else r - m * d.arg if m else r
  rules = PatternMatcher([
    (UPat(Ops.INDEX, name="i", src=(UPat(), UPat(), UPat.const(BOOL, True))), lambda i: i.replace(src=i.src[:2])),
    (UPat((Ops.IDIV, Ops.MOD), IDX, name="ret", src=(UPat.var("x"), UPat.cvar("d"))), divmod_),
    (UPat(Ops.ADD, IDX, src=[UPat.cvar("a"), UPat(Ops.ADD, src=[UPat.var("x"), UPat.cvar("b")])]), lambda a, x, b: x + (a.arg + b.arg)),
    (UPat(Ops.ADD, IDX, src=[UPat.var("x"), UPat.const(IDX, 0)]), lambda x: x),
    (UPat(Ops.AND, BOOL, src=[UPat.var("x"), UPat.const(BOOL, True)]), lambda x: x),
    (UPat(Ops.IDIV, IDX, src=(UPat.var("x"), UPat.const(IDX, 1))), lambda x: x),
    (UPat((Ops.ADD, Ops.MUL, Ops.IDIV, Ops.MOD, Ops.CMPLT, Ops.CMPNE, Ops.AND, Ops.OR, Ops.XOR), (IDX, BOOL), name="x"),
     lambda x: UOp.const(x.dtype, x.vmin) if x.vmin == x.vmax else None),
  ])
  return graph_rewrite(sink, rules, bottom_up=True)
def _lin_edit(edit):
  """The reference linearizer with its list changed by edit(uops)."""
  base = _solution("b03_linearize").my_linearize
  return lambda sink: edit(base(sink))
def _lin_variant(old, new):
  """The reference linearizer with one piece of its source replaced (the piece must still be in the solution)."""
  import inspect
  src = inspect.getsource(_solution("b03_linearize"))
  assert old in src, f"the b03 solution no longer has {old!r}"
  ns: dict = {}
  exec(compile(src.replace(old, new), "<b03 variant>", "exec"), ns)
  return ns["my_linearize"]
def _acc_after_its_loop(uops):  # the accumulator where a toposort puts it: after the RANGE it names
  acc = next((u for u in uops if u.op is Ops.DEFINE_ACC), None)
  if acc is None: return uops
  rest = [u for u in uops if u is not acc]
  i = rest.index(acc.src[1]) + 1
  return rest[:i] + [acc] + rest[i:]
wrong("b03.linearize", "the DEFINE_GLOBALs out of buffer order (as a set may give them)", "buffer order",
      _lin_edit(lambda uops: sorted([u for u in uops if u.op is Ops.DEFINE_GLOBAL], key=lambda u: -u.arg) + [u for u in uops if u.op is not Ops.DEFINE_GLOBAL]))
wrong("b03.linearize", "every accumulator starts at 0 (a max of negatives)", "the reference's CONST -inf",
      _lin_variant("0 if red.arg is Ops.ADD else dtypes.min(red.dtype)", "0"))
wrong("b03.linearize", "the reduce loop closed at the end, after the store", "is still open",
      _lin_variant("+ [assign] + [end(r) for r in reversed(red_loops)]\n    out += [u for u in rest if u in after]",
                   "+ [assign]\n    out += [u for u in rest if u in after] + [end(r) for r in reversed(red_loops)]"))
wrong("b03.linearize", "the outer loops closed in the order they were opened", "not the innermost open one",
      _lin_variant("[end(r) for r in reversed(outer)]", "[end(r) for r in outer]"))
def _reduce_value_inside(uops):
  """What an emitter that lists each node where it is first needed gives: all the reduce reads goes inside its loop (an
  address from the outer counter too), and what reads one of those, after it."""
  acc = next((u for u in uops if u.op is Ops.DEFINE_ACC), None)
  if acc is None: return uops
  i = uops.index(acc)
  feeds = set(next(u for u in uops if u.op is Ops.ASSIGN).src[1].toposort())
  moved = [u for u in uops[:i] if u in feeds and u.op not in (Ops.DEFINE_GLOBAL, Ops.DEFINE_VAR, Ops.CONST, Ops.RANGE)]
  later = set(moved)
  for u in uops[:i]:
    if u not in later and any(s in later for s in u.src): later.add(u)
  after = [u for u in uops[:i] if u in later and u not in moved]
  j = uops.index(acc.src[-1]) + 1  # the innermost loop the accumulator names
  k = max(uops.index(u) for u in uops if u.op is Ops.ENDRANGE and u.src[0] in acc.src[1:]) + 1
  return [u for u in uops[:j] if u not in later] + moved + uops[j:k] + after + uops[k:]
wrong("b03.linearize", "all of the reduce's value inside its loop (an address the store reads too)", "after that loop's ENDRANGE",
      _lin_edit(_reduce_value_inside))
wrong("b03.linearize", "the accumulator after the RANGE it names (toposort order)", "starts again on every step", _lin_edit(_acc_after_its_loop))
wrong("b03.linearize", "forgets the DEFINE_VARs", "whose DEFINE_VAR is not earlier", _lin_variant("(Ops.DEFINE_VAR, Ops.CONST)]", "(Ops.CONST,)]"))
wrong("b03.linearize", "the graph's toposort as it is", "the SINK only holds the kernel's stores", lambda sink: sink.toposort())
@right("b03.linearize", "each op as soon as the loops it reads are open (loop-free work before every loop), another accumulator number")
def _linearize_hoisted(sink):
  from lazynb.uop.ops import UOp
  def end(r): return UOp(Ops.ENDRANGE, dtypes.void, (r,))
  red = next((u for u in sink.toposort() if u.op is Ops.REDUCE), None)
  red_loops, update, assign = [], None, None
  if red is not None:
    red_loops = sorted(red.src[1:], key=lambda r: r.arg[0])
    acc = UOp(Ops.DEFINE_ACC, red.dtype, (UOp.const(red.dtype, {Ops.ADD: 0, Ops.MAX: dtypes.min(red.dtype)}[red.arg]), *red.src[1:]), 3)
    update = UOp(red.arg, red.dtype, (acc, red.src[0]))
    assign = UOp(Ops.ASSIGN, red.dtype, (acc, update))
    sink = sink.substitute({red: assign})
  nodes = sink.toposort()
  outer = sorted([u for u in nodes if u.op is Ops.RANGE and u not in red_loops], key=lambda r: r.arg[0])
  nest = outer + red_loops
  depth, late = {}, set()  # how many loops must be open for it; whether it reads the finished reduce
  for u in nodes:
    depth[u] = max([depth[s] for s in (() if u.op is Ops.DEFINE_ACC else u.src)] + [nest.index(u) + 1 if u.op is Ops.RANGE else 0])
    if u is update: depth[u] = len(nest)
    if u is assign: depth[u] = len(outer)
    if u is assign or any(s in late for s in u.src): late.add(u)
  body = [u for u in nodes if u.op not in (Ops.SINK, Ops.RANGE, Ops.DEFINE_ACC, Ops.ASSIGN, Ops.DEFINE_GLOBAL)]
  out = sorted([u for u in nodes if u.op is Ops.DEFINE_GLOBAL], key=lambda u: u.arg) + [u for u in body if depth[u] == 0 and u not in late]
  for d, r in enumerate(nest, 1):
    out += ([assign.src[0]] if red_loops and r is red_loops[0] else []) + [r] + [u for u in body if depth[u] == d and u not in late]
  if assign is not None: out += [assign] + [end(r) for r in reversed(red_loops)]
  return out + [u for u in body if u in late] + [end(r) for r in reversed(outer)]

# ---------------------------------------------------------------- b09.optimize

def _search_with(unroll=None, step=None):
  """The reference my_optimize with its my_unroll replaced by `unroll`, or its search's round replaced by
  step(beam, times, kernels, width, unroll) -> the next beam (and rounds, if step says how many are done)."""
  sol = _solution("b09_search")
  if unroll is not None: sol.my_unroll = unroll
  if step is None: return sol.my_optimize
  def my_optimize(ast, renderer, opts=None, width=2, rounds=2, time_fn=sol.time_kernel):
    from lazynb.codegen.kernel import Kernel
    k = Kernel(ast, renderer)
    if opts is not None:
      for o in opts: k = sol.my_unroll(k, o.axis, o.arg)
      return k
    times, kernels, beam = {(): time_fn(k)}, {(): k}, [k]
    for i in range(rounds):
      beam = step(beam, times, kernels, width, sol.my_unroll, time_fn, i)
    return beam[0]
  return my_optimize
def _candidates(beam, unroll):
  from lazynb.codegen.kernel import KernelOptError
  for b in beam:
    for axis in range(len(b.full_shape)):
      for amt in (2, 4):
        try: yield unroll(b, axis, amt)
        except KernelOptError: pass
def _round(order=1, only_new=False, memo=True, last=None):
  def step(beam, times, kernels, width, unroll, time_fn, i):
    if last is not None and i >= last: return beam
    new = []
    for c in _candidates(beam, unroll):
      key = tuple(c.applied_opts)
      if memo and key in times: continue
      times[key], kernels[key] = time_fn(c), c
      new.append(c)
    pool = new if only_new and new else list(kernels.values())
    return sorted(pool, key=lambda c: order * times[tuple(c.applied_opts)])[:width]
  return step
def _unroll_with(check_type=True, check_divides=True, size_one=True, last=True, move_views=True):
  """my_unroll without one of its checks, or splitting a size-1 view into (0, amt), or leaving the new axis in place
  (everywhere, or only in the views)."""
  from lazynb.codegen.kernel import Opt, OptOps, AxisType, KernelOptError
  def my_unroll(k, axis, amt):
    if not 0 <= axis < len(k.full_shape) or check_type and k.axis_types[axis] is not AxisType.REDUCE: raise KernelOptError("not a reduce axis")
    size = k.full_shape[axis]
    if not isinstance(size, int) or not 1 < amt < size or check_divides and size % amt: raise KernelOptError("does not divide")
    def split(shape): return shape[:axis] + ((shape[axis] // amt, amt) if shape[axis] != 1 or not size_one else (1, 1)) + shape[axis + 1:]
    n = len(k.full_shape) + 1
    order = [i for i in range(n) if i != axis + 1] + [axis + 1] if last else list(range(n))
    types = k.axis_types[:axis + 1] + [AxisType.UNROLL] + k.axis_types[axis + 1:]
    nk = k.copy()
    nk.sts = [st.reshape(split(st.shape)).permute(tuple(order if move_views else range(n))) for st in k.sts]
    nk.full_shape, nk.axis_types = tuple(split(k.full_shape)[i] for i in order), [types[i] for i in order]
    nk.applied_opts = k.applied_opts + [Opt(OptOps.UNROLL, axis, amt)]
    return nk
  return my_unroll
wrong("b09.optimize", "an unroll that ignores divisibility", "3 does not divide", _search_with(unroll=_unroll_with(check_divides=False)))
wrong("b09.optimize", "unrolls a global axis as if it were a reduce axis", "axis 0 is not a reduce axis", _search_with(unroll=_unroll_with(check_type=False)))
wrong("b09.optimize", "splits the output's size-1 view into (0, amt)", "has size 1 on a reduce axis", _search_with(unroll=_unroll_with(size_one=False)))
wrong("b09.optimize", "leaves the new axis in place (the axes after it renumbered)", "your my_optimize refused the legal opts",
      _search_with(unroll=_unroll_with(last=False)))
wrong("b09.optimize", "moves the new axis last in the loops but not in the views", "view must follow the loops",
      _search_with(unroll=_unroll_with(move_views=False)))
wrong("b09.optimize", "keeps the slowest", "slowest", _search_with(step=_round(order=-1)))
wrong("b09.optimize", "stops after one round", "first round ends", _search_with(step=_round(last=1)))
wrong("b09.optimize", "keeps only the new candidates (no opt never stays)", "stays a candidate", _search_with(step=_round(only_new=True)))
wrong("b09.optimize", "times a kernel again when a round meets it again", "time a kernel only once", _search_with(step=_round(memo=False)))
wrong("b09.optimize", "a beam of one, whatever the width", "the beam keeps the 2 fastest",
      _search_with(step=lambda beam, times, kernels, width, unroll, time_fn, i: _round()(beam, times, kernels, 1, unroll, time_fn, i)))
wrong("b09.optimize", "takes no time_fn (always time_kernel)", "must take", lambda ast, renderer, opts=None, width=2, rounds=2: None)
def _search_by_frontier():
  """Another search: the beam as (seconds, order, kernel) triples in a heap; candidates from the legal amounts, not from
  catching KernelOptError; the new axis put right after the last reduce axis (lazynb's own order)."""
  import heapq
  from lazynb.codegen.kernel import Kernel, Opt, OptOps, AxisType, KernelOptError
  from lazynb.notebook.build import time_kernel
  def unroll(k, axis, amt):
    if axis not in k.axes_of(AxisType.REDUCE) or k.is_sym(axis) or amt < 2 or k.full_shape[axis] <= amt or k.full_shape[axis] % amt:
      raise KernelOptError(f"cannot unroll axis {axis} by {amt}")
    at = max(k.axes_of(AxisType.REDUCE)) + 1  # where the new axis goes, counted before the split
    nk = k.copy()
    for name in ("sts",):
      setattr(nk, name, [st.reshape(st.shape[:axis] + ((st.shape[axis] // amt, amt) if st.shape[axis] > 1 else (1, 1)) + st.shape[axis + 1:])
                         .permute(tuple(list(range(axis + 1)) + list(range(axis + 2, at + 1)) + [axis + 1] + list(range(at + 1, len(st.shape) + 1))))
                         for st in k.sts])
    shape = list(k.full_shape[:axis]) + [k.full_shape[axis] // amt] + list(k.full_shape[axis + 1:at]) + [amt] + list(k.full_shape[at:])
    types = list(k.axis_types[:at]) + [AxisType.UNROLL] + list(k.axis_types[at:])
    nk.full_shape, nk.axis_types, nk.applied_opts = tuple(shape), types, [*k.applied_opts, Opt(OptOps.UNROLL, axis, amt)]
    return nk
  def my_optimize(ast, renderer, opts=None, width=2, rounds=2, time_fn=time_kernel):
    k = Kernel(ast, renderer)
    for o in opts or []: k = unroll(k, o.axis, o.arg)
    if opts is not None: return k
    seen = {(): (time_fn(k), 0, k)}
    for _ in range(rounds):
      for _, _, b in heapq.nsmallest(width, seen.values(), key=lambda e: (e[0], e[1])):
        for a in b.axes_of(AxisType.REDUCE):
          for amt in (2, 4):
            if b.is_sym(a) or b.full_shape[a] <= amt or b.full_shape[a] % amt: continue
            c = unroll(b, a, amt)
            if (key := tuple(c.applied_opts)) not in seen: seen[key] = (time_fn(c), len(seen), c)
    return min(seen.values(), key=lambda e: (e[0], e[1]))[2]
  return my_optimize
right("b09.optimize", "a heap of (seconds, order, kernel), legal amounts listed, the new axis after the last reduce axis", _search_by_frontier())

# ---------------------------------------------------------------- the tests

# ---------------------------------------------------------------- b00.node, b00.toposort: the graph, hash-consed, and its order

class _N:
  def __init__(self, op, dtype, src, arg): self.op, self.dtype, self.src, self.arg = op, dtype, src, arg

def _node_keyed(key):
  """A node(op, dtype, src, arg) interning on key(op, dtype, src, arg), with a table of its own."""
  table = {}
  def node(op, dtype, src=(), arg=None):
    k = key(op, dtype, tuple(src), arg)
    if k not in table: table[k] = _N(op, dtype, tuple(src), arg)
    return table[k]
  return node
def _sign(a): return math.copysign(1, a) if isinstance(a, float) else 0
wrong("b00.node", "no interning: a new node every call", "twice gave two different objects", lambda op, dtype, src=(), arg=None: _N(op, dtype, tuple(src), arg))
wrong("b00.node", "keyed by id(src), the tuple made for this call", "key the table by what the tuple holds",
      _node_keyed(lambda op, dtype, src, arg: (op, dtype, id(src), arg, _sign(arg))))
wrong("b00.node", "keyed by id(arg)", "compare them with ==, not by id", _node_keyed(lambda op, dtype, src, arg: (op, dtype, src, id(arg), _sign(arg))))
wrong("b00.node", "keyed by the op only", "two nodes are the same only if", _node_keyed(lambda op, dtype, src, arg: op))
wrong("b00.node", "keyed without the dtype (an int and a float ADD of the same sources merge)", "two nodes are the same only if",
      _node_keyed(lambda op, dtype, src, arg: (op, src, arg, _sign(arg))))
wrong("b00.node", "-0.0 merged into 0.0", "Make the sign of a float arg part of the key", _node_keyed(lambda op, dtype, src, arg: (op, dtype, src, arg)))
right("b00.node", "the ids of the (live, interned) sources and the repr of a float arg in the key",
      _node_keyed(lambda op, dtype, src, arg: (op, dtype, tuple(map(id, src)), arg, repr(arg) if type(arg) is float else None)))
class _Interned:
  """Interning in the class itself: Node(...) gives the node already made when there is one."""
  made: dict = {}
  def __new__(cls, op, dtype, src=(), arg=None):
    k = (op, dtype, tuple(src), type(arg), arg, str(arg) if type(arg) is float else "")
    if (n := cls.made.get(k)) is None:
      n = cls.made[k] = super().__new__(cls)
      n.op, n.dtype, n.src, n.arg = op, dtype, tuple(src), arg
    return n
right("b00.node", "a class whose __new__ interns", _Interned)

@wrong("b00.toposort", "pre-order: a node is listed when first reached", "comes before its source")
def _topo_preorder(root):
  out, seen, stack = [], set(), [root]
  while stack:
    n = stack.pop()
    if n in seen: continue
    seen.add(n)
    out.append(n)
    stack.extend(reversed(n.src))
  return out
@wrong("b00.toposort", "no visited set: a shared node is listed once per path", "in the list twice")
def _topo_per_path(root):
  out, stack = [], [(root, False)]
  while stack:
    n, done = stack.pop()
    if done: out.append(n)
    else: stack += [(n, True)] + [(s, False) for s in n.src]
  return out
@wrong("b00.toposort", "listed once, but walked once per path (dedup on output only)", "walks a shared node again")
def _topo_walks_per_path(root):
  out, placed, stack = [], set(), [(root, False)]
  while stack:
    n, done = stack.pop()
    if done:
      if n not in placed: placed.add(n); out.append(n)  # noqa: E702
    else: stack += [(n, True)] + [(s, False) for s in n.src]
  return out
@wrong("b00.toposort", "recursive (fine on small graphs, dies 20,000 deep)", "recursion limit")
def _topo_recursive(root):
  out, seen = [], set()
  def visit(n):
    if n in seen: return
    seen.add(n)
    for s in n.src: visit(s)
    out.append(n)
  visit(root)
  return out
@wrong("b00.toposort", "breadth-first from the root, reversed", "comes before its source")
def _topo_bfs_reversed(root):
  out, seen, i = [root], {root}, 0
  while i < len(out):
    for s in out[i].src:
      if s not in seen: seen.add(s); out.append(s)  # noqa: E702
    i += 1
  return out[::-1]
wrong("b00.toposort", "calls lazynb's own UOp.toposort", "not allowed", lambda root: root.toposort())
@right("b00.toposort", "Kahn's algorithm: a node is ready when all its sources are placed")
def _topo_kahn(root):
  nodes, stack = {root}, [root]
  while stack:
    for s in stack.pop().src:
      if s not in nodes: nodes.add(s); stack.append(s)  # noqa: E702
  waiting = {n: len(set(n.src)) for n in nodes}
  users: dict = {n: [] for n in nodes}
  for n in nodes:
    for s in set(n.src): users[s].append(n)
  ready, out = [n for n in nodes if waiting[n] == 0], []
  while ready:
    out.append(n := ready.pop())
    for u in users[n]:
      waiting[u] -= 1
      if waiting[u] == 0: ready.append(u)
  return out

def _params(table):
  """One case per entry, its id `key-what`: tests/conftest.py's SLOW_PARAMS puts 07.beat_heuristic's (timed races) in the slow tier."""
  return [pytest.param(key, what, *rest, id=f"{key}-{what}") for key, entries in sorted(table.items()) for what, *rest in entries]

def test_every_exercise_has_a_catalogue():
  """A new exercise needs plausible wrong answers (at least 2) and a valid alternative here."""
  assert set(WRONG) == set(ex.EXERCISES), f"no wrong answers for {sorted(set(ex.EXERCISES) - set(WRONG))}"
  assert set(RIGHT) == set(ex.EXERCISES), f"no valid alternative for {sorted(set(ex.EXERCISES) - set(RIGHT))}"
  assert all(len(v) >= 2 for v in WRONG.values()), [k for k, v in WRONG.items() if len(v) < 2]

@pytest.mark.parametrize("key,what,answer,hint", _params(WRONG))
def test_wrong_answer_fails_with_a_hint(key, what, answer, hint):
  ok, msg = ex.run(key, answer)
  assert not ok, f"{key} accepts a wrong answer: {what}"
  assert not msg.startswith("your code raised") and not msg.startswith("not written yet"), f"{key}, {what}: no hint, only {msg!r}"
  assert hint in msg and len(msg.split()) >= 6, f"{key}, {what}: the hint does not say what is wrong: {msg!r}"

@pytest.mark.parametrize("key,what,answer", _params(RIGHT))
def test_valid_alternative_passes(key, what, answer):
  ok, msg = ex.run(key, answer)
  assert ok, f"{key} rejects a valid answer ({what}): {msg}"
