"""A trace of code run under lazynb.pipeline.use names the learner's stages and carries lazynb's own results next to
theirs: `replaced_stages` (the document), `replaced` and `reference` per kernel (lazynb's source, UOp table, lowered
graph, and where the learner's first differs: a source line, a UOp index, a graph node), `replaced_stage` per rewrite
pass. Computed only while a trace records and a stage is replaced; a replaced schedule is recorded, never rerun. The
expected places are found here from lazynb's own output (a run without use()), not taken from the pipeline's answer."""
from __future__ import annotations
import contextlib, json
from pathlib import Path
import jsonschema
import numpy as np
import pytest
from lazynb import Tensor, Device, pipeline
from lazynb.codegen import get_program
from lazynb.trace import capture
from lazynb.notebook.tracedoc import bounded
from lazynb.uop.ops import Ops

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "lazynb" / "trace.schema.json").read_text())
validator = jsonschema.Draft202012Validator(SCHEMA)
def errors(doc) -> list[str]: return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]

X = np.arange(12, dtype=np.float32).reshape(3, 4)
def program(scale: float): return lambda: (Tensor(X) * scale + 1).sum(axis=1).numpy()

def traced(fn, *uses) -> dict:
  """The trace document of fn() run with each (stage, function) of `uses` in place of lazynb's, as plain JSON."""
  with capture() as tr, contextlib.ExitStack() as stack:
    for name, f in uses: stack.enter_context(pipeline.use(name, f))
    fn()
  return json.loads(json.dumps(tr.to_json()))

def _insert_line(src: str) -> str:
  lines = src.split("\n")
  return "\n".join(lines[:2] + ["  /* the learner's line */"] + lines[2:])

def _change_store(src: str) -> str:
  """The first line that stores to data0 gets a comment at its end (same line count)."""
  lines = src.split("\n")
  i = next(i for i in range(1, len(lines)) if "data0" in lines[i])
  lines[i] += " /* mine */"
  return "\n".join(lines)

def _first_line_differing(a: str, b: str) -> int:
  """1-based, from the two texts (an oracle written apart from pipeline.difference)."""
  for i, (x, y) in enumerate(zip(a.split("\n"), b.split("\n"))):
    if x != y: return i + 1
  return min(a.count("\n"), b.count("\n")) + 2

@pytest.mark.parametrize("change", [_insert_line, _change_store], ids=["inserted line", "changed line"])
def test_a_replaced_renderer_is_named_with_lazynbs_source_and_the_first_differing_line(change):
  ref = pipeline.reference("render")
  def my_render(name, uops, renderer): return change(ref(name, uops, renderer))
  plain = traced(program(2.0))
  doc = traced(program(2.0), ("render", my_render))
  assert errors(doc) == []
  assert doc["replaced_stages"] == ["render"]
  assert len(doc["kernels"]) == len(plain["kernels"]) >= 1
  for k, p in zip(doc["kernels"], plain["kernels"]):
    assert k["replaced"] == ["render"]
    r = k["reference"]
    assert r["stages"] == ["render"] and r["uops"] is None and r["lowered_graph"] is None and r["opts"] is None
    assert r["source"] == p["source"], "lazynb's source, as a run without use() made it"
    assert k["source"] == change(p["source"])
    want = _first_line_differing(k["source"], p["source"])
    assert [(d["stage"], d["line"], d["index"], d["node"]) for d in r["differences"]] == [("render", want, None, None)]
    assert f"line {want} differs" in r["differences"][0]["message"]

def test_no_reference_data_without_use():
  doc = traced(program(3.0))
  assert errors(doc) == []
  assert doc["replaced_stages"] == [] and doc["kernels"]
  assert all(k["replaced"] == [] and k["reference"] is None for k in doc["kernels"])
  assert doc["rewrites"] and all(r["replaced_stage"] is None for r in doc["rewrites"])

def test_lazynbs_result_is_computed_only_while_a_trace_records(monkeypatch):
  """use() with no trace recording (the DEBUG printer always listens) runs lazynb's renderer once per kernel, for the
  learner's wrapper; a recording trace adds one more (the reference), and the program carries it."""
  calls = []
  st = pipeline.stage("render")
  ref = st.ref
  def counted(*a):
    calls.append(a[0])
    return ref(*a)
  monkeypatch.setattr(st, "ref", counted)
  def mine(name, uops, renderer): return _insert_line(counted(name, uops, renderer))
  t = (Tensor(X) * 5 + 1).contiguous()
  with pipeline.use("render", mine):
    si = [s for s in t.schedule() if s.kind == "kernel"][0]
    prg = get_program(si.ast, Device[si.bufs[0].device].renderer)
  assert len(calls) == 1 and prg.reference == {} and prg.differences == [] and prg.replaced == ["render"]
  with capture():
    with pipeline.use("render", mine): prg = get_program(si.ast, Device[si.bufs[0].device].renderer)
  assert len(calls) == 3 and set(prg.reference) == {"render"} and prg.differences[0]["line"] == 3

def test_a_kernel_cached_before_a_trace_recorded_gets_lazynbs_result_when_one_does():
  def mine(name, uops, renderer): return _insert_line(pipeline.reference("render")(name, uops, renderer))
  with pipeline.use("render", mine): program(7.0)()   # compiled and cached with no trace recording
  doc = traced(program(7.0), ("render", mine))
  assert doc["kernels"] and all(k["reference"] is not None and k["reference"]["differences"] for k in doc["kernels"])

def _bump_const(k):
  """lazynb's lower, with the first float constant 2.5 made 3.5: a different (wrong) kernel the trace must locate."""
  out = pipeline.reference("lower")(k)
  c = next(u for u in out.toposort() if u.op is Ops.CONST and u.arg == 2.5)
  return out.substitute({c: c.replace(arg=3.5)})

def test_a_replaced_lower_gives_lazynbs_graph_uops_and_source_with_each_first_difference():
  doc = traced(program(2.5), ("lower", _bump_const))
  assert errors(doc) == []
  assert doc["replaced_stages"] == ["lower"]
  k = doc["kernels"][0]
  r = k["reference"]
  assert k["replaced"] == ["lower"] and r["stages"] == ["lower", "simplify", "linearize", "render"]
  diffs = {d["stage"]: d for d in r["differences"]}
  assert list(diffs) == ["lower", "simplify", "linearize", "render"]
  # the graph: the node named is the first whose (op, dtype, arg) differ, in both graphs as the document holds them
  yours, theirs = doc["graphs"][k["lowered_graph"]]["nodes"], doc["graphs"][r["lowered_graph"]]["nodes"]
  n = diffs["simplify"]["node"]
  key = lambda x: (x["op"], x["dtype"], x["arg"])  # noqa: E731
  assert [key(x) for x in yours[:n]] == [key(x) for x in theirs[:n]] and key(yours[n]) != key(theirs[n])
  assert yours[n]["op"] == "CONST" and "3.5" in yours[n]["arg"] and "2.5" in theirs[n]["arg"]
  # the UOp table: the entry named is the first that differs
  i = diffs["linearize"]["index"]
  row = lambda u: (u["op"], u["dtype"], u["arg"])  # noqa: E731
  assert [row(u) for u in k["uops"][:i]] == [row(u) for u in r["uops"][:i]] and row(k["uops"][i]) != row(r["uops"][i])
  # the source: lazynb's is what a run without use() renders (bounds-checked, like the learner's kernel)
  assert diffs["render"]["line"] == _first_line_differing(k["source"], r["source"])
  assert "3.5" in k["source"].split("\n")[diffs["render"]["line"] - 1] and "2.5" in r["source"]

def test_passes_inside_a_learners_stage_are_labelled_and_lazynbs_own_run_adds_none():
  ref = pipeline.reference("lower")
  def my_lower(k): return ref(k)
  plain = traced(program(4.0))
  doc = traced(program(4.0), ("lower", my_lower))
  inside = [(r["name"], r["replaced_stage"]) for r in doc["rewrites"]]
  assert ("lower: views to index math", "lower") in inside
  assert all(stage is None for name, stage in inside if not name.startswith("lower:"))
  assert [r["name"] for r in doc["rewrites"]] == [r["name"] for r in plain["rewrites"]], "lazynb's comparison run is off the bus"
  k = doc["kernels"][0]
  assert k["reference"]["differences"] == [] and k["reference"]["lowered_graph"] == k["lowered_graph"]

def test_a_replaced_schedule_is_recorded_as_the_learners_items_and_never_rerun(monkeypatch):
  st = pipeline.stage("schedule")
  ref, calls, returned = st.ref, [], []
  def counted(outs):
    calls.append(outs)
    return ref(outs)
  monkeypatch.setattr(st, "ref", counted)
  def my_schedule(outs):
    items, becomes = counted(outs)
    returned.append(list(items))
    return list(items), becomes
  doc = traced(program(6.0), ("schedule", my_schedule))
  assert errors(doc) == []
  assert doc["replaced_stages"] == ["schedule"]
  assert len(calls) == len(returned), "lazynb's schedule ran only when the learner's called it"
  assert [s["kind"] for s in doc["schedule"]] == [si.kind for items in returned for si in items], "the learner's items, once each"
  assert all(k["replaced"] == [] and k["reference"] is None for k in doc["kernels"])
  assert {r["replaced_stage"] for r in doc["rewrites"] if r["stage"] in ("tensor graph", "kernels")} == {"schedule"}
  assert all(s["kernel"] is not None for s in doc["schedule"] if s["kind"] == "kernel")

def test_the_size_bound_keeps_lazynbs_results_consistent():
  def several():
    a = Tensor(X)
    for s in (2.5, 3.0, 4.0, 5.0): (a * s + 1).sum(axis=0).realize()
  def my_lower(k):  # lazynb's, with a float constant changed: the learner's graphs are not lazynb's
    out = pipeline.reference("lower")(k)
    c = next(u for u in out.toposort() if u.op is Ops.CONST and isinstance(u.arg, float))
    return out.substitute({c: c.replace(arg=c.arg + 1)})
  doc = traced(several, ("lower", my_lower), ("render", lambda n, u, r: _insert_line(pipeline.reference("render")(n, u, r))))
  assert all(k["reference"]["lowered_graph"] != k["lowered_graph"] for k in doc["kernels"])
  assert doc["replaced_stages"] == ["lower", "render"] and len(doc["kernels"]) >= 4
  full = len(json.dumps(doc))
  for limit in (full // 2, full // 4):
    b = bounded(doc, limit)
    assert len(json.dumps(b)) <= limit and errors(b) == [], limit
    refs = [k["reference"]["lowered_graph"] for k in b["kernels"]] + [k["lowered_graph"] for k in b["kernels"]]
    assert all(g in b["graphs"] for g in refs if g is not None), "every graph still named is kept"
    assert [k["reference"]["source"] for k in b["kernels"]][:1] == [doc["kernels"][0]["reference"]["source"]]
  assert all(k["reference"]["uops"] is not None for k in doc["kernels"]), "the recorded trace itself is not changed"
