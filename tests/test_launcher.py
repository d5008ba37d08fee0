"""`python -m lazynb.notebook` (lazynb/notebook/__main__.py): the learner works on copies in course/, which git ignores,
so the tracked notebooks stay clean; the command JupyterLab is started with opens the copy of the index."""
import pathlib, subprocess, sys
from lazynb.notebook import __main__ as launcher

ROOT = pathlib.Path(__file__).resolve().parents[1]

def test_copies_are_made_once_and_the_learners_are_kept(tmp_path):
  (tmp_path / "notebooks").mkdir()
  for name in ("00_index.ipynb", "p01.ipynb"): (tmp_path / "notebooks" / name).write_text('{"cells": []}')
  dst, new = launcher.working_copies(tmp_path)
  assert dst == tmp_path / "course" and new == ["00_index.ipynb", "p01.ipynb"]
  (dst / "p01.ipynb").write_text("my work")
  (tmp_path / "notebooks" / "p02.ipynb").write_text('{"cells": [1]}')  # the course grew
  _, new = launcher.working_copies(tmp_path)
  assert new == ["p02.ipynb"] and (dst / "p01.ipynb").read_text() == "my work"  # the learner's copy is never overwritten
  (dst / "p01.ipynb").unlink()
  assert launcher.working_copies(tmp_path)[1] == ["p01.ipynb"]  # deleted: fresh again

def test_the_lab_opens_the_copy_of_the_index():
  cmd = launcher.lab_command(ROOT, ["--no-browser"])
  assert f"--ServerApp.root_dir={ROOT}" in cmd and "--LabApp.default_url=/lab/tree/course/00_index.ipynb" in cmd and cmd[-1] == "--no-browser"
  assert "--LabApp.default_url=/lab/tree/notebooks/00_index.ipynb" in launcher.lab_command(ROOT, [], "notebooks")

def test_git_ignores_the_copies():
  r = subprocess.run(["git", "check-ignore", "-q", "course/00_index.ipynb"], cwd=ROOT)
  assert r.returncode == 0, "course/ must be in .gitignore"
  r = subprocess.run(["git", "check-ignore", "-q", "notebooks/00_index.ipynb"], cwd=ROOT)
  assert r.returncode == 1

def test_running_it_without_jupyterlab_says_what_to_install(monkeypatch, capsys):
  monkeypatch.setattr(launcher.importlib.util, "find_spec", lambda name: None)
  assert launcher.main([]) == 1 and 'pip install -e ".[notebook]"' in capsys.readouterr().err
  assert sys.executable  # (the lab is started with this interpreter: lab_command's first word)
