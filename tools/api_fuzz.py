"""Random calls of the public Tensor API on lazynb and on tinygrad 0.10.3, compared (issue 31: names, arguments,
defaults, result dtypes, error classes; and any value where the two disagree).

Each seed gives a small program as source text (a tensor of a random dtype and shape, one Tensor method with arguments
drawn for that shape), run once with `T` = tinygrad's Tensor and once with lazynb's. What is compared: whether each
raises, and otherwise every result's shape, dtype name and values (NaN equal to NaN); with --grad the inputs are float32
leaves and the gradient of a weighted sum of the first result is compared too (taken before any result is realized:
tinygrad's realize() cuts the graph).

A disagreement is a place to look, not a verdict: tinygrad 0.10.3 is wrong in many of them (a bool negated by logical
not inside sinh, `uint8.minimum(2)` wrapping, a SIGFPE on an int8 // bool), and lazynb follows numpy and torch on
purpose in others (docs/compat.md, "The API fuzzer"). Decide each with numpy or torch. Each side runs in its own
process, restarted after a crash, which is reported against the seed that caused it.

Usage (the venv with tinygrad==0.10.3, from the repo root):
  python tools/api_fuzz.py --seeds 0:2000            # the summary, one example per (kind, method)
  python tools/api_fuzz.py --seeds 0:1500 --grad     # float32 inputs, gradients compared too
  python tools/api_fuzz.py --show 351                # one seed's program and both outcomes
"""
from __future__ import annotations
import argparse, collections, concurrent.futures, os, pathlib, pickle, random, signal, subprocess, sys, tempfile
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float32"]
WIDE = DTYPES + ["int16", "uint16", "uint32", "uint64", "float16", "float64"]
WIDE_EVERY = 4  # every 4th program draws its dtypes from all of them (float16 and the 16- and 64-bit ints too)
UNARY = ("neg exp exp2 log log2 sqrt rsqrt relu sigmoid tanh abs sign floor ceil round trunc reciprocal sin cos tan square erf gelu "
         "quick_gelu silu swish softplus mish elu celu selu relu6 hardsigmoid hardswish hardtanh leaky_relu softsign isinf isnan "
         "isfinite logical_not bitwise_not asin acos atan sinh cosh asinh acosh atanh contiguous clone float int bool half").split()
BINARY = ("add sub mul div pow maximum minimum eq ne __lt__ __gt__ __le__ __ge__ bitwise_and bitwise_or bitwise_xor idiv mod "
          "lshift rshift copysign __floordiv__ __mod__ __rpow__ __rsub__ __rtruediv__").split()
REDUCE = ("sum mean max min prod std var argmax argmin any all logsumexp cumsum cumprod cummax softmax log_softmax logcumsumexp "
          "std_mean var_mean").split()
MOVEMENT = ("reshape permute expand pad shrink flip transpose flatten unflatten squeeze unsqueeze repeat repeat_interleave roll "
            "tril triu split chunk cat stack getitem getitem getitem gather one_hot masked_fill where").split()
OTHER = ("matmul dot clip clamp sort topk cast bitcast isclose masked_select interpolate max_pool2d avg_pool2d conv2d linear layernorm "
         "cross_entropy sparse_categorical_crossentropy nll_loss div_rounding sum_dtype scatter scatter_reduce meshgrid eye arange "
         "linspace full_like conv_transpose2d einsum setitem tensor_index attention").split()

# second steps that take a result of any shape (a list of results is left as it is)
CHAIN = ["r.relu()", "r.exp2()", "r.sum()", "r.mean()", "r.max()", "r.reshape(-1)", "r.contiguous() * 2", "(r + 1).sqrt()",
         "r.cumsum(-1) if r.ndim else r", "r.sum(-1) if r.ndim else r", "r.flip(0) if r.ndim else r", "(r * r).sum(0) if r.ndim else r",
         "r.softmax(-1) if r.ndim else r", "r.argmax()", "r.float().T if r.ndim == 2 else r", "r[::2] if r.ndim else r", "r.pad(((1, 1),) * r.ndim) if r.ndim else r"]

# ---------------------------------------------------------------------------------------------------------------------
# the programs

class Gen:
  """Draws one program for a seed; every draw comes from one random.Random, so a seed is a program."""
  def __init__(self, seed: int, grad: bool):
    self.r, self.grad, self.lines = random.Random(seed), grad, []
    self.wide = WIDE_EVERY > 0 and seed % WIDE_EVERY == 0  # every WIDE_EVERY-th program draws from all dtypes
  def dtype(self, wide=False) -> str: return "float32" if self.grad else self.r.choice(WIDE if wide or self.wide else DTYPES)
  def shape(self) -> tuple[int, ...]:
    if self.r.random() < 0.1:  # a long axis now and then: loops past unrolling, blocked prefix sums (256), tiled matmuls
      return tuple(self.r.choice([5, 7, 16, 33, 300]) if i == 0 else self.r.choice([1, 3, 8]) for i in range(self.r.randint(1, 2)))[::self.r.choice([1, -1])]
    sizes = [0, 1, 2, 3, 4] if self.r.random() < 0.15 else [1, 2, 3, 4]
    return tuple(self.r.choice(sizes) for _ in range(self.r.randint(0, 3)))
  def values(self, dt: str, n: int) -> list:
    if dt == "bool": return [self.r.random() < 0.5 for _ in range(n)]
    if dt.startswith("uint"): return [self.r.randint(0, 9) for _ in range(n)]
    if dt.startswith("int"): return [self.r.randint(-6, 6) for _ in range(n)]
    return [self.r.randint(-16, 16) / 4 for _ in range(n)]  # quarters: sums and products stay exact
  def tensor(self, dt: str, shape: tuple[int, ...], leaf=False) -> str:
    """Source of a tensor: a literal (np.array(...).tolist() shaped), or zeros for a shape with a 0 in it."""
    rg = ", requires_grad=True" if leaf and self.grad else ""
    if 0 in shape: return f"T.zeros({shape}, dtype=dtypes.{dt}{rg})"
    v = self.values(dt, int(np.prod(shape)) if shape else 1)
    data = np.array(v, dtype=object).reshape(shape).tolist() if shape else v[0]
    return f"T({data!r}, dtype=dtypes.{dt}{rg})"
  def axis(self, rank: int) -> str:
    c = self.r.random()
    if rank == 0 or c < 0.3: return "None"
    if c < 0.8: return str(self.r.randint(-rank, rank - 1))
    return str(tuple(self.r.sample(range(rank), self.r.randint(1, rank))))
  def dim(self, rank: int, extra: int = 0) -> int: return self.r.randint(-rank - extra, rank - 1 + extra) if rank else 0
  def bshape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts with `shape`: a suffix of it, some sizes made 1."""
    s = list(shape[self.r.randint(0, len(shape)):] if shape and self.r.random() < 0.3 else shape)
    return tuple(1 if self.r.random() < 0.3 else d for d in s)
  def pick(self, *options): return self.r.choice(options)
  def out(self, line: str): self.lines.append(line)

def program(seed: int, grad: bool = False) -> str:
  g = Gen(seed, grad)
  dt, shape = g.dtype(), g.shape()
  rank = len(shape)
  g.out(f"x = {g.tensor(dt, shape, leaf=True)}")
  kind = g.pick("unary", "binary", "binary", "reduce", "movement", "movement", "other")
  name = g.pick(*{"unary": UNARY, "binary": BINARY, "reduce": REDUCE, "movement": MOVEMENT, "other": OTHER}[kind])
  if kind == "unary": g.out(f"r = x.{name}()")
  elif kind == "binary":
    if g.r.random() < 0.35: other = g.pick("2", "-1", "0", "3", "0.5", "-1.5", "True", "False", "0.0")
    else:
      g.out(f"y = {g.tensor(g.dtype() if g.r.random() < 0.5 else dt, g.bshape(shape))}")
      other = "y"
    g.out(f"r = x.{name}({other})")
  elif kind == "reduce": _reduce(g, name, rank)
  elif kind == "movement": _movement(g, name, dt, shape)
  else: _other(g, name, dt, shape)
  if g.r.random() < 0.3 and g.lines[-1].startswith("r = "):  # a second step on the result: kernels that fuse the two
    g.out("r = r if isinstance(r, (tuple, list)) else " + g.pick(*CHAIN))
  return "\n".join(g.lines)

def _reduce(g: Gen, name: str, rank: int):
  keep = f"keepdim={g.r.random() < 0.3}"
  if name in ("cumsum", "cumprod", "cummax", "logcumsumexp", "softmax", "log_softmax"): g.out(f"r = x.{name}({g.dim(rank)})")
  elif name in ("argmax", "argmin"): g.out(f"r = x.{name}({g.dim(rank) if rank and g.r.random() < 0.7 else None}, {keep})")
  elif name in ("std", "var", "std_mean", "var_mean"): g.out(f"r = x.{name}({g.axis(rank)}, {keep}, correction={g.pick(0, 1, 2)})")
  else: g.out(f"r = x.{name}({g.axis(rank)}, {keep})")

def _movement(g: Gen, name: str, dt: str, shape: tuple[int, ...]):
  rank, r = len(shape), g.r
  if name == "reshape":
    n = int(np.prod(shape)) if shape else 1
    g.out(f"r = x.reshape({g.pick((n,), (-1,), (1, n), (n, 1), (-1, 1), shape[::-1])})")
  elif name == "permute": g.out(f"r = x.permute({tuple(r.sample(range(rank), rank))})")
  elif name == "expand":
    s = [d if d != 1 or r.random() < 0.5 else r.randint(1, 3) for d in shape]
    if r.random() < 0.3: s = [2] + s
    if r.random() < 0.2 and s: s[r.randint(0, len(s) - 1)] = -1
    g.out(f"r = x.expand({tuple(s)})")
  elif name == "pad":
    mode = g.pick("constant", "constant", "reflect", "replicate", "circular")
    if r.random() < 0.6: p = tuple(r.randint(-1, 2) for _ in range(2 * rank))
    else: p = tuple((r.randint(0, 2), r.randint(0, 2)) if r.random() < 0.7 else None for _ in range(rank))
    value = f", value={g.pick('1', '-2.5', 'True', 'float(-math.inf)')}" if mode == "constant" and r.random() < 0.3 else ""
    g.out(f"r = x.pad({p}, mode={mode!r}{value})")
  elif name == "shrink":
    arg = [None if r.random() < 0.3 else (a := r.randint(0, d), r.randint(a, d)) for d in shape]
    g.out(f"r = x.shrink({tuple(arg)})")
  elif name == "flip": g.out(f"r = x.flip({g.axis(rank) if rank else ()})")
  elif name == "transpose": g.out(f"r = x.transpose({g.dim(rank)}, {g.dim(rank)})")
  elif name == "flatten": g.out(f"r = x.flatten({g.dim(rank)})")
  elif name == "unflatten":
    ax = g.dim(rank)
    d = shape[ax] if rank else 1
    g.out(f"r = x.unflatten({ax}, {g.pick((d, 1), (1, d), (-1, 1), (d,))})")
  elif name == "squeeze": g.out(f"r = x.squeeze({g.pick('', str(g.dim(rank)))})")
  elif name == "unsqueeze": g.out(f"r = x.unsqueeze({r.randint(-rank - 1, rank)})")
  elif name == "repeat": g.out(f"r = x.repeat({tuple(r.randint(1, 3) for _ in range(rank + r.randint(0, 1)))})")
  elif name == "repeat_interleave": g.out(f"r = x.repeat_interleave({r.randint(1, 3)}, {g.pick(None, *range(-rank, rank))})")
  elif name == "roll": g.out(f"r = x.roll({r.randint(-5, 5)}, {g.dim(rank)})")
  elif name in ("tril", "triu"): g.out(f"r = x.{name}({r.randint(-2, 2)})")
  elif name == "split": g.out(f"r = x.split({r.randint(1, 3)}, {g.dim(rank)})")
  elif name == "chunk": g.out(f"r = x.chunk({r.randint(1, 4)}, {g.dim(rank)})")
  elif name in ("cat", "stack"):
    g.out(f"y = {g.tensor(g.pick(dt, dt, g.dtype()), shape)}")
    g.out(f"r = x.{name}(y, dim={g.dim(rank, extra=int(name == 'stack'))})")
  elif name == "getitem": g.out(f"r = x[{_index(g, shape)}]")
  elif name == "gather":
    if not rank: g.out("r = x.gather(0, T(0))"); return  # noqa: E702
    ax = g.dim(rank)
    ish = tuple(r.randint(1, max(s, 1)) if i != ax % rank else r.randint(1, 3) for i, s in enumerate(shape))
    idx = np.array([r.randint(0, max(shape[ax] - 1, 0)) for _ in range(int(np.prod(ish)))]).reshape(ish).tolist()
    g.out(f"r = x.gather({ax}, T({idx}))")
  elif name == "one_hot": g.out(f"r = x.one_hot({r.randint(1, 8)})" if "int" in dt else "r = x.int().abs().one_hot(7)")
  elif name == "masked_fill":
    g.out(f"m = {g.tensor('bool', g.bshape(shape))}")
    g.out(f"r = x.masked_fill(m, {g.pick('0', '-1.5', 'True', '7')})")
  elif name == "where":
    g.out(f"y = {g.tensor(g.pick(*DTYPES), g.bshape(shape))}")
    g.out(f"r = x.where(y, {g.pick('0', '-1.5', 'True', '7', 'y * 2')})")

def _index(g: Gen, shape: tuple[int, ...]) -> str:
  """An index of ints, slices (any step), None, lists and at most one Ellipsis."""
  out = []
  for d in shape:
    c = g.r.random()
    if c < 0.2: out.append(":")
    elif c < 0.45 and d: out.append(str(g.r.randint(-d, d - 1)))
    elif c < 0.7: out.append(f"{g.r.randint(-d - 1, d)}:{g.r.randint(-d - 1, d + 1)}:{g.pick(1, 1, 2, -1, 3, -2)}")
    elif c < 0.8: out.append("None")
    elif c < 0.9 and d: out.append(str([g.r.randint(-d, d - 1) for _ in range(g.r.randint(1, 3))]))
    else: out.append("..." if "..." not in out else ":")
  return ", ".join(out) if out else "()"

def _other(g: Gen, name: str, dt: str, shape: tuple[int, ...]):
  rank, r = len(shape), g.r
  def image(s, dts=("float32", "int32")): g.lines[0] = f"x = {g.tensor(g.pick(*dts), s, leaf=True)}"
  if name in ("matmul", "dot"):
    k = shape[-1] if shape else 2
    g.out(f"y = {g.tensor(g.pick(dt, 'float32', 'int32'), g.pick((k,), (k, r.randint(1, 3)), (2, k, 2)))}")
    g.out(f"r = x.{name}(y)")
  elif name == "clip": g.out(f"r = x.clip({g.pick('-1', '0', '0.5', 'None')}, {g.pick('2', '1.5', '3')})")
  elif name == "clamp": g.out(f"r = x.clamp(min_={g.pick('-1', '1', 'None')}, max_={g.pick('0', '2.5', 'None')})")
  elif name == "sort": g.out(f"r = x.sort({g.dim(rank)}, descending={r.random() < 0.5})")
  elif name == "topk": g.out(f"r = x.topk({r.randint(1, 3)}, {g.dim(rank)}, largest={r.random() < 0.5})")
  elif name in ("cast", "bitcast"): g.out(f"r = x.{name}(dtypes.{g.pick(*WIDE)})")
  elif name == "isclose":
    g.out(f"y = {g.tensor(dt, shape)}")
    g.out(f"r = x.isclose(y, rtol={g.pick(0.0, 0.1)}, atol={g.pick(0.0, 1.0)}, equal_nan={r.random() < 0.5})")
  elif name == "masked_select": g.out(f"m = {g.tensor('bool', shape)}"); g.out("r = x.masked_select(m)")  # noqa: E702
  elif name == "interpolate":
    image((1, 2, 3, 4)[:r.randint(3, 4)], ("float32", "int32", "uint8"))
    g.out(f"r = x.interpolate(size=({r.randint(1, 6)},), mode={g.pick('linear', 'nearest', 'nearest-exact')!r}, align_corners={r.random() < 0.3})")
  elif name in ("max_pool2d", "avg_pool2d"):
    image((1, r.randint(1, 2), r.randint(1, 5), r.randint(1, 5)))
    k = r.randint(1, 3)
    extra = f", ceil_mode={r.random() < 0.5}" + (f", count_include_pad={r.random() < 0.5}" if name == "avg_pool2d" else "")
    dil = r.randint(1, 2) if name == "max_pool2d" else 1
    g.out(f"r = x.{name}(kernel_size={k}, stride={r.randint(1, 3)}, padding={r.randint(0, k // 2)}, dilation={dil}{extra})")
  elif name == "conv2d":
    image((1, 2, r.randint(1, 5), r.randint(1, 5)))
    k, groups = r.randint(1, 3), g.pick(1, 2)
    g.out(f"w = {g.tensor('float32', (2, 2 // groups, k, k))}")
    g.out(f"r = x.conv2d(w, groups={groups}, stride={r.randint(1, 2)}, padding={r.randint(0, 2)}, dilation={r.randint(1, 2)})")
  elif name == "linear":
    g.out(f"w = {g.tensor('float32', (shape[-1] if shape else 1, 3))}")
    g.out("r = x.float().linear(w, T([1.0, 2.0, -1.0]))")
  elif name == "layernorm": g.out(f"r = x.float().layernorm(axis={g.dim(rank) if rank else -1})")
  elif name in ("cross_entropy", "sparse_categorical_crossentropy", "nll_loss"):
    image((3, 4), ("float32",))
    red = f"reduction={g.pick('mean', 'sum', 'none')!r}"
    if name == "cross_entropy":
      g.out(f"y = {g.tensor('float32', (3, 4))}.softmax()")
      g.out(f"r = x.cross_entropy(y, {red}, label_smoothing={g.pick(0.0, 0.1)})")
    elif name == "nll_loss": g.out(f"r = x.log_softmax().nll_loss(T([{r.randint(0, 3)}, 0, 1]), ignore_index={g.pick(-100, 1)}, {red})")
    else:
      labels = f"T([{r.randint(0, 3)}, {r.randint(-1, 3)}, 1])"
      g.out(f"r = x.sparse_categorical_crossentropy({labels}, ignore_index={g.pick(-1, 2)}, label_smoothing={g.pick(0.0, 0.2)}, {red})")
  elif name == "div_rounding":
    g.out(f"y = {g.tensor(g.dtype(), g.bshape(shape))}")
    g.out(f"r = x.div(y, rounding_mode={g.pick(None, 'trunc', 'floor')!r})")
  elif name == "sum_dtype": g.out(f"r = (x * x).sum({g.axis(rank)}, dtype={g.pick('None', 'dtypes.int64', 'dtypes.float32', repr('int32'))})")
  elif name in ("scatter", "scatter_reduce"):
    image((3, 4))
    ax = r.randint(0, 1)
    g.out(f"i = T({np.array([r.randint(0, (3, 4)[ax] - 1) for _ in range(6)]).reshape(2, 3).tolist()})")
    g.out(f"s = {g.tensor('float32', (2, 3))}")
    if name == "scatter": g.out(f"r = x.scatter({ax}, i, {g.pick('s', '2.0')}{g.pick('', ', reduce=' + repr('add'), ', reduce=' + repr('multiply'))})")
    else: g.out(f"r = x.scatter_reduce({ax}, i, s, {g.pick('sum', 'prod', 'mean', 'amax', 'amin')!r}, include_self={r.random() < 0.5})")
  elif name == "meshgrid": g.out(f"r = x.flatten().meshgrid(T([1, 2, 3]), indexing={g.pick('ij', 'xy')!r})")
  elif name == "eye": g.out(f"r = T.eye({r.randint(0, 3)}, {g.pick(None, 2, 4)}, dtype=dtypes.{dt})")
  elif name == "arange": g.out(f"r = T.arange({g.pick(5, -2, 0.5, 3, 10)}, {g.pick(None, 2, 7, -3, 2.5)}, {g.pick(1, 2, -1, 0.5, -2)})")
  elif name == "linspace":
    g.out(f"r = T.linspace({g.pick(0, -1.5, 2)}, {g.pick(1, 5, -3)}, {r.randint(0, 5)}, dtype=dtypes.{g.pick('float32', 'int32', 'int64', 'uint8')})")
  elif name == "conv_transpose2d":
    image((1, 2, r.randint(1, 4), r.randint(1, 4)), ("float32",))
    k, groups, st = r.randint(1, 3), g.pick(1, 2), r.randint(1, 2)
    g.out(f"w = {g.tensor('float32', (2, 2 // groups, k, k))}")
    g.out(f"r = x.conv_transpose2d(w, groups={groups}, stride={st}, padding={r.randint(0, 1)}, dilation={r.randint(1, 2)}, output_padding={r.randint(0, st - 1)})")
  elif name == "einsum":
    a, b, c = r.randint(1, 4), r.randint(1, 4), r.randint(1, 4)
    image((a, b), (dt,) if dt != "bool" else ("float32",))
    g.out(f"y = {g.tensor(g.pick('float32', 'int32'), (b, c))}")
    g.out(f"r = T.einsum({g.pick('ij,jk->ik', 'ij,jk->ki', 'ij,jk->j', 'ij,jk->')!r}, x, y)")
  elif name == "setitem":
    if not rank or 0 in shape: g.out("r = x + 0"); return  # noqa: E702
    g.out(f"x[{_index(g, shape).replace('None', ':')}] = {g.pick('0', '1', '-2', 'True', '2.5')}")
    g.out("r = x")
  elif name == "tensor_index":
    if not rank or 0 in shape: g.out("r = x + 0"); return  # noqa: E702
    idx = [[r.randint(-shape[0], shape[0] - 1) for _ in range(r.randint(1, 3))] for _ in range(r.randint(1, 2))]
    g.out(f"r = x[T({idx})]")
  elif name == "attention":
    image((1, r.randint(1, 3), r.randint(1, 4)), ("float32",))
    g.out(f"r = x.scaled_dot_product_attention(x * 0.5, x, is_causal={r.random() < 0.5})")
  elif name == "full_like": g.out(f"r = x.full_like({g.pick(3, 2.5, True, -1)}{g.pick('', ', dtype=dtypes.float32', ', dtype=dtypes.int8')})")

# ---------------------------------------------------------------------------------------------------------------------
# running one side, comparing both

def run(side: str, src: str, grad: bool):
  """('ok', [(shape, dtype name, values), ...]) or ('raises', 'Class: message')."""
  if side == "tinygrad":
    from tinygrad import Tensor as T, dtypes
  else:
    from lazynb import Tensor as T, dtypes
  env = {"T": T, "dtypes": dtypes, "math": __import__("math")}
  try:
    exec(src, env)
    rs = env["r"] if isinstance(env["r"], (tuple, list)) else (env["r"],)
    grads = []
    if grad and env["x"].requires_grad and rs[0].dtype == dtypes.float32:  # before any realize: tinygrad's cuts the graph
      try:
        n = rs[0].numel()
        (rs[0] * T(np.linspace(0.5, 1.5, max(n, 1), dtype=np.float32)[:n]).reshape(rs[0].shape)).sum().backward()
        gx = env["x"].grad
        grads.append(("gradient", "float", gx.numpy() if gx is not None else np.zeros(env["x"].shape, np.float32)))
      except Exception as e: grads.append(("gradient", f"raises {type(e).__name__}: {str(e)[:120]}", np.zeros(1)))  # noqa: BLE001
    return ("ok", [(tuple(t.shape), str(t.dtype).replace("dtypes.", ""), t.numpy()) for t in rs] + grads)
  except Exception as e:  # noqa: BLE001 (any error is an outcome)
    return ("raises", f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}")

def differ(a, b) -> str:
  """'' when the two outcomes agree, else what differs."""
  if a[0] != b[0]:
    return {"raises": "tinygrad raises", "crash": "tinygrad crashes"}.get(a[0], "") or {"raises": "LAZYNB RAISES", "crash": "LAZYNB CRASHES"}[b[0]]
  if a[0] != "ok": return ""
  if len(a[1]) != len(b[1]): return "number of results"
  for (s1, d1, v1), (s2, d2, v2) in zip(a[1], b[1]):
    if s1 != s2: return f"shape {s1} vs {s2}"
    if d1 != d2: return "gradient" if s1 == "gradient" else "dtype"
    if v1.shape != v2.shape: return "values"
    if v1.dtype.kind in "fc" or v2.dtype.kind in "fc":  # (16-bit floats: a few ulps apart is the same number)
      tol = dict(rtol=2e-3, atol=1e-3) if 2 in (v1.dtype.itemsize, v2.dtype.itemsize) else dict(rtol=1e-4, atol=1e-5)
      if not np.allclose(v1.astype(np.float64), v2.astype(np.float64), equal_nan=True, **tol): return "values"
    elif not np.array_equal(v1, v2): return "values"
  return ""

TIME_LIMIT = 60  # seconds one program may run (tinygrad 0.10.3 can spend minutes and gigabytes on a long axis's gradient)

def _too_long(signum, frame): raise TimeoutError(f"ran over {TIME_LIMIT} s")

def worker(side: str, first: int, last: int, grad: bool, out: str):
  signal.signal(signal.SIGALRM, _too_long)
  if side == "tinygrad":
    import tinygrad
    tinygrad.Device.DEFAULT = "CPU"  # (its OpenCL device, when pyopencl is installed, lacks what some programs need)
  with open(out, "ab") as f:
    for s in range(first, last):
      pickle.dump((s, ("crash", "the process died in this program")), f); f.flush()  # noqa: E702 (what stays if it dies)
      signal.alarm(TIME_LIMIT)
      try: res = run(side, program(s, grad), grad)
      finally: signal.alarm(0)
      pickle.dump((s, res), f); f.flush()  # noqa: E702

def _launch(cmd: list[str]): subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=str(ROOT)))

def drive(side: str, first: int, last: int, grad: bool) -> dict:
  """Every seed's outcome on one side; a crash ends the process, the next one starts after the seed that crashed."""
  out, done = pathlib.Path(tempfile.mkdtemp()) / f"{side}.pkl", {}
  nxt = first
  while nxt < last:
    cmd = [sys.executable, __file__, "--worker", side, f"{nxt}:{last}", str(out)] + (["--grad"] if grad else [])
    _launch(cmd)
    with open(out, "rb") as f:
      while True:
        try: s, o = pickle.load(f)
        except EOFError: break
        done[s] = o
    nxt = max(done, default=nxt - 1) + 1 if done else last
  return done

def brief(o) -> str:
  if o[0] != "ok": return f"{o[0]}: {o[1]}"
  return ", ".join(f"{s} {d}" if s != "gradient" else f"gradient {d}" for s, d, _ in o[1])

def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
  ap.add_argument("--seeds", default="0:500", help="first:last seeds (default 0:500)")
  ap.add_argument("--grad", action="store_true", help="float32 inputs, and the gradients compared too")
  ap.add_argument("--show", type=int, help="one seed: its program and both outcomes, values included")
  ap.add_argument("--worker", nargs=3, metavar=("SIDE", "SEEDS", "OUT"), help=argparse.SUPPRESS)
  a = ap.parse_args()
  if a.worker:
    first, last = map(int, a.worker[1].split(":"))
    return worker(a.worker[0], first, last, a.grad, a.worker[2])
  first, last = (a.show, a.show + 1) if a.show is not None else tuple(map(int, a.seeds.split(":")))
  with concurrent.futures.ThreadPoolExecutor(2) as ex: tg, lz = ex.map(lambda side: drive(side, first, last, a.grad), ["tinygrad", "lazynb"])
  if a.show is not None:
    print(program(a.show, a.grad))
    for side, o in (("tinygrad", tg[a.show]), ("lazynb", lz[a.show])): print(f"--- {side}: {o if o[0] != 'ok' else ''}", *(o[1] if o[0] == "ok" else []), sep="\n")
    return
  groups: dict[tuple[str, str], list[int]] = collections.defaultdict(list)
  for s in range(first, last):
    if (why := differ(tg[s], lz[s])):
      method = next((ln.split("=", 1)[1].strip() for ln in program(s, a.grad).splitlines() if ln.startswith("r =")), "?")
      groups[(why, method.split("(")[0].split("[")[0])].append(s)
  n = sum(map(len, groups.values()))
  print(f"{last - first} programs{' (gradients too)' if a.grad else ''}: {last - first - n} agree, {n} differ")
  for kind in sorted({k for k, _ in groups}, key=lambda k: (k not in ("LAZYNB RAISES", "LAZYNB CRASHES", "values", "dtype", "gradient"), k)):
    rows = sorted(((m, s) for (k, m), s in groups.items() if k == kind), key=lambda r: -len(r[1]))
    print(f"\n== {kind}: {sum(len(s) for _, s in rows)}")
    for m, seeds in rows:
      s = seeds[0]
      print(f"  {m}  x{len(seeds)}  (seed {s}; also {seeds[1:6]})" if len(seeds) > 1 else f"  {m}  (seed {s})")
      print("      " + program(s, a.grad).replace("\n", "; ")[:220])
      print(f"      tinygrad: {brief(tg[s])[:150]}\n      lazynb:   {brief(lz[s])[:150]}")

if __name__ == "__main__":
  main()
