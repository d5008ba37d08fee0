"""Layout rules a CPU-like device adds to the schedule stage: rewrites of the tensor graph, applied before kernels are cut,
that change where values sit in memory and never what is computed. Off the teaching path: the reference schedule stage
runs none of them under LAZYNB_PLAIN=1, and each has its own switch (MATMUL_PACK=0). A device declares its rules as
`Renderer.graph_rules`, (name, PatternMatcher) pairs; the rules get (the device's name, its renderer) as their context
and touch only that device's nodes.

Packing, as BLAS libraries do. In x @ w the kernel's register tile (rows x `p` columns of the output) walks down p
columns of w, one row of w at a time: p values, then a jump of a whole row. When w is big (a 1024x1024 float32 is 4 MB)
those jumps leave the caches and the page tables behind, and the matmul waits on memory: measured on one core, 41
GFLOPS at 1024 and 23 at 2048 against 73 and 64 with w packed (docs/benchmarks.md). So w is first copied (one more
kernel) into panels of p columns, each panel's rows one after another, and the product reads the panels in order.
Small matrices stay as they are (there the copy costs more than it saves), as does everything under NOOPT=1."""
from __future__ import annotations
from lazynb.dtype import dtypes
from lazynb.helpers import prod, MATMUL_PACK, NOOPT, PLAIN
from lazynb.uop.ops import UOp, UPat, Ops, PatternMatcher, new_unique

PACK_MIN_BYTES, PACK_MIN_ROWS = 4 << 20, 64

def _pack_matmul(ctx, r: UOp, x: UOp, w: UOp) -> UOp | None:
  """sum over k of x[..., 1->n, k] * w[1.., n, k] (Tensor.dot's form, either order) as the same sum over w's panels."""
  (dev, renderer), shape = ctx, r.src[0].shape
  p = renderer.matmul_panel if r.device == dev else 0
  if not p or r.arg != (Ops.ADD, (len(shape) - 1,)) or len(shape) < 3 or not all(isinstance(s, int) for s in shape): return None
  if not dtypes.is_float(r.dtype) or r.dtype != w.dtype: return None
  *lead, n, k = shape
  wk = w.src[0]  # (1, .., 1, n, k): w as dot reads it, the same for every row of x
  if x.src[0].shape[-2:] != (1, k) or wk.shape != (1,) * len(lead) + (n, k) or x.device != w.device: return None
  if n % p or k * n * w.dtype.itemsize < PACK_MIN_BYTES or prod(lead) < PACK_MIN_ROWS: return None
  panels = UOp(Ops.CONTIGUOUS, w.dtype, (wk.reshape((n // p, p, k)).permute((0, 2, 1)), new_unique()))  # (n/p, k, p), in order
  wp = panels.permute((0, 2, 1)).reshape((1,) * len(lead) + (n // p, p, k)).expand((*lead, n // p, p, k))
  xp = x.reshape((*lead, n // p, p, k))
  return UOp(Ops.REDUCE_AXIS, r.dtype, (xp * wp,), (Ops.ADD, (len(shape),))).reshape(r.shape)

def _operands(ctx, r: UOp, a: UOp, b: UOp) -> UOp | None:
  if MATMUL_PACK == 0 or NOOPT or PLAIN: return None
  return _pack_matmul(ctx, r, a, b) if a.src[0].shape[-2:-1] == (1,) else _pack_matmul(ctx, r, b, a)

pack_matmul = PatternMatcher([
  (UPat(Ops.REDUCE_AXIS, name="r", src=(UPat(Ops.MUL, src=(UPat(Ops.EXPAND, name="a"), UPat(Ops.EXPAND, name="b"))),)), _operands),
])
