"""Course Project 6: custom ops from primitives, checked against PyTorch and finite differences.

  python examples/project6_custom_ops.py          (needs torch for the reference values)

1. gelu, rms_norm and swiglu written with elementwise/reduce primitives only
2. each matches a PyTorch reference
3. rms_norm's autograd gradient matches central finite differences (and torch's gradient)
4. what each compiles to: kernels, and the ALU operations in each kernel (DEBUG=3 shows the source)
5. gelu one step at a time with .realize() in between vs all at once: kernel count and runtime

Two notes on the course's formulas:
- rms_norm is normally taken over the last axis (each row by its own RMS); that is what is written here, and
  it is what torch.nn.functional.rms_norm(x, (d,)) computes.
- the course's swiglu(x, gate) = x * sigmoid(gate) is the original GLU gate. SwiGLU proper uses
  swish(gate) = gate * sigmoid(gate). Both are here: `glu` (the course's formula) and `swiglu`.
"""
from __future__ import annotations
import math, time
import numpy as np
from lazynb import Tensor, GlobalCounters
from lazynb.trace import Recorder
from lazynb.uop.ops import GroupOp

def sigmoid(x: Tensor) -> Tensor: return (1 + (-x).exp()).reciprocal()
def gelu(x: Tensor) -> Tensor: return x * 0.5 * (1 + (x * (1 / math.sqrt(2))).erf())   # erf: lazynb's, itself built from primitives
def rms_norm(x: Tensor, eps: float = 1e-6) -> Tensor: return x / ((x * x).mean(axis=-1, keepdim=True) + eps).sqrt()
def glu(x: Tensor, gate: Tensor) -> Tensor: return x * sigmoid(gate)                     # the course's "swiglu"
def swiglu(x: Tensor, gate: Tensor) -> Tensor: return x * (gate * sigmoid(gate))

def task1_2_match_torch(xn: np.ndarray, gn: np.ndarray):
  print("== 1, 2. custom ops vs PyTorch")
  import torch
  import torch.nn.functional as F
  x, g, tx, tg = Tensor(xn), Tensor(gn), torch.tensor(xn), torch.tensor(gn)
  cases = {
    "gelu": (gelu(x), F.gelu(tx), 1e-5),
    "rms_norm": (rms_norm(x), F.rms_norm(tx, (xn.shape[-1],), eps=1e-6), 1e-5),
    "glu (course's swiglu)": (glu(x, g), tx * torch.sigmoid(tg), 1e-5),
    "swiglu": (swiglu(x, g), tx * F.silu(tg), 1e-5),
  }
  for name, (mine, ref, tol) in cases.items():
    err = float(np.abs(mine.numpy() - ref.numpy()).max())
    print(f"  {name:22s} max |lazynb - torch| = {err:.2e}")
    assert err < tol, (name, err)

def task3_rms_norm_grad(xn: np.ndarray):
  print("== 3. rms_norm gradient: autograd vs finite differences vs torch")
  import torch
  import torch.nn.functional as F
  w = np.random.default_rng(3).normal(size=xn.shape).astype(np.float32)  # a weighted sum, so each output matters differently
  def f(v: np.ndarray) -> float: return (rms_norm(Tensor(v)) * Tensor(w)).sum().item()
  x = Tensor(xn, requires_grad=True)
  (rms_norm(x) * Tensor(w)).sum().backward()
  auto = x.grad.numpy()
  eps, fd = 1e-2, np.zeros_like(xn)
  for i in range(xn.size):
    p, m = xn.copy(), xn.copy()
    p.flat[i] += eps
    m.flat[i] -= eps
    fd.flat[i] = (f(p) - f(m)) / (2 * eps)
  tx = torch.tensor(xn, requires_grad=True)
  (F.rms_norm(tx, (xn.shape[-1],), eps=1e-6) * torch.tensor(w)).sum().backward()
  print(f"  max |autograd - finite diff| = {np.abs(auto - fd).max():.2e}, max |autograd - torch| = {np.abs(auto - tx.grad.numpy()).max():.2e}")
  assert np.allclose(auto, fd, atol=5e-3), np.abs(auto - fd).max()
  assert np.allclose(auto, tx.grad.numpy(), atol=1e-5)

def alu_counts(prg) -> dict[str, int]:
  """ALU operations on values (not index math) in a kernel's linearized program."""
  out: dict[str, int] = {}
  for u in prg.uops:
    if u.op in GroupOp.ALU and u.dtype.scalar().name in ("float", "half"): out[u.op.name] = out.get(u.op.name, 0) + 1
  return out

def task4_inspect(xn: np.ndarray, gn: np.ndarray):
  print("== 4. what each op compiles to")
  x, g = Tensor(xn).realize(), Tensor(gn).realize()
  expected_kernels = {"gelu": 1, "rms_norm": 2, "glu": 1, "swiglu": 1}
  for name, t in {"gelu": gelu(x), "rms_norm": rms_norm(x), "glu": glu(x, g), "swiglu": swiglu(x, g)}.items():
    with Recorder(rewrites=False) as rec: t.realize()
    progs = [e.data["program"] for e in rec.of("exec") if e.data["kind"] == "kernel"]
    print(f"  {name}: {len(progs)} kernel(s)")
    for p in progs: print(f"    {p.name:14s} ALU ops: {alu_counts(p)}")
    assert len(progs) == expected_kernels[name], (name, len(progs))
  # rms_norm is two kernels: the mean is a reduce, and its result is read through an expand (one value per row,
  # used by every element of the row), so it is stored first; the division is a second, elementwise kernel
  print("  the gelu kernel's source:")
  with Recorder(rewrites=False) as rec: gelu(Tensor(xn[:1, :4].copy()).realize()).realize()
  print("   ", [e.data["program"] for e in rec.of("exec") if e.data["kind"] == "kernel"][0].src.replace("\n", "\n    "))

def gelu_steps(x: Tensor) -> Tensor:
  """gelu with every intermediate result written to memory."""
  t = (x * (1 / math.sqrt(2))).realize()
  t = t.erf().realize()
  t = (1 + t).realize()
  h = (x * 0.5).realize()
  return (h * t).realize()

def task5_fused_vs_steps(n: int = 1 << 20):
  print("== 5. gelu: one step at a time vs all at once")
  def run(fn) -> tuple[int, float, np.ndarray, np.ndarray]:
    best, kernels, out, xin = float("inf"), 0, None, None
    for _ in range(4):  # the first run compiles; fresh inputs each time (a realized result is never recomputed)
      xin = Tensor.randn(n).realize()
      GlobalCounters.reset()
      st = time.perf_counter()
      out = fn(xin).realize()
      best, kernels = min(best, time.perf_counter() - st), GlobalCounters.kernel_count
    return kernels, best, out.numpy(), xin.numpy()
  k_steps, t_steps, y_steps, x1 = run(gelu_steps)
  k_fused, t_fused, y_fused, x2 = run(gelu)
  print(f"  step by step: {k_steps} kernels, {t_steps * 1e3:.2f} ms;  all at once: {k_fused} kernel, {t_fused * 1e3:.2f} ms")
  assert (k_steps, k_fused) == (5, 1)
  import torch
  import torch.nn.functional as F
  assert np.allclose(y_steps, F.gelu(torch.tensor(x1)).numpy(), atol=1e-5) and np.allclose(y_fused, F.gelu(torch.tensor(x2)).numpy(), atol=1e-5)

def main():
  rng = np.random.default_rng(0)
  xn = rng.normal(size=(4, 8)).astype(np.float32) * 2
  gn = rng.normal(size=(4, 8)).astype(np.float32) * 2
  task1_2_match_torch(xn, gn)
  task3_rms_norm_grad(xn)
  task4_inspect(xn, gn)
  task5_fused_vs_steps()
  print("project 6: all checks passed")

if __name__ == "__main__":
  main()
