"""Every stage of the compiler is a visible rewrite: passes tagged with their stage, in pipeline order, in the trace
document and in DEBUG=4's output; the scheduler, the lowerer and the linearizer's accumulators are PatternMatchers."""
import re, sys
import pytest
import numpy as np
from lazynb import Tensor, Context
from lazynb.uop.ops import UOp, Ops, PatternMatcher, STAGES
from lazynb.engine import realize as realize_mod
from lazynb.engine.schedule import cut_kernel, create_schedule
from lazynb.codegen.lowerer import lowering, lower_rules
from lazynb.codegen.linearize import accumulators
from lazynb.notebook.magic import run_code, effective, Settings

MATMUL = "a = Tensor(A)\nb = Tensor(B)\nc = (a @ b).numpy()"

def _matmul_cell():
  realize_mod.method_cache.clear()  # compiled before: codegen would not run again
  rng = np.random.default_rng(1)
  ns = {"Tensor": Tensor, "A": rng.standard_normal((5, 7)).astype(np.float32), "B": rng.standard_normal((7, 3)).astype(np.float32)}
  run = run_code(MATMUL, ns, effective(Settings()))
  assert run.error is None
  return run.trace.to_json(), ns

def test_matmul_trace_has_every_stage_in_pipeline_order():
  doc, ns = _matmul_cell()
  np.testing.assert_allclose(ns["c"], ns["A"] @ ns["B"], rtol=1e-5, atol=1e-5)
  passes = doc["rewrites"]
  stages = [p["stage"] for p in passes]
  assert all(s in STAGES for s in stages), stages
  assert list(dict.fromkeys(stages)) == list(STAGES)  # first appearances in pipeline order
  assert stages == sorted(stages, key=STAGES.index)  # one kernel: the whole run is in order, nothing goes back a stage
  for p in passes:  # every pass has both graphs, and the after graph is not empty
    assert p["before_graph"] in doc["graphs"] and doc["graphs"][p["after_graph"]]["total_nodes"] > 1, p["name"]
  names = [p["name"] for p in passes]
  assert names[0] == "fold constants" and names[-1] == "linearize: order"
  for n in ("lower: views to index math", "simplify: index math", "linearize: accumulators"): assert n in names
  # the cut pass turned the tensor graph into the kernel the schedule has: its after graph is that kernel's AST
  (cut,) = [p for p in passes if p["stage"] == "kernels" and p["name"].startswith("cut kernel")]
  pats = [s["pattern"] for s in cut["steps"]]
  # the steps: the reduce joins the kernel, views go through movement ops, and stop at the copies of the numpy arrays
  assert any("REDUCE_AXIS" in p for p in pats) and any("PERMUTE" in p for p in pats) and sum("COPY" in p for p in pats) == 2
  after = doc["graphs"][cut["after_graph"]]
  ops = {n["op"] for n in after["nodes"]}
  assert {"STORE", "LOAD", "REDUCE_AXIS", "MUL"} <= ops and "VIEW" in ops and len(doc["kernels"]) == 1
  # lowering's markers are gone after the lowering pass, and the linear program is the kernel's uops
  low = next(p for p in passes if p["stage"] == "lowered" and p["name"].startswith("lower"))
  assert "LANE" in {n["op"] for n in doc["graphs"][low["before_graph"]]["nodes"]}
  assert "LANE" not in {n["op"] for n in doc["graphs"][low["after_graph"]]["nodes"]}
  order = passes[-1]
  assert doc["graphs"][order["after_graph"]]["total_nodes"] >= doc["kernels"][0]["uops_total"]

def test_each_kernel_goes_through_lowered_simplified_linearized():
  realize_mod.method_cache.clear()
  from lazynb.trace import capture
  x = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
  a = Tensor(x)
  with capture() as tr: out = ((a @ a.T).exp().sum(axis=1, keepdim=True) / a.sum()).numpy()
  np.testing.assert_allclose(out, np.exp(x @ x.T).sum(axis=1, keepdims=True) / x.sum(), rtol=1e-5)
  doc = tr.to_json()
  stages = [p["stage"] for p in doc["rewrites"] if p["stage"] in ("lowered", "simplified", "linearized") and not p["name"].startswith(("view", "lower: lanes"))]
  n = len(doc["kernels"])
  cuts = [p for p in doc["rewrites"] if p["name"].startswith("cut kernel")]
  assert n >= 2 and len(cuts) == len([s for s in doc["schedule"] if s["kind"] == "kernel"])
  assert stages == ["lowered", "simplified", "linearized", "linearized"] * n

def test_every_pass_in_a_trace_has_a_name():
  """The Rewrites tab lists passes by name: none of lazynb's own is the default 'graph_rewrite' (a view's index math,
  simplified while a kernel is cut, was one), over a kind of each program of the generated corpus."""
  from lazynb.trace import capture
  from lazynb.corpus import programs
  seen: dict[str, object] = {}
  for p in programs():
    if p.kind not in seen: seen[p.kind] = p
  for p in seen.values():
    realize_mod.method_cache.clear()
    with capture() as tr: p.run()
    unnamed = [(r["stage"], r["steps"][0]["pattern"] if r["steps"] else "") for r in tr.to_json()["rewrites"] if r["name"] == "graph_rewrite"]
    assert not unnamed, f"{p.name}: passes without a name: {unnamed}"

def test_debug_4_prints_the_stages_in_order(capsys):
  realize_mod.method_cache.clear()
  a, b = Tensor(np.ones((4, 6), np.float32)), Tensor(np.ones((6, 2), np.float32))
  with Context(DEBUG=4): c = (a @ b).numpy()
  assert (c == 6).all()
  out = re.sub(r"\x1b\[\d+m", "", capsys.readouterr().out)
  printed = re.findall(r"^pass \[([a-z ]+)\] (.+?): \d+ steps$", out, re.M)
  stages = [s for s, _ in printed]
  assert list(dict.fromkeys(stages)) == list(STAGES) and stages == sorted(stages, key=STAGES.index)
  assert [n for _, n in printed][-1] == "linearize: order"

def test_debug_below_4_tracks_no_passes(capsys):
  with Context(DEBUG=3): (Tensor(np.ones(3, np.float32)) + 1).numpy()
  assert "pass [" not in capsys.readouterr().out

def test_gradient_is_a_tensor_graph_pass():
  from lazynb.trace import capture
  w = Tensor(np.array([1.0, 2.0, 3.0], np.float32), requires_grad=True)
  with capture() as tr:
    (w * w).sum().backward()
    g = w.grad.numpy()
  np.testing.assert_allclose(g, [2.0, 4.0, 6.0])
  passes = tr.to_json()["rewrites"]
  (grad,) = [p for p in passes if p["name"] == "gradient"]
  assert grad["stage"] == "tensor graph" and grad["total_steps"] >= 2 and passes.index(grad) == 0

def test_the_passes_are_rules():
  for pm in (cut_kernel, lowering, lower_rules, accumulators): assert isinstance(pm, PatternMatcher) and len(pm.patterns) >= 1
  assert len(cut_kernel.patterns) >= 8 and len(lowering.patterns) >= 7

def test_a_reduce_read_through_an_expand_is_cut_by_the_rules():
  x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
  y = x - x.max(axis=1, keepdim=True)  # the max is read through an expand: a kernel of its own
  items, _ = create_schedule([y.uop])
  assert [si.reason for si in items if si.kind == "kernel"] == ["reduce", "realize"]
  np.testing.assert_allclose(y.numpy(), np.arange(6).reshape(2, 3) - np.array([[2], [5]]))

@pytest.mark.slow
def test_a_deep_chain_schedules_and_runs_without_deep_recursion():
  old = sys.getrecursionlimit()
  x = Tensor(np.zeros(4, np.float32))
  t = x
  for _ in range(5000): t = t + 1.0
  realize_mod.method_cache.clear()
  sys.setrecursionlimit(1000)  # the default: nothing from building the schedule to running the kernel recurses per node
  try: out = t.numpy()
  finally: sys.setrecursionlimit(old)
  np.testing.assert_array_equal(out, np.full(4, 5000.0, np.float32))
  assert isinstance(t.uop, UOp) and t.uop.base.op is Ops.BUFFER
