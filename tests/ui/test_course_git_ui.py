"""Issue 32.3: working through the course leaves the repository's notebooks clean. In a git checkout of the course, the
launcher's copies (python -m lazynb.notebook: course/, which git ignores) are opened in JupyterLab, run (a %%tinygrad cell
draws its view) and saved; `git status` stays clean and the tracked notebook is byte for byte what was committed."""
from __future__ import annotations
import shutil, subprocess
import pytest
from lab_helpers import ROOT, cell, open_notebook, run_cell, save_and_read, trace_docs
from lazynb.notebook.__main__ import working_copies

pytestmark = pytest.mark.ui
NB = "04_laziness.ipynb"

def _git(repo, *args) -> str:
  return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True, capture_output=True, text=True).stdout

def test_running_a_course_notebook_leaves_git_status_clean(lab, page):
  repo = lab.root / "checkout"
  (repo / "notebooks").mkdir(parents=True)
  shutil.copy2(ROOT / "notebooks" / NB, repo / "notebooks" / NB)
  shutil.copy2(ROOT / ".gitignore", repo / ".gitignore")
  _git(repo, "init", "-q")
  _git(repo, "add", ".gitignore", f"notebooks/{NB}")
  _git(repo, "commit", "-qm", "course")
  tracked = (repo / "notebooks" / NB).read_bytes()
  dst, new = working_copies(repo)
  assert new == [NB] and dst == repo / "course"
  open_notebook(page, lab, f"checkout/course/{NB}")
  run_cell(page, 1)   # %load_ext lazynb and the imports
  run_cell(page, 3)   # a %%tinygrad cell
  cell(page, 3).locator(".lz-trace .lz-tab").first.wait_for()
  nb = save_and_read(page, lab, f"checkout/course/{NB}", 1)
  assert trace_docs(nb)[0]["kernels"]   # the copy holds the run's outputs ...
  assert _git(repo, "status", "--porcelain") == ""   # ... and git sees nothing to commit
  assert (repo / "notebooks" / NB).read_bytes() == tracked
