"""The table of numbers the notebooks' text states (tests/notebook_prose.py) stays in step with the notebooks: every
statement is still in its notebook, in one cell; a number read from the repository agrees now; and the check that
tests/test_notebooks.py runs on the executed outputs catches a wrong number, a missing measurement and a statement
that moved. (The executed comparison itself runs in test_notebooks.py, which executes the notebooks.)"""
import pathlib, re
import nbformat
import pytest
import notebook_prose as prose
from notebook_prose import CLAIMS, Claim, mismatches

NB = pathlib.Path(__file__).parent.parent / "notebooks"

RUNS = NB / "runs"
# notebooks whose text states no number that the notebook measures (p07's "about a thousand calls" for the matmul is
# not printed)
NO_MEASURED_NUMBERS = {"11_contributing", "p02_op_types", "p06_custom_ops", "p07_custom_backend"}

def test_every_notebook_is_in_the_table_or_named_as_stating_none():
  stems = {c.nb for c in CLAIMS}
  assert stems | NO_MEASURED_NUMBERS == {p.stem for p in NB.glob("*.ipynb")} and not stems & NO_MEASURED_NUMBERS
  assert len(CLAIMS) >= 30

@pytest.mark.parametrize("claim", CLAIMS, ids=[f"{c.nb}:{c.text[:40]}" for c in CLAIMS])
def test_statement_is_in_its_notebook_once(claim: Claim):
  nb = nbformat.read(NB / f"{claim.nb}.ipynb", as_version=4)
  hits = prose.find(claim, nb.cells)
  assert len(hits) == 1, f"{claim.nb}: /{claim.text}/ matches {len(hits)} cells: the text changed, update the table"
  assert prose.stated(hits[0][1]) is not None
  assert (claim.out is None) == (claim.measure is not None), "a claim is measured by the outputs or by the repository"
  if claim.measure is not None:  # no execution needed: compare now
    got = claim.measure()
    assert prose.agrees(claim, prose.stated(hits[0][1]), got), f"{claim.nb}: {hits[0][1].group(0)!r} but the repository has {got}"

def _nb(*cells):
  nb = nbformat.v4.new_notebook()
  for kind, src, out in cells:
    if kind == "md": nb.cells.append(nbformat.v4.new_markdown_cell(src))
    else:
      c = nbformat.v4.new_code_cell(src)
      c.outputs = [nbformat.v4.new_output("stream", name="stdout", text=out)] if out else []
      nb.cells.append(c)
  return nb

STATEMENT = "In the **Kernels** tab, the schedule: a copy (the list moving from host memory to the CPU device), then one kernel,\n`E_4`"

def test_check_passes_on_agreement_and_fails_on_a_wrong_number():
  assert [c.nb for c in CLAIMS].count("00_index") == 1  # so every message below is about this one statement
  ok = _nb(("code", "%%tinygrad", "\x1b[32mlazynb trace: 2 schedule items, 1 kernels, 0.05 ms run\n"), ("md", STATEMENT, None))
  assert mismatches("00_index", ok) == []
  wrong = _nb(("code", "%%tinygrad", "lazynb trace: 3 schedule items, 2 kernels, 0.05 ms run\n"), ("md", STATEMENT, None))
  (msg,) = mismatches("00_index", wrong)
  assert "the text says" in msg and "measured 2" in msg
  below = _nb(("md", STATEMENT, None), ("code", "%%tinygrad", "lazynb trace: 2 schedule items, 1 kernels\n"))
  (msg,) = mismatches("00_index", below)   # the measurement must come from the cells above the statement
  assert "no output above it" in msg
  twice = _nb(("code", "", "lazynb trace: 2 schedule items, 1 kernels\n"), ("md", STATEMENT, None), ("md", STATEMENT, None))
  (msg,) = mismatches("00_index", twice)
  assert "is in 2 cells" in msg
  (msg,) = mismatches("00_index", _nb(("md", "no such text", None)))
  assert "is in 0 cells" in msg

def test_numbers_words_and_comparisons():
  assert prose.number("one") == 1 and prose.number("a dozen") == 12 and prose.number("8,000") == 8000 and prose.number("-9") == -9
  eq, below, about = Claim("x", "{N}"), Claim("x", "{N}", cmp="<"), Claim("x", "{N}", cmp="~")
  assert prose.agrees(eq, "Two", 2) and not prose.agrees(eq, "two", 3) and not prose.agrees(eq, "2", "2.5")
  assert prose.agrees(below, "8,000", 6744) and not prose.agrees(below, "5,000", 6744)
  assert prose.agrees(about, "a dozen", 11) and prose.agrees(about, "50", 52) and not prose.agrees(about, "40", 70)
  assert prose.agrees(Claim("x", "{N}", cmp="~="), "0.8", "0.800000011920929") and not prose.agrees(Claim("x", "{N}", cmp="~="), "0.8", "0.81")
  assert prose.agrees(eq, "0, 0, 27, 1", "0,0,27,1") and not prose.agrees(eq, "0, 0, 27, 1", "0, 0, 9, 1")
  m = Claim("x", r"runs {N} kernels").pattern().search("it runs three kernels")
  assert m and m.group("n") == "three"

def test_claims_about_one_size_apply_to_that_size_only():
  quick = _nb(("code", "", "quick run: width 8, batch 64, 80 steps\n"), ("md", "text", None))
  full = _nb(("code", "", "full run: width 32, batch 512, 200 steps\n"), ("md", "text", None))
  neither = _nb(("code", "", "nothing\n"))
  assert prose.run_size(quick) == "quick" and prose.run_size(full) == "full" and prose.run_size(neither) is None
  for nb, size in ((quick, "quick"), (full, "full")):
    sizes = {c.run for c in prose.applicable("p04_mnist", nb)}
    assert size in sizes and sizes <= {None, size}
  assert all(c.run is None for c in prose.applicable("p04_mnist", neither))
  assert prose.agrees(Claim("x", "{N}", cmp="~", tol=0.5), "3.9", 5.5) and not prose.agrees(Claim("x", "{N}", cmp="~", tol=0.5), "3.9", 9)
  assert prose.agrees(Claim("x", "{N}", cmp="±", tol=0.5), "98.85", 98.4) and not prose.agrees(Claim("x", "{N}", cmp="±", tol=0.5), "98.85", 98.3)

def _recorded(stem: str):
  """The notebook with the recorded full run's outputs put on its code cells (the record keeps only code cells)."""
  nb = nbformat.read(NB / f"{stem}.ipynb", as_version=4)
  rec = nbformat.read(RUNS / f"{stem}.full.ipynb", as_version=4)
  code = [c for c in nb.cells if c.cell_type == "code"]
  assert [c.source for c in code] == [c.source for c in rec.cells], \
    f"notebooks/runs/{stem}.full.ipynb recorded other code than {stem}.ipynb has now: record it again (tools/record_run.py)"
  for c, r in zip(code, rec.cells): c.outputs = r.outputs
  return nb, rec

@pytest.mark.parametrize("stem", sorted({c.nb for c in CLAIMS if c.run == "full"}))
def test_full_size_figures_agree_with_the_recorded_full_run(stem):
  """The figures a notebook quotes from its full-size run (too long for the suite) are the recorded run's, and the
  record is of the notebook's current code."""
  nb, rec = _recorded(stem)
  assert rec.metadata["lazynb_record"]["mode"].startswith("full") and prose.run_size(nb) == "full"
  full = [c for c in prose.applicable(stem, nb) if c.run == "full"]
  assert len(full) == len([c for c in CLAIMS if c.nb == stem and c.run == "full"]) >= 5
  assert mismatches(stem, nb) == []
  # the same check on the record with its accuracy changed by a point fails
  for c in nb.cells:
    for o in c.get("outputs", []):
      if o.get("output_type") == "stream" and "test accuracy" in o.text:
        o.text = re.sub(r"test accuracy ([\d.]+)%", lambda m: f"test accuracy {float(m.group(1)) - 1:.2f}%", o.text)
  assert any("the notebook measured" in m for m in mismatches(stem, nb))

def test_an_explanation_shown_before_its_reveal_is_caught():
  from lazynb.notebook.quiz import answer_entry
  explain = answer_entry("04_laziness.q_fuse")["explain"]
  ask = 'q_fuse = ask_number("How many kernels?", key="04_laziness.q_fuse")'
  def about_q_fuse(nb): return [m for m in prose.explained_early("04_laziness", nb) if "q_fuse" in m]
  assert about_q_fuse(_nb(("code", ask, "Quiz: How many kernels?\n"), ("code", "x = 1", "1\n"),
                          ("code", "q_fuse.reveal(1)", f"Measured: 1. {explain}\n"))) == []
  (msg,) = about_q_fuse(_nb(("code", ask, f"Quiz: How many kernels? {explain[:30]}\n   {explain[30:]}\n"),
                           ("code", "q_fuse.reveal(1)", "Measured: 1.\n")))
  assert "shows in the output of cell 0, before its reveal" in msg
  (msg,) = about_q_fuse(_nb(("code", ask, ""), ("code", "print(1)", "1\n")))
  assert "revealed in 0" in msg

def test_a_line_split_across_stream_outputs_is_one_line():
  """Under load the kernel can flush one print in pieces; the checker must read them as the line they are."""
  from notebook_prose import cell_text
  cell = {"outputs": [{"output_type": "stream", "name": "stdout", "text": "2.0 1.6\ndz/dx ="},
                      {"output_type": "stream", "name": "stdout", "text": " 0.8\n"},
                      {"output_type": "execute_result", "data": {"text/plain": "42"}}]}
  assert cell_text(cell) == "2.0 1.6\ndz/dx = 0.8\n42\n"
