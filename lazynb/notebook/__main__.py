"""`python -m lazynb.notebook [jupyter lab options]`: open the course in JupyterLab, at your copy of 00_index.ipynb.

The course's notebooks in notebooks/ are tracked by git and stay as they are: the first start copies each one into
course/ next to them (which git ignores), and JupyterLab opens the copies. Your outputs and edits live there, so
`git pull` never meets them; a notebook the course adds later is copied at the next start, and a copy you delete comes
back fresh. (`--originals` opens notebooks/ itself, for course authors.)

JupyterLab serves the whole checkout (as Binder does), so the file browser also shows lazynb/ and tests/, which the
course reads. It runs `python -m jupyterlab` with this very interpreter, so the lab (and its kernel) is the one from
the environment lazynb was installed into, whatever `jupyter` is first on PATH."""
from __future__ import annotations
import importlib.util, os, pathlib, shutil, subprocess, sys

INDEX = "00_index.ipynb"
COPIES = "course"  # the learner's copies, next to notebooks/ (.gitignore lists it)

def course_root() -> pathlib.Path | None:
  """The checkout that holds notebooks/: the one lazynb is installed from (pip install -e .), else the current folder."""
  for root in (pathlib.Path(__file__).resolve().parents[2], pathlib.Path.cwd()):
    if (root / "notebooks" / INDEX).is_file(): return root
  return None

def working_copies(root: pathlib.Path) -> tuple[pathlib.Path, list[str]]:
  """course/ with a copy of every course notebook it lacks (an existing copy is the learner's: it is never touched);
  returns the folder and the names copied now."""
  dst = root / COPIES
  dst.mkdir(exist_ok=True)
  new = []
  for nb in sorted((root / "notebooks").glob("*.ipynb")):
    if not (dst / nb.name).exists():
      shutil.copy2(nb, dst / nb.name)
      new.append(nb.name)
  return dst, new

def lab_command(root: pathlib.Path, extra: list[str], folder: str = COPIES) -> list[str]:
  # the page to open, relative to the root JupyterLab serves (an absolute path there opens the Launcher instead)
  cmd = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}", f"--LabApp.default_url=/lab/tree/{folder}/{INDEX}"]
  if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in extra: cmd.append("--allow-root")
  return cmd + extra

def main(argv: list[str]) -> int:
  if importlib.util.find_spec("jupyterlab") is None:
    print("JupyterLab is not installed here: from the lazynb checkout run  pip install -e \".[notebook]\"", file=sys.stderr)
    return 1
  root = course_root()
  if root is None:
    print(f"notebooks/{INDEX} was not found next to lazynb or in {pathlib.Path.cwd()}: run this from the lazynb checkout", file=sys.stderr)
    return 1
  if "--originals" in argv:
    argv = [a for a in argv if a != "--originals"]
    folder = "notebooks"
  else:
    dst, new = working_copies(root)
    folder = COPIES
    print(f"lazynb: your copies of the course are in {dst}" + (f" ({len(new)} new)" if new else "") +
          "; git ignores them, and notebooks/ stays as the course ships it (delete a copy to start it afresh)", file=sys.stderr)
  cmd = lab_command(root, argv, folder)
  if os.name == "posix": os.execv(cmd[0], cmd)   # become JupyterLab: Ctrl-C and signals reach the server itself
  return subprocess.call(cmd)

if __name__ == "__main__": sys.exit(main(sys.argv[1:]))
