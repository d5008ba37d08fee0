"""The course's quiz widget (lazynb/notebook/quiz.py): answer key, feedback, text/HTML fallbacks, the ipywidgets
form, and what a headless run (nbclient) records."""
import json, pytest
from lazynb.notebook import quiz as quizmod
from lazynb.notebook.quiz import Quiz, quiz, NumberQuiz, ask_number

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
  q.reveal(1)  # no prediction yet: the answer waits for one
  assert q.revealed is None
  out = capsys.readouterr().out
  assert "Answer first" in out and "Measured" not in out and "They fuse." not in out
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

# ---- the free-number form (ask_number)


def test_number_right_wrong_and_tolerance(capsys):
  q = NumberQuiz("How many kernels?", explain="They fuse.", name="q_n")
  q.answer(3)
  assert "Answer saved: 3" in capsys.readouterr().out
  q.reveal(3)
  out = capsys.readouterr().out
  assert q.right is True and "Measured: 3." in out and "\u2713" in out and "They fuse." in out
  q.answer("4")
  assert q.right is False and "\u2717 Not quite: you said 4" in capsys.readouterr().out  # measured already: compared at once
  q.reveal(4)
  assert q.right is True
  q.reveal(3.5)
  assert q.right is False  # exact means exact
  r = NumberQuiz("Bytes?", rel_tol=0.1, unit="bytes")
  for given, ok in [(12288, True), (11100, True), (13500, True), (11000, False), (13600, False), ("12,000", True)]:
    r.answer(given, quiet=True); r.reveal(12288, quiet=True)  # noqa: E702
    assert r.right is ok, (given, ok)
  a = NumberQuiz("Ops?", tol=2)
  for given, ok in [(10, True), (8, True), (12, True), (7, False), (13, False)]:
    a.answer(given, quiet=True); a.reveal(10, quiet=True)  # noqa: E702
    assert a.right is ok, (given, ok)
  assert "within \u00b12" in a.text() and "within \u00b110%" in r.text() and "exactly" in q.text()

def test_number_reveal_without_answer_asks_first(capsys):
  q = NumberQuiz("How many kernels?", explain="Seven of them.", name="q_k")
  q.reveal(7)
  out = capsys.readouterr().out
  assert "Answer first" in out and "q_k.answer(" in out and "7" not in out and "Seven" not in out and q.right is None
  q.answer(7)
  assert q.right is True and "Measured: 7." in capsys.readouterr().out

@pytest.mark.parametrize("kw,exc", [(dict(tol=-1), ValueError), (dict(rel_tol="x"), ValueError), (dict(tol=float("nan")), ValueError)])
def test_number_bad_arguments(kw, exc):
  with pytest.raises(exc): NumberQuiz("Q?", **kw)

def test_number_bad_answers():
  q = NumberQuiz("Q?")
  for bad, exc in [(True, TypeError), ("three", ValueError), (None, TypeError), (float("inf"), ValueError), ([3], TypeError)]:
    with pytest.raises(exc): q.answer(bad)
  assert q.given is None
  with pytest.raises(ValueError): q.reveal("many")

def test_number_no_form_shows_the_answer_before_reveal(monkeypatch):
  pytest.importorskip("ipywidgets")
  q = NumberQuiz("How many loads does the kernel have?", rel_tol=0.25, explain="ZZSECRET", name="q_l")
  def forms():
    monkeypatch.setattr(quizmod, "widgets_usable", lambda: True)
    bundle = q._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    monkeypatch.setattr(quizmod, "widgets_usable", lambda: False)
    return [q.text(), repr(q), q.html(), json.dumps(bundle), json.dumps(q._repr_mimebundle_()), q._feedback.value, q._box.value]
  for f in forms(): assert "4096" not in f and "ZZSECRET" not in f
  q.reveal(4096, quiet=True)  # measured, but nobody answered: still hidden everywhere
  for f in forms(): assert "4096" not in f and "ZZSECRET" not in f
  assert "Answer first" in q._feedback.value
  q.type("4000"); q.click()  # noqa: E702
  assert q.given == 4000 and q.right is True and "Measured: 4096" in q._feedback.value and "#2e7d32" in q._feedback.value

def test_number_widget_lock_in_then_measurement():
  pytest.importorskip("ipywidgets")
  q = NumberQuiz("How many kernels?")
  q.widget()
  assert q._button.description == "Lock in" and q._box.value == ""
  q.type("two"); q.click()  # noqa: E702
  assert q.given is None and "Type a number" in q._feedback.value
  q.type(" 2 "); q.click()  # noqa: E702
  assert q.given == 2 and "Answer saved: 2" in q._feedback.value
  q.reveal(1, quiet=True)
  assert q.right is False and "Measured: 1." in q._feedback.value and "#c62828" in q._feedback.value
  q.answer(1, quiet=True)
  assert q._box.value == "1" and q.right is True

def test_ask_number_prints_and_names_its_variable(capsys):
  q_bytes = ask_number("How many bytes?", unit="bytes")
  out = capsys.readouterr().out
  assert isinstance(q_bytes, NumberQuiz) and out.startswith("Quiz: How many bytes?") and "q_bytes.answer(" in out
  ask_number("Silent?", show=False)
  assert capsys.readouterr().out == ""

def test_headless_notebook_number_question(monkeypatch):
  """In a kernel run by nbclient: the question's outputs hold no measurement; an answered question is judged against
  the cell's own measurement, an unanswered one asks for an answer and keeps the measurement to itself."""
  import os, pathlib
  root = str(pathlib.Path(__file__).parent.parent)
  monkeypatch.setenv("PYTHONPATH", os.pathsep.join([root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
  nbformat = pytest.importorskip("nbformat")
  nbclient = pytest.importorskip("nbclient")
  nb = nbformat.v4.new_notebook()
  nb.cells = [nbformat.v4.new_code_cell("from lazynb.notebook.quiz import ask_number\n"
                                        "q_a = ask_number('How many kernels?', explain='ZZFUSED')\n"
                                        "q_b = ask_number('And here?', explain='ZZFUSED')"),
              nbformat.v4.new_code_cell("q_a.answer(2)"),
              nbformat.v4.new_code_cell("from lazynb import Tensor, GlobalCounters\n"
                                        "GlobalCounters.reset()\n(Tensor.rand(4, 4) + 1).relu().realize()\n"
                                        "q_a.reveal(GlobalCounters.kernel_count)\nq_b.reveal(GlobalCounters.kernel_count)")]
  nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
  outs = [c.outputs for c in nb.cells]
  assert not [o for cell in outs for o in cell if o.output_type == "error"]
  shown = json.dumps(outs[0])
  assert "q_a.answer(" in shown and "q_b.answer(" in shown and "ZZFUSED" not in shown and "Measured" not in shown
  assert "Answer saved: 2" in outs[1][0].text
  (stream,) = [o for o in outs[2] if o.output_type == "stream"]
  lines = stream.text.splitlines()
  assert lines[0] == "Measured: 1. \u2717 Not quite: you said 2. ZZFUSED"
  assert lines[1].startswith("Answer first: type q_b.answer(") and "ZZFUSED" not in lines[1] and "1" not in lines[1]
