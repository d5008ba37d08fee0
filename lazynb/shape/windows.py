"""Sliding windows as movement ops on a UOp: what pooling and convolution read, and the two products a convolution is
made of. The frontend (Tensor._pool, conv2d and its gradient) builds its graphs with these functions, and a device's
layout rule (renderer/layout.py) builds them again to recognize a convolution in the tensor graph: UOps are
hash-consed, so the graph conv2d wrote is the very object these functions return."""
from __future__ import annotations
from lazynb.helpers import ceildiv, unwrap
from lazynb.uop.ops import UOp
from lazynb.shape.sizes import ArgumentError

def pool(x: UOp, k_: tuple[int, ...], s_: tuple[int, ...], d_: tuple[int, ...]) -> UOp:
  """Windows over the last len(k_) dims: (..., *out, *k_). Each spatial dim is repeated, re-strided by a reshape that
  skips `d` elements per row (so row j starts j*d further on), then cut to the output positions and the stride."""
  nd, shape = len(k_), tuple(unwrap(x.shape))
  noop, i_ = shape[:-nd], shape[-nd:]
  o_ = tuple((i - d * (k - 1) - 1) // s + 1 for i, k, s, d in zip(i_, k_, s_, d_))
  if any(o <= 0 for o in o_): raise ArgumentError(f"kernel {k_} (dilation {d_}) is larger than the input {i_}")
  n, keep = len(noop), tuple((0, s) for s in noop)
  if s_ == k_ and d_ == (1,) * nd:  # windows that tile the input: a cut and a reshape (and their gradient a pad)
    w = x.shrink(keep + tuple((0, o * k) for o, k in zip(o_, k_))).reshape(noop + sum([(o, k) for o, k in zip(o_, k_)], ()))
    return w.permute(tuple(range(n)) + tuple(n + 2 * i for i in range(nd)) + tuple(n + 2 * i + 1 for i in range(nd)))
  L_ = tuple(i * max(1, ceildiv(o * s - d, i)) + d for i, o, s, d in zip(i_, o_, s_, d_))  # row length: = d (mod i)
  reps = (1,) * n + tuple(ceildiv(k * L, i) for k, L, i in zip(k_, L_, i_))  # repeat: a new axis before each, expanded
  w = x.reshape(sum([(1, s) for s in shape], ())).expand(sum([(r, s) for r, s in zip(reps, shape)], ()))
  w = w.reshape(tuple(r * s for r, s in zip(reps, shape)))
  w = w.shrink(keep + tuple((0, k * L) for k, L in zip(k_, L_))).reshape(noop + sum([(k, L) for k, L in zip(k_, L_)], ()))
  w = w.shrink(keep + sum([((0, k), (0, o * s)) for k, o, s in zip(k_, o_, s_)], ()))
  w = w.reshape(noop + sum([(k, o, s) for k, o, s in zip(k_, o_, s_)], ()))
  w = w.shrink(keep + sum([((0, k), (0, o), (0, 1)) for k, o in zip(k_, o_)], ())).reshape(noop + sum([(k, o) for k, o in zip(k_, o_)], ()))
  return w.permute(tuple(range(n)) + tuple(n + 2 * i + 1 for i in range(nd)) + tuple(n + 2 * i for i in range(nd)))

def conv_operands(x: UOp, w: UOp, groups: int, s_: tuple[int, ...], d_: tuple[int, ...]) -> tuple[UOp, UOp]:
  """What conv2d multiplies, both (bs, groups, cout/groups, *out, cin, *k): the input's windows and the weights. The
  output is their product summed over the last 1 + len(k) axes."""
  (bs, _), (cout, cin), k_ = unwrap(x.shape)[:2], unwrap(w.shape)[:2], tuple(unwrap(w.shape)[2:])
  nd, rc = len(k_), cout // groups
  win = pool(x, k_, s_, d_)
  o_ = tuple(unwrap(win.shape)[2:2 + nd])
  win = win.reshape((bs, groups, cin, 1, *o_, *k_)).expand((bs, groups, cin, rc, *o_, *k_))
  win = win.permute((0, 1, 3, *[4 + i for i in range(nd)], 2, *[4 + nd + i for i in range(nd)]))
  return win, w.reshape((1, groups, rc, *[1] * nd, cin, *k_)).expand(tuple(unwrap(win.shape)))

def weight_grad_operands(xp: UOp, g: UOp, groups: int, k_: tuple[int, ...], s_: tuple[int, ...], d_: tuple[int, ...]) -> tuple[UOp, UOp]:
  """What conv2d's weight gradient multiplies, both (bs, groups, cout/groups, cin, *out, *k): the padded input's windows
  and the output gradient. The gradient is their product summed over the batch and the output positions."""
  nd, bs, cout = len(k_), unwrap(xp.shape)[0], unwrap(g.shape)[1]
  cin, o_ = unwrap(xp.shape)[1] // groups, tuple(unwrap(g.shape)[2:])
  full = (bs, groups, cout // groups, cin, *o_, *k_)
  win = pool(xp, k_, s_, d_).reshape((bs, groups, 1, cin, *o_, *k_)).expand(full)
  return win, g.reshape((bs, groups, cout // groups, 1, *o_, *[1] * nd)).expand(full)
