"""Numbers the notebooks' text states, checked against what the executed notebook measured.

A Claim ties one stated number to its measurement by a short anchor, not by a sentence: `says` is the number with its
unit word as the text writes it ("{N} kernels", "{N} schedule items"), searched only under the heading `at` names (the
text from that heading to the next one, any level; `at` is part of the heading's words), or with at="quiz NAME" in the
explanation of that quiz (lazynb/notebook/answers/NOTEBOOK.json, placed at the cell that asks it). Rewording the rest
of the sentence keeps the claim; a claim whose anchor or heading is gone fails with a message that names the notebook,
the section and the number it looked for. An anchor must be found `times` times in its section (once, unless the
section states the same number twice: every statement is checked).

In `says`: {N} is the stated number (digits, or a word such as "one", "a dozen"), {T} a stated tuple of ints, {#} a
number that is not this claim's, "…" a few words (up to 40 characters) of the same sentence; case, a line break and
markdown emphasis (`*`, backticks) do not matter. The measured value is read by a regex over the text outputs of the
code cells `above` the statement (nearest first) or `below` it, or by a function of the repository (a file's length,
which no cell prints). tests/test_notebooks.py runs `mismatches()` on every notebook it executes;
tests/test_notebook_prose.py checks that every anchor is in its section as often as claimed, that rewording around
the anchors keeps every claim, and that a wrong number, a lost anchor or a lost heading is caught.

A notebook with a quick and a full size (p04_mnist: LAZYNB_QUICK) prints which one ran ("quick run: ..." or
"full run: ..."); a claim with run="quick" or run="full" is about that size only. The test suite executes the quick
size; the full size's claims are checked against a recorded full run (notebooks/runs/, tools/record_run.py), whose
code test_notebook_prose.py holds to the notebook's."""
from __future__ import annotations
import html, json, pathlib, re
from dataclasses import dataclass
from typing import Callable
from lazynb.notebook.quiz import ANSWERS, answer_entry

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORDS = {"no": 0, "zero": 0, "one": 1, "a single": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
         "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a dozen": 12, "a thousand": 1000}
# a number in digits (not the tail of a word or of a longer number) or in words
DIGITS = r"(?<![A-Za-z\d.,])-?\d+(?:,\d{3})*(?:\.\d+)?(?!\d|\.\d)"
SPELLED = r"\b(?:" + "|".join(w.replace(" ", r"\s+") for w in sorted(WORDS, key=len, reverse=True)) + r")\b"
NUM = rf"(?:{DIGITS}|{SPELLED})"
PLACEHOLDERS = {"{N}": rf"(?P<n>{NUM})", "{#}": NUM, "{T}": r"\((?P<n>\s*-?\d+(?:\s*,\s*-?\d+)+\s*)\)"}
GLUE = r"[*`]*(?=\s)[ \t]*\n?[ \t]*[*`]*"                     # between two words: spaces, a line break, emphasis
GAP = r"(?:(?![.!?](?:\s|$))[^\n]|\n(?![ \t]*\n)){1,40}?"     # "…": a few words of the same sentence

def anchor(says: str) -> re.Pattern:
  """The regex of a claim's anchor (see the module's docstring for its small syntax)."""
  parts, prev_gap = [], True
  for tok in says.replace("...", "…").split():
    if tok == "…": parts.append(GAP); prev_gap = True; continue
    if not prev_gap: parts.append(GLUE)
    parts.append("".join(PLACEHOLDERS.get(t, re.escape(t)) for t in re.split(r"(\{[NT#]\})", tok) if t))
    prev_gap = False
  return re.compile("".join(parts), re.I)

@dataclass(frozen=True)
class Claim:
  nb: str                    # notebook stem
  at: str                    # the heading the statement is under (part of its words), or "quiz NAME" for that quiz's explanation
  says: str                  # the anchor: the number ({N}) with its unit word(s), e.g. "{N} kernels"
  out: str | None = None     # regex over the outputs; group 1 is the measured value
  where: str = "above"       # "above" or "below": which code cells' outputs, nearest first
  cmp: str = "=="            # "==", "<" (stated is a bound above the measurement), "~" (within tol of the measurement, as a
                             # fraction: a count or a timing), "±" (within tol, absolute), "~=" (float32 rounding)
  tol: float = 0.25          # for "~" and "±"
  run: str | None = None     # "quick" or "full": the claim is about that size of the run only
  measure: Callable[[], float] | None = None  # instead of `out`: a value read from the repository
  count: str | None = None   # with `out`: the measured value is how often this regex occurs in group 1
  f: Callable[[re.Match], float] | None = None  # with `out`: the measured value computed from the match
  times: int = 1             # how often the section states the number with this anchor

  def pattern(self) -> re.Pattern: return anchor(self.says)
  @property
  def quiz(self) -> str | None: return self.at.split(None, 1)[1] if self.at.startswith("quiz ") else None
  def place(self) -> str: return f"{self.nb}, quiz {self.quiz}'s explanation" if self.quiz else f"{self.nb}, section '{self.at}'"

def number(s: str) -> float:
  s = re.sub(r"\s+", " ", s.strip().lower())
  return float(WORDS[s]) if s in WORDS else float(s.replace(",", ""))

def _lines(p: str) -> float: return float(len((ROOT / p).read_text().splitlines()))

KERNELS = r"lazynb trace: \d+ schedule items?, (\d+) kernels?"  # ("1 kernel", "2 kernels")
CLAIMS: list[Claim] = [
  Claim("00_index", "Try it", "{N} kernel", KERNELS),
  # 01_why
  Claim("01_why", "Small enough to read", "lazynb's … {N} lines", r"compiler \(all but notebook/\): (\d+) lines", where="below", cmp="~"),
  Claim("01_why", "Watch one line of code", "{N} kernel", KERNELS),
  Claim("01_why", "Watch one line of code", "{N} elements", r"^\s+E_(\d+)\s+CPU", times=2),
  Claim("01_why", "Why hardware engineers care", "{N} elementwise ops", r"compute ops used: \[(.*)\]", count=r"'(?!REDUCE_AXIS)\w+'", cmp="~"),
  Claim("01_why", "quiz q_first", "E_{N}", r"^\s+E_(\d+)\s+CPU", where="below"),
  # 02_setup
  Claim("02_setup", "The %%tinygrad cell magic", "{N} items", r"lazynb trace: (\d+) schedule items?"),
  Claim("02_setup", "quiz q_bytes", "{N} buffers of 32*32*4 bytes", r"(\d+) bytes moved", where="below", f=lambda m: int(m.group(1)) / (32 * 32 * 4)),
  # 03_tensor_api
  Claim("03_tensor_api", "Tensors of the intro blog", "{N} kernels", KERNELS),
  Claim("03_tensor_api", "Tensors of the intro blog", "{N} copy", r"lazynb trace: (\d+) schedule items?, (\d+) kernels?",
        f=lambda m: int(m.group(1)) - int(m.group(2))),
  # 04_laziness
  Claim("04_laziness", "Nothing runs until you ask", "realized {N} kernel", r"^realized (\d+) kernel"),
  Claim("04_laziness", "Nothing runs until you ask", "{N} kernel made", r"kernels run by realize\(\): (\d+)"),
  # 05_op_types
  Claim("05_op_types", "Reduce ops", "{N} elements", r"^\s+r_(\d+)\s+CPU"),
  Claim("05_op_types", "Reduce ops", "E_{N}", r"^\s+E_(\d+)\s+CPU"),
  Claim("05_op_types", "Reduce ops", "{N} kernels", r"^(\[\('kernel'.*\])$", where="below", count=r"'kernel'"),
  Claim("05_op_types", "Movement ops", "{N} kernel", r"w\.realize\(\): (\d+) kernels", where="below"),
  Claim("05_op_types", "Matmul and conv", "strides {T}", r"^LOAD data2: shape \([\d, ]+\) strides \(([\d, ]+)\)"),
  Claim("05_op_types", "Matmul and conv", "position {N} of", r"^\s+view 1: .* = (\d+)$"),
  Claim("05_op_types", "Matmul and conv", "offset {N}", r"^\s+view 0: shape \(1, 3, 10, 10\) .* offset (-?\d+)"),
  Claim("05_op_types", "Matmul and conv", "read {N} to {#}", r"^weights: [^\n]*\n(?:.*\n)*?memory index read by each cell.*\n\s*(\d+)"),
  Claim("05_op_types", "Matmul and conv", "read {#} to {N}",
        r"^weights: [^\n]*\n(?:.*\n)*?memory index read by each cell.*\n.*\n.*\n.*?(\d+)\s*$"),
  # 06_autograd
  Claim("06_autograd", "A first gradient", "{N} kernel", r"kernels run to read it: (\d+)"),
  Claim("06_autograd", "The rules", "{N} derivatives", r"^\d+ gradient rules cover \d+ ops \(the slides' count was (\d+)\)", where="below"),
  Claim("06_autograd", "gradient() and the chain rule", "2x + 3 = {N}", r"^dy/dx = ([\d.]+)$", where="below", cmp="~="),
  Claim("06_autograd", "gradient() and the chain rule", "(x² + 1) = {N}", r"^dz/dx = ([\d.]+)$", where="below", cmp="~="),
  # 07_pipeline
  Claim("07_pipeline", "Stage 1: the schedule", "full shape (here {T}", r"View\(shape=\(([\d, ]+)\), strides=\(4, 0, 1\)"),
  Claim("07_pipeline", "quiz q_plan", "{N} reductions", r"^(Execution plan: \d+ steps(?:\n  step .*)+)", where="below", count=r"reason=reduce"),
  # 08_backends
  Claim("08_backends", "One kernel, four renderers", "{N} instances", r"===== CL: OpenCLRenderer, global_size=\((\d+), 1, 1\)"),
  Claim("08_backends", "Adding a backend", "{N} lines", cmp="~", measure=lambda: _lines("examples/custom_backend.py")),
  Claim("08_backends", "Adding a backend", "{N} elements", r"computed on MY\s*\n.*\bE_(\d+)\("),
  # the projects
  Claim("p01_tensor_basics", "Reading the kernel", "{N} C function", KERNELS),
  Claim("p05_compiler_pipeline", "The schedule", "{N} reduces", KERNELS, f=lambda m: int(m.group(1)) - 1),
  Claim("p05_compiler_pipeline", "The schedule", "{N} kernels, the count", KERNELS),
  Claim("p03_autograd", "Gradients you can check on paper", "{N} at x = 2", r"d/dx log\(x\^2 \+ 1\) at 2 = ([\d.]+)", where="below", cmp="~="),
  # p04_mnist: the quick size (the test suite's), then the full size, checked against notebooks/runs/p04_mnist.full.ipynb
  Claim("p04_mnist", "Project 4", "{N} images for {#} steps of {#}", r"epochs of ([\d,]+) training images", where="below", run="quick"),
  Claim("p04_mnist", "Project 4", "{#} images for {N} steps of {#}", r"^quick run: width \d+, batch \d+, (\d+) steps", where="below", run="quick"),
  Claim("p04_mnist", "Project 4", "{#} images for {#} steps of {N}", r"^quick run: width \d+, batch (\d+),", where="below", run="quick"),
  Claim("p04_mnist", "Project 4", "{N} steps of {#} images", r"^full run: width \d+, batch \d+, (\d+) steps", where="below", run="full"),
  Claim("p04_mnist", "Project 4", "{#} steps of {N} images", r"^full run: width \d+, batch (\d+),", where="below", run="full"),
  Claim("p04_mnist", "Project 4", "{N} epochs", r"^\d+ steps of \d+ images: ([\d.]+) epochs", where="below", run="full"),
  Claim("p04_mnist", "Project 4", "lr {N}", r"^full run: .* Adam lr ([\d.]+),", where="below", run="full"),
  Claim("p04_mnist", "Project 4", "check … {N}%", r"^full run: .* needs > (\d+)% test accuracy", where="below", run="full"),
  Claim("p04_mnist", "Project 4", "{N} s on average", r"([\d.]+) s per step", where="below", run="full", cmp="~", tol=0.5),
  Claim("p04_mnist", "Project 4", "{N} minutes", r"s of training \(([\d.]+) min\)", where="below", run="full", cmp="~", tol=0.5),
  Claim("p04_mnist", "Project 4", "({N} s)", r"^([\d.]+) s of training", where="below", run="full", cmp="~", tol=0.5),
  Claim("p04_mnist", "Project 4", "{N}% on", r"^test accuracy ([\d.]+)% on", where="below", run="full", cmp="±", tol=0.5),
  Claim("p04_mnist", "Project 4", "test set of {N}", r"^test accuracy [\d.]+% on (\d+) images", where="below", run="full"),
  Claim("p04_mnist", "BEAM on the slowest kernel", "{N} ms against {#} ms", r"BEAM=1\s+([\d.]+) ms \[", where="below", run="full",
        cmp="~", tol=0.5),
  Claim("p04_mnist", "BEAM on the slowest kernel", "{#} ms against {N} ms", r": heuristic ([\d.]+) ms \[", where="below", run="full",
        cmp="~", tol=0.5),
  # 10_reading_the_source
  Claim("10_reading_the_source", "Tracing the path", "{N} lines", cmp="~", measure=lambda: _lines("lazynb/debug.py")),
]

ANSI = re.compile(r"\x1b\[[0-9;]*m")

def cell_text(cell) -> str:
  """A code cell's text outputs (streams, and the plain text of results and displays), colour codes removed."""
  parts, last_stream = [], None
  for o in cell.get("outputs", []):
    if o.get("output_type") == "stream":
      # one print can arrive as several stream outputs (the kernel flushes mid-line under load: "dz/dx =" then
      # " 0.8"): consecutive pieces of the same stream are one text
      if last_stream == o.get("name") and parts: parts[-1] += o.get("text", "")
      else: parts.append(o.get("text", ""))
      last_stream = o.get("name")
      continue
    last_stream = None
    if "text/plain" in o.get("data", {}): parts.append(o["data"]["text/plain"])
  return ANSI.sub("", "".join(p if p.endswith("\n") else p + "\n" for p in parts))

HEADING = re.compile(r"^#{1,6}[ \t]+(.*?)[ \t]*#*$")

def _title(s: str) -> str: return re.sub(r"\s+", " ", re.sub(r"[*`]", "", s)).strip().lower()

def sections(cells) -> list[tuple[str, list[tuple[int, str]]]]:
  """The notebook's markdown cut at its headings: (heading, [(cell index, text), ...]) for the text under each heading
  down to the next heading of any level (a section can span cells; "" holds any text before the first heading)."""
  out: list[tuple[str, list[tuple[int, str]]]] = [("", [])]
  for i, c in enumerate(cells):
    if c["cell_type"] != "markdown": continue
    fence, lines = False, []
    for ln in c["source"].split("\n") + [None]:
      m = None if ln is None or fence else HEADING.match(ln)
      if ln is not None and ln.lstrip().startswith("```"): fence = not fence
      if ln is None or m:
        if "".join(lines).strip(): out[-1][1].append((i, "\n".join(lines)))
        lines = []
        if m: out.append((m.group(1), []))
      else: lines.append(ln)
  return out

def _asks(key: str, cell) -> bool: return cell["cell_type"] == "code" and bool(re.search(rf"key=[\"']{re.escape(key)}[\"']", cell["source"]))

def region(claim: Claim, cells, explain: Callable[[str], str] | None = None) -> tuple[list[tuple[int, str]], str | None]:
  """The text the claim's anchor is looked for in, as (cell index, text) pieces, or a message saying why there is none:
  the section under the heading `claim.at` names, or the quiz's explanation placed at the cell that asks it."""
  if claim.quiz is not None:
    key = f"{claim.nb}.{claim.quiz}"
    asking = [i for i, c in enumerate(cells) if _asks(key, c)]
    if len(asking) != 1: return [], f"{claim.place()}: the quiz {key} is asked in {len(asking)} cells, not 1 (claim '{claim.says}')"
    return [(asking[0], (explain or (lambda k: answer_entry(k)["explain"]))(key))], None
  want = _title(claim.at)
  found = [s for s in sections(cells) if want in _title(s[0])]
  if len(found) > 1: found = [s for s in found if _title(s[0]) == want] or found
  if len(found) != 1:
    heads = "; ".join(repr(h) for h, _ in found) or "none"
    return [], (f"{claim.place()}: {len(found)} headings contain '{claim.at}' ({heads}), the claim '{claim.says}' needs one: "
                "name the section again in tests/notebook_prose.py")
  return found[0][1], None

def find(claim: Claim, cells, explain: Callable[[str], str] | None = None) -> tuple[list[tuple[int, re.Match]], str | None]:
  """Where the claim's anchor is: (cell index, match) for each place it occurs in its section, and a message when the
  section is missing or the anchor is not there as often as the claim says (else None)."""
  pieces, problem = region(claim, cells, explain)
  if problem: return [], problem
  hits = [(i, m) for i, text in pieces for m in claim.pattern().finditer(text)]
  if len(hits) == claim.times: return hits, None
  if not hits:
    what = "{T} a tuple of ints" if "{T}" in claim.says else "{N} a number in digits or words"
    return hits, (f"{claim.place()}: the number it states is gone: no '{claim.says}' there ({what}"
                  f"{'' if claim.times == 1 else f', expected {claim.times} times'}); state it again, or move the claim in tests/notebook_prose.py")
  return hits, (f"{claim.place()}: '{claim.says}' is there {len(hits)} times, the claim expects {claim.times}: "
                + "; ".join(repr(context(m)) for _, m in hits) + ": make the anchor tell them apart, or set times=")

def context(m: re.Match, wide: int = 30) -> str:
  """The matched anchor with a few characters of the text around it, on one line."""
  a, b = max(0, m.start() - wide), min(len(m.string), m.end() + wide)
  return ("…" if a else "") + re.sub(r"\s+", " ", m.string[a:b]).strip() + ("…" if b < len(m.string) else "")

def stated(m: re.Match) -> str: return m.group("n")

def shown(got) -> str: return f"{got:g}" if isinstance(got, float) else str(got)  # a count of 3 reads "3", not "3.0"

def measured(claim: Claim, cells, at: int) -> str | float | None:
  if claim.measure is not None: return claim.measure()
  order = range(at - 1, -1, -1) if claim.where == "above" else range(at + 1, len(cells))
  rx = re.compile(claim.out, re.M)
  for i in order:
    if cells[i]["cell_type"] != "code": continue
    m = rx.search(cell_text(cells[i]))
    if m is None: continue
    if claim.f is not None: return claim.f(m)
    if claim.count is not None: return float(len(re.findall(claim.count, m.group(1))))
    return m.group(1)
  return None

def agrees(claim: Claim, said: str, got) -> bool:
  try: s, g = number(said), float(got)
  except ValueError: return re.sub(r"\s+", "", said) == re.sub(r"\s+", "", str(got))  # a tuple such as strides
  if claim.cmp == "<": return g < s
  if claim.cmp == "~": return abs(g - s) <= claim.tol * abs(g)
  if claim.cmp == "±": return abs(g - s) <= claim.tol
  if claim.cmp == "~=": return abs(g - s) <= 1e-6 * max(1.0, abs(g))
  return g == s

RUN = re.compile(r"^(quick|full) run:", re.M)

def run_size(nb) -> str | None:
  """"quick" or "full": the size an executed notebook says it ran at (None if it says neither)."""
  sizes = {m.group(1) for c in nb["cells"] if c["cell_type"] == "code" for m in RUN.finditer(cell_text(c))}
  return sizes.pop() if len(sizes) == 1 else None

def applicable(stem: str, nb) -> list[Claim]:
  """The claims of notebook `stem` that the executed `nb` can confirm: all but those about the size it did not run at."""
  size = run_size(nb)
  return [c for c in CLAIMS if c.nb == stem and (c.run is None or c.run == size)]

def mismatches(stem: str, nb) -> list[str]:
  """Every claim of notebook `stem` that the executed notebook `nb` (a dict or NotebookNode) contradicts, or that
  cannot be checked (its section, its anchor or its measurement is missing)."""
  cells, bad = nb["cells"], []
  for claim in applicable(stem, nb):
    hits, problem = find(claim, cells)
    if problem:
      # name the value the text should state, where the section's cells measure one
      pieces = region(claim, cells)[0]
      got = next((g for i, _ in (pieces[::-1] if claim.where == "above" else pieces) for g in [measured(claim, cells, i)] if g is not None), None)
      bad.append(problem + ("" if got is None else f" (the notebook measured {shown(got)})"))
      continue
    for at, m in hits:
      got = measured(claim, cells, at)
      if got is None: bad.append(f"{claim.place()}: {context(m)!r}: no output {claim.where} it matches /{claim.out}/")
      elif not agrees(claim, stated(m), got):
        bad.append(f"{claim.place()}: the text says {stated(m)} ({context(m)!r}, anchor '{claim.says}'), but the notebook measured {shown(got)}")
  return bad

def _fold(s: str) -> str: return re.sub(r"\s+", " ", s).strip()

def explained_early(stem: str, nb) -> list[str]:
  """Quizzes of notebook `stem` whose explanation (lazynb/notebook/answers) shows in any output of the executed `nb`
  (text, HTML or widget state) before the cell that reveals the quiz, or that are never asked or revealed."""
  path, cells, bad = ANSWERS / f"{stem}.json", nb["cells"], []
  if not path.exists(): return bad
  code = [(i, c) for i, c in enumerate(cells) if c["cell_type"] == "code"]
  for name, entry in json.loads(path.read_text(encoding="utf-8")).items():
    asked = [i for i, c in code if re.search(rf"key=[\"']{re.escape(stem)}\.{name}[\"']", c["source"])]
    revealed = [i for i, c in code if re.search(rf"\b{name}\.reveal\(", c["source"]) and asked and i >= asked[0]]
    if len(asked) != 1 or not revealed:
      bad.append(f"{stem}: quiz {name} is asked in {len(asked)} cells and revealed in {len(revealed)} after that")
      continue
    forms = {_fold(entry["explain"]), _fold(html.escape(entry["explain"])), _fold(json.dumps(entry["explain"])[1:-1])}
    for i, c in code:
      if i >= revealed[0]: break
      shown = _fold(json.dumps(c.get("outputs", []), ensure_ascii=False)) + " " + _fold(cell_text(c))
      if any(f in shown for f in forms): bad.append(f"{stem}: the explanation of {name} shows in the output of cell {i}, before its reveal")
  return bad
