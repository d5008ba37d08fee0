"""The number quiz (ask_number) as a learner meets it in JupyterLab in Chromium: the ipywidgets box is drawn (not the
text fallback), a number typed in it and locked in is recorded, and the check cell's reveal() says right or wrong with
the measurement, in green or red. Until then no part of the page holds the measured value (though the kernel already
has it) or the explanation: the cell that asks names the question's entry in the answer file (02_setup's own question),
and the explanation is read from there only at the reveal."""
from __future__ import annotations
import re
import time
import pytest
from lab_helpers import cell, open_notebook, run_cell, shot, write_notebook
from lazynb.notebook.quiz import answer_entry

pytestmark = pytest.mark.ui

MEASURED = 3 * 24 * 24 * 4  # bytes moved by a 24x24 float32 matmul: a, b and the result, each counted once
CELLS = ["from lazynb import Tensor, GlobalCounters\nfrom lazynb.notebook.quiz import ask_number",
         "q_n = ask_number('How many bytes does GlobalCounters count as moved by (a @ b).realize()?', rel_tol=0.25, unit='bytes',\n"
         "                 key='02_setup.q_bytes')",
         "a, b = Tensor.rand(24, 24).realize(), Tensor.rand(24, 24).realize()\nGlobalCounters.reset()\n(a @ b).realize()\n"
         "measured = GlobalCounters.global_mem",
         "q_n.reveal(measured)"]

def _page_text(page) -> str:
  """Everything the page holds: the DOM's markup and the value of every input (typed text is not in the markup), less the
  attributes that hold generated ids (a uuid may contain any digits: '...846912512...' once matched a measured 6912)."""
  values = page.locator("input, textarea").evaluate_all("els => els.map(e => e.value)")
  markup = re.sub(r'\s(?:id|aria-labelledby|aria-controls|aria-owns|data-lm-[\w-]+)="[^"]*"', "", page.content())
  return markup + "\n".join(values)

def _outputs_text(page) -> str:
  """What the cells' outputs hold (markup and typed values), without the cells' source code."""
  html = page.locator(".jp-OutputArea").evaluate_all("els => els.map(e => e.innerHTML)")
  values = page.locator(".jp-OutputArea input").evaluate_all("els => els.map(e => e.value)")
  return "\n".join(html + values)

def _feedback(widget, want: str, timeout: float = 30) -> str:
  deadline = time.time() + timeout
  while time.time() < deadline:
    txt = widget.locator(".widget-html").last.inner_text()
    if want in txt: return txt
    time.sleep(0.2)
  raise TimeoutError(f"the quiz's feedback never said {want!r}: {txt!r}")

def test_number_quiz_widget_lock_in_and_reveal(lab, page):
  explain = answer_entry("02_setup.q_bytes")["explain"]
  write_notebook(lab.root / "quiz.ipynb", CELLS)
  open_notebook(page, lab, "quiz.ipynb")
  for i in range(3): run_cell(page, i)
  w = cell(page, 1).locator(".widget-vbox").first
  w.wait_for()
  box = w.locator(".widget-text input")
  button = w.locator("button:has-text('Lock in')")
  assert box.count() == 1 and button.count() == 1, "the widget is drawn, not the text fallback"
  assert "How many bytes" in w.inner_text() and "within \u00b125%" in w.inner_text()
  assert str(MEASURED) not in _page_text(page), "measured in the kernel, but shown nowhere"
  assert explain not in _page_text(page), "the explanation is read at the reveal: neither in a cell nor in an output"

  box.fill("6000")
  button.click()
  assert "Answer saved: 6000 bytes" in _feedback(w, "Answer saved")
  assert str(MEASURED) not in _page_text(page), "locking in shows no answer"
  assert explain not in _page_text(page) and "Measured" not in _outputs_text(page)

  run_cell(page, 3)
  right = _feedback(w, "Measured")
  assert f"Measured: {MEASURED} bytes." in right and "\u2713 Right: you said 6000 bytes" in right and explain in right
  colour = w.locator(".widget-html").last.locator("span").last.evaluate("e => getComputedStyle(e).color")
  assert colour == "rgb(46, 125, 50)", colour
  shot(page, "ui-quiz-number-right", cell(page, 1))

  box.fill("100")  # once measured, a new answer is compared at once
  button.click()
  wrong = _feedback(w, "Not quite")
  assert f"Measured: {MEASURED} bytes." in wrong and "\u2717 Not quite: you said 100 bytes" in wrong
  colour = w.locator(".widget-html").last.locator("span").last.evaluate("e => getComputedStyle(e).color")
  assert colour == "rgb(198, 40, 40)", colour
  assert f"Measured: {MEASURED} bytes." in cell(page, 3).inner_text()  # reveal() also prints, for a saved notebook
  assert not page.lazynb_errors, page.lazynb_errors
