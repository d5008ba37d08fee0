"""A %%tinygrad cell run under lazynb.pipeline.use, in JupyterLab in Chromium at 1500 px: the summary names the learner's
stages, the Source pane offers yours / lazynb's with the first differing line marked on both sides, and (with a
replaced lower) the UOps list and the lowered graph mark where the learner's first differ. Screenshots go to
tests/artifacts/ui-stages-*.png."""
from __future__ import annotations
import pytest
from lab_helpers import cell, open_notebook, run_cell, save_and_read, shot, trace_docs, write_notebook

pytestmark = pytest.mark.ui

RENDER_CELL = '''%%tinygrad
from lazynb import Tensor, pipeline
def my_render(name, uops, renderer):
  """lazynb's renderer, with the constant 2 written as 1+1: the same values, one line different."""
  return pipeline.reference("render")(name, uops, renderer).replace("*2.0f)", "*(1.0f+1.0f))", 1)
with pipeline.use("render", my_render):
  y = (Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]) * 2 + 1).sum(1).realize()'''

LOWER_CELL = '''%%tinygrad
from lazynb import Tensor, pipeline
from lazynb.uop.ops import Ops
def my_lower(k):
  """lazynb's lower with the constant 2.5 made 3.5: a wrong kernel, to be found in the views."""
  out = pipeline.reference("lower")(k)
  c = next(u for u in out.toposort() if u.op is Ops.CONST and u.arg == 2.5)
  return out.substitute({c: c.replace(arg=3.5)})
with pipeline.use("lower", my_lower):
  z = (Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]) * 2.5 + 1).sum(1).realize()'''

def test_a_cell_under_use_names_the_stage_and_marks_the_first_difference(lab, page):
  page.set_viewport_size({"width": 1500, "height": 1000})
  write_notebook(lab.root / "stages.ipynb", ["%load_ext lazynb", RENDER_CELL, LOWER_CELL])
  open_notebook(page, lab, "stages.ipynb")
  for i in range(3): run_cell(page, i)
  docs = trace_docs(save_and_read(page, lab, "stages.ipynb", 2))
  assert [d["replaced_stages"] for d in docs] == [["render"], ["lower"]]

  # the render cell: the summary names the stage; the Source pane marks the first differing line, yours and lazynb's
  tr = cell(page, 1).locator(".lz-trace")
  tr.wait_for()
  page.wait_for_selector(".lz-trace[data-render-ms]")
  assert "your stages: render" in tr.locator(".lz-summary").inner_text()
  k = next(k for k in docs[0]["kernels"] if k["reference"] and k["reference"]["differences"])
  line = k["reference"]["differences"][0]["line"]
  assert tr.locator(".lz-kernel-head").inner_text().count("your stages: render") == 1
  assert tr.locator(".lz-sched-row .lz-yours-badge").count() >= 1
  src = tr.locator(".lz-source")
  marked = src.locator(".lz-line.lz-diff")
  assert marked.count() == 1 and marked.get_attribute("data-line") == str(line - 1)
  assert "(1.0f+1.0f)" in marked.inner_text() and marked.is_visible()
  assert tr.locator(".lz-diff-note").first.inner_text() == f"\u2260 line {line}"
  assert src.get_attribute("data-side") == "yours"
  shot(page, "ui-stages-render-yours", cell(page, 1))
  tr.locator(".lz-seg[data-side='lazynb']").click()
  assert src.get_attribute("data-side") == "lazynb"
  text = marked.inner_text()
  assert "*2.0f)" in text and "1.0f+1.0f" not in text
  assert src.locator(".lz-line").count() == len(k["reference"]["source"].split("\n"))
  shot(page, "ui-stages-render-lazynb", cell(page, 1))

  # the lower cell: UOps and the lowered graph mark where yours first differs; lazynb's lowered graph is one click away
  tr2 = cell(page, 2).locator(".lz-trace")
  tr2.wait_for()
  assert "your stages: lower" in tr2.locator(".lz-summary").inner_text()
  k2 = docs[1]["kernels"][0]
  diffs = {d["stage"]: d for d in k2["reference"]["differences"]}
  assert {"lower", "simplify", "linearize", "render"} <= set(diffs)
  assert tr2.locator(".lz-uop.lz-diff").get_attribute("data-uop") == str(diffs["linearize"]["index"])
  assert tr2.locator(".lz-line.lz-diff").get_attribute("data-line") == str(diffs["render"]["line"] - 1)
  svg = tr2.locator(".lz-graph-svg")
  tr2.locator(".lz-seg[data-graph='lowered']").click()
  page.wait_for_function("el => el.dataset.state === 'drawn'", arg=svg.element_handle())
  node = tr2.locator(".lz-node.lz-diff")
  assert node.count() == 1, "the differing CONST is drawn, though constants are collapsed"
  assert "\u2260 first difference" in tr2.locator(".lz-graph-info").inner_text()
  shot(page, "ui-stages-lower-yours", cell(page, 2))
  tr2.locator(".lz-seg[data-graph='reference']").click()
  page.wait_for_function("el => el.dataset.state === 'drawn'", arg=svg.element_handle())
  assert tr2.locator(".lz-node.lz-diff").count() == 1
  shot(page, "ui-stages-lower-lazynb", cell(page, 2))

  # the Rewrites view labels the pass that ran inside the learner's lower
  tr2.locator(".lz-tab[data-tab='rewrites']").click()
  labels = tr2.locator(".lz-rewrites select option").all_inner_texts()
  assert any("lower: views to index math" in t and t.endswith("in your lower") for t in labels), labels
  assert sum(t.endswith("in your lower") for t in labels) == sum(r["replaced_stage"] == "lower" for r in docs[1]["rewrites"])
  assert not page.lazynb_errors, page.lazynb_errors
