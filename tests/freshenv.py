"""Helpers for the tests that install lazynb the way a user does (test_binder.py, test_newcomer.py): a clean virtual
environment with its own HOME, and a PATH from which some programs (node, dot) are removed while everything else on
it, the C compilers included, stays."""
from __future__ import annotations
import os, pathlib, re, shutil, subprocess, venv

ROOT = pathlib.Path(__file__).resolve().parent.parent
NODE = ("node", "nodejs", "npm", "npx", "corepack", "yarn", "pnpm")

def run(cmd, **kw) -> subprocess.CompletedProcess:
  """Run a command; on failure, the assertion shows the ends of its output."""
  p = subprocess.run(cmd, capture_output=True, text=True, **kw)
  assert p.returncode == 0, f"{cmd} failed ({p.returncode})\n--- stdout\n{p.stdout[-3000:]}\n--- stderr\n{p.stderr[-3000:]}"
  return p

def path_without(names, into: pathlib.Path, path: str | None = None) -> str:
  """A one-folder PATH: a link to every program on `path` (the first of each name, as PATH lookup would find it)
  except `names`. Removing /usr/bin from PATH would take the compilers with node; this takes only node."""
  into.mkdir(parents=True, exist_ok=True)
  for d in (path if path is not None else os.environ.get("PATH", "")).split(os.pathsep):
    if not d or not os.path.isdir(d): continue
    for entry in os.scandir(d):
      link = into / entry.name
      if entry.name in names or link.exists() or link.is_symlink(): continue
      if entry.is_file() and os.access(entry.path, os.X_OK): link.symlink_to(os.path.abspath(entry.path))
  for n in names: assert shutil.which(n, path=str(into)) is None, n
  return str(into)

def notebook_extra() -> list[str]:
  """The requirements of pyproject.toml's [notebook] extra (read without tomllib, which Python 3.10 lacks)."""
  block = re.search(r"^notebook = \[(.*?)\]", (ROOT / "pyproject.toml").read_text(), re.M | re.S)
  assert block, "pyproject.toml has no notebook extra"
  return re.findall(r'"([^"]+)"', block.group(1))

def lab_extension_line(bindir: pathlib.Path, env: dict, cwd) -> str:
  """`jupyter labextension list` in that environment: lazynb's line, which must say enabled and OK, found in the
  environment's own share/jupyter (not in the one running the tests)."""
  p = run([str(bindir / "jupyter"), "labextension", "list"], env=env, cwd=cwd, timeout=300)
  out = re.sub(r"\x1b\[[0-9;]*m", "", p.stdout + p.stderr)
  line = next((ln for ln in out.splitlines() if re.match(r"\s*lazynb v\d", ln)), None)
  assert line is not None, f"the lazynb JupyterLab extension is not installed:\n{out}"
  assert re.search(r"\benabled\s+OK\b", line) and "(python, lazynb)" in line, line
  section = out[:out.index(line)].rsplit("labextensions", 1)[0].splitlines()[-1]
  assert str(bindir.parent) in section, out
  return line

def data_dir() -> str:
  """The course data as CI has it (../shared/data next to the checkout), unless LAZYNB_DATA says otherwise."""
  return os.environ.get("LAZYNB_DATA") or str(ROOT.parent / "shared" / "data")

def fresh_venv(tmp_path: pathlib.Path, hide=()) -> tuple[pathlib.Path, str, dict]:
  """A new virtual environment with pip and nothing else, and the environment variables of a new user who activated it:
  its bin/ first on PATH, an empty HOME, no PYTHONPATH or Jupyter paths of ours, pip's usual cache (only to save time).
  `hide`: programs taken off PATH. Returns (its bin folder, its python, env)."""
  env_dir = tmp_path / "venv"
  venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
  bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
  base = os.environ.get("PATH", "")
  if hide: base = path_without(set(hide), tmp_path / "path")
  env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV") and not k.startswith("JUPYTER")}
  (tmp_path / "home").mkdir()
  env.update(PATH=str(bindir) + os.pathsep + base, VIRTUAL_ENV=str(env_dir), PIP_DISABLE_PIP_VERSION_CHECK="1",
             JUPYTER_PLATFORM_DIRS="1", HOME=str(tmp_path / "home"), LAZYNB_CACHE=str(tmp_path / "cache"), BEAM_PROGRESS="0",
             PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR") or str(pathlib.Path.home() / ".cache" / "pip"), LAZYNB_DATA=data_dir())
  return bindir, str(bindir / "python"), env

def execute_notebooks_script(names, notebooks: pathlib.Path, timeout: int = 600, save_to: pathlib.Path | None = None) -> str:
  """Python source that executes the named notebooks with nbclient in the interpreter that runs it (so the kernel is
  that environment's python, which it checks) and prints one `ran NAME` line per notebook that had no error.
  `save_to`: a folder where each executed notebook is written, as run (the kernel check cell taken out again), so that
  tests/test_notebooks.py checks these outputs instead of running the notebook a second time."""
  out = str(save_to) if save_to else None
  return f"""
import os, sys, time, nbformat, nbclient
failed, out = [], {out!r}
if out is not None: os.makedirs(out, exist_ok=True)
for name in {list(names)!r}:
  t0 = time.time()
  nb = nbformat.read({str(notebooks)!r} + "/" + name, as_version=4)
  nb.cells.insert(0, nbformat.v4.new_code_cell("import sys; print('KERNEL', sys.executable)"))
  try: nbclient.NotebookClient(nb, timeout={timeout}, kernel_name="python3", resources={{"metadata": {{"path": {str(notebooks)!r}}}}}).execute()
  except Exception as e: failed.append((name, type(e).__name__, str(e)[-1500:])); continue
  kernel = next(o["text"] for o in nb.cells[0].outputs if o.get("output_type") == "stream")
  assert kernel.split()[1].startswith(sys.prefix), (kernel, sys.prefix)
  if out is not None:
    del nb.cells[0]
    nbformat.write(nb, os.path.join(out, name))
  print("ran", name, f"{{time.time() - t0:.0f}} s", flush=True)
assert not failed, "\\n\\n".join(f"{{n}}: {{t}}: {{m}}" for n, t, m in failed)
"""
