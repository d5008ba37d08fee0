"""The course's quiz widget (lazynb/notebook/quiz.py): answer key, feedback, text/HTML fallbacks, the ipywidgets
form, and what a headless run (nbclient) records."""
import json, pytest
from lazynb.notebook import quiz as quizmod
from lazynb.notebook.quiz import Quiz, quiz

def make(**kw):
  args = dict(question="How many kernels?", options=[0, 1, 3], answer="1", explain="They fuse.")
  args.update(kw)
  return Quiz(**args)

def measured(**kw):
  args = dict(question="How many kernels?", options=["0", "1", "2: one per reduce", "3"], explain="They fuse.")
  args.update(kw)
  return Quiz(**args)

@pytest.mark.parametrize("kw,exc", [
  (dict(answer="7"), ValueError), (dict(answer=5), ValueError), (dict(answer=-1), ValueError), (dict(answer=True), TypeError),
  (dict(options=["only"], answer=0), ValueError), (dict(options=["a", "a"], answer=0), ValueError),
  (dict(options="abc", answer=0), TypeError)])
def test_bad_arguments(kw, exc):
  with pytest.raises(exc): make(**kw)

def test_measured_value_finds_its_option():
  q = measured()
  assert q.measured_only and not make().measured_only
  assert q.match(1) == 1 and q.match("0") == 0 and q.match(2) == 2 and q.match(3) == 3
  assert measured(options=["[0.5, 1.0] (float)", "[0, 1] (int)"]).match([0.5, 1.0]) == 0
  with pytest.raises(ValueError): q.match(4)
  with pytest.raises(ValueError): q.match(12)  # "1" is a prefix of "12" only as text, not as a value
  with pytest.raises(ValueError): measured(options=["2 kernels", "2 buffers"]).match(2)  # ambiguous

def test_reveal_compares_the_learners_prediction_with_the_measurement(capsys):
  q = measured()
  assert q.revealed is None
  q.reveal(1)
  assert q.revealed == 1
  out = capsys.readouterr().out
  assert "Measured: 1" in out and "no prediction" in out and "They fuse." in out
  q.predict("3")
  q.reveal(1)
  assert "\u2717 You predicted (d) 3." in capsys.readouterr().out
  q.predict(1)
  q.reveal(1)
  assert "\u2713 Your prediction was right." in capsys.readouterr().out
  with pytest.raises(ValueError): q.reveal()  # no key and no measurement: nothing to reveal
  with pytest.raises(ValueError): q.predict("7")

def test_reveal_of_a_key_question(capsys):
  q = make()
  q.predict(0)
  q.reveal()
  assert q.revealed == 1
  out = capsys.readouterr().out
  assert "Answer: (b) 1." in out and "You predicted (a) 0" in out

def test_feedback_never_names_the_answer():
  q = make()
  assert q.feedback(None) == (None, "Pick an answer first.") and q.tries == 0
  for wrong in ("0", "3", 0, 2):
    ok, msg = q.feedback(wrong)
    assert ok is False and "Try again" in msg and "(b)" not in msg and "They fuse" not in msg
  assert q.tries == 4
  assert q.feedback("1") == (True, "Correct. They fuse.")
  assert make(explain="").feedback(1) == (True, "Correct.")
  with pytest.raises(ValueError): q.feedback("nope")
  m = measured()
  ok, msg = m.feedback("3")
  assert ok is None and "Prediction saved: (d) 3" in msg and m.prediction == 3 and "(b)" not in msg

def test_no_text_form_shows_the_answer():
  for q in (make(explain="The answer is ONE."), measured(explain="The answer is ONE.")):
    for form in (q.text(), repr(q), q.html(), str(q._repr_mimebundle_())):
      assert "ONE" not in form and "Answer" not in form and "<details>" not in form
    assert q.text().splitlines()[0] == "Quiz: How many kernels?" and "  (a) 0" in q.text() and ".predict(" in q.text()
  assert 'q_x.predict(' in measured(name="q_x").text()
  h = make(question="<script>alert(1)</script>", options=["<b>x</b>", "y"], answer=0).html()
  assert "<script>" not in h and "&lt;script&gt;" in h and "&lt;b&gt;x&lt;/b&gt;" in h

def test_prints_outside_ipython(capsys):
  assert not quizmod.widgets_usable()  # pytest is not an IPython kernel
  q = quiz("Lazy?", ["yes", "no"], explain="Nothing runs until realize().")
  out = capsys.readouterr().out
  assert out.startswith("Quiz: Lazy?") and "(a) yes" in out and "Nothing runs" not in out
  assert isinstance(q, Quiz)
  quiz("Silent?", ["yes", "no"], 0, show=False)
  assert capsys.readouterr().out == ""

def test_env_forces_text(monkeypatch, capsys):
  monkeypatch.setattr(quizmod, "widgets_usable", lambda: False)
  monkeypatch.setenv("LAZYNB_QUIZ", "text")
  quiz("Q?", ["a", "b"], 1)
  out = capsys.readouterr().out
  assert "Quiz: Q?" in out and "(b) b" in out and "Answer" not in out

def test_widget_check_and_show_answer():
  pytest.importorskip("ipywidgets")
  q = make()
  box = q.widget()
  assert q.widget() is box and q._button.description == "Check" and q._show.description == "Show answer"
  assert q._radio.options == (("(a) 0", 0), ("(b) 1", 1), ("(c) 3", 2)) and q._radio.value is None
  q.click()
  assert "Pick an answer first." in q._feedback.value and q.tries == 0
  q.select("0"); q.click()  # noqa: E702
  assert "Not quite" in q._feedback.value and "#c62828" in q._feedback.value
  q.select(2); q.click()  # noqa: E702
  assert "(b)" not in q._feedback.value  # never revealed by wrong tries
  q._show.click()
  assert "Answer: (b) 1." in q._feedback.value
  q.select("1"); q.click()  # noqa: E702
  assert "Correct. They fuse." in q._feedback.value and "#2e7d32" in q._feedback.value

def test_widget_lock_in_then_measurement():
  pytest.importorskip("ipywidgets")
  q = measured()
  q.widget()
  assert q._button.description == "Lock in" and q._show is None
  q.select(3); q.click()  # noqa: E702
  assert q.prediction == 3 and "Prediction saved" in q._feedback.value and "(b)" not in q._feedback.value
  q.reveal(1, quiet=True)
  assert "Measured: 1" in q._feedback.value and "#c62828" in q._feedback.value

def test_mimebundle_with_and_without_widgets(monkeypatch):
  pytest.importorskip("ipywidgets")
  monkeypatch.setattr(quizmod, "widgets_usable", lambda: True)
  b = make()._repr_mimebundle_()
  assert {"text/plain", "text/html", "application/vnd.jupyter.widget-view+json"} <= set(b)
  assert b["text/plain"].startswith("Quiz: How many kernels?")
  monkeypatch.setattr(quizmod, "widgets_usable", lambda: False)
  assert set(make()._repr_mimebundle_()) == {"text/plain", "text/html"}

def test_headless_notebook_records_text(monkeypatch):
  """Executed by nbclient (no widget frontend), the quiz's output still carries the question as text."""
  import os, pathlib
  root = str(pathlib.Path(__file__).parent.parent)  # the kernel imports this checkout's lazynb
  monkeypatch.setenv("PYTHONPATH", os.pathsep.join([root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
  nbformat = pytest.importorskip("nbformat")
  nbclient = pytest.importorskip("nbclient")
  pytest.importorskip("ipywidgets")
  nb = nbformat.v4.new_notebook()
  nb.cells = [nbformat.v4.new_code_cell("from lazynb.notebook.quiz import quiz\n"
                                        "q = quiz('Which op is relu?', ['ADD', 'WHERE'], explain='A select.')\n"
                                        "q.predict('ADD')\n"
                                        "q.reveal('WHERE')")]
  nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
  outs = nb.cells[0].outputs
  assert not [o for o in outs if o.output_type == "error"]
  (disp,) = [o for o in outs if o.output_type == "display_data"]
  text = disp.data["text/plain"]
  assert "Quiz: Which op is relu?" in text and "(b) WHERE" in text and "A select" not in text
  assert "A select" not in disp.data["text/html"]
  (stream,) = [o for o in outs if o.output_type == "stream"]
  assert "Measured: WHERE" in stream.text and "You predicted (a) ADD" in stream.text and "A select." in stream.text
  assert "application/vnd.jupyter.widget-view+json" in disp.data
  assert json.dumps(disp.data)  # plain JSON, storable in the notebook

def test_text_names_the_variable_to_predict_with(capsys):
  q_seen = quiz("Lazy?", ["yes", "no"])
  assert q_seen.name == "q_seen" and "q_seen.predict(" in capsys.readouterr().out
  assert quizmod.quiz("Q?", ["a", "b"], show=False).name == ""   # no assignment on the line
