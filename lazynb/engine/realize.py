"""Running a schedule: compile each kernel once per (device, AST), allocate buffers, run, and report."""
from __future__ import annotations
import hashlib, time
from typing import Callable
import numpy as np
from lazynb import trace
from lazynb.device import Device, Buffer, CompileError, Runner, out_of_bounds  # noqa: F401 (Runner: tinygrad's engine.realize has it too)
from lazynb.dtype import dtypes
from lazynb.helpers import GlobalCounters, NOOPT, BEAM, CHECK, CAPTURING, unwrap
from lazynb import pipeline
from lazynb.codegen import get_program, Kernel
from lazynb.renderer import ProgramSpec, CHECK_HEAD
from lazynb.uop.ops import UOp, Ops, sym_eval
from lazynb.engine.schedule import ScheduleItem
from lazynb.runstate import state

class CompiledRunner:
  """A ProgramSpec compiled and loaded on its device. With `lib`, the binary is already at hand (compile_ahead made it,
  in a batch of `batch` kernels, or found it cached), and `compile_s` is what it cost."""
  def __init__(self, prg: ProgramSpec, lib: bytes | None = None, compile_s: float = 0.0, cached: bool = False, batch: int = 1):
    self.p = prg
    dev = Device[prg.device]
    if lib is None:  # the compile stage (a replaced one always runs: the disk cache holds what lazynb's compiled)
      st = time.perf_counter()
      lib = dev.compiler.lookup(prg.src) if pipeline.replacement("compile") is None else None
      if not (cached := lib is not None): lib = pipeline.call("compile", prg.device, prg.src)
      compile_s = time.perf_counter() - st
    self.lib, self.compile_s = lib, compile_s
    # batch: how many kernels the compiler call that made this one compiled (0: it came from the disk cache)
    trace.emit("compile", name=prg.name, display_name=prg.display_name, device=prg.device, seconds=self.compile_s, cached=cached,
               batch=0 if cached else batch)
    self.fxn = pipeline.call("load", prg.device, prg.name, self.lib)
  def __call__(self, bufs: list[Buffer], var_vals: dict[str, int] | None = None) -> float:
    """Run on `bufs` (the run stage: it waits for the kernel); `var_vals` gives each variable of a symbolic kernel its value (name -> int)."""
    bufs[0].version += 1
    vals = [sym_eval(v, var_vals) for v in self.p.vars]
    gs = tuple(sym_eval(g, var_vals) for g in self.p.global_size)
    args = [b._buf for b in bufs]
    if self.p.checked:  # LAZYNB_CHECK: the sizes of these very buffers in, the first access outside one out
      itemsize = {u.arg: u.dtype.base.itemsize for u in self.p.uops if u.op is Ops.DEFINE_GLOBAL}
      sizes = [b.nbytes // itemsize.get(i, b.dtype.itemsize) for i, b in enumerate(bufs)]
      chk = Buffer(bufs[0].device, CHECK_HEAD + len(bufs), dtypes.int64).copyin(np.array([0] * CHECK_HEAD + sizes, np.int64).view(np.uint8).data)
      args.append(chk._buf)
    # `vals` only for a symbolic kernel: a runner written for kernels without variables need not know the argument
    t = pipeline.call("run", self.fxn, args, gs, self.p.local_size, tuple(vals))
    if self.p.checked and (slot := chk.numpy())[0]: raise out_of_bounds(self.p.name, int(slot[1]), int(slot[2]), sizes[int(slot[1])], bool(slot[3]))
    return t
  def exec(self, rawbufs: list[Buffer], var_vals: dict[str, int] | None = None) -> float:
    """tinygrad 0.10's spelling of a call (docs/abstractions2.py: fxn.exec([out, a, b])): the buffers are allocated first."""
    return self([b.allocate() for b in rawbufs], var_vals)

def write_host(buf: Buffer, arr: np.ndarray, refill: Callable[[], np.ndarray] | None = None):
  """Copy host data into a buffer. `refill` makes the data again (random numbers): a TinyJit replay calls it."""
  buf.allocate().copyin(np.ascontiguousarray(arr).reshape(-1).view(np.uint8).data)
  if state.capturing is not None and CAPTURING:  # TinyJit watches (the record's entries: docs/internals.md)
    if refill is not None: state.capturing.append(("random", refill, [buf], None))
    else: state.capturing.append(("data", (arr.shape, str(arr.dtype)), [buf], hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()))

method_cache: dict[tuple[str, UOp, tuple], CompiledRunner] = {}

def runner_key(device: str, ast: UOp, opts=None) -> tuple:
  # LAZYNB_CHECK is part of the key: a checked kernel takes one more buffer (its source differs too, so the disk cache,
  # keyed by the source, never hands one for the other either)
  # so are the stages a learner replaced (lazynb.pipeline.use): their kernel is not lazynb's; and whether a trace compares
  # them with lazynb's own (a program made then carries lazynb's results too)
  compared = bool(pipeline.replaced_names(pipeline.CODEGEN)) and trace.wants_reference()
  return (device, ast, (int(NOOPT), int(BEAM), tuple(opts) if opts is not None else None, int(CHECK)), pipeline.replaced(), compared)

def get_runner(device: str, ast: UOp, opts=None) -> CompiledRunner:
  key = runner_key(device, ast, opts)
  if key not in method_cache: method_cache[key] = CompiledRunner(get_program(ast, Device[device].renderer, opts))
  return method_cache[key]

def compile_ahead(items: list[ScheduleItem]):
  """Before a schedule runs: render its kernels that have no runner yet and compile the ones the disk cache lacks in one
  compiler call per device (where its compiler `batches`), instead of one compiler start-up per kernel. Anything that
  fails here is left to exec_item, which meets it in its turn and reports it as it always has: a kernel that does not
  render, and, when the batch does not compile, the first kernel that does not compile on its own."""
  if pipeline.replacement("compile") is not None: return  # a replaced compile stage runs for each kernel, in its turn
  todo: dict[tuple, ScheduleItem] = {}
  for si in items:
    if si.kind != "kernel" or si.bufs[0].size == 0: continue
    dev = si.bufs[0].device
    if (key := runner_key(dev, si.ast)) not in method_cache and key not in todo and Device[dev].compiler.batches: todo[key] = si
  if len(todo) < 2: return
  progs: dict[tuple, ProgramSpec] = {}
  for key, si in todo.items():
    try: progs[key] = get_program(si.ast, Device[key[0]].renderer, None)
    except Exception: break  # exec_item raises it when it gets there
  for dev in dict.fromkeys(key[0] for key in progs):
    compiler = Device[dev].compiler
    new: dict[str, list[tuple]] = {}  # source -> the kernels with it
    for key, prg in progs.items():
      if key[0] != dev: continue
      st = time.perf_counter()
      if (lib := compiler.lookup(prg.src)) is not None: method_cache[key] = CompiledRunner(prg, lib, time.perf_counter() - st, cached=True)
      else: new.setdefault(prg.src, []).append(key)
    if not new: continue
    named = [(progs[keys[0]].name, src) for src, keys in new.items()]
    st = time.perf_counter()
    try: libs = compiler.compile_batch(named)
    except CompileError:  # find the kernel that fails: compile one by one, in schedule order, up to it
      for keys in new.values():
        try: method_cache[keys[0]] = CompiledRunner(progs[keys[0]])
        except CompileError: break
      continue
    share = (time.perf_counter() - st) / len(named)
    for (_, src), lib, keys in zip(named, libs, new.values()):
      compiler.store(src, lib)
      for key in keys: method_cache[key] = CompiledRunner(progs[key], lib, share, batch=len(named))

def run_copy(dst: Buffer, src: Buffer) -> float:
  st = time.perf_counter()
  dst.copyin(src.as_buffer())  # through a host copy
  return time.perf_counter() - st

def exec_item(si: ScheduleItem) -> float:
  if si.done and si.then is not None and si.out is not None and si.out.op is Ops.ASSIGN: return 0.0  # a handed-out write: once
  for b in si.bufs: b.allocate()
  if si.kind == "copy":
    if state.capturing is not None and CAPTURING: state.capturing.append(("copy", None, list(si.bufs), None))
    t = run_copy(si.bufs[0], si.bufs[1])
    trace.emit("exec", name=f"copy {si.bufs[1].device} -> {si.bufs[0].device}", display_name=None, device=si.bufs[0].device, kind="copy",
               seconds=t, global_size=None, local_size=None, op_estimate=0, mem_estimate=si.bufs[0].nbytes, bufs=si.bufs, item=si)
    GlobalCounters.time_sum_s += t
    GlobalCounters.global_mem += si.bufs[0].nbytes
    _done(si)
    return t
  if si.bufs[0].size == 0:
    _done(si)
    return 0.0
  runner = get_runner(si.bufs[0].device, si.ast)
  if state.capturing is not None and CAPTURING: state.capturing.append(("kernel", runner, list(si.bufs), si.ast, si.var_vals))
  t = runner(list(si.bufs), si.var_vals)
  mem = sum(b.nbytes for b in si.bufs)
  GlobalCounters.kernel_count += 1
  GlobalCounters.global_ops += sym_eval(runner.p.op_estimate, si.var_vals)
  GlobalCounters.global_mem += mem
  GlobalCounters.time_sum_s += t
  trace.emit("exec", name=runner.p.name, display_name=runner.p.display_name, device=si.bufs[0].device, kind="kernel", seconds=t,
             global_size=tuple(sym_eval(g, si.var_vals) for g in runner.p.global_size), local_size=runner.p.local_size, op_estimate=sym_eval(runner.p.op_estimate, si.var_vals),
             mem_estimate=mem, bufs=si.bufs, item=si, program=runner.p, var_vals=si.var_vals)
  _done(si)
  return t

def _done(si: ScheduleItem):
  si.done = True
  if si.then is not None: si.then()  # (Tensor.schedule's items: the last one makes their values computed)

def run_schedule(items: list[ScheduleItem], var_vals=None) -> None:  # (tinygrad's var_vals: each item carries its own)
  st = time.perf_counter()
  compile_ahead(items)
  run_t = sum(exec_item(si) for si in items)
  copies = sum(si.kind == "copy" for si in items)
  if items: trace.emit("realize", kernels=len(items) - copies, copies=copies, seconds=time.perf_counter() - st, run_seconds=run_t)

class ExecItem:
  """A schedule item made ready to run (tinygrad's name): `for si, ei in lower_schedule(items): ei.run()`; or, as
  tinygrad's tests make one, ExecItem(CompiledRunner(program), buffers)."""
  def __init__(self, si: ScheduleItem | CompiledRunner, bufs: list[Buffer] | None = None):
    self.si: ScheduleItem | None = None if isinstance(si, CompiledRunner) else si
    self.prg: CompiledRunner | None = si if isinstance(si, CompiledRunner) else \
      get_runner(si.bufs[0].device, si.ast) if si.kind == "kernel" and si.bufs[0].size else None
    self.bufs = list(bufs or []) if isinstance(si, CompiledRunner) else list(si.bufs)
  def run(self, *, wait: bool = False, do_update_stats: bool = True) -> float:
    """Run it; the time it took. lazynb always waits for the device; do_update_stats=False leaves GlobalCounters as they were."""
    before = (GlobalCounters.global_ops, GlobalCounters.global_mem, GlobalCounters.time_sum_s, GlobalCounters.kernel_count)
    t = exec_item(self.si) if self.si is not None else unwrap(self.prg).exec(self.bufs)
    if not do_update_stats: GlobalCounters.global_ops, GlobalCounters.global_mem, GlobalCounters.time_sum_s, GlobalCounters.kernel_count = before
    return t

def lower_schedule_item(si: ScheduleItem) -> ExecItem:
  """One schedule item made ready to run (tinygrad 0.10's name; lower_schedule does a list and compiles its kernels in one batch)."""
  return ExecItem(si)

def get_kernel(renderer, ast: UOp) -> Kernel:
  """tinygrad 0.10's name (docs/abstractions2.py): the Kernel for a kernel AST with its opts chosen (hand-coded, or BEAM,
  or none with NOOPT), as lazynb's optimize stage makes it."""
  return pipeline.call("optimize", ast, renderer, None)

def lower_schedule(items: list[ScheduleItem]):
  """(item, ExecItem) for each of the schedule's items, taken off the front of the list as tinygrad 0.10 does
  (`for si, ei in lower_schedule(items): ei.run()`); its new kernels are compiled together first."""
  compile_ahead(items)
  while items:
    si = items.pop(0)
    yield si, ExecItem(si)

def compile_only(*tensors, device: str = "CUDA") -> list[dict]:
  """Render and compile the kernels that would realize `tensors` on `device`, without running them (CUDA with no GPU:
  NVRTC still makes PTX): [{name, source, ptx (the compiled bytes as text), global_size, local_size, opts}] per kernel."""
  dev = Device[device]
  items, _ = pipeline.call("schedule", [t.uop for t in tensors])
  progs = [get_program(si.ast, dev.renderer) for si in items if si.kind == "kernel"]
  return [{"name": p.name, "source": p.src, "ptx": dev.compiler.compile_cached(p.src).decode(), "global_size": p.global_size,
           "local_size": p.local_size, "opts": p.opts} for p in progs]
