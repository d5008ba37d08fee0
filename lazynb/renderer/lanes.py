"""Lanes: accumulators a SIMD register can hold together, found in the linearized UOps, so that the C renderer can write
a group as one GCC vector (`ClangRenderer.lane_vectors`, on for gcc). Why: docs/internals.md, "Lane vectors"."""
from __future__ import annotations
from dataclasses import dataclass
from lazynb.dtype import dtypes
from lazynb.uop.ops import UOp, Ops

@dataclass
class LaneGroup:
  accs: list[UOp]        # DEFINE_ACC of lanes 0..L-1
  assigns: list[UOp]     # their updates, in program order
  kinds: dict[UOp, bool]  # the loads of lane 0's update: True if lane l reads l elements further, False if the same one
  inside: set[UOp]       # the operations of all lanes' updates (written as the one vector statement, never alone)

def _offset(load: UOp) -> tuple[UOp | None, int]:
  """A load's index as (the index without its constant part, the constant)."""
  off = load.src[0].src[1]
  if off.op is Ops.CONST: return None, off.arg
  return (off.src[0], off.src[1].arg) if off.op is Ops.ADD and off.src[1].op is Ops.CONST else (off, 0)

def _plain_load(u: UOp) -> bool:
  """A float load from a kernel buffer, without a gate."""
  return u.op is Ops.LOAD and u.dtype is dtypes.float32 and len(u.src[0].src) == 2 and u.src[0].src[0].op is Ops.DEFINE_GLOBAL

def _lane(a: UOp, b: UOp, l: int, acc_a: UOp, acc_b: UOp, kinds: dict[UOp, bool], uses: dict[UOp, int]) -> bool:
  """Is expression b (of accumulator acc_b) lane l of expression a (of acc_a, lane 0)? kinds: lane-0 load -> shifted?"""
  if a is acc_a: return b is acc_b
  if _plain_load(a):
    if a is b: return kinds.setdefault(a, False) is False
    if not _plain_load(b) or a.src[0].src[0] is not b.src[0].src[0]: return False
    (base_a, c_a), (base_b, c_b) = _offset(a), _offset(b)
    return base_a is base_b and c_b == c_a + l and kinds.setdefault(a, True) is True
  if a is b: return a.dtype is dtypes.float32 and uses.get(a, 0) > 1  # the same value in every lane (so it is named)
  if a.op not in (Ops.ADD, Ops.MUL) or b.op is not a.op or a.dtype is not dtypes.float32: return False
  if uses.get(a, 0) != 1 or uses.get(b, 0) != 1: return False  # a value used twice is named; only inline expressions here
  return all(_lane(x, y, l, acc_a, acc_b, kinds, uses) for x, y in zip(a.src, b.src))

def _operations(x: UOp, out: set[UOp], uses: dict[UOp, int]):
  """The inline operations of an update (a value used more than once is named, and stays)."""
  if x.op in (Ops.ADD, Ops.MUL) and uses.get(x, 0) == 1:
    out.add(x)
    for s in x.src: _operations(s, out, uses)

def _group(assigns: list[UOp], width: int, uses: dict[UOp, int]) -> LaneGroup | None:
  """assigns[:width] as one lane group, if they are one."""
  first = assigns[0]
  acc0 = first.src[0]
  if len(assigns) < width or acc0.src[0].op is not Ops.CONST or acc0.src[0].arg != 0 or uses.get(first.src[1], 0) != 1: return None
  kinds: dict[UOp, bool] = {}
  for l, u in enumerate(assigns[1:width], start=1):
    acc = u.src[0]
    if acc.src != acc0.src or acc is acc0 or not _lane(first.src[1], u.src[1], l, acc0, acc, kinds, uses): return None
  if not any(kinds.values()): return None  # nothing read lane by lane: no vector loads to gain
  inside: set[UOp] = set()
  for u in assigns[:width]: _operations(u.src[1], inside, uses)
  return LaneGroup([u.src[0] for u in assigns[:width]], assigns[:width], kinds, inside | set(assigns[:width]))

def lane_groups(uops: list[UOp], widths: tuple[int, ...], uses: dict[UOp, int]) -> list[LaneGroup]:
  """Groups of accumulators (float, starting at 0) updated one after another with lane-shifted expressions: at each
  update, the widest group of `widths` that starts there."""
  assigns = [u for u in uops if u.op is Ops.ASSIGN and u.src[0].op is Ops.DEFINE_ACC and u.dtype is dtypes.float32]
  groups: list[LaneGroup] = []
  i = 0
  while i < len(assigns):
    g = next((g for w in widths if (g := _group(assigns[i:i + w], w, uses)) is not None), None)
    if g is not None: groups.append(g)
    i += len(g.accs) if g is not None else 1
  return groups
