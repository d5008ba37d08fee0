"""LLVM IR from linearized UOps, one instruction per line, for the LLVM device (runtime/ops_llvm.py): the kernel
ClangRenderer writes as C. Its rules, its walker and what stays LLVM's own: docs/internals.md, "LLVM IR"."""
from __future__ import annotations
import copy, math, re, struct
import numpy as np
from typing import Any
from lazynb.dtype import DType, dtypes, truncate
from lazynb.helpers import CHECK
from lazynb.uop.ops import UOp, Ops, GroupOp, UPat, PatternMatcher
from lazynb.renderer import Renderer, rendering, CHECK_HEAD
from lazynb.renderer.prerender import prepare, Linear

_TYPES = {dtypes.bool: "i1", dtypes.int8: "i8", dtypes.uint8: "i8", dtypes.int16: "i16", dtypes.uint16: "i16", dtypes.int32: "i32",
          dtypes.uint32: "i32", dtypes.int64: "i64", dtypes.uint64: "i64", dtypes.float16: "half", dtypes.float32: "float",
          dtypes.float64: "double", dtypes.bfloat16: "float"}
_MEM = {dtypes.bool: "i8", dtypes.bfloat16: "i16"}  # how a value is kept in memory, where it differs from registers
_SUFFIX = {"half": "f16", "float": "f32", "double": "f64"}
_FLOAT_OPS = {Ops.ADD: "fadd", Ops.MUL: "fmul", Ops.MOD: "frem", Ops.CMPLT: "fcmp olt", Ops.CMPNE: "fcmp une"}
_INT_OPS = {Ops.ADD: "add", Ops.MUL: "mul", Ops.AND: "and", Ops.OR: "or", Ops.XOR: "xor", Ops.CMPNE: "icmp ne"}
_MATH = {Ops.EXP2: "exp2", Ops.LOG2: "log2", Ops.SIN: "sin", Ops.SQRT: "sqrt", Ops.TRUNC: "trunc"}
# C computes these on int, so a narrow type is widened first (an int8 -128 // -1 is 128, wrapped to -128; a shift past 8 bits is 0)
_WIDENED = {Ops.IDIV: ("sdiv", "udiv"), Ops.MOD: ("srem", "urem"), Ops.SHL: ("shl", "shl"), Ops.SHR: ("ashr", "lshr")}
_SYM_OPS = {Ops.ADD: "add", Ops.MUL: "mul", Ops.IDIV: "sdiv", Ops.MOD: "srem"}

def _signed(x: int, bits: int) -> int:
  x &= (1 << bits) - 1
  return x - (1 << bits) if x >= 1 << (bits - 1) else x
def _uns(dt: DType) -> bool: return dt is dtypes.bool or dtypes.is_unsigned(dt)

def render_const(x, dt: DType) -> str:
  """A constant as LLVM reads it: floats in decimal (the shortest that reads back exactly), inf and NaN as the bits of a
  double, half as 0xH + its 16 bits."""
  if dt is dtypes.bool: return "true" if x else "false"
  if dt is dtypes.float16: return f"0xH{int(np.array(x, np.float16).view(np.uint16)):04X}"
  if dtypes.is_float(dt):
    v = float(truncate(dt, x)) if dt is not dtypes.float64 else float(x)  # float32 and bfloat16: the value they hold
    if not math.isfinite(v): return f"0x{struct.unpack('<Q', struct.pack('<d', v))[0]:016X}"
    m, e, p = repr(v).partition("e")  # Python's shortest decimal reads back as exactly v; LLVM wants a point in it
    return (m if "." in m else m + ".0") + (e + p if e else "")
  return str(_signed(int(x), 8 * dt.itemsize))

# LAZYNB_CHECK: the first access outside a buffer claims the slot (c[0]: 0 -> 1, atomically: threads) and records where
_CHECK_IR = """define internal void @lz_oob(ptr %c, i32 %b, i64 %i, i32 %store) cold noinline {
entry:
  %bw = sext i32 %b to i64
  %sw = sext i32 %store to i64
  %old = cmpxchg ptr %c, i64 0, i64 1 seq_cst seq_cst
  %won = extractvalue { i64, i1 } %old, 1
  br i1 %won, label %fill, label %done
fill:
  %pb = getelementptr i64, ptr %c, i64 1
  store i64 %bw, ptr %pb
  %pi = getelementptr i64, ptr %c, i64 2
  store i64 %i, ptr %pi
  %ps = getelementptr i64, ptr %c, i64 3
  store i64 %sw, ptr %ps
  br label %done
done:
  ret void
}"""

# ---------------------------------------------------------------- the rules: each op's instructions
def _binary(ctx, x: UOp, a: UOp, b: UOp) -> str:
  t = ctx.ty(a.dtype)
  if dtypes.is_float(a.dtype): return ctx.ins(f"{_FLOAT_OPS[x.op]}{ctx.fast(x.op, a.dtype)} {t} {ctx[a]}, {ctx[b]}")
  nsw = " nsw" if a.dtype is dtypes.index and x.op in (Ops.ADD, Ops.MUL) else ""  # indices fit in their type (prerender.py)
  return ctx.ins(f"{_INT_OPS[x.op]}{nsw} {t} {ctx[a]}, {ctx[b]}")

def _widened(ctx, x: UOp, a: UOp, b: UOp) -> str:
  t, uns = ctx.ty(a.dtype), _uns(a.dtype)
  w = "i32" if a.dtype.itemsize < 4 and a.dtype is not dtypes.index else t
  xa, xb = (ctx.ins(f"{'zext' if uns else 'sext'} {t} {ctx[s]} to {w}") if w != t else ctx[s] for s in (a, b))
  res = ctx.ins(f"{_WIDENED[x.op][uns]} {w} {xa}, {xb}")
  return ctx.ins(f"trunc {w} {res} to {t}") if w != t else res

def _cast(ctx, c: UOp, x: UOp) -> str:
  src, dt, v = x.dtype, c.dtype, ctx[x]
  st, dtt = ctx.ty(src), ctx.ty(dt)
  if dt is dtypes.bool: return v if src is dtypes.bool else ctx.ins(f"{'fcmp une' if dtypes.is_float(src) else 'icmp ne'} {st} {v}, {render_const(0, src)}")
  if dt is dtypes.bfloat16: return ctx.bf2f(ctx.f2bf(v))  # from float32 (prerender.py): rounded to the 16-bit value
  if src is dtypes.bfloat16 or st == dtt: return v  # (a bfloat16 is a float in registers)
  if dtypes.is_float(dt) and dtypes.is_float(src): return ctx.ins(f"{'fpext' if src.itemsize < dt.itemsize else 'fptrunc'} {st} {v} to {dtt}")
  if dtypes.is_float(dt): return ctx.ins(f"{'uitofp' if _uns(src) else 'sitofp'} {st} {v} to {dtt}")
  if dtypes.is_float(src): return ctx.ins(f"fpto{'u' if dtypes.is_unsigned(dt) else 's'}i {st} {v} to {dtt}")  # in range: prerender.py
  if int(st[1:]) > int(dtt[1:]): return ctx.ins(f"trunc {st} {v} to {dtt}")  # (int widths: i8 .. i64)
  return ctx.ins(f"{'zext' if _uns(src) else 'sext'} {st} {v} to {dtt}")

def _bitcast(ctx, c: UOp, x: UOp) -> str:
  src, dt, v = x.dtype, c.dtype, ctx[x]
  if src is dtypes.bfloat16: v, src = ctx.f2bf(v), dtypes.uint16
  if dt is dtypes.bfloat16: return ctx.bf2f(v if src.itemsize == 2 and not dtypes.is_float(src) else ctx.ins(f"bitcast {ctx.ty(src)} {v} to i16"))
  return v if ctx.ty(src) == ctx.ty(dt) else ctx.ins(f"bitcast {ctx.ty(src)} {v} to {ctx.ty(dt)}")

def _load(ctx, x: UOp) -> str:
  idx = x.src[0]
  if idx.src[0].op is not Ops.DEFINE_GLOBAL: raise NotImplementedError("LLVMRenderer has no local memory")
  gate = ctx[idx.src[2]] if len(idx.src) > 2 else None
  i = ctx.guard(x, gate) if ctx.checked else ctx[idx.src[1]]
  if gate: i = ctx.ins(f"select i1 {gate}, {ctx.ity} {i}, {ctx.ity} 0")  # element 0: inside the buffer, read and thrown away
  p = ctx.ins(f"getelementptr inbounds {ctx.mem_ty(x.dtype)}, ptr {ctx[idx.src[0]]}, {ctx.ity} {i}", "p")
  v = ctx.ins(f"load {ctx.mem_ty(x.dtype)}, ptr {p}", "val")
  if x.dtype is dtypes.bool: v = ctx.ins(f"icmp ne i8 {v}, 0")
  elif x.dtype is dtypes.bfloat16: v = ctx.bf2f(v)
  return ctx.ins(f"select i1 {gate}, {ctx.ty(x.dtype)} {v}, {ctx.ty(x.dtype)} {render_const(0, x.dtype)}", "val") if gate else v

def _store(ctx, x: UOp) -> str:
  idx, val = x.src
  v, dt = ctx[val], val.dtype
  if dt is dtypes.bool: v = ctx.ins(f"zext i1 {v} to i8")
  elif dt is dtypes.bfloat16: v = ctx.f2bf(v)
  gate = ctx[idx.src[2]] if len(idx.src) > 2 else None
  i = ctx.guard(x, gate) if ctx.checked else ctx[idx.src[1]]
  if gate is None:
    ctx.emit(f"store {ctx.mem_ty(dt)} {v}, ptr {ctx.ins(f'getelementptr inbounds {ctx.mem_ty(dt)}, ptr {ctx[idx.src[0]]}, {ctx.ity} {i}', 'p')}")
    return ""
  tag = ctx.fresh("store", "")
  p = ctx.ins(f"getelementptr {ctx.mem_ty(dt)}, ptr {ctx[idx.src[0]]}, {ctx.ity} {i}", "p")
  ctx.emit(f"br i1 {gate}, label %{tag}, label %{tag}.end")
  ctx.label(tag)
  ctx.emit(f"store {ctx.mem_ty(dt)} {v}, ptr {p}")
  ctx.emit(f"br label %{tag}.end")
  ctx.label(f"{tag}.end")
  return ""

def _range(ctx, x: UOp) -> str:
  tag, bound = ctx.fresh("loop", ""), ctx.sym(x.arg[1])
  ctx.emit(f"store {ctx.ity} 0, ptr {ctx.slot[x]}")
  ctx.emit(f"br label %{tag}")
  ctx.label(tag)
  ctx.emit(f"%{x.arg[2]} = load {ctx.ity}, ptr {ctx.slot[x]}")
  ctx.emit(f"br i1 {ctx.ins(f'icmp slt {ctx.ity} %{x.arg[2]}, {bound}')}, label %{tag}.body, label %{tag}.end")
  ctx.label(f"{tag}.body")
  ctx.loops.append((x, tag))
  return ""

def _endrange(ctx, x: UOp) -> str:
  rng, tag = ctx.loops.pop()
  ctx.emit(f"store {ctx.ity} {ctx.ins(f'add nsw {ctx.ity} %{rng.arg[2]}, 1')}, ptr {ctx.slot[rng]}")
  ctx.emit(f"br label %{tag}")
  ctx.label(f"{tag}.end")
  return ""

def _store_slot(ctx, x: UOp) -> str:
  """DEFINE_ACC stores its first value in the accumulator's slot; ASSIGN stores the new one."""
  ctx.emit(f"store {ctx.ty(x.dtype)} {ctx[x.src[0] if x.op is Ops.DEFINE_ACC else x.src[1]]}, ptr {ctx.slot[ctx.acc_of(x)]}")
  return ""

def _nan_first(ctx, x: UOp, a: UOp, b: UOp) -> str | None:
  """MAX's NaN test, a!=a ? a : b, as `a is ordered ? b : a` (C's `!(a==a)`, see renderer/cstyle.py); floats only (an int's
  a!=a, relu's NaN test on an int tensor, is an icmp: fcmp takes no ints)."""
  if x.dtype not in _FLOATS: return None
  t = ctx.ty(x.dtype)
  return ctx.ins(f"select i1 {ctx.ins(f'fcmp ord {t} {ctx[a]}, {ctx[a]}')}, {t} {ctx[b]}, {t} {ctx[a]}")

_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.bfloat16)
llvm_rules = PatternMatcher([
  (UPat((Ops.DEFINE_GLOBAL, Ops.DEFINE_VAR, Ops.SPECIAL, Ops.INDEX)), lambda: ""),  # arguments; an address is made where it is used
  (UPat(Ops.CONST, name="x"), lambda x: render_const(x.arg, x.dtype)),
  (UPat(Ops.RANGE, name="x"), _range),
  (UPat(Ops.ENDRANGE, name="x"), _endrange),
  (UPat(Ops.LOAD, name="x"), _load),
  (UPat(Ops.STORE, name="x"), _store),
  (UPat((Ops.DEFINE_ACC, Ops.ASSIGN), name="x"), _store_slot),
  (UPat(Ops.CAST, name="c", src=(UPat.var("x"),)), _cast),
  (UPat(Ops.BITCAST, name="c", src=(UPat.var("x"),)), _bitcast),
  (UPat(Ops.WHERE, name="x", src=(UPat(Ops.CMPNE, src=(UPat.var("a"), UPat.var("a"))), UPat.var("a"), UPat.var("b"))), _nan_first),
  (UPat(Ops.WHERE, name="x", src=(UPat.var("c"), UPat.var("a"), UPat.var("b"))),
   lambda ctx, x, c, a, b: ctx.ins(f"select i1 {ctx[c]}, {ctx.ty(x.dtype)} {ctx[a]}, {ctx.ty(x.dtype)} {ctx[b]}")),
  # floats
  (UPat(tuple(_FLOAT_OPS), name="x", src=(UPat.var("a", dtype=_FLOATS), UPat.var("b"))), _binary),
  (UPat(Ops.NEG, dtype=_FLOATS, name="x"), lambda ctx, x: ctx.ins(f"fneg {ctx.ty(x.dtype)} {ctx[x.src[0]]}")),
  (UPat(Ops.RECIP, name="x"), lambda ctx, x: ctx.ins(f"fdiv {ctx.ty(x.dtype)} {render_const(1, x.dtype)}, {ctx[x.src[0]]}")),
  (UPat(tuple(_MATH), name="x"), lambda ctx, x: ctx.call(f"llvm.{_MATH[x.op]}.{_SUFFIX[ctx.ty(x.dtype)]}", ctx.ty(x.dtype), [(ctx.ty(x.dtype), ctx[x.src[0]])])),
  # ints and bools (a bool's + and * are numpy's OR and AND)
  (UPat((Ops.ADD, Ops.MUL), dtype=dtypes.bool, name="x", src=(UPat.var("a"), UPat.var("b"))),
   lambda ctx, x, a, b: ctx.ins(f"{'or' if x.op is Ops.ADD else 'and'} i1 {ctx[a]}, {ctx[b]}")),
  (UPat(Ops.NEG, dtype=dtypes.bool, name="x"), lambda ctx, x: ctx.ins(f"xor i1 {ctx[x.src[0]]}, true")),
  (UPat(Ops.NEG, name="x"), lambda ctx, x: ctx.ins(f"sub {ctx.ty(x.dtype)} 0, {ctx[x.src[0]]}")),
  (UPat(Ops.CMPLT, name="x", src=(UPat.var("a"), UPat.var("b"))),
   lambda ctx, x, a, b: ctx.ins(f"icmp {'ult' if _uns(a.dtype) else 'slt'} {ctx.ty(a.dtype)} {ctx[a]}, {ctx[b]}")),
  (UPat(tuple(_WIDENED), name="x", src=(UPat.var("a"), UPat.var("b"))), _widened),
  (UPat(tuple(_INT_OPS), name="x", src=(UPat.var("a"), UPat.var("b"))), _binary)])

class LLVMRenderer(Renderer):
  """LLVM IR for the CPU: loops inside the kernel, a THREAD axis as a `tidx0` argument (like ClangRenderer)."""
  global_style = "loop"
  has_threads = True
  prefer_width = 0  # the device sets 512 with AVX-512 (as clang's -mprefer-vector-width=512 for the C kernels)

  def render(self, name: str | list[UOp], uops: list[UOp] | None = None) -> str:
    if not isinstance(name, str): uops, name = name, "test"  # tinygrad 0.10's render(uops)
    assert uops is not None
    # what one kernel decides (its names, lines, types) lives on a copy: BEAM renders candidates on several threads
    emulated = frozenset({dtypes.bfloat16}) if any(u.dtype is dtypes.bfloat16 for u in uops) else frozenset()
    return copy.copy(self)._write(name, prepare(uops, emulated, "t"))

  # ---- what rules use
  def __getitem__(self, u: UOp) -> str:
    """The operand of u here: its name, a constant, or its instructions emitted now (a value read once, or built by a
    pre-render rule, is computed where it is read)."""
    if (v := self.r.get(u)) is not None: return v
    if u.op in (Ops.DEFINE_ACC, Ops.ASSIGN):  # an accumulator is loaded from its slot (once per statement)
      if (acc := self.acc_of(u)) not in self.acc_reads:
        self.acc_reads[acc] = self.ins(f"load {self.ty(u.dtype)}, ptr {self.slot[acc]}", self.slot[acc][1:-len("slot")])
      return self.acc_reads[acc]
    return self._rule(u)
  def ty(self, dt: DType) -> str:
    if dt is dtypes.index: return self.ity
    if dt not in _TYPES: raise NotImplementedError(f"LLVMRenderer cannot render {dt}")
    return _TYPES[dt]
  def mem_ty(self, dt: DType) -> str: return _MEM.get(dt, self.ty(dt))
  def fast(self, op: Ops, dt: DType) -> str:
    """`contract` (may fuse into a multiply-add) on float arithmetic, as C's -ffp-contract=fast; none in a half kernel."""
    return self.contract if dt in (dtypes.float32, dtypes.float64) and op not in GroupOp.Comparison else ""
  def fresh(self, prefix: str, sigil: str = "%") -> str:
    self.counters[prefix] = self.counters.get(prefix, 0) + 1
    return f"{sigil}{prefix}{self.counters[prefix] - 1}"
  def emit(self, line: str, indent: str = "  "):
    self.body.append(indent + line)
    self.lmap.append([self.at])
  def label(self, name: str): self.emit(f"{name}:", indent="")
  def ins(self, text: str, prefix: str = "t") -> str:
    """Emit one instruction; its value's name."""
    self.emit(f"{(v := self.fresh(prefix))} = {text}")
    return v
  def call(self, fn: str, ret: str, args: list[tuple[str, str]]) -> str:
    self.declares.add(f"declare {ret} @{fn}({', '.join(t for t, _ in args)})")
    return self.ins(f"call {ret} @{fn}({', '.join(f'{t} {v}' for t, v in args)})")
  def acc_of(self, u: UOp) -> UOp:
    while u.op is Ops.ASSIGN: u = u.src[0]
    return u
  # bfloat16: 16 bits in memory, float in registers
  def bf2f(self, x: str) -> str:
    bits = self.ins(f"zext i16 {x} to i32")
    return self.ins(f"bitcast i32 {self.ins(f'shl i32 {bits}, 16')} to float")
  def f2bf(self, x: str) -> str:  # + 0x7fff + the lowest kept bit, then the top 16 bits; NaN: its top bits, made quiet
    b = self.ins(f"bitcast float {x} to i32")
    hi = self.ins(f"lshr i32 {b}, 16")
    odd = self.ins(f"and i32 {hi}, 1")
    up = self.ins(f"add i32 {b}, 32767")
    rounded = self.ins(f"lshr i32 {self.ins(f'add i32 {up}, {odd}')}, 16")
    mag = self.ins(f"and i32 {b}, 2147483647")
    nan = self.ins(f"icmp ugt i32 {mag}, 2139095040")
    quiet = self.ins(f"or i32 {hi}, 64")
    return self.ins(f"trunc i32 {self.ins(f'select i1 {nan}, i32 {quiet}, i32 {rounded}')} to i16")
  def sym(self, x) -> str:
    """A loop bound: an int, or an expression in the kernel's variables (arguments are i32: widened in a wide kernel)."""
    if not isinstance(x, UOp): return str(int(x))
    if x.op in (Ops.DEFINE_VAR, Ops.BIND): return f"%var.{x.expr}" if self.ity == "i32" else self.ins(f"sext i32 %var.{x.expr} to i64")
    if x.op is Ops.CONST: return str(int(x.arg))
    if x.op is Ops.CAST: return self.sym(x.src[0])
    if x.op is Ops.NEG: return self.ins(f"sub {self.ity} 0, {self.sym(x.src[0])}")
    a, b = self.sym(x.src[0]), self.sym(x.src[1])
    if x.op is Ops.MAX: return self.ins(f"select i1 {self.ins(f'icmp sgt {self.ity} {a}, {b}')}, {self.ity} {a}, {self.ity} {b}")
    return self.ins(f"{_SYM_OPS[x.op]} {self.ity} {a}, {b}")
  def guard(self, u: UOp, gate: str | None) -> str:
    """LAZYNB_CHECK: the access's index, tested against its buffer's size first (the C renderer's check, "return" style)."""
    idx, tag = u.src[0], self.fresh("chk", "")
    i = self[idx.src[1]]
    wi = i if self.ity == "i64" else self.ins(f"sext i32 {i} to i64")
    n = self.ins(f"load i64, ptr {self.ins(f'getelementptr i64, ptr %lz_chk, i64 {CHECK_HEAD + idx.src[0].arg}', 'p')}")
    bad = self.ins(f"icmp uge i64 {wi}, {n}")
    if gate: bad = self.ins(f"and i1 {gate}, {bad}")
    self.emit(f"br i1 {bad}, label %{tag}.oob, label %{tag}.ok")
    self.label(f"{tag}.oob")
    self.emit(f"call void @lz_oob(ptr %lz_chk, i32 {idx.src[0].arg}, i64 {wi}, i32 {int(u.op is Ops.STORE)})")
    self.emit("ret void")
    self.label(f"{tag}.ok")
    return i

  # ---- the walker
  def _rule(self, u: UOp) -> str:
    v: Any = llvm_rules.rewrite(u, self)  # the table's rules give instruction text, not UOps
    if v is None: raise NotImplementedError(f"LLVMRenderer cannot render {u.op} on {u.dtype}")
    return v
  def _write(self, name: str, lin: Linear) -> str:
    self.lin, self.ity = lin, "i64" if lin.index is dtypes.int64 else "i32"
    self.contract = "" if any(u.dtype is dtypes.float16 for u in lin.uops + list(lin.built)) else " contract"
    self.body: list[str] = []
    self.lmap: list[list[int]] = []
    self.declares: set[str] = set()
    self.counters: dict[str, int] = {}
    self.loops: list[tuple[UOp, str]] = []
    self.r: dict[UOp, str] = {}          # values with a name in scope (arguments, loads, values read more than once)
    self.slot: dict[UOp, str] = {}       # accumulators and loop counters: their stack slot
    scopes: list[list[UOp]] = [[]]       # the names made inside each open loop (gone when it ends)
    # the kernel's arguments: buffers, variables, thread ids (the C kernel's order)
    params, entry = [], []
    for u in lin.uops:
      if u.op is Ops.DEFINE_GLOBAL:
        self.r[u] = f"%data{u.arg}"
        params.append(f"ptr noalias {self.r[u]}")
    rendering.checked = self.checked = bool(CHECK)
    if self.checked: params.append("ptr noalias %lz_chk")  # sizes in, the first failure out (renderer/cstyle.py, check_style)
    for u in lin.uops:
      if u.op is Ops.DEFINE_VAR:  # %var.<name>: no other value's name starts with "var."
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", u.arg[0]): raise ValueError(f"variable name {u.arg[0]!r}: use letters, digits and _")
        params.append(f"i32 %var.{u.arg[0]}")
        self.r[u] = f"%var.{u.arg[0]}"
    for u in sorted((u for u in lin.uops if u.op is Ops.SPECIAL), key=lambda u: u.arg[0]):
      if not u.arg[0].startswith("t"): raise NotImplementedError(f"LLVMRenderer has no {u.arg[0]} (work-items are GPU ids)")
      params.append(f"i32 %{u.arg[0]}.arg")
      # the id modulo the thread count: the optimizer then knows its range (see ClangRenderer.render_kernel)
      entry.append((f"%{u.arg[0]} = urem i32 %{u.arg[0]}.arg, {u.arg[1]}", lin.pos[u]))
      self.r[u] = f"%{u.arg[0]}"
    for u in lin.uops:  # stack slots, in the entry block
      if u.op is Ops.DEFINE_ACC: self.slot[u] = f"%acc{sum(a.op is Ops.DEFINE_ACC for a in self.slot)}.slot"
      elif u.op is Ops.RANGE: self.slot[u] = f"%{u.arg[2]}.slot"
      else: continue
      entry.append((f"{self.slot[u]} = alloca {self.ty(u.dtype)}", lin.pos[u]))
    for u in lin.uops:
      self.at = lin.pos[u]
      self.acc_reads: dict[UOp, str] = {}
      if u.op in (Ops.DEFINE_GLOBAL, Ops.DEFINE_VAR, Ops.SPECIAL, Ops.CONST, Ops.INDEX): continue
      if u.op in GroupOp.ALU or u.op in (Ops.CAST, Ops.BITCAST):  # named where it is computed; else where it is read
        if lin.uses.get(u, 0) > 1 and u not in self.r: self.r[u] = self._rule(u)
      elif u.op is Ops.LOAD: self.r[u] = self._rule(u)
      else: self._rule(u)
      if u in self.r: scopes[-1].append(u)
      if u.op is Ops.RANGE:
        self.r[u] = f"%{u.arg[2]}"
        scopes.append([u])
      if u.op is Ops.ENDRANGE:
        for x in scopes.pop(): self.r.pop(x, None)  # a value made in a loop does not dominate the code after it
    attrs = ' "prefer-vector-width"="512"' if self.prefer_width == 512 else ""
    head = [f"; {name}: LLVM IR from the same UOps as the C kernel (lazynb's LLVM device)", *sorted(self.declares), "",
            *(_CHECK_IR.splitlines() + [""] if self.checked else []), f"define void @{name}({', '.join(params)}) #0 {{", "entry:"]
    tail = ["  ret void", "}", "", f"attributes #0 = {{ nounwind{attrs} }}"]
    self.line_map = [[] for _ in head] + [[p] for _, p in entry] + self.lmap + [[] for _ in tail]
    return "\n".join(head + [f"  {line}" for line, _ in entry] + self.body + tail) + "\n"
