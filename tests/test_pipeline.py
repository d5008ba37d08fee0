"""lazynb.pipeline's contract: stages() in order, reference(name), use(name, fn) (nests, restores on error, per thread),
check(name, fn) on the corpus; for each of the six named stages, the reference swapped in gives the same kernels and
values, a wrapper is called, a planted wrong version is caught with a message naming the program, and the trace says
which stages were replaced. A replaced stage that raises or returns the wrong kind is a StageError naming it."""
import re, threading
import numpy as np
import pytest
from lazynb import Tensor, Device, pipeline, corpus, trace
from lazynb.codegen import get_program
from lazynb.pipeline import StageError
from lazynb.uop.ops import UPat, Ops, PatternMatcher, graph_rewrite

SIX = ["schedule", "optimize", "lower", "simplify", "linearize", "render"]
PROGRAMS = corpus.programs()
SOME = PROGRAMS[::9]  # every family, about 30 programs

def test_stages_in_pipeline_order_each_with_a_reference():
  assert pipeline.stages() == ["schedule", "optimize", "lower", "simplify", "linearize", "render", "compile", "load", "run"]
  for name in pipeline.stages():
    st = pipeline.stage(name)
    assert callable(pipeline.reference(name)) and pipeline.reference(name).__doc__, name
    assert st.takes and st.gives and st.writes, name
  with pytest.raises(KeyError, match="no stage named 'lowering'.*schedule, optimize"): pipeline.reference("lowering")

def test_the_corpus_covers_every_family():
  kinds = {p.kind for p in PROGRAMS}
  assert kinds == {"elementwise", "reduce", "movement", "matmul", "conv", "several kernels"} and len(PROGRAMS) >= 200
  assert {p.kind for p in SOME} == kinds
  assert [p.name for p in corpus.programs()] == [p.name for p in PROGRAMS]  # the same programs every time

def _sources_and_values(progs) -> tuple[list[str], list[list[np.ndarray]]]:
  """Every kernel's source (each program scheduled, each kernel through the code stages) and every program's values."""
  srcs = []
  for p in progs:
    out = p.build()
    items, _ = pipeline.call("schedule", [t.uop for t in (out if isinstance(out, tuple) else (out,))])
    srcs += [get_program(si.ast, Device[si.bufs[0].device].renderer).src for si in items if si.kind == "kernel"]
  return srcs, [p.run() for p in progs]

@pytest.mark.parametrize("name", SIX)
def test_the_reference_swapped_in_gives_the_same_kernels_and_values(name):
  want_src, want = _sources_and_values(SOME)
  with pipeline.use(name, pipeline.reference(name)): got_src, got = _sources_and_values(SOME)
  assert got_src == want_src  # byte-identical kernels (compiled again: the cache key names the replaced stage)
  for g, w in zip(got, want):
    for a, b in zip(g, w): np.testing.assert_array_equal(a, b)

@pytest.mark.parametrize("name", SIX)
def test_a_wrapper_is_called_and_computes_the_right_answer(name):
  calls = []
  ref = pipeline.reference(name)
  def wrapper(*args):
    calls.append(args)
    return ref(*args)
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  with pipeline.use(name, wrapper): got = (Tensor(x) * 2 + 1).sum(axis=1).numpy()
  np.testing.assert_allclose(got, (x * 2 + 1).sum(1))
  assert calls, f"the {name} wrapper was never called"

# ---------------------------------------------------------------- planted wrong versions, one per stage
def _reversed_schedule(outs):  # runs the kernels in the wrong order
  items, becomes = pipeline.reference("schedule")(outs)
  return items[::-1], becomes

def _short_loops(ast, renderer, opts=None):  # the kernel's last axis one too short
  k = pipeline.reference("optimize")(ast, renderer, opts)
  if k.full_shape and k.full_shape[-1] > 1: k.full_shape = k.full_shape[:-1] + (k.full_shape[-1] - 1,)
  return k

def _off_by_one_lower(k):  # every loop ends one step early
  out = pipeline.reference("lower")(k)
  ranges = [u for u in out.toposort() if u.op is Ops.RANGE and isinstance(u.arg[1], int) and u.arg[1] > 1]
  return out.substitute({r: r.replace(arg=(r.arg[0], r.arg[1] - 1, r.arg[2])) for r in ranges})

_drop_adds = PatternMatcher([(UPat(Ops.ADD, src=(UPat.var("x"), UPat.cvar("c"))), lambda x, c: x if x.dtype == c.dtype else None)])
def _wrong_rule_simplify(sink):  # a rule that is not true: x + c -> x
  return graph_rewrite(pipeline.reference("simplify")(sink), _drop_adds)

def _unclosed_loops(sink):  # forgets the last ENDRANGE
  uops = pipeline.reference("linearize")(sink)
  return uops[:-1] if uops and uops[-1].op is Ops.ENDRANGE else uops

def _minus_for_plus(name, uops, renderer): return pipeline.reference("render")(name, uops, renderer).replace("+", "-")

PLANTED = {"schedule": _reversed_schedule, "optimize": _short_loops, "lower": _off_by_one_lower, "simplify": _wrong_rule_simplify,
           "linearize": _unclosed_loops, "render": _minus_for_plus}

@pytest.mark.parametrize("name", SIX)
def test_check_catches_a_planted_wrong_version(name):
  res = pipeline.check(name, PLANTED[name], SOME)
  assert not res.ok and not res, res.message
  assert res.message.startswith(f"your {name} stage fails program ") and res.failed in res.message, res.message
  assert PLANTED[name].__name__ in res.message or "differs" in res.message or "killed by" in res.message, res.message

def test_check_passes_the_reference_and_counts_the_programs():
  res = pipeline.check("render", pipeline.reference("render"), SOME)
  assert res.ok and res.programs == len(SOME) and "all" in res.message and "conv" in res.message

def test_render_with_minus_for_plus_names_the_line_that_differs():
  res = pipeline.check("render", _minus_for_plus, PROGRAMS[:5])
  assert "killed by SIGSEGV" in res.message or "differs" in res.message
  assert re.search(r"line \d+ differs", res.message) and "yours:" in res.message and "reference:" in res.message, res.message

def test_check_survives_a_kernel_that_never_stops():
  def forever(name, uops, renderer):  # a loop that never ends
    return pipeline.reference("render")(name, uops, renderer).replace(") {\n", ") {\n  for (volatile int spin = 1; spin;) {}\n", 1)
  res = pipeline.check("render", forever, PROGRAMS[:1], timeout=5)
  assert not res.ok and "did not finish in 5 s" in res.message, res.message

# ---------------------------------------------------------------- use(): kinds, errors, nesting, threads, the trace
def test_a_wrong_kind_or_an_exception_is_a_stage_error_naming_the_stage():
  x = Tensor(np.ones(64, np.float32))
  with pytest.raises(StageError, match=r"your lower stage \(.*<lambda>\) returned a int; it must give a SINK"):
    with pipeline.use("lower", lambda k: 5): (x * 3).numpy()
  with pytest.raises(StageError, match=r"your render stage .* raised ZeroDivisionError: .* by zero\n  the render stage takes"):
    with pipeline.use("render", lambda name, uops, r: 1 // 0): (x * 5).numpy()
  with pytest.raises(StageError, match="your linearize stage .* cannot take: .*never closed"):
    with pipeline.use("linearize", _unclosed_loops): (x * 7).numpy()
  assert (x * 9).numpy().tolist() == [9.0] * 64  # and lazynb's own stages are back

def test_use_nests_restores_on_error_and_holds_per_thread():
  ref = pipeline.reference("render")
  def a(*args): return ref(*args)
  def b(*args): return ref(*args)
  with pipeline.use("render", a):
    assert pipeline.replacement("render") is a
    with pipeline.use("render", b): assert pipeline.replacement("render") is b
    assert pipeline.replacement("render") is a
    seen = []
    t = threading.Thread(target=lambda: seen.append(pipeline.replacement("render")))
    t.start(); t.join()  # noqa: E702
    assert seen == [None]  # another thread runs lazynb's own stage
    with pytest.raises(RuntimeError):
      with pipeline.use("render", b): raise RuntimeError("boom")
    assert pipeline.replacement("render") is a
  assert pipeline.replacement("render") is None and pipeline.replaced() == ()

def test_the_trace_names_the_replaced_stages():
  ref = pipeline.reference("lower")
  def my_lower(k): return ref(k)
  progs = []
  with trace.Recorder(rewrites=False) as rec:
    with pipeline.use("lower", my_lower): (Tensor(np.arange(5, dtype=np.float32)) * 11).numpy()
  progs = [e.data["program"] for e in rec.of("program")]
  assert progs and all(p.replaced == ["lower"] for p in progs)
  assert progs[0].checked  # a kernel from a replaced code stage runs bounds-checked
  with trace.Recorder(rewrites=False) as rec: (Tensor(np.arange(5, dtype=np.float32)) * 13).numpy()
  assert all(e.data["program"].replaced == [] for e in rec.of("program"))

def test_a_learner_lower_that_indexes_outside_is_an_error_not_a_fault():
  def past_the_end(k):  # every load reads one element further on
    out = pipeline.reference("lower")(k)
    return out.substitute({u: u.replace(src=(u.src[0], u.src[1] + 1) + u.src[2:]) for u in out.toposort()
                           if u.op is Ops.INDEX and u.src[0].arg != 0})
  res = pipeline.check("lower", past_the_end, PROGRAMS[:3])
  assert not res.ok and "OutOfBoundsError" in res.message and "outside its" in res.message, res.message
  # the kernel is the learner's: the error says which stage made it, not that lazynb has a bug
  assert "made with your lower stage in place of lazynb's" in res.message and "bug in lazynb" not in res.message, res.message

@pytest.mark.parametrize("name", ["optimize", "lower", "simplify", "linearize"])
def test_a_render_wrapper_gets_the_check_buffer_its_checked_source_declares(name):
  """A replaced code stage's kernel is rendered bounds-checked; a render wrapper returns that checked source, so the
  kernel takes the check buffer as its last argument and must be called with it (it was not: the kernel read buffer
  sizes through a stray pointer and returned garbage, now and then). Every program made this way says it is checked
  exactly when its source declares the buffer; the values are right, and an index outside a buffer is still caught."""
  made = []
  def spy(ev):
    if ev.kind == "program": made.append(ev.data["program"])
  wrap = lambda *a: pipeline.reference(name)(*a)
  def render(fn, uops, r): return pipeline.reference("render")(fn, uops, r)
  trace.subscribe(spy)
  try:
    with pipeline.use(name, wrap), pipeline.use("render", render): got = [p.run() for p in SOME]
  finally: trace.unsubscribe(spy)
  for g, w in zip(got, [p.run() for p in SOME]):
    for a, b in zip(g, w): np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
  assert made and all(p.checked == ("lz_chk" in p.src) for p in made) and all(p.checked for p in made)
  def past_the_end(k):  # as above: every load one element further on
    out = pipeline.reference("lower")(k)
    return out.substitute({u: u.replace(src=(u.src[0], u.src[1] + 1) + u.src[2:]) for u in out.toposort()
                           if u.op is Ops.INDEX and u.src[0].arg != 0})
  with pipeline.use("lower", past_the_end), pipeline.use("render", render), pytest.raises(Exception, match="outside its"):
    (Tensor(np.arange(12, dtype=np.float32)) * 2).numpy()

# ---------------------------------------------------------------- the linearized list's contract (spec_linear)
def _row_max_times_two():
  """lazynb's list for (x.max(axis=1) * 2) on a 3x4 matrix (an outer loop, a reduce loop inside it), and the SINK it came from."""
  seen = []
  def spy(sink):
    seen.append((sink, pipeline.reference("linearize")(sink)))
    return seen[-1][1]
  with pipeline.use("linearize", spy): (Tensor(-np.arange(12, dtype=np.float32).reshape(3, 4)).max(axis=1) * 2).numpy()
  return seen[0]

def _moved(uops, which, before):
  """uops with the first entry that which(u) picks moved to just before the first one before(u) picks."""
  u = next(u for u in uops if which(u))
  rest = [x for x in uops if x is not u]
  i = next(i for i, x in enumerate(rest) if before(x))
  return rest[:i] + [u] + rest[i:]

def test_spec_linear_names_what_a_renderer_cannot_take():
  from lazynb.dtype import dtypes
  from lazynb.uop.ops import UOp
  sink, uops = _row_max_times_two()
  assert pipeline.spec_linear(uops) is None
  red = next(u for u in uops if u.op is Ops.DEFINE_ACC).src[1]
  is_op = lambda op: lambda u: u.op is op  # noqa: E731
  cases = {
    "buffer order": [uops[1], uops[0]] + uops[2:],
    "DEFINE_ACC before its loops, ASSIGN inside them": sink.toposort(),
    "the SINK only holds the kernel's stores": [u for u in sink.toposort() if u.op is not Ops.REDUCE],
    # the reduce loop closed right after it opens: its body reads the counter of a closed loop
    "reads the counter of the loop ridx0 (the RANGE at uop 9) after that loop's ENDRANGE": _moved(uops, lambda u: u.op is Ops.ENDRANGE and u.src[0] is red, lambda u: u.op is Ops.ADD),
    "while the loop ridx0 (the RANGE at uop 9), the loop it sums over, is still open": _moved(uops, is_op(Ops.ENDRANGE), is_op(Ops.STORE)),  # the store inside the reduce loop
    "comes after the loop ridx0": _moved(uops, is_op(Ops.DEFINE_ACC), lambda u: u.op is Ops.ADD),  # the accumulator inside its loop
    "a second time": uops[:-1] + [red, UOp(Ops.ENDRANGE, dtypes.void, (red,)), uops[-1]],
    "never closed": uops[:-1],
  }
  for want, bad in cases.items():
    assert want in (pipeline.spec_linear(bad) or ""), (want, pipeline.spec_linear(bad))
  # an update listed after its loop (its value needs nothing from the loop, so only the ASSIGN is out of place)
  r, g = UOp(Ops.RANGE, dtypes.index, (), (0, 4, "ridx0")), UOp(Ops.DEFINE_GLOBAL, dtypes.float.ptr(), (), 0)
  acc = UOp(Ops.DEFINE_ACC, dtypes.float, (UOp.const(dtypes.float, 0.0), r), 0)
  one, zero = UOp.const(dtypes.float, 1.0), UOp.const(dtypes.index, 0)
  upd = UOp(Ops.ASSIGN, dtypes.float, (acc, acc + one))
  at = UOp(Ops.INDEX, dtypes.float.ptr(), (g, zero))
  ok = [g, one, zero, acc.src[0], acc, r, acc + one, upd, UOp(Ops.ENDRANGE, dtypes.void, (r,)), at, UOp(Ops.STORE, dtypes.void, (at, upd))]
  assert pipeline.spec_linear(ok) is None
  assert "updates its accumulator outside the loop ridx0" in (pipeline.spec_linear(ok[:6] + [ok[8], ok[6], ok[7]] + ok[9:]) or "")

def test_a_list_that_differs_is_described_entry_by_entry():
  _, uops = _row_max_times_two()
  d = pipeline.difference([uops[1], uops[0]] + uops[2:], uops)
  assert d == {"message": f"entry 0 differs: yours is DEFINE_GLOBAL 1, the reference's DEFINE_GLOBAL 0 ({len(uops)} and {len(uops)} entries)",
               "index": 0}
  # another order is no mistake in itself: the UOps only one list has are named too (an accumulator started at 0, not -inf)
  start = next(u for u in uops if u.op is Ops.DEFINE_ACC).src[0]
  zero = [start.replace(arg=0.0) if u is start else u for u in uops]
  assert pipeline.difference(zero, uops)["message"].endswith("; only yours has CONST 0.0; only the reference's has CONST -inf")

def test_spec_linear_wants_a_loops_variable_listed_before_the_loop():
  from lazynb.notebook.build import symbolic_programs
  seen = []
  def spy(sink):
    seen.append(pipeline.reference("linearize")(sink))
    return seen[-1]
  with pipeline.use("linearize", spy): symbolic_programs()[0].run()
  uops = seen[0]
  assert pipeline.spec_linear(uops) is None and any(u.op is Ops.DEFINE_VAR for u in uops)
  assert "counts up to the variable i, whose DEFINE_VAR is not earlier" in pipeline.spec_linear([u for u in uops if u.op is not Ops.DEFINE_VAR])
  assert "reads an INDEX that is not earlier" in pipeline.spec_linear([u for u in uops if u.op is not Ops.INDEX])
