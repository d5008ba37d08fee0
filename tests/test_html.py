"""The text/html of a trace output (lazynb/notebook/html.py: `bundle`, `render_view`): the document once, the loader of
the one renderer (the TypeScript view, tested in Chromium in tests/ui and tests/test_viz.py), and the view without
JavaScript (lazynb.notebook.viz.text_fallback): summary, schedule and kernel sources, every string of the document escaped."""
import copy, html, json, re
import pytest
from lazynb import Tensor
from lazynb.notebook import viz
from lazynb.trace import capture

XSS = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>']

@pytest.fixture(scope="module")
def doc():
  a = Tensor.rand(8, 8).realize()
  with capture() as tr:
    ((a @ a).relu().sum(axis=0) + 1).realize()
  return tr.to_json()

def assert_inert(page: str):
  """No markup from a payload: no script/img tags, no event handler attribute inside any tag."""
  low = page.lower()
  assert "<script" not in low and "<img src=x" not in low
  assert not re.search(r"<[^>]*\son\w+\s*=", low), re.search(r"<[^>]*\son\w+\s*=", low)

def static_part(text_html: str) -> str:
  """What a page without JavaScript shows of an output's text/html: the fallback element."""
  m = re.search(r'<div class="lazynb-static">(.*?)</div><script', text_html, re.S)
  assert m, text_html[:300]
  return m.group(1)

def test_fallback_holds_the_schedule_and_every_kernels_source(doc):
  from lazynb.notebook.html import bundle
  out = bundle(doc, "summary", script=False)
  fb = static_part(out["text/html"])
  assert fb == viz.text_fallback(doc)
  assert_inert(fb)
  assert f"{len(doc['schedule'])} schedule items, {len(doc['kernels'])} kernels" in fb
  for s in doc["schedule"]: assert f"<td>{s['reason']}</td>" in fb
  for k in doc["kernels"]: assert f"<code>{k['name']}</code>" in fb and html.escape(k["source"]) in fb

def test_fallback_cuts_sources_at_its_bound(doc):
  fb = viz.text_fallback(doc, source_bytes=200)
  assert "more characters)" in fb and len(fb) < len(viz.text_fallback(doc))

def test_error_shown_first():
  with pytest.raises(ZeroDivisionError):
    with capture() as tr:
      Tensor([1.0, 2.0]).realize()
      raise ZeroDivisionError("boom <b>" + XSS[0])
  fb = viz.text_fallback(tr.to_json())
  assert fb.index("lazynb-error") < fb.index("<table>")
  assert "ZeroDivisionError" in fb and "boom &lt;b&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in fb
  assert_inert(fb)

def _poison_all(x, payload):
  if isinstance(x, str): return payload + x
  if isinstance(x, list): return [_poison_all(v, payload) for v in x]
  if isinstance(x, dict): return {k: _poison_all(v, payload) for k, v in x.items()}
  return x

@pytest.mark.parametrize("payload", XSS)
def test_escaping_targeted(doc, payload):
  """Payloads in the fields the fallback shows (names, sources, kinds, reasons, devices, variables, the error, the note)."""
  d = copy.deepcopy(doc)
  k = d["kernels"][0]
  k["name"], k["source"], k["device"] = payload, payload + "\n" + k["source"], payload
  k["vars"], k["var_vals"] = [payload], {payload: payload}
  d["schedule"][0]["reason"] = d["schedule"][0]["kind"] = payload
  d["error"] = {"type": payload, "message": payload}
  d["truncated"] = {"note": payload}
  fb = viz.text_fallback(d)
  assert_inert(fb)
  assert fb.count(html.escape(payload)) >= 9

@pytest.mark.parametrize("payload", XSS)
def test_escaping_every_string(doc, payload):
  """Every string of the document (ids, numbers-as-text, kinds ...) prefixed with a payload: still inert."""
  d = _poison_all(copy.deepcopy(doc), payload)
  d["kernels"][0]["time_s"] = payload  # a number that is not one
  assert_inert(viz.text_fallback(d))

def test_registered_once(doc):
  import importlib
  from lazynb import trace
  import lazynb.notebook.html as h
  importlib.reload(h)
  assert sum(getattr(r, "_lazynb_html", False) for r in trace.mime_renderers) == 1
  a = Tensor.rand(4).realize()
  with capture() as tr:
    (a + 1).realize()
  bundle = tr._repr_mimebundle_()
  assert bundle["text/html"].startswith('<div class="lazynb-view"') and "application/vnd.lazynb.trace+json" in bundle
  assert '<div class="lazynb-static"><p><b>lazynb trace</b>' in bundle["text/html"]  # a view without JavaScript inside
  assert bundle["application/vnd.lazynb.trace+json"]["payload"] == "text/html" and viz.doc_of(bundle) == json.loads(json.dumps(tr.shown_json()))

def test_bundle_is_bound_by_what_a_notebook_saves():
  """Past its bound (json.dumps of the whole bundle, as a notebook saves it), an output's document is bounded again,
  tighter, until the bundle fits; the kernel list stays whole and the view says what went."""
  from lazynb.notebook.html import bundle
  with capture() as tr:
    for n in range(6): (Tensor.rand(32, 32) @ Tensor.rand(32, 32) + n).realize()
  full = json.loads(json.dumps(tr.to_json()))
  free = bundle(full, "s", script=False)
  assert viz.doc_of(free) == full and "truncated" not in full
  limit = len(json.dumps(free)) // 2
  out = bundle(full, "s", script=False, limit=limit)
  assert len(json.dumps(out)) <= limit
  doc = viz.doc_of(out)
  assert doc["truncated"]["note"] in html.unescape(out["text/html"]) and len(doc["kernels"]) == len(full["kernels"])
