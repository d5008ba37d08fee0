"""Codegen: one kernel AST to a ProgramSpec (source + launch sizes), in four steps reported on the trace bus:

  Kernel (opts)  ->  lower (index math)  ->  linearize (loops, accumulators)  ->  render (source)

Lowering and linearizing are rewrite passes, each reported as a `rewrite` event with its stage: "lowered" (views to
index math), "simplified" (symbolic rules), "linearized" (accumulators, then the order of the program); the
ProgramSpec is reported as a `program` event."""
from __future__ import annotations
import re
from typing import Callable
from lazynb import trace, pipeline
from lazynb.pipeline import implements
from lazynb.helpers import NOOPT, BEAM, DEBUG
from lazynb.uop.ops import UOp, Ops, GroupOp
from lazynb.dtype import dtypes, fp8_unsupported
from lazynb.device import Device
from lazynb.renderer.prerender import needs_wide_index
from lazynb.renderer import Renderer, ProgramSpec, rendering, workitem_ids
from lazynb.codegen.kernel import Kernel, Opt, OptOps, AxisType, KernelOptError, hand_coded_optimizations  # noqa: F401
from lazynb.codegen.lowerer import lower  # noqa: F401 (optimize, lower, simplify, linearize: the pipeline's code stages)
from lazynb.codegen.linearize import linearize  # noqa: F401

# BEAM search times kernels, so it lives above codegen (lazynb/engine/search.py) and registers itself here when imported
_beam_search: Callable[[Kernel, int], Kernel] | None = None
def set_beam_search(fn: Callable[[Kernel, int], Kernel]):
  global _beam_search
  _beam_search = fn

@implements("optimize")
def optimize(ast: UOp, renderer: Renderer, opts: list[Opt] | None = None) -> Kernel:
  """The Kernel for `ast` with opts applied: the given ones, or BEAM search, or the hand-coded heuristic."""
  k = Kernel(ast, renderer)
  if opts is not None:
    for o in opts: k.apply_opt(o)
  elif not NOOPT:
    if BEAM >= 1 and not any(k.is_sym(i) for i in range(len(k.full_shape))):  # BEAM times with concrete sizes
      if _beam_search is None: raise RuntimeError("BEAM is set but no search is registered: import lazynb.engine.search")
      k = _beam_search(k, int(BEAM))
    else: hand_coded_optimizations(k)
  return k

def full_rewrite_to_sink(ast: UOp, renderer: Renderer | None = None, opts: list[Opt] | None = None) -> UOp:
  """The lowered kernel (index math, loops) for an AST, before linearization: the pipeline from optimize to simplify."""
  return pipeline.run_stages("optimize", "simplify", ast=ast, renderer=renderer or Device[Device.DEFAULT].renderer, opts=opts)["simplified"]

def full_rewrite(ast: UOp, renderer: Renderer | None = None) -> list[UOp]:
  """The kernel's linear program with no opts (tinygrad's name), index math in the int32 or int64 it is rendered with."""
  uops = pipeline.run_stages("optimize", "linearize", ast=ast, renderer=renderer or Device[Device.DEFAULT].renderer, opts=[])["uops"]
  ity, new = dtypes.int64 if needs_wide_index(uops) else dtypes.int32, dict[UOp, UOp]()
  for u in uops: new[u] = u.replace(dtype=ity if u.dtype is dtypes.index else u.dtype, src=tuple(new[s] for s in u.src))
  return list(new.values())

def estimates(uops: list[UOp]) -> int:
  """FLOPs the program does: each ALU op that computes a value (not an address, a gate or loop-counter math) once per
  loop iteration it runs in. A gather's address arithmetic is free, as in tinygrad's count."""
  flops, mult, stack = 0, 1, []  # with variable loop sizes the count is an expression in the variables
  addr, todo = set[UOp](), [s for u in uops if u.op is Ops.INDEX for s in u.src[1:]]
  while todo: addr.add(x := todo.pop()); todo.extend(s for s in x.src if s not in addr)  # noqa: E702
  for u in uops:
    if u.op is Ops.RANGE: stack.append(mult); mult = mult * u.arg[1]  # noqa: E702
    elif u.op is Ops.ENDRANGE: mult = stack.pop()
    elif u.op is Ops.SPECIAL: mult = mult * u.arg[1]
    elif u.op in GroupOp.ALU and u.dtype is not dtypes.bool and u not in addr and not _is_index(u): flops = flops + mult
  return flops

def _is_index(u: UOp) -> bool:
  return u.dtype is dtypes.index and all(s.op in (Ops.RANGE, Ops.SPECIAL, Ops.CONST, Ops.DEFINE_VAR) or s.op in GroupOp.ALU and _is_index(s) for s in u.src)

def get_program(ast: UOp, renderer: Renderer, opts: list[Opt] | None = None) -> ProgramSpec:
  """The kernel's ProgramSpec: the pipeline's code stages, optimize through render (lazynb/pipeline.py), on `ast`."""
  if (fp8 := next((u.dtype.base for u in ast.toposort() if u.dtype.base in dtypes.fp8s), None)) is not None: raise fp8_unsupported(fp8)
  rendering.checked = False  # a renderer that compiles bounds checks in (LAZYNB_CHECK) says so here
  v = pipeline.run_stages("optimize", "render", ast=ast, renderer=renderer, opts=opts)
  k, uops, src = v["kernel"], v["uops"], v["src"]
  # a replaced renderer says nothing about which UOps made each line; whether its kernel takes the bounds-check buffer
  # is what its source declares (a wrapper around lazynb's renderer returns a checked kernel: called without the buffer,
  # it would read its sizes through a stray pointer)
  own_render = pipeline.replacement("render") is None
  checked = rendering.checked if own_render else isinstance(src, str) and re.search(r"\blz_chk\b", src) is not None
  specials = [u for u in uops if u.op is Ops.SPECIAL]
  gs = [u.arg[1] for u in workitem_ids(specials, "g") + workitem_ids(specials, "t")]
  ls = [u.arg[1] for u in workitem_ids(specials, "l")]
  prg = ProgramSpec(k.function_name, k.name, src, renderer.device, type(renderer).__name__,
                    tuple(gs + [1] * (3 - len(gs))) if gs else (1, 1, 1), tuple(ls + [1] * (3 - len(ls))) if ls else (1, 1, 1),
                    uops, ast, list(k.applied_opts), k.full_shape, [t.name for t in k.axis_types], estimates(uops), 0,
                    [s.src[0].arg for s in ast.src], sorted({u.src[0].arg for u in ast.toposort() if u.op is Ops.LOAD}),
                    list(getattr(renderer, "line_map", [])) if own_render else [], v["seconds"], k, v["simplified"],
                    [u for u in uops if u.op is Ops.DEFINE_VAR], checked, pipeline.replaced_names(pipeline.CODEGEN),
                    v.get("reference", {}), v.get("differences", []))
  trace.emit("program", program=prg, kernel=k, lowered=v["simplified"])
  if DEBUG >= 6: print(src)
  return prg
