"""Counts in what the notebook layer, the views (Python and TypeScript) and the DEBUG printer write go through a plural helper:
"1 kernel", never "1 kernels". A source check finds a count written straight before a plural noun (the class of bug),
and the printer, the trace text and the playground are run on one-kernel cells to see the words they print."""
import contextlib, io, pathlib, re, pytest
from lazynb import Tensor
from lazynb.helpers import plural, Context

ROOT = pathlib.Path(__file__).resolve().parents[1] / "lazynb"
FILES = sorted([*(ROOT / "notebook").glob("*.py"), *(ROOT / "engine").glob("*.py"),
                *(ROOT / p for p in ("debug.py", "trace.py", "pipeline.py", "device.py", "uop/rewrite.py")),
                *(ROOT.parent / "labextension" / "src").glob("*.ts")])  # the views' TypeScript: `${n} kernels` is the same bug
NOUNS = ("kernels", "items", "copies", "steps", "runs", "nodes", "lines", "rounds", "candidates", "passes", "times", "ops", "views",
         "tensors", "stages", "graphs", "rewrites", "buffers", "entries", "cells", "values", "elements", "bytes")
# "{n} kernels" (a count straight before a plural noun), and plurals made by hand: "kernel{'s' if n != 1 else ''}"
COUNT_THEN_NOUN = re.compile(r"\{([^{}]*)\}\s+(" + "|".join(NOUNS) + r")\b(?!=)")
HAND_MADE = re.compile(r"""\{\s*['"](s|ies|es)['"] if |else ['"](s|ies|es)['"]\s*\}""")
ONE_PLURAL = re.compile(r"\b1 (" + "|".join(NOUNS) + r")\b(?!=)")

def test_plural_helper():
  assert [plural(n, "kernel") for n in (0, 1, 2)] == ["0 kernels", "1 kernel", "2 kernels"]
  assert plural(1, "copy", "copies") == "1 copy" and plural(3, "copy", "copies") == "3 copies"

def _offences(text: str) -> list[str]:
  out = []
  for i, line in enumerate(text.splitlines(), 1):
    for m in COUNT_THEN_NOUN.finditer(line):
      if not re.fullmatch(r"[A-Z_][A-Z0-9_]*(:[^{}]*)?", m.group(1).strip()): out.append(f"{i}: {m.group(0)}")  # a CONSTANT is never 1
    if HAND_MADE.search(line): out.append(f"{i}: {line.strip()}")
  return out

def test_the_source_check_finds_the_bug():
  assert _offences('print(f"{len(ks)} kernels ran")') and _offences("x = f\"{n} kernel{'s' if n != 1 else ''}\"")
  assert not _offences('print(f"{plural(len(ks), \'kernel\')} ran, {MAX_KERNELS} kernels at most")')
  assert _offences("const t = `${doc.kernels.length} kernels`;") and not _offences("const t = `${plural(n, 'kernel')} ran`;")

@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT.parent)))
def test_counts_before_plural_nouns_use_the_helper(path):
  assert not (bad := _offences(path.read_text())), f"{path.name}: write these counts with helpers.plural:\n" + "\n".join(bad)

def test_debug_printer_says_one_kernel():
  out = io.StringIO()
  with contextlib.redirect_stdout(out), Context(DEBUG=5): (Tensor([1.0, 2.0, 3.0]) * 2 + 1).realize()
  text = out.getvalue()
  assert "realized 1 kernel" in text and not ONE_PLURAL.search(text), text

def test_trace_text_and_playground_say_one_kernel():
  from lazynb.trace import capture
  from lazynb.notebook.playground import Playground
  t = Tensor([1.0, 2.0, 3.0, 4.0]) + 1
  with capture() as tr: t.realize()
  doc = tr.to_json()
  assert len(doc["kernels"]) == 1
  from lazynb.notebook.viz import text_fallback
  for text in (tr.summary(), text_fallback(doc)): assert not ONE_PLURAL.search(text), text
  with pytest.raises(IndexError, match=r"the schedule has 1 kernel$"): Playground(Tensor([1.0, 2.0]) * 3, 5)
