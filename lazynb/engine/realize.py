"""Running a schedule: compile each kernel once per (device, AST), allocate buffers, run, and report."""
from __future__ import annotations
import hashlib, time
from typing import Callable
import numpy as np
from lazynb import trace
from lazynb.device import Device, Buffer, Runner  # noqa: F401 (Runner: tinygrad's engine.realize has it too)
from lazynb.helpers import GlobalCounters
from lazynb.renderer import ProgramSpec
from lazynb.uop.ops import UOp, sym_eval
from lazynb.engine.schedule import ScheduleItem

class CompiledRunner:
  """A ProgramSpec compiled and loaded on its device."""
  def __init__(self, prg: ProgramSpec):
    self.p = prg
    dev = Device[prg.device]
    st = time.perf_counter()
    key = dev.compiler.cachekey
    cached = False
    if key is not None:
      from lazynb.device import diskcache_get
      cached = diskcache_get(key, hashlib.sha256(prg.src.encode()).hexdigest()) is not None
    self.lib = dev.compiler.compile_cached(prg.src)
    self.compile_s = time.perf_counter() - st
    trace.emit("compile", name=prg.name, display_name=prg.display_name, device=prg.device, seconds=self.compile_s, cached=cached)
    self.fxn = dev.runtime(prg.name, self.lib)
  def __call__(self, bufs: list[Buffer], var_vals: dict[str, int] | None = None, wait: bool = True) -> float:
    """Run on `bufs`; `var_vals` gives each variable of a symbolic kernel its value (name -> int) for this run."""
    bufs[0].version += 1
    vals = [sym_eval(v, var_vals) for v in self.p.vars]
    gs = tuple(sym_eval(g, var_vals) for g in self.p.global_size)
    # `vals` only for a symbolic kernel: a runner written for kernels without variables need not know the argument
    t = self.fxn(*[b._buf for b in bufs], global_size=gs, local_size=self.p.local_size, **({'vals': vals} if vals else {}), wait=wait)
    return t if t is not None else 0.0

# TinyJit sets this to a list while it watches a call: every kernel and copy run, ("kernel", runner, bufs, ast, var_vals), ("copy", None, bufs, None),
# and every host write into a buffer: ("random", refill, [buf], None) for random numbers (drawn again on replay),
# ("data", (shape, dtype), [buf], digest) for anything else (frozen; TinyJit checks it did not change between calls)
capturing: list | None = None

def write_host(buf: Buffer, arr: np.ndarray, refill: Callable[[], np.ndarray] | None = None):
  """Copy host data into a buffer. `refill` makes the data again (random numbers): a TinyJit replay calls it."""
  buf.allocate().copyin(memoryview(np.ascontiguousarray(arr).reshape(-1).view(np.uint8)))
  if capturing is not None:
    if refill is not None: capturing.append(("random", refill, [buf], None))
    else: capturing.append(("data", (arr.shape, str(arr.dtype)), [buf], hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()))

method_cache: dict[tuple[str, UOp, tuple], CompiledRunner] = {}

def get_runner(device: str, ast: UOp, opts=None) -> CompiledRunner:
  from lazynb.helpers import NOOPT, BEAM
  key = (device, ast, (int(NOOPT), int(BEAM), tuple(opts) if opts is not None else None))
  if key not in method_cache:
    from lazynb.codegen import get_program
    method_cache[key] = CompiledRunner(get_program(ast, Device[device].renderer, opts))
  return method_cache[key]

def run_copy(dst: Buffer, src: Buffer) -> float:
  st = time.perf_counter()
  host = np.empty(src.nbytes, dtype=np.uint8)
  src.copyout(memoryview(host))
  dst.copyin(memoryview(host))
  return time.perf_counter() - st

def exec_item(si: ScheduleItem) -> float:
  for b in si.bufs: b.allocate()
  if si.kind == "copy":
    if capturing is not None: capturing.append(("copy", None, list(si.bufs), None))
    t = run_copy(si.bufs[0], si.bufs[1])
    trace.emit("exec", name=f"copy {si.bufs[1].device} -> {si.bufs[0].device}", display_name=None, device=si.bufs[0].device, kind="copy",
               seconds=t, global_size=None, local_size=None, op_estimate=0, mem_estimate=si.bufs[0].nbytes, bufs=si.bufs, item=si)
    GlobalCounters.time_sum_s += t
    GlobalCounters.global_mem += si.bufs[0].nbytes
    return t
  if si.bufs[0].size == 0: return 0.0
  runner = get_runner(si.bufs[0].device, si.ast)
  if capturing is not None: capturing.append(("kernel", runner, list(si.bufs), si.ast, si.var_vals))
  t = runner(list(si.bufs), si.var_vals)
  mem = sum(b.nbytes for b in si.bufs)
  GlobalCounters.kernel_count += 1
  GlobalCounters.global_ops += sym_eval(runner.p.op_estimate, si.var_vals)
  GlobalCounters.global_mem += mem
  GlobalCounters.time_sum_s += t
  trace.emit("exec", name=runner.p.name, display_name=runner.p.display_name, device=si.bufs[0].device, kind="kernel", seconds=t,
             global_size=tuple(sym_eval(g, si.var_vals) for g in runner.p.global_size), local_size=runner.p.local_size, op_estimate=sym_eval(runner.p.op_estimate, si.var_vals),
             mem_estimate=mem, bufs=si.bufs, item=si, program=runner.p, var_vals=si.var_vals)
  return t

def run_schedule(items: list[ScheduleItem]) -> None:
  st = time.perf_counter()
  kernels = copies = 0
  run_t = 0.0
  for si in items:
    run_t += exec_item(si)
    if si.kind == "copy": copies += 1
    else: kernels += 1
  if items: trace.emit("realize", kernels=kernels, copies=copies, seconds=time.perf_counter() - st, run_seconds=run_t)

class ExecItem:
  """A schedule item made ready to run (tinygrad's name): `for ei in lower_schedule(items): ei.run()`."""
  def __init__(self, si: ScheduleItem):
    self.si, self.bufs = si, list(si.bufs)
    self.prg = get_runner(si.bufs[0].device, si.ast) if si.kind == "kernel" and si.bufs[0].size else None
  def run(self) -> float: return exec_item(self.si)

def lower_schedule(items: list[ScheduleItem]):
  """Compile the schedule's kernels one by one, as they are needed."""
  for si in items: yield ExecItem(si)
