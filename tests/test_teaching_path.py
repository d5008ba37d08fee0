"""The teaching path stays small enough to read: its files, as docs/architecture.md lists them, hold at most 5,000
code lines; the whole core (lazynb/ without the notebook layer) at most 9,000, and no module over 1,000. A code line is
one that is not blank, not a comment and not part of a docstring. By the stricter measure, which counts docstrings too
(every line that is not blank and not a comment-only line), the core is also at most 9,000 lines: long explanations
belong in docs/ (docs/internals.md, docs/jit.md), where the docstrings that point to a section find it."""
import ast, io, pathlib, re, tokenize

ROOT = pathlib.Path(__file__).resolve().parent.parent
PKG = ROOT / "lazynb"

def docstring_lines(tree: ast.AST) -> set[int]:
  out: set[int] = set()
  for node in ast.walk(tree):
    if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
      first = node.body[0]
      if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        out.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
  return out

def code_lines(src: str) -> int:
  skip = docstring_lines(ast.parse(src))
  lines: set[int] = set()
  for t in tokenize.generate_tokens(io.StringIO(src).readline):
    if t.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER): continue
    lines.update(n for n in range(t.start[0], t.end[0] + 1) if n not in skip)
  return len(lines)

def test_code_lines_counts_code_only():
  src = '"""doc\\nstring"""\n# a comment\n\nx = 1  # trailing\ndef f():\n  """doc"""\n  return (x +\n          2)\n'
  assert code_lines(src) == 4  # x = 1, def, return, its continuation

def teaching_path() -> list[str]:
  doc = (ROOT / "docs" / "architecture.md").read_text()
  block = re.search(r"<!-- teaching-path -->(.*?)<!-- /teaching-path -->", doc, re.S)
  assert block, "docs/architecture.md has lost its teaching-path list"
  return re.findall(r"`([\w/]+\.py)`", block.group(1))

def test_teaching_path_is_at_most_5000_code_lines():
  files = teaching_path()
  assert len(files) >= 20 and "pipeline.py" in files and "renderer/cstyle.py" in files
  missing = [f for f in files if not (PKG / f).is_file()]
  assert not missing, f"docs/architecture.md lists teaching-path files that do not exist: {missing}"
  sizes = {f: code_lines((PKG / f).read_text()) for f in files}
  assert sum(sizes.values()) <= 5000, f"the teaching path is {sum(sizes.values())} code lines: {sorted(sizes.items(), key=lambda kv: -kv[1])[:5]}"

def test_core_is_at_most_9000_code_lines_and_no_module_over_1000():
  sizes = {str(p.relative_to(PKG)): code_lines(p.read_text()) for p in PKG.rglob("*.py") if "notebook" not in p.relative_to(PKG).parts}
  assert sum(sizes.values()) <= 9000, f"the core is {sum(sizes.values())} code lines"
  big = {f: n for f, n in sizes.items() if n > 1000}
  assert not big, f"modules over 1,000 code lines: {big}"

def strict_lines(src: str) -> int:
  """Lines that are not blank and not comment-only: code, docstrings and every other string line count."""
  return sum(1 for line in src.splitlines() if line.strip() and not line.strip().startswith("#"))

def test_strict_lines_counts_docstrings():
  src = '"""doc\\nstring"""\n# a comment\n\nx = 1  # trailing\ndef f():\n  """doc"""\n  return (x +\n          2)\n'
  assert strict_lines(src) == 6 and code_lines(src) == 4  # the same source: its 2 docstring lines count here

def core_files() -> list[pathlib.Path]:
  return [p for p in PKG.rglob("*.py") if "notebook" not in p.relative_to(PKG).parts]

def test_core_is_at_most_9000_lines_counting_docstrings():
  sizes = {str(p.relative_to(PKG)): strict_lines(p.read_text()) for p in core_files()}
  assert len(sizes) > 50 and "tensor.py" in sizes and not any("notebook" in f for f in sizes)
  biggest = sorted(sizes.items(), key=lambda kv: -kv[1])[:5]
  assert sum(sizes.values()) <= 9000, (f"the core is {sum(sizes.values())} lines that are not blank or comments (docstrings count); "
                                       f"the biggest files: {biggest}")

def test_docstring_pointers_name_sections_that_exist():
  """A docstring that sends the reader to docs/PAGE.md, "Section" finds a heading there that starts with that name."""
  found = 0
  for p in core_files():
    for page, section in re.findall(r'docs/(\w+\.md), "([^"]+)"', p.read_text()):
      found += 1
      headings = re.findall(r"^#+ (.+)$", (ROOT / "docs" / page).read_text(), re.M)
      assert any(h.startswith(section) for h in headings), f"{p.relative_to(ROOT)} points to docs/{page}, {section!r}: no such heading"
  assert found >= 10
