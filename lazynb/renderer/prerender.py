"""The rewrites every renderer shares: the numeric rules a kernel follows on any device, stated once as UOps, so that a
renderer (C, OpenCL, CUDA, LLVM IR) only prints ops. The render stage runs them first (`prepare`), on the kernel's
linearized list:

  MAX          NaN-propagating on floats, WHERE(a!=a, a, WHERE(b<a, a, b)); WHERE(b<a, a, b) on ints
  float -> int as x86 casts (numpy, torch, tinygrad there): what a signed int can't hold (NaN, inf, past the range) is its
               smallest value (C and LLVM leave it undefined; constant folding, cast_scalar, agrees)
  16-bit float a type the device computes in float32 (bfloat16 everywhere; float16 where the C compiler has no
               _Float16) stays 16 bits in memory; each operation on it is done in float32 and rounded back:
               ADD(a, b) -> CAST(ADD(CAST(a, float), CAST(b, float)), bfloat16), and casts go through float32
  unrolled sum acc + (((t0+t1)+t2)+t3) is added in loop order, (((acc+t0)+t1)+t2)+t3: each product then fuses into a
               multiply-add with the accumulator
  wide index   index math is 32-bit unless one index can leave that range; then it is 64-bit, and the int arguments
               (variables, thread ids) are widened where they are read: CAST(n, index)

Why on the list, not the graph, and how it is rewritten: docs/architecture.md, "Every stage a visible rewrite"."""
from __future__ import annotations
import collections
from dataclasses import dataclass
from lazynb.dtype import DType, dtypes
from lazynb.uop.ops import UOp, Ops, GroupOp, UPat, PatternMatcher, smax

def needs_wide_index(uops: list[UOp]) -> bool:
  """Does some index of this kernel leave the 32-bit range? A loop variable counts up to its bound (the `i < n` test
  sees n itself), so a bound of 2**31 needs 64 bits too."""
  return any(u.dtype is dtypes.index and (u.vmin < -2**31 or u.vmax > 2**31 - 1) or u.op is Ops.RANGE and (smax(u.arg[1]) > 2**31 - 1
             or u.dtype is dtypes.int64) for u in uops)  # (loops typed int64 already: codegen.full_rewrite's list, rendered)

@dataclass
class Linear:
  """A kernel ready to print: its list with the shared rules applied, and what a renderer's walker needs to know."""
  uops: list[UOp]        # the linearized list, each entry rewritten (two entries the rules made equal: listed once)
  pos: dict[UOp, int]    # every node (listed, or built by a rule) -> the position in the original list it came from
  built: set[UOp]        # nodes a rule built: not listed, computed where they are read
  uses: dict[UOp, int]   # how often each value is read (a built node passes each of its reads on to its sources)
  index: DType           # dtypes.int32 or dtypes.int64: the type index math is written in
  emulated: frozenset    # the 16-bit float types computed in float32

class _Rules:
  """What the rules read: the renderer's choices for this kernel."""
  def __init__(self, emulated: frozenset, wide: bool, int_ids: str, uses: dict[UOp, int]):
    self.emulated, self.wide, self.int_ids, self.uses = emulated, wide, int_ids, uses
    self.saturated: set[UOp] = set()  # float->int casts already guarded (the guarded cast is the same node)

def _max(m: UOp, a: UOp, b: UOp) -> UOp:
  """MAX as selects: NaN from either side wins (a NaN b fails b<a), as numpy's maximum."""
  if not dtypes.is_float(m.dtype): return (b < a).where(a, b)
  # one select per compare, which gcc makes blends (see ClangRenderer); 16-bit floats: an OR of the compares instead
  # (gcc 12 writes a blend of _Float16 as a masked vmovsh, which its assembler rejects)
  return ((b < a) | a.ne(a)).where(a, b) if m.dtype.itemsize == 2 else a.ne(a).where(a, (b < a).where(a, b))

def _float_to_int(ctx: _Rules, c: UOp, x: UOp) -> UOp | None:
  """float -> int as x86 CPUs cast (numpy and torch there): a float a 32- or 64-bit signed int cannot hold (NaN, inf,
  past its range) becomes the int's smallest value; an unsigned one of that width is cast through the signed one (from
  2**(n-1) up: x - 2**(n-1), its top bit set again), uint32 from a float16 through int64; 8 and 16 bits through int32,
  whose low bits wrap (-1.5 -> uint8 255)."""
  if c in ctx.saturated or not dtypes.is_float(x.dtype) or not dtypes.is_int(c.dtype): return None
  if c.dtype.itemsize < 4: return x.cast(dtypes.int32).cast(c.dtype)
  if c.dtype is dtypes.uint32 and x.dtype is dtypes.float16: return x.cast(dtypes.int64).cast(c.dtype)  # (numpy, torch)
  if dtypes.is_unsigned(c.dtype):
    s = dtypes.int32 if c.dtype.itemsize == 4 else dtypes.int64
    top = UOp.const(x.dtype, float(2 ** (8 * s.itemsize - 1)))  # a power of two: exact (inf in a 16-bit float: still right)
    return (x >= top).where((x - top).cast(s) ^ UOp.const(s, dtypes.min(s)), x.cast(s)).cast(c.dtype)  # NaN: x.cast(s)
  ctx.saturated.add(c)  # the cast inside the guard is c itself: it must not be guarded again
  lo, hi = dtypes.min(c.dtype), dtypes.max(c.dtype)
  # hi+1 is a power of two (exact, or inf in a 16-bit float); lo-1 may round to lo, whose answer is lo either way
  inside = (x < UOp.const(x.dtype, float(hi + 1))) & (UOp.const(x.dtype, float(lo - 1)) < x)  # NaN fails both
  return inside.where(c, UOp.const(c.dtype, lo))

_EXACT = {Ops.NEG, Ops.WHERE, Ops.TRUNC, Ops.MAX}  # their result is one of their inputs, or exact: nothing to round
def _in_float32(ctx: _Rules, x: UOp) -> UOp | None:
  if x.dtype not in ctx.emulated or x.op in _EXACT: return None
  return UOp(x.op, dtypes.float32, tuple(s.cast(dtypes.float32) if s.dtype is x.dtype else s for s in x.src)).cast(x.dtype)

def _cast_via_float32(ctx: _Rules, c: UOp, x: UOp) -> UOp | None:
  """A cast to or from an emulated type goes through float32 (where its values live)."""
  if x.dtype is dtypes.float32 or c.dtype is dtypes.float32 or (c.dtype not in ctx.emulated and x.dtype not in ctx.emulated): return None
  if c.dtype is dtypes.uint32 and x.dtype is dtypes.float16: return x.cast(dtypes.float32).cast(dtypes.int64).cast(c.dtype)  # (as above)
  return x.cast(dtypes.float32).cast(c.dtype)

def _in_loop_order(ctx: _Rules, a: UOp, acc: UOp, v: UOp) -> UOp | None:
  """ASSIGN(acc, acc + (((t0+t1)+t2)+t3)) -> ASSIGN(acc, (((acc+t0)+t1)+t2)+t3), for a chain of ADDs that exists only
  for this update (each read once); the order the plain loop adds in, so each product becomes one multiply-add."""
  if not dtypes.is_float(a.dtype) or ctx.uses.get(v, 0) != 1: return None
  terms, x = [], v.src[1]
  while x.op is Ops.ADD and ctx.uses.get(x, 0) == 1:
    terms.append(x.src[1])
    x = x.src[0]
  if not terms: return None
  for t in [x] + terms[::-1]: acc = UOp(Ops.ADD, a.dtype, (acc, t))
  return a.replace(src=(a.src[0], acc))

def _widen(ctx: _Rules, u: UOp) -> UOp | None:
  """In a wide kernel, an int argument (a variable, or an id the kernel receives) is widened where it is read."""
  return None if not ctx.wide or u.op is Ops.SPECIAL and u.arg[0][0] not in ctx.int_ids else u.replace(dtype=dtypes.int32).cast(dtypes.index)

numeric = PatternMatcher([
  (UPat(Ops.MAX, name="m", src=(UPat.var("a"), UPat.var("b"))), _max),
  (UPat(Ops.CAST, name="c", src=(UPat.var("x"),)), _float_to_int),
  (UPat(Ops.ASSIGN, name="a", src=(UPat.var("acc"), UPat(Ops.ADD, name="v", src=(UPat.var("acc"), UPat(Ops.ADD))))), _in_loop_order)])
in_float32 = PatternMatcher([
  (UPat(Ops.CAST, name="c", src=(UPat.var("x"),)), _cast_via_float32),
  (UPat(GroupOp.ALU, name="x"), _in_float32)])
wide_args = PatternMatcher([(UPat((Ops.DEFINE_VAR, Ops.SPECIAL), dtype=dtypes.index, name="u"), _widen)])
# a kernel gets the rules it needs (fewer rules to try, faster):
_MATCHERS = {(e, w): PatternMatcher((in_float32.patterns if e else []) + numeric.patterns + (wide_args.patterns if w else []))
             for e in (False, True) for w in (False, True)}

def prepare(uops: list[UOp], emulated: frozenset = frozenset(), int_ids: str = "t") -> Linear:
  """The shared rules applied to a kernel's list. emulated: the 16-bit float types to compute in float32; int_ids: the
  kinds of SPECIAL the kernel receives as int arguments ("t" thread ids; "g" global ids when a runtime loops over them)."""
  wide = needs_wide_index(uops)
  uses = collections.Counter(s for u in uops for s in u.src)  # how many entries read each
  pm, ctx, index = _MATCHERS[bool(emulated), wide], _Rules(emulated, wide, int_ids, uses), dtypes.int64 if wide else dtypes.int32
  # the list rewritten in order: each entry's sources are earlier entries, already done (the linear form of graph_rewrite)
  done: dict[UOp, UOp] = {}
  order: list[UOp] = []       # every node of the result, each after its sources
  pos: dict[UOp, int] = {}    # a node a rule built belongs to the first entry that reads it
  applied: list[UOp] = []     # the nodes a rule rewrote
  def settle(u: UOp, src: tuple, i: int) -> UOp:
    """u on its rewritten sources, rewritten until no rule matches (a rule's result in turn)."""
    n = u if src == u.src else u.replace(src=src)
    if (r := pm.rewrite_with_pattern(n, ctx) if pm.by_op[n.op] else None) is not None:
      applied.append(n)
      out = rw(r[0], i)
    elif (out := n) not in pos:
      pos[n] = i
      order.append(n)
    done[u] = out
    return out
  def rw(u: UOp, i: int) -> UOp: return d if (d := done.get(u)) is not None else settle(u, tuple(rw(s, i) for s in u.src), i)
  # (an entry's sources are done: they come before it, but for the loops an accumulator names, which no rule changes)
  entries = [settle(u, tuple([done.get(s, s) for s in u.src]), i) for i, u in enumerate(uops)]
  if not applied: return Linear(list(uops), {u: i for i, u in enumerate(uops)}, set(), uses, index, emulated)  # no rule applied
  # a widened argument is listed as itself (the kernel receives it); the cast that widens it is computed where it is read
  entries = [e.src[0] if u.op in (Ops.DEFINE_VAR, Ops.SPECIAL) and e.op is Ops.CAST else e for u, e in zip(uops, entries)]
  listed = list(dict.fromkeys(entries))
  for i, e in reversed(list(enumerate(entries))): pos[e] = i
  built = set(order) - set(listed)
  # reads, counted from the end: a value nothing reads any more (the old chain of a reordered sum) is dropped
  new_uses: dict[UOp, int] = {}
  for u in reversed(order):
    n = new_uses.get(u, 0)
    reads = n if u in built else min(n, 1) if u.op in _PURE else 1  # (a built node is computed at each of its reads)
    for s in u.src: new_uses[s] = new_uses.get(s, 0) + reads
  listed = [u for u in listed if u.op not in _PURE or new_uses.get(u, 0) > 0]
  return Linear(listed, pos, built, new_uses, index, emulated)
_PURE = GroupOp.ALU | {Ops.CAST, Ops.BITCAST, Ops.CONST, Ops.INDEX}
