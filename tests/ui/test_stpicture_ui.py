"""The ShapeTracker picture in a real JupyterLab, in Chromium: show_st's output renders with the extension (not its
HTML text fallback); hovering a logical cell lights the memory cell that cell reads (the one numpy reads for the same
movement ops) and tells its arithmetic, through both views of a reshape after a permute; a %%tinygrad trace's
buffer access opens its picture in the ShapeTracker pane. Outputs are saved in the notebook, so no kernel runs."""
from __future__ import annotations
import json
import numpy as np
import pytest
from lab_helpers import cell, open_notebook, shot, trace_output, write_notebook

pytestmark = pytest.mark.ui

def _show_st_output(x) -> dict:
  from lazynb.notebook.stpicture import show_st
  b = show_st(x)._repr_mimebundle_()
  return {"output_type": "display_data", "metadata": {}, "data": json.loads(json.dumps(b))}

def test_picture_hover_lights_the_memory_cell_numpy_reads(lab, page):
  from lazynb import Tensor
  from lazynb.trace import capture
  t = Tensor.arange(24).reshape(4, 6).permute(1, 0).reshape(3, 8)
  ref = np.arange(24).reshape(4, 6).T.reshape(3, 8)
  padded = Tensor.arange(12).reshape(3, 4).pad(((1, 0), (0, 2)))
  with capture() as tr: (Tensor.arange(12).reshape(3, 4).realize().T.pad(((1, 0), (0, 0))) + 1).realize()
  doc = json.loads(json.dumps(tr.to_json()))
  write_notebook(lab.root / "stpic.ipynb", ["# show_st(t)", "# show_st(padded)", "# %%tinygrad"],
                 outputs={0: [_show_st_output(t)], 1: [_show_st_output(padded)], 2: [trace_output(doc)]},
                 kernelspec={"name": "lazynb-no-such-kernel", "display_name": "gone", "language": "python"})
  open_notebook(page, lab, "stpic.ipynb", kernel=False)
  page.wait_for_function("() => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .lz-trace[data-render-ms]').length === 3")
  pic = cell(page, 0).locator(".lz-stp")
  assert pic.count() == 1 and cell(page, 0).locator(".lzs").count() == 0, "the extension drew it, not the HTML fallback"
  assert pic.locator(".lz-stp-c").count() == 24 and pic.locator(".lz-stp-view").count() == 2
  for idx in [(0, 0), (1, 3), (2, 5), (2, 7)]:
    c = pic.locator(f".lz-stp-c[data-idx='{idx[0]},{idx[1]}']")
    assert c.inner_text() == str(ref[idx])
    c.hover()
    on = pic.locator(".lz-stp-m.lz-stp-on")
    assert on.count() == 1 and on.get_attribute("data-mem") == str(ref[idx]), idx
    readout = pic.locator(".lz-stp-readout").inner_text()
    assert "unflatten into view 0's shape (6, 4)" in readout and f"reads memory[{ref[idx]}]" in readout
  shot(page, "ui-stpicture-two-views", cell(page, 0))
  # memory -> cells: memory[5] is read by exactly the cells where numpy holds 5
  pic.locator(".lz-stp-m[data-mem='5']").hover()
  lit = sorted(pic.locator(".lz-stp-c.lz-stp-on").evaluate_all("els => els.map(e => e.dataset.idx)"))
  assert lit == [",".join(map(str, i)) for i in zip(*np.nonzero(ref == 5))]
  # padding: a masked cell lights no memory and says why
  pad = cell(page, 1).locator(".lz-stp")
  pad.locator(".lz-stp-c[data-idx='0,1']").hover()
  assert pad.locator(".lz-stp-m.lz-stp-on").count() == 0 and "outside the mask" in pad.locator(".lz-stp-readout").inner_text()
  assert pad.locator(".lz-stp-masked").count() == 4 * 6 - 12
  # the trace: the load's picture in the ShapeTracker pane
  trv = cell(page, 2).locator(".lz-trace")
  kid = next(v["kernel"] for v in doc["views"] if v["access"] == "load")
  trv.locator(".lz-sched-row").nth(next(s["index"] for s in doc["schedule"] if s["kernel"] == kid)).click()
  card = trv.locator(".lz-access-load")
  card.locator(".lz-stp-details summary").click()
  tp = card.locator(".lz-stp")
  load = next(v for v in doc["views"] if v["access"] == "load")
  first = next(c for r in load["picture"]["cells"] for c in r if c["mem"] is not None)
  tp.locator(f".lz-stp-c[data-idx='{','.join(map(str, first['idx']))}']").hover()
  assert tp.locator(".lz-stp-m.lz-stp-on").get_attribute("data-mem") == str(first["mem"])
  shot(page, "ui-stpicture-trace", cell(page, 2))
  assert not page.lazynb_errors, page.lazynb_errors

def test_output_html_draws_with_the_view_script_and_shows_text_without_it(lab, browser, monkeypatch):
  """The text/html alone, as nbconvert HTML, VS Code or Colab show it: the view's script (which a session's first output
  carries) draws the same picture as the extension, hover and all; with JavaScript off, the picture as text."""
  from lazynb import Tensor
  from lazynb.notebook import html as nbhtml
  from lazynb.notebook.stpicture import show_st
  from lab_helpers import ARTIFACTS
  t = Tensor.arange(12).reshape(3, 4).pad(((1, 0), (0, 0))).permute(1, 0).reshape(2, 8)
  ref = np.pad(np.arange(12).reshape(3, 4), ((1, 0), (0, 0)), constant_values=-1).T.reshape(2, 8)
  monkeypatch.setattr(nbhtml, "_script_sent", False)  # this output is the session's first: it carries the script
  html = show_st(t)._repr_mimebundle_()["text/html"]
  page_html = f"<!doctype html><body>{html}</body>"
  pg = browser.new_page()
  errors: list[str] = []
  pg.on("pageerror", lambda e: errors.append(str(e)))
  pg.set_content(page_html)
  pg.wait_for_selector(".lz-stp .lz-stp-c")
  pic = pg.locator(".lz-stp")
  assert pic.count() == 1 and pg.locator(".lazynb-static").count() == 0
  for idx in [(0, 0), (0, 1), (1, 6)]:
    c = pic.locator(f".lz-stp-c[data-idx='{idx[0]},{idx[1]}']")
    assert c.inner_text() == ("\u00b7" if ref[idx] == -1 else str(ref[idx]))  # a padded cell reads nothing
    if ref[idx] == -1: continue
    c.hover()
    on = pic.locator(".lz-stp-m.lz-stp-on")
    assert on.count() == 1 and on.get_attribute("data-mem") == str(ref[idx]), idx
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  pg.screenshot(path=str(ARTIFACTS / "standalone-stpicture.png"), full_page=True)
  assert errors == []
  pg.close()
  ctx = browser.new_context(java_script_enabled=False)
  nojs = ctx.new_page()
  nojs.set_content(page_html)
  assert nojs.locator(".lz-stp").count() == 0
  text = nojs.locator(".lazynb-static pre").inner_text()
  assert [ln.split() for ln in text.splitlines() if ln.split() and all(w == "." or w.isdigit() for w in ln.split())][:2] == \
         [["." if v == -1 else str(v) for v in row] for row in ref]
  ctx.close()
