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

def test_counts_in_the_text_are_right():
  counts = re.search(r"Counts: ([^.]*)\.", DOC.read_text())[1]
  for part in counts.split(", "):
    label, k = part.rsplit(" ", 1)
    assert sum(1 for _, s, _ in rows() if s.startswith(label)) == int(k), f"count of {label!r}"
