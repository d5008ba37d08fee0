"""A C-like renderer is a table: ToyC below writes a small C dialect (array subscripts instead of pointer arithmetic,
<math.h>'s function names, no gcc forms, no threads) by filling CStyleLanguage's tables and nothing else; the walker
and the shared pre-render rewrites (renderer/prerender.py: NaN-propagating max, saturating casts, loop-order sums)
come with the base class. Its kernels run on the CPU, as a device of their own and in place of the CPU's render stage
(pipeline.use), and must give numpy's values."""
import numpy as np
import pytest
from lazynb import Tensor, Device, dtypes, pipeline
from lazynb.device import Compiled
from lazynb.engine import realize
from lazynb.uop.ops import UOp, Ops, GroupOp, UPat, PatternMatcher, sym_str
from lazynb.renderer.cstyle import CStyleLanguage
from lazynb.runtime.ops_cpu import CPUAllocator, ClangCompiler, CPUProgram

def _load(ctx, x: UOp) -> str:
  idx = x.src[0]
  return f"({ctx[idx.src[2]]}?{ctx[idx]}:{ctx.render_const(0, x.dtype)})" if len(idx.src) > 2 else ctx[idx]  # gated: 0 off the gate

def _store(ctx, x: UOp) -> str:
  idx, v = x.src
  return f"if ({ctx[idx.src[2]]}) {ctx[idx]} = {ctx[v]};" if len(idx.src) > 2 else f"{ctx[idx]} = {ctx[v]};"

class ToyC(CStyleLanguage):
  """C with subscripts: out[i] = a[i] + b[i]."""
  global_style = "loop"
  extra_header = "#include <math.h>\n"
  code_for_op = {Ops.ADD: lambda a, b, dt: f"({a}+{b})", Ops.MUL: lambda a, b, dt: f"({a}*{b})", Ops.NEG: lambda x, dt: f"(-{x})",
                 Ops.IDIV: lambda a, b, dt: f"({a}/{b})", Ops.MOD: lambda a, b, dt: f"fmodf({a},{b})" if dt is dtypes.float32 else f"({a}%{b})",
                 Ops.CMPLT: lambda a, b, dt: f"({a}<{b})", Ops.CMPNE: lambda a, b, dt: f"({a}!={b})", Ops.AND: lambda a, b, dt: f"({a}&{b})",
                 Ops.OR: lambda a, b, dt: f"({a}|{b})", Ops.XOR: lambda a, b, dt: f"({a}^{b})", Ops.WHERE: lambda c, a, b, dt: f"({c}?{a}:{b})",
                 Ops.RECIP: lambda x, dt: f"(1.0f/{x})", Ops.EXP2: lambda x, dt: f"exp2f({x})", Ops.LOG2: lambda x, dt: f"log2f({x})",
                 Ops.SIN: lambda x, dt: f"sinf({x})", Ops.SQRT: lambda x, dt: f"sqrtf({x})", Ops.TRUNC: lambda x, dt: f"truncf({x})"}
  string_rules = PatternMatcher([
    (UPat((Ops.DEFINE_GLOBAL, Ops.DEFINE_VAR, Ops.SPECIAL)), lambda: ""),  # parameters, named by the walker
    (UPat(Ops.RANGE, name="x"), lambda ctx, x: f"for (int {ctx[x]} = 0; {ctx[x]} < {sym_str(x.arg[1], c=True)}; {ctx[x]}++) {{"),
    (UPat(Ops.ENDRANGE), lambda: "}"),
    (UPat(Ops.CONST, name="x"), lambda ctx, x: ctx.render_const(x.arg, x.dtype)),
    (UPat(Ops.INDEX, name="x"), lambda ctx, x: f"{ctx[x.src[0]]}[{ctx[x.src[1]]}]"),
    (UPat(Ops.LOAD, name="x"), _load),
    (UPat(Ops.STORE, name="x"), _store),
    (UPat(Ops.DEFINE_ACC, name="x"), lambda ctx, x: ctx[x.src[0]]),
    (UPat(Ops.ASSIGN, name="x"), lambda ctx, x: f"{ctx[x]} = {ctx[x.src[1]]};"),
    (UPat(Ops.CAST, name="x"), lambda ctx, x: f"(({ctx.render_dtype(x.dtype)}){ctx[x.src[0]]})"),
    (UPat(GroupOp.ALU, name="x"), lambda ctx, x: ctx.code_for_op[x.op](*[ctx[s] for s in x.src], x.dtype)),
  ])

@pytest.fixture
def toyc(monkeypatch):
  monkeypatch.setitem(Device._devices, "TOYC", lambda name: Compiled(name, CPUAllocator(), ToyC(), ClangCompiler(), CPUProgram))
  monkeypatch.setattr(realize, "method_cache", {})
  yield "TOYC"
  Device._opened.pop("TOYC", None)

rng = np.random.default_rng(0)
A, B = rng.standard_normal((37, 19)).astype(np.float32), rng.standard_normal((19, 23)).astype(np.float32)
X = np.array([np.nan, np.inf, -np.inf, 0.0, -3.5, 1e10, -1e10, 2.5, 7.9], np.float32)

def programs(dev: str) -> list[tuple[np.ndarray, np.ndarray]]:
  a, b, x = Tensor(A, device=dev), Tensor(B, device=dev), Tensor(X, device=dev)
  return [((a @ b).numpy(), A @ B), (a.sum(axis=0).numpy(), A.sum(axis=0)), ((a * 2 + 1).exp().sqrt().numpy(), np.sqrt(np.exp(A * 2 + 1))),
          (a.max(axis=1).numpy(), A.max(axis=1)), (x.maximum(Tensor(X[::-1].copy(), device=dev)).numpy(), np.maximum(X, X[::-1])),
          (x.cast(dtypes.int32).numpy(), np.array([-2**31, -2**31, -2**31, 0, -3, -2**31, -2**31, 2, 7], np.int32)),  # as x86: NaN, inf -> min
          (a.pad(((1, 2), (3, 0))).numpy(), np.pad(A, ((1, 2), (3, 0)))), ((a[:, :4] < 0).where(a[:, :4], 0).numpy(), np.minimum(A[:, :4], 0)),
          ((Tensor.arange(20, device=dev) % 7).numpy(), np.arange(20) % 7)]

def test_a_renderer_written_as_a_table_runs_as_a_device(toyc):
  for got, want in programs(toyc): np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
  srcs = [r.p.src for r in realize.method_cache.values()]
  assert any("#include <math.h>" in s and "data1[" in s for s in srcs), "the kernels were not ToyC's"
  assert not any("*(data" in s or "__builtin_exp2f" in s for s in srcs)

def test_a_table_renderer_replaces_the_render_stage(monkeypatch):
  """The same table in place of the CPU's renderer: the CPU's kernels (threads included: a thread id is a parameter)."""
  monkeypatch.setattr(realize, "method_cache", {})
  with pipeline.use("render", lambda name, uops, renderer: ToyC().render(name, uops)):
    for got, want in programs("CPU"): np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
  assert all("#include <math.h>" in r.p.src for r in realize.method_cache.values())

def test_a_missing_rule_is_named():
  class NoLoads(ToyC): string_rules = PatternMatcher([p for p in ToyC.string_rules.patterns if Ops.LOAD not in (p[0].op or ())])
  with pytest.raises(pipeline.StageError, match="NoLoads has no rule for Ops.LOAD"):
    with pipeline.use("render", lambda name, uops, renderer: NoLoads().render(name, uops)): (Tensor(A) + 1).realize()

def test_every_source_line_has_its_uops():
  """The walker records, for each line it writes, the UOps it came from (the Kernels view links them); header lines
  have none. For every C-family renderer, bounds-checked or not, with emulated half and gcc's vectors."""
  from lazynb import Context
  from lazynb.engine.schedule import create_schedule
  from lazynb.renderer.cstyle import ClangRenderer, OpenCLRenderer, CUDARenderer
  gcc, emu = ClangRenderer(), ClangRenderer()
  gcc.lane_vectors, gcc.simd_floats, emu.half_native = True, 16, lambda: False
  outs = [Tensor.empty(8, 4, 24, 24).conv2d(Tensor.empty(8, 4, 5, 5)), (Tensor.empty(64, 64).half() * 2).max(axis=1), Tensor.empty(33, 40) @ Tensor.empty(40, 64)]
  for si in create_schedule([o.uop for o in outs])[0]:
    for r in (ClangRenderer(), gcc, emu, OpenCLRenderer(), CUDARenderer(), ToyC()):
      for check in (0, 1):
        with Context(LAZYNB_CHECK=check): v = pipeline.run_stages("optimize", "render", ast=si.ast, renderer=r, opts=None)
        lines = v["src"].split("\n")
        assert len(r.line_map) == len(lines), (type(r).__name__, check)
        assert all(0 <= p < len(v["uops"]) for ps in r.line_map for p in ps)
        assert all(ps for ln, ps in zip(lines, r.line_map) if ln.startswith("    ") and "=" in ln), "a statement without its uops"
