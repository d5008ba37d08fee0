"""A multiple-choice question for the course notebooks: predict first, then run the next cell and see.

    from lazynb.notebook.quiz import quiz
    q = quiz("How many kernels does (a + b).relu().sum() run?", ["0", "1", "3"], answer="1",
             explain="The add, the relu and the sum fuse into one kernel.")
    ...
    assert q.correct == str(measured_kernels)   # the notebook checks its own answer key

In JupyterLab (or any frontend with ipywidgets) the question shows as radio buttons with a Check button and
feedback. Where widgets cannot be drawn, the same output degrades to text: the display carries text/plain and
text/html versions next to the widget, so nbclient, nbconvert, GitHub and a frontend without the widget
manager show the question, the options and (folded away in HTML) the answer. Outside IPython, or without
ipywidgets, quiz() prints the text. Set LAZYNB_QUIZ=text to always print.
"""
from __future__ import annotations
import html, os
from typing import Sequence

LETTERS = "abcdefghijklmnopqrstuvwxyz"
REVEAL_AFTER = 2  # wrong tries before the widget shows the answer

class Quiz:
  def __init__(self, question: str, options: Sequence, answer, explain: str = ""):
    if isinstance(options, (str, bytes)) or not isinstance(options, Sequence):
      raise TypeError(f"options must be a list of choices, got {type(options).__name__}")
    self.options = [str(o) for o in options]
    if len(self.options) < 2: raise ValueError(f"a quiz needs at least 2 options, got {len(self.options)}")
    if len(set(self.options)) != len(self.options): raise ValueError(f"options must be different from each other: {self.options}")
    if len(self.options) > len(LETTERS): raise ValueError(f"at most {len(LETTERS)} options")
    self.question, self.explain = str(question), str(explain or "")
    self.answer = self._index(answer)
    self.tries = 0
    self._widget = None
    self._radio = self._button = self._feedback = None

  # ---- the answer key, usable by the notebook's own asserts
  def _index(self, choice) -> int:
    """An option's index, from its index (int) or its text (anything else, compared as str)."""
    if isinstance(choice, bool): raise TypeError("a choice is an option index or the option's text, not a bool")
    if isinstance(choice, int):
      if not 0 <= choice < len(self.options): raise ValueError(f"option index {choice} is out of range 0..{len(self.options) - 1}")
      return choice
    s = str(choice)
    if s not in self.options: raise ValueError(f"{s!r} is not one of the options {self.options}")
    return self.options.index(s)
  @property
  def correct(self) -> str:
    """The text of the right option."""
    return self.options[self.answer]
  def is_correct(self, choice) -> bool: return self._index(choice) == self.answer

  def feedback(self, choice) -> tuple[bool, str]:
    """(right?, message) for a choice (index or text), as the Check button reports it. Counts the try."""
    if choice is None: return False, "Pick an answer first."
    ok = self.is_correct(choice)
    if ok: return True, "Correct. " + self.explain if self.explain else "Correct."
    self.tries += 1
    if self.tries >= REVEAL_AFTER:
      return False, f"Not quite. The answer is ({LETTERS[self.answer]}) {self.correct}. " + self.explain
    return False, "Not quite. Try again, or run the next cell and look at what happens."
  def check(self, choice) -> bool:
    """Answer programmatically (what a click on Check does with the selected option); returns whether it was right."""
    ok, msg = self.feedback(choice)
    if self._feedback is not None: self._feedback.value = _feedback_html(ok, msg, choice is None)
    return ok

  # ---- text forms
  def text(self, reveal: bool = True) -> str:
    lines = [f"Quiz: {self.question}"] + [f"  ({LETTERS[i]}) {o}" for i, o in enumerate(self.options)]
    if reveal:
      lines.append(f"  Answer: ({LETTERS[self.answer]}) {self.correct}" + (f" -- {self.explain}" if self.explain else ""))
    return "\n".join(lines)
  def html(self) -> str:
    """Static HTML: the question and options, with the answer folded in a <details> (no scripts)."""
    e = html.escape
    opts = "".join(f"<li><b>({LETTERS[i]})</b> {e(o)}</li>" for i, o in enumerate(self.options))
    expl = f" {e(self.explain)}" if self.explain else ""
    return (f'<div class="lazynb-quiz" style="border-left:4px solid #7e57c2;padding:4px 10px;margin:4px 0">'
            f"<p><b>Quiz:</b> {e(self.question)}</p><ul style=\"list-style:none;padding-left:8px\">{opts}</ul>"
            f"<details><summary>Show the answer</summary><p><b>({LETTERS[self.answer]}) {e(self.correct)}</b>.{expl}</p></details></div>")
  def __repr__(self): return self.text(reveal=False)

  # ---- the widget
  def widget(self):
    """The ipywidgets form: question, radio buttons, a Check button and a feedback line (built once)."""
    if self._widget is not None: return self._widget
    import ipywidgets as w
    q = w.HTML(f"<b>Quiz:</b> {html.escape(self.question)}")
    self._radio = w.RadioButtons(options=[(f"({LETTERS[i]}) {o}", i) for i, o in enumerate(self.options)], value=None,
                                 layout=w.Layout(width="max-content"))
    self._button = w.Button(description="Check", button_style="primary", tooltip="check your answer")
    self._feedback = w.HTML("")
    self._button.on_click(lambda _b: self.check(self._radio.value))
    self._widget = w.VBox([q, self._radio, w.HBox([self._button, self._feedback])],
                          layout=w.Layout(border_left="4px solid #7e57c2", padding="2px 8px", margin="4px 0"))
    return self._widget
  def select(self, choice):
    """Select an option in the widget, as a click on it would."""
    self.widget()
    self._radio.value = None if choice is None else self._index(choice)
  def click(self): self.widget(); self._button.click()

  def _repr_mimebundle_(self, include=None, exclude=None):
    bundle = {"text/plain": self.text(), "text/html": self.html()}
    if widgets_usable():
      try: bundle.update(self.widget()._repr_mimebundle_())
      except Exception: pass  # a broken widget stack: the text forms still show
      bundle["text/plain"] = self.text()  # the widget's own plain repr says nothing useful
    return bundle

  def show(self) -> Quiz:
    if widgets_usable():
      from IPython.display import display
      display(self)
    else: print(self.text())
    return self

def _feedback_html(ok: bool, msg: str, neutral: bool = False) -> str:
  color = "#777" if neutral else ("#2e7d32" if ok else "#c62828")
  mark = "" if neutral else ("&#10004; " if ok else "&#10008; ")
  return f'<span style="color:{color};font-weight:600">{mark}</span><span style="color:{color}">{html.escape(msg)}</span>'

def widgets_usable() -> bool:
  """True inside an IPython kernel with ipywidgets importable (a frontend may still be absent: the display then
  falls back to its text forms). LAZYNB_QUIZ=text forces plain printed text."""
  if os.environ.get("LAZYNB_QUIZ", "").lower() == "text": return False
  try:
    from IPython import get_ipython
    ip = get_ipython()
  except ImportError: return False
  if ip is None or getattr(ip, "kernel", None) is None: return False
  try: import ipywidgets  # noqa: F401
  except ImportError: return False
  return True

def quiz(question: str, options: Sequence, answer, explain: str = "", show: bool = True) -> Quiz:
  """Ask a multiple-choice question. `answer` is the right option's index or its text; `explain` is shown with the
  feedback. Returns the Quiz, so the notebook can assert its answer key against a measurement."""
  q = Quiz(question, options, answer, explain)
  if show: q.show()
  return q
