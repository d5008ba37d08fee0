"""Renderers turn a linearized kernel (a list of UOps) into source code for one kind of device: first the rewrites they
all share (prerender.py: the numeric rules, as UOps), then a table of rules from each op to its text, read by a walker
(cstyle.py for C, OpenCL and CUDA; llvmir.py for LLVM IR)."""
from __future__ import annotations
import threading
from types import SimpleNamespace
from dataclasses import dataclass, field
from lazynb.uop.ops import UOp
from lazynb.pipeline import implements

# what one render() call decides lives per thread, not on the shared renderer: BEAM renders candidates on several threads
rendering = threading.local()
# LAZYNB_CHECK=1: a checked kernel's last buffer is int64 [failed, buffer, index, store, then each buffer's size]
CHECK_HEAD = 4

class Renderer:
  """What a device's code looks like and which optimizations it allows. global_style says how the global (output) axes
  are walked: "loop" (for-loops inside the kernel, the CPU), "args" (the kernel receives its global ids as int arguments
  and the runtime loops), or "special" (GPU work-item ids such as get_global_id / blockIdx)."""
  device: str = ""
  global_style: str = "loop"
  has_local: bool = False
  has_shared: bool = False
  has_threads: bool = False
  threads: int = 1
  local_max_prod: int = 1024
  # the SIMD shape the heuristic tiles for: floats per vector register, and how many vector registers
  simd_floats: int = 8
  simd_regs: int = 16
  # a big matmul's right operand is first copied into column panels this many values wide (0: never; renderer/layout.py)
  matmul_panel: int = 0
  # the device's own rewrites of the tensor graph, run by the schedule stage before kernels are cut: (name, PatternMatcher)
  graph_rules: tuple = ()
  global_max: tuple[int, ...] = ((1 << 31) - 1,) * 3
  def render(self, name: str, uops: list[UOp]) -> str: raise NotImplementedError
  @property
  def line_map(self) -> list[list[int]]:
    """For each source line of the kernel this thread rendered last, the positions of the UOps it came from."""
    return getattr(rendering, "line_map", [])
  @line_map.setter
  def line_map(self, lines: list[list[int]]): rendering.line_map = lines

def workitem_ids(specials: list[UOp], kind: str) -> list[UOp]:
  """The work-item ids of one kind ("g" global, "l" local, "t" thread) in launch order: dimension 0, 1, 2. A kernel loops
  over its outer global axes past three, so its ids are the inner ones (gidx1..gidx3 of four are dimensions 0..2)."""
  return sorted((u for u in specials if u.arg[0][0] == kind), key=lambda u: int(u.arg[0][4:]))

@dataclass
class ProgramSpec:
  """Everything about one compiled kernel: its source, its launch sizes, and where it came from."""
  name: str                       # plain C identifier
  display_name: str               # with colour codes for the terminal
  src: str
  device: str
  language: str
  global_size: tuple[int, ...]
  local_size: tuple[int, ...]
  uops: list[UOp]
  ast: UOp
  opts: list = field(default_factory=list)
  full_shape: tuple[int, ...] = ()
  axis_types: list[str] = field(default_factory=list)
  op_estimate: int = 0
  mem_estimate: int = 0
  outs: list[int] = field(default_factory=list)
  ins: list[int] = field(default_factory=list)
  line_map: list[list[int]] = field(default_factory=list)  # source line -> indices into uops
  timings: dict = field(default_factory=dict)               # seconds per codegen stage
  kernel: object = None                                     # the optimized Kernel (views, axis kinds)
  lowered: UOp | None = None                                # the lowered graph, before linearization
  vars: list = field(default_factory=list)                  # DEFINE_VARs, in argument order: ints passed after the buffers
  checked: bool = False  # LAZYNB_CHECK: the kernel takes one more buffer after its own, int64 [failed, buffer, index, store, size of data0, ...]
  replaced: list = field(default_factory=list)               # the code stages a learner's function ran (lazynb.pipeline.use)
  reference: dict = field(default_factory=dict)              # then, if a trace compared: lazynb's own result per stage from the
  differences: list = field(default_factory=list)            # first replaced one on, and where yours differs (pipeline.run_stages)
  # global_size and op_estimate may be expressions in the vars (sym_eval them with the values of a run)
  @property
  def estimates(self) -> SimpleNamespace: return SimpleNamespace(ops=self.op_estimate, mem=self.mem_estimate)  # tinygrad's spelling

@implements("render")
def render(name: str, uops: list[UOp], renderer: Renderer) -> str:
  """The render stage: the renderer's source for a linearized kernel named `name`."""
  return renderer.render(name, uops)
