"""VIZ=1 and the standalone view (lazynb/notebook/viz.py): a plain script run with VIZ=1 writes one self-contained HTML file of its
whole run, which Chromium shows with the JupyterLab renderer's tabs and the kernel source (and, without JavaScript, the
kernels as text); an unwritable output directory falls back to the temp directory with a message; the embedded JSON
cannot end its script element."""
from __future__ import annotations
import contextlib, html, json, os, pathlib, re, subprocess, sys
from pathlib import Path
import pytest
from lazynb.notebook import viz

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = """
from lazynb import Tensor
a = Tensor.arange(16).reshape(4, 4).float()
print(((a @ a).relu().sum(axis=0) + 1).numpy().tolist())
b = (Tensor.rand(8) * 2).realize()
"""

def run_script(tmp_path: Path, out: Path, **env) -> subprocess.CompletedProcess:
  (tmp_path / "ramp.py").write_text(SCRIPT)
  e = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
  e.update(PYTHONPATH=str(ROOT), VIZ="1", LAZYNB_VIZ_DIR=str(out), **env)
  return subprocess.run([sys.executable, "ramp.py"], cwd=tmp_path, env=e, capture_output=True, text=True, timeout=300)

@pytest.fixture(scope="module")
def viz_file(tmp_path_factory) -> Path:
  tmp = tmp_path_factory.mktemp("viz")
  r = run_script(tmp, tmp / "out")
  assert r.returncode == 0, r.stderr
  assert r.stdout.strip() == "[801.0, 921.0, 1041.0, 1161.0]"  # the script's own output is untouched
  files = list((tmp / "out").glob("ramp-*.html"))
  assert len(files) == 1 and f"lazynb VIZ: the trace of this run is in {files[0]}" in r.stderr
  return files[0]

def embedded_doc(page: str) -> dict:
  m = re.search(r'<script type="application/json" class="lazynb-trace">(.*?)</script>', page, re.S)
  return json.loads(m.group(1))

def test_viz_file_is_self_contained(viz_file):
  page = viz_file.read_text()
  assert page.startswith("<!DOCTYPE html>") and viz.bundle()[0][:200] in page
  assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page), "no network"
  doc = embedded_doc(page)
  assert len(doc["kernels"]) == 3 and len(doc["schedule"]) >= 3   # the whole run: both realizes
  assert all(k["source"] and k["runs"] >= 1 for k in doc["kernels"])

@contextlib.contextmanager
def _page(path: pathlib.Path):
  """A headless Chromium page at `path`, and the list its script errors land in."""
  from playwright.sync_api import sync_playwright
  with sync_playwright() as p:
    b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox", "--disable-gpu"])
    pg = b.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(path.as_uri())
    try: yield pg, errors
    finally: b.close()

@pytest.mark.browser
def test_viz_file_in_chromium(viz_file):
  doc = embedded_doc(viz_file.read_text())
  with _page(viz_file) as (pg, errors):
    pg.wait_for_selector(".lazynb-view .lz-trace .lz-tab")
    assert [t.inner_text() for t in pg.locator(".lz-tab").all()] == ["Kernels", "Tensor graph", "Rewrites", "Timing"]
    assert pg.locator(".lazynb-static").count() == 0, "the static view is replaced"
    assert "3 kernels" in pg.locator(".lz-summary").inner_text()
    assert pg.locator(".lz-trace").bounding_box()["height"] > 800   # the file's view fills the window (900 px)
    # the first kernel's source is shown, line for line
    pg.wait_for_selector(".lz-source .lz-line")
    shown = "\n".join(pg.locator(".lz-source .lz-line").all_inner_texts())
    first = doc["kernels"][0]["source"].splitlines()
    assert first[0].strip() in shown and first[-1].strip() in shown
    pg.wait_for_selector(".lz-graph-svg[data-state='drawn']")
    pg.locator(".lz-tab[data-tab='timing']").click()
    assert all(k["name"] in pg.locator(".lz-body").inner_text() for k in doc["kernels"])
    assert errors == []
    # without JavaScript: the kernels and their source as plain HTML
    ctx = pg.context.browser.new_context(java_script_enabled=False)
    nojs = ctx.new_page()
    nojs.goto(viz_file.as_uri())
    assert nojs.locator(".lz-trace").count() == 0
    static = nojs.locator(".lazynb-static")
    assert static.count() == 1 and "3 kernels" in static.inner_text()
    assert nojs.locator(".lazynb-static details pre").count() == 3
    assert doc["kernels"][0]["source"].splitlines()[0] in nojs.locator(".lazynb-static details pre").first.text_content()

def test_unwritable_dir_falls_back_to_temp(tmp_path):
  blocked = tmp_path / "file-not-dir"
  blocked.write_text("x")
  (tmp_path / "tmp").mkdir()
  r = run_script(tmp_path, blocked / "sub", TMPDIR=str(tmp_path / "tmp"))
  assert r.returncode == 0, r.stderr
  assert f"could not write to {blocked / 'sub'}" in r.stderr
  files = list((tmp_path / "tmp").glob("ramp-*.html"))
  assert len(files) == 1 and str(files[0]) in r.stderr

def test_no_browser_in_ci_or_without_display(monkeypatch):
  monkeypatch.setattr(sys, "platform", "linux")
  monkeypatch.setenv("DISPLAY", ":0")
  monkeypatch.delenv("CI", raising=False)
  monkeypatch.delenv("VIZ_BROWSER", raising=False)
  assert viz.can_open_browser()
  monkeypatch.setenv("CI", "true")
  assert not viz.can_open_browser()
  monkeypatch.delenv("CI")
  monkeypatch.setenv("VIZ_BROWSER", "0")
  assert not viz.can_open_browser()
  monkeypatch.delenv("VIZ_BROWSER")
  monkeypatch.delenv("DISPLAY")
  monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
  assert not viz.can_open_browser()   # a text browser could take over the terminal

def test_embedded_json_cannot_close_its_script():
  doc = {"kernels": [{"name": "</script><script>window.x=1</script>", "source": "<!-- a & b >"}]}
  out = viz.embed(doc, "<p>fallback</p>")
  body = out.split('class="lazynb-trace">', 1)[1].split("</script>", 1)[0]
  assert json.loads(body) == doc and "<" not in body
  assert out.count("</script>") == 2 and '<div class="lazynb-static"><p>fallback</p></div>' in out

@pytest.mark.browser
def test_truncated_trace_in_chromium(tmp_path):
  """A many-kernel trace over the 2 MB bound: the %%tinygrad output stays within it and says so in the static view, and
  the interactive view shows the note, every kernel in the schedule and opens a kernel whose graph was left out."""
  from lazynb import Tensor, nn
  from lazynb.trace import capture
  from lazynb.notebook.tracedoc import MIME, MAX_DOC_BYTES
  from lazynb.notebook.magic import TraceView
  from lazynb.notebook.html import MAX_OUTPUT_BYTES
  l1, l2 = nn.Linear(16, 32), nn.Linear(32, 4)
  opt = nn.optim.Adam([l1.weight, l1.bias, l2.weight, l2.bias])
  x, y = Tensor.rand(8, 16), Tensor([0, 1, 2, 3, 0, 1, 2, 3])
  with Tensor.train(), capture() as tr:
    for _ in range(2):
      opt.zero_grad()
      l2(l1(x).relu()).sparse_categorical_crossentropy(y).backward()
      opt.step()
  assert len(json.dumps(tr.to_json())) > MAX_DOC_BYTES
  bundle = TraceView(tr)._repr_mimebundle_()
  doc = viz.doc_of(bundle)
  # the bounds, measured on what a notebook saves: the whole bundle, and the document in it
  assert len(json.dumps(bundle)) <= MAX_OUTPUT_BYTES and len(json.dumps(doc)) <= MAX_DOC_BYTES and bundle[MIME]["payload"] == "text/html"
  note = doc["truncated"]["note"]
  assert 'class="lazynb-truncated"' in bundle["text/html"] and html.escape(note) in bundle["text/html"]  # the view without JavaScript says it too
  late = next((k for k in doc["kernels"] if k["graph"] is None), doc["kernels"][-1])  # its graph, or at least its UOp table, left out
  assert late["graph"] is None or late["uops"] == []
  page = tmp_path / "big.html"
  page.write_text(viz.page(doc))
  with _page(page) as (pg, errors):
    pg.wait_for_selector(".lz-trace .lz-truncated")
    assert pg.locator(".lz-truncated").inner_text() == note
    assert pg.locator(".lz-sched-row").count() == len(doc["schedule"])
    row = next(i for i, s in enumerate(doc["schedule"]) if s["kernel"] == late["id"])
    pg.locator(".lz-sched-row").nth(row).click()
    pg.locator(".lz-source .lz-line", has_text=late["name"]).first.wait_for()
    assert errors == []

@pytest.mark.browser
def test_kernel_header_names_its_variables_in_chromium(tmp_path):
  """A kernel with a symbolic size: its header in the Kernels tab says the variable and its value in the last run; a
  kernel without one has no such line."""
  from lazynb import Tensor, Variable
  from lazynb.trace import capture
  with capture(rewrites=False) as tr:
    (Tensor.ones(10, 4).contiguous().shrink(((0, Variable("i", 1, 10).bind(3)), (0, 4))) * 2).realize()
  doc = json.loads(json.dumps(tr.to_json()))
  sym = next(k for k in doc["kernels"] if k["vars"])
  assert sym["vars"] == ["i"] and sym["var_vals"] == {"i": 3}
  page = tmp_path / "vars.html"
  page.write_text(viz.page(doc))
  with _page(page) as (pg, errors):
    pg.wait_for_selector(".lz-trace .lz-sched-row")
    for i, s in enumerate(doc["schedule"]):
      if s["kernel"] is None: continue
      pg.locator(".lz-sched-row").nth(i).click()
      k = next(k for k in doc["kernels"] if k["id"] == s["kernel"])
      pg.locator(".lz-source .lz-line", has_text=k["name"]).first.wait_for()
      shown = pg.locator(".lz-vars").all_inner_texts()
      assert shown == (["variables: i=3 (int arguments: one compiled kernel serves every value)"] if k["vars"] else []), (k["name"], shown)
    assert errors == []

def test_script_goes_with_the_first_output_and_stays_with_its_cell(monkeypatch):
  """The view's script is in one output per kernel session: the first, and that cell's later outputs (a re-run cell must
  not take the script out of the notebook); Colab, one frame per output, gets it every time."""
  import types
  from lazynb.notebook import html as nbhtml
  monkeypatch.setattr(nbhtml, "_script_sent", False)
  monkeypatch.setattr(nbhtml, "_carrier", None)
  cell = ["a"]
  monkeypatch.setattr(nbhtml, "_cell_id", lambda: cell[0])
  assert nbhtml.script_once()
  cell[0] = "b"
  assert not nbhtml.script_once() and not nbhtml.script_once()
  cell[0] = "a"
  assert nbhtml.script_once()
  cell[0] = None
  assert not nbhtml.script_once()
  monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
  assert nbhtml.script_once()

@pytest.mark.browser
def test_outputs_without_the_script_draw_once_any_output_has_run_it(tmp_path):
  """Outputs that come before the one carrying the script (a notebook re-run out of order) queue and draw when it runs;
  each packed document decodes in the browser to what Python packed."""
  from lazynb import Tensor
  from lazynb.trace import capture
  from lazynb.notebook.html import render_view
  docs = []
  for n in (4, 8, 16):
    with capture() as tr: (Tensor.rand(n) * 2 + 1).realize()
    docs.append(json.loads(json.dumps(tr.shown_json())))
  body = render_view(docs[0], script=False) + render_view(docs[1], script=True) + render_view(docs[2], script=False)
  assert body.count("data-lazynb-script=") == 1 and viz.bundle()[0][:200] not in body  # the script once, packed
  page = tmp_path / "three.html"
  page.write_text(f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>{body}</body></html>')
  with _page(page) as (pg, errors):
    pg.locator(".lazynb-view .lz-trace .lz-tab").nth(0).wait_for()  # (playwright's locators reach into the shadow roots)
    pg.wait_for_function("() => document.querySelectorAll('.lazynb-static').length === 0")
    assert pg.locator(".lazynb-view .lz-trace").count() == 3 and errors == []
    for i, d in enumerate(docs):
      rows = pg.locator(".lazynb-view").nth(i).locator(".lz-sched-row")
      assert rows.count() == len(d["schedule"]) and d["kernels"][0]["name"] in rows.first.inner_text()
