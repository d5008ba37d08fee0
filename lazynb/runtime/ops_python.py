"""The PYTHON device: no compiler at all. The "source" is the linearized UOp list itself, one Python tuple per
line, and the runtime interprets it instruction by instruction (slow, but every step is inspectable)."""
from __future__ import annotations
import ast as pyast, math, time
from typing import Any
import numpy as np
from lazynb.device import Compiled, Compiler, Runner, out_of_bounds
from lazynb.dtype import DType, dtypes, to_dtype, np_storage, to_storage, from_storage
from lazynb.renderer import Renderer
from lazynb.runtime.ops_cpu import CPUAllocator
from lazynb.uop.ops import UOp, Ops, exec_alu, GroupOp

class PythonRenderer(Renderer):
  global_style = "loop"
  def render(self, name: str, uops: list[UOp]) -> str:
    pos = {u: i for i, u in enumerate(uops)}
    self.line_map = [[]] + [[i] for i in range(len(uops))]
    lines = [f"# {name}: (index, op, dtype, sources, arg)"]
    for i, u in enumerate(uops):
      arg = u.arg if u.op is not Ops.DEFINE_GLOBAL else u.arg
      lines.append(repr((i, u.op.name, (u.dtype.base if u.op in (Ops.DEFINE_GLOBAL, Ops.INDEX) else u.dtype).name, tuple(pos[s] for s in u.src),
                         _encode(arg))))
    return "\n".join(lines)

def _encode(arg):
  """Literal-safe args: ops by name, inf/nan as tagged strings (literal_eval cannot read them), a variable loop size as
  a tree ("var", name) / ("sym", op, *srcs) evaluated when the program runs."""
  if isinstance(arg, Ops): return arg.name
  if isinstance(arg, tuple): return tuple(_encode(a) for a in arg)
  if isinstance(arg, UOp):
    if arg.op is Ops.DEFINE_VAR: return ("var", arg.arg[0])
    return arg.arg if arg.op is Ops.CONST else ("sym", arg.op.name, *(_encode(s) for s in arg.src))
  return ("float", repr(arg)) if isinstance(arg, float) and not math.isfinite(arg) else arg
def _size(x, env: dict[str, int]) -> int:
  if not isinstance(x, tuple): return x
  return env[x[1]] if x[0] == "var" else exec_alu(Ops[x[1]], dtypes.index, tuple(_size(a, env) for a in x[2:]))
def _decode(arg): return float(arg[1]) if isinstance(arg, tuple) and len(arg) == 2 and arg[0] == "float" else arg

class PythonProgram(Runner):
  def __init__(self, name: str, lib: bytes):
    super().__init__(name, lib)
    self.prog = [(i, op, dt, src, _decode(arg)) for i, op, dt, src, arg in
                 (pyast.literal_eval(line) for line in lib.decode().splitlines() if not line.startswith("#"))]
  def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False):
    st = time.perf_counter()
    prog = self.prog
    views, bdts, gnum = {}, {}, {}
    vals_: dict[int, Any] = {}  # each line's value: a number, or an INDEX's (buffer, index, valid)
    loop_start: dict[int, int] = {}
    env = dict(zip([a[0] for _, op, _, _, a in prog if op == "DEFINE_VAR"], vals))  # variable name -> value
    bound: dict[int, int] = {}
    pc = 0
    while pc < len(prog):
      i, opname, dtname, src, arg = prog[pc]
      op = Ops[opname]
      dt = to_dtype(dtname) if dtname != "void" else dtypes.void
      if op is Ops.DEFINE_GLOBAL:
        # an empty buffer is 1 byte of storage (never read: every access to it is masked), too small to view as dt
        b = bufs[arg]
        views[i] = b[:len(b) - len(b) % dt.itemsize].view(np_storage(dt))
        bdts[i], gnum[i] = dt, arg
      elif op is Ops.CONST: vals_[i] = arg
      elif op is Ops.DEFINE_VAR: vals_[i] = env[arg[0]]
      elif op is Ops.RANGE:
        if i not in loop_start or loop_start[i] != pc: vals_[i], loop_start[i], bound[i] = 0, pc, _size(arg[1], env)
        if bound[i] <= 0: pc = _skip_loop(prog, pc, i, vals_); continue  # noqa: E702
      elif op is Ops.ENDRANGE:
        r = src[0]
        vals_[r] += 1
        if vals_[r] < bound[r]: pc = loop_start[r] + 1; continue  # noqa: E702
        del loop_start[r]
      elif op is Ops.SPECIAL: raise RuntimeError("the PYTHON device has no work-item axes")
      elif op is Ops.INDEX: vals_[i] = (src[0], vals_[src[1]], vals_[src[2]] if len(src) > 2 else True)
      elif op is Ops.LOAD:
        b, idx, valid = vals_[src[0]]
        # every access is checked (numpy would read a negative index from the end): the error LAZYNB_CHECK=1 gives elsewhere
        if valid and not 0 <= idx < len(views[b]): raise out_of_bounds(self.name, gnum[b], idx, len(views[b]), False)
        vals_[i] = _from_mem(views[b][idx], dt) if valid else exec_alu(Ops.CAST, dt, (0,))
      elif op is Ops.STORE:
        b, idx, valid = vals_[src[0]]
        if valid and not 0 <= idx < len(views[b]): raise out_of_bounds(self.name, gnum[b], idx, len(views[b]), True)
        if valid: views[b][idx] = _to_mem(vals_[src[1]], bdts[b])
      elif op is Ops.DEFINE_ACC: vals_[i] = vals_[src[0]]
      elif op is Ops.ASSIGN: vals_[src[0]] = vals_[i] = vals_[src[1]]
      elif op is Ops.BITCAST:
        sdt = to_dtype(prog[src[0]][2])
        vals_[i] = _from_mem(_to_mem(vals_[src[0]], sdt).view(np_storage(dt)), dt)
      elif op in GroupOp.ALU or op is Ops.CAST:
        vals_[i] = exec_alu(op, dt, tuple(vals_[s] for s in src), to_dtype(prog[src[0]][2]) if op is Ops.CAST else None)
      else: raise NotImplementedError(f"PYTHON device cannot run {op}")
      pc += 1
    return time.perf_counter() - st if wait else None

def _from_mem(x, dt: DType):
  """A value read from memory (a numpy scalar) as a Python number (bfloat16 is stored as its 16 bits)."""
  return from_storage(x, dt).item() if dt is dtypes.bfloat16 else x.item()
def _to_mem(v, dt: DType):
  """A Python number as the numpy scalar that memory of dtype dt holds."""
  return to_storage(np.float32(v), dt)[()] if dt is dtypes.bfloat16 else np_storage(dt)(v)

def _skip_loop(prog, pc: int, r: int, vals_: dict) -> int:
  for j in range(pc + 1, len(prog)):  # (an accumulator updated in a loop run 0 times keeps its start, read after the loop)
    if prog[j][1] == "ASSIGN" and prog[j][3][0] in vals_: vals_[prog[j][0]] = vals_[prog[j][3][0]]
    if prog[j][1] == "ENDRANGE" and prog[j][3][0] == r: return j + 1
  raise RuntimeError("unterminated loop")

class PythonDevice(Compiled):
  def __init__(self, device: str = "PYTHON"): super().__init__(device, CPUAllocator(), PythonRenderer(), Compiler(), PythonProgram)
