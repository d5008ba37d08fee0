"""Numbers the notebooks' text states, checked against what the executed notebook measured.

Each Claim names a notebook, a regex that finds the number in the text the learner reads (markdown, or with quiz=NAME
the explanation of that quiz, kept in lazynb/notebook/answers/NOTEBOOK.json and placed at the cell that asks it) and
how to read the measured value: a regex over the text
outputs of the code cells `above` the statement (nearest first) or `below` it, or a function of the repository
(for a file's length, which no cell prints). tests/test_notebooks.py runs `mismatches()` on every notebook it
executes; tests/test_notebook_prose.py checks that every statement is still in its notebook, once, and that a wrong
number is caught.

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
NUM = r"(?P<n>-?\d+(?:,\d{3})*(?:\.\d+)?|" + "|".join(sorted(WORDS, key=len, reverse=True)) + ")"

@dataclass(frozen=True)
class Claim:
  nb: str                    # notebook stem
  text: str                  # regex over the statement; {N} marks the stated number
  out: str | None = None     # regex over the outputs; group 1 is the measured value
  where: str = "above"       # "above" or "below": which code cells' outputs, nearest first
  cmp: str = "=="            # "==", "<" (stated is a bound above the measurement), "~" (within tol of the measurement, as a
                             # fraction: a count or a timing), "±" (within tol, absolute), "~=" (float32 rounding)
  tol: float = 0.25          # for "~" and "±"
  run: str | None = None     # "quick" or "full": the claim is about that size of the run only
  quiz: str | None = None    # the statement is in this quiz's explanation (the answer file), not in markdown
  measure: Callable[[], float] | None = None  # instead of `out`: a value read from the repository
  count: str | None = None   # with `out`: the measured value is how often this regex occurs in group 1
  f: Callable[[re.Match], float] | None = None  # with `out`: the measured value computed from the match

  def pattern(self) -> re.Pattern: return re.compile(self.text.replace("{N}", NUM), re.I)

def number(s: str) -> float:
  s = s.strip().lower()
  return float(WORDS[s]) if s in WORDS else float(s.replace(",", ""))

def _lines(p: str) -> float: return float(len((ROOT / p).read_text().splitlines()))

CLAIMS: list[Claim] = [
  # 00_index: the "Try it" round
  Claim("00_index", r"a copy \(the list moving from host memory to the CPU device\), then {N} kernel,",
        r"lazynb trace: \d+ schedule items, (\d+) kernels"),
  # 01_why
  Claim("01_why", r"lazynb's compiler, counted below, is about {N} lines", r"compiler \(all but notebook/\): (\d+) lines", where="below", cmp="~"),
  Claim("01_why", r"CPU device\) and {N} \*kernel\*", r"lazynb trace: \d+ schedule items, (\d+) kernels"),
  Claim("01_why", r"`E_4` \(E for elementwise, {N} elements\)", r"^\s+E_(\d+)\s+CPU"),
  Claim("01_why", r"About {N} elementwise ops plus a reduction", r"compute ops used: \[(.*)\]", count=r"'(?!REDUCE_AXIS)\w+'", cmp="~"),
  Claim("01_why", r"fused into a single kernel named E_{N}", r"^\s+E_(\d+)\s+CPU", quiz="q_first", where="below"),
  # 02_setup
  Claim("02_setup", r"The \*\*Schedule\*\* tab shows {N} items", r"lazynb trace: (\d+) schedule items"),
  Claim("02_setup", r"{N} buffers of 32\*32\*4 bytes", r"(\d+) bytes moved", quiz="q_bytes", where="below", f=lambda m: int(m.group(1)) / (32 * 32 * 4)),
  # 03_tensor_api
  Claim("03_tensor_api", r"{N} kernels ran, `t \* 2` and `t \+ 3 \+ 4`", r"lazynb trace: \d+ schedule items, (\d+) kernels"),
  Claim("03_tensor_api", r"\(and {N} copy, of the list, for the first\)", r"lazynb trace: (\d+) schedule items, (\d+) kernels",
        f=lambda m: int(m.group(1)) - int(m.group(2))),
  # 04_laziness
  Claim("04_laziness", r"`realized {N} kernel` is the DEBUG=1 line", r"^realized (\d+) kernel"),
  Claim("04_laziness", r"the AST of the {N} kernel made from it", r"kernels run by realize\(\): (\d+)"),
  # 05_op_types
  Claim("05_op_types", r"`for` loop over the {N} elements, one store", r"^\s+r_(\d+)\s+CPU"),
  Claim("05_op_types", r"The second kernel, `E_{N}`", r"^\s+E_(\d+)\s+CPU"),
  Claim("05_op_types", r"each used by every\s+element of its row, so {N} kernels", r"^(\[\('kernel'.*\])$", where="below", count=r"'kernel'"),
  Claim("05_op_types", r"moves \*\*no\*\* data and runs \*\*{N}\*\*\s+kernel", r"w\.realize\(\): (\d+) kernels", where="below"),
  Claim("05_op_types", r"The weight strides `\((?P<n>[\d, ]+)\)`", r"^LOAD data2: shape \([\d, ]+\) strides \(([\d, ]+)\)"),
  Claim("05_op_types", r"view 1 turns the index into position {N} of the", r"^\s+view 1: .* = (\d+)$"),
  Claim("05_op_types", r"moves back by the\s+padding \(offset {N}\)", r"^\s+view 0: shape \(1, 3, 10, 10\) .* offset (-?\d+)"),
  Claim("05_op_types", r"The weights read {N} to", r"^weights: [^\n]*\n(?:.*\n)*?memory index read by each cell.*\n\s*(\d+)"),
  Claim("05_op_types", r"The weights read \d+ to {N},", r"^weights: [^\n]*\n(?:.*\n)*?memory index read by each cell.*\n.*\n.*\n.*?(\d+)\s*$"),
  # 06_autograd
  Claim("06_autograd", r"compiled to a {N} kernel\.", r"kernels run to read it: (\d+)"),
  Claim("06_autograd", r"The slides say tinygrad once needed \"{N} derivatives\" \(its old `function\.py`\)",
        r"^\d+ gradient rules cover \d+ ops \(the slides' count was (\d+)\)", where="below"),
  Claim("06_autograd", r"at x = 2, where dy/dx = 2x \+ 3 = {N}", r"^dy/dx = ([\d.]+)$", where="below", cmp="~="),
  Claim("06_autograd", r"gives dz/dx = 2x / \(x² \+ 1\) = {N}\.", r"^dz/dx = ([\d.]+)$", where="below", cmp="~="),
  # 07_pipeline
  Claim("07_pipeline", r"over the kernel's full shape \(here \((?P<n>[\d, ]+)\): row, column, k\)", r"View\(shape=\(([\d, ]+)\), strides=\(4, 0, 1\)"),
  Claim("07_pipeline", r"{N} reductions \(matmul, sum, softmax's max, softmax's sum of exps\)",
        r"^(Execution plan: \d+ steps(?:\n  step .*)+)", quiz="q_plan", where="below", count=r"reason=reduce"),
  # 08_backends
  Claim("08_backends", r"the runtime\s+launches {N} instances \(`global_size`\)", r"===== CL: OpenCLRenderer, global_size=\((\d+), 1, 1\)"),
  Claim("08_backends", r"`examples/custom_backend\.py` is that skeleton filled in \(about {N} lines\)", cmp="~",
        measure=lambda: _lines("examples/custom_backend.py")),
  Claim("08_backends", r"the {N} elements were upcast, so the grid is a single point", r"computed on MY\s*\n.*\bE_(\d+)\("),
  # the projects
  Claim("p01_tensor_basics", r"The add, the relu and the sum\s+are all in {N} C function", r"lazynb trace: \d+ schedule items, (\d+) kernels"),
  Claim("p05_compiler_pipeline", r"{N} reduces \(matmul, sum, softmax's max, softmax's sum of exps\) each need a kernel, plus the final division",
        r"lazynb trace: \d+ schedule items, (\d+) kernels", quiz="q_sched", where="below", f=lambda m: int(m.group(1)) - 1),
  Claim("p03_autograd", r"d/dx log\(x\^2 \+ 1\) = 2x / \(x\^2 \+ 1\), which is {N} at x = 2", r"d/dx log\(x\^2 \+ 1\) at 2 = ([\d.]+)",
        where="below", cmp="~="),
  # p04_mnist: the quick size (the test suite's), then the full size, checked against notebooks/runs/p04_mnist.full.ipynb
  Claim("p04_mnist", r"network on {N} images for \d+ steps", r"epochs of ([\d,]+) training images", where="below", run="quick"),
  Claim("p04_mnist", r"images for {N} steps of \d+ and checks", r"^quick run: width \d+, batch \d+, (\d+) steps", where="below", run="quick"),
  Claim("p04_mnist", r"images for \d+ steps of {N} and checks", r"^quick run: width \d+, batch (\d+),", where="below", run="quick"),
  Claim("p04_mnist", r"at full size: {N} steps of \d+", r"^full run: width \d+, batch \d+, (\d+) steps", where="below", run="full"),
  Claim("p04_mnist", r"at full size: \d+ steps of {N}\s+images", r"^full run: width \d+, batch (\d+),", where="below", run="full"),
  Claim("p04_mnist", r"\(about {N} epochs\)", r"^\d+ steps of \d+ images: ([\d.]+) epochs", where="below", run="full"),
  Claim("p04_mnist", r"with Adam at lr {N}\.", r"^full run: .* Adam lr ([\d.]+),", where="below", run="full"),
  Claim("p04_mnist", r"the full run's check below asks for {N}%", r"^full run: .* needs > (\d+)% test accuracy", where="below", run="full"),
  Claim("p04_mnist", r"a step took {N} s on average", r"([\d.]+) s per step", where="below", run="full", cmp="~", tol=0.5),
  Claim("p04_mnist", r"the training took {N} minutes", r"s of training \(([\d.]+) min\)", where="below", run="full", cmp="~", tol=0.5),
  Claim("p04_mnist", r"the training took \d+ minutes\s+\({N} s\)", r"^([\d.]+) s of training", where="below", run="full", cmp="~", tol=0.5),
  Claim("p04_mnist", r"the model scored {N}% on the whole test set", r"^test accuracy ([\d.]+)% on", where="below", run="full", cmp="±", tol=0.5),
  Claim("p04_mnist", r"the whole test set of {N} images", r"^test accuracy [\d.]+% on (\d+) images", where="below", run="full"),
  Claim("p04_mnist", r"raced slower than the heuristic's kernel: {N} ms against", r"BEAM=1\s+([\d.]+) ms \[", where="below", run="full",
        cmp="~", tol=0.5),
  Claim("p04_mnist", r"raced slower than the heuristic's kernel: \d+ ms against {N} ms", r": heuristic ([\d.]+) ms \[", where="below",
        run="full", cmp="~", tol=0.5),
  # 10_reading_the_source
  Claim("10_reading_the_source", r"\(`lazynb/debug\.py` is about {N} lines\)", cmp="~", measure=lambda: _lines("lazynb/debug.py")),
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

def find(claim: Claim, cells) -> list[tuple[int, re.Match]]:
  """Where the statement is: (cell index, match) for every markdown cell whose source matches; for a quiz's
  explanation, the code cells that ask that quiz (by its key), if the explanation matches."""
  if claim.quiz is None:
    return [(i, m) for i, c in enumerate(cells) if c["cell_type"] == "markdown" for m in [claim.pattern().search(c["source"])] if m]
  key = f"{claim.nb}.{claim.quiz}"
  m = claim.pattern().search(answer_entry(key)["explain"])
  return [(i, m) for i, c in enumerate(cells) if m and c["cell_type"] == "code" and re.search(rf"key=[\"']{re.escape(key)}[\"']", c["source"])]

def stated(m: re.Match) -> str: return m.group("n")

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
  cannot be checked (the statement or the measurement is missing)."""
  cells, bad = nb["cells"], []
  for claim in applicable(stem, nb):
    hits = find(claim, cells)
    if len(hits) != 1:
      bad.append(f"{stem}: the statement /{claim.text}/ is in {len(hits)} cells, not 1")
      continue
    at, m = hits[0]
    got = measured(claim, cells, at)
    if got is None: bad.append(f"{stem}: {m.group(0)!r}: no output {claim.where} it matches /{claim.out}/")
    elif not agrees(claim, stated(m), got): bad.append(f"{stem}: the text says {m.group(0)!r}, but the notebook measured {got}")
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
