"""The JupyterLab extension (labextension/): its TypeScript unit tests (node's test runner, through `npm test`), the
committed build (lazynb/labextension, so installing needs no node) matching its sources and tracked in git, and the
packaging: the wheel carries the built extension as shared data, and a fresh environment with no node on PATH lists
it as enabled and OK. The browser tests are in tests/ui/; tests/test_newcomer.py installs the README's way."""
from __future__ import annotations
import hashlib, json, os, re, shutil, subprocess, sys, sysconfig, zipfile
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXT = ROOT / "labextension"
BUILT = ROOT / "lazynb" / "labextension"

REBUILD = "cd labextension && npm install && npm run build:prod, then commit lazynb/labextension/ (see labextension/README.md)"

def source_inputs(ext: Path = EXT) -> list[str]:
  """What the build reads, as labextension/source-hash.mjs lists it: src/ and style/, package(-lock).json, tsconfig.json,
  webpack.standalone.js."""
  files = [p.relative_to(ext).as_posix() for d in ("src", "style") for p in (ext / d).rglob("*") if p.is_file()]
  return sorted(files + ["package.json", "package-lock.json", "tsconfig.json", "webpack.standalone.js"])

def source_digest(ext: Path = EXT) -> str:
  """The same SHA-256 as labextension/source-hash.mjs: per input, its path and the hash of its bytes (CRLF as LF)."""
  def one(rel: str) -> str: return hashlib.sha256((ext / rel).read_bytes().replace(b"\r\n", b"\n")).hexdigest()
  return hashlib.sha256("".join(f"{rel}\n{one(rel)}\n" for rel in source_inputs(ext)).encode()).hexdigest()

def test_committed_build_matches_its_sources():
  """A change to labextension/ without a rebuild (or a development build committed) fails here, without node."""
  stamp = json.loads((BUILT / "source-hash.json").read_text())
  assert stamp["mode"] == "production", f"lazynb/labextension is a development build: {REBUILD}"
  assert stamp["inputs"] == source_inputs(), f"the build's inputs changed (files added or removed): {REBUILD}"
  assert stamp["sha256"] == source_digest(), f"labextension/ changed since lazynb/labextension was built: {REBUILD}"
  pkg = json.loads((BUILT / "package.json").read_text())
  assert (BUILT / pkg["jupyterlab"]["_build"]["load"]).is_file() and (BUILT / "static" / "style.js").is_file()
  # the standalone view (webpack.standalone.js) comes from the same build: the stamp names its bytes
  standalone = (ROOT / "lazynb" / "static" / "lazynb-view.js").read_bytes()
  assert stamp["standalone"] == hashlib.sha256(standalone).hexdigest(), f"lazynb/static/lazynb-view.js is not from this build: {REBUILD}"

def test_source_digest_sees_every_input(tmp_path):
  """The digest changes when any input's bytes or a file's presence change, and not for CRLF line endings."""
  ext = tmp_path / "labextension"
  shutil.copytree(EXT, ext, ignore=shutil.ignore_patterns("node_modules", "lib", "test-build"))
  base = source_digest(ext)
  for rel in ["src/dom.ts", "style/base.css", "package.json", "package-lock.json", "tsconfig.json"]:
    data = (ext / rel).read_bytes()
    (ext / rel).write_bytes(data + b" ")
    assert source_digest(ext) != base, rel
    (ext / rel).write_bytes(data.replace(b"\n", b"\r\n"))
    assert source_digest(ext) == base, rel
    (ext / rel).write_bytes(data)
  (ext / "src" / "extra.ts").write_text("export {};\n")
  assert source_digest(ext) != base and "src/extra.ts" in source_inputs(ext)
  (ext / "test" / "more.test.ts").write_text("export {};\n")   # tests are not part of the build
  (ext / "src" / "extra.ts").unlink()
  assert source_digest(ext) == base

def test_committed_build_is_tracked_by_git():
  """Every file of the build is committed, and nothing committed is missing: a fresh clone gets exactly this build."""
  r = subprocess.run(["git", "ls-files", "-z", "--", "lazynb/labextension"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
  tracked = {f for f in r.stdout.split("\0") if f}
  on_disk = {p.relative_to(ROOT).as_posix() for p in BUILT.rglob("*") if p.is_file()}
  assert on_disk == tracked, f"untracked: {sorted(on_disk - tracked)}; tracked but missing: {sorted(tracked - on_disk)}; {REBUILD}"

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
  assert "lazynb/static/lazynb-view.js" in names, "the standalone view (text/html outputs, VIZ=1) ships in the package"
  answers = sorted(f"lazynb/notebook/answers/{p.name}" for p in (ROOT / "lazynb" / "notebook" / "answers").glob("*.json"))
  assert answers and set(answers) <= set(names), "the course quizzes' answer files ship in the package"

  venv = tmp_path / "venv"
  subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
  bindir = venv / ("Scripts" if os.name == "nt" else "bin")
  # JupyterLab comes from the environment running the tests (a venv itself in CI, so --system-site-packages would
  # reach only the base interpreter's packages): a .pth file puts its site-packages after the fresh venv's own
  site = subprocess.run([str(bindir / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        capture_output=True, text=True, check=True).stdout.strip()
  (Path(site) / "outer_env.pth").write_text("\n".join(dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])) + "\n")
  env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "PYTHON"))}
  env.update(PATH=str(bindir), JUPYTER_CONFIG_DIR=str(tmp_path / "config"), JUPYTER_DATA_DIR=str(tmp_path / "data"), HOME=str(tmp_path))
  assert shutil.which("node", path=env["PATH"]) is None and shutil.which("npm", path=env["PATH"]) is None
  py = str(bindir / "python")
  r = subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], env=env, capture_output=True, text=True, timeout=600)
  assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
  # a course quiz reveals its explanation from the installed package's answer file
  probe = ("import lazynb, pathlib, sys; from lazynb.notebook.quiz import quiz; q = quiz('Q?', ['ADD', 'WHERE'], key='05_op_types.q_relu', "
           "show=False); q.predict('WHERE'); q.reveal('WHERE'); print(pathlib.Path(lazynb.__file__).is_relative_to(sys.prefix))")
  r = subprocess.run([py, "-c", probe], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
  assert r.returncode == 0 and r.stdout.splitlines()[-1] == "True" and "CMPLT" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
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
