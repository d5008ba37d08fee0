# %% [markdown]
# # Project 6: your own operations
#
# A new activation or normalization doesn't need a new kernel: write it with the existing primitives and the
# compiler fuses it into as few kernels as the reduces allow. Here you build GELU, RMSNorm and a gated linear
# unit, check them against PyTorch, check a gradient with finite differences, and look at what they compile to.
# (Course file `projects/06_custom_ops.py` is `examples/project6_custom_ops.py` here.)
#
# **Notes on the course's formulas.**
# - RMSNorm normalizes each row by its own root-mean-square, so the mean is taken over the last axis; that is
#   what `torch.nn.functional.rms_norm(x, (d,))` computes, and what is written below.
# - The course calls `x * sigmoid(gate)` "swiglu". That formula is the original GLU. SwiGLU puts swish
#   (`gate * sigmoid(gate)`) in place of the sigmoid. Both are below, under their own names.
# - The reference values come from PyTorch when it is installed (CI installs it); without torch the notebook
#   falls back to numpy formulas and says so.

# %%
%load_ext lazynb
import math, time
import numpy as np
from lazynb import Tensor, GlobalCounters
from lazynb.trace import Recorder
from lazynb.uop.ops import GroupOp
try:
  import torch, torch.nn.functional as F
except ImportError:
  torch = None
print("reference:", "PyTorch " + torch.__version__ if torch else "numpy formulas (torch is not installed)")

# %% [markdown]
# ## 1. The ops, from primitives

# %%
def sigmoid(x): return (1 + (-x).exp()).reciprocal()
def gelu(x): return x * 0.5 * (1 + (x * (1 / math.sqrt(2))).erf())       # lazynb's erf is built from primitives too
def rms_norm(x, eps=1e-6): return x / ((x * x).mean(axis=-1, keepdim=True) + eps).sqrt()
def glu(x, gate): return x * sigmoid(gate)                                 # the course's "swiglu"
def swiglu(x, gate): return x * (gate * sigmoid(gate))

def reference(name, xn, gn=None):
  if torch is not None:
    tx = torch.tensor(xn)
    tg = torch.tensor(gn) if gn is not None else None
    return {"gelu": lambda: F.gelu(tx), "rms_norm": lambda: F.rms_norm(tx, (xn.shape[-1],), eps=1e-6),
            "glu": lambda: tx * torch.sigmoid(tg), "swiglu": lambda: tx * F.silu(tg)}[name]().numpy()
  erf = np.vectorize(math.erf)
  sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
  return {"gelu": lambda: xn * 0.5 * (1 + erf(xn / math.sqrt(2))), "rms_norm": lambda: xn / np.sqrt((xn * xn).mean(-1, keepdims=True) + 1e-6),
          "glu": lambda: xn * sig(gn), "swiglu": lambda: xn * gn * sig(gn)}[name]().astype(np.float32)

rng = np.random.default_rng(0)
xn = (rng.normal(size=(4, 8)) * 2).astype(np.float32)
gn = (rng.normal(size=(4, 8)) * 2).astype(np.float32)
x, g = Tensor(xn).realize(), Tensor(gn).realize()

# %% [markdown]
# ## 2. Do they match the reference?

# %%
errors = {
  "gelu": np.abs(gelu(x).numpy() - reference("gelu", xn)).max(),
  "rms_norm": np.abs(rms_norm(x).numpy() - reference("rms_norm", xn)).max(),
  "glu": np.abs(glu(x, g).numpy() - reference("glu", xn, gn)).max(),
  "swiglu": np.abs(swiglu(x, g).numpy() - reference("swiglu", xn, gn)).max(),
}
for k, v in errors.items(): print(f"{k:9s} max |lazynb - reference| = {v:.2e}")
assert all(v < 1e-5 for v in errors.values())

# %% [markdown]
# ## 3. The gradient of rms_norm, checked numerically
#
# The loss is a weighted sum of rms_norm's outputs, so every output counts differently. The autograd gradient
# is compared with central finite differences, and with PyTorch's when torch is there.

# %%
wn = rng.normal(size=xn.shape).astype(np.float32)
xt = Tensor(xn, requires_grad=True)
(rms_norm(xt) * Tensor(wn)).sum().backward()
auto = xt.grad.numpy()
def f(v): return (rms_norm(Tensor(v)) * Tensor(wn)).sum().item()
eps, fd = 1e-2, np.zeros_like(xn)
for i in range(xn.size):
  hi, lo = xn.copy(), xn.copy(); hi.flat[i] += eps; lo.flat[i] -= eps
  fd.flat[i] = (f(hi) - f(lo)) / (2 * eps)
print(f"max |autograd - finite differences| = {np.abs(auto - fd).max():.2e}")
assert np.allclose(auto, fd, atol=5e-3)
if torch is not None:
  tx = torch.tensor(xn, requires_grad=True)
  (F.rms_norm(tx, (xn.shape[-1],), eps=1e-6) * torch.tensor(wn)).sum().backward()
  print(f"max |autograd - torch| = {np.abs(auto - tx.grad.numpy()).max():.2e}")
  assert np.allclose(auto, tx.grad.numpy(), atol=1e-5)

# %% [markdown]
# ## 4. What do they compile to?
#
# gelu, glu and swiglu are purely elementwise: one kernel each. rms_norm has a mean in it, which every element
# then divides by: a reduce read through an expand, so two kernels, like Part 5's `x - x.mean()`.

# %%
%%tinygrad --debug 3 --show schedule,kernels
x4 = Tensor(xn).realize()   # a new buffer: rms_norm(x) and gelu(x) were computed above, and a computed result is reused
with Recorder(rewrites=False) as rec_rms: y_rms = rms_norm(x4).realize()
with Recorder(rewrites=False) as rec_gelu: y_gelu = gelu(x4).realize()

# %%
def programs(rec): return [e.data["program"] for e in rec.of("exec") if e.data["kind"] == "kernel"]
def value_alu_ops(prg):
  counts = {}
  for u in prg.uops:
    if u.op in GroupOp.ALU and u.dtype.scalar().name == "float": counts[u.op.name] = counts.get(u.op.name, 0) + 1
  return counts
for name, rec in (("rms_norm", rec_rms), ("gelu", rec_gelu)):
  for p in programs(rec): print(f"{name:9s} {p.name:10s} float ALU ops: {value_alu_ops(p)}")
assert len(programs(rec_rms)) == 2
assert len(programs(rec_gelu)) == 1
assert "EXP2" in value_alu_ops(programs(rec_gelu)[0])        # erf's exp(-x^2), as EXP2

# %% [markdown]
# ## 5. gelu one step at a time
#
# Now force every intermediate into memory, the way an eager framework without fusion would run it: five
# realizes, five kernels, against gelu's one. What does that cost in time?

# %%
def gelu_steps(x):
  t = (x * (1 / math.sqrt(2))).realize()
  t = t.erf().realize()
  t = (1 + t).realize()
  h = (x * 0.5).realize()
  return (h * t).realize()

# %%
%%tinygrad --show schedule,timing
xb = Tensor.randn(1 << 20).realize()
GlobalCounters.reset(); slow = gelu_steps(xb); k_steps = GlobalCounters.kernel_count
xc = Tensor.randn(1 << 20).realize()
GlobalCounters.reset(); fast = gelu(xc).realize(); k_fused = GlobalCounters.kernel_count

# %%
def best_time(fn, reps=3):
  ts = []
  for _ in range(reps):
    xi = Tensor.randn(1 << 20).realize()   # new inputs: a realized result is never recomputed
    st = time.perf_counter(); fn(xi).realize(); ts.append(time.perf_counter() - st)
  return min(ts)
t_steps, t_fused = best_time(gelu_steps), best_time(gelu)
print(f"step by step: {k_steps} kernels, {t_steps * 1e3:.1f} ms   all at once: {k_fused} kernel, {t_fused * 1e3:.1f} ms")
assert (k_steps, k_fused) == (5, 1)
assert np.abs(slow.numpy() - reference("gelu", xb.numpy())).max() < 1e-5
assert np.abs(fast.numpy() - reference("gelu", xc.numpy())).max() < 1e-5

# %% [markdown]
# ## Exercise: layer norm
#
# `rms_norm` divides by the root mean square. Layer norm first subtracts the mean of the last axis, then divides
# by `sqrt(variance + eps)` (the variance of the last axis, divided by n, not n-1). Write `layer_norm(x, eps)`
# without `Tensor.layernorm`; the check compares it with numpy on three shapes, on rows that are almost constant (where
# eps decides the result) and with an eps of its own.

# %%
# EXERCISE p06.layer_norm
def layer_norm(x, eps=1e-5):
  # YOUR CODE
  raise NotImplementedError

# %%
from lazynb.notebook.exercise import check
check("p06.layer_norm", layer_norm)
