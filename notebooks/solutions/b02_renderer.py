# %% EXERCISE b02.render
import math
from lazynb.uop.ops import Ops
from lazynb.dtype import dtypes

C_TYPE = {dtypes.float: "float", dtypes.int: "int", dtypes.bool: "_Bool", dtypes.index: "int"}
INFIX = {Ops.ADD: "+", Ops.MUL: "*", Ops.CMPLT: "<", Ops.CMPNE: "!=", Ops.AND: "&", Ops.OR: "|", Ops.XOR: "^",
         Ops.IDIV: "/", Ops.MOD: "%"}
CALL = {Ops.EXP2: "__builtin_exp2f", Ops.LOG2: "__builtin_log2f", Ops.SIN: "__builtin_sinf", Ops.SQRT: "__builtin_sqrtf"}

def c_const(value, dtype):
  if dtype == dtypes.float:
    if math.isnan(value): return "__builtin_nanf(\"\")"
    if math.isinf(value): return "__builtin_inff()" if value > 0 else "(-__builtin_inff())"
    return f"{float(value)!r}f"
  return str(int(value))

def my_render(name, uops, renderer):
  r, lines, params, depth = {}, [], [], 1
  def emit(text): lines.append("  " * depth + text)
  for i, u in enumerate(uops):
    s = [r.get(x) for x in u.src]
    if u.op is Ops.DEFINE_GLOBAL:
      r[u] = f"data{u.arg}"
      params.append(f"{C_TYPE[u.dtype.base]}* restrict data{u.arg}")
    elif u.op is Ops.CONST: r[u] = c_const(u.arg, u.dtype)
    elif u.op is Ops.RANGE:
      r[u] = f"ridx{i}"
      emit(f"for (int ridx{i} = 0; ridx{i} < {s[0] if s else u.arg[1]}; ridx{i}++) {{")
      depth += 1
    elif u.op is Ops.ENDRANGE:
      depth -= 1
      emit("}")
    elif u.op is Ops.INDEX: r[u] = (f"({s[0]}+{s[1]})", s[2] if len(s) > 2 else None)
    elif u.op is Ops.LOAD:
      addr, valid = s[0]
      r[u] = f"v{i}"
      emit(f"{C_TYPE[u.dtype]} v{i} = " + (f"*{addr};" if valid is None else f"({valid}) ? *{addr} : {c_const(0, u.dtype)};"))
    elif u.op is Ops.STORE:
      addr, valid = s[0]
      emit(f"*{addr} = {s[1]};" if valid is None else f"if ({valid}) *{addr} = {s[1]};")
    elif u.op is Ops.DEFINE_ACC:
      r[u] = f"acc{i}"
      emit(f"{C_TYPE[u.dtype]} acc{i} = {s[0]};")
    elif u.op is Ops.ASSIGN:
      r[u] = s[0]
      emit(f"{s[0]} = {s[1]};")
    else:
      if u.op in INFIX: expr = f"({s[0]} {INFIX[u.op]} {s[1]})"
      elif u.op in CALL: expr = f"{CALL[u.op]}({s[0]})"
      elif u.op is Ops.NEG: expr = f"(-{s[0]})"
      elif u.op is Ops.RECIP: expr = f"(1.0f / {s[0]})"
      elif u.op is Ops.MAX: expr = f"(({s[0]} > {s[1]}) ? {s[0]} : {s[1]})"
      elif u.op is Ops.WHERE: expr = f"({s[0]} ? {s[1]} : {s[2]})"
      elif u.op is Ops.CAST: expr = f"(({C_TYPE[u.dtype]})({s[0]}))"
      else: raise NotImplementedError(f"my_render cannot render {u.op}")
      r[u] = f"v{i}"
      emit(f"{C_TYPE[u.dtype]} v{i} = {expr};")
  return f"void {name}({', '.join(params)}) {{\n" + "\n".join(lines) + "\n}\n"
