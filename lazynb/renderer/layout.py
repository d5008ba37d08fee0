"""Layout rules a CPU-like device adds to the schedule stage (`Renderer.graph_rules`): rewrites of the tensor graph that
change where values sit in memory, never what is computed. The packed matmul (MATMUL_PACK=0 turns it off) and
convolutions and their weight gradient along rows (CONV_ROWS=0); LAZYNB_PLAIN=1 runs neither. Why and how, with the
measurements: docs/internals.md, "The CPU's layout rules"."""
from __future__ import annotations
from lazynb.dtype import dtypes
from lazynb.helpers import unwrap, prod, CONV_ROWS, MATMUL_PACK, NOOPT, PLAIN
from lazynb.shape import windows
from lazynb.uop.ops import UOp, UPat, Ops, PatternMatcher, GroupOp, new_unique

PACK_MIN_BYTES, PACK_MIN_ROWS = 4 << 20, 64

def _copy(x: UOp) -> UOp:
  """x written out to memory of its own (Tensor.contiguous): a new UNIQUE keeps two copies of one value apart."""
  return UOp(Ops.CONTIGUOUS, x.dtype, (x, new_unique()))

def _pack_matmul(ctx, r: UOp, x: UOp, w: UOp) -> UOp | None:
  """sum over k of x[..., 1->n, k] * w[1.., n, k] (Tensor.dot's form, either order) as the same sum over w's panels."""
  (dev, renderer), shape = ctx, unwrap(r.src[0].shape)
  p = renderer.matmul_panel if r.device == dev else 0
  if not p or r.arg != (Ops.ADD, (len(shape) - 1,)) or len(shape) < 3 or not all(isinstance(s, int) for s in shape): return None
  if not dtypes.is_float(r.dtype) or r.dtype != w.dtype: return None
  *lead, n, k = shape
  wk = w.src[0]  # (1, .., 1, n, k): w as dot reads it, the same for every row of x
  if x.src[0].shape[-2:] != (1, k) or unwrap(wk.shape) != (1,) * len(lead) + (n, k) or x.device != w.device: return None
  if n % p or k * n * w.dtype.itemsize < PACK_MIN_BYTES or prod(lead) < PACK_MIN_ROWS: return None
  panels = _copy(wk.reshape((n // p, p, k)).permute((0, 2, 1)))  # (n/p, k, p), in order
  wp = panels.permute((0, 2, 1)).reshape((1,) * len(lead) + (n // p, p, k)).expand((*lead, n // p, p, k))
  xp = x.reshape((*lead, n // p, p, k))
  return UOp(Ops.REDUCE_AXIS, r.dtype, (xp * wp,), (Ops.ADD, (len(shape),))).reshape(unwrap(r.shape))

def _operands(ctx, r: UOp, a: UOp, b: UOp) -> UOp | None:
  if MATMUL_PACK == 0 or NOOPT or PLAIN: return None
  return _pack_matmul(ctx, r, a, b) if a.src[0].shape[-2:-1] == (1,) else _pack_matmul(ctx, r, b, a)

pack_matmul = PatternMatcher([
  (UPat(Ops.REDUCE_AXIS, name="r", src=(UPat(Ops.MUL, src=(UPat(Ops.EXPAND, name="a"), UPat(Ops.EXPAND, name="b"))),)), _operands)])

# ---------------------------------------------------------------- convolutions along rows
ROWS_MIN_MACS = 1 << 22

def use_rows(xshape: tuple, k_: tuple, cout: int) -> bool:
  """Lay a stride-1, undilated 2-D conv along whole input rows? At most a quarter of each row wasted on windows that
  wrap, and big enough (ROWS_MIN_MACS multiply-adds) for the kernel's speed to matter: the rows layout costs kernels
  (the input is written out first, and the output is shrunk, so a following ReLU cannot join the conv's kernel)."""
  if len(k_) != 2 or not 1 < k_[1] or 4 * (k_[1] - 1) > xshape[3]: return False
  return xshape[0] * cout * xshape[1] * xshape[2] * xshape[3] * k_[0] * k_[1] >= ROWS_MIN_MACS

def batch_chunk(bs: int) -> int:
  """How many images one pass of a weight-gradient kernel sums before it writes partial sums: the biggest divisor of
  the batch from 32 down to 8 (the whole batch when none is)."""
  return next((d for d in range(32, 7, -1) if bs % d == 0), bs)

def row_windows(x: UOp, k_: tuple[int, int]) -> UOp:
  """(b, c, oy*W, ky, kx): position p = oy*W + ox reads the flat input (a copy with a spare zero row) at p + ky*W + kx."""
  (b, c, H, W), (ky, kx) = unwrap(x.shape), k_
  oy = H - ky + 1
  flat = _copy(x.pad(((0, 0), (0, 0), (0, 1), (0, 0)))).reshape((b, c, (H + 1) * W))
  win = windows.pool(flat, (ky * W,), (1,), (1,))  # (b, c, ..., ky*W): the flat input at p + j
  win = win.shrink(((0, b), (0, c), (0, oy * W), (0, ky * W))).reshape((b, c, oy * W, ky, W))
  return win.shrink(((0, b), (0, c), (0, oy * W), (0, ky), (0, kx)))

def _sum(x: UOp, axes: tuple[int, ...]) -> UOp: return x.r(Ops.ADD, axes).reshape(tuple(s for i, s in enumerate(unwrap(x.shape)) if i not in axes))

def _summed(shape: tuple, axes: tuple) -> tuple:
  """The axes a REDUCE_AXIS over `axes` names (UOp.r leaves out the axes of size 1)."""
  return tuple(a for a in axes if shape[a] != 1)

def _down_to(u: UOp, shape: tuple) -> UOp | None:
  """The first node down u's chain of movement ops with this shape (where conv2d's windows or weights started)."""
  while True:
    if tuple(unwrap(u.shape)) == shape: return u
    if u.op not in GroupOp.Movement: return None
    u = u.src[0]

def _conv_rows(ctx, r: UOp, a: UOp, b: UOp) -> UOp | None:
  """conv2d's sum of windows * weights, (bs, G, rc, oy, ox, cin, ky, kx) over the last three, as a sum along rows."""
  shape = unwrap(r.src[0].shape)
  if len(shape) != 8 or not all(isinstance(v, int) for v in shape) or r.arg[1] != _summed(shape, (5, 6, 7)): return None
  bs, G, rc, oy, ox, cin, ky, kx = shape
  x, w = _down_to(a, (bs, G * cin, oy + ky - 1, ox + kx - 1)), _down_to(b, (G * rc, cin, ky, kx))
  if x is None or w is None or not use_rows(unwrap(x.shape), (ky, kx), G * rc): return None
  if windows.conv_operands(x, w, G, (1, 1), (1, 1)) != (a, b): return None  # not conv2d's graph (UOps are hash-consed)
  W, P = unwrap(x.shape)[3], oy * unwrap(x.shape)[3]
  win = row_windows(x, (ky, kx)).reshape((bs, G, cin, 1, P, ky, kx)).expand((bs, G, cin, rc, P, ky, kx)).permute((0, 1, 3, 4, 2, 5, 6))
  out = (win * w.reshape((1, G, rc, 1, cin, ky, kx)).expand(tuple(unwrap(win.shape)))).r(Ops.ADD, (4, 5, 6))
  return out.reshape((bs, G, rc, oy, W, 1, 1, 1)).shrink(((0, bs), (0, G), (0, rc), (0, oy), (0, ox), (0, 1), (0, 1), (0, 1)))

def _weight_grad_rows(ctx, r: UOp, a: UOp, b: UOp) -> UOp | None:
  """conv2d's weight gradient along rows: dw[co, ci, ky, kx] = sum over b and p of g[b, co, p] * x[b, ci, p + ky*W + kx],
  p split into `lanes` partial sums and the batch into chunks (docs/internals.md, "The CPU's layout rules")."""
  shape = unwrap(r.src[0].shape)
  if len(shape) != 8 or not all(isinstance(v, int) for v in shape) or r.arg[1] != _summed(shape, (0, 4, 5)): return None
  bs, G, rc, cin, oy, ox, ky, kx = shape
  xp, g = _down_to(a, (bs, G * cin, oy + ky - 1, ox + kx - 1)), _down_to(b, (bs, G * rc, oy, ox))
  if xp is None or g is None or not use_rows(unwrap(xp.shape), (ky, kx), G * rc) or (oy * unwrap(xp.shape)[3]) % 8: return None
  if windows.weight_grad_operands(xp, g, G, (ky, kx), (1, 1), (1, 1)) != (a, b): return None
  W, P = unwrap(xp.shape)[3], oy * unwrap(xp.shape)[3]
  sub, lanes = batch_chunk(bs), 16 if getattr(ctx[1], "simd_floats", 0) >= 16 and P % 16 == 0 else 8
  full = (bs // sub, sub, G, rc, cin, P // lanes, lanes, ky, kx)
  gw = _copy(g.pad(((0, 0), (0, 0), (0, 0), (0, W - ox)))).reshape((bs // sub, sub, G, rc, 1, P // lanes, lanes, 1, 1)).expand(full)
  win = row_windows(xp, (ky, kx)).reshape((bs // sub, sub, G, 1, cin, P // lanes, lanes, ky, kx)).expand(full)
  part = _sum((win * gw).permute((0, 2, 3, 4, 7, 8, 6, 1, 5)), (7, 8))  # (chunks, G, rc, cin, ky, kx, lanes)
  return _sum(part, (0, 6)).reshape(unwrap(r.shape))

def _conv(ctx, r: UOp, a: UOp, b: UOp) -> UOp | None:
  if PLAIN or not CONV_ROWS or r.arg[0] is not Ops.ADD or r.device != ctx[0] or not dtypes.is_float(r.dtype) or not r.dtype == a.dtype == b.dtype: return None
  return _conv_rows(ctx, r, a, b) or _weight_grad_rows(ctx, r, a, b)

conv_rows = PatternMatcher([(UPat(Ops.REDUCE_AXIS, name="r", src=(UPat(Ops.MUL, src=(UPat(name="a"), UPat(name="b"))),)), _conv)])
