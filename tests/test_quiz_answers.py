"""The course's quiz answers live outside the notebooks (lazynb/notebook/answers/NOTEBOOK.json): the cell that asks a
question holds only the question and its options, so a learner cannot read the explanation or the answer key before
answering. Every notebook (its source in notebooks/src and the .ipynb) is scanned for explanations and keys; every
quiz must have its entry and no entry may be left without its quiz."""
import ast, json, pathlib, re
import pytest
from lazynb.notebook import quiz as quizmod
from lazynb.notebook.quiz import Quiz, NumberQuiz, quiz, ask_number, answer_entry

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "notebooks" / "src").glob("*.py"))
IPYNBS = sorted((ROOT / "notebooks").glob("*.ipynb"))
ANSWER_FILES = sorted(quizmod.ANSWERS.glob("*.json"))
ASKING = ("quiz", "ask_number", "Quiz", "NumberQuiz")

def _code(text: str) -> ast.Module:
  """Python from a notebook's code: IPython magics (%..., %%..., !...) become comments of the same length."""
  return ast.parse("\n".join("#" + ln[1:] if ln.lstrip().startswith(("%", "!")) else ln for ln in text.split("\n")))

def _source(cell) -> str: return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]

def _notebook_code(path: pathlib.Path) -> list[str]:
  """A notebook's code cells (a src file is cut at its '# %%' lines like tools/make_notebook.py does)."""
  if path.suffix == ".ipynb":
    return [_source(c) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
  cells, kind, buf = [], None, []
  for ln in path.read_text().split("\n") + ["# %%"]:
    if ln.startswith("# %%"):
      if kind == "code": cells.append("\n".join(buf))
      kind, buf = ("md" if "[markdown]" in ln else "code"), []
    else: buf.append(ln)
  return cells

def _notebook_text(path: pathlib.Path) -> str:
  """Everything a learner can read in the notebook: every cell's source (and any stored output), whitespace folded."""
  if path.suffix == ".ipynb":
    text = "\n".join(_source(c) + json.dumps(c.get("outputs", [])) for c in json.loads(path.read_text())["cells"])
  else: text = "\n".join(re.sub(r"^#+ ?", "", ln) for ln in path.read_text().split("\n"))  # markdown/comment markers off
  return re.sub(r"\s+", " ", text)

def _strings(path: pathlib.Path) -> list[str]:
  """The string constants of the notebook's code (implicitly joined literals come out whole), whitespace folded."""
  return [re.sub(r"\s+", " ", n.value) for code in _notebook_code(path) for n in ast.walk(_code(code))
          if isinstance(n, ast.Constant) and isinstance(n.value, str)]

def _quizzes(path: pathlib.Path) -> dict[str, ast.Call]:
  """The questions a notebook asks: variable name -> the call that asks it."""
  found = {}
  for code in _notebook_code(path):
    nodes = list(ast.walk(_code(code)))
    assigned = {id(n.value): n.targets for n in nodes if isinstance(n, ast.Assign)}
    for n in nodes:
      if not (isinstance(n, ast.Call) and getattr(n.func, "id", None) in ASKING): continue
      targets = assigned.get(id(n), [])
      assert len(targets) == 1 and isinstance(targets[0], ast.Name), f"{path.name}, line {n.lineno}: a quiz is assigned to one name"
      assert targets[0].id not in found, f"{path.name}: the quiz {targets[0].id} is asked twice"
      found[targets[0].id] = n
  return found

def _reveals(path: pathlib.Path) -> dict[str, list[ast.Call]]:
  """name -> its .reveal(...) calls."""
  out: dict[str, list[ast.Call]] = {}
  for code in _notebook_code(path):
    for n in ast.walk(_code(code)):
      if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "reveal" and isinstance(n.func.value, ast.Name):
        out.setdefault(n.func.value.id, []).append(n)
  return out

def _entries() -> dict[str, dict]:
  """Every answer file's entries, by key NOTEBOOK.NAME."""
  return {f"{f.stem}.{name}": e for f in ANSWER_FILES for name, e in json.loads(f.read_text(encoding="utf-8")).items()}

def _fold(s: str) -> str: return re.sub(r"\s+", " ", s).strip()

def test_the_notebooks_ask_questions():
  assert len(SOURCES) == len(IPYNBS) >= 17 and len(ANSWER_FILES) >= 14
  assert sum(len(_quizzes(p)) for p in SOURCES) >= 30   # issue 30 removed the trivial and the repeated ones

@pytest.mark.parametrize("path", SOURCES + IPYNBS, ids=[p.relative_to(ROOT).as_posix() for p in SOURCES + IPYNBS])
def test_no_notebook_holds_an_explanation_or_answer_key(path):
  """Each question is asked by key only; no explanation from any answer file appears anywhere in the notebook."""
  calls = _quizzes(path)
  for name, call in calls.items():
    kw = {k.arg: k.value for k in call.keywords}
    assert not {"answer", "explain"} & set(kw), f"{path.name}: {name} passes {sorted({'answer', 'explain'} & set(kw))} in the asking cell"
    most = 2 if call.func.id in ("quiz", "Quiz") else 4  # quiz(question, options, answer, explain); ask_number(question, tol, rel_tol, unit, explain)
    assert len(call.args) <= most, f"{path.name}: {name} passes its answer or explanation by position"
    assert isinstance(kw.get("key"), ast.Constant), f"{path.name}: {name} has no key= naming its entry in the answer file"
    assert kw["key"].value == f"{path.stem}.{name}", f"{path.name}: {name}'s key should be {path.stem}.{name}, is {kw['key'].value}"
  text, strings = _notebook_text(path), _strings(path)
  for key, e in _entries().items():
    explain = _fold(e["explain"])
    assert explain not in text, f"{path.name} shows the explanation of {key}"
    # a literal split over lines (implicit concatenation) is folded whole here
    assert not any(explain in s for s in strings), f"{path.name} holds the explanation of {key} in a string"

def test_the_scan_would_catch_a_leak(tmp_path):
  """The scan above fails on a notebook that passes an explanation or an answer in the asking cell."""
  e = _entries()["04_laziness.q_mem"]
  leak = tmp_path / "04_laziness.py"
  cut = e["explain"].index(" ", 30)
  leak.write_text('# %%\nq_mem = quiz("When?", ["a", "b"],\n              key="04_laziness.q_mem")\n# %% [markdown]\n'
                  f'# {e["explain"][:cut]}\n#{e["explain"][cut:]}\n')
  with pytest.raises(AssertionError, match="shows the explanation"): test_no_notebook_holds_an_explanation_or_answer_key(leak)
  split = e["explain"][:40] + '" "' + e["explain"][40:]
  leak.write_text(f'# %%\nq_mem = quiz("When?", ["a", "b"], key="04_laziness.q_mem")\nx = ("{split}")\n')
  with pytest.raises(AssertionError, match="explanation of 04_laziness.q_mem"): test_no_notebook_holds_an_explanation_or_answer_key(leak)
  leak.write_text('# %%\nq_mem = quiz("When?", ["a", "b"], answer=1, key="04_laziness.q_mem")\n')
  with pytest.raises(AssertionError, match="asking cell"): test_no_notebook_holds_an_explanation_or_answer_key(leak)
  leak.write_text('# %%\nq_mem = quiz("When?", ["a", "b"], 1)\n')
  with pytest.raises(AssertionError, match="by position"): test_no_notebook_holds_an_explanation_or_answer_key(leak)
  leak.write_text('# %%\nq_mem = quiz("When?", ["a", "b"])\n')
  with pytest.raises(AssertionError, match="no key="): test_no_notebook_holds_an_explanation_or_answer_key(leak)

def test_every_quiz_has_its_entry_and_no_entry_is_orphaned():
  stems = {p.stem for p in SOURCES}
  assert {f.stem for f in ANSWER_FILES} <= stems, "an answer file for a notebook that does not exist"
  for src, nb in zip(SOURCES, IPYNBS):
    assert src.stem == nb.stem
    assert sorted(_quizzes(src)) == sorted(_quizzes(nb)), f"{nb.name} is not regenerated from {src.name} (tools/make_notebook.py)"
  asked = {f"{p.stem}.{name}": call for p in SOURCES for name, call in _quizzes(p).items()}
  entries = _entries()
  assert sorted(set(asked) - set(entries)) == [], "quizzes without an entry in lazynb/notebook/answers"
  assert sorted(set(entries) - set(asked)) == [], "answer entries no notebook asks"
  for key in entries: answer_entry(key)  # well-formed: an explanation, and an answer only as an option's text

def test_a_key_is_an_option_and_only_unmeasured_questions_have_one():
  """An entry with an answer belongs to a multiple-choice question whose options hold it and whose reveal() is
  called without a measurement; an entry without one belongs to a question revealed with the measured value."""
  entries = _entries()
  for p in SOURCES:
    reveals = _reveals(p)
    for name, call in _quizzes(p).items():
      e, where = entries[f"{p.stem}.{name}"], f"{p.name}: {name}"
      assert reveals.get(name), f"{where} is asked but never revealed"
      if "answer" in e:
        assert call.func.id == "quiz", f"{where}: only a multiple-choice question has an answer key"
        options = ast.literal_eval(call.args[1])
        assert e["answer"] in [str(o) for o in options], f"{where}: the answer key {e['answer']!r} is not one of {options}"
        assert all(not r.args for r in reveals[name]), f"{where} has an answer key, yet is revealed with a measurement"
      else:
        assert all(r.args for r in reveals[name]), f"{where} has no answer key: its reveal() must pass the measured value"

# ---- the quiz module reads the answer file only when it checks or reveals

@pytest.fixture
def answers(tmp_path, monkeypatch):
  monkeypatch.setattr(quizmod, "ANSWERS", tmp_path)
  (tmp_path / "nb.json").write_text(json.dumps({
    "q_key": {"answer": "WHERE", "explain": "ZZKEY relu selects."},
    "q_meas": {"explain": "ZZMEAS they fuse."},
    "q_num": {"explain": "ZZNUM one kernel."}}))
  return tmp_path / "nb.json"

def _all_strings(obj, seen=None) -> str:
  """Every string reachable from an object's attributes (the learner's `vars(q)`), for a scan."""
  seen = set() if seen is None else seen
  if id(obj) in seen: return ""
  seen.add(id(obj))
  if isinstance(obj, str): return obj
  if isinstance(obj, dict): return " ".join(_all_strings(k, seen) + " " + _all_strings(v, seen) for k, v in obj.items())
  if isinstance(obj, (list, tuple, set)): return " ".join(_all_strings(v, seen) for v in obj)
  if hasattr(obj, "__dict__") and type(obj).__module__ == quizmod.__name__: return _all_strings(vars(obj), seen)
  return ""

def test_a_keyed_question_holds_nothing_until_reveal(answers, capsys, monkeypatch):
  q = quiz("Which op is relu?", ["ADD", "WHERE"], key="nb.q_key")
  shown = capsys.readouterr().out
  assert q.name == "q" and not q.measured_only and "ZZKEY" not in shown
  assert "ZZKEY" not in _all_strings(q) and "_key" not in vars(q)
  for form in (q.text(), q.html(), json.dumps(q._repr_mimebundle_())): assert "ZZKEY" not in form and "Answer" not in form
  # read when asked for, not when built: an edited file shows in the next reveal
  answers.write_text(json.dumps({**json.loads(answers.read_text()), "q_key": {"answer": "WHERE", "explain": "ZZEDITED."}}))
  assert q.feedback("ADD")[0] is False and q.feedback("WHERE") == (True, "Correct. ZZEDITED.")
  q.predict("ADD"); q.reveal()  # noqa: E702
  out = capsys.readouterr().out
  assert "Answer: (b) WHERE." in out and "You predicted (a) ADD" in out and "ZZEDITED." in out

def test_a_keyed_measured_question(answers, capsys):
  q_meas = quiz("How many kernels?", ["1", "2"], key="nb.q_meas")
  assert q_meas.measured_only and "ZZMEAS" not in _all_strings(q_meas)
  q_meas.predict("1"); q_meas.reveal(1)  # noqa: E702
  assert "ZZMEAS they fuse." in capsys.readouterr().out
  with pytest.raises(ValueError, match="no answer key"): q_meas.reveal()
  q_num = ask_number("How many kernels?", key="nb.q_num")
  assert "ZZNUM" not in _all_strings(q_num) and "ZZNUM" not in capsys.readouterr().out
  q_num.reveal(1)
  assert "ZZNUM" not in capsys.readouterr().out  # no answer yet: the explanation waits too
  q_num.answer(1)
  assert "Measured: 1." in (out := capsys.readouterr().out) and "ZZNUM one kernel." in out

def test_keyed_widget_forms_hold_nothing_before_reveal(answers, monkeypatch):
  pytest.importorskip("ipywidgets")
  monkeypatch.setattr(quizmod, "widgets_usable", lambda: True)
  q = Quiz("Which op is relu?", ["ADD", "WHERE"], key="nb.q_key")
  n = NumberQuiz("How many kernels?", key="nb.q_num")
  bundles = json.dumps([q._repr_mimebundle_(), n._repr_mimebundle_()])
  widget_text = json.dumps([w.get_state() for x in (q, n) for w in (x.widget(), *x.widget().children)])
  for s in (bundles, widget_text): assert "ZZKEY" not in s and "ZZNUM" not in s
  q.select("ADD"); q.click()  # noqa: E702
  assert "Not quite" in q._feedback.value and "ZZKEY" not in q._feedback.value and "WHERE" not in q._feedback.value
  q._show.click()
  assert "Answer: (b) WHERE." in q._feedback.value and "ZZKEY relu selects." in q._feedback.value
  n.type("1"); n.click(); n.reveal(1, quiet=True)  # noqa: E702
  assert "ZZNUM one kernel." in n._feedback.value

@pytest.mark.parametrize("content,call,match", [
  (None, lambda: quiz("Q?", ["a", "b"], key="nope.q", show=False), "no answer file nope.json"),
  (None, lambda: quiz("Q?", ["a", "b"], key="nb.q_missing", show=False), "has no entry 'q_missing'"),
  (None, lambda: quiz("Q?", ["a", "b"], key="q_key", show=False), "NOTEBOOK.NAME"),
  (None, lambda: quiz("Q?", ["a", "b"], key="nb.q_key", show=False), "'WHERE' is not one of the options"),
  (None, lambda: quiz("Q?", ["ADD", "WHERE"], explain="inline", key="nb.q_key", show=False), "not from the call"),
  (None, lambda: quiz("Q?", ["ADD", "WHERE"], answer=1, key="nb.q_key", show=False), "not from the call"),
  (None, lambda: ask_number("Q?", explain="inline", key="nb.q_num", show=False), "not from the call"),
  (None, lambda: ask_number("Q?", key="nb.q_key", show=False), "must not have an 'answer'"),
  ("{not json", lambda: quiz("Q?", ["a", "b"], key="nb.q", show=False), "not valid JSON"),
  ('["q"]', lambda: quiz("Q?", ["a", "b"], key="nb.q", show=False), "an object keyed by question name"),
  ('{"q": {"explain": ""}}', lambda: quiz("Q?", ["a", "b"], key="nb.q", show=False), "must be"),
  ('{"q": {"explain": "x", "hint": "y"}}', lambda: quiz("Q?", ["a", "b"], key="nb.q", show=False), "must be"),
  ('{"q": {"explain": "x", "answer": 1}}', lambda: quiz("Q?", ["a", "b"], key="nb.q", show=False), "must be")])
def test_bad_keys_and_answer_files_say_what_is_wrong(answers, content, call, match):
  if content is not None: answers.write_text(content)
  with pytest.raises(ValueError, match=match): call()

def test_course_answers_read_from_the_package():
  """The course's own file answers a real question (the data ships inside the lazynb package, next to quiz.py)."""
  e = answer_entry("06_autograd.q_step")
  assert e["answer"].startswith("5.0 and 30.0") and "step() writes the weights in place" in e["explain"]
  assert quizmod.ANSWERS.parent == pathlib.Path(quizmod.__file__).parent
