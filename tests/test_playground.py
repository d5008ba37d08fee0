"""The kernel-opt playground (lazynb/notebook/playground.py): apply/undo/reset give the expected opts and source, every
opt it lists as legal applies and keeps the result equal to numpy (matmul, reduce, elementwise, conv), a wrong result
is shown loudly, BEAM's rounds are recorded with the winner the fastest candidate, the text/html is a short escaped
text, and the ipywidgets controls work headless and never show a stale state. The view itself (optview.ts) is tested
in Chromium in tests/ui/test_playground_ui.py."""
import html as html_mod
import numpy as np
import pytest
from lazynb import Tensor, trace
from lazynb.device import Device
from lazynb.codegen.kernel import Kernel, Opt, OptOps, KernelOptError, hand_coded_optimizations
from lazynb.engine.search import beam_search
from lazynb.notebook.playground import Playground, explain, fallback_html, MIME

def _rand(*shape, seed=0): return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

def _matmul(n=16):
  a, b = _rand(n, n), _rand(n, n, seed=1)
  return Tensor(a) @ Tensor(b), a @ b

def test_apply_undo_reset():
  t, ref = _matmul()
  pg = Playground(t, reference=ref, runs=1)
  k = Kernel(pg.ast, pg.renderer)
  heur = hand_coded_optimizations(k)
  assert pg.opts == heur and pg.heuristic == heur and heur  # starts at the heuristic's choice
  start_src = pg.measure()["source"]
  pg.reset("none")
  assert pg.opts == [] and "for (int gidx1 = 0; gidx1 < 16;" in pg.measure()["source"]
  pg.apply(Opt(OptOps.UPCAST, 1, 4))
  st = pg.measure()
  assert pg.opts == [Opt(OptOps.UPCAST, 1, 4)] and st["axis_types"] == ["GLOBAL", "GLOBAL", "REDUCE", "UPCAST"]
  assert "gidx1 < 4;" in st["source"] and "acc3" in st["source"] and st["correct"]
  d = pg.doc()
  assert any(ln.startswith("+") and "acc3" in ln for ln in d["diff"]) and any(ln.startswith("-") and "gidx1 < 16" in ln for ln in d["diff"])
  assert d["steps"][0]["opt"] == "Opt(UPCAST, 1, 4)" and "gidx1" in d["steps"][0]["explain"] and "4 x 4" in d["steps"][0]["explain"]
  pg.apply(Opt(OptOps.UNROLL, 2, 4))
  assert pg.opts == [Opt(OptOps.UPCAST, 1, 4), Opt(OptOps.UNROLL, 2, 4)] and "ridx0 < 4;" in pg.measure()["source"]
  pg.undo()
  assert pg.opts == [Opt(OptOps.UPCAST, 1, 4)]
  pg.reset("heuristic")
  assert pg.opts == heur and pg.measure()["source"] == start_src
  pg.undo(); pg.undo(); pg.undo()  # noqa: E702
  assert pg.opts == heur and len(pg.history) == 1
  with pytest.raises(IndexError): pg.undo()
  with pytest.raises(KernelOptError, match="reduce"): pg.reset("none").apply(Opt(OptOps.UNROLL, 0, 4))  # a global axis
  assert pg.opts == []  # a refused opt leaves the state as it was

def _cases():
  x, w = _rand(2, 3, 10, 10), _rand(4, 3, 3, 3, seed=1)
  xt = Tensor(x)
  conv_ref = np.zeros((2, 4, 8, 8), np.float32)
  for i in range(3):
    for j in range(3): conv_ref += np.einsum("bchw,oc->bohw", x[:, :, i:i + 8, j:j + 8], w[:, :, i, j])
  a, b = _rand(12, 20), _rand(20, 8, seed=2)
  e = _rand(6, 16)
  return {"matmul": (Tensor(a) @ Tensor(b), a @ b), "reduce": (Tensor(e).sum(axis=1), e.sum(axis=1)),
          "elementwise": ((Tensor(e) * 2 + 1).relu(), np.maximum(e * 2 + 1, 0)), "conv": (xt.conv2d(Tensor(w)), conv_ref)}

@pytest.mark.parametrize("case", ["reduce", "elementwise", pytest.param("matmul", marks=pytest.mark.slow), pytest.param("conv", marks=pytest.mark.slow)])
def test_every_legal_opt_applies_and_keeps_the_result(case):
  t, ref = _cases()[case]
  pg = Playground(t, reference=ref, runs=1)
  for start in ("none", "heuristic"):
    pg.reset(start)
    legal = pg.legal()
    assert legal, f"{case}: no legal opts from {start}"
    assert {o.op for o in legal} >= ({OptOps.UPCAST} if case != "reduce" else {OptOps.UNROLL})
    for opt in legal:
      pg.apply(opt)
      st = pg.measure()
      got = pg._output(pg.opts).reshape(ref.shape)
      np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4, err_msg=f"{case} {pg.opts}")
      assert st["correct"], (case, pg.opts)
      pg.undo()
  assert not pg.notes

def test_a_wrong_result_is_shown_loudly():
  t, ref = _matmul(8)
  pg = Playground(t, reference=ref + 1, runs=1)
  d = pg.doc()
  assert d["state"]["correct"] is False and d["notes"] and "WRONG" in d["notes"][0]
  assert "WRONG RESULT" in fallback_html(d) and "WRONG" in repr(pg)

@pytest.mark.slow
def test_beam_rounds_are_recorded_and_the_winner_is_the_fastest():
  a, b = _rand(16, 16), _rand(16, 16, seed=3)
  (si,) = (Tensor(a).realize() @ Tensor(b).realize()).schedule()
  with trace.Recorder(rewrites=False) as rec: best = beam_search(Kernel(si.ast, Device["CPU"].renderer), 1, cache=False)
  ev = rec.of("beam")[0].data
  assert ev["rounds"] == len(ev["rounds_detail"]) >= 1 and ev["tried"] == 1 + sum(len(r["candidates"]) for r in ev["rounds_detail"])
  assert ev["start"]["opts"] == ev["path"][0] and ev["path"][-1] == best.applied_opts == ev["opts"]
  for r in ev["rounds_detail"]:
    timed = [c for c in r["candidates"] if c["seconds"] is not None]
    fastest = min(timed, key=lambda c: c["seconds"])
    assert r["best"] == fastest["opts"] and r["best_s"] == fastest["seconds"]
  kept = [r for r in ev["rounds_detail"] if r["improved"]]
  assert ev["path"][1:] == [r["best"] for r in kept]  # width 1: each kept round's fastest is the next step
  if kept: assert ev["best_s"] == kept[-1]["best_s"]
  # the playground shows the same, and moves to the winner
  pg = Playground(Tensor(a) @ Tensor(b), reference=a @ b, runs=1).beam(1)
  d = pg.doc()
  assert d["beam"]["rounds_detail"] and d["beam"]["winner"] == d["state"]["opts"] and d["state"]["correct"]

def test_view_shows_axes_index_timing_and_peak():
  t, ref = _matmul()
  pg = Playground(t, reference=ref, runs=3)
  bundle = pg._repr_mimebundle_()
  d = bundle[MIME]
  s = d["state"]
  assert s["runs"] == 3 and s["time_s"] == sorted(s["times_s"])[1] and s["gflops"] == pytest.approx(s["op_estimate"] / s["time_s"] * 1e-9)
  assert s["op_estimate"] == 2 * 16 ** 3 and d["peak"]["numpy_gflops"] > 0 and "numpy" in d["peak"]["numpy_what"]
  assert [v["access"] for v in s["views"]] == ["load", "load", "store"] and all(any(n in v["index"] for n in s["axis_names"]) for v in s["views"])
  html = bundle["text/html"]  # without the extension: a short text (opts, time, result, source), no second renderer
  assert "median of 3 runs" in html and "result equal to numpy" in html and "<script" not in html and len(html) < 4 * len(s["source"]) + 2000
  assert ", ".join(s["opts"]) in html and html_mod.escape(s["source"].splitlines()[0]) in html
  assert s["views"][0]["index"] in bundle["text/plain"]

def test_explain_decodes_each_kind():
  (si,) = (Tensor(_rand(8, 16)).realize() @ Tensor(_rand(16, 8)).realize()).schedule()
  k = Kernel(si.ast, Device["CPU"].renderer)
  assert "gidx1" in explain(Opt(OptOps.UPCAST, 1, 4), k) and "registers" in explain(Opt(OptOps.UPCAST, 1, 4), k)
  assert "ridx0" in explain(Opt(OptOps.UNROLL, 2, 4), k) and "written out" in explain(Opt(OptOps.UNROLL, 2, 4), k)
  assert "threads" in explain(Opt(OptOps.THREAD, 0, 2), k)
  assert "masked" in explain(Opt(OptOps.PADTO, 0, 16), Kernel(Tensor(_rand(10, 10)).realize().sum(1).schedule()[0].ast, Device["CPU"].renderer))

def test_widget_headless():
  t, ref = _matmul()
  pg = Playground(t, reference=ref, runs=1)
  w = pg.widget()
  assert w.undo_b.disabled and len(w.choice.options) == len(pg.legal())
  w.none_b.click()
  assert pg.opts == [] and "no opts" in w.status.value and not w.undo_b.disabled
  w.choice.value = Opt(OptOps.UPCAST, 1, 4)
  w.apply_b.click()
  assert pg.opts == [Opt(OptOps.UPCAST, 1, 4)] and "Opt(UPCAST, 1, 4)" in w.status.value and "equal to numpy" in w.status.value
  shown = w.view.outputs[0]["data"]  # the view below the controls: the playground's own output (the extension draws it)
  assert shown[MIME]["state"]["opts"] == ["Opt(UPCAST, 1, 4)"] and any("gidx1 < 16" in ln for ln in shown[MIME]["diff"])
  assert "Opt(UPCAST, 1, 4)" in shown["text/html"] and len(w.view.outputs) == 1
  w.undo_b.click()
  assert pg.opts == []
  w.heur_b.click()
  assert pg.opts == pg.heuristic
  w.none_b.click(); w.choice.value = Opt(OptOps.UPCAST, 1, 4); w.apply_b.click()  # noqa: E702
  before = list(pg.opts)
  w.choice.options = [("bad", Opt(OptOps.UNROLL, 0, 4))]
  w.apply_b.click()
  assert pg.opts == before and "not applied" in w.status.value

def test_widget_follows_changes_made_outside_it():
  """The playground changed by code in another cell (pg.apply, pg.undo, pg.beam ...): the widget's status, its opt list
  and its view show the new state, so "apply" acts on the state the learner sees."""
  t, ref = _matmul()
  pg = Playground(t, reference=ref, runs=1)
  w = pg.widget()
  pg.reset("none").apply(Opt(OptOps.UPCAST, 1, 4))
  assert "Opt(UPCAST, 1, 4)" in w.status.value and w.view.outputs[0]["data"][MIME]["state"]["opts"] == ["Opt(UPCAST, 1, 4)"]
  assert [o for _, o in w.choice.options] == pg.legal() and not w.undo_b.disabled
  pg.undo()
  assert w.view.outputs[0]["data"][MIME]["state"]["opts"] == [] and "no opts" in w.status.value
  w.choice.value = Opt(OptOps.UPCAST, 0, 4)
  w.apply_b.click()
  assert pg.opts == [Opt(OptOps.UPCAST, 0, 4)]

def test_fallback_escapes_and_bounds():
  t, ref = _matmul(8)
  d = Playground(t, reference=ref, runs=1).doc()
  evil = '<img src=x onerror=alert(1)>'
  d = dict(d, notes=[evil], reference=evil, device=evil, state=dict(d["state"], name=evil, opts=[evil], source=evil + "\n" + "x;\n" * 20_000, correct=False))
  out = fallback_html(d)
  assert "<img" not in out and out.count(html_mod.escape(evil)) == 6 and "WRONG RESULT" in out and len(out) < 25_000

@pytest.mark.slow
def test_beam_progress_goes_to_stdout_or_to_a_callback(capfd, monkeypatch):
  """BEAM's progress is one line on stdout, rewritten in place (stderr shows as an error box in a notebook), or, given
  on_progress, a call per round and None at the end; the printed line is cut at a word with an ellipsis."""
  monkeypatch.setenv("BEAM_PROGRESS", "1")
  a, b = _rand(16, 16), _rand(16, 16, seed=4)
  (si,) = (Tensor(a).realize() @ Tensor(b).realize()).schedule()
  capfd.readouterr()
  beam_search(Kernel(si.ast, Device["CPU"].renderer), 1, cache=False)
  out, err = capfd.readouterr()
  assert "BEAM 1: round 1, " in out and "BEAM" not in err and out.startswith("\r") and out.endswith("\n") and out.count("\n") == 1
  lines: list = []
  beam_search(Kernel(si.ast, Device["CPU"].renderer), 1, cache=False, on_progress=lines.append)
  out, err = capfd.readouterr()
  assert "BEAM" not in out + err and lines[-1] is None and len(lines) >= 2
  assert [ln.split(",")[0] for ln in lines[:-1]] == [f"BEAM 1: round {i + 1}" for i in range(len(lines) - 1)]
  from lazynb.engine.search import _print_progress
  long = "BEAM 1: round 1, 9 kernels tried, best 1.0 us " + ", ".join(f"Opt(UPCAST, {i}, 4)" for i in range(20))
  _print_progress(long)
  out = capfd.readouterr().out
  kept = out.removeprefix("\r").removesuffix(" ...")
  assert len(out) <= 161 and out.endswith(" ...") and long.startswith(kept) and long[len(kept)] == " " and len(kept) > 140

@pytest.mark.slow
def test_widget_beam_shows_each_round_while_it_runs():
  """The widget's BEAM button: a progress bar and a status line that change every round while the search runs (the
  widget state is sent as it changes), then the winner's status, the bar hidden again."""
  a, b = _rand(16, 16), _rand(16, 16, seed=5)
  pg = Playground(Tensor(a) @ Tensor(b), reference=a @ b, runs=1)
  w = pg.widget()
  seen: list = []
  w.status.observe(lambda ch: seen.append(("status", ch["new"])), names="value")
  w.bar.observe(lambda ch: seen.append(("bar", ch["new"])), names="value")
  assert w.bar.layout.visibility == "hidden"
  w.width.value = 1
  w.beam_b.click()
  rounds = pg.beam_info["rounds"]
  assert [v for k, v in seen if k == "bar" and v] == list(range(1, rounds + 1))  # one step per round
  texts = [v for k, v in seen if k == "status"]
  assert "timing the heuristic" in texts[0] and all(any(f"round {i}," in t for t in texts) for i in range(1, rounds + 1))
  assert ", ".join(pg.beam_info["winner"]) in texts[-1] and w.bar.layout.visibility == "hidden" and not w.beam_b.disabled
