"""A Kernel holds one scheduled AST and the shape of its loops, and applies optimizations to it.

Every buffer access in the AST has a ShapeTracker over the same *full shape*. An optimization ("opt")
splits one axis of that shape and gives the new inner part a role: upcast (computed in registers, no
loop), unroll (a reduce loop expanded inline), local (a GPU work-group axis), group (a reduce split across
a work-group), thread (the CPU's outer loop split over cores). All ShapeTrackers are split together, so
the index math stays right by construction."""
from __future__ import annotations
import enum
from dataclasses import dataclass
from lazynb.helpers import prod, colored, to_function_name, dedup, unwrap
from lazynb.uop.ops import UOp, Ops, sym_str, smax
from lazynb.shape.shapetracker import ShapeTracker
from lazynb.device import Device

class AxisType(enum.Enum):
  GLOBAL = "blue"; THREAD = "BRIGHT_BLUE"; LOCAL = "cyan"; GROUP = "green"; REDUCE = "red"; UNROLL = "magenta"; UPCAST = "yellow"  # noqa: E702
  @property
  def is_reduce(self) -> bool: return self in (AxisType.REDUCE, AxisType.GROUP, AxisType.UNROLL)

class OptOps(enum.Enum):
  UPCAST = enum.auto(); UNROLL = enum.auto(); LOCAL = enum.auto(); GROUP = enum.auto(); GROUPTOP = enum.auto()  # noqa: E702
  THREAD = enum.auto(); PADTO = enum.auto()  # noqa: E702
  def __repr__(self): return f"OptOps.{self.name}"

@dataclass(frozen=True)
class Opt:
  op: OptOps
  axis: int
  arg: int
  def __repr__(self): return f"Opt({self.op.name}, {self.axis}, {self.arg})"

class KernelOptError(Exception): pass

class Kernel:
  def __init__(self, ast: UOp, renderer=None):
    if ast.op is not Ops.SINK: raise ValueError(f"a kernel AST is a SINK, got {ast.op}")
    self.ast, self.renderer = ast, renderer or Device[Device.DEFAULT].renderer
    self.views = dedup([u for u in ast.toposort() if u.op is Ops.VIEW])
    self.sts: list[ShapeTracker] = [v.arg for v in self.views]
    # which views belong to memory accesses (the others shape constants)
    mem_views = {u.src[1] for u in ast.toposort() if u.op in (Ops.LOAD, Ops.STORE)}
    self.is_mem = [v in mem_views for v in self.views]
    self.reduceop = next((u for u in ast.toposort() if u.op is Ops.REDUCE_AXIS), None)
    self.bufs = sorted({u for u in ast.toposort() if u.op is Ops.DEFINE_GLOBAL}, key=lambda u: u.arg)
    out_shape = self.sts[0].shape if self.sts else ()
    # per axis the size that is not 1 (a size may be a variable: those axes are never split by opts)
    self.full_shape: tuple = tuple(next((s[i] for s in (st.shape for st in self.sts) if s[i] != 1), 1) for i in range(len(out_shape))) if self.sts else ()
    self.axis_types = [AxisType.REDUCE if o != f else AxisType.GLOBAL for o, f in zip(out_shape, self.full_shape)]
    self.applied_opts: list[Opt] = []
    # PADTO's validity: the full shape with every padded axis masked to its real size, split and permuted with the others
    self.pad_st: ShapeTracker | None = None
    # canonical loop order: global axes first, then reduce axes; then merge what can be merged
    order = [i for i, t in enumerate(self.axis_types) if not t.is_reduce] + [i for i, t in enumerate(self.axis_types) if t.is_reduce]
    self._permute(order)
    self._drop_ones()
    self._merge_adjacent()

  def copy(self) -> Kernel:
    k = Kernel.__new__(Kernel)
    k.__dict__.update(self.__dict__)
    k.sts, k.axis_types, k.applied_opts = list(self.sts), list(self.axis_types), list(self.applied_opts)
    return k
  def linearize(self) -> Kernel:
    """Make the program now, as tinygrad 0.10's k.linearize().to_program() (docs/abstractions2.py): the codegen pipeline
    on the AST and the opts applied (get_program), the one lazynb would run; its linear list of UOps is `self.uops`."""
    from lazynb.codegen import get_program  # (the codegen package imports this module)
    self.program = get_program(self.ast, self.renderer, list(self.applied_opts))
    self.uops = self.program.uops
    return self
  def to_program(self):
    """The kernel as a ProgramSpec (source and launch sizes), ready for CompiledRunner."""
    return getattr(self, "program", None) or self.linearize().program

  # ---- shape surgery applied to every ShapeTracker at once
  def _permute(self, order: list[int]):
    self.sts = [st.permute(tuple(order)) for st in self.sts]
    if self.pad_st is not None: self.pad_st = self.pad_st.permute(tuple(order))
    self.full_shape = tuple(self.full_shape[i] for i in order)
    self.axis_types = [self.axis_types[i] for i in order]
  def _reshape(self, fn):
    """fn(shape) -> new shape; applied to each st (with its own reduce dims of 1) and the full shape."""
    self.sts = [st.reshape(fn(st.shape)) for st in self.sts]
    if self.pad_st is not None: self.pad_st = self.pad_st.reshape(fn(self.pad_st.shape))
    self.full_shape = fn(self.full_shape)
  def _drop_ones(self):
    keep = [i for i, s in enumerate(self.full_shape) if s != 1]
    self._reshape(lambda shape: tuple(shape[i] for i in keep))
    self.axis_types = [self.axis_types[i] for i in keep]
  def _merge_adjacent(self):
    i = len(self.full_shape) - 2
    while i >= 0:
      if self.axis_types[i] == self.axis_types[i + 1] and not self.is_sym(i) and not self.is_sym(i + 1):
        merged = []
        for st in self.sts:
          if len(st.views) > 1 and st.shape[i] * st.shape[i + 1] > 1: break  # would put div/mod in the index math
          shp = st.shape[:i] + (st.shape[i] * st.shape[i + 1],) + st.shape[i + 2:]
          v = st.views[-1].reshape(shp)
          if v is None: break
          merged.append(ShapeTracker(st.views[:-1] + (v,)))
        else:
          self.sts = merged
          self.full_shape = self.full_shape[:i] + (self.full_shape[i] * self.full_shape[i + 1],) + self.full_shape[i + 2:]
          del self.axis_types[i + 1]
      i -= 1
  def _split(self, axis: int, amt: int, new_type: AxisType, top: bool = False):
    """Split `axis` into (size/amt, amt); the inner part (the outer one with top=True) gets `new_type`."""
    def fn(shape):
      parts = (1, 1) if (s := shape[axis]) == 1 else (amt, s // amt) if top else (s // amt, amt)
      return shape[:axis] + parts + shape[axis + 1:]
    self._reshape(fn)
    old = self.axis_types[axis]
    self.axis_types[axis:axis + 1] = [new_type, old] if top else [old, new_type]
    # keep the canonical order: move the new axis next to its kind
    self._reorder()
    self._drop_ones()
  _ORDER = [AxisType.THREAD, AxisType.GLOBAL, AxisType.LOCAL, AxisType.GROUP, AxisType.REDUCE, AxisType.UNROLL, AxisType.UPCAST]
  def _reorder(self):
    order = sorted(range(len(self.axis_types)), key=lambda i: (self._ORDER.index(self.axis_types[i]), i))
    if order != list(range(len(order))): self._permute(order)

  # ---- opts
  def axes_of(self, *types: AxisType) -> list[int]: return [i for i, t in enumerate(self.axis_types) if t in types]
  def is_sym(self, axis: int) -> bool: return isinstance(self.full_shape[axis], UOp)
  def apply_opt(self, opt: Opt):
    if opt.axis < 0 or opt.axis >= len(self.full_shape): raise KernelOptError(f"{opt}: axis out of range for shape {self.full_shape}")
    if self.is_sym(opt.axis): raise KernelOptError(f"{opt}: axis {opt.axis} has a variable size ({sym_str(self.full_shape[opt.axis])})")
    size, t = self.full_shape[opt.axis], self.axis_types[opt.axis]
    if opt.op is OptOps.PADTO: return self._padto(opt, size, t)
    amt = opt.arg if opt.arg != 0 else size
    if amt < 1 or size % amt != 0: raise KernelOptError(f"{opt}: {amt} does not divide axis of size {size}")
    if opt.op in (OptOps.LOCAL, OptOps.GROUP, OptOps.GROUPTOP) and len(self.axes_of(AxisType.LOCAL, AxisType.GROUP)) >= 3:
      raise KernelOptError(f"{opt}: a work-group has at most 3 axes (the launch has 3 local dimensions)")
    if opt.op is OptOps.UPCAST:
      if t not in (AxisType.GLOBAL, AxisType.LOCAL): raise KernelOptError(f"{opt}: can only upcast a global or local axis, not {t.name}")
      if amt > 16: raise KernelOptError(f"{opt}: upcast of {amt} is too large")
      self._split(opt.axis, amt, AxisType.UPCAST)
    elif opt.op is OptOps.UNROLL:
      if t is not AxisType.REDUCE: raise KernelOptError(f"{opt}: can only unroll a reduce axis, not {t.name}")
      if amt > 32: raise KernelOptError(f"{opt}: unroll of {amt} is too large")
      self._split(opt.axis, amt, AxisType.UNROLL)
    elif opt.op is OptOps.LOCAL:
      if not self.renderer.has_local: raise KernelOptError(f"{opt}: {self.renderer.device} has no local (work-group) axes")
      if t is not AxisType.GLOBAL: raise KernelOptError(f"{opt}: can only make a global axis local")
      self._split(opt.axis, amt, AxisType.LOCAL)
    elif opt.op in (OptOps.GROUP, OptOps.GROUPTOP):
      if not self.renderer.has_shared: raise KernelOptError(f"{opt}: {self.renderer.device} has no shared memory")
      if t is not AxisType.REDUCE: raise KernelOptError(f"{opt}: can only group a reduce axis")
      if self.axes_of(AxisType.GROUP): raise KernelOptError(f"{opt}: one group axis per kernel")
      self._split(opt.axis, amt, AxisType.GROUP, top=opt.op is OptOps.GROUPTOP)
    elif opt.op is OptOps.THREAD:
      if not getattr(self.renderer, "has_threads", False): raise KernelOptError(f"{opt}: {self.renderer.device} has no thread axis")
      if t is not AxisType.GLOBAL or opt.axis != 0 or self.axes_of(AxisType.THREAD): raise KernelOptError(f"{opt}: only the first global axis, once")
      self._split(opt.axis, amt, AxisType.THREAD, top=True)
    else: raise KernelOptError(f"{opt}: not supported yet")
    if self.local_size_prod() > getattr(self.renderer, "local_max_prod", 1024): raise KernelOptError(f"{opt}: work-group too large")
    self.applied_opts.append(opt)

  def _padto(self, opt: Opt, size: int, t: AxisType):
    """Grow an axis to a multiple of `arg` (so it can be split evenly). The extra positions (padded lanes) still run:
    their loads are gated (they read 0, and no memory), their stores are skipped, and the lowerer keeps what they compute
    out of every result: a padded reduce position adds the reduce's identity (`where(valid, x, identity)`, so any
    expression may be padded, x / 0 and log(0) included), and an integer division there divides by 1 (C traps on / 0).
    `pad_st` says which lanes are real."""
    new = -(-size // opt.arg) * opt.arg if opt.arg > 1 else size
    if new == size or new > 2 * size: raise KernelOptError(f"{opt}: padding {size} to {new} does nothing useful")
    if t not in (AxisType.GLOBAL, AxisType.REDUCE): raise KernelOptError(f"{opt}: can only pad a global or reduce axis, not {t.name}")
    pad = tuple((0, new - size) if i == opt.axis else (0, 0) for i in range(len(self.full_shape)))
    self.sts = [st.pad(tuple(p if st.shape[i] == size else (0, 0) for i, p in enumerate(pad))) for st in self.sts]
    self.pad_st = (self.pad_st or ShapeTracker.from_shape(self.full_shape)).pad(pad)
    self.full_shape = self.full_shape[:opt.axis] + (new,) + self.full_shape[opt.axis + 1:]
    self.applied_opts.append(opt)

  def local_size_prod(self) -> int: return prod(self.full_shape[i] for i in self.axes_of(AxisType.LOCAL, AxisType.GROUP))
  def upcast_size(self) -> int: return prod(self.full_shape[i] for i in self.axes_of(AxisType.UPCAST, AxisType.UNROLL))

  # ---- naming and reporting
  @property
  def name(self) -> str:
    prefix = "r" if self.reduceop is not None else "E"
    return prefix + "".join(f"_{colored(sym_str(s), t.value)}" for s, t in zip(self.full_shape, self.axis_types))
  @property
  def function_name(self) -> str: return to_function_name(self.name)
  def describe(self) -> dict:
    return {"full_shape": list(self.full_shape), "axis_types": [t.name for t in self.axis_types], "opts": [repr(o) for o in self.applied_opts]}

  _PREFIX = {AxisType.GLOBAL: "gidx", AxisType.THREAD: "tidx", AxisType.LOCAL: "lidx", AxisType.GROUP: "lidx", AxisType.REDUCE: "ridx",
             AxisType.UNROLL: "unroll", AxisType.UPCAST: "upcast"}
  def axis_names(self) -> list[str]:
    """The variable name of each axis, as the generated code and the views use it."""
    pre = [self._PREFIX[t] for t in self.axis_types]
    return [f"{p}{pre[:i].count(p)}" for i, p in enumerate(pre)]  # numbered by the axes before it with its prefix

  def view_st(self, view: UOp) -> ShapeTracker: return self.sts[self.views.index(view)]

def arange_axes(k: Kernel) -> set[int]:
  """Reduce axes along which an ARANGE changes. `where(idx == arange, x, 0).sum()` over such an axis folds into a gather
  when lowered (lowerer.fold_onehot), which needs the axis as one plain loop: no UNROLL, GROUP or PADTO there."""
  out: set[int] = set()
  for u in k.ast.toposort():
    if u.op is Ops.ARANGE:
      rs = k.view_st(u.src[0]).real_strides()
      out |= {a for a in k.axes_of(AxisType.REDUCE) if rs[a] != 0}
  return out

def hand_coded_optimizations(k: Kernel) -> list[Opt]:
  """Pick reasonable opts without search; returns the opts applied. Reduce kernels: upcast up to two output axes along
  which some input is broadcast (stride 0), so each loaded value is reused from registers across the upcast block. For a
  matmul this is a register tile: two vectors wide along the contiguous output row, and as many rows (8 at most) as keep
  the accumulators within half the vector registers: 8x32 floats with AVX-512, 4x16 with AVX2, 4x8 with SSE (measured:
  docs/internals.md, "Kernel heuristics"). Then unroll the innermost reduce axis by 4. Elementwise kernels: upcast the
  last axis (whole, if it is tiny). Everything: split the outer loop across CPU threads when there is enough work."""
  if k.reduceop is not None:
    vec, regs = k.renderer.simd_floats, k.renderer.simd_regs
    window = sliding_window_axis(k)
    used: list[frozenset] = []
    if (lanes := partial_sum_lanes(k)) is not None:  # whole vectors of partial sums, a window beside them, 4 rows
      lane, win, rows = lanes
      for o in [Opt(OptOps.UPCAST, lane, 0)] + ([Opt(OptOps.UPCAST, win, 0)] if win is not None else []) + \
               ([Opt(OptOps.UPCAST, rows, 4)] if rows is not None else []): _try(k, o)
    for _ in range(0 if lanes is not None else 2):
      cands = []
      strides = [st.real_strides() if m else None for st, m in zip(k.sts, k.is_mem)]
      for a in k.axes_of(AxisType.GLOBAL):
        if k.is_sym(a): continue
        zeros = frozenset(i for i, rs in enumerate(strides[1:], 1) if rs is not None and rs[a] == 0)
        # prefer axes along which every access moves by a constant: the lanes then share their index math
        linear = all(rs[a] is not None for rs in strides if rs is not None)
        if zeros and zeros not in used and k.full_shape[a] % 4 == 0: cands.append((a, zeros, linear))
      if not cands or k.upcast_size() >= 64: break
      a, zeros, _ = ([c for c in cands if c[2]] or cands)[-1]
      if unwrap(strides[0])[a] == 1:  # the contiguous output row: whole vectors (loads and stores), two of them
        line = [vec, 2]  # two vectors side by side
        if window is not None: line = [min(vec, 16)]  # a sliding window: one vector per row (see below)
        amts = next(c for c in (line, [vec], [8], [4]) if k.full_shape[a] % prod(c) == 0)
      else:  # rows: as many as the accumulator budget allows, leaving a count the threads can share
        vectors, n = max(1, k.upcast_size() // vec), k.full_shape[a]
        fits = [r for r in (8, 4) if r * vectors <= regs // 2 and n % r == 0] or [4]
        amts = [next((r for r in fits if (n // r) % max(1, k.renderer.threads) == 0), fits[0])]
      if all(_try(k, Opt(OptOps.UPCAST, a, amt)) for amt in amts): used.append(zeros)
    reds = [a for a in k.axes_of(AxisType.REDUCE) if not k.is_sym(a) and k.full_shape[a] % 4 == 0 and k.full_shape[a] > 4 and a not in arange_axes(k)]
    if lanes is not None: pass
    elif window is not None and any(k.axis_types[a] is AxisType.UPCAST for a in range(len(k.full_shape))) and \
       _try(k, Opt(OptOps.UNROLL, window, 0)): pass
    elif reds and k.upcast_size() <= 256: _try(k, Opt(OptOps.UNROLL, reds[-1], 4))
    elif not used and (g := k.axes_of(AxisType.GLOBAL)) and not k.is_sym(g[-1]) and k.full_shape[g[-1]] % 4 == 0: _try(k, Opt(OptOps.UPCAST, g[-1], 4))
  elif (globals_ := k.axes_of(AxisType.GLOBAL)) and not k.is_sym(globals_[-1]):
    last = globals_[-1]
    s = k.full_shape[last]
    if s <= 8 and s * k.upcast_size() <= 16: _try(k, Opt(OptOps.UPCAST, last, 0))
    elif s % 4 == 0: _try(k, Opt(OptOps.UPCAST, last, 4))
  # spread the outer loop over cores when there is enough work
  if getattr(k.renderer, "has_threads", False) and (g := k.axes_of(AxisType.GLOBAL)) and g[0] == 0 and not k.is_sym(0):
    n = k.renderer.threads
    if prod(smax(s) for s in k.full_shape) >= 1 << 16 and n > 1:
      for t in range(n, 1, -1):
        if k.full_shape[0] % t == 0 and _try(k, Opt(OptOps.THREAD, 0, t)): break
  return k.applied_opts

def sliding_window_axis(k: Kernel) -> int | None:
  """A convolution's kx: a short reduce axis (2-8) along which an input moves by 1, as it does along the contiguous
  output row (out[p] reads in[p + kx]). Unrolling it whole puts in[p + 0..kx-1 + lane] side by side, which the C
  compiler turns into unaligned vector loads (unrolling cin by 4 instead: docs/internals.md, "Kernel heuristics")."""
  strides = [st.real_strides() if m else None for st, m in zip(k.sts, k.is_mem)]
  out = strides[0]
  if out is None: return None
  rows = [a for a in k.axes_of(AxisType.GLOBAL) if out[a] == 1 and not k.is_sym(a)]
  for a in reversed(k.axes_of(AxisType.REDUCE)):
    if k.is_sym(a) or not 2 <= k.full_shape[a] <= 8 or a in arange_axes(k): continue
    if any(rs is not None and rs[a] == 1 and any(rs[r] == 1 for r in rows) for rs in strides[1:]): return a
  return None

def partial_sum_lanes(k: Kernel) -> tuple[int, int | None, int | None] | None:
  """A reduce whose contiguous output axis of 8 or 16 is a set of partial sums: the output and every input move by 1 along
  it (conv2d's weight gradient over rows, renderer/layout.py). Returns (lane axis, window axis, row axis): the window is
  a short output axis (2-8) along which one input moves by 1 and another is broadcast (kx: the same rows, shifted), the
  row axis one (divisible by 4) along which the window's input is broadcast (the output channel). Measured against other
  tiles: docs/internals.md, "Kernel heuristics"."""
  strides = [st.real_strides() if m else None for st, m in zip(k.sts, k.is_mem)]
  out, ins = strides[0], [rs for rs in strides[1:] if rs is not None]
  if out is None or not ins: return None
  glob = [a for a in k.axes_of(AxisType.GLOBAL) if not k.is_sym(a)]
  lane = next((a for a in reversed(glob) if out[a] == 1 and k.full_shape[a] in (8, 16) and all(rs[a] == 1 for rs in ins)), None)
  if lane is None: return None
  win = next((a for a in glob if a != lane and 2 <= k.full_shape[a] <= 8 and any(rs[a] == 1 for rs in ins) and any(rs[a] == 0 for rs in ins)), None)
  moving = [rs for rs in ins if win is not None and rs[win] == 1]
  rows = next((a for a in glob if a not in (lane, win) and k.full_shape[a] % 4 == 0 and moving and all(rs[a] == 0 for rs in moving)), None)
  return lane, win, rows

def _try(k: Kernel, opt: Opt) -> bool:
  try: k.apply_opt(opt)
  except KernelOptError: return False
  return True

def all_opt_candidates(k: Kernel) -> list[Opt]:
  """Every single action that could be applied next (the moves of a search)."""
  out, keep = [], arange_axes(k)
  for i, (s, t) in enumerate(zip(k.full_shape, k.axis_types)):
    if i in keep or k.is_sym(i): continue
    if t in (AxisType.GLOBAL, AxisType.REDUCE) and s > 4 and s % 4 and not any(o.op is OptOps.PADTO for o in k.applied_opts):
      out.append(Opt(OptOps.PADTO, i, 4))
    if t is AxisType.GLOBAL:
      out += [Opt(OptOps.UPCAST, i, a) for a in (2, 3, 4, 8, 16) if s % a == 0 and s > a]
      if k.renderer.has_local: out += [Opt(OptOps.LOCAL, i, a) for a in (2, 4, 8, 16, 32) if s % a == 0]
      if i == 0 and getattr(k.renderer, "has_threads", False) and k.renderer.threads > 1 and s % k.renderer.threads == 0:
        out.append(Opt(OptOps.THREAD, 0, k.renderer.threads))
    if t is AxisType.REDUCE:
      out += [Opt(OptOps.UNROLL, i, a) for a in (2, 4, 8, 16) if s % a == 0 and s > a]
      if 1 < s <= 8: out.append(Opt(OptOps.UNROLL, i, 0))
      if getattr(k.renderer, "has_shared", False): out += [Opt(OptOps.GROUPTOP, i, a) for a in (8, 16, 32) if s % a == 0]
  return out
