"""The trace bus: every compiler stage reports an Event with the fields docs/architecture.md documents ("The trace bus")."""
import numpy as np
import pytest
from lazynb import Tensor, Device, GlobalCounters, Context, Variable
from lazynb import trace
from lazynb.trace import Recorder
from lazynb.uop import UOp, Ops, UPat
from lazynb.uop import rewrite as rewrite_mod
from lazynb.engine.schedule import ScheduleItem
from lazynb.engine import realize as realize_mod

DOCUMENTED = {
  "schedule": {"items"},
  "rewrite": {"name", "stage", "before", "after", "steps"},
  "program": {"program"},
  "compile": {"name", "device", "seconds", "cached"},
  "exec": {"name", "device", "kind", "seconds", "global_size", "local_size", "op_estimate", "mem_estimate", "bufs"},
  "realize": {"kernels", "copies", "seconds"},
  "jit": {"phase", "name", "kernels"},
}

def test_the_documented_fields_are_in_the_docs_table():
  import pathlib, re
  doc = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text().split("## The trace bus", 1)[1]
  rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| (.*?) \|", doc, re.M)}
  for kind, fields in DOCUMENTED.items():
    assert kind in rows, f"docs/architecture.md's trace-bus table has no row for {kind}"
    named = set(re.findall(r"`(\w+)`", rows[kind]))
    assert fields <= named, f"{kind}: {fields - named} not in the table"

@pytest.fixture
def fresh():
  """Forget compiled programs so that program/compile events fire again in this test."""
  realize_mod.method_cache.clear()
  yield

def _run_recorded(make, rewrites=False):
  with Recorder(rewrites=rewrites) as rec:
    out = make()
    out.realize()
  return rec, out

def test_recorder_sees_every_stage(fresh):
  a = Tensor(np.arange(16, dtype=np.float32).reshape(4, 4))
  rec, out = _run_recorded(lambda: (a + 1).relu().sum(axis=1))
  kinds = [e.kind for e in rec.events]
  for k in ("schedule", "program", "compile", "exec", "realize"):
    assert k in kinds, f"no {k} event"
  for e in rec.events:
    if e.kind in DOCUMENTED: assert DOCUMENTED[e.kind] <= set(e.data), f"{e.kind} lacks {DOCUMENTED[e.kind] - set(e.data)}"

def test_event_order_follows_the_pipeline(fresh):
  a = Tensor.rand(8, 3)
  rec, _ = _run_recorded(lambda: a * 7 + 2)
  first = {}
  for e in rec.events: first.setdefault(e.kind, e.seq)
  assert first["schedule"] < first["program"] < first["compile"] < first["exec"] < first["realize"]
  seqs = [e.seq for e in rec.events]
  assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
  assert all(isinstance(e.t, float) for e in rec.events)

def test_schedule_event_items(fresh):
  a = Tensor([1.0, 2.0, 3.0])
  rec, out = _run_recorded(lambda: a * 2)
  ev = rec.of("schedule")[0]
  items = ev.data["items"]
  assert isinstance(items, list) and all(isinstance(si, ScheduleItem) for si in items)
  assert [si.kind for si in items] == ["copy", "kernel"]

def test_program_event_carries_program_spec(fresh):
  a = Tensor(np.ones((5, 3), dtype=np.float32)).realize()
  rec, _ = _run_recorded(lambda: a.sum(axis=0) * 3)
  (ev,) = rec.of("program")
  p = ev.data["program"]
  assert isinstance(p.src, str) and p.name in p.src
  assert p.device == Device.DEFAULT and len(p.global_size) == 3 and len(p.local_size) == 3
  assert isinstance(p.uops, list) and all(isinstance(u, UOp) for u in p.uops)
  assert p.ast.op is Ops.SINK
  assert p.name.startswith("r_")  # a reduce kernel
  assert set(p.timings) >= {"optimize", "lower", "linearize", "render"}

def test_compile_event_fields(fresh):
  a = Tensor.rand(3, 5)
  rec, _ = _run_recorded(lambda: (a - 0.25) * 11)
  (ev,) = rec.of("compile")
  d = ev.data
  assert d["name"] == rec.of("program")[0].data["program"].name
  assert d["device"] == Device.DEFAULT and d["seconds"] >= 0 and isinstance(d["cached"], bool)

def test_no_compile_for_a_cached_kernel():
  (Tensor.rand(6) + Tensor.rand(6)).realize()  # compiled here (or earlier)
  with Recorder(rewrites=False) as rec: (Tensor.rand(6) + Tensor.rand(6)).realize()  # the same AST again
  assert rec.of("program") == [] and rec.of("compile") == []
  assert len(rec.of("exec")) == 1

def test_exec_event_fields(fresh):
  x, y = Tensor.rand(4, 4), Tensor.rand(4, 4)
  rec, _ = _run_recorded(lambda: x + y)
  execs = [e for e in rec.of("exec") if e.data["kind"] == "kernel"]
  assert len(execs) == 1
  d = execs[0].data
  assert d["device"] == Device.DEFAULT and d["seconds"] >= 0
  assert d["op_estimate"] == 16            # one float add per element
  assert d["mem_estimate"] == 3 * 16 * 4   # two inputs and one output of 16 floats
  assert len(d["bufs"]) == 3 and d["bufs"][0].size == 16
  assert len(d["global_size"]) == 3 and len(d["local_size"]) == 3

def test_exec_event_for_copy():
  t = Tensor([1, 2, 3])
  rec, _ = _run_recorded(lambda: t + 1)
  copies = [e for e in rec.of("exec") if e.data["kind"] == "copy"]
  assert len(copies) == 1
  assert copies[0].data["device"] == Device.DEFAULT and copies[0].data["op_estimate"] == 0
  assert copies[0].data["mem_estimate"] == 3 * 4

def test_realize_event_counts(fresh):
  t = Tensor([[1.0, 2.0], [3.0, 4.0]])
  rec, _ = _run_recorded(lambda: t.softmax())
  (ev,) = rec.of("realize")
  execs = rec.of("exec")
  assert ev.data["kernels"] == sum(e.data["kind"] == "kernel" for e in execs) == 3
  assert ev.data["copies"] == sum(e.data["kind"] == "copy" for e in execs) == 1
  assert ev.data["seconds"] >= 0

def test_exec_events_match_global_counters(fresh):
  a = Tensor.rand(8, 8)
  k0, ops0 = GlobalCounters.kernel_count, GlobalCounters.global_ops
  rec, _ = _run_recorded(lambda: (a @ a).relu().sum(axis=0))
  kern = [e for e in rec.of("exec") if e.data["kind"] == "kernel"]
  assert GlobalCounters.kernel_count - k0 == len(kern) == 2
  assert GlobalCounters.global_ops - ops0 == sum(e.data["op_estimate"] for e in kern)

def test_op_estimate_does_not_depend_on_opts():
  """FLOPs are a property of the computation, not of how the kernel was unrolled or upcast."""
  a, b = Tensor.rand(8, 8).realize(), Tensor.rand(8, 8).realize()
  est = []
  for noopt in (0, 1):
    realize_mod.method_cache.clear()
    with Context(NOOPT=noopt), Recorder(rewrites=False) as rec: (a @ b).realize()
    est.append(rec.of("exec")[0].data["op_estimate"])
  assert est == [2 * 8 * 8 * 8] * 2

def test_op_estimate_leaves_out_address_math():
  """A gather's address (index * row + column, read from memory) is not FLOPs; the values it computes are (as tinygrad counts)."""
  data, idx = Tensor.rand(64, 8).realize(), Tensor([3, 60, 7]).realize()
  est = []
  for f in (lambda: data[idx], lambda: data[idx] * 2 + 1, lambda: data[Tensor(Variable("v", 0, 63).bind(5))]):
    realize_mod.method_cache.clear()
    with Recorder(rewrites=False) as rec: f().realize()
    est.append(sum(e.data["op_estimate"] for e in rec.of("exec") if e.data["kind"] == "kernel"))
  assert est == [0, 2 * 3 * 8, 0]

def test_no_events_when_nothing_runs():
  a = Tensor.rand(4).realize()
  with Recorder() as rec:
    a.reshape(2, 2).realize()
  assert [e.kind for e in rec.events if e.kind != "schedule"] == []
  assert all(e.data["items"] == [] for e in rec.of("schedule"))

# ---------------------------------------------------------------- rewrite events

def test_rewrite_events_only_when_asked(fresh):
  a = Tensor.rand(4, 4)
  rec_off, _ = _run_recorded(lambda: a * 3 + 1, rewrites=False)
  assert rec_off.of("rewrite") == []
  realize_mod.method_cache.clear()
  b = Tensor.rand(4, 4)
  rec_on, _ = _run_recorded(lambda: b * 3 + 1, rewrites=True)
  rws = rec_on.of("rewrite")
  assert rws
  for e in rws:
    d = e.data
    assert isinstance(d["name"], str) and isinstance(d["before"], UOp) and isinstance(d["after"], UOp)
    for st in d["steps"]:
      before, after, pat = st
      assert isinstance(before, UOp) and isinstance(after, UOp) and isinstance(pat, UPat)

def test_rewrite_event_from_user_graph_rewrite():
  from lazynb import dtypes
  from lazynb.uop import PatternMatcher, graph_rewrite
  a = UOp(Ops.CONST, dtypes.int, arg=2)
  pm = PatternMatcher([(UPat.cvar("c1") + UPat.cvar("c2"), lambda c1, c2: c1.const_like(c1.arg + c2.arg))])
  with Recorder(rewrites=True) as rec:
    out = graph_rewrite(a + a, pm, name="fold")
  (ev,) = rec.of("rewrite")
  assert ev.data["name"] == "fold" and ev.data["before"] is a + a and ev.data["after"] is out
  assert len(ev.data["steps"]) == 1 and ev.data["steps"][0][1] is out

def test_rewrite_passes_not_tracked_after_recorder_exits():
  with Context(DEBUG=0):
    with Recorder(rewrites=True):
      assert rewrite_mod.rewrite_hooks and rewrite_mod._tracking()
    # the DEBUG printer stays subscribed but wants passes only at DEBUG >= 4: nobody pays for step tracking now
    assert not rewrite_mod._tracking()
    with Context(DEBUG=4): assert rewrite_mod._tracking()

def test_recorder_stops_recording_on_exit():
  rec = Recorder(rewrites=False)
  with rec: Tensor.rand(3).realize()
  n = len(rec.events)
  (Tensor.rand(3) + 1).realize()
  assert len(rec.events) == n

def test_two_recorders_both_see_events():
  with Recorder(rewrites=False) as r1, Recorder(rewrites=False) as r2:
    (Tensor.rand(5) * 2).realize()
  assert [e.kind for e in r1.events] == [e.kind for e in r2.events] and r1.events

def test_subscribe_unsubscribe_plain_function():
  got = []
  def reader(ev): got.append(ev)
  fn = trace.subscribe(reader)
  try: (Tensor.rand(2) + 3).realize()
  finally: trace.unsubscribe(fn)
  assert any(e.kind == "realize" for e in got)
  n = len(got)
  (Tensor.rand(2) + 3).realize()
  assert len(got) == n

def test_subscribe_bound_method():
  """Regression: subscribe() used to set an attribute on the callback (AttributeError for bound/builtin methods),
  after it had already been added to the subscribers."""
  got = []
  try:
    fn = trace.subscribe(got.append)
    (Tensor.rand(2) * 5).realize()
    trace.unsubscribe(fn)
  finally:
    if got.append in trace._subscribers: trace._subscribers.remove(got.append)  # never leak a reader into other tests
  assert any(e.kind == "exec" for e in got)
  n = len(got)
  (Tensor.rand(2) * 5).realize()
  assert len(got) == n

def test_capture_context_manager(fresh):
  with trace.capture() as tr:
    (Tensor.rand(3, 3) * 13 + 1).realize()
  doc = tr.to_json()
  assert len(doc["kernels"]) == 1 and "void " in doc["kernels"][0]["source"]
  assert [s["kind"] for s in doc["schedule"]] == ["kernel"]

# ---------------------------------------------------------------- DEBUG printing is a reader of the bus

def test_debug1_prints_realize_line(capsys):
  a = Tensor.rand(4)
  with Context(DEBUG=1): (a + 1).relu().realize()
  out = capsys.readouterr().out
  assert "realized 1 kernel" in out

def test_debug2_prints_kernel_line(capsys):
  from lazynb.helpers import strip_ansi
  a = Tensor.rand(4, 4)
  with Context(DEBUG=2): (a * 5).realize()
  lines = [strip_ansi(l) for l in capsys.readouterr().out.splitlines()]
  kern = [l for l in lines if l.startswith("***") and "E_" in l]
  assert len(kern) == 1 and Device.DEFAULT in kern[0] and "GFLOPS" in kern[0]

def test_debug3_prints_source(capsys, fresh):
  a = Tensor.rand(4, 4)
  with Context(DEBUG=3): (a * 9).realize()
  out = capsys.readouterr().out
  assert "void E_" in out and "*(data0+" in out

def test_debug0_prints_nothing(capsys):
  with Context(DEBUG=0): (Tensor.rand(4) + 1).realize()
  assert capsys.readouterr().out == ""

# ---------------------------------------------------------------- TinyJit reports capture and replay

def test_jit_events_and_replay_values():
  from lazynb import TinyJit
  @TinyJit
  def f(x): return (x * 2 + 1).sum(axis=0)
  xs = [np.random.default_rng(i).standard_normal((3, 4)).astype(np.float32) for i in range(4)]
  with Recorder(rewrites=False) as rec:
    outs = [f(Tensor(x)).numpy().copy() for x in xs]
  phases = [e.data["phase"] for e in rec.of("jit")]
  assert phases[0] == "capture" and phases[1:] == ["replay", "replay"]
  for x, o in zip(xs, outs): np.testing.assert_allclose(o, (x * 2 + 1).sum(0), rtol=1e-5)
