"""LLVM IR from linearized UOps: the kernel ClangRenderer writes as C, one instruction per line, for the LLVM device
(compiled inside the Python process, runtime/ops_llvm.py).

It follows the C renderer's rules, so the two compute the same thing: a value used once is emitted where it is used
(where C would write it inline), a value used more often where the kernel computes it (C's aluN); a load is emitted
where the kernel loads (C's valN). Loop counters and accumulators live in stack slots (`alloca`), loaded where they
are read and stored where they change, as C variables are: LLVM's first passes (SROA, mem2reg) turn them into
registers and phi nodes, so the IR a learner reads has no phi bookkeeping.

The C rules it copies on purpose: float ops may fuse into multiply-adds (`contract`, C's -ffp-contract=fast) except
in kernels that compute in half; float16 is LLVM's `half` (every operation rounded to half, as numpy); bfloat16 lives
in 16 bits and is computed in float, rounded back after every operation (to nearest even, NaN kept quiet); a float
becomes an int by saturating, NaN -> 0 (`llvm.fptosi.sat`); a gated load reads element 0 and throws it away
instead of branching (an address inside the buffer), so a masked row still vectorizes.
"""
from __future__ import annotations
import math, re, struct
import numpy as np
from lazynb.dtype import DType, dtypes, truncate
from lazynb.helpers import CHECK
from lazynb.uop.ops import UOp, Ops, GroupOp
from lazynb.renderer import Renderer, rendering, needs_wide_index, CHECK_HEAD

_TYPES = {dtypes.bool: "i1", dtypes.int8: "i8", dtypes.uint8: "i8", dtypes.int16: "i16", dtypes.uint16: "i16", dtypes.int32: "i32",
          dtypes.uint32: "i32", dtypes.int64: "i64", dtypes.uint64: "i64", dtypes.float16: "half", dtypes.float32: "float",
          dtypes.float64: "double", dtypes.bfloat16: "float"}
_MEM = {dtypes.bool: "i8", dtypes.bfloat16: "i16"}  # how a value is kept in memory, where it differs from registers
_SUFFIX = {"half": "f16", "float": "f32", "double": "f64"}
_FLOAT_OPS = {Ops.ADD: "fadd", Ops.MUL: "fmul", Ops.MOD: "frem"}
_INT_OPS = {Ops.ADD: "add", Ops.MUL: "mul", Ops.AND: "and", Ops.OR: "or", Ops.XOR: "xor", Ops.SHL: "shl"}
_MATH = {Ops.EXP2: "exp2", Ops.LOG2: "log2", Ops.SIN: "sin", Ops.SQRT: "sqrt", Ops.TRUNC: "trunc"}
_SYM_OPS = {Ops.ADD: "add", Ops.MUL: "mul", Ops.IDIV: "sdiv", Ops.MOD: "srem"}
_EXACT = {Ops.NEG, Ops.MAX, Ops.WHERE, Ops.TRUNC}  # on bfloat16 their result is already one of the 16-bit values

def _signed(x: int, bits: int) -> int:
  x &= (1 << bits) - 1
  return x - (1 << bits) if x >= 1 << (bits - 1) else x

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

class LLVMRenderer(Renderer):
  """LLVM IR for the CPU: loops inside the kernel, a THREAD axis as a `tidx0` argument (like ClangRenderer)."""
  global_style = "loop"
  has_threads = True
  prefer_width = 0  # the device sets 512 with AVX-512 (as clang's -mprefer-vector-width=512 for the C kernels)

  def render(self, name: str, uops: list[UOp]) -> str:
    wide = needs_wide_index(uops)
    ity = "i64" if wide else "i32"  # index math: 32 bits unless an index can pass 2^31 (the C renderer's rule)
    rendering.index_type = ity
    contract = "" if any(u.dtype is dtypes.float16 for u in uops) else " contract"
    pos = {u: i for i, u in enumerate(uops)}
    uses: dict[UOp, int] = {}
    for u in uops:
      for s in u.src: uses[s] = uses.get(s, 0) + 1
    body: list[str] = []
    lmap: list[list[int]] = []
    declares: set[str] = set()
    counters: dict[str, int] = {}
    r: dict[UOp, str] = {}         # values with a name of their own (arguments, loads, values used more than once)
    slot: dict[UOp, str] = {}      # accumulators and loop counters: their stack slot
    at: list[int] = [0]            # the uop being rendered (for the line map)

    def fresh(prefix: str) -> str:
      counters[prefix] = counters.get(prefix, 0) + 1
      return f"%{prefix}{counters[prefix] - 1}"
    def emit(line: str, indent: int = 2):
      body.append(" " * indent + line)
      lmap.append([at[0]])
    def label(name: str):
      body.append(f"{name}:")
      lmap.append([at[0]])
    def ins(prefix: str, text: str) -> str:
      v = fresh(prefix)
      emit(f"{v} = {text}")
      return v
    def ty(dt: DType) -> str:
      if dt is dtypes.index: return ity
      if dt not in _TYPES: raise NotImplementedError(f"LLVMRenderer cannot render {dt}")
      return _TYPES[dt]
    def mem_ty(dt: DType) -> str: return _MEM.get(dt, ty(dt))
    def call(fn: str, ret: str, args: list[tuple[str, str]]) -> str:
      declares.add(f"declare {ret} @{fn}({', '.join(t for t, _ in args)})")
      return ins("t", f"call {ret} @{fn}({', '.join(f'{t} {v}' for t, v in args)})")
    # bfloat16: 16 bits in memory, float in registers
    def bf2f(x: str) -> str:
      bits = ins("t", f"zext i16 {x} to i32")
      return ins("t", f"bitcast i32 {ins('t', f'shl i32 {bits}, 16')} to float")
    def f2bf(x: str) -> str:  # + 0x7fff + the lowest kept bit, then the top 16 bits; NaN: its top bits, made quiet
      b = ins("t", f"bitcast float {x} to i32")
      hi = ins("t", f"lshr i32 {b}, 16")
      odd = ins("t", f"and i32 {hi}, 1")
      up = ins("t", f"add i32 {b}, 32767")
      rounded = ins("t", f"lshr i32 {ins('t', f'add i32 {up}, {odd}')}, 16")
      mag = ins("t", f"and i32 {b}, 2147483647")
      nan = ins("t", f"icmp ugt i32 {mag}, 2139095040")
      quiet = ins("t", f"or i32 {hi}, 64")
      return ins("t", f"trunc i32 {ins('t', f'select i1 {nan}, i32 {quiet}, i32 {rounded}')} to i16")
    def rnd(x: str, dt: DType) -> str: return bf2f(f2bf(x)) if dt is dtypes.bfloat16 else x

    def val(u: UOp) -> str:
      """The operand text of u at this point of the kernel: its name, a constant, or its instructions emitted now."""
      if u in r: return r[u]
      if u.op is Ops.CONST: return render_const(u.arg, u.dtype)
      if u.op in (Ops.DEFINE_ACC, Ops.ASSIGN):
        acc = u
        while acc.op is Ops.ASSIGN: acc = acc.src[0]
        return ins(slot[acc][1:-len("slot")], f"load {ty(u.dtype)}, ptr {slot[acc]}")
      return compute(u)
    def sym(x) -> str:
      """A loop bound: an int, or an expression in the kernel's variables."""
      if not isinstance(x, UOp): return str(int(x))
      if x.op in (Ops.DEFINE_VAR, Ops.BIND): return r[next(v for v in uops if v.op is Ops.DEFINE_VAR and v.arg[0] == x.expr)]
      if x.op is Ops.CONST: return str(int(x.arg))
      if x.op is Ops.CAST: return sym(x.src[0])
      if x.op is Ops.NEG: return ins("t", f"sub {ity} 0, {sym(x.src[0])}")
      a, b = sym(x.src[0]), sym(x.src[1])
      if x.op is Ops.MAX: return ins("t", f"select i1 {ins('t', f'icmp sgt {ity} {a}, {b}')}, {ity} {a}, {ity} {b}")
      return ins("t", f"{_SYM_OPS[x.op]} {ity} {a}, {b}")
    def address(idx: UOp, gate: str | None, i: str | None = None) -> str:
      i = val(idx.src[1]) if i is None else i
      if gate: i = ins("t", f"select i1 {gate}, {ity} {i}, {ity} 0")  # element 0: inside the buffer, read and thrown away
      return ins("p", f"getelementptr inbounds {mem_ty(idx.dtype.base)}, ptr {val(idx.src[0])}, {ity} {i}")
    def guard(u: UOp, gate: str | None) -> str:
      """LAZYNB_CHECK: the access's index, tested against its buffer's size first (the C renderer's check, "return" style)."""
      idx, tag = u.src[0], f"chk{counters.setdefault('chk', 0)}"
      counters["chk"] += 1
      i = val(idx.src[1])
      wi = i if ity == "i64" else ins("t", f"sext i32 {i} to i64")
      n = ins("t", f"load i64, ptr {ins('p', f'getelementptr i64, ptr %lz_chk, i64 {CHECK_HEAD + idx.src[0].arg}')}")
      bad = ins("t", f"icmp uge i64 {wi}, {n}")
      if gate: bad = ins("t", f"and i1 {gate}, {bad}")
      emit(f"br i1 {bad}, label %{tag}.oob, label %{tag}.ok")
      label(f"{tag}.oob")
      emit(f"call void @lz_oob(ptr %lz_chk, i32 {idx.src[0].arg}, i64 {wi}, i32 {int(u.op is Ops.STORE)})")
      emit("ret void")
      label(f"{tag}.ok")
      return i
    def to_bool(x: str, dt: DType) -> str:
      if dtypes.is_float(dt): return ins("t", f"fcmp une {ty(dt)} {x}, {render_const(0, dt)}")
      return ins("t", f"icmp ne {ty(dt)} {x}, 0")
    def cast(x: str, src: DType, dt: DType) -> str:
      st, dtt = ty(src), ty(dt)
      if dt is dtypes.bool: return x if src is dtypes.bool else to_bool(x, src)
      if dtypes.is_float(dt):
        if dt is dtypes.bfloat16:  # via float, then rounded to bfloat16 (C: lz_bf2f(lz_f2bf((float)x)))
          return rnd(cast(x, src, dtypes.float32), dt)
        if dtypes.is_float(src):
          if st == dtt: return x
          return ins("t", f"{'fpext' if src.itemsize < dt.itemsize else 'fptrunc'} {st} {x} to {dtt}")
        return ins("t", f"{'uitofp' if src is dtypes.bool or dtypes.is_unsigned(src) else 'sitofp'} {st} {x} to {dtt}")
      if dtypes.is_float(src):  # saturating, NaN -> 0: the rule the C kernels and constant folding follow
        fn = f"llvm.fpto{'u' if dtypes.is_unsigned(dt) else 's'}i.sat.{dtt}.{_SUFFIX[st]}"
        return call(fn, dtt, [(st, x)])
      sb, db = (int(ty(d)[1:]) for d in (src, dt))
      if sb == db: return x
      if sb > db: return ins("t", f"trunc {st} {x} to {dtt}")
      return ins("t", f"{'zext' if src is dtypes.bool or dtypes.is_unsigned(src) else 'sext'} {st} {x} to {dtt}")
    def bitcast(x: str, src: DType, dt: DType) -> str:
      if src is dtypes.bfloat16: x, src = f2bf(x), dtypes.uint16
      if dt is dtypes.bfloat16: return bf2f(x if src.itemsize == 2 and not dtypes.is_float(src) else ins("t", f"bitcast {ty(src)} {x} to i16"))
      return x if ty(src) == ty(dt) else ins("t", f"bitcast {ty(src)} {x} to {ty(dt)}")

    def alu(op: Ops, xs: list[str], dt: DType, sdt: DType) -> str:
      """One ALU op on operands xs of dtype sdt (the first source's), result dtype dt."""
      t = ty(sdt)
      if dtypes.is_float(sdt):
        fl = contract if sdt in (dtypes.float32, dtypes.float64, dtypes.bfloat16) else ""
        if sdt is dtypes.bfloat16 and op not in _EXACT and op not in (Ops.CMPLT, Ops.CMPNE):
          if op is Ops.MULACC:  # two roundings, as numpy's a*b+c
            prod = rnd(ins("t", f"fmul float {xs[0]}, {xs[1]}"), dt)
            return rnd(ins("t", f"fadd float {prod}, {xs[2]}"), dt)
          return rnd(alu(op, xs, dtypes.float32, dtypes.float32), dt)
        if op in _FLOAT_OPS: return ins("t", f"{_FLOAT_OPS[op]}{fl} {t} {xs[0]}, {xs[1]}")
        if op is Ops.NEG: return ins("t", f"fneg {t} {xs[0]}")
        if op is Ops.RECIP: return ins("t", f"fdiv {t} {render_const(1, sdt if sdt is not dtypes.bfloat16 else dtypes.float32)}, {xs[0]}")
        if op in _MATH: return call(f"llvm.{_MATH[op]}.{_SUFFIX[t]}", t, [(t, xs[0])])
        if op is Ops.MULACC:
          prod = ins("t", f"fmul{fl} {t} {xs[0]}, {xs[1]}")
          return ins("t", f"fadd{fl} {t} {prod}, {xs[2]}")
        if op is Ops.CMPLT: return ins("t", f"fcmp olt {t} {xs[0]}, {xs[1]}")
        if op is Ops.CMPNE: return ins("t", f"fcmp une {t} {xs[0]}, {xs[1]}")
        if op is Ops.MAX:  # NaN from either side wins, and max(-0, +0) is the second, as in the C kernels
          gt, nan = ins("t", f"fcmp ogt {t} {xs[0]}, {xs[1]}"), ins("t", f"fcmp uno {t} {xs[0]}, {xs[0]}")
          bigger = ins("t", f"or i1 {gt}, {nan}")
          return ins("t", f"select i1 {bigger}, {t} {xs[0]}, {t} {xs[1]}")
      elif op is Ops.WHERE: pass
      else:
        uns = sdt is dtypes.bool or dtypes.is_unsigned(sdt)
        if sdt is dtypes.bool and op in (Ops.ADD, Ops.MUL): op = Ops.OR if op is Ops.ADD else Ops.AND  # numpy's bool + and *
        if op is Ops.NEG: return ins("t", f"xor i1 {xs[0]}, true") if sdt is dtypes.bool else ins("t", f"sub {t} 0, {xs[0]}")
        if op in _INT_OPS and op is not Ops.SHL:
          nsw = " nsw" if sdt is dtypes.index and op in (Ops.ADD, Ops.MUL) else ""  # indices fit: `wide` was chosen above
          return ins("t", f"{_INT_OPS[op]}{nsw} {t} {xs[0]}, {xs[1]}")
        if op in (Ops.IDIV, Ops.MOD, Ops.SHL, Ops.SHR):  # C computes these on int: a narrow type is widened first
          w = "i32" if sdt.itemsize < 4 and sdt is not dtypes.index else t
          a, b = (ins("t", f"{'zext' if uns else 'sext'} {t} {x} to {w}") if w != t else x for x in xs[:2])
          name = {Ops.IDIV: "udiv" if uns else "sdiv", Ops.MOD: "urem" if uns else "srem", Ops.SHL: "shl", Ops.SHR: "lshr" if uns else "ashr"}[op]
          res = ins("t", f"{name} {w} {a}, {b}")
          return ins("t", f"trunc {w} {res} to {t}") if w != t else res
        if op is Ops.MULACC:
          prod = ins("t", f"mul {t} {xs[0]}, {xs[1]}")
          return ins("t", f"add {t} {prod}, {xs[2]}")
        if op is Ops.CMPLT: return ins("t", f"icmp {'ult' if uns else 'slt'} {t} {xs[0]}, {xs[1]}")
        if op is Ops.CMPNE: return ins("t", f"icmp ne {t} {xs[0]}, {xs[1]}")
        if op is Ops.MAX:
          gt = ins("t", f"icmp {'ugt' if uns else 'sgt'} {t} {xs[0]}, {xs[1]}")
          return ins("t", f"select i1 {gt}, {t} {xs[0]}, {t} {xs[1]}")
      if op is Ops.WHERE: return ins("t", f"select i1 {xs[0]}, {ty(dt)} {xs[1]}, {ty(dt)} {xs[2]}")
      raise NotImplementedError(f"LLVMRenderer cannot render {op} on {sdt}")

    def compute(u: UOp) -> str:
      """Emit a pure value (ALU, CAST, BITCAST) and return its name."""
      if u.op is Ops.CAST: return cast(val(u.src[0]), u.src[0].dtype, u.dtype)
      if u.op is Ops.BITCAST: return bitcast(val(u.src[0]), u.src[0].dtype, u.dtype)
      if u.op in GroupOp.ALU:
        sdt = u.src[1].dtype if u.op is Ops.WHERE else u.src[0].dtype
        return alu(u.op, [val(s) for s in u.src], u.dtype, sdt)
      raise NotImplementedError(f"LLVMRenderer cannot render {u.op}")

    # the kernel's arguments: buffers, variables, thread ids (the C kernel's order)
    params, entry = [], []
    for u in uops:
      if u.op is Ops.DEFINE_GLOBAL:
        r[u] = f"%data{u.arg}"
        params.append(f"ptr noalias {r[u]}")
    rendering.checked = check = bool(CHECK)
    if check: params.append("ptr noalias %lz_chk")  # sizes in, the first failure out (renderer/cstyle.py, check_style)
    for u in uops:
      if u.op is Ops.DEFINE_VAR:  # %var.<name>: no other value's name starts with "var."
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", u.arg[0]): raise ValueError(f"variable name {u.arg[0]!r}: use letters, digits and _")
        params.append(f"i32 %var.{u.arg[0]}")
        r[u] = f"%var.{u.arg[0]}" if not wide else f"%var.{u.arg[0]}.w"
        if wide: entry.append((f"%var.{u.arg[0]}.w = sext i32 %var.{u.arg[0]} to i64", pos[u]))
    for u in sorted((u for u in uops if u.op is Ops.SPECIAL), key=lambda u: u.arg[0]):
      if not u.arg[0].startswith("t"): raise NotImplementedError(f"LLVMRenderer has no {u.arg[0]} (work-items are GPU ids)")
      params.append(f"i32 %{u.arg[0]}.arg")
      # the id modulo the thread count: the optimizer then knows its range (see ClangRenderer.render_kernel)
      entry.append((f"%{u.arg[0]} = urem i32 %{u.arg[0]}.arg, {u.arg[1]}", pos[u]))
      r[u] = f"%{u.arg[0]}"
      if wide:
        entry.append((f"%{u.arg[0]}.w = sext i32 %{u.arg[0]} to i64", pos[u]))
        r[u] = f"%{u.arg[0]}.w"
    for u in uops:  # stack slots, in the entry block
      if u.op is Ops.DEFINE_ACC: slot[u] = f"%acc{sum(a.op is Ops.DEFINE_ACC for a in slot)}.slot"
      elif u.op is Ops.RANGE: slot[u] = f"%{u.arg[2]}.slot"
      else: continue
      entry.append((f"{slot[u]} = alloca {ty(u.dtype)}", pos[u]))
    loops: list[tuple[UOp, str]] = []
    for i, u in enumerate(uops):
      at[0], op = i, u.op
      if op in (Ops.DEFINE_GLOBAL, Ops.DEFINE_VAR, Ops.SPECIAL, Ops.CONST): continue
      if op is Ops.RANGE:
        tag = f"loop{counters.setdefault('loop', 0)}"
        counters["loop"] += 1
        bound = sym(u.arg[1])
        emit(f"store {ty(u.dtype)} 0, ptr {slot[u]}")
        emit(f"br label %{tag}")
        label(tag)
        r[u] = f"%{u.arg[2]}"
        emit(f"{r[u]} = load {ty(u.dtype)}, ptr {slot[u]}")
        emit(f"br i1 {ins('t', f'icmp slt {ty(u.dtype)} {r[u]}, {bound}')}, label %{tag}.body, label %{tag}.end")
        label(f"{tag}.body")
        loops.append((u, tag))
      elif op is Ops.ENDRANGE:
        rng, tag = loops.pop()
        emit(f"store {ty(rng.dtype)} {ins('t', f'add nsw {ty(rng.dtype)} {r[rng]}, 1')}, ptr {slot[rng]}")
        emit(f"br label %{tag}")
        label(f"{tag}.end")
      elif op is Ops.INDEX: pass  # an address is computed where a load or store uses it
      elif op is Ops.LOAD:
        idx = u.src[0]
        if idx.src[0].op is not Ops.DEFINE_GLOBAL: raise NotImplementedError("LLVMRenderer has no local memory")
        gate = val(idx.src[2]) if len(idx.src) > 2 else None
        p = address(idx, gate, guard(u, gate) if check else None)
        mt = mem_ty(u.dtype)
        x = ins("val", f"load {mt}, ptr {p}")
        if u.dtype is dtypes.bool: x = ins("t", f"icmp ne i8 {x}, 0")
        elif u.dtype is dtypes.bfloat16: x = bf2f(x)
        if gate: x = ins("val", f"select i1 {gate}, {ty(u.dtype)} {x}, {ty(u.dtype)} {render_const(0, u.dtype)}")
        r[u] = x
      elif op is Ops.STORE:
        idx, v = u.src
        x, dt = val(v), v.dtype
        if dt is dtypes.bool: x = ins("t", f"zext i1 {x} to i8")
        elif dt is dtypes.bfloat16: x = f2bf(x)
        gated = len(idx.src) > 2
        ci = guard(u, val(idx.src[2]) if gated else None) if check else None
        if gated:
          g, tag = val(idx.src[2]), f"store{counters.setdefault('store', 0)}"
          counters["store"] += 1
          p = ins("p", f"getelementptr {mem_ty(dt)}, ptr {val(idx.src[0])}, {ity} {val(idx.src[1]) if ci is None else ci}")
          emit(f"br i1 {g}, label %{tag}, label %{tag}.end")
          label(tag)
          emit(f"store {mem_ty(dt)} {x}, ptr {p}")
          emit(f"br label %{tag}.end")
          label(f"{tag}.end")
        else: emit(f"store {mem_ty(dt)} {x}, ptr {address(idx, None, ci)}")
      elif op is Ops.DEFINE_ACC: emit(f"store {ty(u.dtype)} {val(u.src[0])}, ptr {slot[u]}")
      elif op is Ops.ASSIGN:
        acc = u.src[0]
        while acc.op is Ops.ASSIGN: acc = acc.src[0]
        emit(f"store {ty(u.dtype)} {self._accumulate(u, val, alu, uses, r)}, ptr {slot[acc]}")
      elif op in GroupOp.ALU or op in (Ops.CAST, Ops.BITCAST):
        if uses.get(u, 0) > 1: r[u] = compute(u)  # named where it is computed; else where it is used
      else: raise NotImplementedError(f"LLVMRenderer cannot render {op}")
    attrs = ' "prefer-vector-width"="512"' if self.prefer_width == 512 else ""
    head = [f"; {name}: LLVM IR from the same UOps as the C kernel (lazynb's LLVM device)", *sorted(declares), "",
            *(_CHECK_IR.splitlines() + [""] if check else []), f"define void @{name}({', '.join(params)}) #0 {{", "entry:"]
    tail = ["  ret void", "}", "", f"attributes #0 = {{ nounwind{attrs} }}"]
    self.line_map = [[] for _ in head] + [[p] for _, p in entry] + lmap + [[] for _ in tail]
    return "\n".join(head + [f"  {line}" for line, _ in entry] + body + tail) + "\n"

  @staticmethod
  def _accumulate(u: UOp, val, alu, uses: dict[UOp, int], named: dict[UOp, str]) -> str:
    """The new value of an accumulator; an unrolled sum acc + (((t0+t1)+t2)+t3) is added in loop order
    (((acc+t0)+t1)+t2)+t3, so each product fuses into a multiply-add (as ClangRenderer._accumulate)."""
    acc, v = u.src
    if v.op is not Ops.ADD or v.src[0] is not acc or not dtypes.is_float(u.dtype) or v in named: return val(v)
    terms, x = [], v.src[1]
    while x.op is Ops.ADD and uses.get(x, 0) == 1 and x not in named:
      terms.append(x.src[1])
      x = x.src[0]
    expr = val(acc)
    for t in [x] + terms[::-1]: expr = alu(Ops.ADD, [expr, val(t)], u.dtype, u.dtype)
    return expr
