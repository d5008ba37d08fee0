"""The course's quiz widget (lazynb/notebook/quiz.py): answer key, feedback, text/HTML fallbacks, the ipywidgets
form, and what a headless run (nbclient) records."""
import json, pytest
from lazynb.notebook import quiz as quizmod
from lazynb.notebook.quiz import Quiz, quiz

def make(**kw):
  args = dict(question="How many kernels?", options=[0, 1, 3], answer="1", explain="They fuse.")
  args.update(kw)
  return Quiz(**args)

def test_answer_by_text_or_index():
  q = make()
  assert q.answer == 1 and q.correct == "1" and q.options == ["0", "1", "3"]
  assert make(answer=2).correct == "3"
  assert q.is_correct(1) and q.is_correct("1") and not q.is_correct("3") and not q.is_correct(0)

@pytest.mark.parametrize("kw,exc", [
  (dict(answer="7"), ValueError), (dict(answer=5), ValueError), (dict(answer=-1), ValueError), (dict(answer=True), TypeError),
  (dict(options=["only"], answer=0), ValueError), (dict(options=["a", "a"], answer=0), ValueError),
  (dict(options="abc", answer=0), TypeError)])
def test_bad_arguments(kw, exc):
  with pytest.raises(exc): make(**kw)

def test_feedback_counts_tries_and_reveals():
  q = make()
  assert q.feedback(None) == (False, "Pick an answer first.") and q.tries == 0
  ok, msg = q.feedback("0")
  assert not ok and "Try again" in msg and "(b)" not in msg
  ok, msg = q.feedback("3")
  assert not ok and "The answer is (b) 1" in msg and "They fuse." in msg
  ok, msg = q.feedback("1")
  assert ok and msg == "Correct. They fuse."
  assert make(explain="").feedback(1) == (True, "Correct.")
  with pytest.raises(ValueError): q.feedback("nope")

def test_text_forms():
  q = make()
  t = q.text()
  assert t.splitlines()[0] == "Quiz: How many kernels?"
  assert "  (a) 0" in t and "  (c) 3" in t and "Answer: (b) 1 -- They fuse." in t
  assert "Answer" not in repr(q) and "(b) 1" in repr(q)
  h = make(question="<script>alert(1)</script>", options=["<b>x</b>", "y"], answer=0).html()
  assert "<script>" not in h and "&lt;script&gt;" in h and "&lt;b&gt;x&lt;/b&gt;" in h
  assert "<details>" in h and "Show the answer" in h

def test_prints_outside_ipython(capsys):
  assert not quizmod.widgets_usable()  # pytest is not an IPython kernel
  q = quiz("Lazy?", ["yes", "no"], "yes", "Nothing runs until realize().")
  out = capsys.readouterr().out
  assert out.startswith("Quiz: Lazy?") and "(a) yes" in out and "Answer: (a) yes" in out
  assert isinstance(q, Quiz)
  quiz("Silent?", ["yes", "no"], 0, show=False)
  assert capsys.readouterr().out == ""

def test_env_forces_text(monkeypatch, capsys):
  monkeypatch.setattr(quizmod, "widgets_usable", lambda: False)
  monkeypatch.setenv("LAZYNB_QUIZ", "text")
  quiz("Q?", ["a", "b"], 1)
  assert "Answer: (b) b" in capsys.readouterr().out

def test_widget_check_button():
  pytest.importorskip("ipywidgets")
  q = make()
  box = q.widget()
  assert q.widget() is box
  assert q._radio.options == (("(a) 0", 0), ("(b) 1", 1), ("(c) 3", 2)) and q._radio.value is None
  q.click()
  assert "Pick an answer first." in q._feedback.value and q.tries == 0
  q.select("0"); q.click()  # noqa: E702
  assert "Not quite" in q._feedback.value and "#c62828" in q._feedback.value
  q.select(2); q.click()  # noqa: E702
  assert "The answer is (b) 1" in q._feedback.value
  q.select("1"); q.click()  # noqa: E702
  assert "Correct. They fuse." in q._feedback.value and "#2e7d32" in q._feedback.value
  assert q.check(1) and not q.check(0)

def test_mimebundle_with_and_without_widgets(monkeypatch):
  pytest.importorskip("ipywidgets")
  monkeypatch.setattr(quizmod, "widgets_usable", lambda: True)
  b = make()._repr_mimebundle_()
  assert {"text/plain", "text/html", "application/vnd.jupyter.widget-view+json"} <= set(b)
  assert b["text/plain"].startswith("Quiz: How many kernels?")
  monkeypatch.setattr(quizmod, "widgets_usable", lambda: False)
  assert set(make()._repr_mimebundle_()) == {"text/plain", "text/html"}

def test_headless_notebook_records_text():
  """Executed by nbclient (no widget frontend), the quiz's output still carries the question as text."""
  nbformat = pytest.importorskip("nbformat")
  nbclient = pytest.importorskip("nbclient")
  pytest.importorskip("ipywidgets")
  nb = nbformat.v4.new_notebook()
  nb.cells = [nbformat.v4.new_code_cell("from lazynb.notebook.quiz import quiz\n"
                                        "q = quiz('Which op is relu?', ['ADD', 'WHERE'], 'WHERE', 'A select.')\n"
                                        "assert q.correct == 'WHERE'")]
  nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
  outs = nb.cells[0].outputs
  assert not [o for o in outs if o.output_type == "error"]
  (disp,) = [o for o in outs if o.output_type == "display_data"]
  text = disp.data["text/plain"]
  assert "Quiz: Which op is relu?" in text and "(b) WHERE" in text and "Answer: (b) WHERE" in text
  assert "Show the answer" in disp.data["text/html"]
  assert "application/vnd.jupyter.widget-view+json" in disp.data
  assert json.dumps(disp.data)  # plain JSON, storable in the notebook
