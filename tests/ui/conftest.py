"""Browser tests of the JupyterLab extension: a real JupyterLab server on a loopback port, driven by Debian's Chromium
through Python playwright (no browser download). Skipped, with the reason, when chromium, playwright, jupyterlab or
the built extension is missing. Screenshots go to tests/artifacts/ (or $LAZYNB_UI_ARTIFACTS).
"""
from __future__ import annotations
import json, os, shutil, socket, subprocess, sys, tempfile, time, urllib.request
from pathlib import Path
import pytest

from lab_helpers import ARTIFACTS, ROOT
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]

def pytest_configure(config):
  config.addinivalue_line("markers", "ui: drives JupyterLab in Chromium (skipped when chromium, playwright or jupyterlab is absent)")

def chromium_path() -> str | None:
  for p in (os.environ.get("LAZYNB_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
    if p and os.path.exists(p): return p
  return None

def lab_extension_dir() -> Path | None:
  """Where JupyterLab finds the installed lazynb extension, if it does."""
  try: from jupyter_core.paths import jupyter_path
  except ImportError: return None
  for d in jupyter_path("labextensions"):
    if (Path(d) / "lazynb" / "package.json").exists(): return Path(d) / "lazynb"
  return None

def _why_skip() -> str | None:
  if chromium_path() is None: return "chromium is not installed (apt-get install -y chromium)"
  try: import playwright.sync_api  # noqa: F401
  except ImportError: return "python playwright is not installed (pip install playwright)"
  try: import jupyterlab  # noqa: F401
  except ImportError: return "jupyterlab is not installed"
  if lab_extension_dir() is None: return "the lazynb JupyterLab extension is not installed (pip install -e \".[notebook]\" copies the prebuilt one from lazynb/labextension)"
  return None

def _free_port() -> int:
  s = socket.socket()
  s.bind(("127.0.0.1", 0))
  port = s.getsockname()[1]
  s.close()
  return port

class Lab:
  def __init__(self, root: Path, port: int, token: str, proc: subprocess.Popen, log: Path):
    self.root, self.port, self.token, self.proc, self.log = root, port, token, proc, log
  def url(self, path: str) -> str: return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}?token={self.token}"

@pytest.fixture(scope="session")
def lab():
  why = _why_skip()
  if why: pytest.skip(why)
  root = Path(tempfile.mkdtemp(prefix="lazynb-lab-"))
  (root / "notebooks").mkdir()
  settings = root / "settings"
  (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
  (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
  port, token = _free_port(), "lazynb-ui-test"
  log = root / "server.log"
  # the extension as built in this checkout (lazynb/labextension), ahead of whichever copy is installed
  (root / "jupyter" / "labextensions").mkdir(parents=True)
  (root / "jupyter" / "labextensions" / "lazynb").symlink_to(ROOT / "lazynb" / "labextension", target_is_directory=True)
  jupyter_path = os.pathsep.join([str(root / "jupyter"), os.environ.get("JUPYTER_PATH", "")]).rstrip(os.pathsep)
  env = dict(os.environ, JUPYTER_PATH=jupyter_path, JUPYTERLAB_SETTINGS_DIR=str(settings), JUPYTERLAB_WORKSPACES_DIR=str(root / "workspaces"),
             PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
  cmd = [sys.executable, "-m", "jupyter", "lab", "--allow-root", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--ServerApp.token={token}", f"--ServerApp.root_dir={root / 'notebooks'}", "--ServerApp.open_browser=False",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
  with open(log, "w") as f: proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=root)
  deadline = time.time() + 90
  while True:
    try:
      urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2).read()
      break
    except OSError:
      if proc.poll() is not None or time.time() > deadline:
        proc.kill()
        pytest.fail(f"jupyter lab did not start:\n{log.read_text()[-3000:]}")
      time.sleep(0.3)
  lab = Lab(root / "notebooks", port, token, proc, log)
  yield lab
  proc.terminate()
  try: proc.wait(15)
  except subprocess.TimeoutExpired: proc.kill()

@pytest.fixture(scope="session")
def browser(lab):
  from playwright.sync_api import sync_playwright
  with sync_playwright() as p:
    b = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
    yield b
    b.close()

@pytest.fixture()
def page(browser, request):
  ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
  pg = ctx.new_page()
  pg.set_default_timeout(60_000)
  errors: list[str] = []
  pg.on("pageerror", lambda e: errors.append(f"{e}\n{e.stack}"))
  pg.on("console", lambda m: errors.append(m.text) if m.type == "error" and "lazynb" in m.text else None)
  pg.lazynb_errors = errors
  yield pg
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  if getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed:
    pg.screenshot(path=str(ARTIFACTS / f"FAILED-{request.node.name}.png"))
  ctx.close()

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
  rep = (yield).get_result()
  if rep.when == "call": item.rep_call = rep
