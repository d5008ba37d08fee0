"""The table of numbers the notebooks' text states (tests/notebook_prose.py) stays in step with the notebooks: every
anchor is in its section as often as claimed, short, and holds the number a changed text would change; a number read
from the repository agrees now; and the check that tests/test_notebooks.py runs on the executed outputs survives a
reworded sentence but catches a wrong number, a lost anchor, a lost heading and a statement that moved. (The executed
comparison itself runs in test_notebooks.py, which executes the notebooks.)"""
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
# the build track's notebooks print what the learner's code did (tests/test_build_track.py holds them to it), no course figures
NO_MEASURED_NUMBERS |= {p.stem for p in NB.glob("b[0-9]*.ipynb")}
IDS = [f"{c.nb}:{c.at[:20]}:{c.says}" for c in CLAIMS]

def _read(stem: str): return nbformat.read(NB / f"{stem}.ipynb", as_version=4)

def test_every_notebook_is_in_the_table_or_named_as_stating_none():
  stems = {c.nb for c in CLAIMS}
  assert stems | NO_MEASURED_NUMBERS == {p.stem for p in NB.glob("*.ipynb")} and not stems & NO_MEASURED_NUMBERS
  assert len(CLAIMS) >= 30

@pytest.mark.parametrize("claim", CLAIMS, ids=IDS)
def test_anchor_is_in_its_section_as_claimed(claim: Claim):
  nb = _read(claim.nb)
  hits, problem = prose.find(claim, nb.cells)
  assert problem is None, problem
  assert len(hits) == claim.times and all(prose.stated(m) for _, m in hits)
  assert (claim.out is None) == (claim.measure is not None), "a claim is measured by the outputs or by the repository"
  if claim.measure is not None:  # no execution needed: compare now
    got = claim.measure()
    for _, m in hits: assert prose.agrees(claim, prose.stated(m), got), f"{claim.place()}: {prose.context(m)!r} but the repository has {got}"

@pytest.mark.parametrize("claim", CLAIMS, ids=IDS)
def test_anchor_is_the_number_and_a_few_words(claim: Claim):
  """An anchor is the number with its unit, not a sentence: at most four words (formulas and numbers aside), and one
  stated value ({N} or {T}) per claim."""
  words = re.findall(r"[A-Za-z']{2,}", re.sub(r"\{[NT#]\}", " ", claim.says))
  assert len(words) <= 4, f"{claim.says!r}: an anchor of {len(words)} words is a sentence; keep the number and its unit"
  assert claim.says.count("{N}") + claim.says.count("{T}") == 1, claim.says

def _planted(claim: Claim, said: str) -> str:
  """A value other than `said`, far enough off for any tolerance in the table: ten times it plus 7 (a tuple: one more
  entry)."""
  if "{T}" in claim.says: return "99, " + said
  v = prose.number(said)
  return f"{v * 10 + 7:g}"

@pytest.mark.parametrize("claim", CLAIMS, ids=IDS)
def test_a_changed_number_in_the_real_text_is_read_and_refused(claim: Claim):
  """Plant a wrong number where the notebook states this one (or in its quiz's explanation): the anchor still finds
  the statement, reads the planted number, and the comparison refuses it where the run measured the old one."""
  nb = _read(claim.nb)
  hits, problem = prose.find(claim, nb.cells)
  assert hits, problem
  at, m = hits[0]
  said = prose.stated(m)
  wrong = _planted(claim, said)
  text = m.string[:m.start("n")] + wrong + m.string[m.end("n"):]
  if claim.quiz: hits, problem = prose.find(claim, nb.cells, explain=lambda key: text)
  else:
    assert m.string in nb.cells[at].source
    nb.cells[at].source = nb.cells[at].source.replace(m.string, text, 1)
    hits, problem = prose.find(claim, nb.cells)
  assert problem is None, problem
  now = prose.stated(hits[0][1])
  measured = said if "{T}" in claim.says else prose.number(said)   # as if the run measured what the text said before
  assert now == wrong and prose.agrees(claim, said, measured) and not prose.agrees(claim, now, measured), (claim.place(), said, now)

def _anchors_only(hits) -> list[str]:
  """The text of the matched anchors, overlapping ones merged into one piece."""
  spans = sorted({(m.string, m.start(), m.end()) for m in hits}, key=lambda t: (t[0], t[1]))
  out: list[list] = []
  for text, a, b in spans:
    if out and out[-1][0] == text and a <= out[-1][2]: out[-1][2] = max(out[-1][2], b)
    else: out.append([text, a, b])
  return [text[a:b] for text, a, b in out]

def test_anchors_alone_keep_every_claim():
  """Reword everything but the anchors (here: delete every word of the notebooks' text but the anchors, headings kept):
  every claim is still found as often as before, stating the same number."""
  for stem in sorted({c.nb for c in CLAIMS}):
    nb, claims = _read(stem), [c for c in CLAIMS if c.nb == stem]
    found = {c: prose.find(c, nb.cells)[0] for c in claims}
    cells: dict[int, list[re.Match]] = {}
    explains: dict[str, list[re.Match]] = {}
    for c, hits in found.items():
      for i, m in hits: (explains.setdefault(f"{stem}.{c.quiz}", []) if c.quiz else cells.setdefault(i, [])).append(m)
    for i, cell in enumerate(nb.cells):
      if cell.cell_type != "markdown": continue
      # each stretch between headings (the text notebook_prose cuts out) becomes the anchors it holds, nothing else
      out, lines = [], []
      for ln in cell.source.split("\n") + [None]:
        if ln is None or prose.HEADING.match(ln):
          text = "\n".join(lines)
          out += [f"Lorem {t} ipsum." for t in _anchors_only([m for m in cells.get(i, []) if m.string == text])]
          out, lines = out + ([ln] if ln is not None else []), []
        else: lines.append(ln)
      cell.source = "\n\n".join(out)
    for c in claims:
      hits, problem = prose.find(c, nb.cells, explain=lambda key: " Lorem ipsum. ".join(_anchors_only(explains[key])))
      assert problem is None and [prose.stated(m) for _, m in hits] == [prose.stated(m) for _, m in found[c]], (c.place(), c.says, problem)

def _nb(*cells):
  nb = nbformat.v4.new_notebook()
  for kind, src, out in cells:
    if kind == "md": nb.cells.append(nbformat.v4.new_markdown_cell(src))
    else:
      c = nbformat.v4.new_code_cell(src)
      c.outputs = [nbformat.v4.new_output("stream", name="stdout", text=out)] if out else []
      nb.cells.append(c)
  return nb

TRY = "## Try it\n\nOne round of predict, run, see."
STATEMENT = "In the **Kernels** tab, the schedule: a copy (the list moving from host memory to the CPU device), then one kernel,\n`E_4`"
REWORDED = ["The Kernels tab lists a copy of the list first; after it comes exactly one kernel, E_4.",
            "Only **one**\n*kernel* ran (E_4), after the copy.",
            "A copy, then a single kernel: `E_4`.",
            "E_4 is the 1 kernel that ran; before it, the list was copied to the device."]
RUN = ("code", "%%tinygrad", "\x1b[32mlazynb trace: 2 schedule items, 1 kernel, 0.05 ms run\n")

def test_check_passes_on_agreement_and_fails_on_a_wrong_number():
  (claim,) = [c for c in CLAIMS if c.nb == "00_index"]  # so every message below is about this one statement
  assert claim.at == "Try it" and claim.says == "{N} kernel"
  assert mismatches("00_index", _nb(("md", TRY, None), RUN, ("md", STATEMENT, None))) == []
  for text in REWORDED:  # the sentence reworded, the number and its unit kept: the claim holds
    assert mismatches("00_index", _nb(("md", TRY, None), RUN, ("md", text, None))) == [], text
  wrong = _nb(("md", TRY, None), ("code", "%%tinygrad", "lazynb trace: 3 schedule items, 2 kernels, 0.05 ms run\n"), ("md", STATEMENT, None))
  (msg,) = mismatches("00_index", wrong)
  assert msg.startswith("00_index, section 'Try it': the text says one (") and "then one kernel" in msg and msg.endswith("measured 2")
  (msg,) = mismatches("00_index", _nb(("md", TRY, None), RUN, ("md", STATEMENT.replace("one kernel", "2 kernels"), None)))
  assert "the text says 2 (" in msg and "measured 1" in msg
  below = _nb(("md", TRY, None), ("md", STATEMENT, None), ("code", "%%tinygrad", "lazynb trace: 2 schedule items, 1 kernel\n"))
  (msg,) = mismatches("00_index", below)   # the measurement must come from the cells above the statement
  assert "no output above it" in msg
  twice = _nb(("md", TRY, None), RUN, ("md", STATEMENT, None), ("md", "It was one kernel.", None))
  (msg,) = mismatches("00_index", twice)
  assert "'{N} kernel' is there 2 times, the claim expects 1" in msg and "It was one kernel" in msg
  # the same statement under another heading is another section's: this one is then missing it
  elsewhere = _nb(("md", TRY, None), RUN, ("md", "## Next\n\n" + STATEMENT, None))
  (msg,) = mismatches("00_index", elsewhere)
  assert msg == ("00_index, section 'Try it': the number it states is gone: no '{N} kernel' there ({N} a number in digits or words); "
                 "state it again, or move the claim in tests/notebook_prose.py")
  # the anchor deleted (the number reworded away from its unit): the message names the notebook, the section, the
  # anchor, and the value the run measured
  gone = _nb(("md", TRY, None), RUN, ("md", "In the Kernels tab: a copy, then the kernel `E_4`.", None))
  (msg,) = mismatches("00_index", gone)
  assert msg.startswith("00_index, section 'Try it': the number it states is gone: no '{N} kernel' there") and msg.endswith("(the notebook measured 1)")
  (msg,) = mismatches("00_index", _nb(("md", "## Try this", None), RUN, ("md", STATEMENT, None)))
  assert msg.startswith("00_index, section 'Try it': 0 headings contain 'Try it' (none)")

def test_an_anchor_reads_its_number_and_nothing_around_it():
  def said(says: str, text: str) -> list[str]: return [m.group("n") for m in prose.anchor(says).finditer(text)]
  assert said("{N} kernels", "it runs three kernels; 2 kernels; a single kernel, 12 kernels") == ["three", "2", "12"]
  assert said("{N} kernel", "runs **no**\n*kernel*, a single kernel, 1kernel") == ["no", "a single"]
  assert said("{N} kernel", "one\n\nkernel") == [] and said("{N} kernel", "someone kernel, 31 kernel") == ["31"]
  assert said("{N} images", "10,000 images, 1.5 images, x10 images, 3.10,000 images") == ["10,000", "1.5"]
  assert said("E_{N}", "the kernel `E_4`, E_32 and r_8") == ["4", "32"]
  assert said("offset {N}", "(offset -9)") == ["-9"] and said("{N}%", "scored 99.02% (>98%)") == ["99.02", "98"]
  assert said("strides {T}", "the strides `(0, 0, 27, 1)` and strides (3)") == ["0, 0, 27, 1"]
  assert said("{#} steps of {N}", "200 steps of 512 images") == ["512"] and said("{N} steps of {#}", "200 steps of 512") == ["200"]
  assert said("check … {N}%", "the check below asks for 98%") == ["98"]
  assert said("check … {N}%", "the check ends. Then 98%") == [] and said("check … {N}%", "check " + "x" * 50 + " 98%") == []
  assert prose.anchor("{N} kernels").search("one kernel,") is None

def test_sections_are_cut_at_every_heading_and_skip_code_fences():
  nb = _nb(("md", "# Title\n\nintro", None), ("code", "# not a heading", None),
           ("md", "more intro\n## A: `x`\n\ntext a\n```python\n# a comment, not a heading\n```\n### B, after A\ntext b", None))
  got = [(h, [(i, t.strip()) for i, t in pieces]) for h, pieces in prose.sections(nb.cells)]
  assert got == [("", []), ("Title", [(0, "intro"), (2, "more intro")]),
                 ("A: `x`", [(2, "text a\n```python\n# a comment, not a heading\n```")]), ("B, after A", [(2, "text b")])]
  c = Claim("x", "A: x", "{N} kernel")
  assert prose.region(c, nb.cells)[1] is None and prose.region(Claim("x", "a", "{N}"), nb.cells)[1].startswith("x, section 'a': 2 headings contain 'a' ('A: `x`'; 'B, after A')")

def test_numbers_words_and_comparisons():
  assert prose.number("one") == 1 and prose.number("a dozen") == 12 and prose.number("8,000") == 8000 and prose.number("-9") == -9
  assert prose.number("a\nsingle") == 1
  eq, about = Claim("x", "s", "{N}"), Claim("x", "s", "{N}", cmp="~")
  below = Claim("x", "s", "{N}", cmp="<")
  assert prose.agrees(eq, "Two", 2) and not prose.agrees(eq, "two", 3) and not prose.agrees(eq, "2", "2.5")
  assert prose.agrees(below, "8,000", 6744) and not prose.agrees(below, "5,000", 6744)
  assert prose.agrees(about, "a dozen", 11) and prose.agrees(about, "50", 52) and not prose.agrees(about, "40", 70)
  assert prose.agrees(Claim("x", "s", "{N}", cmp="~="), "0.8", "0.800000011920929") and not prose.agrees(Claim("x", "s", "{N}", cmp="~="), "0.8", "0.81")
  assert prose.agrees(eq, "0, 0, 27, 1", "0,0,27,1") and not prose.agrees(eq, "0, 0, 27, 1", "0, 0, 9, 1")

def test_claims_about_one_size_apply_to_that_size_only():
  quick = _nb(("code", "", "quick run: width 8, batch 64, 80 steps\n"), ("md", "text", None))
  full = _nb(("code", "", "full run: width 32, batch 512, 200 steps\n"), ("md", "text", None))
  neither = _nb(("code", "", "nothing\n"))
  assert prose.run_size(quick) == "quick" and prose.run_size(full) == "full" and prose.run_size(neither) is None
  for nb, size in ((quick, "quick"), (full, "full")):
    sizes = {c.run for c in prose.applicable("p04_mnist", nb)}
    assert size in sizes and sizes <= {None, size}
  assert all(c.run is None for c in prose.applicable("p04_mnist", neither))
  assert prose.agrees(Claim("x", "s", "{N}", cmp="~", tol=0.5), "3.9", 5.5) and not prose.agrees(Claim("x", "s", "{N}", cmp="~", tol=0.5), "3.9", 9)
  assert prose.agrees(Claim("x", "s", "{N}", cmp="±", tol=0.5), "98.85", 98.4) and not prose.agrees(Claim("x", "s", "{N}", cmp="±", tol=0.5), "98.85", 98.3)

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
  explain = answer_entry("04_laziness.q_dedup")["explain"]
  ask = 'q_dedup = ask_number("How many kernels?", key="04_laziness.q_dedup")'
  def about_q_dedup(nb): return [m for m in prose.explained_early("04_laziness", nb) if "q_dedup" in m]
  assert about_q_dedup(_nb(("code", ask, "Quiz: How many kernels?\n"), ("code", "x = 1", "1\n"),
                          ("code", "q_dedup.reveal(1)", f"Measured: 1. {explain}\n"))) == []
  (msg,) = about_q_dedup(_nb(("code", ask, f"Quiz: How many kernels? {explain[:30]}\n   {explain[30:]}\n"),
                           ("code", "q_dedup.reveal(1)", "Measured: 1.\n")))
  assert "shows in the output of cell 0, before its reveal" in msg
  (msg,) = about_q_dedup(_nb(("code", ask, ""), ("code", "print(1)", "1\n")))
  assert "revealed in 0" in msg

def test_a_line_split_across_stream_outputs_is_one_line():
  """Under load the kernel can flush one print in pieces; the checker must read them as the line they are."""
  from notebook_prose import cell_text
  cell = {"outputs": [{"output_type": "stream", "name": "stdout", "text": "2.0 1.6\ndz/dx ="},
                      {"output_type": "stream", "name": "stdout", "text": " 0.8\n"},
                      {"output_type": "execute_result", "data": {"text/plain": "42"}}]}
  assert cell_text(cell) == "2.0 1.6\ndz/dx = 0.8\n42\n"
