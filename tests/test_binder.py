"""Binder's build, reproduced: a fresh virtual environment gets exactly what binder/ asks for (requirements.txt
with pip, then binder/postBuild run from the repository root, as repo2docker does), and then the landing
a notebook that uses what the course uses is executed inside it, with that environment's own python as the kernel (the
course notebooks themselves run once per test session, in tests/test_newcomer.py's fresh environment: that install
differs from Binder's only in where pip reads the list from, which test_binder_files checks).

apt.txt's packages cannot be installed into a venv; the test checks that the commands they provide are here
(.ci/run installs them) and installs them with apt-get when it runs as root and they are missing, like Binder.
pip needs to reach PyPI. MNIST is read from LAZYNB_DATA (no download), as in the rest of the suite."""
import json, os, pathlib, re, shutil
from freshenv import ROOT, run, fresh_venv, execute_notebooks_script, notebook_extra, lab_extension_line

BINDER = ROOT / "binder"
APT_COMMANDS = {"clang": "clang"}
# what the course notebooks use, in one notebook: the magic with its sliders (its graphs need no Graphviz: the view's
# script lays them out), a quiz, an exercise check, show_st, safetensors, the MNIST loader (from LAZYNB_DATA) and the LLVM device
SMOKE = ["import numpy as np, ipywidgets, safetensors, llvmlite",
         "%load_ext lazynb",
         "%%tinygrad\nfrom lazynb import Tensor\na = (Tensor([1.0, 2.0, 3.0]) * 2).realize()",
         "from lazynb.notebook import show_st\nshow_st(Tensor.arange(6).reshape(2, 3).T)",
         "from lazynb.notebook.quiz import ask_number\nq = ask_number('How many kernels?', explain='one')\nq.answer(1)\nq.reveal(1)",
         "from lazynb.nn.datasets import mnist\nX_train, Y_train, X_test, Y_test = mnist()\nassert X_train.shape[0] == 60000",
         "from lazynb import Device\nassert (Tensor([1.0, 2.0], device='LLVM') + 1).tolist() == [2.0, 3.0]",
         "print('binder smoke ok')"]

def _name(req: str) -> str: return re.split(r"[<>=!~\[; ]", req.strip(), maxsplit=1)[0].lower()

def test_binder_files():
  reqs = [l.split("#")[0].strip() for l in (BINDER / "requirements.txt").read_text().splitlines()]
  reqs = [r for r in reqs if r]
  names = {_name(r) for r in reqs}
  assert {"jupyterlab", "ipywidgets", "ipykernel", "numpy", "safetensors"} <= names
  assert "torch" not in names, "the Binder image does not need torch"
  # Binder installs requirements.txt and then `pip install -e .`: it must hold what the README's [notebook] extra holds
  extra = {_name(r) for r in notebook_extra()}
  assert "safetensors" in extra and extra <= names, f"binder/requirements.txt lacks {sorted(extra - names)} of the notebook extra"
  apt = (BINDER / "apt.txt").read_text().split()
  assert "clang" in apt
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
  bindir, py, env = fresh_venv(tmp_path)
  env_dir = bindir.parent
  run([py, "-m", "pip", "install", "-q", "-r", str(BINDER / "requirements.txt")], env=env, cwd=ROOT)
  run(["bash", str(BINDER / "postBuild")], env=env, cwd=ROOT)

  # the environment is self-contained: lazynb comes from this checkout, jupyter from the venv
  p = run([py, "-c", "import lazynb, sys, json; print(json.dumps([lazynb.__file__, sys.prefix]))"], env=env, cwd=tmp_path)
  lazynb_file, prefix = json.loads(p.stdout)
  assert pathlib.Path(lazynb_file).resolve().is_relative_to(ROOT) and pathlib.Path(prefix).resolve() == env_dir.resolve()
  assert (bindir / "jupyter-lab").exists()
  lab_extension_line(bindir, env, tmp_path)   # the committed build, installed by `pip install -e .`, enabled and OK

  # execute notebooks with nbclient inside the venv; its kernel is the venv's python (the python3 kernelspec
  # of the running interpreter), which the script double-checks
  nbdir = tmp_path / "nb"
  nbdir.mkdir()
  (nbdir / "smoke.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                                                             "source": c} for c in SMOKE],
                                                  "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
  p = run([py, "-c", execute_notebooks_script(["smoke.ipynb"], nbdir, save_to=nbdir / "out")], env=env, cwd=tmp_path, timeout=900)
  assert p.stdout.count("ran ") == 1, p.stdout
