"""The README's path, taken as a newcomer takes it: a clean virtual environment (nothing but pip), the README's first
setup command run verbatim with node removed from PATH (the C compilers stay), and then: JupyterLab lists the lazynb
extension as enabled and OK, `python -m lazynb.notebook` serves the checkout and opens the learner's copy of
00_index.ipynb (course/), and
every notebook runs in that environment (LAZYNB_QUICK=1, MNIST from LAZYNB_DATA as in CI: ../shared/data).
tests/test_binder.py does the same for Binder's files. pip needs to reach PyPI.

Also here, because a newcomer meets them first: the README has exactly two setup commands; the %%tinygrad magic
without its optional packages shows the static view and says once what to install; and no file in the repository
names a path of one particular machine."""
from __future__ import annotations
import json, os, re, shutil, signal, socket, subprocess, sys, textwrap, time, urllib.parse, urllib.request
from pathlib import Path
import pytest
from lazynb.notebook import viz
from freshenv import ROOT, NODE, run, fresh_venv, path_without, lab_extension_line, execute_notebooks_script

NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
OPEN = " && python -m lazynb.notebook"

def setup_commands() -> list[str]:
  """The shell blocks of the README's Setup section, in order."""
  text = (ROOT / "README.md").read_text()
  m = re.search(r"^## Setup\b.*?(?=^## )", text, re.M | re.S)
  assert m, "README.md has no '## Setup' section"
  return [b.strip() for b in re.findall(r"^```(?:bash|sh|console)?\n(.*?)^```", m.group(0), re.M | re.S)]

def test_readme_has_two_setup_commands():
  cmds = setup_commands()
  assert len(cmds) == 2 and all("\n" not in c for c in cmds), cmds
  assert cmds[0].endswith(OPEN) and cmds[0].startswith("pip install -e ") and "[notebook]" in cmds[0], cmds[0]
  assert cmds[1] == "bash .ci/run", cmds[1]
  readme = (ROOT / "README.md").read_text()
  # what each path needs, and where the data comes from: the names, commands and versions, however the text words them
  for needed in ("C compiler", "node", "npm run build:prod", "LAZYNB_DATA", "LAZYNB_QUICK", "00_index.ipynb"):
    assert needed in readme, needed
  python = re.search(r'^requires-python\s*=\s*">=\s*([\d.]+)"', (ROOT / "pyproject.toml").read_text(), re.M)[1]
  said = re.findall(r"Python\s*(?:≥|>=)\s*(\d+(?:\.\d+)*)|Python\s+(\d+(?:\.\d+)*)\s*(?:\+|or\s+(?:newer|later))", readme)
  said = [a or b for a, b in said]
  assert said and set(said) == {python}, f"the README states Python {sorted(set(said))} as the minimum, pyproject.toml requires >= {python}"
  scripts = json.loads((ROOT / "labextension" / "package.json").read_text())["scripts"]
  assert not set(re.findall(r"npm run ([\w:-]+)", readme)) - set(scripts), "the README runs an npm script labextension/package.json lacks"

# ---------------------------------------------------------------------------------------------- the newcomer's venv

@pytest.fixture(scope="module")
def newcomer(tmp_path_factory):
  """Command one's install part, verbatim, in a clean venv without node: (bin folder, python, env, scratch dir)."""
  tmp = tmp_path_factory.mktemp("newcomer")
  bindir, py, env = fresh_venv(tmp, hide=NODE)
  assert all(shutil.which(n, path=env["PATH"]) is None for n in NODE)
  assert any(shutil.which(cc, path=env["PATH"]) for cc in ("clang", "cc", "gcc")), "no C compiler left on PATH"
  install = setup_commands()[0].removesuffix(OPEN)
  t0 = time.time()
  run(["bash", "-e", "-c", install], env=env, cwd=ROOT, timeout=1800)
  print(f"\nnewcomer install ({install}): {time.time() - t0:.0f} s")
  p = run([py, "-c", "import lazynb, sys, json; print(json.dumps([lazynb.__file__, sys.prefix]))"], env=env, cwd=tmp)
  lazynb_file, prefix = json.loads(p.stdout)
  assert Path(lazynb_file).resolve().is_relative_to(ROOT) and Path(prefix).resolve() == bindir.parent.resolve()
  return bindir, py, env, tmp

def test_newcomer_gets_the_lab_extension(newcomer):
  bindir, _, env, tmp = newcomer
  print(lab_extension_line(bindir, env, tmp))

def _free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]

def _get(url: str, token: str) -> tuple[int, str]:
  req = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
  with urllib.request.urlopen(req, timeout=30) as r: return r.status, r.read().decode()

def test_newcomer_opens_the_index(newcomer):
  """Command one's second half, `python -m lazynb.notebook`, run from elsewhere: the browser it asks for (a recorder
  named in $BROWSER) is sent to the learner's copy of 00_index.ipynb (course/, which git ignores), which the server it
  started serves, with lazynb's extension; the tracked notebooks are left as they are."""
  _, py, env, tmp = newcomer
  opened, recorder = tmp / "opened.txt", tmp / "browser.py"
  recorder.write_text(f"import sys, pathlib; pathlib.Path({str(opened)!r}).write_text(sys.argv[1])\n")
  port, token = _free_port(), "newcomer-test"
  env = dict(env, BROWSER=f"{py} {recorder} %s", JUPYTER_RUNTIME_DIR=str(tmp / "runtime"))
  log = open(tmp / "lab.log", "w")
  proc = subprocess.Popen([py, "-m", "lazynb.notebook", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
                           f"--IdentityProvider.token={token}"], env=env, cwd=tmp, stdout=log, stderr=subprocess.STDOUT,
                          start_new_session=True)
  try:
    deadline = time.time() + 180
    while not opened.exists() and proc.poll() is None and time.time() < deadline: time.sleep(0.5)
    assert opened.exists(), f"no browser was asked to open anything (exit {proc.poll()}):\n{(tmp / 'lab.log').read_text()[-3000:]}"
    target = opened.read_text()
    if target.startswith("file:"):   # JupyterLab's redirect page (it keeps the token out of the process list)
      page = Path(urllib.parse.unquote(urllib.parse.urlparse(target).path)).read_text()
      target = re.search(r'href="(http[^"]+)"', page).group(1)
    url = urllib.parse.urlparse(target)
    assert url.path == "/lab/tree/course/00_index.ipynb" and url.port == port, target
    status, body = _get(f"http://127.0.0.1:{port}/api/contents/course/00_index.ipynb?content=0", token)
    assert status == 200 and json.loads(body)["type"] == "notebook"   # served from the checkout's root
    status, body = _get(f"http://127.0.0.1:{port}{url.path}", token)
    config = json.loads(re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', body, re.S).group(1))
    assert status == 200 and "lazynb" in [e["name"] for e in config.get("federated_extensions", [])], config.get("federated_extensions")
    # the process started is the server itself (its pid names the server's runtime file), so stopping it stops the lab
    assert (tmp / "runtime" / f"jpserver-{proc.pid}.json").is_file(), sorted(p.name for p in (tmp / "runtime").iterdir())
  finally:
    for sig in (signal.SIGTERM, signal.SIGKILL):   # its own session: the server and anything it started
      try: os.killpg(proc.pid, sig)
      except ProcessLookupError: break
      try:
        proc.wait(30)
        break
      except subprocess.TimeoutExpired: pass
    log.close()

def test_newcomer_runs_every_notebook(newcomer, executed_notebooks):
  """Every notebook, executed in the newcomer's environment; the executed copies are kept for tests/test_notebooks.py,
  which checks their outputs (so each notebook runs once per test session)."""
  _, py, env, tmp = newcomer
  assert len(NOTEBOOKS) >= 18, NOTEBOOKS
  t0 = time.time()
  script = execute_notebooks_script(NOTEBOOKS, ROOT / "notebooks", save_to=executed_notebooks)
  p = run([py, "-c", script], env=dict(env, LAZYNB_QUICK="1"), cwd=tmp, timeout=3600)
  print(p.stdout, f"all {len(NOTEBOOKS)} notebooks: {time.time() - t0:.0f} s")
  assert p.stdout.count("ran ") == len(NOTEBOOKS), p.stdout

def test_newcomer_runs_every_notebook_again_on_a_warm_cache(newcomer):
  """A learner runs a notebook more than once: the second time, the disk cache holds every kernel the first run
  compiled (a cell that expects a compile, or DEBUG output that only a compile prints, fails here). Runs after
  test_newcomer_runs_every_notebook in file order, with the same cache."""
  _, py, env, tmp = newcomer
  assert any(Path(env["LAZYNB_CACHE"]).iterdir()), "the first run left no disk cache"
  script = execute_notebooks_script(NOTEBOOKS, ROOT / "notebooks")
  p = run([py, "-c", script], env=dict(env, LAZYNB_QUICK="1"), cwd=tmp, timeout=3600)
  assert p.stdout.count("ran ") == len(NOTEBOOKS), p.stdout

# ---------------------------------------------------------------------------------------------- degraded magic

HIDE = textwrap.dedent("""
  import sys
  print("KERNEL", sys.prefix)
  class _Blocked:   # as if these packages were not installed
    def find_spec(self, name, path=None, target=None):
      if name.split(".")[0] in {hidden!r}: raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
  sys.meta_path.insert(0, _Blocked())
  for m in [m for m in sys.modules if m.split(".")[0] in {hidden!r}]: del sys.modules[m]
""")
CELLS = ["%load_ext lazynb", "%%tinygrad\na = (Tensor([1.0, 2.0, 3.0]) * 2).realize()", "%%tinygrad --show graph,timing\nb = (a + 1).sum().realize()"]

def _magic_notebook(tmp_path, hidden: tuple[str, ...], path: str) -> list:
  """Run CELLS in a real kernel whose first cell hides `hidden` (Python packages); `path` is the kernel's PATH."""
  script = textwrap.dedent(f"""
    import json, nbformat, nbclient
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in {[HIDE.format(hidden=set(hidden))] + CELLS!r}]
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    print(json.dumps([c.outputs for c in nb.cells]))
  """)
  # this interpreter (and its packages) seen from a folder of its own, so that a graphviz-pure script next to the real
  # one cannot be found when it is hidden; its bin/ comes first on PATH, so any python3 kernelspec resolves to it
  pydir = tmp_path / "py"
  subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(pydir)], check=True, timeout=300)
  env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
  # the packages of the interpreter running the tests (which may itself be a venv's), lazynb from this checkout
  sites = [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p)]
  env.update(PATH=str(pydir / "bin") + os.pathsep + path, PYTHONPATH=os.pathsep.join([str(ROOT), *sites]), HOME=str(tmp_path),
             LAZYNB_CACHE=str(tmp_path / "cache"))
  p = run([str(pydir / "bin" / "python"), "-c", script], env=env, cwd=tmp_path, timeout=600)
  outs = json.loads(p.stdout.strip().splitlines()[-1])
  assert _texts(outs[0]).split()[1] == str(pydir), _texts(outs[0])
  return outs

def _texts(outs) -> str: return "".join(o.get("text", "") for o in outs if o["output_type"] == "stream")

def test_magic_without_optional_packages(tmp_path):
  """No ipywidgets, matplotlib or Graphviz: %load_ext and %%tinygrad work, show the trace view (the document in the
  output), and one message, once, names exactly what to install: ipywidgets, the only one a cell uses."""
  path = path_without({"dot", "graphviz-pure"}, tmp_path / "path")
  outs = _magic_notebook(tmp_path, ("ipywidgets", "matplotlib"), path)
  assert not [o for c in outs for o in c if o["output_type"] == "error"], outs
  said = [_texts(c) for c in outs[1:]]
  assert "pip install ipywidgets " in said[0] and "graphviz" not in said[0] and "matplotlib" not in said[0], said
  assert all("pip install" not in s for s in said[1:]), said   # once, not under every cell
  shown = [[o["data"] for o in c if o["output_type"] == "display_data"] for c in outs[2:]]
  assert [len(s) for s in shown] == [1, 1], shown   # the static view only: no sliders
  assert all({"application/vnd.lazynb.trace+json", "text/html"} <= set(s[0]) for s in shown)
  assert all(viz.doc_of(s[0])["kernels"] for s in shown)

def test_magic_with_everything_installed_says_nothing(tmp_path):
  """The same cells with all optional packages present: sliders, no install message."""
  outs = _magic_notebook(tmp_path, (), os.environ["PATH"])
  assert not [o for c in outs for o in c if o["output_type"] == "error"], outs
  assert all("pip install" not in _texts(c) for c in outs), [_texts(c) for c in outs]
  assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outs[2])   # the sliders
  assert viz.doc_of(next(o["data"] for o in outs[3] if "text/html" in o.get("data", {})))["kernels"]

# ---------------------------------------------------------------------------------------------- paths of one machine

# a checkout, a home, a scratch folder (spelled in pieces, so this line does not match itself)
_TOPS = ["work", "root", r"home/\w", r"Users/\w", r"tmp/\w", r"mnt/\w", "private/var", "var/folders"]
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(" + "|".join(_TOPS) + r")|[A-Z]:\\Users")

def test_no_machine_specific_paths_in_the_repository():
  """No tracked file names a folder of one particular machine (a checkout, a home, a scratch file): each reader's
  paths differ, so docs say `cd` into the checkout and tests derive paths from their own location."""
  files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60).stdout.split("\0")
  hits = []
  for f in filter(None, files):
    p = ROOT / f
    if not p.is_file() or p.suffix in (".png", ".gz", ".whl") or f.endswith("package-lock.json"): continue
    try: text = p.read_text()
    except UnicodeDecodeError: continue
    hits += [f"{f}:{i}: {ln.strip()[:120]}" for i, ln in enumerate(text.splitlines(), 1) if MACHINE_PATH.search(ln)]
  assert not hits, "\n".join(hits)
