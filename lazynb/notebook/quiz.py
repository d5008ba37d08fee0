"""A multiple-choice question for the course notebooks: predict first, then run the code and compare.

    from lazynb.notebook.quiz import quiz
    q = quiz("How many kernels does (x - x.mean()).realize() run?", ["1", "2", "3"], key="05_op_types.q_center")
    # the learner picks an option in the widget, or types q.predict("2")
    ...                                # run the code, measure
    q.reveal(GlobalCounters.kernel_count)   # the measurement, compared with the learner's own prediction

A question whose answer is a number takes the learner's own number instead of options:

    from lazynb.notebook.quiz import ask_number
    q = ask_number("How many kernels does (x - x.mean()).realize() run?", key="05_op_types.q_center")
    # the learner types q.answer(2), or a number in the widget's box
    ...
    q.reveal(GlobalCounters.kernel_count)   # right or wrong (exactly, or within tol= / rel_tol=), with the measurement

Most questions are about something the next cells measure, so the quiz holds no answer key at all: the notebook
passes the measured value to reveal(), which finds the option that says it and tells the learner whether their
prediction matched. A question with nothing to measure ("when does lazynb execute?") has an answer key; the key
stays hidden (no text or HTML form shows it) until the learner presses "Show answer" or a cell calls reveal().

Where the answer key and the explanation live. The course's questions give `key="NOTEBOOK.NAME"` and nothing else:
the explanation (and the key of a question with nothing to measure) is the entry NAME of answers/NOTEBOOK.json,
next to this module, read only when the quiz checks or reveals, so the cell that asks holds only the question and
its options (tests/test_quiz_answers.py scans every notebook for that). A quiz of your own may pass answer= and
explain= directly instead.

In JupyterLab (or any frontend with ipywidgets) the question shows as radio buttons with a button and feedback.
Where widgets cannot be drawn the display degrades to text (text/plain and text/html next to the widget) that
names the question, the options and how to predict by typing. Set LAZYNB_QUIZ=text to always print.
"""
from __future__ import annotations
import html, json, os, pathlib, re, sys
from typing import Any, Sequence
from lazynb.helpers import unwrap

LETTERS = "abcdefghijklmnopqrstuvwxyz"
ANSWERS = pathlib.Path(__file__).parent / "answers"  # one JSON file per notebook: {NAME: {"explain": ..., "answer": ...}}

def answer_entry(key: str) -> dict:
  """The entry of a course question, key "NOTEBOOK.NAME": {"explain": text} plus "answer" (an option's text) for a
  question with nothing to measure. Read from answers/NOTEBOOK.json each time it is needed, never kept."""
  if not isinstance(key, str) or not re.fullmatch(r"[\w-]+\.\w+", key):
    raise ValueError(f"a quiz key is 'NOTEBOOK.NAME' (e.g. '05_op_types.q_center'), got {key!r}")
  notebook, name = key.split(".")
  path = ANSWERS / f"{notebook}.json"
  if not path.is_file(): raise ValueError(f"quiz {key!r}: no answer file {path.name} in {ANSWERS}")
  try: entries = json.loads(path.read_text(encoding="utf-8"))
  except json.JSONDecodeError as e: raise ValueError(f"quiz {key!r}: {path.name} is not valid JSON: {e}") from None
  if not isinstance(entries, dict): raise ValueError(f"quiz {key!r}: {path.name} must hold an object keyed by question name")
  if name not in entries: raise ValueError(f"quiz {key!r}: {path.name} has no entry {name!r} (it has {sorted(entries)})")
  entry = entries[name]
  if not isinstance(entry, dict) or set(entry) - {"explain", "answer"} or not isinstance(entry.get("explain"), str) \
     or not entry["explain"].strip() or not isinstance(entry.get("answer", ""), str):
    raise ValueError(f"quiz {key!r}: the entry in {path.name} must be {{'explain': text}} plus an optional 'answer' (an option's text), "
                     f"got {entry!r}")
  return entry

def _check_key_call(key: str, answer, explain) -> dict:
  """A question asked by key holds neither its answer nor its explanation; returns its entry (checked it exists)."""
  if answer is not None or explain:
    raise ValueError(f"quiz {key!r}: with key= the answer and the explanation come from the answer file, not from the call")
  return answer_entry(key)

class _Shown:
  """How a question displays: its widget where ipywidgets work, else its HTML and text (which never hold the answer)."""
  def _repr_mimebundle_(self, include=None, exclude=None):
    bundle = {"text/plain": self.text(), "text/html": self.html()}
    if widgets_usable():
      try: bundle.update(self.widget()._repr_mimebundle_())
      except Exception: pass  # a broken widget stack: the text forms still show
      bundle["text/plain"] = self.text()  # the widget's own plain repr says nothing useful
    return bundle

  def show(self):
    if widgets_usable():
      from IPython.display import display
      display(self)
    else: print(self.text())
    return self

class Quiz(_Shown):
  def __init__(self, question: str, options: Sequence, answer=None, explain: str = "", name: str = "", key: str = ""):
    if isinstance(options, (str, bytes)) or not isinstance(options, Sequence):
      raise TypeError(f"options must be a list of choices, got {type(options).__name__}")
    self.options = [str(o) for o in options]
    if len(self.options) < 2: raise ValueError(f"a quiz needs at least 2 options, got {len(self.options)}")
    if len(set(self.options)) != len(self.options): raise ValueError(f"options must be different from each other: {self.options}")
    if len(self.options) > len(LETTERS): raise ValueError(f"at most {len(LETTERS)} options")
    self.question, self.name, self.key = str(question), str(name), str(key or "")
    if self.key:
      entry = _check_key_call(self.key, answer, explain)
      if "answer" in entry: self._index(entry["answer"])  # a key that is no option fails here, not at the reveal
      self._has_key, self._inline = "answer" in entry, None
    else:
      self._inline = (None if answer is None else self._index(answer), str(explain or ""))
      self._has_key = answer is not None
    self.prediction: int | None = None
    self.revealed: int | None = None
    self.tries = 0
    self._widget = None
    self._radio = self._button = self._feedback = self._show = None

  def _index(self, choice) -> int:
    """An option's index, from its index (int) or its text (anything else, compared as str)."""
    if isinstance(choice, bool): raise TypeError("a choice is an option index or the option's text, not a bool")
    if isinstance(choice, int):
      if not 0 <= choice < len(self.options): raise ValueError(f"option index {choice} is out of range 0..{len(self.options) - 1}")
      return choice
    s = str(choice)
    if s not in self.options: raise ValueError(f"{s!r} is not one of the options {self.options}")
    return self.options.index(s)
  def _label(self, i: int) -> str: return f"({LETTERS[i]}) {self.options[i]}"
  @property
  def measured_only(self) -> bool: return not self._has_key
  def _secret(self) -> tuple[int | None, str]:
    """(the answer key's option index or None, the explanation), read only when checking or revealing."""
    if self._inline is not None: return self._inline
    entry = answer_entry(self.key)
    return (self._index(entry["answer"]) if "answer" in entry else None), entry["explain"]

  def match(self, measured) -> int:
    """The option that states a measured value: the option equal to str(measured), else the only option that starts
    with it followed by a non-word character ("2: its output and c2" for 2). ValueError if no option says it."""
    s = str(measured)
    if s in self.options: return self.options.index(s)
    hits = [i for i, o in enumerate(self.options) if re.match(re.escape(s) + r"(\W|$)", o)]
    if len(hits) != 1: raise ValueError(f"the measured value {s!r} is not one of the options {self.options}")
    return hits[0]

  # ---- the learner's side
  def predict(self, choice) -> Quiz:
    """Record the learner's prediction (what the widget's button does with the selected option)."""
    self.prediction = self._index(choice)
    if self._radio is not None and self._radio.value != self.prediction: self._radio.value = self.prediction
    return self
  def feedback(self, choice) -> tuple[bool | None, str]:
    """(right?, message) for a pick, as the widget's button reports it. A measured question only records the
    prediction (right? is None: the run will tell); a question with a key says right or wrong, never which is right."""
    if choice is None: return None, "Pick an answer first."
    self.predict(choice)
    if self.measured_only:
      return None, f"Prediction saved: {self._label(unwrap(self.prediction))}. Now run the next cells; the measurement is compared with it."
    key, explain = self._secret()
    if self.prediction == key: return True, "Correct. " + explain if explain else "Correct."
    self.tries += 1
    return False, "Not quite. Try again, or run the next cells and look at what happens (or press Show answer)."
  def check(self, choice) -> bool | None:
    ok, msg = self.feedback(choice)
    if self._feedback is not None: self._feedback.value = _feedback_html(ok, msg)
    return ok

  def reveal(self, measured=None, quiet: bool = False) -> None:
    """After the run: the measured value's option (or, for a question without a measurement, the key), compared with
    the learner's prediction and printed with the explanation; without a prediction yet it only asks for one (the
    answer stays hidden). Sets .revealed to the right option's index (returns
    nothing, so a check cell that ends with it shows no Out[] line)."""
    key, explain = self._secret()
    if measured is not None: right = self.match(measured)
    elif key is not None: right = key
    else: raise ValueError("this question has no answer key: pass the measured value to reveal()")
    if self.prediction is None:  # the answer waits for the learner's own (as NumberQuiz's does)
      msg = (f"Answer first: pick an option in the widget or type {self.name or '<quiz>'}.predict(<option>), then run this "
             "cell again to see the answer.")
      if self._feedback is not None: self._feedback.value = _feedback_html(None, msg)
      if not quiet: print(msg)
      self.revealed = None
      return
    head = f"Measured: {measured}, that is {self._label(right)}." if measured is not None else f"Answer: {self._label(right)}."
    if self.prediction == right: verdict = "\u2713 Your prediction was right."
    else: verdict = f"\u2717 You predicted {self._label(self.prediction)}."
    msg = " ".join(x for x in (head, verdict, explain) if x)
    if self._feedback is not None: self._feedback.value = _feedback_html(None if self.prediction is None else self.prediction == right, msg)
    if not quiet: print(msg)
    self.revealed = right

  # ---- forms that never contain the answer
  def how_to(self) -> str:
    who = self.name or "this quiz's variable"
    return f"Predict before you run on: pick an option, or type {who}.predict(...) with the option's text or its index (0 = a)."
  def text(self) -> str:
    lines = [f"Quiz: {self.question}"] + [f"  {self._label(i)}" for i in range(len(self.options))]
    return "\n".join(lines + ["  " + self.how_to()])
  def html(self) -> str:
    """Static HTML: the question and options (no scripts, no answer)."""
    e = html.escape
    opts = "".join(f"<li><b>({LETTERS[i]})</b> {e(o)}</li>" for i, o in enumerate(self.options))
    return (f'<div class="lazynb-quiz" style="border-left:4px solid #7e57c2;padding:4px 10px;margin:4px 0">'
            f"<p><b>Quiz:</b> {e(self.question)}</p><ul style=\"list-style:none;padding-left:8px\">{opts}</ul>"
            f"<p><i>{e(self.how_to())}</i></p></div>")
  def __repr__(self): return self.text()

  # ---- the widget
  def widget(self):
    """The ipywidgets form: question, radio buttons, a Check (or Lock in) button, Show answer when there is a key."""
    if self._widget is not None: return self._widget
    import ipywidgets as w
    q = w.HTML(f"<b>Quiz:</b> {html.escape(self.question)}")
    self._radio = w.RadioButtons(options=[(self._label(i), i) for i in range(len(self.options))], value=self.prediction,
                                 layout=w.Layout(width="max-content"))
    self._button = w.Button(description="Lock in" if self.measured_only else "Check", button_style="primary",
                            tooltip="record your prediction" if self.measured_only else "check your answer")
    self._feedback = w.HTML("")
    self._button.on_click(lambda _b: self.check(self._radio.value))
    row = [self._button]
    if not self.measured_only:
      self._show = w.Button(description="Show answer", tooltip="reveal the answer")
      self._show.on_click(lambda _b: self.reveal(quiet=True))
      row.append(self._show)
    self._widget = w.VBox([q, self._radio, w.HBox(row + [self._feedback])],
                          layout=w.Layout(border_left="4px solid #7e57c2", padding="2px 8px", margin="4px 0"))
    return self._widget
  def select(self, choice):
    """Select an option in the widget, as a click on it would."""
    self.widget()
    self._radio.value = None if choice is None else self._index(choice)
  def click(self): self.widget(); self._button.click()


def _feedback_html(ok, msg: str) -> str:
  color = "#777" if ok is None else ("#2e7d32" if ok else "#c62828")
  mark = "" if ok is None else ("&#10004; " if ok else "&#10008; ")
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

def _assigned_name(fn: str = "quiz") -> str:
  """The variable the caller assigns the quiz to (`q_fused = quiz(...)` -> "q_fused"), read from the calling line; ""
  when the source is not available."""
  import inspect
  try:
    ctx = inspect.getframeinfo(sys._getframe(2), context=1).code_context or []  # the caller's caller
  except Exception: return ""
  m = re.match(r"\s*([A-Za-z_]\w*)\s*=\s*(\w+\.)?" + fn + r"\(", ctx[0] if ctx else "")
  return m.group(1) if m else ""

# ---------------------------------------------------------------- a question answered with a number

def _number(x, what: str) -> float:
  """A finite number from an int, a float or a numeric string; TypeError/ValueError that says what was wrong."""
  if isinstance(x, bool): raise TypeError(f"{what} must be a number, not a bool")
  if isinstance(x, str):
    try: x = float(x.strip().replace(",", "").replace("_", ""))
    except ValueError: raise ValueError(f"{what} must be a number, got {x!r}") from None
  try: v = float(x)
  except (TypeError, ValueError): raise TypeError(f"{what} must be a number, got {type(x).__name__}") from None
  if v != v or v in (float("inf"), float("-inf")): raise ValueError(f"{what} must be a finite number, got {v}")
  return v

def _fmt(v: float) -> str: return str(int(v)) if float(v).is_integer() else f"{v:.6g}"

class NumberQuiz(_Shown):
  """A question whose answer is a number the notebook measures. The learner types their number first (in the
  widget's box or with .answer(n)); after the run, reveal(measured) compares it with the measurement, exactly or
  within the stated tolerance (absolute `tol`, or `rel_tol` as a fraction of the measured value). Nothing is known
  to the question before reveal(), so no form of it can show the answer."""
  def __init__(self, question: str, tol: float = 0, rel_tol: float = 0, unit: str = "", explain: str = "", name: str = "",
               key: str = ""):
    self.tol, self.rel_tol = _number(tol, "tol"), _number(rel_tol, "rel_tol")
    if self.tol < 0 or self.rel_tol < 0: raise ValueError(f"tolerances must be >= 0, got tol={tol}, rel_tol={rel_tol}")
    self.question, self.unit, self.name, self.key = str(question), str(unit or ""), str(name), str(key or "")
    if self.key and "answer" in _check_key_call(self.key, None, explain):
      raise ValueError(f"quiz {self.key!r}: a number question is answered by the measurement; its entry must not have an 'answer'")
    self._inline = None if self.key else str(explain or "")
    self.given: float | None = None      # the learner's number
    self.measured: float | None = None   # set by reveal()
    self.right: bool | None = None       # set by reveal() once there is an answer to compare
    self._widget: Any = None  # the ipywidgets, made when it is shown
    self._box: Any = None; self._button: Any = None; self._feedback: Any = None  # noqa: E702

  def tolerance(self) -> str:
    """The stated tolerance, as the question shows it ("" when the answer must be exact)."""
    parts = ([f"\u00b1{_fmt(self.tol)}{' ' + self.unit if self.unit else ''}"] if self.tol else []) + \
            ([f"\u00b1{_fmt(self.rel_tol * 100)}%"] if self.rel_tol else [])
    return "within " + " or ".join(parts) if parts else ""
  def is_close(self, given, measured) -> bool:
    g, m = _number(given, "the answer"), _number(measured, "the measured value")
    return abs(g - m) <= max(self.tol, self.rel_tol * abs(m)) + 1e-12 * max(1.0, abs(m))
  def _value(self, v: float) -> str: return _fmt(v) + (f" {self.unit}" if self.unit else "")
  def _explain(self) -> str:
    """The explanation, read only when the measurement is compared with an answer."""
    return self._inline if self._inline is not None else answer_entry(self.key)["explain"]

  # ---- the learner's side
  def answer(self, n, quiet: bool = False) -> None:
    """Record the learner's number. If the measurement is already in (reveal() ran first), compare at once."""
    self.given = _number(n, "your answer")
    if self._box is not None and self._box.value != _fmt(self.given): self._box.value = _fmt(self.given)
    if self.measured is not None: self.reveal(self.measured, quiet)
    else: self._say(None, f"Answer saved: {self._value(self.given)}. Now run the next cells; the measurement is compared with it.", quiet)
  def _say(self, ok, msg: str, quiet: bool = True):
    if self._feedback is not None: self._feedback.value = _feedback_html(ok, msg)
    if not quiet: print(msg)

  def reveal(self, measured, quiet: bool = False) -> None:
    """After the run: compare the learner's number with the measured value and say right or wrong, with the
    measurement. Without an answer yet it only asks for one (the measurement stays hidden until then)."""
    self.measured = _number(measured, "the measured value")
    if self.given is None:
      self.right = None
      self._say(None, f"Answer first: type {self.name or '<quiz>'}.answer(<your number>) or fill in the box, "
                      "then the measurement is compared with it.", quiet)
      return
    self.right = self.is_close(self.given, self.measured)
    tol = f" ({self.tolerance()})" if self.tolerance() else ""
    verdict = (f"\u2713 Right: you said {self._value(self.given)}{tol}." if self.right
               else f"\u2717 Not quite: you said {self._value(self.given)}{tol}.")
    self._say(self.right, " ".join(x for x in (f"Measured: {self._value(self.measured)}.", verdict, self._explain()) if x), quiet)

  # ---- forms that never contain the answer
  def how_to(self) -> str:
    return f"Answer before you run on: type a number in the box, or {self.name or '<quiz>'}.answer(<your number>)."
  def text(self) -> str:
    tol = f"\n  (a number; {self.tolerance()} counts as right)" if self.tolerance() else "\n  (a number, exactly)"
    return f"Quiz: {self.question}{tol}\n  {self.how_to()}"
  def html(self) -> str:
    e = html.escape
    tol = e(self.tolerance()) + " counts as right" if self.tolerance() else "exactly"
    return (f'<div class="lazynb-quiz" style="border-left:4px solid #7e57c2;padding:4px 10px;margin:4px 0">'
            f"<p><b>Quiz:</b> {e(self.question)} <i>(a number, {tol})</i></p><p><i>{e(self.how_to())}</i></p></div>")
  def __repr__(self): return self.text()

  # ---- the widget
  def widget(self):
    """The ipywidgets form: the question, a text box for the number, a Lock in button and the feedback line."""
    if self._widget is not None: return self._widget
    import ipywidgets as w
    tol = f" <i>({html.escape(self.tolerance())})</i>" if self.tolerance() else ""
    q = w.HTML(f"<b>Quiz:</b> {html.escape(self.question)}{tol}")
    self._box = w.Text(value="" if self.given is None else _fmt(self.given), placeholder="your number",
                       layout=w.Layout(width="10em"))
    self._button = w.Button(description="Lock in", button_style="primary", tooltip="record your answer")
    self._feedback = w.HTML("")
    self._button.on_click(lambda _b: self._lock_in())
    self._widget = w.VBox([q, w.HBox([self._box, self._button, self._feedback])],
                          layout=w.Layout(border_left="4px solid #7e57c2", padding="2px 8px", margin="4px 0"))
    return self._widget
  def _lock_in(self):
    try: self.answer(self._box.value, quiet=True)
    except (TypeError, ValueError) as e: self._say(False, f"{e}. Type a number.")
  def type(self, text: str):
    """Type into the widget's box, as the learner would."""
    self.widget()
    self._box.value = str(text)
  def click(self): self.widget(); self._button.click()


def _name_of(key: str) -> str: return key.split(".")[-1] if key else ""

def ask_number(question: str, tol: float = 0, rel_tol: float = 0, unit: str = "", explain: str = "", show: bool = True,
               name: str = "", key: str = "") -> NumberQuiz:
  """Ask for a number the next cells measure: `q = ask_number("How many kernels?", key="05_op_types.q_center")`, the
  learner types q.answer(3) (or fills the box), and after the run `q.reveal(measured)` says right or wrong with the
  measured value and the explanation from the answer file (or `explain=`, for a question of your own)."""
  q = NumberQuiz(question, tol, rel_tol, unit, explain, name or _assigned_name("ask_number") or _name_of(key), key)
  if show: q.show()
  return q

def quiz(question: str, options: Sequence, answer=None, explain: str = "", show: bool = True, name: str = "",
         key: str = "") -> Quiz:
  """Ask a multiple-choice question. A course question gives `key="NOTEBOOK.NAME"`: its explanation, and its answer
  key if it has nothing to measure, are in answers/NOTEBOOK.json. A question of your own may pass `answer` (index or
  text; leave it out when the notebook measures it, then call .reveal(measured)) and `explain`. `name` is the
  variable the text form tells the learner to call .predict on."""
  q = Quiz(question, options, answer, explain, name or _assigned_name() or _name_of(key), key)
  if show: q.show()
  return q
