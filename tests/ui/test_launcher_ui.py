"""Issue 32.4: `python -m lazynb.notebook --no-browser` prints the URL a learner pastes into a browser; that URL (its path
and the token JupyterLab made up) opens the learner's copy of 00_index.ipynb in JupyterLab, not the Launcher. (Run on this
checkout, it makes the course/ copies it lacks, as the launcher does; it never overwrites one.)"""
from __future__ import annotations
import json, os, re, socket, subprocess, sys, tempfile, time
from pathlib import Path
import pytest
from lab_helpers import ROOT, shot

pytestmark = pytest.mark.ui

def _free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]

def test_the_printed_url_opens_the_course_index(browser):
  port, tmp = _free_port(), Path(tempfile.mkdtemp(prefix="lazynb-launch-"))
  (tmp / "settings" / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
  (tmp / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
  # a learner's first start: fresh JupyterLab settings, workspaces and runtime files (nothing remembered opens a tab)
  env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"), JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
             JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
  log = tmp / "launch.log"
  with open(log, "w") as f:
    proc = subprocess.Popen([sys.executable, "-m", "lazynb.notebook", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
                             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"], stdout=f, stderr=subprocess.STDOUT, env=env, cwd=tmp)
  try:
    deadline, urls = time.time() + 90, []
    while not urls:
      assert proc.poll() is None and time.time() < deadline, log.read_text()[-3000:]
      time.sleep(0.5)
      urls = re.findall(r"http://127\.0\.0\.1:\d+/\S+", log.read_text())
    url = urls[-1]
    assert re.fullmatch(rf"http://127\.0\.0\.1:{port}/lab/tree/course/00_index\.ipynb\?token=[0-9a-f]{{16,}}", url), url
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
      page.goto(url)
      page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell", timeout=60_000)
      tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current").first.inner_text()
      assert tab.strip() == "00_index.ipynb", tab
      assert page.locator(".jp-Launcher:not(.lm-mod-hidden)").count() == 0
      page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell:has-text('the course map')", timeout=30_000)
      shot(page, "ui-launcher-opens-index")
    finally: page.close()
  finally:
    proc.terminate()
    try: proc.wait(20)
    except subprocess.TimeoutExpired: proc.kill()
