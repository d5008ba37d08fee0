"""The programs `pipeline.check` grades a stage on: a few hundred small tensor programs, generated from a fixed seed,
covering what each stage must handle, in six families of one function each (elementwise, reduce, movement, matmul, conv,
several kernels: docs/internals.md, "The check corpus"). Each `Program` builds its tensors afresh from numpy data every
time it runs (new buffers, so nothing realized before is reused), and `run()` gives its values as numpy arrays."""
from __future__ import annotations
from dataclasses import dataclass
from typing import Any, Callable
import numpy as np
from lazynb import pipeline
from lazynb.tensor import Tensor

@dataclass(frozen=True)
class Program:
  name: str                         # what it computes, in words (a check's message names it)
  kind: str                         # its family (docs/internals.md)
  build: Callable[[], Tensor | tuple]
  def run(self) -> list[np.ndarray]:
    out = self.build()
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    Tensor.realize_all(*outs)
    return [o.numpy() for o in outs]

def _arr(rng: np.random.Generator, shape: tuple, dtype: str, positive: bool = False) -> np.ndarray:
  if dtype == "int32": return rng.integers(1 if positive else -9, 10, shape).astype(np.int32)
  x = rng.standard_normal(shape).astype(np.float32)
  return np.abs(x) + 0.5 if positive else x

def _shape(rng: np.random.Generator, ndim: int) -> tuple[int, ...]: return tuple(int(rng.choice([1, 2, 3, 4, 5, 7, 8, 9, 16])) for _ in range(ndim))

UNARY = {"neg": lambda x: -x, "relu": lambda x: x.relu(), "abs": lambda x: x.abs(), "exp": lambda x: (x * 0.5).exp(), "square": lambda x: x * x,
         "sqrt|x|": lambda x: x.abs().sqrt(), "sin": lambda x: x.sin(), "recip(1+x*x)": lambda x: (1 + x * x).reciprocal(),
         "log(1+|x|)": lambda x: (1 + x.abs()).log(), "sigmoid": lambda x: x.sigmoid()}
INT_UNARY = {"neg": lambda x: -x, "abs": lambda x: x.abs(), "square": lambda x: x * x, "x%4": lambda x: x % 4, "x//3": lambda x: x // 3}
BINARY = {"+": lambda a, b: a + b, "*": lambda a, b: a * b, "-": lambda a, b: a - b, "max": lambda a, b: a.maximum(b),
          "where(a<b)": lambda a, b: (a < b).where(a, b), "a/(1+b*b)": lambda a, b: a / (1 + b * b)}

def _elementwise(rng: np.random.Generator, n: int) -> list[Program]:
  out = []
  for i in range(n):
    dt = "int32" if i % 4 == 3 else "float32"
    shp = _shape(rng, int(rng.integers(1, 4)))
    bshape = tuple(1 if rng.random() < 0.3 else s for s in shp)  # broadcast some axes
    a, b = _arr(rng, shp, dt), _arr(rng, bshape, dt)
    un = INT_UNARY if dt == "int32" else UNARY
    u1, u2 = rng.choice(sorted(un)), rng.choice(sorted(un))
    bn = rng.choice(["+", "*", "-", "max"] if dt == "int32" else sorted(BINARY))
    def build(a=a, b=b, u1=u1, u2=u2, bn=bn, un=un): return un[u2](BINARY[bn](un[u1](Tensor(a.copy())), Tensor(b.copy())))
    out.append(Program(f"{u2}({u1}(a) {bn} b) on {dt} {shp} and {bshape}", "elementwise", build))
  return out

def _reduce(rng: np.random.Generator, n: int) -> list[Program]:
  out = []
  for i in range(n):
    dt = "int32" if i % 5 == 4 else "float32"
    shp = _shape(rng, int(rng.integers(1, 4)))
    a = _arr(rng, shp, dt)
    op = rng.choice(["sum", "max", "min", "mean"] if dt == "float32" else ["sum", "max", "min"])
    axis = None if rng.random() < 0.25 else tuple(sorted(set(int(x) for x in rng.integers(0, len(shp), int(rng.integers(1, len(shp) + 1))))))
    keep = bool(rng.random() < 0.4)
    pre = rng.choice(["", "x*2+1", "relu"]) if dt == "float32" else ""
    def build(a=a, op=op, axis=axis, keep=keep, pre=pre):
      x = Tensor(a.copy())
      x = x * 2 + 1 if pre == "x*2+1" else x.relu() if pre == "relu" else x
      return getattr(x, op)(axis=axis, keepdim=keep)
    out.append(Program(f"{op}({pre or 'x'}, axis={axis}, keepdim={keep}) of a {dt} {shp}", "reduce", build))
  return out

def _movement(rng: np.random.Generator, n: int) -> list[Program]:
  out = []
  for _ in range(n):
    shp = _shape(rng, int(rng.integers(2, 4)))
    a = _arr(rng, shp, "float32")
    steps: list[tuple] = []
    cur = list(shp)
    for _ in range(int(rng.integers(1, 4))):
      kind = rng.choice(["pad", "shrink", "flip", "permute", "expand", "reshape"])
      if kind == "pad": p = tuple((int(rng.integers(0, 3)), int(rng.integers(0, 3))) for _ in cur); steps.append(("pad", p)); cur = [s + lo + hi for s, (lo, hi) in zip(cur, p)]  # noqa: E702,E501
      elif kind == "shrink":
        arg = tuple((lo := int(rng.integers(0, s)), int(rng.integers(lo + 1, s + 1))) for s in cur)
        steps.append(("shrink", arg)); cur = [hi - lo for lo, hi in arg]  # noqa: E702
      elif kind == "flip": steps.append(("flip", int(rng.integers(0, len(cur)))))
      elif kind == "permute": order = tuple(int(x) for x in rng.permutation(len(cur))); steps.append(("permute", order)); cur = [cur[i] for i in order]  # noqa: E702
      elif kind == "expand" and 1 in cur: new = [int(rng.integers(2, 5)) if s == 1 else s for s in cur]; steps.append(("expand", tuple(new))); cur = new  # noqa: E702
      else: steps.append(("reshape", (int(np.prod(cur)),))); cur = [int(np.prod(cur))]  # noqa: E702
    tail = rng.choice(["+1", "exp", "sum", "max0"])
    def build(a=a, steps=tuple(steps), tail=tail):
      x = Tensor(a.copy())
      for k, arg in steps:
        x = x.pad(arg) if k == "pad" else x.shrink(arg) if k == "shrink" else x.flip(arg) if k == "flip" else \
            x.permute(arg) if k == "permute" else x.expand(arg) if k == "expand" else x.reshape(arg)
      return x + 1 if tail == "+1" else x.exp() if tail == "exp" else x.sum() if tail == "sum" else x.max(axis=0)
    desc = " . ".join(f"{k}{arg}" for k, arg in steps)
    out.append(Program(f"{desc} then {tail}, from a {shp}", "movement", build))
  return out

def _matmul(rng: np.random.Generator, n: int) -> list[Program]:
  out = []
  for i in range(n):
    m, k, nn = (int(x) for x in rng.choice([1, 2, 3, 4, 5, 7, 8, 16, 17], 3))
    batch = (int(rng.integers(2, 4)),) if i % 3 == 1 else ()
    a, b = _arr(rng, batch + (m, k), "float32"), _arr(rng, (nn, k) if i % 3 == 2 else (k, nn), "float32")
    def build(a=a, b=b, tb=i % 3 == 2): return Tensor(a.copy()) @ (Tensor(b.copy()).T if tb else Tensor(b.copy()))
    out.append(Program(f"matmul {a.shape} @ {'transposed ' if i % 3 == 2 else ''}{b.shape}", "matmul", build))
  return out

def _conv(rng: np.random.Generator, n: int) -> list[Program]:
  out = []
  for i in range(n):
    groups = 2 if i % 4 == 3 else 1
    cin, cout = 2 * groups, 2 * groups
    x, w = _arr(rng, (int(rng.integers(1, 3)), cin, int(rng.integers(4, 8)), int(rng.integers(4, 8))), "float32"), _arr(rng, (cout, cin // groups, 3, 3), "float32")
    bias = _arr(rng, (cout,), "float32") if i % 2 else None
    stride, pad = int(rng.integers(1, 3)), int(rng.integers(0, 2))
    def build(x=x, w=w, bias=bias, stride=stride, pad=pad, groups=groups):
      return Tensor(x.copy()).conv2d(Tensor(w.copy()), None if bias is None else Tensor(bias.copy()), groups=groups, stride=stride, padding=pad)
    out.append(Program(f"conv2d x{x.shape} w{w.shape} stride={stride} padding={pad} groups={groups}{' with bias' if bias is not None else ''}", "conv", build))
  return out

def _several(rng: np.random.Generator, n: int) -> list[Program]:
  makers: list[tuple[str, Callable[[Tensor], Any]]] = [
    ("softmax over the last axis", lambda x: x.softmax(-1)),
    ("log_softmax over axis 0", lambda x: x.log_softmax(0)),
    ("(x - mean) / std over the last axis", lambda x: (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-3)),
    ("cumsum over axis 0", lambda x: x.cumsum(0)),
    ("argmax over the last axis", lambda x: x.argmax(-1)),
    ("sum of each row plus the max of all", lambda x: x.sum(-1) + x.max()),
    ("cat of the sums over each axis", lambda x: x.sum(0).flatten().cat(x.sum(1).flatten())),
    ("the mean of the row maxima", lambda x: x.max(-1).mean()),
    ("x times its transposed sum", lambda x: x * x.sum(0, keepdim=True)),
    ("two outputs: sum and max", lambda x: (x.sum(), x.max(0)))]
  out = []
  for i in range(n):
    what, f = makers[i % len(makers)]
    shp = (int(rng.integers(1, 9)), int(rng.integers(1, 9)))
    a = _arr(rng, shp, "float32")
    def build(a=a, f=f): return f(Tensor(a.copy()))
    out.append(Program(f"{what}, of a {shp}", "several kernels", build))
  return out

def programs(seed: int = 0) -> list[Program]:
  """The corpus, the same on every call with the same seed: 280 programs."""
  rng = np.random.default_rng(seed)
  return (_elementwise(rng, 60) + _reduce(rng, 60) + _movement(rng, 60) + _matmul(rng, 30) + _conv(rng, 20) + _several(rng, 50))

pipeline.default_programs = programs  # what pipeline.check grades on unless it is given programs
