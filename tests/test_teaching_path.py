"""The teaching path stays small enough to read: its files, as docs/architecture.md lists them, hold at most 5,000
code lines; the whole core (lazynb/ without the notebook layer) at most 9,000, and no module over 1,000. A code line is
one that is not blank, not a comment and not part of a docstring."""
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
