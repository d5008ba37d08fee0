"""One view in every front end: a notebook executed and converted with `jupyter nbconvert --to html` shows, in Chromium,
the same trace view as JupyterLab with the extension (the same tabs, summary and schedule, drawn by the same code from the
text/html output's embedded script), JupyterLab still picks its own renderer for the same outputs, and with JavaScript off
the converted page shows the view without JavaScript (summary, schedule, kernel sources) instead."""
from __future__ import annotations
import os, subprocess, sys
import nbformat
import pytest
from lab_helpers import ROOT, cell, open_notebook, shot, trace_views, write_notebook

pytestmark = pytest.mark.ui

CELLS = ["%load_ext lazynb",
         "%%tinygrad --no-controls\na = Tensor.rand(8, 8).realize()\nc = (a @ a).relu().sum(1).realize()",
         "%%tinygrad --no-controls --show kernels,timing\nd = (Tensor.rand(16) * 3 + 1).exp2().realize()"]

def test_nbconvert_html_shows_the_jupyterlab_view(lab, browser, tmp_path):
  src = write_notebook(tmp_path / "conv.ipynb", CELLS)
  env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
  r = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--output", "ran.ipynb", str(src)],
                     cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
  assert r.returncode == 0, r.stderr[-3000:]
  r = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(tmp_path / "ran.ipynb")],
                     cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
  assert r.returncode == 0, r.stderr[-3000:]
  html_file = tmp_path / "ran.html"
  nb = nbformat.read(str(tmp_path / "ran.ipynb"), as_version=4)
  outs = [o for c in nb.cells for o in c.get("outputs", []) if "text/html" in o.get("data", {})]
  assert len(outs) == 2 and all(o["data"]["text/html"].startswith('<div class="lazynb-view"') for o in outs)

  # the converted page: the embedded script draws the view in place of the static one
  ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
  pg = ctx.new_page()
  errors: list[str] = []
  pg.on("pageerror", lambda e: errors.append(str(e)))
  pg.goto(html_file.as_uri())
  pg.locator(".lazynb-view .lz-trace").nth(1).wait_for()   # (playwright's CSS locators reach into the view's shadow root)
  assert pg.locator(".lazynb-view .lz-trace").count() == 2
  converted = trace_views(pg, ".lazynb-view .lz-trace")
  assert pg.locator(".lazynb-static").count() == 0 and errors == []
  pg.locator(".lazynb-view .lz-graph-svg[data-state='drawn']").first.wait_for()
  shot(pg, "ui-nbconvert-view", pg.locator(".lazynb-view").first)
  # the theme fallback gives the JupyterLab light colours: same tab highlight colour as in JupyterLab below
  on_colour = pg.locator(".lazynb-view .lz-tab.lz-on").first.evaluate("el => getComputedStyle(el).borderBottomColor")
  # laid out as in JupyterLab: the page's `.jp-RenderedHTMLCommon svg {height: auto}` does not reach the graph
  svg_h, pane_h = pg.locator(".lazynb-view .lz-graph-svg").first.evaluate(
    "el => [el.getBoundingClientRect().height, el.parentElement.getBoundingClientRect().height]")
  assert abs(svg_h - pane_h) < 1, (svg_h, pane_h)
  nojs_ctx = browser.new_context(java_script_enabled=False)
  nojs = nojs_ctx.new_page()
  nojs.goto(html_file.as_uri())
  assert nojs.locator(".lz-trace").count() == 0 and nojs.locator(".lazynb-static").count() == 2
  assert "schedule item" in nojs.locator(".lazynb-static").first.inner_text()  # the view without JavaScript: summary, schedule, sources
  assert nojs.locator(".lazynb-static details pre").count() >= 2
  nojs_ctx.close()
  ctx.close()

  # the same saved outputs in JupyterLab: the extension's renderer, not the text/html
  (lab.root / "ran.ipynb").write_text((tmp_path / "ran.ipynb").read_text())
  pg = browser.new_page(viewport={"width": 1600, "height": 1000})
  open_notebook(pg, lab, "ran.ipynb", kernel=False)
  pg.wait_for_function("() => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedLazynbTrace').length === 2")
  assert pg.locator(".jp-NotebookPanel .lazynb-view").count() == 0, "JupyterLab chose the mime renderer (rank 0) over text/html"
  in_lab = trace_views(pg, ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedLazynbTrace")
  assert converted == in_lab
  assert [v["tabs"] for v in converted] == [["Kernels", "Tensor graph", "Rewrites", "Timing"], ["Kernels", "Timing"]]
  assert on_colour == cell(pg, 1).locator(".lz-tab.lz-on").first.evaluate("el => getComputedStyle(el).borderBottomColor")
  pg.close()
