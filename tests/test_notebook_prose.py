"""The table of numbers the notebooks' text states (tests/notebook_prose.py) stays in step with the notebooks: every
statement is still in its notebook, in one cell; a number read from the repository agrees now; and the check that
tests/test_notebooks.py runs on the executed outputs catches a wrong number, a missing measurement and a statement
that moved. (The executed comparison itself runs in test_notebooks.py, which executes the notebooks.)"""
import pathlib
import nbformat
import pytest
import notebook_prose as prose
from notebook_prose import CLAIMS, Claim, mismatches

NB = pathlib.Path(__file__).parent.parent / "notebooks"

# notebooks whose text states no number that the notebook measures (p04_mnist's accuracy and step times are from a
# full run; p07's "about a thousand calls" for the matmul is not printed)
NO_MEASURED_NUMBERS = {"11_contributing", "p02_op_types", "p04_mnist", "p06_custom_ops", "p07_custom_backend"}

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
