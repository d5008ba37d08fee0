"""C-family source from linearized UOps: one walker, and a table of rules per dialect.

How a C-like renderer is built:
  1. the shared pre-render rewrites (renderer/prerender.py) state the numeric rules as UOps: NaN-propagating MAX,
     float->int casts as x86's, 16-bit floats computed in float32, unrolled sums in loop order, 64-bit indices;
  2. `string_rules`, a PatternMatcher from a UOp to its text: the first rule whose pattern matches gives the C. A rule
     gets `ctx`, the renderer writing this kernel (a copy per kernel): ctx[x] is the text of x (its name, or its
     expression), and ctx has the renderer's attributes (type_map, render_const, ...). Plain ALU ops take their text
     from `code_for_op` (op -> lambda *operands, dtype: text); rules placed before that line handle special cases;
  3. the walker (`render`, one loop, here): it names values (loads valN, accumulators accN, values read more than once
     aluN), writes a value read once inline where it is read, opens and closes loops, guards each memory access under
     LAZYNB_CHECK, and records which UOps each source line came from.
What a rule returns: for a value (ALU, CAST, BITCAST, CONST, INDEX) its expression; for a LOAD or DEFINE_ACC the value
it starts with (the walker writes the declaration); for the other ops the line of C (empty: no line). A rule may name
a LOAD or DEFINE_ACC itself (ctx.r[x] = ...), and then returns a line to write as it is.

CStyleLanguage writes plain C whose global ids arrive as int arguments (a runtime loops over them); ClangRenderer (the
CPU) writes its own loops, takes thread ids, and adds rules for half and gcc's vectors; OpenCLRenderer and CUDARenderer
change the table and a few prefixes. tests/test_render_table.py writes a renderer for a small C dialect by table alone."""
from __future__ import annotations
import copy, math, re
from typing import Any, Callable
from lazynb.dtype import DType, dtypes, truncate
from lazynb.helpers import CHECK
from lazynb.uop.ops import UOp, Ops, GroupOp, UPat, PatternMatcher, sym_str
from lazynb.renderer import Renderer, rendering, CHECK_HEAD, workitem_ids
from lazynb.renderer.prerender import prepare, Linear
from lazynb.renderer.lanes import LaneGroup, lane_groups

_C_WORDS = set("""auto break case char const continue default do double else enum extern float for goto if inline int long register restrict
return short signed sizeof static struct switch typedef union unsigned void volatile while half bool kernel global local constant
blockIdx threadIdx blockDim gridDim get_global_id get_local_id get_group_id INFINITY NAN""".split())

def _f(dt: DType) -> str: return "" if dt is dtypes.float64 else "f"  # C's float or double math function
def _f32(dt: DType) -> bool: return dt in (dtypes.float32, dtypes.float64)  # gcc's forms below: not for 16-bit floats
def _offset(i: UOp) -> bool: return i.op is Ops.ADD and i.src[1].op is Ops.CONST  # an index i+k
def _is(dt: DType, want: DType) -> bool: return dt is want or getattr(dt, "base", None) is want
def _math(name: Callable[[str, DType], str]) -> dict[Ops, Callable]:
  """code_for_op's C math functions (exp2, log2, sin, sqrt, trunc, and fmod for a float MOD), named by the dialect."""
  fns = {Ops.EXP2: "exp2", Ops.LOG2: "log2", Ops.SIN: "sin", Ops.SQRT: "sqrt", Ops.TRUNC: "trunc"}
  return {**{op: lambda x, dt, fn=fn: f"{name(fn, dt)}({x})" for op, fn in fns.items()},
          Ops.MOD: lambda a, b, dt: f"{name('fmod', dt)}({a},{b})" if dtypes.is_float(dt) else f"({a}%{b})"}

# ---------------------------------------------------------------- the rules of C
def _index(ctx, x: UOp) -> str:
  # buf+(i+3) as buf+i+3, pointer arithmetic: with -fwrapv, (i+3) is int math that may wrap, so gcc gave each offset
  # load its own pointer (40 in a conv's inner loop, spilled) instead of one base and displacements
  buf, i = ctx[x.src[0]], x.src[1]
  if not _offset(i): return f"({buf}+{ctx[i]})"
  k = ctx[i.src[1]]
  return f"({buf}+{ctx[i.src[0]]}{'' if k[0] == '-' else '+'}{k})"

def _load(ctx, x: UOp) -> str:
  idx, zero = x.src[0], ctx.render_const(0, x.dtype)
  v = f"*{ctx[idx]}"
  if idx.src[0].op is Ops.DEFINE_GLOBAL: v = ctx.render_load(v, x.dtype)  # (local memory holds the registers' type)
  if len(idx.src) > 2: v = f"({ctx[idx.src[2]]}?{v}:{zero})"  # a gated load reads 0 where its gate is off
  return f"({ctx.ok[idx]}?{v}:{zero})" if idx in ctx.ok else v

def _store(ctx, x: UOp) -> str:
  idx, v = x.src
  line = f"*{ctx[idx]} = {ctx.render_store(ctx[v], v.dtype) if idx.src[0].op is Ops.DEFINE_GLOBAL else ctx[v]};"
  if len(idx.src) > 2: line = f"if ({ctx[idx.src[2]]}) {{ {line} }}"
  return f"if ({ctx.ok[idx]}) {{ {line} }}" if idx in ctx.ok else line

def _special(ctx, x: UOp) -> str:
  """A GPU's global or local id is read into a variable; ids that arrive as int arguments need no line."""
  if ctx.global_style != "special" or x.arg[0][0] not in "gl": return ""
  return f"{ctx.render_dtype(x.dtype)} {ctx[x]} = {ctx.code_for_workitem[x.arg[0][0]](ctx.dims[x])}; /* {sym_str(x.arg[1])} */"

# an emulated 16-bit value is a float in registers: its cast to float32 (the only one left) writes nothing
def _cast(ctx, x: UOp) -> str: return ctx[x.src[0]] if x.src[0].dtype in ctx.lin.emulated else ctx.render_cast(ctx[x.src[0]], x.dtype)

# gcc 12 compiles a select whose condition needs two flag tests (x==y, x!=y, an OR of two compares) with branches; on
# data with a random sign or a 1-in-4 maximum they mispredict often (its relu and max-pool kernels ran 3-10x slower
# than clang's). These forms compute the same with one compare per select, which it makes blends (NaN-propagating MAX
# is already one compare per select: prerender.py).
def _above_or_nan(ctx, x: UOp, cmp: UOp, nan: UOp) -> str | None:
  """`(c<v)|(v!=v)` (relu's "above c or NaN", c a constant, not NaN) as `!(v<=c)`; `(v<c)|(v!=v)` as `!(v>=c)`."""
  v, (lo, hi) = nan.src[0], cmp.src
  if nan.src[1] is not v or not _f32(v.dtype): return None
  c, test = (lo, "<=") if hi is v else (hi, ">=") if lo is v else (None, "")
  return None if c is None or c.op is not Ops.CONST or c.arg != c.arg else f"(!({ctx[v]}{test}{ctx[c]}))"

def _zero_one(ctx, x: UOp, c: UOp, one: UOp, zero: UOp) -> str | None:
  """`c?1.0f:0.0f` as `(float)(c)` (not for -0.0: the cast makes +0.0)."""
  return None if not _f32(x.dtype) or (one.arg, zero.arg) != (1, 0) or math.copysign(1, zero.arg) < 0 else ctx.render_cast(ctx[c], x.dtype)

def _nan_first(ctx, a: UOp, b: UOp) -> str | None:
  """MAX's NaN test, `a!=a ? a : b`, as `!(a==a) ? a : b`: the same for gcc, and clang then makes b (b<a ? a : b) one
  masked vmaxps (with `a!=a` it kept two compares, an OR of masks and a blend)."""
  return f"(!({ctx[a]}=={ctx[a]})?{ctx[a]}:{ctx[b]})" if _f32(a.dtype) else None

def _float_eq(x: UOp) -> tuple[UOp, UOp] | None:
  """(a!=b)!=True or (a!=b)^True over float32/64: a==b. Its operands (read twice by the rule below) are named."""
  if x.op in (Ops.CMPNE, Ops.XOR) and x.src[0].op is Ops.CMPNE and x.src[1].op is Ops.CONST and x.src[1].arg is True and _f32(x.src[0].src[0].dtype):
    return x.src[0].src[0], x.src[0].src[1]
  return None

def _equal(ctx, x: UOp) -> str | None:
  """Float a==b as `(a<=b)&(a>=b)`: two compares of one flag test each."""
  if (ab := _float_eq(x)) is None: return None
  a, b = ctx[ab[0]], ctx[ab[1]]
  return f"(({a}<={b})&({a}>={b}))"

NARROW_INTS = (dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16)

def _oob_fn(prefix: str, slot: str, int64: str, claim: str) -> str:
  """A dialect's lz_oob (LAZYNB_CHECK): the first failing access claims the slot with `claim` and records where it was."""
  return f"{prefix} void lz_oob({slot}, int b, {int64} i, int store) {{\n  if ({claim}) {{ c[1] = b; c[2] = i; c[3] = store; }}\n}}\n"

class CStyleLanguage(Renderer):
  global_style = "args"
  lane_vectors = False  # write lane groups of accumulators as vectors (lanes.py; the C device turns it on for gcc)
  kernel_prefix = "void "
  buffer_prefix = ""
  buffer_suffix = " restrict"
  arg_int_prefix = "const int"
  smem_prefix = ""
  barrier = ""
  code_for_workitem: dict[str, Callable] = {}
  extra_header = ""
  # int64 is also the type of index math in kernels whose indices do not all fit in 32 bits
  type_map: dict[DType, str] = {dtypes.bool: "_Bool", dtypes.int8: "signed char", dtypes.uint8: "unsigned char", dtypes.int16: "short",
                                dtypes.uint16: "unsigned short", dtypes.int32: "int", dtypes.uint32: "unsigned int",
                                dtypes.int64: "long long", dtypes.uint64: "unsigned long long", dtypes.float16: "_Float16",
                                dtypes.float32: "float", dtypes.float64: "double"}
  infinity, nan = "__builtin_inff()", '__builtin_nanf("")'
  # bfloat16 (and float16 where the compiler lacks it) is emulated: 16 bits in memory, float in registers (the
  # pre-render rewrites compute it in float32). emu_fns: the functions that read and write the 16 bits; emu_header: their source.
  emu_fns: dict[DType, tuple[str, str]] = {dtypes.bfloat16: ("lz_bf2f", "lz_f2bf"), dtypes.float16: ("lz_h2f", "lz_f2h")}
  emu_storage = "unsigned short"
  code_for_op: dict[Ops, Callable] = {
    Ops.NEG: lambda x, dt: f"(!{x})" if dt is dtypes.bool else f"(-{x})", **_math(lambda fn, dt: f"__builtin_{fn}{_f(dt)}"),
    Ops.ADD: lambda a, b, dt: f"({a}+{b})", Ops.MUL: lambda a, b, dt: f"({a}*{b})", Ops.IDIV: lambda a, b, dt: f"({a}/{b})",
    Ops.CMPLT: lambda a, b, dt: f"({a}<{b})", Ops.CMPNE: lambda a, b, dt: f"({a}!={b})",
    Ops.AND: lambda a, b, dt: f"({a}&{b})", Ops.OR: lambda a, b, dt: f"({a}|{b})", Ops.XOR: lambda a, b, dt: f"({a}^{b})",
    Ops.SHL: lambda a, b, dt: f"({a}<<{b})", Ops.SHR: lambda a, b, dt: f"({a}>>{b})",
    Ops.WHERE: lambda c, a, b, dt: f"({c}?{a}:{b})"}
  string_rules = PatternMatcher([
    (UPat((Ops.DEFINE_GLOBAL, Ops.DEFINE_VAR)), lambda: ""),  # the kernel's parameters (render_kernel)
    (UPat(Ops.SPECIAL, name="x"), _special),
    (UPat(Ops.DEFINE_LOCAL, name="x"), lambda ctx, x: f"{ctx.smem_prefix}{ctx.render_dtype(x.dtype.base)} {ctx[x]}[{x.arg[1]}];"),
    (UPat(Ops.BARRIER), lambda ctx: ctx.barrier),
    (UPat(Ops.RANGE, name="x"), lambda ctx, x: f"for ({ctx.render_dtype(x.dtype)} {ctx[x]} = 0; {ctx[x]} < {sym_str(x.arg[1], c=True)}; {ctx[x]}++) {{"),
    (UPat(Ops.ENDRANGE), lambda: "}"),
    (UPat(Ops.CONST, name="x"), lambda ctx, x: ctx.render_const(x.arg, x.dtype)),
    (UPat(Ops.INDEX, name="x"), _index),
    (UPat(Ops.LOAD, name="x"), _load),
    (UPat(Ops.STORE, name="x"), _store),
    (UPat(Ops.DEFINE_ACC, name="x"), lambda ctx, x: ctx[x.src[0]]),
    (UPat(Ops.ASSIGN, name="x"), lambda ctx, x: f"{ctx[x]} = {ctx[x.src[1]]};"),
    (UPat(Ops.CAST, name="x"), _cast),
    (UPat(Ops.BITCAST, name="x"), lambda ctx, x: ctx.render_bitcast(ctx[x.src[0]], x.dtype, x.src[0].dtype)),
    # special forms (gcc's and clang's, above), before the plain ops
    (UPat(Ops.OR, name="x", src=[UPat(Ops.CMPLT, name="cmp"), UPat(Ops.CMPNE, name="nan")]), _above_or_nan),
    (UPat((Ops.CMPNE, Ops.XOR), name="x"), _equal),
    (UPat(Ops.WHERE, name="x", src=(UPat.var("c"), UPat.cvar("one"), UPat.cvar("zero"))), _zero_one),
    (UPat(Ops.WHERE, src=(UPat(Ops.CMPNE, src=(UPat.var("a"), UPat.var("a"))), UPat.var("a"), UPat.var("b"))), _nan_first),
    (UPat(Ops.RECIP, name="x"), lambda ctx, x: f"({ctx.render_const(1, x.dtype)}/{ctx[x.src[0]]})"),
    # C computes on narrow ints (uchar) in int: an inlined 217*163 stays 35371 unless cast back to wrap like numpy
    # (a select needs none: it picks one of two values in range)
    (UPat(GroupOp.ALU - {Ops.WHERE}, dtype=NARROW_INTS, name="x"), lambda ctx, x: ctx.render_cast(ctx.op_text(x), x.dtype)),
    (UPat(GroupOp.ALU, name="x"), lambda ctx, x: ctx.op_text(x))])
  # LAZYNB_CHECK=1: before each access to a buffer, its index is compared with the buffer's size (lz_chk[CHECK_HEAD + n],
  # filled from the real Buffers at each run); the first failure is recorded in lz_chk[0..3] by lz_oob. "return": the
  # kernel (or this thread's share of it) stops there; "mask": the access is skipped and the kernel goes on (work-items
  # that share a barrier must all reach it). check_header: lz_oob, claiming the slot atomically (threads, work-items).
  check_style = "return"
  check_header = _oob_fn("static", "long long* c", "long long", "__sync_bool_compare_and_swap(c, 0LL, 1LL)")

  # ---- types, constants and conversions (per kernel: which types are emulated, how wide indices are)
  def emulated(self, uops: list[UOp]) -> frozenset:
    """Which dtypes of these uops to emulate: bfloat16 always (no C type for it everywhere)."""
    return frozenset({dtypes.bfloat16}) if any(_is(u.dtype, dtypes.bfloat16) for u in uops) else frozenset()
  def emu_header(self, emu: frozenset) -> str:
    return EMU_BITS_C + (HALF_EMULATION_C if dtypes.float16 in emu else "") + (BF16_EMULATION_C if dtypes.bfloat16 in emu else "")
  def render_dtype(self, dt: DType) -> str:
    if dt is dtypes.index: return self.type_map[self.lin.index]
    if dt in self.lin.emulated: return "float"
    if dt not in self.type_map: raise NotImplementedError(f"{type(self).__name__} cannot render {dt}")
    return self.type_map[dt]
  def render_buffer_dtype(self, dt: DType) -> str: return self.emu_storage if dt in self.lin.emulated else self.render_dtype(dt)
  def render_const(self, x, dt: DType) -> str:
    if dt in self.lin.emulated and math.isfinite(x): return self.render_const(truncate(dt, x), dtypes.float32)  # the 16-bit value
    if dtypes.is_float(dt):
      if math.isnan(x): s = self.nan
      elif math.isinf(x): s = ("-" if x < 0 else "") + self.infinity
      else: s = (repr(float(x)) if "e" in repr(float(x)) or "." in repr(float(x)) else f"{float(x)}.0") + _f(dt)
      return s if dt in (dtypes.float32, dtypes.float64) or dt in self.lin.emulated else f"(({self.render_dtype(dt)}){s})"
    if dt is dtypes.bool: return "1" if x else "0"
    if dt in (dtypes.int64, dtypes.uint64, dtypes.uint32):
      suffix = {dtypes.int64: "ll", dtypes.uint64: "ull", dtypes.uint32: "u"}[dt]
      return f"{int(x)}{suffix}" if x != -2**63 else "(-9223372036854775807ll-1)"
    if dt.itemsize < 4: return f"(({self.render_dtype(dt)}){int(x)})"
    return str(int(x)) if x != -2**31 else "(-2147483647-1)"
  def render_cast(self, x: str, dt: DType) -> str:
    if dt in self.lin.emulated:  # rounded to the 16-bit value, kept as a float
      load, store = self.emu_fns[dt]
      return f"{load}({store}({x}))"  # (from a float: the pre-render rewrites cast to it through float32)
    return f"(({self.render_dtype(dt)})({x}))"
  def render_bitcast(self, x: str, dt: DType, src: DType) -> str:
    emu = self.lin.emulated
    if src in emu: x = f"{self.emu_fns[src][1]}({x})"  # reinterpret the 16 stored bits, not the float
    frm = self.emu_storage if src in emu else self.render_dtype(src)
    return f"{self.emu_fns[dt][0]}({self._bitcast(x, self.emu_storage, frm)})" if dt in emu else self._bitcast(x, self.render_dtype(dt), frm)
  def _bitcast(self, x: str, ctype: str, frm: str) -> str: return f"__builtin_bit_cast({ctype}, {x})"
  # how a value of dtype dt is read from / written to memory (emulated types are kept in 16 bits)
  def render_load(self, ptr: str, dt: DType) -> str: return f"{self.emu_fns[dt][0]}({ptr})" if dt in self.lin.emulated else ptr
  def render_store(self, val: str, dt: DType) -> str: return f"{self.emu_fns[dt][1]}({val})" if dt in self.lin.emulated else val
  def op_text(self, x: UOp) -> str:
    """An ALU op as `code_for_op` writes it."""
    return self.code_for_op[x.op](*[self[s] for s in x.src], x.dtype)
  def render_kernel(self, name: str, body: list[str], bufs: list[tuple[str, DType]], specials: list[UOp], vars_: tuple = ()) -> str:
    params = [f"{self.buffer_prefix}{self.render_buffer_dtype(dt)}*{self.buffer_suffix} {n}" for n, dt in bufs]
    for v in vars_:  # a variable named like a kernel's own names (ridx0, data1) or a C word would silently shadow it
      if re.fullmatch(r"(data|val|acc|accv|alu|gidx|lidx|ridx|tidx|unused|temp|upcast|unroll)\d+|lz_\w*", v.arg[0]) or v.arg[0] in _C_WORDS:
        raise ValueError(f"variable name {v.arg[0]!r} clashes with a name in the generated kernel; rename the Variable")
    params += [f"{self.arg_int_prefix} {v.arg[0]}" for v in vars_]  # symbolic sizes: one int argument per variable
    ids = [u.arg[0] for u in (workitem_ids(specials, "g") if self.global_style == "args" else []) + workitem_ids(specials, "t")]
    if self.global_style == "args": ids += [f"unused{i}" for i in range(3 - len(ids))]  # always 3: the runtime passes a 3-D grid point
    params += [f"{self.arg_int_prefix} {n}" for n in ids]
    header = self._above(self.check_header) if getattr(rendering, "checked", False) else ""
    if self.lin.emulated and (emu := self.emu_header(self.lin.emulated)): header = self._above(emu) + header
    self.line_map.append([])  # the closing brace
    return self._above(self.extra_header) + header + f"{self.kernel_prefix}{name}({', '.join(params)}) {{\n" + "\n".join(body) + "\n}"

  def _above(self, text: str) -> str:
    """text, to stand above the kernel's lines: the viewer's line map (source line -> UOps) gets an empty entry per line."""
    self.line_map[:0] = [[] for _ in text.splitlines()]
    return text

  # ---- the walker
  def render(self, name: str | list[UOp], uops: list[UOp] | None = None) -> str:
    if not isinstance(name, str): uops, name = name, "test"  # tinygrad 0.10's render(uops)
    assert uops is not None
    # what one kernel decides (its names, lines, types) lives on a copy: BEAM renders candidates on several threads
    return copy.copy(self)._write(name, prepare(uops, self.emulated(uops), "gt" if self.global_style == "args" else "t"))

  def __getitem__(self, u: UOp) -> str:
    """The text of u here: its name, or its expression (a value is written where it is read when it has no name in
    scope: read once, built by a pre-render rule, or named inside a loop that has ended)."""
    return t if (t := self.r.get(u)) is not None else self._value(u, listed=False)

  def naming(self, lin: Linear) -> tuple[set[UOp], set[UOp]]:
    """Values the rules need named (a float equality reads its operands twice) or never named (an index i+k that only
    addresses memory is written into each address: buf+i+k)."""
    must = {s for u in lin.uops if (ab := _float_eq(u)) for s in ab}
    readers = lin.uops + list(lin.built)
    never = {u.src[1] for u in readers if u.op is Ops.INDEX and _offset(u.src[1])} - {s for u in readers if u.op is not Ops.INDEX for s in u.src}
    return must, never

  def _write(self, name: str, lin: Linear) -> str:
    self.lin = lin
    self.r: dict[UOp, str] = {}
    self.level: dict[UOp, int] = {}
    self.nest: dict[UOp, Any] = {}
    self.members: dict[UOp, Any] = {}
    self.ok: dict[UOp, Any] = {}
    self.body: list[str] = []
    self.depth = 1
    self.counters: dict[str, int] = {}
    self.scopes: list[list[UOp]] = [[]]
    self.line_map = [[]]  # [] for the signature line
    self.must, self.never = self.naming(lin)
    self.dims = {u: i for k in "gl" for i, u in enumerate(workitem_ids([u for u in lin.uops if u.op is Ops.SPECIAL], k))}
    self.setup(lin)
    rendering.checked = check = bool(CHECK)
    for u in lin.uops:
      op = u.op
      if check and op in (Ops.LOAD, Ops.STORE) and u.src[0].src[0].op is Ops.DEFINE_GLOBAL: self._guard(u)
      if op in _VALUES:
        if u not in self.r: self._value(u, listed=True)
        continue
      if op is Ops.ENDRANGE:
        for x in self.scopes.pop(): self.r.pop(x, None), self.nest.pop(x, None)  # names declared in the loop are gone
        self.depth -= 1
      if op in _NAMES: self._name(u, _NAMES[op](u))
      elif op is Ops.ASSIGN: self._name(u, self.r[u.src[0]], self.level[u.src[0]])  # the accumulator's variable
      text = self._rule(u)
      if op in (Ops.LOAD, Ops.DEFINE_ACC) and u not in self.r:
        self._name(u, self.fresh("val" if op is Ops.LOAD else "acc"))
        self.emit(f"{self.render_dtype(u.dtype)} {self.r[u]} = {text};", self._mem(u))
      elif text: self.emit(text, self._mem(u))
      if op is Ops.RANGE:
        self.depth += 1
        self.scopes.append([])
    bufs = [(self.r[u], u.dtype.base) for u in lin.uops if u.op is Ops.DEFINE_GLOBAL]
    if check: bufs.append(("lz_chk", dtypes.int64))  # sizes in, the first failure out (see check_style)
    return self.render_kernel(name, self.body, bufs, [u for u in lin.uops if u.op is Ops.SPECIAL], tuple(u for u in lin.uops if u.op is Ops.DEFINE_VAR))

  def setup(self, lin: Linear): pass  # a dialect's look at the whole kernel first (ClangRenderer: lane groups)
  def fresh(self, prefix: str) -> str:
    self.counters[prefix] = self.counters.get(prefix, 0) + 1
    return f"{prefix}{self.counters[prefix] - 1}"
  def emit(self, line: str, us: list[int]):
    self.body.append("  " * self.depth + line)
    self.line_map.append(us)
  def _name(self, u: UOp, text: str, level: int | None = None):
    self.r[u] = text
    self.level[u] = len(self.scopes) - 1 if level is None else level
    self.scopes[self.level[u]].append(u)
  def _rule(self, u: UOp) -> str:
    text: Any = self.string_rules.rewrite(u, self)  # the table's rules give source text, not UOps
    if text is None: raise NotImplementedError(f"{type(self).__name__} has no rule for {u.op} ({u.dtype})")
    return text
  def _mem(self, u: UOp) -> list[int]: return sorted({self.lin.pos[u]} | {m for s in u.src for m in self.members.get(s, ())})
  def _value(self, u: UOp, listed: bool) -> str:
    """Write a value: named (declared here) when it is read more than once or its inline expression grows too deep for
    C's nesting limit, else kept as an expression for where it is read."""
    text = self._rule(u)
    nest = 1 + max((self.nest.get(s, 0) for s in u.src), default=0)
    if u.op in _NAMEABLE and u not in self.never and (nest > 64 or listed and (self.lin.uses.get(u, 0) > 1 or u in self.must)):
      self._name(u, self.fresh("alu"))
      self.emit(f"{self.render_dtype(u.dtype)} {self.r[u]} = {text};", self._mem(u))
      self.nest[u], self.members[u] = 0, [self.lin.pos[u]]
    else:
      self._name(u, text)
      self.nest[u] = nest
      if u.op is not Ops.CONST: self.members[u] = self._mem(u)
    return self.r[u]
  def _guard(self, u: UOp):
    """LAZYNB_CHECK: the test of one load or store's index against its buffer's size, before the access."""
    idx = u.src[0]
    i, gate = f"(({self.render_dtype(dtypes.int64)})({self[idx.src[1]]}))", self[idx.src[2]] if len(idx.src) > 2 else None
    u64 = self.render_dtype(dtypes.uint64)
    inside = f"(({u64}){i}<({u64})lz_chk[{CHECK_HEAD + idx.src[0].arg}])"
    fail, pos = f"lz_oob(lz_chk, {idx.src[0].arg}, {i}, {int(u.op is Ops.STORE)});", [self.lin.pos[u]]
    if self.check_style == "return": self.emit(f"if ({f'({gate})&&' if gate else ''}!{inside}) {{ {fail} return; }}", pos)
    else:
      self.ok[idx] = self.fresh("lz_ok")
      self.emit(f"int {self.ok[idx]} = {inside};", pos)
      self.emit(f"if ({f'({gate})&&' if gate else ''}!{self.ok[idx]}) {{ {fail} }}", pos)

_VALUES = GroupOp.ALU | {Ops.CAST, Ops.BITCAST, Ops.CONST, Ops.INDEX}  # the walker writes these inline or names them
_NAMEABLE = GroupOp.ALU | {Ops.CAST, Ops.BITCAST}
_NAMES: dict[Ops, Callable[[UOp], str]] = {Ops.DEFINE_GLOBAL: lambda u: f"data{u.arg}", Ops.DEFINE_VAR: lambda u: u.arg[0],
                                           Ops.SPECIAL: lambda u: u.arg[0], Ops.RANGE: lambda u: u.arg[2], Ops.DEFINE_LOCAL: lambda u: u.arg[0]}

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

# ---------------------------------------------------------------- the CPU: loops, threads, half, gcc's vectors
def _lane_acc(ctx, x: UOp) -> str | None:
  """An accumulator of a lane group is lane l of one vector variable, declared with the group's first."""
  if (g := ctx.group_of.get(x)) is None: return None
  first = id(g) not in ctx.vec_names
  if first: ctx.vec_names[id(g)] = ctx.fresh("accv")
  ctx._name(x, f"{ctx.vec_names[id(g)]}[{g.accs.index(x)}]")
  return f"lz_v{len(g.accs)} {ctx.vec_names[id(g)]} = {{0}};" if first else ""

def _lane_update(ctx, x: UOp) -> str | None:
  """A lane group's updates are one vector statement, written at its last update."""
  if (g := ctx.group_of.get(x)) is None: return None
  return f"{ctx.vec_names[id(g)]} = {ctx.vector_update(g, ctx.vec_names[id(g)])};" if x is g.assigns[-1] else ""

_HALF_EXACT = {Ops.NEG, Ops.WHERE, Ops.TRUNC}  # their result is one of their inputs, or exact: nothing to round

class ClangRenderer(CStyleLanguage):
  """C for the CPU: the kernel walks its own output with for-loops; a THREAD axis becomes a `tidx0` argument (the runtime
  calls it once per core with its id). float16 rounds every operation to half, as numpy; `half_native()`, asked only when
  a kernel touches float16, says if the compiler's _Float16 can, else half is emulated (docs/architecture.md, "The CPU device")."""
  global_style = "loop"
  has_threads = True
  half_native: Callable[[], bool] = staticmethod(lambda: True)
  string_rules = PatternMatcher([
    # native half: each operation's result rounded to half (what C would write, cast), so an inline chain such as (a+b)*c
    # never keeps float's extra precision (gcc computes _Float16 in float unless told to round)
    (UPat(GroupOp.ALU - _HALF_EXACT, dtype=dtypes.float16, name="x"), lambda ctx, x: f"((_Float16)({CStyleLanguage.string_rules.rewrite(x, ctx)}))"),
    (UPat(Ops.DEFINE_ACC, name="x"), _lane_acc),
    (UPat(Ops.ASSIGN, name="x"), _lane_update),
    (UPat(Ops.LOAD, name="x"), lambda ctx, x: (ctx._name(x, "/* read as a vector */"), "")[1] if x in ctx.unread else None),
  ]) + CStyleLanguage.string_rules
  def emulated(self, uops: list[UOp]) -> frozenset:
    half = any(_is(u.dtype, dtypes.float16) for u in uops) and not self.half_native()
    return super().emulated(uops) | ({dtypes.float16} if half else set())
  def _bitcast(self, x: str, ctype: str, frm: str) -> str:  # gcc has __builtin_bit_cast only in C++; a union is C's
    return f"(((union {{ {frm} from; {ctype} to; }}){{{x}}}).to)"
  def setup(self, lin: Linear):
    # accumulators written as vectors (lanes.py): an accumulator is lane l of a vector; its group is updated in one
    # statement (at the group's last update); a load only those statements read is left out (they load vectors)
    widths = (self.simd_floats, self.simd_floats // 2) if self.simd_floats >= 8 else (self.simd_floats,)
    groups = lane_groups(lin.uops, widths, lin.uses) if self.lane_vectors else []
    self.lanes = sorted({len(g.accs) for g in groups}, reverse=True)
    self.group_of = {x: g for g in groups for x in g.accs + g.assigns}
    self.vec_names: dict[int, str] = {}
    self.unread: set[UOp] = set()
    if groups:
      inside = {x for g in groups for x in g.inside}
      self.unread = {u for u in lin.uops if u.op is Ops.LOAD and not any(g.kinds.get(u) is False for g in groups)}
      self.unread -= {s for u in lin.uops + list(lin.built) if u not in inside for s in u.src}
  def vector_update(self, g: LaneGroup, name: str) -> str:
    """The update of a lane group as one vector expression: lane 0's, with each shifted load a vector load from its
    address, and a value the same in every lane written as the scalar (C widens it to every lane)."""
    first = g.assigns[0]
    rv: dict[UOp, str] = {first.src[0]: name}
    def vec(x: UOp) -> str:
      if x not in rv:
        if g.kinds.get(x): rv[x] = f"(*(lz_v{len(g.accs)}*){self[x.src[0]]})"
        elif x not in g.inside: rv[x] = self[x]
        else: rv[x] = self.code_for_op[x.op](*[vec(s) for s in x.src], x.dtype)
      return rv[x]
    return vec(first.src[1])
  def render_kernel(self, name: str, body: list[str], bufs: list[tuple[str, DType]], specials: list[UOp], vars_: tuple = ()) -> str:
    # The thread id arrives as an argument; clang cannot bound it, so with -fwrapv it could not prove that lane i+1 of
    # an index built from it is next to lane i, and left a whole kernel scalar (the course CNN's 5x5 conv: 320 scalar
    # FMAs, 7x slower with two threads than with one). Reduced modulo the thread count, the id has a known range.
    tids = [u.arg for u in specials if u.arg[0].startswith("t")]
    decls = [f"  const int {t} = (int)((unsigned){t}_arg % {n}u);" for t, n in tids]
    self.line_map[1:1] = [[] for _ in decls]  # after the signature line
    src = super().render_kernel(name, decls + body, bufs, specials, vars_)
    for t, _ in tids: src = src.replace(f"const int {t})", f"const int {t}_arg)", 1)
    if self.lanes:  # GCC's vector types (clang reads them too): n floats, read at any float's address
      src = self._above("".join(f"typedef float lz_v{n} __attribute__((vector_size({4 * n}), aligned(4), may_alias));\n" for n in self.lanes)) + src
    return src

# ---------------------------------------------------------------- GPU dialects: their table and a few prefixes
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
  code_for_workitem = {"g": lambda i: f"get_group_id({i})", "l": lambda i: f"get_local_id({i})"}
  type_map = {**CStyleLanguage.type_map, dtypes.bool: "bool", dtypes.int8: "char", dtypes.uint8: "uchar", dtypes.uint16: "ushort",
              dtypes.uint32: "uint", dtypes.int64: "long", dtypes.uint64: "ulong", dtypes.float16: "half"}
  infinity, nan = "INFINITY", "NAN"
  code_for_op = {**CStyleLanguage.code_for_op, **_math(lambda fn, dt: fn)}
  emu_storage = "ushort"
  check_style = "mask"
  # the slot's first word as an int: OpenCL 1.2 has 32-bit atomics only (c[0] becomes 1, little-endian)
  check_header = _oob_fn("static", "__global long* c", "long", "atomic_cmpxchg((volatile __global int*)c, 0, 1) == 0")
  def emu_header(self, emu: frozenset) -> str:
    return ("static inline uint lz_fbits(float f) { return as_uint(f); }\nstatic inline float lz_bitsf(uint u) { return as_float(u); }\n"
            + BF16_EMULATION_C) if emu else ""
  def _bitcast(self, x: str, ctype: str, frm: str) -> str: return f"as_{ctype}({x})"
  def render_buffer_dtype(self, dt: DType) -> str: return "uchar" if dt is dtypes.bool else super().render_buffer_dtype(dt)
  def render_kernel(self, name, body, bufs, specials, vars_=()) -> str:
    src = super().render_kernel(name, body, bufs, specials, vars_)
    # the extensions a kernel needs (a device without them fails to compile it; see is_dtype_supported)
    pre = [f"#pragma OPENCL EXTENSION cl_khr_fp{b} : enable\n" for b, t in ((16, "half"), (64, "double")) if re.search(rf"\b{t}\b", src)]
    return self._above("".join(pre)) + src
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
  code_for_op = {**CStyleLanguage.code_for_op, **_math(lambda fn, dt: f"{fn}{_f(dt)}")}
  # bfloat16 lives in memory as __nv_bfloat16 and is computed in float (its arithmetic needs sm_80), rounded each step
  emu_fns = {dtypes.bfloat16: ("__bfloat162float", "__float2bfloat16")}
  emu_storage = "__nv_bfloat16"
  check_style = "mask"
  check_header = _oob_fn("__device__ static", "long long* c", "long long", "atomicCAS((unsigned long long*)c, 0ull, 1ull) == 0ull")
  def emu_header(self, emu: frozenset) -> str: return ""
  def render_kernel(self, name, body, bufs, specials, vars_=()) -> str:
    src = super().render_kernel(name, body, bufs, specials, vars_)
    pre = [f"#include <{h}>\n" for h, t in (("cuda_fp16.h", "half"), ("cuda_bf16.h", "__nv_bfloat16|__bfloat162float")) if re.search(rf"\b({t})\b", src)]
    return self._above("".join(pre)) + src
