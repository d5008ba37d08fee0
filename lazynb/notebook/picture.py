"""A ShapeTracker as a picture, in data: for a grid of logical cells (two dims of the shape, the others held at one
index), the memory index each cell reads, or None where a mask says it reads nothing (padding).

The numbers come from the views' own index expressions (View.to_indexed_uops, ShapeTracker.to_indexed_uops),
evaluated per cell. For a stack of views every cell also records its steps: the index into the top view, the flat
position that view computes, that position unflattened into the view below, and so on down to memory. The result
is plain JSON-ready data; the notebook layer and the JupyterLab renderer draw it.
"""
from __future__ import annotations
from typing import Any
from lazynb.dtype import dtypes
from lazynb.shape.shapetracker import ShapeTracker
from lazynb.shape.view import View
from lazynb.uop.ops import UOp, Ops, exec_alu

GRID_CAP = 16    # cells drawn per grid dim
MEM_CAP = 64     # memory cells drawn

def _evaluate(u: UOp, env: dict[str, int]) -> int | bool:
  """The value of an index expression with every SPECIAL set from env (by name)."""
  vals: dict[UOp, int | bool] = {}
  for n in u.toposort():
    if n.op is Ops.CONST: vals[n] = n.arg
    elif n.op is Ops.SPECIAL: vals[n] = env[n.arg[0]]
    else: vals[n] = exec_alu(n.op, n.dtype, tuple(vals[s] for s in n.src))
  return vals[u]

def _dim_vars(prefix: str, shape: tuple[int, ...]) -> list[UOp]:
  return [UOp(Ops.SPECIAL, dtypes.index, (), (f"{prefix}{d}", s)) for d, s in enumerate(shape)]

def _unflatten(flat: int, shape: tuple[int, ...]) -> list[int]:
  """The same unflattening as a stacked ShapeTracker's index math: (flat // inner) % size per dim."""
  out, acc = [], 1
  for s in reversed(shape):
    out.append((flat // acc) % s if s != 1 else 0)
    acc *= s
  return list(reversed(out))

def _read_range(v: View) -> tuple[int, int] | None:
  """(lowest, highest) memory index the bottom view reads over its whole valid box, None if it reads nothing."""
  box = v.mask or tuple((0, s) for s in v.shape)
  if any(lo >= hi for lo, hi in box): return None
  lo = v.offset + sum(min(st * a, st * (b - 1)) for st, (a, b) in zip(v.strides, box))
  hi = v.offset + sum(max(st * a, st * (b - 1)) for st, (a, b) in zip(v.strides, box))
  return lo, hi

def _view_json(v: View) -> dict:
  return {"shape": list(v.shape), "strides": list(v.strides), "offset": v.offset,
          "mask": [list(m) for m in v.mask] if v.mask else None, "contiguous": v.contiguous}

def _grid_dims(shape: tuple[int, ...], dims) -> tuple[int | None, int | None]:
  nd = len(shape)
  if dims is None:
    big = [d for d, s in enumerate(shape) if s > 1]
    if len(big) >= 2: return big[-2], big[-1]
    if len(big) == 1: return None, big[0]
    return (nd - 2 if nd >= 2 else None), (nd - 1 if nd else None)
  dims = tuple(dims)
  if len(dims) != 2 or (dims[0] is not None and dims[0] == dims[1]):
    raise ValueError(f"dims={dims!r}: give two different dims (rows, cols); None for a single row")
  for d in dims:
    if d is not None and not (isinstance(d, int) and -nd <= d < nd): raise ValueError(f"dim {d!r} is not a dim of shape {shape}")
  r, c = (d % nd if d is not None else None for d in dims)
  if c is None: raise ValueError("dims: the column dim cannot be None")
  return r, c

def picture(st: ShapeTracker | View, dims=None, at=None, cap: int = GRID_CAP, mem_size: int | None = None,
            mem_cap: int = MEM_CAP) -> dict:
  """The picture of `st` as data. dims: (row dim, col dim) of the grid (default: the last two dims larger than 1);
  at: the index held for the other dims (default 0); cap: cells drawn per grid dim; mem_size: the buffer's size
  (default: enough for everything the views read)."""
  if isinstance(st, View): st = ShapeTracker((st,))
  if not isinstance(st, ShapeTracker): raise TypeError(f"picture() takes a ShapeTracker or a View, not {type(st).__name__}")
  if st.vars(): raise ValueError("this ShapeTracker has symbolic sizes (variables): bind them to numbers to draw it")
  shape, nd = st.shape, len(st.shape)
  r, c = _grid_dims(shape, dims)
  at = [0] * nd if at is None else list(at)
  if len(at) != nd or any(not isinstance(a, int) or not 0 <= a < max(s, 1) for a, s in zip(at, shape)):
    raise ValueError(f"at={at!r}: give one index per dim of shape {shape}, each within its dim")
  rows = min(shape[r], cap) if r is not None else 1
  cols = min(shape[c], cap) if c is not None else 1
  if 0 in shape: rows = cols = 0  # no cells at all
  # the index expressions: the whole stack (to memory), and each view on its own
  full_idx, full_valid = st.to_indexed_uops(_dim_vars("i", shape))
  per_view = [v.to_indexed_uops(_dim_vars("i", v.shape)) for v in st.views]
  cells: list[list[dict[str, Any]]] = []
  for y in range(rows):
    row = []
    for x in range(cols):
      idx = list(at)
      if r is not None: idx[r] = y
      if c is not None: idx[c] = x
      mem = _evaluate(full_idx, {f"i{d}": i for d, i in enumerate(idx)}) if _evaluate(full_valid, {f"i{d}": i for d, i in enumerate(idx)}) else None
      steps, cur = [], idx
      for k in reversed(range(len(st.views))):
        env = {f"i{d}": i for d, i in enumerate(cur)}
        out, ok = _evaluate(per_view[k][0], env), bool(_evaluate(per_view[k][1], env))
        steps.append({"view": k, "idx": cur, "out": out, "valid": ok})
        if k: cur = _unflatten(out, st.views[k - 1].shape)
      if all(s["valid"] for s in steps) != (mem is not None) or (mem is not None and steps[-1]["out"] != mem):
        raise RuntimeError(f"lazynb bug: the views of {st} disagree with their stack at index {idx}")
      row.append({"idx": idx, "mem": mem, "steps": steps})
    cells.append(row)
  # the memory row: the buffer, or the window of it around what the drawn cells read
  rng = _read_range(st.views[0])
  size = mem_size if mem_size is not None else (rng[1] + 1 if rng else 0)  # without the buffer: as far as the views read
  read = [cl["mem"] for row in cells for cl in row if cl["mem"] is not None]
  start = 0 if size <= mem_cap or not read else max(0, min(min(read), size - mem_cap))
  idx_s, valid_s = st.render()
  return {"shape": list(shape), "dims": [r, c], "at": at, "rows": rows, "cols": cols,
          "total_rows": shape[r] if r is not None else 1, "total_cols": shape[c] if c is not None else 1,
          "views": [_view_json(v) for v in st.views], "index": idx_s, "valid": valid_s,
          "mem_size": size, "mem_start": start, "mem_end": min(size, start + mem_cap), "cells": cells}
