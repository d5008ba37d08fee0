"""The kernel-opt playground's view in a real JupyterLab in Chromium: a saved playground output (with BEAM rounds)
renders with the extension's renderer, not the HTML fallback, and shows the opts, every axis with its kind's colour
class, the index math, the source diff, the timing and the BEAM rounds with the fastest candidate marked; a hostile
payload stays text."""
from __future__ import annotations
import numpy as np
import pytest
from lab_helpers import cell, open_notebook, shot, write_notebook
from lazynb import Tensor
from lazynb.codegen.kernel import Opt, OptOps
from lazynb.notebook.playground import Playground, MIME

pytestmark = pytest.mark.ui
NO_KERNEL = {"name": "lazynb-no-such-kernel", "display_name": "gone", "language": "python"}

def _output(doc: dict, html: str) -> dict:
  return {"output_type": "display_data", "metadata": {}, "data": {MIME: doc, "text/html": html, "text/plain": "playground"}}

def test_playground_renders_in_lab(lab, page):
  a, b = np.random.default_rng(0).standard_normal((2, 16, 16), dtype=np.float32)
  pg = Playground(Tensor(a) @ Tensor(b), reference=a @ b, runs=3).beam(1)
  pg.reset("none").apply(Opt(OptOps.UPCAST, 1, 4))
  bundle = pg._repr_mimebundle_()
  doc = bundle[MIME]
  evil = dict(doc, notes=['<img src=x onerror="window.__lz_pwned=1">'], state=dict(doc["state"], correct=False, max_error=1.0))
  write_notebook(lab.root / "pg.ipynb", ["pg", "pg2"], outputs={0: [_output(doc, bundle["text/html"])], 1: [_output(evil, "<b>fallback</b>")]},
                 kernelspec=NO_KERNEL)
  open_notebook(page, lab, "pg.ipynb", kernel=False)
  page.wait_for_function("() => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedLazynbPlayground').length === 2")
  v = cell(page, 0).locator(".jp-RenderedLazynbPlayground")
  assert cell(page, 0).locator(".lazynb-playground-text").count() == 0, "the text fallback is not shown"
  assert "Opt(UPCAST, 1, 4)" in v.locator(".lz-pg-opts").inner_text()
  s = doc["state"]
  rows = v.locator(".lz-pg-axes tbody tr")
  assert rows.count() == len(s["axis_names"])
  for i, (name, typ) in enumerate(zip(s["axis_names"], s["axis_types"])):
    first = rows.nth(i).locator("td").first
    assert first.inner_text() == name and f"lz-axis-{typ.lower()}" in first.get_attribute("class")
  color = {typ: rows.nth(i).locator("td").first.evaluate("e => getComputedStyle(e).color") for i, typ in enumerate(s["axis_types"])}
  assert color["GLOBAL"] != color["REDUCE"] != color["UPCAST"], "each kind has its own colour"
  idx = v.locator(".lz-pg-index").inner_text()
  assert all(x["index"] in idx for x in s["views"])
  assert f"median of {s['runs']} runs" in v.locator(".lz-pg-time").inner_text() and "GFLOPS" in v.locator(".lz-pg-time").inner_text()
  assert v.locator(".lz-pg-ok").count() == 1
  assert v.locator(".lz-pg-diff .lz-pg-add").count() == sum(1 for ln in doc["diff"] if ln.startswith("+") and not ln.startswith("+++"))
  assert v.locator(".lz-pg-round").count() == len(doc["beam"]["rounds_detail"]) >= 1
  v.locator(".lz-pg-round summary").first.click()
  best = v.locator(".lz-pg-round").first.locator("tr.lz-pg-best")
  assert best.count() == 1 and best.locator("code").inner_text() == ", ".join(doc["beam"]["rounds_detail"][0]["best"])
  shot(page, "ui-playground", cell(page, 0))
  bad = cell(page, 1).locator(".jp-RenderedLazynbPlayground")
  assert "WRONG RESULT" in bad.locator(".lz-pg-wrong").inner_text()
  assert "<img" in bad.locator(".lz-pg-note").inner_text() and bad.locator("img").count() == 0
  assert page.evaluate("() => window.__lz_pwned") is None
  assert not page.lazynb_errors, page.lazynb_errors
