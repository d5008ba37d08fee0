"""The linter (ruff, rules in pyproject.toml) over the code, tests, benchmarks, examples and tools: errors and likely
bugs (unused names, undefined names, loop variables that shadow, bare raises inside except) fail the suite."""
import pathlib, subprocess, sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

def test_ruff_finds_nothing():
  r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "lazynb", "tests", "benchmarks", "examples", "tools"],
                     cwd=ROOT, capture_output=True, text=True)
  assert r.returncode == 0, r.stdout + r.stderr

def test_ruff_would_fail_on_an_error(tmp_path):
  (tmp_path / "bad.py").write_text("import os\n")
  r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(tmp_path / "bad.py")],
                     capture_output=True, text=True)
  assert r.returncode == 1 and "F401" in r.stdout

def test_mypy_checks_unannotated_bodies_too(tmp_path):
  """pyproject.toml's [tool.mypy] checks every function body (mypy's default skips the unannotated ones): a type error in
  one fails the check. (.ci/run and the pre-commit hook run mypy over lazynb/ itself.)"""
  (tmp_path / "bad.py").write_text("def f(x):\n  return len(3)\n")
  r = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache"), "bad.py"],
                     cwd=tmp_path, capture_output=True, text=True)
  assert r.returncode == 1 and "bad.py:2: error" in r.stdout and "[arg-type]" in r.stdout, r.stdout + r.stderr
