"""The scheduler: cut the lazy graph into kernels.

Each kernel is cut by a rewrite pass (`cut_kernel`, reported to the trace in the "kernels" stage): from the tensor
being realized down, everything elementwise is fused into the kernel that consumes it, and movement ops are folded
into the ShapeTracker of each load. A node becomes its own kernel (its result is stored to a buffer, and later
kernels load it) when:

  realize   it is a tensor being realized, or marked .contiguous()
  copy      it crosses devices (COPY)
  reduce    it is a reduce that cannot join the kernel: the kernel has one already, or the reduce's result
            is read through a view (expand, permute, pad ...) or by more than one consumer (or the
            elementwise ops above such a reduce, each read once: chase_reduces)
  pad       a padded (masked) view would be pushed through an op where f(0) != 0 (exp, log, 1/x, //, %)

Before that, `fold_consts` rewrites the tensor graph (the "tensor graph" stage): a tensor made of constants only
(`Tensor.ones(3, 4) * 2 + 1`) becomes a constant and needs no kernel (what folds: docs/fusion.md, "Fusion").

A kernel's AST is SINK(STORE(DEFINE_GLOBAL(0), VIEW(st), value)), where value is a tree of ALU ops,
LOAD(DEFINE_GLOBAL(i), VIEW(st)), CONST and at most one REDUCE_AXIS (tinygrad's DONT_GROUP_REDUCES=1: several over the same loops)."""
from __future__ import annotations
import contextlib, contextvars
from dataclasses import dataclass, field
from typing import Callable, Iterator
from lazynb import trace, pipeline
from lazynb.device import Buffer, Device
from lazynb.dtype import dtypes
from lazynb.helpers import postorder, prod, dedup, unwrap, SPLIT_REDUCEOP, DONT_GROUP_REDUCES, DONT_REALIZE_EXPAND
from lazynb.uop.ops import UOp, UPat, Ops, GroupOp, PatternMatcher, new_unique, graph_rewrite, exec_alu, smax, unbind, variables, in_stage, sym_eq, sym_ge, is_contiguous_view_of_buffer
from lazynb.shape.shapetracker import ShapeTracker
from lazynb.runstate import state
from lazynb.pipeline import implements

class StaleReadError(RuntimeError):
  """A lazy value reads memory that an assign has overwritten since the value was defined."""

def newest(b: UOp) -> UOp:
  while b in state.superseded: b = state.superseded[b]
  return b

def check_fresh(b: UOp):
  if b in state.superseded:
    raise StaleReadError(f"this value reads a buffer ({b.arg} x {b.dtype}) that an assign() has overwritten since the value was "
                         "defined; realize the value before the assign (or build it again from the tensor after the assign)")

@dataclass
class ScheduleItem:
  ast: UOp                      # SINK(STORE ...) for a kernel, COPY for a copy
  bufs: tuple[Buffer, ...]      # output first, then inputs in DEFINE_GLOBAL order
  kind: str = "kernel"          # "kernel" or "copy"
  reason: str = "realize"       # why this node got its own kernel (see the module doc)
  out: UOp | None = None        # the graph node this item computes
  buf_uops: tuple[UOp, ...] = field(default_factory=tuple)
  view_origins: dict = field(default_factory=dict)  # VIEW uop -> movement ops (name, arg) that produced it
  var_vals: dict = field(default_factory=dict)      # variable name -> its bound value in this run (symbolic sizes)
  done: bool = False            # it has run (Tensor.schedule's tensors run only the items not done when they are read)
  metadata: tuple = ()          # the Tensor methods whose nodes it computes (helpers.Metadata), as tinygrad 0.10's
  then: Callable | None = None  # called after it ran (Tensor.schedule's items: when the last has run, their values are known)
  def __repr__(self): return f"ScheduleItem({self.kind}, reason={self.reason!r}, bufs={list(self.bufs)})"

def new_buffer(device: str, size: int, dtype) -> UOp:
  u = UOp(Ops.BUFFER, dtype, (new_unique(), UOp(Ops.DEVICE, dtypes.void, (), device)), size)
  state.buffers[u] = Buffer(device, size, dtype)
  return u
# tinygrad 0.10 spells it UOp.new_buffer (docs/abstractions2.py); the ir layer below cannot make Buffers, so it is attached here
UOp.new_buffer = staticmethod(new_buffer)  # type: ignore[attr-defined]

def lookup_realized(sink: UOp) -> tuple[UOp, dict[UOp, UOp]]:
  """Replace every node that already has a buffer by a view of that buffer; also return old node -> new."""
  memo, found = dict[UOp, UOp](), {n: r for n in sink.toposort() if (r := state.realized.get(n)) is not None}
  for n, r in found.items():  # (a value kernelize() decided, realized since: its ASSIGN has a buffer now)
    while (r2 := state.realized.get(r)) is not None and r2 is not r: found[n] = r = r2
  return sink.substitute(found, memo), memo


def is_reshape_chain(u: UOp) -> bool:
  """Do the movement ops down from u only regroup the elements of the node below them, all of them, in order? (A
  contiguous view may also be a shrink from offset 0, chunk's first half: fewer elements than the node below.)"""
  base = u
  while base.op in GroupOp.Movement: base = base.src[0]
  return (st := u.st).contiguous and sym_eq(st.size, base.size)

# ---------------------------------------------------------------- constants fold before kernels are cut
def const_of(u: UOp) -> UOp | None:
  """The CONST that u is a plain (unmasked) view of, if it is one."""
  while u.op in (Ops.RESHAPE, Ops.EXPAND): u = u.src[0]
  return u if u.op is Ops.CONST and not isinstance(u.arg, UOp) else None  # (a symbolic constant is the kernel's)

def const_view(c: UOp, dtype, value, shape: tuple[int, ...]) -> UOp:
  c = UOp.const(dtype, value, c.src)
  return c.reshape((1,) * len(shape)).expand(shape) if shape else c

def _view_chain(u: UOp) -> tuple[UOp, list[UOp]]:
  """u's base below its movement ops, and those ops (the outermost first)."""
  chain = []
  while u.op in GroupOp.Movement: chain.append(u); u = u.src[0]  # noqa: E702
  return u, chain

def _writes(u: UOp) -> bool: return any(n.op is Ops.ASSIGN for n in u.toposort())  # (what a fold must not drop: a write)

def _fold_alu(x: UOp) -> UOp | None:
  cs = [c for s in x.src if (c := const_of(s)) is not None]
  # an int times 0 is 0 (a float is not: NaN * 0 is NaN), unless the other side writes memory
  if x.op is Ops.MUL and not dtypes.is_float(x.dtype) and any(c.arg == 0 for c in cs) and not _writes(x):
    return const_view(cs[0], x.dtype, 0, unwrap(x.shape))
  if x.op is Ops.CAST and not cs and (bc := _view_chain(x.src[0]))[0].op is Ops.CONST and not isinstance(bc[0].arg, UOp):
    base, chain = bc  # a cast of a padded constant: the cast constant, padded
    v = UOp.const(x.dtype, exec_alu(Ops.CAST, x.dtype, (base.arg,), base.dtype), base.src)
    for m in reversed(chain): v = m.replace(dtype=x.dtype, src=(v,))  # (0 casts to 0)
    return v
  if len(cs) != len(x.src) or x.op in (Ops.IDIV, Ops.MOD) and cs[1].arg == 0: return None  # n // 0 is the device's
  return const_view(cs[0], x.dtype, exec_alu(x.op, x.dtype, tuple(c.arg for c in cs), cs[0].dtype), unwrap(x.shape))

def _fold_reduce(x: UOp) -> UOp | None:
  n = prod(x.src[0].shape[a] for a in x.arg[1])  # nothing to reduce: the identity, and no kernel (it would load from no memory)
  if isinstance(n, int) and n == 0 and not _writes(x): return x.const_like({Ops.ADD: 0, Ops.MUL: 1}.get(x.arg[0], dtypes.min(x.dtype)))
  if (c := const_of(x.src[0])) is None or x.arg[0] not in (Ops.ADD, Ops.MAX) or not isinstance(n, int) or n == 0: return None
  return const_view(c, x.dtype, c.arg if x.arg[0] is Ops.MAX else exec_alu(Ops.MUL, x.dtype, (c.arg, n)), unwrap(x.shape))

def _fold_movement(x: UOp) -> UOp | None:
  if (c := const_of(x.src[0])) is None:  # a view that reads no element (all padding) is 0, unless what it drops writes memory
    if x.op is not Ops.SHRINK or (m := x.st.views[-1].mask) is None or not any(sym_ge(lo, hi) for lo, hi in m) or _writes(x): return None
    return x.const_like(0)
  if x.op is Ops.PAD and c.arg != 0: return None  # padding adds zeros
  return const_view(c, x.dtype, c.arg, unwrap(x.shape))

def _fold_empty(x: UOp) -> UOp | None:
  """A value with no elements (a 0 in its shape) has nothing to compute: a constant of its shape, no kernel."""
  return x.const_like(0) if isinstance(x.size, int) and x.size == 0 and const_of(x) is None else None

fold_consts = PatternMatcher([
  # (computing ops only: a view of a buffer stays one, an assign's target is such a view)
  (UPat(GroupOp.ALU | {Ops.CAST, Ops.REDUCE_AXIS}, name="x"), _fold_empty),
  (UPat(GroupOp.ALU | {Ops.CAST}, name="x"), _fold_alu),
  (UPat(Ops.REDUCE_AXIS, name="x"), _fold_reduce),
  (UPat((Ops.PERMUTE, Ops.FLIP, Ops.SHRINK, Ops.PAD, Ops.RESHAPE, Ops.EXPAND), name="x"), _fold_movement)])

def _kept_axes(ctx: dict[UOp, int], r: UOp, rs: UOp | None) -> list[int] | None:
  """Reduce r's axes that rs keeps (all without rs), if r and rs are read only once and rs only drops r's reduced axes."""
  kept = [i for i in range(len(unwrap(r.shape))) if rs is None or i not in r.arg[1]]
  return None if ctx.get(r, 0) != 1 or rs is not None and (ctx.get(rs, 0) != 1 or rs.arg != tuple(unwrap(r.shape)[i] for i in kept)) else kept

def _permuted_reduce(ctx: dict[UOp, int], x: UOp, r: UOp, rs: UOp | None = None) -> UOp | None:
  """x.sum(0, keepdim=True).permute(2, 1, 0) is x.permute(2, 1, 0).sum(2, keepdim=True), so the reduce can join its
  consumer's kernel (tinygrad's swizzle; through `rs` too, a reshape dropping the reduced axes: docs/fusion.md, "Fusion")."""
  if (kept := _kept_axes(ctx, r, rs)) is None: return None  # (r, rs read by anything else: r would be computed twice)
  if rs is None: return UOp(Ops.REDUCE_AXIS, r.dtype, (r.src[0].permute(x.arg),), (r.arg[0], tuple(i for i, a in enumerate(x.arg) if a in r.arg[1])))
  order = tuple(kept[j] for j in x.arg) + tuple(r.arg[1])
  return UOp(Ops.REDUCE_AXIS, r.dtype, (r.src[0].permute(order),), (r.arg[0], tuple(range(len(kept), len(order))))).reshape(unwrap(x.shape))
def _permute_through(ctx: dict[UOp, int], x: UOp, a: UOp) -> UOp | None:
  """A permute of an elementwise op over a reduce (read by nothing else) goes to the op's sources, on its way to the reduce."""
  # (through ops each read once: a reduce read once)
  def feeds_reduce(u: UOp) -> bool: return ctx.get(u, 0) == 1 and (u.op is Ops.REDUCE_AXIS or u.op in GroupOp.ALU | {Ops.RESHAPE} and any(feeds_reduce(s) for s in u.src))
  if ctx.get(a, 0) != 1 or not any(feeds_reduce(s) for s in a.src): return None
  return a.replace(src=tuple(s.permute(x.arg) for s in a.src))
def _reduce_of_reduce(ctx: dict[UOp, int], x: UOp, r: UOp, rs: UOp | None = None) -> UOp | None:
  """x.sum(1).sum(0) is x.sum((0, 1)), one pass over memory (tinygrad's under DONT_GROUP_REDUCES=1): same op and dtype."""
  if x.arg[0] is not r.arg[0] or x.dtype != r.dtype or (kept := _kept_axes(ctx, r, rs)) is None: return None
  axes = tuple(sorted({*r.arg[1], *(kept[j] for j in x.arg[1])}))
  return UOp(Ops.REDUCE_AXIS, r.dtype, (r.src[0],), (r.arg[0], axes)).reshape(unwrap(x.shape))
def _expanded_reduce(ctx: dict[UOp, int], x: UOp) -> UOp | None:
  """DONT_REALIZE_EXPAND=1 (as tinygrad's): a reduce read through an expand is computed again for each copy, in its reader's
  kernel. The views from the reduce up to the expand move onto the reduce's input, its reduced axes carried at the end."""
  chain, r = [x], x.src[0]
  while r.op in GroupOp.Movement and ctx.get(r, 0) == 1: chain, r = chain + [r], r.src[0]
  if not DONT_REALIZE_EXPAND or r.op is not Ops.REDUCE_AXIS or ctx.get(r, 0) != 1 or any(m.op is Ops.PAD for m in chain): return None
  shape, axes = unwrap(r.src[0].shape), r.arg[1]
  if not all(isinstance(d, int) for d in shape): return None  # (a variable reduce length: the reduce keeps its kernel)
  tail, n = tuple(shape[i] for i in axes), len(axes)
  v = r.src[0].permute(tuple(i for i in range(len(shape)) if i not in axes) + axes).reshape(unwrap(r.shape) + tail)
  for m in reversed(chain):
    if m.op in (Ops.RESHAPE, Ops.EXPAND): v = UOp(m.op, v.dtype, (v,), m.arg + tail)
    else: v = UOp(m.op, v.dtype, (v,), {Ops.PERMUTE: m.arg + tuple(range(len(m.arg), len(m.arg) + n)), Ops.FLIP: m.arg + (False,) * n,
                                         Ops.SHRINK: m.arg + tuple((0, t) for t in tail)}[m.op])
  out = unwrap(x.shape)
  return UOp(Ops.REDUCE_AXIS, r.dtype, (v,), (r.arg[0], tuple(range(len(out), len(out) + n)))).reshape(out)
def _max_of_upcast(x: UOp, c: UOp) -> UOp | None:
  """The max of floats cast exactly to a wider float (half to float) is the cast of their max: the reduce then reads and
  stores the narrow values (a float softmax of half input stores its max in half, as tinygrad's test_softmax_upcast)."""
  if x.arg[0] is Ops.MAX and (s := c.src[0].dtype) in (dtypes.half, dtypes.bfloat16, dtypes.float) and dtypes.is_float(c.dtype) and c.dtype.itemsize > s.itemsize:
    return UOp(Ops.REDUCE_AXIS, s, (c.src[0],), x.arg).cast(c.dtype)
  return None
swizzle = PatternMatcher([(UPat(Ops.EXPAND, name="x"), _expanded_reduce), (UPat(Ops.REDUCE_AXIS, name="x", src=(UPat(Ops.CAST, name="c"),)), _max_of_upcast),
                          (UPat(Ops.REDUCE_AXIS, name="x", src=(UPat(Ops.REDUCE_AXIS, name="r"),)), _reduce_of_reduce),
                          (UPat(Ops.REDUCE_AXIS, name="x", src=(UPat(Ops.RESHAPE, name="rs", src=(UPat(Ops.REDUCE_AXIS, name="r"),)),)), _reduce_of_reduce),
                          (UPat(Ops.PERMUTE, name="x", src=(UPat(GroupOp.ALU, name="a"),)), _permute_through),
                          (UPat(Ops.PERMUTE, name="x", src=(UPat(Ops.REDUCE_AXIS, name="r"),)), _permuted_reduce),
                          (UPat(Ops.PERMUTE, name="x", src=(UPat(Ops.RESHAPE, name="rs", src=(UPat(Ops.REDUCE_AXIS, name="r"),)),)), _permuted_reduce)])

def _split_sum(x: UOp) -> UOp | None:
  """A float sum over 2**16 elements or more adds in two stages: at most 256 partial sums over slices of its longest reduced
  axis (padded with zeros when no such count divides it), then their sum (why: docs/fusion.md, "Fusion")."""
  src, (op, axes) = x.src[0], x.arg
  shape = unwrap(src.shape)
  if not SPLIT_REDUCEOP or op is not Ops.ADD or not dtypes.is_float(x.dtype) or not all(isinstance(s, int) for s in shape) or \
     prod(shape[i] for i in axes) < 2**16: return None
  a = max(axes, key=lambda i: shape[i])
  d = next((d for d in range(min(256, shape[a]), 15, -1) if shape[a] % d == 0), min(256, shape[a]))
  n = -(-shape[a] // d) * d
  src = src.pad(tuple((0, n - s if i == a else 0) for i, s in enumerate(shape))).reshape(shape[:a] + (d, n // d) + shape[a + 1:])
  part = UOp(Ops.REDUCE_AXIS, x.dtype, (src,), (Ops.ADD, tuple(sorted({i + (i > a) for i in axes if i != a} | {a + 1}))))
  return UOp(Ops.REDUCE_AXIS, x.dtype, (part,), (Ops.ADD, (a,))).reshape(unwrap(x.shape))
split_sums = PatternMatcher([(UPat(Ops.REDUCE_AXIS, name="x"), _split_sum)])

def use_contiguous(sink: UOp) -> UOp:
  """x.permute(...).contiguous() where only elementwise ops read x besides: they read the contiguous copy through the inverse
  view, so x is computed once, straight into the copy's layout (tinygrad 0.10's found_contiguous; docs/fusion.md, "Fusion")."""
  users = consumers_of(sink)
  for c in sink.toposort():
    chain, x = list[UOp](), c.src[0] if c.op is Ops.CONTIGUOUS else c
    while c.op is Ops.CONTIGUOUS and x.op in (Ops.PERMUTE, Ops.RESHAPE): chain, x = chain + [x], x.src[0]
    others = [u for u in users.get(x, []) if u is not chain[-1]] if chain else []
    if not others or any(u.op not in GroupOp.ALU for u in others) or x.op not in GroupOp.ALU | {Ops.REDUCE_AXIS, Ops.CAST} or variables(x.shape): continue
    for m in chain: c = c.permute(tuple(m.arg.index(i) for i in range(len(m.arg)))) if m.op is Ops.PERMUTE else c.reshape(unwrap(m.src[0].shape))
    return use_contiguous(sink.substitute({u: u.replace(src=tuple(c if s is x else s for s in u.src)) for u in others}))
  return sink

def consumers_of(sink: UOp) -> dict[UOp, list[UOp]]:
  out: dict[UOp, list[UOp]] = {}
  for n in sink.toposort():
    for s in n.src: out.setdefault(s, []).append(n)
  return out

def device_layouts(sink: UOp) -> UOp:
  """Each device's own rewrites of the tensor graph (Renderer.graph_rules: the CPU packs a big matmul's right operand,
  renderer/layout.py). They change where values sit in memory, not what is computed; LAZYNB_PLAIN=1 turns them off."""
  for dev in sorted({u.arg for u in sink.toposort() if u.op is Ops.DEVICE and isinstance(u.arg, str)}):
    try: renderer = Device[dev].renderer
    except Exception: continue  # a device that cannot open here has no rules; running its kernels says why
    for name, rules in renderer.graph_rules:
      sink = graph_rewrite(sink, rules, (dev, renderer), name=f"{dev}: {name}", stage="tensor graph", report_unchanged=False)
  return sink

# the build track's seam: fn(outs) -> the nodes to realize, in place of the rules below that decide kernel boundaries
_boundaries: contextvars.ContextVar[Callable | None] = contextvars.ContextVar("lazynb_kernel_boundaries", default=None)

class BoundaryError(RuntimeError):
  """A decision of kernel_boundaries(fn) that the scheduler cannot build into kernels."""

@contextlib.contextmanager
def kernel_boundaries(fn: Callable) -> Iterator[None]:
  """`with kernel_boundaries(fn): ...`: each schedule realizes exactly the nodes fn(outs) returns (outs as the scheduler sees
  them: realized tensors are BUFFERs, constants folded) and fuses the rest into their consumers (this thread, this block).
  A decision no kernel can follow is a BoundaryError. (A kernel is known by its AST: the runner cache needs no more.)"""
  token = _boundaries.set(fn)
  try: yield
  finally: _boundaries.reset(token)

def _say(u: UOp) -> str: return f"{u.op.name}{f' {u.arg[0].name} over axes {u.arg[1]}' if u.op is Ops.REDUCE_AXIS else ''} of shape {u.shape}"

class Scheduler:
  def __init__(self, outs: list[UOp], narrow: tuple[UOp, ...] = ()):
    self.sink, self.orig_map = lookup_realized(UOp.sink(*outs))
    self.sink = use_contiguous(graph_rewrite(self.sink, fold_consts, name="fold constants", stage="tensor graph"))
    for _ in range(8):  # (each pass counts consumers afresh: a permute it pushed down may meet a reduce in the next)
      old, self.sink = self.sink, graph_rewrite(self.sink, swizzle, {u: len(c) for u, c in consumers_of(self.sink).items()}, name="swizzle reduces",
                                                stage="tensor graph", bottom_up=True, report_unchanged=False)
      if self.sink is old: break
    self.sink = device_layouts(self.sink)
    self.sink = graph_rewrite(self.sink, split_sums, name="split long sums", stage="tensor graph", report_unchanged=False)
    self.outs = list(self.sink.src)
    self.nodes = self.sink.toposort()
    self.consumers = consumers_of(self.sink)
    self.roots: dict[UOp, str] = {}        # node -> reason it is realized
    self.out_buf: dict[UOp, UOp] = {}      # root -> its BUFFER uop
    self.items: dict[UOp, ScheduleItem] = {}
    self.deps: dict[UOp, list[UOp]] = {}   # root -> roots it reads
    self.reads: dict[UOp, set[UOp]] = {}   # root -> realized BUFFERs it reads directly
    self.staged: dict[UOp, UOp] = {}       # ASSIGN root -> its value copied to a buffer first (it reads the target's memory)
    self.chosen = None if (fn := _boundaries.get()) is None else self.decide(fn)
    if self.chosen is None and not DONT_GROUP_REDUCES: self.chase_reduces()
    self.roots.update(dict.fromkeys(narrow, "reduce"))

  def _chain(self, r: UOp) -> tuple[UOp, UOp | None]:
    """Up from reduce r through ops each the one consumer of the one below: the top one, and the last of the narrowest."""
    t, chain = r, list[UOp]()
    while len(cs := self.consumers.get(t, [])) == 1 and cs[0].op in GroupOp.ALU | {Ops.CAST, Ops.RESHAPE}:
      t = cs[0]
      if t.op is not Ops.RESHAPE: chain.append(t)
    return t, min(reversed([r] + chain), key=lambda n: n.dtype.itemsize) if chain else None  # (r itself, if narrower)

  def chase_reduces(self):
    """A reduce read through a view or by another reduce gets a kernel of its own; where elementwise ops (one consumer
    each) lie between it and that read, the kernel stores their result instead: computed once, not by every reader
    (tinygrad's reduce grouping; DONT_GROUP_REDUCES=1 turns it off, as there)."""
    for r in (n for n in self.nodes if n.op is Ops.REDUCE_AXIS):
      t, n = self._chain(r)
      if n is not None and any(c.op is Ops.REDUCE_AXIS or c.op in GroupOp.Movement and not is_reshape_chain(self._movement_top(c))
                               for c in self.consumers.get(t, [])): self.roots.setdefault(n, "reduce")

  def narrower(self) -> tuple[UOp, ...]:
    """After run(): a reduce with a kernel of its own that its readers use narrower (sum cast to half) stores that instead."""
    if self.chosen is not None or DONT_GROUP_REDUCES: return ()
    return tuple(n for r in self.roots if r.op is Ops.REDUCE_AXIS and (n := self._chain(r)[1]) is not None and n.dtype.itemsize < r.dtype.itemsize)

  def _movement_top(self, m: UOp) -> UOp:
    """The last of the movement ops from m up, each the only reader of the one below (read together, as one view)."""
    while len(cs := self.consumers.get(m, [])) == 1 and cs[0].op in GroupOp.Movement: m = cs[0]
    return m

  def decide(self, fn: Callable) -> set[UOp]:
    """fn's nodes to realize, checked, as roots (their buffers are made when a kernel reads them)."""
    got, self.graph, self.fn = fn(list(self.outs)), set(self.nodes), getattr(fn, "__name__", repr(fn))
    if not isinstance(got, (set, frozenset, list, tuple)) or not all(isinstance(u, UOp) for u in got):
      raise BoundaryError(f"your schedule decision ({self.fn}) must return a set of UOps, the nodes to realize; got {type(got).__name__}")
    for u in got:
      if u not in self.graph: raise BoundaryError(f"your schedule decision ({self.fn}) realizes {_say(u)}, which is not in the graph it was given")
      if u.op in (Ops.BUFFER, Ops.DEVICE, Ops.UNIQUE, Ops.SINK):
        raise BoundaryError(f"your schedule decision ({self.fn}) realizes a {u.op.name}, which is no value to compute" +
                            (": a BUFFER is in memory already (a tensor realized before), it needs no kernel" if u.op is Ops.BUFFER else ""))
    self.roots.update(dict.fromkeys(got, "yours"))
    return set(got)

  def refused(self, n: UOp, reason: str) -> str:
    """Why the node n, which fn left fused, needs a kernel of its own (in words, for the BoundaryError)."""
    head, kern = f"your schedule decision ({self.fn}) ", f"the kernel of {_say(getattr(self, 'root', n))}"
    if n.op in (Ops.COPY, Ops.CONTIGUOUS, Ops.ASSIGN):
      return head + f"leaves {_say(n)} unrealized: a COPY, a CONTIGUOUS (.contiguous()) or an ASSIGN (.assign()) is always a kernel's output"
    if reason == "realize": return head + f"leaves the output {_say(n)} unrealized: every output is stored by the kernel of its base (out.base)"
    if reason == "copy": return head + f"leaves {_say(n)} unrealized, but a COPY reads it from memory"
    if reason == "pad": return head + f"fuses {_say(n)} into {kern}, which reads it through a pad: the padding would compute {n.op.name}(0), not 0"
    why = ("that kernel computes another reduce already (a kernel holds one, or several over the same loops under DONT_GROUP_REDUCES=1)"
           if self.fused and n not in self.fused else
           "another kernel reads it too (or reads a node between it and that kernel's root)" if n in self.in_place else
           "that kernel reads it through a movement op that is not a reshape (expand, permute, pad, shrink, flip)")
    return head + f"fuses {_say(n)} into {kern}, but {why}: the reduce's whole result must be in memory first, so realize it"

  def root_of(self, out: UOp) -> UOp | None:
    b = out.base
    if b.op is Ops.BUFFER: return None
    if b.op is Ops.ASSIGN: return b
    if b.op is Ops.CONST: return None  # a (padded, or symbolic) constant needs no kernel (fold_consts)
    return out if b.op is Ops.ARANGE else b

  def add_root(self, n: UOp, reason: str) -> UOp:
    if n not in self.out_buf:
      if self.chosen is not None and n not in self.chosen and n in self.graph: raise BoundaryError(self.refused(n, reason))
      self.roots.setdefault(n, reason)
      if n.op is Ops.BUFFER: raise RuntimeError("a buffer cannot be a root")
      # an assign done before whose memory was written again since (its value is gone): never done a second time (a lost write)
      if n.op is Ops.ASSIGN: check_fresh(n.src[0].base)
      # ASSIGN(target, value) stores into the target's existing buffer
      # a variable size gets memory for its largest value (a TinyJit replay may run with any value)
      self.out_buf[n] = n.src[0].base if n.op is Ops.ASSIGN else new_buffer(n.device, smax(n.size), n.dtype)
    return self.out_buf[n]

  def run(self) -> list[ScheduleItem]:
    work = []
    for o in self.outs:
      if (r := self.root_of(o)) is not None:
        self.add_root(r, "realize")
        work.append(r)
    done: set[UOp] = set()
    while work:
      r = work.pop()
      if r in done: continue
      done.add(r)
      before = set(self.roots)
      self.items[r] = self.build(r)
      work.extend(n for n in self.roots if n not in before)
      work.extend(n for n in self.deps[r] if n not in done)
    # an in-place write (ASSIGN) waits for every kernel that reads the old contents of its buffer
    for r in self.out_buf:
      if r.op is not Ops.ASSIGN: continue
      for x, bufs in self.reads.items():
        if x is not r and self.out_buf[r] in bufs and x not in self.deps[r] and not self._depends(x, r): self.deps[r].append(x)
    # order: a kernel after every kernel it reads from
    order = postorder([r for o in self.outs if (r := self.root_of(o)) is not None], lambda n: self.deps[n][::-1])  # (the last dep first)
    return [self.items[r] for r in order]

  def _depends(self, a: UOp, b: UOp) -> bool:
    """Does root a (transitively) read root b?"""
    return b in postorder([a], lambda n: self.deps.get(n, []))

  # ---------------------------------------------------------------- one kernel
  def build(self, root: UOp) -> ScheduleItem:
    self.deps[root], self.reads[root] = [], set()
    if root.op is Ops.COPY:
      src = root.src[0]
      if is_contiguous_view_of_buffer(src):
        check_fresh(src_buf := src.base)
        self.reads.setdefault(root, set()).add(src_buf)
      else: src_buf = self.load_root(root, src, "copy", None)
      ob = self.out_buf[root]
      return ScheduleItem(root, (state.buffers[ob], state.buffers[src_buf]), "copy", self.roots[root], root, (ob, src_buf))
    if root.op is Ops.ASSIGN and root.src[1].op is Ops.KERNEL: return self.prebuilt(root)
    self.root = root
    self.fused = self.find_reduce(root)
    self.globals: list[UOp] = [self.out_buf[root]]
    self.paths: dict[UOp, tuple] = {}           # marker -> the movement ops between the root and it (outermost first)
    self.origins: dict[UOp, tuple] = {}         # VIEW -> the movement ops that made it (outermost first)
    kshape = unwrap(self.fused[0].shape if self.fused else root.shape)
    if not sym_eq(prod(kshape), root.size):  # the store would not cover the root's buffer exactly: a region rule is wrong
      raise RuntimeError(f"scheduler: the kernel for {root.op.name} {root.shape} has shape {kshape} (its reduce's); a reduce may join "
                         "a kernel only through elementwise ops and reshapes")
    st = store_st = ShapeTracker.from_shape(kshape)
    if root.op is Ops.ASSIGN:  # into the target's memory, through the target's view of it
      store_st = root.src[0].st
      if store_st.shape != kshape: store_st = store_st.movement(Ops.RESHAPE, kshape)
    # the cut: the root seen through its kernel's view, pushed down to loads by the rules in `cut_kernel`
    dg = UOp(Ops.DEFINE_GLOBAL, root.dtype.ptr(), (), 0)
    start = UOp.sink(UOp(Ops.STORE, dtypes.void, (dg, UOp(Ops.VIEW, dtypes.void, (), store_st), seen_through(root, st))))
    ast = graph_rewrite(start, cut_kernel, ctx=self, name=f"cut kernel: {root.op.name} ({self.roots[root]})", stage="kernels", bottom_up=True)
    value = ast.src[0].src[2]
    if root.op is Ops.ASSIGN and root not in self.staged and \
       any(ld.src[0].arg == 0 and not _in_place(ld.src[1].arg, store_st) for ld in value.toposort() if ld.op is Ops.LOAD):
      # the value reads the memory it overwrites through another view (m[::-1] = m): it is computed into a new buffer first,
      # a CONTIGUOUS of its own (the value itself may be a buffer, which cannot be a root; and a root that is a view of the
      # target would leave a cached result behind that names the target's memory)
      v = root.src[1]
      self.staged[root] = staged = UOp(Ops.CONTIGUOUS, v.dtype, (v, new_unique()))
      self.consumers[v] = [staged if c is root else c for c in self.consumers.get(v, [])]
      self.consumers[staged] = [root]
      return self.build(root)
    ast, var_vals, sub = unbind_ast(ast)
    bufs = tuple(state.buffers[b] for b in self.globals)
    origins = {sub.get(v, v): o for v, o in self.origins.items()}
    # the kernel's Metadata: of its nodes, not counting constants and the no-ops x * 1 and x + 0 (the compiler drops them)
    inside = lambda n: n is root or not (n in self.roots or n.op is Ops.BUFFER)  # noqa: E731
    noop = lambda n: n.op in (Ops.MUL, Ops.ADD) and any((c := const_of(s)) is not None and c.arg == (n.op is Ops.MUL) for s in n.src)  # noqa: E731
    md = dict.fromkeys(m for n in postorder([root], lambda n: n.src if inside(n) else ())
                       if inside(n) and n.base.op not in (Ops.CONST, Ops.DEVICE) and not noop(n) and (m := n.metadata) is not None)
    return ScheduleItem(ast, bufs, "kernel", self.roots[root], root, tuple(self.globals), origins, var_vals, metadata=tuple(md))

  def prebuilt(self, root: UOp) -> ScheduleItem:
    """ASSIGN(BUFFER, KERNEL(*inputs)) made by kernelize(): the kernel is already decided."""
    kernel = root.src[1]
    ins = [self.load_root(root, s, "realize", None) for s in kernel.src]  # (a BUFFER: checked fresh, and an assign into it waits)
    bufs = (self.out_buf[root], *ins)
    kind = "copy" if kernel.arg.ast.op is Ops.COPY else "kernel"
    return ScheduleItem(kernel.arg.ast, tuple(state.buffers[b] for b in bufs), kind, kernel.arg.reason, root, bufs)

  def find_reduce(self, root: UOp) -> list[UOp]:
    """The reduce this kernel may contain (more, over the same loops, under DONT_GROUP_REDUCES=1). The kernel's region is
    what the root reaches through elementwise ops and plain reshapes; a reduce in it joins the kernel if everything that
    uses the reduce, or uses anything between it and the root, is inside the region (else the reduce would be needed by
    another kernel too, and gets its own)."""
    reduces: list[UOp] = []
    inside: set[UOp] = set()  # the region: nodes the kernel reads in its own order (their sources were followed)
    seen: set[UOp] = set()
    stack = [root]
    while stack:
      n = stack.pop()
      if n in seen: continue
      seen.add(n)
      if n is not root and n in self.roots: continue
      if n.op is Ops.REDUCE_AXIS: reduces.append(n)
      if n.op is Ops.REDUCE_AXIS and n is not root: continue
      if n.op in GroupOp.Elementwise or n.op in (Ops.RESHAPE, Ops.DETACH, Ops.REDUCE_AXIS) or (n is root and n.op in (Ops.CONTIGUOUS, Ops.ASSIGN)):
        inside.add(n)
        stack.extend(reversed(n.src))
      elif n.op in GroupOp.Movement and is_reshape_chain(n):
        # movement ops that add up to a reshape (a transpose of size-1 dims, x.T.T): the kernel reads in the same order
        inside.add(n)
        while n.src[0].op in GroupOp.Movement: n = n.src[0]; inside.add(n); seen.add(n)  # noqa: E702
        stack.append(n.src[0])
    self.in_place = reduces
    joins = []
    for r in reduces:
      # the nodes between r and the root; a use outside the region (a flip, a shrink, another reduce) reads r through a
      # view, so r gets a kernel of its own, and computing it here too would be the same work twice
      between = postorder([r], lambda n: [c for c in self.consumers.get(n, []) if c in inside])
      if all(c in inside for n in between if n is not root for c in self.consumers.get(n, [])): joins.append(r)
    # DONT_GROUP_REDUCES=1 (as tinygrad's): the others over the same loops join it too, x.sum(1) + y.sum(1) is one kernel
    return joins[:1] + [r for r in joins[1:] if DONT_GROUP_REDUCES and r.src[0].shape == joins[0].src[0].shape and r.arg[1] == joins[0].arg[1]]

  def load_root(self, parent: UOp, n: UOp, reason: str, st: ShapeTracker | None, marker: UOp | None = None) -> UOp:
    buf = self.add_root(n, reason) if n.op is not Ops.BUFFER else n
    if n.op is Ops.BUFFER:
      check_fresh(n)
      self.reads.setdefault(parent, set()).add(n)
    if n.op is not Ops.BUFFER and n not in self.deps[parent]: self.deps[parent].append(n)
    if st is None: return buf
    if buf not in self.globals: self.globals.append(buf)
    dg = UOp(Ops.DEFINE_GLOBAL, n.dtype.ptr(), (), self.globals.index(buf))
    view = UOp(Ops.VIEW, dtypes.void, (), st)
    self.origins.setdefault(view, self.paths.get(marker, ()) if marker is not None else ())
    return UOp(Ops.LOAD, n.dtype, (dg, view))

# ---------------------------------------------------------------- cutting one kernel: views pushed down to loads
# VIEW(x) with arg st (a VIEW with a source) is a marker: "x, read through the ShapeTracker st". The cut starts with the
# kernel's root seen through the kernel's shape and pushes the view down the tensor graph (top-down, so nothing below a
# load is visited): movement ops fold into the view, elementwise ops are fused (the view goes to each source), and the
# view stops at a BUFFER or at a boundary, where it becomes a LOAD. A boundary is a node with a kernel of its own: one
# decided before (a realized tensor, a COPY, a CONTIGUOUS), or one these rules decide (the ctx, a Scheduler, records
# it as a new root): a reduce that cannot join this kernel, an unsafe op under a padded view.

def seen_through(x: UOp, st: ShapeTracker) -> UOp: return UOp(Ops.VIEW, x.dtype, (x,), st)

def _inherit(ctx: Scheduler, v: UOp, child: UOp, *movement) -> UOp:
  ctx.paths.setdefault(child, ctx.paths.get(v, ()) + movement)
  return child

def _boundary(ctx: Scheduler, v: UOp, x: UOp) -> UOp | None:
  """x was given a kernel of its own (before, or by a rule here): this kernel loads its buffer."""
  return None if x is ctx.root or x not in ctx.roots else ctx.load_root(ctx.root, x, ctx.roots[x], v.arg, v)

def _through_movement(ctx: Scheduler, v: UOp, x: UOp) -> UOp:
  # a run of movement ops other than reshapes is applied as one, bottom-up, to the shape below it: each step then
  # acts on a single view (a pad of a pad is one wider pad), where composing them one by one onto the view above could
  # leave two views and div/mod in the index (a conv input padded for the transposed conv, then given a spare row:
  # /2304 and %64 per load). A reshape may need a view of its own: it keeps being composed from above.
  chain = [x]
  while x.op is not Ops.RESHAPE and (n := chain[-1].src[0]).op in GroupOp.Movement and n.op is not Ops.RESHAPE and n not in ctx.roots: chain.append(n)
  inner = ShapeTracker.from_shape(chain[-1].src[0].shape)
  for m in reversed(chain): inner = inner.movement(m.op, m.arg)
  return _inherit(ctx, v, seen_through(chain[-1].src[0], inner + v.arg), *[(m.op.name, m.arg) for m in chain])

def _in_place(x, y) -> bool:  # a load through x reads, at each index, the place y writes there or nothing (a masked view)
  return x == y or len(x.views) == len(y.views) == 1 and ((a := x.views[0]).shape, a.strides, a.offset, None) == ((b := y.views[0]).shape, b.strides, b.offset, b.mask)

def _fuse_elementwise(ctx: Scheduler, v: UOp, x: UOp) -> UOp:
  if v.arg.has_mask and x.op in GroupOp.UnsafePad and x is not ctx.root: return ctx.load_root(ctx.root, x, "pad", v.arg, v)  # f(0) != 0
  return UOp(x.op, x.dtype, tuple(_inherit(ctx, v, seen_through(s, v.arg)) for s in x.src), x.arg)

def _fuse_reduce(ctx: Scheduler, v: UOp, x: UOp) -> UOp:
  if x in ctx.fused and v.arg.contiguous and v.arg.shape == x.shape:  # the kernel's reduce, read in place
    src = x.src[0]
    return UOp(Ops.REDUCE_AXIS, x.dtype, (_inherit(ctx, v, seen_through(src, ShapeTracker.from_shape(src.shape))),), x.arg)
  return ctx.load_root(ctx.root, x, "reduce", v.arg, v)  # another reduce, or this one read through a view: a kernel of its own

def _unknown(x: UOp): raise NotImplementedError(f"the scheduler cannot handle {x.op}")

def _viewed(op, name="x") -> UPat: return UPat(Ops.VIEW, name="v", src=(UPat(op, name=name),))
cut_kernel = PatternMatcher([
  (_viewed(Ops.BUFFER), lambda ctx, v, x: ctx.load_root(ctx.root, x, "", v.arg, v)),
  (_viewed(None), _boundary),
  # a constant (or the number line) takes the view: it carries the kernel's shape (a reduce of constants counts it) and any mask
  (_viewed((Ops.CONST, Ops.ARANGE)), lambda v, x: UOp(x.op, x.dtype, (UOp(Ops.VIEW, dtypes.void, (), v.arg),), x.arg)),
  (_viewed(GroupOp.Movement), _through_movement),
  (_viewed(Ops.DETACH), lambda ctx, v, x: _inherit(ctx, v, seen_through(x.src[0], v.arg))),
  # the root's own CONTIGUOUS is this kernel; the root's ASSIGN stores its value (into the target's buffer)
  (_viewed((Ops.CONTIGUOUS, Ops.ASSIGN)),
   lambda ctx, v, x: _inherit(ctx, v, seen_through(ctx.staged.get(x, x.src[1]) if x.op is Ops.ASSIGN else x.src[0], v.arg)) if x is ctx.root else None),
  # a COPY, a CONTIGUOUS or an ASSIGN inside the graph is a kernel of its own
  (_viewed((Ops.COPY, Ops.CONTIGUOUS, Ops.ASSIGN)),
   lambda ctx, v, x: ctx.load_root(ctx.root, x, "copy" if x.op is Ops.COPY else "realize", v.arg, v)),
  (_viewed(GroupOp.Elementwise), _fuse_elementwise),
  (_viewed(Ops.REDUCE_AXIS), _fuse_reduce),
  (_viewed(None), lambda v, x: _unknown(x))])

def ast_vars(ast: UOp) -> list[UOp]:
  """The variables (DEFINE_VARs) a kernel AST uses: in its views, and as values (a mean over a variable axis)."""
  return dedup([v for u in ast.toposort() if u.op is Ops.VIEW for v in u.arg.vars()] +
               [v for u in ast.toposort() if u.op is Ops.CONST and isinstance(u.arg, UOp) for v in variables(u.arg)])

def unbind_ast(ast: UOp) -> tuple[UOp, dict[str, int], dict[UOp, UOp]]:
  """The kernel with each bound variable (BIND) replaced by its DEFINE_VAR, and the values: kernels for different
  values are then one AST, compiled once; the values are passed as int arguments when it runs."""
  vals: dict[UOp, int] = {}
  sub = {u: u.replace(arg=u.arg.unbind(vals)) for u in ast.toposort() if u.op is Ops.VIEW and u.arg.vars()}
  consts = {u: u.replace(arg=unbind(u.arg, vals), src=tuple(sub.get(s, s) for s in u.src)) for u in ast.toposort()
            if u.op is Ops.CONST and isinstance(u.arg, UOp)}
  return (ast.substitute({**sub, **consts}) if sub or consts else ast), {v.arg[0]: x for v, x in vals.items()}, sub

@implements("schedule")
def create_schedule(outs: list[UOp]) -> tuple[list[ScheduleItem], dict[UOp, UOp]]:
  """Kernels for `outs`, in order, and for each out the view of a buffer that will hold it."""
  with in_stage("kernels"):
    s = Scheduler(outs)
    items = s.run()
    if narrow := s.narrower(): items = (s := Scheduler(outs, narrow)).run()  # (the same graph: its nodes are the same UOps)
  becomes: dict[UOp, UOp] = {}
  bufmap = {}
  for r, b in s.out_buf.items():
    # an assign: same memory, new identity, so graphs built on the old contents do not match the new ones (not a kernelize()d
    # ASSIGN(BUFFER, KERNEL): its buffer is new, or was renamed when kernelize() decided the write)
    if r.op is Ops.ASSIGN and r.src[1].op is not Ops.KERNEL:
      nb = UOp(Ops.BUFFER, b.dtype, (new_unique(), b.src[1]), b.arg)
      state.buffers[nb] = state.buffers[b]
      state.superseded[b] = nb
      state.owned[nb] = state.owned.get(b)  # (the same memory, the same owner)
      bufmap[r] = r.src[0].substitute({b: nb})  # the target's view, of the new name
      continue
    if r.op in (Ops.CONTIGUOUS, Ops.COPY): state.owned.setdefault(b, None)
    if isinstance(r.size, UOp): b = b.shrink(((0, r.size),))  # a variable size: the first `size` elements of the largest
    bufmap[r] = b.reshape(unwrap(r.shape)) if r.shape != b.shape else b
  for orig, o in zip(outs, s.outs): becomes[orig] = o.substitute(bufmap) if bufmap else o
  for r, b in bufmap.items(): becomes.setdefault(r, b)
  for orig, new in s.orig_map.items():  # the nodes as the tensors hold them (before realized parts were swapped in)
    if new in bufmap and orig is not new: becomes.setdefault(orig, bufmap[new])
  # an assign as the tensor holds it, when folded constants below it made the scheduler's node a new one: the write is done,
  # so its tensor must find its memory (else it would do the write again, from memory that write has overwritten)
  if assigns := {r.src[0].base: v for r, v in bufmap.items() if r.op is Ops.ASSIGN}:
    for n in UOp.sink(*outs).toposort():
      if n.op is Ops.ASSIGN and (v := assigns.get(n.src[0].base)) is not None: becomes.setdefault(n, v)
  trace.emit("schedule", items=items, outs=outs, constants=sum(1 for o in s.outs if s.root_of(o) is None and o.base.op is Ops.CONST))
  return items, becomes

def create_schedule_with_vars(sink: UOp) -> tuple[list[ScheduleItem], dict[str, int], dict[UOp, UOp]]:
  """tinygrad 0.10's form of the schedule stage (docs/abstractions2.py): the items for a SINK's sources, the values of
  their variables (by name: lazynb's var_vals are keyed by name, tinygrad's by the Variable), and the becomes map."""
  if sink.op is not Ops.SINK: raise TypeError(f"create_schedule_with_vars takes a SINK of the values to schedule, got {sink.op}")
  items, becomes = pipeline.call("schedule", list(sink.src))
  var_vals: dict[str, int] = {}
  for si in items: var_vals.update(si.var_vals)
  return items, var_vals, becomes
