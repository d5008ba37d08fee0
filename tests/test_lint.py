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
