"""`python -m lazynb.notebook [jupyter lab options]`: open the course in JupyterLab, at notebooks/00_index.ipynb.

JupyterLab serves the whole checkout (as Binder does), so the file browser also shows lazynb/ and tests/, which the
course reads; the page opens at /lab/tree/notebooks/00_index.ipynb. It runs `python -m jupyterlab` with this very
interpreter, so the lab (and its kernel) is the one from the environment lazynb was installed into, whatever
`jupyter` is first on PATH."""
from __future__ import annotations
import importlib.util, os, pathlib, subprocess, sys

INDEX = "00_index.ipynb"

def course_root() -> pathlib.Path | None:
  """The checkout that holds notebooks/: the one lazynb is installed from (pip install -e .), else the current folder."""
  for root in (pathlib.Path(__file__).resolve().parents[2], pathlib.Path.cwd()):
    if (root / "notebooks" / INDEX).is_file(): return root
  return None

def lab_command(root: pathlib.Path, extra: list[str]) -> list[str]:
  cmd = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}", str(root / "notebooks" / INDEX)]
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
  cmd = lab_command(root, argv)
  if os.name == "posix": os.execv(cmd[0], cmd)   # become JupyterLab: Ctrl-C and signals reach the server itself
  return subprocess.call(cmd)

if __name__ == "__main__": sys.exit(main(sys.argv[1:]))
