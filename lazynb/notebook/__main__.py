"""`python -m lazynb.notebook`: open the course in JupyterLab."""
import os, pathlib, shutil, subprocess, sys

def main() -> int:
  root = pathlib.Path(__file__).resolve().parents[2] / "notebooks"
  if not root.is_dir(): root = pathlib.Path.cwd() / "notebooks"
  if shutil.which("jupyter") is None:
    print("JupyterLab is not installed: pip install 'lazynb[notebook]'", file=sys.stderr)
    return 1
  start = root / "00_index.ipynb"
  cmd = ["jupyter", "lab", str(start if start.exists() else root)]
  if hasattr(os, "geteuid") and os.geteuid() == 0: cmd.append("--allow-root")
  return subprocess.call(cmd + sys.argv[1:])

if __name__ == "__main__": sys.exit(main())
