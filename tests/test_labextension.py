"""The JupyterLab extension (labextension/): its TypeScript unit tests (node's test runner, through `npm test`), and
the packaging: the wheel carries the built extension as shared data, and a fresh environment with no node on PATH
lists it as enabled and OK. The browser tests are in tests/ui/."""
from __future__ import annotations
import os, re, shutil, subprocess, sys, zipfile
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXT = ROOT / "labextension"
BUILT = ROOT / "lazynb" / "labextension"

def _npm() -> str:
  node, npm = shutil.which("node"), shutil.which("npm")
  if node is None or npm is None: pytest.skip("node/npm are not installed: the TypeScript tests need node (>= 18)")
  return npm

def test_typescript_unit_tests():
  npm = _npm()
  if not (EXT / "node_modules").is_dir():
    subprocess.run([npm, "install", "--no-audit", "--no-fund"], cwd=EXT, check=True, capture_output=True, text=True, timeout=900)
  r = subprocess.run([npm, "test"], cwd=EXT, capture_output=True, text=True, timeout=600)
  summary = [ln for ln in r.stdout.splitlines() if re.match(r"# (tests|pass|fail)", ln)]
  print("\n".join(summary))
  assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
  assert any(ln.startswith("# fail 0") for ln in summary), summary
  assert int(next(ln.split()[2] for ln in summary if ln.startswith("# pass"))) >= 20

def test_wheel_ships_the_extension_and_installs_without_node(tmp_path):
  if not (BUILT / "package.json").exists() and shutil.which("npm") is None:
    pytest.skip("the extension is not built (lazynb/labextension) and there is no npm to build it")
  try: import jupyterlab  # noqa: F401
  except ImportError: pytest.skip("jupyterlab is not installed")
  dist = tmp_path / "dist"
  r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)], capture_output=True, text=True, timeout=1200)
  assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
  wheel = next(dist.glob("lazynb-*.whl"))
  names = zipfile.ZipFile(wheel).namelist()
  data = "lazynb-0.1.0.data/data/share/jupyter/labextensions/lazynb/"
  assert data + "package.json" in names and data + "install.json" in names
  assert any(n.startswith(data + "static/remoteEntry.") for n in names)
  assert not any(n.startswith("lazynb/labextension/") for n in names), "the built extension is shipped once, as shared data"

  venv = tmp_path / "venv"
  subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
  bindir = venv / ("Scripts" if os.name == "nt" else "bin")
  env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "PYTHON"))}
  env.update(PATH=str(bindir), JUPYTER_CONFIG_DIR=str(tmp_path / "config"), JUPYTER_DATA_DIR=str(tmp_path / "data"), HOME=str(tmp_path))
  assert shutil.which("node", path=env["PATH"]) is None and shutil.which("npm", path=env["PATH"]) is None
  py = str(bindir / "python")
  r = subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], env=env, capture_output=True, text=True, timeout=600)
  assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
  r = subprocess.run([py, "-m", "jupyterlab.labextensions", "list"], env=env, capture_output=True, text=True, timeout=300)
  out = re.sub(r"\x1b\[[0-9;]*m", "", r.stdout + r.stderr)
  print(out)
  assert r.returncode == 0, out
  line = next((ln for ln in out.splitlines() if re.match(r"\s*lazynb v0\.1\.0", ln)), None)
  assert line is not None, out
  assert "enabled" in line and "OK" in line and "(python, lazynb)" in line, line
  # found in the fresh environment's own share/jupyter, not in the one running the tests
  section = out[:out.index(line)].rsplit("labextensions", 1)[0].splitlines()[-1]
  assert str(venv) in section, out

def test_panel_state_helper(monkeypatch):
  """What the tinygrad panel reads through a user expression: JSON as application/json and as the repr."""
  import json
  from lazynb.notebook import magic, labext
  monkeypatch.setattr(magic, "SESSION", magic.Settings(debug=3, noopt=True, beam=2, device="CPU"))
  st = labext.state()
  data = st._repr_json_()
  assert data["session"] == {"debug": 3, "noopt": True, "beam": 2, "device": "CPU"}
  assert json.loads(repr(st)) == data
  names = [d["name"] for d in data["devices"]]
  assert "CPU" in names and all(isinstance(d["ok"], bool) for d in data["devices"])
  assert data["default_device"] in names
