"""The course text names only tabs the trace view has: a `**Name** tab` (or `*Name* tab`, `*A* and *B* tabs`) in the
notebooks' sources, the README and the docs must be one of the view's tab titles (labextension/src/tabs.ts)."""
import pathlib, re

ROOT = pathlib.Path(__file__).resolve().parent.parent

def tab_titles() -> set[str]:
  ts = (ROOT / "labextension" / "src" / "tabs.ts").read_text()
  block = re.search(r"TAB_TITLES[^{]*\{(.*?)\}", ts, re.S)
  assert block, "labextension/src/tabs.ts has no TAB_TITLES"
  return set(re.findall(r":\s*'([^']+)'", block.group(1)))

NAMED = re.compile(r"\*{1,2}([A-Z][A-Za-z ]+?)\*{1,2}(?: and \*{1,2}([A-Z][A-Za-z ]+?)\*{1,2})? tabs?\b")

def named_tabs(text: str) -> set[str]:
  return {n for m in NAMED.finditer(text.replace("\n# ", " ").replace("\n", " ")) for n in m.groups() if n}

def test_the_pattern_finds_tab_names():
  assert named_tabs("the **Kernels** tab, the *Tensor graph* and *Rewrites* tabs") == {"Kernels", "Tensor graph", "Rewrites"}
  assert tab_titles() >= {"Kernels", "Tensor graph", "Rewrites", "Timing"}

def test_course_text_names_real_tabs():
  titles = tab_titles()
  files = sorted((ROOT / "notebooks" / "src").glob("*.py")) + [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
  wrong = {f"{p.relative_to(ROOT)}: {n}" for p in files for n in named_tabs(p.read_text()) if n not in titles}
  assert not wrong, f"text names tabs the view does not have (its tabs: {sorted(titles)}): {sorted(wrong)}"
