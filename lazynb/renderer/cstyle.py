"""C-family source from linearized UOps. `CStyleLanguage` is the generic base (its global ids arrive as int
arguments, so a runtime can loop over them); `ClangRenderer` writes the CPU's loops itself.

Each UOp becomes a statement or, when it is used once, an inline sub-expression; loads are named valN,
accumulators accN, shared values aluN. The renderer also records which UOps each source line came from,
so a viewer can link the two.
"""
from __future__ import annotations
import math, re
from typing import Callable
from lazynb.dtype import DType, dtypes, truncate
from lazynb.helpers import CHECK
from lazynb.uop.ops import UOp, Ops, GroupOp, sym_str
from lazynb.renderer import Renderer, rendering, needs_wide_index, CHECK_HEAD, workitem_ids
from lazynb.renderer.lanes import LaneGroup, lane_groups

_C_WORDS = set("""auto break case char const continue default do double else enum extern float for goto if inline int long register restrict
return short signed sizeof static struct switch typedef union unsigned void volatile while half bool kernel global local constant
blockIdx threadIdx blockDim gridDim get_global_id get_local_id get_group_id INFINITY NAN""".split())

class CStyleLanguage(Renderer):
  global_style = "args"
  lane_vectors = False  # write lane groups of accumulators as vectors (lanes.py; the C device turns it on for gcc)
  kernel_prefix = "void "
  buffer_prefix = ""
  buffer_suffix = " restrict"
  arg_int_prefix = "const int"
  wide_index = "long long"  # index math of kernels whose indices do not all fit in 32 bits
  smem_prefix = ""
  barrier = ""
  code_for_workitem: dict[str, Callable] = {}
  extra_header = ""
  type_map: dict[DType, str] = {dtypes.bool: "_Bool", dtypes.int8: "signed char", dtypes.uint8: "unsigned char", dtypes.int16: "short",
                                dtypes.uint16: "unsigned short", dtypes.int32: "int", dtypes.uint32: "unsigned int",
                                dtypes.int64: "long long", dtypes.uint64: "unsigned long long", dtypes.float16: "_Float16",
                                dtypes.float32: "float", dtypes.float64: "double"}
  infinity, nan = "__builtin_inff()", '__builtin_nanf("")'
  # bfloat16 (and float16 where the compiler lacks it) is emulated: 16 bits in memory, float in registers, every
  # operation rounded back. emu_fns: the functions that read and write the 16 bits; emu_header: their source.
  emu_fns: dict[DType, tuple[str, str]] = {dtypes.bfloat16: ("lz_bf2f", "lz_f2bf"), dtypes.float16: ("lz_h2f", "lz_f2h")}
  emu_storage = "unsigned short"
  code_for_op: dict[Ops, Callable] = {
    Ops.NEG: lambda x, dt: f"(!{x})" if dt is dtypes.bool else f"(-{x})",
    Ops.EXP2: lambda x, dt: f"__builtin_exp2{_f(dt)}({x})", Ops.LOG2: lambda x, dt: f"__builtin_log2{_f(dt)}({x})",
    Ops.SIN: lambda x, dt: f"__builtin_sin{_f(dt)}({x})", Ops.SQRT: lambda x, dt: f"__builtin_sqrt{_f(dt)}({x})",
    Ops.TRUNC: lambda x, dt: f"__builtin_trunc{_f(dt)}({x})",
    Ops.RECIP: lambda x, dt: f"(1.0f/{x})",
    Ops.ADD: lambda a, b, dt: f"({a}+{b})", Ops.MUL: lambda a, b, dt: f"({a}*{b})", Ops.IDIV: lambda a, b, dt: f"({a}/{b})",
    Ops.MOD: lambda a, b, dt: f"__builtin_fmod{_f(dt)}({a},{b})" if dtypes.is_float(dt) else f"({a}%{b})",
    # MAX propagates NaN from either side (a NaN `a` fails a>b, so it needs its own test), as the PYTHON device does;
    # written as two selects of one compare each, gcc makes it a max and a blend, not branches (one per element)
    # (not for 16-bit floats: gcc 12's blend of _Float16 is a masked vmovsh, which its assembler rejects)
    Ops.MAX: lambda a, b, dt: f"(!({a}=={a})?{a}:(({a}>{b})?{a}:{b}))" if _f32(dt) else
                              f"((({a}>{b})||({a}!={a}))?{a}:{b})" if dtypes.is_float(dt) else f"(({a}>{b})?{a}:{b})",
    Ops.CMPLT: lambda a, b, dt: f"({a}<{b})", Ops.CMPNE: lambda a, b, dt: f"({a}!={b})",
    Ops.AND: lambda a, b, dt: f"({a}&{b})", Ops.OR: lambda a, b, dt: f"({a}|{b})", Ops.XOR: lambda a, b, dt: f"({a}^{b})",
    Ops.SHL: lambda a, b, dt: f"({a}<<{b})", Ops.SHR: lambda a, b, dt: f"({a}>>{b})",
    Ops.WHERE: lambda c, a, b, dt: f"({c}?{a}:{b})", Ops.MULACC: lambda a, b, c, dt: f"(({a}*{b})+{c})"}

  exact_emu_ops = {Ops.NEG, Ops.MAX, Ops.WHERE, Ops.TRUNC}  # their result is one of their (16-bit) inputs, or exact
  # LAZYNB_CHECK=1: before each access to a buffer, its index is compared with the buffer's size (lz_chk[CHECK_HEAD + n],
  # filled from the real Buffers at each run); the first failure is recorded in lz_chk[0..3] by lz_oob. "return": the
  # kernel (or this thread's share of it) stops there; "mask": the access is skipped and the kernel goes on (work-items
  # that share a barrier must all reach it). check_header: lz_oob, claiming the slot atomically (threads, work-items).
  check_style = "return"
  check_header = """static void lz_oob(long long* c, int b, long long i, int store) {
  if (__sync_bool_compare_and_swap(c, 0LL, 1LL)) { c[1] = b; c[2] = i; c[3] = store; }
}
"""

  # what one render() call decides lives per thread (lazynb.renderer.rendering), not on the shared renderer
  @property
  def emu(self) -> frozenset:
    """The dtypes emulated in the kernel this thread is rendering."""
    return getattr(rendering, "emu", frozenset())
  @property
  def index_type(self) -> str:
    """The C type of index math in the kernel this thread is rendering: int, or wide_index when indices pass 2^31."""
    return getattr(rendering, "index_type", "int")
  def emulated(self, uops: list[UOp]) -> frozenset:
    """Which dtypes of these uops to emulate: bfloat16 always (no C type for it everywhere)."""
    return frozenset({dtypes.bfloat16}) if any(_is(u.dtype, dtypes.bfloat16) for u in uops) else frozenset()
  def emu_header(self, emu: frozenset) -> str:
    return EMU_BITS_C + (HALF_EMULATION_C if dtypes.float16 in emu else "") + (BF16_EMULATION_C if dtypes.bfloat16 in emu else "")
  def _round(self, x: str, dt: DType) -> str:
    load, store = self.emu_fns[dt]
    return f"{load}({store}({x}))"
  def render_dtype(self, dt: DType) -> str:
    if dt is dtypes.index: return self.index_type
    if dt in self.emu: return "float"
    if dt not in self.type_map: raise NotImplementedError(f"{type(self).__name__} cannot render {dt}")
    return self.type_map[dt]
  def render_buffer_dtype(self, dt: DType) -> str: return self.emu_storage if dt in self.emu else self.render_dtype(dt)
  def render_const(self, x, dt: DType) -> str:
    if dt in self.emu and math.isfinite(x): return self.render_const(truncate(dt, x), dtypes.float32)  # the 16-bit value
    if dtypes.is_float(dt):
      if math.isnan(x): s = self.nan
      elif math.isinf(x): s = ("-" if x < 0 else "") + self.infinity
      else: s = (repr(float(x)) if "e" in repr(float(x)) or "." in repr(float(x)) else f"{float(x)}.0") + _f(dt)
      return s if dt in (dtypes.float32, dtypes.float64) or dt in self.emu else f"(({self.render_dtype(dt)}){s})"
    if dt is dtypes.bool: return "1" if x else "0"
    if dt in (dtypes.int64, dtypes.uint64, dtypes.uint32):
      suffix = {dtypes.int64: "ll", dtypes.uint64: "ull", dtypes.uint32: "u"}[dt]
      return f"{int(x)}{suffix}" if x != -2**63 else "(-9223372036854775807ll-1)"
    if dt.itemsize < 4: return f"(({self.render_dtype(dt)}){int(x)})"
    return str(int(x)) if x != -2**31 else "(-2147483647-1)"
  def render_cast(self, x: str, dt: DType) -> str:
    return self._round(f"(float)({x})", dt) if dt in self.emu else f"(({self.render_dtype(dt)})({x}))"
  def render_bitcast(self, x: str, dt: DType, src: DType) -> str:
    if src in self.emu: x = f"{self.emu_fns[src][1]}({x})"  # reinterpret the 16 stored bits, not the float
    frm = self.emu_storage if src in self.emu else self.render_dtype(src)
    if dt in self.emu: return f"{self.emu_fns[dt][0]}({self._bitcast(x, self.emu_storage, frm)})"
    return self._bitcast(x, self.render_dtype(dt), frm)
  def _bitcast(self, x: str, ctype: str, frm: str) -> str: return f"__builtin_bit_cast({ctype}, {x})"
  def render_alu(self, op: Ops, srcs: list[str], dt: DType) -> str:
    if dt in self.emu and op not in self.exact_emu_ops:
      if op is Ops.MULACC: return self._round(f"{self._round(f'{srcs[0]}*{srcs[1]}', dt)}+{srcs[2]}", dt)  # two roundings, as numpy
      return self._round(self.render_alu(op, srcs, dtypes.float32), dt)
    if op is Ops.RECIP and dt is not dtypes.float32: return f"({self.render_const(1, dt)}/{srcs[0]})"
    return self.code_for_op[op](*srcs, dt)
  # how a value of dtype dt is read from / written to memory (emulated types are kept in 16 bits)
  def render_load(self, ptr: str, dt: DType) -> str: return f"{self.emu_fns[dt][0]}({ptr})" if dt in self.emu else ptr
  def render_store(self, val: str, dt: DType) -> str: return f"{self.emu_fns[dt][1]}({val})" if dt in self.emu else val
  def render_float_to_int(self, x: str, dt: DType) -> str:
    """C leaves float->int casts of NaN, inf and out-of-range values undefined: saturate to the int range, NaN -> 0
    (the rule cast_scalar follows, so folded and run casts agree). `x` must be a name: it is read four times."""
    lo, hi = dtypes.min(dt), dtypes.max(dt)
    return (f"(({x}!={x})?{self.render_const(0, dt)}:({x}>={float(hi + 1)!r}f)?{self.render_const(hi, dt)}:"
            f"({x}<={float(lo)!r}f)?{self.render_const(lo, dt)}:{self.render_cast(x, dt)})")
  def render_kernel(self, name: str, body: list[str], bufs: list[tuple[str, DType, bool]], specials: list[UOp], vars_: tuple = ()) -> str:
    params = [f"{self.buffer_prefix}{self.render_buffer_dtype(dt)}*{self.buffer_suffix} {n}" for n, dt, _ in bufs]
    for v in vars_:  # a variable named like a kernel's own names (ridx0, data1) or a C word would silently shadow it
      if re.fullmatch(r"(data|val|acc|accv|alu|gidx|lidx|ridx|tidx|unused|temp|upcast|unroll)\d+|lz_\w*", v.arg[0]) or v.arg[0] in _C_WORDS:
        raise ValueError(f"variable name {v.arg[0]!r} clashes with a name in the generated kernel; rename the Variable")
    params += [f"{self.arg_int_prefix} {v.arg[0]}" for v in vars_]  # symbolic sizes: one int argument per variable
    ids = [u.arg[0] for u in (workitem_ids(specials, "g") if self.global_style == "args" else []) + workitem_ids(specials, "t")]
    if self.global_style == "args": ids += [f"unused{i}" for i in range(3 - len(ids))]  # always 3: the runtime passes a 3-D grid point
    params += [f"{self.arg_int_prefix} {n}" for n in ids]
    if getattr(rendering, "checked", False):
      self.line_map[:0] = [[] for _ in self.check_header.splitlines()]
      header = self.check_header
    else: header = ""
    if self.emu and (emu := self.emu_header(self.emu)):
      self.line_map[:0] = [[] for _ in emu.splitlines()]  # the viewer maps source lines to UOps
      header = emu + header
    return self.extra_header + header + f"{self.kernel_prefix}{name}({', '.join(params)}) {{\n" + "\n".join(body) + "\n}"
  def _accumulate(self, u: UOp, r: dict[UOp, str], uses: dict[UOp, int]) -> str:
    """The new value of an accumulator. An unrolled sum arrives as acc + (((t0+t1)+t2)+t3): it is written
    (((acc+t0)+t1)+t2)+t3 instead, the order the plain loop adds in, so each product becomes one fused
    multiply-add into the accumulator (-ffp-contract) and no separate multiply and add are left over.
    Only for a chain of ADDs that exists just for this update (each used once, written inline)."""
    acc, val = u.src
    if val.op is not Ops.ADD or val.src[0] is not acc or not dtypes.is_float(u.dtype): return r[val]
    terms, x = [], val.src[1]
    while x.op is Ops.ADD and uses.get(x, 0) == 1 and r[x].startswith("("):  # inline: its text is the expression
      terms.append(x.src[1])
      x = x.src[0]
    if not terms: return r[val]
    expr = r[acc]
    for t in [x] + terms[::-1]: expr = self.render_alu(Ops.ADD, [expr, r[t]], u.dtype)
    return expr
  # gcc 12 compiles a select whose condition needs two flag tests (x==y, x!=y, an OR of two compares) with branches;
  # on data with a random sign or a 1-in-4 maximum they mispredict often (its relu and max-pool kernels ran 3-10x
  # slower than clang's). These forms compute the same with one compare per select, which it makes blends:
  def _branch_free(self, u: UOp, r: dict[UOp, str]) -> str | None:
    """`(c<x)|(x!=x)` (relu's "above c or NaN", c a constant, not NaN) as `!(x<=c)` (`(x<c)|(x!=x)` as `!(x>=c)`);
    `(a!=b)!=1` or `(a!=b)^1` (a==b for floats) as `(a<=b)&(a>=b)`; `cond?1.0f:0.0f` as `(float)(cond)`. None: no such form."""
    if u.op is Ops.OR:
      cmp, nan = sorted(u.src, key=lambda s: s.op is Ops.CMPNE)
      if cmp.op is not Ops.CMPLT or nan.op is not Ops.CMPNE or nan.src[0] is not nan.src[1] or not _f32(nan.src[0].dtype): return None
      x, (lo, hi) = nan.src[0], cmp.src
      c, test = (lo, "<=") if hi is x else (hi, ">=") if lo is x else (None, "")
      return None if c is None or c.op is not Ops.CONST or c.arg != c.arg else f"(!({r[x]}{test}{r[c]}))"
    if _float_eq(u): return f"(({r[u.src[0].src[0]]}<={r[u.src[0].src[1]]})&({r[u.src[0].src[0]]}>={r[u.src[0].src[1]]}))"
    if u.op is Ops.WHERE and _f32(u.dtype) and all(s.op is Ops.CONST for s in u.src[1:]) \
       and (u.src[1].arg, u.src[2].arg) == (1, 0) and math.copysign(1, u.src[2].arg) > 0:  # (not -0.0)
      return self.render_cast(r[u.src[0]], u.dtype)
    return None
  def _vector_update(self, g: LaneGroup, name: str, r: dict[UOp, str], uses: dict[UOp, int]) -> str:
    """The update of a lane group as one vector expression: lane 0's, with each shifted load a vector load from its
    address, and a value the same in every lane written as the scalar (C widens it to every lane)."""
    first = g.assigns[0]
    rv: dict[UOp, str] = {first.src[0]: name}
    def vec(x: UOp) -> str:
      if x not in rv:
        if g.kinds.get(x): rv[x] = f"(*(lz_v{len(g.accs)}*){r[x.src[0]]})"
        elif x not in g.inside: rv[x] = r[x]
        else: rv[x] = self.render_alu(x.op, [vec(s) for s in x.src], x.dtype)
      return rv[x]
    vec(first.src[1])
    return self._accumulate(first, rv, uses)
  def render_range(self, u: UOp) -> list[str]:
    name = u.arg[2]
    return [f"for ({self.index_type} {name} = 0; {name} < {sym_str(u.arg[1], c=True)}; {name}++) {{"]

  def render(self, name: str, uops: list[UOp]) -> str:
    rendering.emu = self.emulated(uops)
    self.line_map = []
    wide = needs_wide_index(uops)
    rendering.index_type = self.wide_index if wide else "int"
    pos = {u: i for i, u in enumerate(uops)}
    uses: dict[UOp, int] = {}
    for u in uops:
      for s in u.src: uses[s] = uses.get(s, 0) + 1
    must_name = {s for u in uops if u.op is Ops.MAX or u.op is Ops.CAST and _float_to_int(u) for s in u.src}
    must_name |= {s for u in uops if _float_eq(u) for s in u.src[0].src}  # read twice by _branch_free
    # an index i+k that only addresses memory is written into each address (buf+i+k, below): no variable of its own
    in_address = {u.src[1] for u in uops if u.op is Ops.INDEX and _offset(u.src[1])} - {s for u in uops if u.op is not Ops.INDEX for s in u.src}
    # accumulators written as vectors (lanes.py): an accumulator is lane l of a vector; its group is updated in one
    # statement (at the group's last update); a load only those statements read is left out (they load vectors)
    widths = (self.simd_floats, self.simd_floats // 2) if self.simd_floats >= 8 else (self.simd_floats,)
    groups = lane_groups(uops, widths, uses) if self.lane_vectors else []
    rendering.lanes = sorted({len(g.accs) for g in groups}, reverse=True)
    group_of = {x: g for g in groups for x in g.accs + g.assigns}
    unread: set[UOp] = set()
    if groups:
      inside = {x for g in groups for x in g.inside}
      unread = {u for u in uops if u.op is Ops.LOAD and not any(g.kinds.get(u) is False for g in groups)}
      unread -= {s for u in uops if u not in inside for s in u.src}
    vec_names: dict[int, str] = {}
    r: dict[UOp, str] = {}
    members: dict[UOp, list[int]] = {}  # which uops an inline expression is made of
    nest: dict[UOp, int] = {}           # nesting depth of an inline expression
    body: list[str] = []
    depth = 1
    counters: dict[str, int] = {}
    def fresh(prefix: str) -> str:
      counters[prefix] = counters.get(prefix, 0) + 1
      return f"{prefix}{counters[prefix] - 1}"
    def emit(line: str, us: list[int]):
      body.append("  " * depth + line)
      self.line_map.append(us)
    def mem(u: UOp) -> list[int]: return sorted(set([pos[u]] + [m for s in u.src if s in members for m in members[s]]))
    bufs: list[tuple[str, DType, bool]] = []
    specials = [u for u in uops if u.op is Ops.SPECIAL]
    dim = {u: i for k in "gl" for i, u in enumerate(workitem_ids(specials, k))}
    stored = {u.src[0].src[0] for u in uops if u.op is Ops.STORE}
    rendering.checked = check = bool(CHECK)
    ok: dict[UOp, str] = {}  # check_style "mask": an access's in-bounds test, by its INDEX
    def guard(u: UOp):
      """LAZYNB_CHECK: the test of one load or store's index against its buffer's size, before the access."""
      idx = u.src[0]
      i, gate = f"(({self.render_dtype(dtypes.int64)})({r[idx.src[1]]}))", r[idx.src[2]] if len(idx.src) > 2 else None
      inside = f"(({self.render_dtype(dtypes.uint64)}){i}<({self.render_dtype(dtypes.uint64)})lz_chk[{CHECK_HEAD + idx.src[0].arg}])"
      fail = f"lz_oob(lz_chk, {idx.src[0].arg}, {i}, {int(u.op is Ops.STORE)});"
      if self.check_style == "return": emit(f"if ({f'({gate})&&' if gate else ''}!{inside}) {{ {fail} return; }}", [pos[u]])
      else:
        ok[idx] = fresh("lz_ok")
        emit(f"int {ok[idx]} = {inside};", [pos[u]])
        emit(f"if ({f'({gate})&&' if gate else ''}!{ok[idx]}) {{ {fail} }}", [pos[u]])
    self.line_map.append([])  # the signature line
    for u in uops:
      op = u.op
      if check and op in (Ops.LOAD, Ops.STORE) and u.src[0].src[0].op is Ops.DEFINE_GLOBAL: guard(u)
      if op is Ops.DEFINE_GLOBAL:
        r[u] = f"data{u.arg}"
        bufs.append((r[u], u.dtype.base, u in stored))
      elif op is Ops.SPECIAL:
        r[u] = u.arg[0]
        if self.global_style == "special" and not u.arg[0].startswith("t"):
          emit(f"{self.index_type} {u.arg[0]} = {self.code_for_workitem[u.arg[0][0]](dim[u])}; /* {sym_str(u.arg[1])} */", [pos[u]])
        elif wide: r[u] = f"(({self.index_type}){u.arg[0]})"  # an int argument: widen before multiplying
      elif op is Ops.DEFINE_VAR: r[u] = u.arg[0] if not wide else f"(({self.index_type}){u.arg[0]})"
      elif op is Ops.DEFINE_LOCAL:
        r[u] = u.arg[0]
        emit(f"{self.smem_prefix}{self.render_dtype(u.dtype.base)} {u.arg[0]}[{u.arg[1]}];", [pos[u]])
      elif op is Ops.BARRIER: emit(self.barrier, [pos[u]])
      elif op is Ops.RANGE:
        r[u] = u.arg[2]
        for line in self.render_range(u): emit(line, [pos[u]])
        depth += 1
      elif op is Ops.ENDRANGE:
        depth -= 1
        emit("}", [pos[u]])
      elif op is Ops.CONST: r[u] = self.render_const(u.arg, u.dtype)
      elif op is Ops.INDEX:
        # buf+(i+3) as buf+i+3, pointer arithmetic: with -fwrapv, (i+3) is int math that may wrap, so gcc gave each
        # offset load its own pointer (40 in a conv's inner loop, spilled) instead of one base and displacements
        i = u.src[1]
        if _offset(i): r[u] = f"({r[u.src[0]]}+{r[i.src[0]]}{'' if r[i.src[1]][0] == '-' else '+'}{r[i.src[1]]})"
        else: r[u] = f"({r[u.src[0]]}+{r[i]})"
        members[u] = mem(u)
      elif op is Ops.LOAD and u in unread: r[u] = "/* read as a vector */"
      elif op is Ops.LOAD:
        idx = u.src[0]
        ptr = f"*{r[idx]}"
        if idx.src[0].op is Ops.DEFINE_GLOBAL: ptr = self.render_load(ptr, u.dtype)  # local memory holds registers' type
        val = f"({r[idx.src[2]]}?{ptr}:{self.render_const(0, u.dtype)})" if len(idx.src) > 2 else ptr
        if idx in ok: val = f"({ok[idx]}?{val}:{self.render_const(0, u.dtype)})"
        r[u] = fresh("val")
        emit(f"{self.render_dtype(u.dtype)} {r[u]} = {val};", mem(u) + members.get(idx, []))
      elif op is Ops.STORE:
        idx, val = u.src
        line = f"*{r[idx]} = {self.render_store(r[val], val.dtype) if idx.src[0].op is Ops.DEFINE_GLOBAL else r[val]};"
        if len(idx.src) > 2: line = f"if ({r[idx.src[2]]}) {{ {line} }}"
        if idx in ok: line = f"if ({ok[idx]}) {{ {line} }}"
        emit(line, sorted(set(mem(u) + members.get(idx, []) + members.get(val, []))))
      elif op is Ops.DEFINE_ACC and u in group_of:
        g = group_of[u]
        if id(g) not in vec_names:
          vec_names[id(g)] = fresh("accv")
          emit(f"lz_v{len(g.accs)} {vec_names[id(g)]} = {{0}};", [pos[a] for a in g.accs])
        r[u] = f"{vec_names[id(g)]}[{g.accs.index(u)}]"
      elif op is Ops.ASSIGN and u in group_of:
        r[u] = r[u.src[0]]
        if u is (g := group_of[u]).assigns[-1]:
          emit(f"{vec_names[id(g)]} = {self._vector_update(g, vec_names[id(g)], r, uses)};",
               sorted({pos[a] for a in g.assigns} | {m for a in g.assigns for m in members.get(a.src[1], [])}))
      elif op is Ops.DEFINE_ACC:
        r[u] = fresh("acc")
        emit(f"{self.render_dtype(u.dtype)} {r[u]} = {r[u.src[0]]};", [pos[u]])
      elif op is Ops.ASSIGN:
        r[u] = r[u.src[0]]
        emit(f"{r[u]} = {self._accumulate(u, r, uses)};", sorted(set([pos[u]] + members.get(u.src[1], []))))
      elif op in GroupOp.ALU or op is Ops.CAST or op is Ops.BITCAST:
        srcs = [r[s] for s in u.src]
        if op is Ops.CAST: expr = self.render_float_to_int(srcs[0], u.dtype) if _float_to_int(u) else self.render_cast(srcs[0], u.dtype)
        elif op is Ops.BITCAST: expr = self.render_bitcast(srcs[0], u.dtype, u.src[0].dtype)
        elif op in (Ops.OR, Ops.CMPNE, Ops.XOR, Ops.WHERE) and (free := self._branch_free(u, r)): expr = free
        else: expr = self.render_alu(op, srcs, u.dtype)
        # C computes on narrow ints (uchar) in int: an inlined 217*163 stays 35371 unless cast back to wrap like numpy
        if op in GroupOp.ALU and dtypes.is_int(u.dtype) and u.dtype.itemsize < 4: expr = self.render_cast(expr, u.dtype)
        nest[u] = 1 + max((nest.get(s, 0) for s in u.src), default=0)
        if (uses.get(u, 0) > 1 or u in must_name or nest[u] > 64) and u not in in_address:  # long inline chains overflow C's nesting limit
          nest[u] = 0
          r[u] = fresh("alu")
          emit(f"{self.render_dtype(u.dtype)} {r[u]} = {expr};", mem(u))
          members[u] = [pos[u]]
        else:
          r[u] = expr
          members[u] = mem(u)
      else: raise NotImplementedError(f"{type(self).__name__} cannot render {op}")
    if check: bufs.append(("lz_chk", dtypes.int64, True))  # sizes in, the first failure out (see check_style)
    return self.render_kernel(name, body, bufs, specials, tuple(u for u in uops if u.op is Ops.DEFINE_VAR))

# float16 without the compiler's _Float16: 16 bits in memory, float in registers. The conversions follow IEEE (and
# numpy): round to nearest even, subnormals, overflow to inf, NaN payloads kept (a NaN never becomes inf).
# half -> float: a subnormal half is m * 2^-24, exact in float; otherwise move the exponent from bias 15 to bias 127.
# float -> half: below 2^-14 the half is a multiple of 2^-24, and adding 0.5 (whose float spacing is 2^-24) makes the
# FPU round to that grid; above it, add 0xfff plus the lowest kept bit, so the 13 dropped bits round to even.
# Branch-free selects and memcpy bit casts let clang vectorize a loop over them (6x faster than a union here).
EMU_BITS_C = r"""static inline unsigned int lz_fbits(float f) { unsigned int u; __builtin_memcpy(&u, &f, 4); return u; }
static inline float lz_bitsf(unsigned int u) { float f; __builtin_memcpy(&f, &u, 4); return f; }
"""
HALF_EMULATION_C = r"""static inline float lz_h2f(unsigned short h) {
  unsigned int e = (h >> 10) & 31u, m = h & 1023u, s = (unsigned int)(h & 0x8000u) << 16;
  unsigned int n = e == 31 ? 0x7f800000u | m << 13 : (e + 112u) << 23 | m << 13;
  return lz_bitsf((e == 0 ? lz_fbits((float)m * 0x1p-24f) : n) | s);
}
static inline unsigned short lz_f2h(float f) {
  unsigned int x = lz_fbits(f), a = x & 0x7fffffffu, nan = 0x7c00u | (a >> 13 & 1023u);
  unsigned int sub = lz_fbits(lz_bitsf(a) + 0.5f) - 0x3f000000u;
  unsigned int h = a > 0x7f800000u ? (nan == 0x7c00u ? 0x7c01u : nan) : a >= 0x477ff000u ? 0x7c00u
                 : a < 0x38800000u ? sub : (a - 0x38000000u + 0xfffu + (a >> 13 & 1u)) >> 13;
  return (unsigned short)(h | (x >> 16 & 0x8000u));
}
"""
# bfloat16 is the upper half of a float: widening is a shift; narrowing rounds the dropped 16 bits to nearest even
# (adding 0x7fff plus the lowest kept bit carries exactly when they are above half, or half and the kept bit is odd;
# a carry out of the mantissa correctly bumps the exponent, up to inf). A NaN keeps its top bits and is made quiet.
BF16_EMULATION_C = r"""static inline float lz_bf2f(unsigned short b) { return lz_bitsf((unsigned int)b << 16); }
static inline unsigned short lz_f2bf(float f) {
  unsigned int x = lz_fbits(f);
  return (unsigned short)((x & 0x7fffffffu) > 0x7f800000u ? (x >> 16) | 0x40u : (x + 0x7fffu + (x >> 16 & 1u)) >> 16);
}
"""


def _is(dt: DType, want: DType) -> bool: return dt is want or getattr(dt, "base", None) is want
def _f(dt: DType) -> str: return "" if dt is dtypes.float64 else "f"  # C's float or double math function
def _float_eq(u: UOp) -> bool:
  """(a!=b)!=True or (a!=b)^True over floats: a==b."""
  return u.op in (Ops.CMPNE, Ops.XOR) and u.src[0].op is Ops.CMPNE and u.src[1].op is Ops.CONST and u.src[1].arg is True and _f32(u.src[0].src[0].dtype)
def _offset(i: UOp) -> bool: return i.op is Ops.ADD and i.src[1].op is Ops.CONST  # an index i+k
def _f32(dt: DType) -> bool: return dt in (dtypes.float32, dtypes.float64)  # the branch-free forms: not for 16-bit floats
def _float_to_int(u: UOp) -> bool: return dtypes.is_float(u.src[0].dtype) and dtypes.is_int(u.dtype)

class ClangRenderer(CStyleLanguage):
  """C for the CPU: the kernel walks its own output with for-loops. A THREAD axis becomes a `tidx0` argument:
  the runtime calls the kernel once per core with its id.

  float16 follows numpy: every half operation is rounded to half right away, so an inline chain such as (a+b)*c
  never keeps float's extra precision (gcc computes _Float16 in float unless told to round). `half_native()`, set
  by the CPU device, says whether the compiler's _Float16 can do it; if not, half is emulated (HALF_EMULATION_C).
  It is asked only when a kernel touches float16, so the compiler probe behind it runs only when needed."""
  global_style = "loop"
  has_threads = True
  half_native: Callable[[], bool] = staticmethod(lambda: True)
  def emulated(self, uops: list[UOp]) -> frozenset:
    half = any(_is(u.dtype, dtypes.float16) for u in uops) and not self.half_native()
    return super().emulated(uops) | ({dtypes.float16} if half else set())
  def _bitcast(self, x: str, ctype: str, frm: str) -> str:  # gcc has __builtin_bit_cast only in C++; a union is C's
    return f"(((union {{ {frm} from; {ctype} to; }}){{{x}}}).to)"
  def render_kernel(self, name: str, body: list[str], bufs: list[tuple[str, DType, bool]], specials: list[UOp], vars_: tuple = ()) -> str:
    # The thread id arrives as an argument; clang cannot bound it, so with -fwrapv it could not prove that lane i+1 of
    # an index built from it is next to lane i, and left a whole kernel scalar (the course CNN's 5x5 conv: 320 scalar
    # FMAs, 7x slower with two threads than with one). Reduced modulo the thread count, the id has a known range.
    tids = [u.arg for u in specials if u.arg[0].startswith("t")]
    decls = [f"  const int {t} = (int)((unsigned){t}_arg % {n}u);" for t, n in tids]
    self.line_map[1:1] = [[] for _ in decls]  # after the signature line
    src = super().render_kernel(name, decls + body, bufs, specials, vars_)
    for t, _ in tids: src = src.replace(f"const int {t})", f"const int {t}_arg)", 1)
    if lanes := getattr(rendering, "lanes", []):  # GCC's vector types (clang reads them too): n floats, read at any float's address
      self.line_map[:0] = [[] for _ in lanes]
      src = "".join(f"typedef float lz_v{n} __attribute__((vector_size({4 * n}), aligned(4), may_alias));\n" for n in lanes) + src
    return src
  def render_alu(self, op: Ops, srcs: list[str], dt: DType) -> str:
    if dt is not dtypes.float16 or dt in self.emu or op in self.exact_emu_ops: return super().render_alu(op, srcs, dt)
    if op is Ops.MULACC: return f"((_Float16)(((_Float16)({srcs[0]}*{srcs[1]}))+{srcs[2]}))"  # two roundings, as numpy's a*b+c
    return f"((_Float16)({super().render_alu(op, srcs, dt)}))"

class OpenCLRenderer(CStyleLanguage):
  """OpenCL C: global ids are work-group ids, local ids index the work-group, partial sums meet in __local memory."""
  global_style = "special"
  has_local = has_shared = True
  kernel_prefix = "__kernel void "
  buffer_prefix = "__global "
  smem_prefix = "__local "
  barrier = "barrier(CLK_LOCAL_MEM_FENCE);"
  local_max_prod = 256
  # the register tile of a matmul is sized for 8-float vectors and 16 registers: PoCL (OpenCL on the CPU here) builds
  # for AVX2 (znver3), whatever the CPU has. Its work-group loop did not vectorize our kernels: local sizes above 1 ran
  # the 1024 matmul 5-10x slower, so the heuristic uses no LOCAL axis and each work-item computes a whole tile
  simd_floats, simd_regs = 8, 16
  wide_index = "long"
  code_for_workitem = {"g": lambda i: f"get_group_id({i})", "l": lambda i: f"get_local_id({i})"}
  type_map = {**CStyleLanguage.type_map, dtypes.bool: "bool", dtypes.int8: "char", dtypes.uint8: "uchar", dtypes.uint16: "ushort",
              dtypes.uint32: "uint", dtypes.int64: "long", dtypes.uint64: "ulong", dtypes.float16: "half"}
  infinity, nan = "INFINITY", "NAN"
  code_for_op = {**CStyleLanguage.code_for_op, Ops.EXP2: lambda x, dt: f"exp2({x})", Ops.LOG2: lambda x, dt: f"log2({x})",
                 Ops.SIN: lambda x, dt: f"sin({x})", Ops.SQRT: lambda x, dt: f"sqrt({x})", Ops.TRUNC: lambda x, dt: f"trunc({x})",
                 Ops.MOD: lambda a, b, dt: f"fmod({a},{b})" if dtypes.is_float(dt) else f"({a}%{b})"}
  emu_storage = "ushort"
  check_style = "mask"
  # the slot's first word as an int: OpenCL 1.2 has 32-bit atomics only (c[0] becomes 1, little-endian)
  check_header = """static void lz_oob(__global long* c, int b, long i, int store) {
  if (atomic_cmpxchg((volatile __global int*)c, 0, 1) == 0) { c[1] = b; c[2] = i; c[3] = store; }
}
"""
  def emu_header(self, emu: frozenset) -> str:
    return ("static inline uint lz_fbits(float f) { return as_uint(f); }\nstatic inline float lz_bitsf(uint u) { return as_float(u); }\n"
            + BF16_EMULATION_C) if emu else ""
  def _bitcast(self, x: str, ctype: str, frm: str) -> str: return f"as_{ctype}({x})"
  def render_buffer_dtype(self, dt: DType) -> str: return "uchar" if dt is dtypes.bool else super().render_buffer_dtype(dt)
  def render_kernel(self, name, body, bufs, specials, vars_=()) -> str:
    src = super().render_kernel(name, body, bufs, specials, vars_)
    # the extensions a kernel needs (a device without them fails to compile it; see is_dtype_supported)
    pre = [f"#pragma OPENCL EXTENSION cl_khr_fp{b} : enable\n" for b, t in ((16, "half"), (64, "double")) if re.search(rf"\b{t}\b", src)]
    self.line_map[:0] = [[] for _ in pre]
    return "".join(pre) + src
  def render_const(self, x, dt: DType) -> str:
    if dt in (dtypes.int64, dtypes.uint64) and x != -2**63: return f"{int(x)}{'l' if dt is dtypes.int64 else 'ul'}"
    return super().render_const(x, dt)

class CUDARenderer(CStyleLanguage):
  """CUDA C: blockIdx/threadIdx ids, __shared__ memory, __syncthreads()."""
  global_style = "special"
  has_local = has_shared = True
  kernel_prefix = 'extern "C" __global__ void '
  smem_prefix = "__shared__ "
  barrier = "__syncthreads();"
  local_max_prod = 1024
  code_for_workitem = {"g": lambda i: f"blockIdx.{'xyz'[i]}", "l": lambda i: f"threadIdx.{'xyz'[i]}"}
  type_map = {**CStyleLanguage.type_map, dtypes.bool: "bool", dtypes.float16: "half"}
  infinity, nan = "__int_as_float(0x7f800000)", "__int_as_float(0x7fffffff)"
  buffer_suffix = " __restrict__"
  code_for_op = {**CStyleLanguage.code_for_op, Ops.EXP2: lambda x, dt: f"exp2{_f(dt)}({x})", Ops.LOG2: lambda x, dt: f"log2{_f(dt)}({x})",
                 Ops.SIN: lambda x, dt: f"sin{_f(dt)}({x})", Ops.SQRT: lambda x, dt: f"sqrt{_f(dt)}({x})",
                 Ops.TRUNC: lambda x, dt: f"trunc{_f(dt)}({x})",
                 Ops.MOD: lambda a, b, dt: f"fmod{_f(dt)}({a},{b})" if dtypes.is_float(dt) else f"({a}%{b})"}
  # bfloat16 lives in memory as __nv_bfloat16 and is computed in float (its arithmetic needs sm_80), rounded each step
  emu_fns = {dtypes.bfloat16: ("__bfloat162float", "__float2bfloat16")}
  emu_storage = "__nv_bfloat16"
  check_style = "mask"
  check_header = """__device__ static void lz_oob(long long* c, int b, long long i, int store) {
  if (atomicCAS((unsigned long long*)c, 0ull, 1ull) == 0ull) { c[1] = b; c[2] = i; c[3] = store; }
}
"""
  def emu_header(self, emu: frozenset) -> str: return ""
  def render_kernel(self, name, body, bufs, specials, vars_=()) -> str:
    src = super().render_kernel(name, body, bufs, specials, vars_)
    pre = [f"#include <{h}>\n" for h, t in (("cuda_fp16.h", "half"), ("cuda_bf16.h", "__nv_bfloat16|__bfloat162float")) if re.search(rf"\b({t})\b", src)]
    self.line_map[:0] = [[] for _ in pre]
    return "".join(pre) + src
