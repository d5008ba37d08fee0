"""docs/tensor_methods.md lists every public name of tinygrad 0.10's Tensor once, with lazynb's status: it must stay true."""
import pathlib
import re
from lazynb import Tensor

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "tensor_methods.md"
STATUSES = ("present", "added", "left out", "in progress")

def rows() -> list[tuple[str, str, str]]:
  return [(m[1], m[2].strip(), m[3].strip()) for m in re.finditer(r"^\| `([^`]+)` \|([^|]*)\|([^|]*)\|$", DOC.read_text(), re.M)]

def test_every_name_once_with_a_known_status():
  names = [n for n, _, _ in rows()]
  assert len(names) == 221, f"tinygrad 0.10.3's Tensor has 221 public names, the doc lists {len(names)}"
  assert len(set(names)) == len(names), f"listed twice: {sorted({n for n in names if names.count(n) > 1})}"
  assert names == sorted(names, key=lambda n: (n != "T", n)), "keep the list in order (T first, then alphabetical)"
  for n, status, note in rows():
    assert status.startswith(STATUSES), f"{n}: unknown status {status!r}"
    if status == "left out": assert note, f"{n}: a name left out needs its reason"

def test_statuses_match_the_code():
  for n, status, _ in rows():
    if status in ("present", "added"): assert hasattr(Tensor, n), f"the doc says lazynb.Tensor has {n}, it does not"
    if status == "left out": assert not hasattr(Tensor, n), f"lazynb.Tensor has {n} now: mark it added"

def intro() -> str:
  """The page's text above its table, where it states its counts."""
  return DOC.read_text().split("\n| name |", 1)[0]

def stated(label: str, text: str | None = None) -> list[int]:
  """The counts the text states for `label`: a number right after it ("present 149", "present: 149") or just before it
  ("149 present"; not "#12 added", an issue's number)."""
  lab = re.escape(label).replace(r"\ ", r"\s+")
  return [int(m[1] or m[2]) for m in re.finditer(rf"\b{lab}\W{{0,3}}(\d+)\b|(?<![#\w])(\d+)\s+{lab}\b", intro() if text is None else text, re.I)]

def test_counts_in_the_text_are_right():
  """Each status the table uses has its count stated once in the text, and it is the table's; the stated total too."""
  for label in STATUSES:
    n = sum(1 for _, s, _ in rows() if s.startswith(label))
    if n: assert stated(label) == [n], f"the text should state {label!r} {n} once, it states {stated(label)}"
  assert stated("names") == [len(rows())], f"the text should state the {len(rows())} names the table lists, it states {stated('names')}"

def test_the_counts_are_read_from_the_text_however_it_is_worded():
  text = "Counts: present 149, added 62, left out 10. Of the 221 names, 3 in progress and 5 present; issue #12 added"
  assert stated("present", text) == [149, 5] and stated("added", text) == [62] and stated("left out", text) == [10]
  assert stated("in progress", text) == [3] and stated("names", text) == [221]
