"""Binder's build, reproduced: a fresh virtual environment gets exactly what binder/ asks for (requirements.txt
with pip, then binder/postBuild run from the repository root, as repo2docker does), and then the landing
notebook and one course notebook are executed inside it, with that environment's own python as the kernel.

apt.txt's packages cannot be installed into a venv; the test checks that the commands they provide are here
(.ci/run installs them) and installs them with apt-get when it runs as root and they are missing, like Binder.
pip needs to reach PyPI. MNIST is read from LAZYNB_DATA (no download), as in the rest of the suite."""
import json, os, pathlib, shutil, subprocess, textwrap, venv

ROOT = pathlib.Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
APT_COMMANDS = {"graphviz": "dot", "clang": "clang"}
NOTEBOOKS = ["00_index.ipynb", "p01_tensor_basics.ipynb"]

def run(cmd, **kw):
  p = subprocess.run(cmd, capture_output=True, text=True, **kw)
  assert p.returncode == 0, f"{cmd} failed ({p.returncode})\n--- stdout\n{p.stdout[-3000:]}\n--- stderr\n{p.stderr[-3000:]}"
  return p

def test_binder_files():
  reqs = [l.split("#")[0].strip() for l in (BINDER / "requirements.txt").read_text().splitlines()]
  reqs = [r for r in reqs if r]
  names = {r.split(">")[0].split("=")[0].split("<")[0].strip().lower() for r in reqs}
  assert {"jupyterlab", "ipywidgets", "ipykernel", "numpy", "safetensors"} <= names
  assert "torch" not in names, "the Binder image does not need torch"
  apt = (BINDER / "apt.txt").read_text().split()
  assert {"graphviz", "clang"} <= set(apt)
  post = (BINDER / "postBuild").read_text()
  assert post.startswith("#!/bin/bash") and "\nset -e\n" in post and "pip install" in post and " -e ." in post
  assert os.access(BINDER / "postBuild", os.X_OK), "repo2docker runs postBuild directly: it must be executable"
  readme = (ROOT / "README.md").read_text()
  assert "https://mybinder.org/v2/gh/lazynb/lazynb/HEAD?urlpath=lab/tree/notebooks/00_index.ipynb" in readme
  assert (ROOT / "notebooks" / "00_index.ipynb").is_file()

def test_binder_build_and_run(tmp_path):
  # apt.txt
  missing = [pkg for pkg in (BINDER / "apt.txt").read_text().split() if shutil.which(APT_COMMANDS.get(pkg, pkg)) is None]
  if missing and hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
    run(["apt-get", "update", "-qq"])
    run(["apt-get", "install", "-y", "-qq", *missing], env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    missing = [pkg for pkg in missing if shutil.which(APT_COMMANDS.get(pkg, pkg)) is None]
  assert not missing, f"apt.txt packages not installed here: {missing}"

  # a fresh environment with pip, nothing else
  env_dir = tmp_path / "venv"
  venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
  bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
  py = str(bindir / "python")
  env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "JUPYTER_PATH", "JUPYTER_DATA_DIR")}
  env.update(PATH=str(bindir) + os.pathsep + os.environ.get("PATH", ""), VIRTUAL_ENV=str(env_dir), PIP_DISABLE_PIP_VERSION_CHECK="1",
             JUPYTER_PLATFORM_DIRS="1", HOME=str(tmp_path / "home"), LAZYNB_CACHE=str(tmp_path / "cache"), BEAM_PROGRESS="0",
             PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR") or str(pathlib.Path.home() / ".cache" / "pip"))  # a fresh HOME, pip's usual cache
  env["LAZYNB_DATA"] = os.environ.get("LAZYNB_DATA") or str(ROOT.parent / "shared" / "data")
  (tmp_path / "home").mkdir()
  run([py, "-m", "pip", "install", "-q", "-r", str(BINDER / "requirements.txt")], env=env, cwd=ROOT)
  run(["bash", str(BINDER / "postBuild")], env=env, cwd=ROOT)

  # the environment is self-contained: lazynb comes from this checkout, jupyter from the venv
  p = run([py, "-c", "import lazynb, sys, json; print(json.dumps([lazynb.__file__, sys.prefix]))"], env=env, cwd=tmp_path)
  lazynb_file, prefix = json.loads(p.stdout)
  assert pathlib.Path(lazynb_file).resolve().is_relative_to(ROOT) and pathlib.Path(prefix).resolve() == env_dir.resolve()
  assert (bindir / "jupyter-lab").exists()
  if (ROOT / "lazynb" / "labextension" / "package.json").is_file():
    p = run([str(bindir / "jupyter"), "labextension", "list"], env=env, cwd=tmp_path)
    assert "lazynb" in p.stdout + p.stderr, "the JupyterLab extension is not installed in the Binder environment"

  # execute notebooks with nbclient inside the venv; its kernel is the venv's python (the python3 kernelspec
  # of the running interpreter), which the script double-checks
  script = textwrap.dedent(f"""
    import sys, nbformat, nbclient
    for name in {NOTEBOOKS!r}:
      path = {str(ROOT / "notebooks")!r} + "/" + name
      nb = nbformat.read(path, as_version=4)
      nb.cells.insert(0, nbformat.v4.new_code_cell("import sys; print('KERNEL', sys.executable)"))
      nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={{"metadata": {{"path": {str(ROOT / "notebooks")!r}}}}}).execute()
      outs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
      errors = [o for o in outs if o.get("output_type") == "error"]
      assert not errors, (name, [(o["ename"], o["evalue"]) for o in errors])
      kernel = next(o["text"] for o in nb.cells[0].outputs if o.get("output_type") == "stream")
      assert kernel.split()[1].startswith(sys.prefix), (kernel, sys.prefix)
      print("ran", name, "with", kernel.strip())
  """)
  p = run([py, "-c", script], env=env, cwd=tmp_path, timeout=900)
  assert p.stdout.count("ran ") == len(NOTEBOOKS), p.stdout
