"""The text/html view of a trace (lazynb/notebook/html.py): content of each view, subsets, size bound, escaping."""
import copy, html, json, re
import pytest
from lazynb import Tensor
from lazynb.trace import capture
from lazynb.notebook import graphviz as gv
from lazynb.notebook.html import render_html, VIEWS

XSS = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>']

@pytest.fixture(scope="module")
def doc():
  a = Tensor.rand(8, 8).realize()
  with capture() as tr:
    ((a @ a).relu().sum(axis=0) + 1).realize()
  return tr.to_json()

@pytest.fixture(scope="module")
def page(doc): return render_html(doc)

def panel(page: str, view: str) -> str:
  start = page.index(f'class="lzt-view-{view}"')
  end = min([page.index(f'class="lzt-view-{v}"') for v in VIEWS if f'class="lzt-view-{v}"' in page[start + 1:]] + [len(page)])
  return page[start:end]

def assert_inert(page: str):
  """No markup from a payload: no script/img tags, no event handler attribute inside any tag."""
  low = page.lower()
  assert "<script" not in low and "<img src=x" not in low
  assert not re.search(r"<[^>]*\son\w+\s*=", low), re.search(r"<[^>]*\son\w+\s*=", low)

def test_one_self_contained_div(page):
  assert page.startswith('<div class="lzt" id="lzt-') and page.endswith("</div>")
  assert "<style>" in page and "var(--jp-ui-font-color1" in page
  assert_inert(page)  # no script of our own either
  assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page), "no external resources"
  assert "@import" not in page and "url(http" not in page

def test_unique_ids_per_output(doc):
  a, b = render_html(doc), render_html(doc)
  ids_a, ids_b = set(re.findall(r' id="([^"]+)"', a)), set(re.findall(r' id="([^"]+)"', b))
  assert ids_a and not ids_a & ids_b
  assert len(re.findall(r' id="([^"]+)"', a)) == len(ids_a)  # unique inside one output too

def test_schedule_view(doc, page):
  p = panel(page, "schedule")
  reasons = {s["reason"] for s in doc["schedule"]}
  assert {"reduce", "realize"} <= reasons
  for r in reasons: assert f">{r}</span>" in p
  assert "cannot fuse" in p and "you realized" in p  # the plain-English explanations
  assert "64 &times; float" in p and "buf0" in p

def test_graph_view(doc, page):
  p = panel(page, "graph")
  assert "Lazy tensor graph" in p and "AST" in p
  for kind in gv.KIND_COLORS: assert kind in p  # legend
  if gv.available():
    assert p.count("<svg") >= 1 + len(doc["kernels"])
    assert "no index/const" in p
    assert "REDUCE_AXIS" in p
  else: assert "lzt-listing" in p

def test_graph_fallback_without_dot(doc, monkeypatch):
  monkeypatch.setattr(gv, "_dot_cmd", [])
  p = render_html(doc, show={"graph"})
  assert "<svg" not in p and "lzt-listing" in p and "graphviz-pure" in p
  assert "REDUCE_AXIS" in p

def test_shapetracker_view(doc, page):
  p = panel(page, "shapetracker")
  v = doc["views"][0]
  assert v["index"] and v["index"].replace("+", "+<wbr>").replace("*", "*<wbr>") in p
  assert "strides" in p and "EXPAND" in p and "PERMUTE" in p and ">load<" in p and ">store<" in p

def test_kernels_view(doc, page):
  p = panel(page, "kernels")
  for k in doc["kernels"]:
    assert k["name"] in p
    assert "lzt-ax-reduce" in p and "lzt-ax-upcast" in p
    for o in k["opts"]: assert o in p
  assert 'class="lzt-hl"' in p and "restrict" in p and "for" in p  # highlighted source
  assert "<details><summary>" in p and "linearized UOps" in p and "DEFINE_GLOBAL" in p

def test_timing_view(doc, page):
  p = panel(page, "timing")
  assert "GFLOPS" in p and "GB/s" in p and "compile (ms)" in p
  pytest.importorskip("matplotlib")
  assert '<img class="lzt-chart"' in p and "data:image/png;base64," in p

def test_rewrites_view(doc, page):
  p = panel(page, "rewrites")
  r = doc["rewrites"][0]
  assert r["name"] in p and "<details" in p and "<details class=\"lzt-pass\" open" not in p
  assert "matched pattern" in p and "UPat(" in p and "&rarr;" in p
  # each pass is labelled with its stage, the stages in pipeline order
  shown = re.findall(r"<summary>\d+: <b>\[([a-z ]+)\]</b>", p)
  assert list(dict.fromkeys(shown)) == ["tensor graph", "kernels", "lowered", "simplified", "linearized"]
  if gv.available(): assert "<svg" in p

def test_show_subsets(doc):
  for v in VIEWS:
    p = render_html(doc, show={v})
    assert f'class="lzt-view-{v}"' in p
    assert all(f'class="lzt-view-{o}"' not in p for o in VIEWS if o != v)
  p = render_html(doc, show=["schedule", "timing"])
  assert 'lzt-view-schedule' in p and 'lzt-view-timing' in p and 'lzt-view-graph' not in p and "<svg" not in p
  with pytest.raises(ValueError): render_html(doc, show={"nope"})

def test_error_shown_first():
  with pytest.raises(ZeroDivisionError):
    with capture() as tr:
      Tensor([1.0, 2.0]).realize()
      raise ZeroDivisionError("boom <b>" + XSS[0])
  p = render_html(tr.to_json())
  assert p.index("lzt-error") < p.index("lzt-tabs")
  assert "ZeroDivisionError" in p and "boom &lt;b&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in p
  assert_inert(p)

def _poison_all(x, payload):
  if isinstance(x, str): return payload + x
  if isinstance(x, list): return [_poison_all(v, payload) for v in x]
  if isinstance(x, dict): return {k: _poison_all(v, payload) for k, v in x.items()}
  return x

@pytest.mark.parametrize("payload", XSS)
def test_escaping_targeted(doc, payload):
  """Payloads in names, sources, args, patterns, node labels and the error: all escaped, graphs still drawn."""
  d = copy.deepcopy(doc)
  k = d["kernels"][0]
  k["name"] = payload
  k["name_parts"] = [[payload, "global"], ["_x", payload]]
  k["source"] = payload + "\n" + k["source"]
  k["opts"] = [payload]
  k["language"] = payload
  k["uops"][0]["arg"] = payload
  k["timings"] = {payload: 0.1}
  d["schedule"][0]["reason"] = payload
  d["schedule"][0]["bufs"][0]["dtype"] = payload
  d["views"][0]["index"] = payload
  d["views"][0]["movement"] = [[payload, payload]]
  r = next(r for r in d["rewrites"] if r["steps"])  # (the first pass, fold constants, may have folded nothing)
  r["name"] = payload
  r["stage"] = payload
  r["steps"][0]["pattern"] = payload
  d["settings"][payload] = payload
  for g in d["graphs"].values():
    for n in g["nodes"]: n["arg"], n["kind"] = payload, (payload if n["id"] % 2 else n["kind"])
  d["error"] = {"type": payload, "message": payload}
  p = render_html(d)
  assert_inert(p)
  assert p.count(html.escape(payload)) >= 5
  if gv.available(): assert "<svg" in panel(p, "graph")

@pytest.mark.parametrize("payload", XSS)
def test_escaping_every_string(doc, payload):
  """Every string of the document (ids, numbers-as-text, kinds ...) prefixed with a payload: still inert."""
  d = _poison_all(copy.deepcopy(doc), payload)
  d["kernels"][0]["time_s"] = payload  # a number that is not one
  assert_inert(render_html(d))

def test_svg_labels_escaped_by_dot():
  if not gv.available(): pytest.skip("no dot")
  g = {"nodes": [{"id": 0, "op": XSS[0], "dtype": XSS[1], "arg": 'a\\b"c\n&amp;', "shape": [1], "kind": "alu"},
                 {"id": 1, "op": "SINK", "kind": "sink"}], "edges": [[0, 1]], "root": 1}
  svg = gv.render_svg(g)
  assert svg is not None and svg.startswith("<svg")
  assert_inert(svg)
  assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg and "&amp;amp;" in svg

def test_size_bound_big_graph():
  a = Tensor.rand(16).realize()
  x = a
  for _ in range(400): x = x.reshape(4, 4).permute(1, 0).reshape(16).relu()  # 5 lazy nodes per step
  with capture() as tr:
    x.realize()
  d = tr.to_json()
  assert d["graphs"][d["tensor_graphs"][0]]["total_nodes"] >= 2000
  p = render_html(d)
  assert len(p) < 1_200_000, len(p)
  assert "Truncated: showing the 400 nodes nearest the output of" in p
  if gv.available(): assert "<svg" in p

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
  from lazynb import viz
  assert bundle["application/vnd.lazynb.trace+json"]["payload"] == "text/html" and viz.doc_of(bundle) == json.loads(json.dumps(tr.shown_json()))

def test_graphviz_pure_fallback(doc, monkeypatch):
  import shutil
  path = shutil.which("graphviz-pure")
  if path is None: pytest.skip("graphviz-pure not installed")
  monkeypatch.setattr(gv, "_dot_cmd", [path])
  svg = gv.render_svg(doc["graphs"][doc["kernels"][0]["graph"]])
  assert svg is not None and svg.startswith("<svg") and "REDUCE_AXIS" in svg
  assert_inert(svg)

def test_svg_cache(doc, monkeypatch):
  if not gv.available(): pytest.skip("no dot")
  g = doc["graphs"][doc["tensor_graphs"][0]]
  first = gv.render_svg(g)
  def no_run(*a, **k): raise AssertionError("dot ran again for a cached graph")
  monkeypatch.setattr(gv.subprocess, "run", no_run)
  assert gv.render_svg(copy.deepcopy(g)) == first  # same content, different object: still cached

def test_schedule_view_says_when_constants_needed_no_kernel():
  with capture() as tr: (Tensor.ones(2, 3) * 4).realize()
  d = tr.to_json()
  assert d["schedule"] == [] and d["folded_constants"] == 1
  assert "1 tensor was a constant after folding: no kernel" in render_html(d)

def test_header_names_the_learners_stages(doc):
  """Without JavaScript the view still says which stages were the learner's (lazynb.pipeline.use), escaped; none: no line."""
  assert 'class="lzt-yours"' not in render_html(doc) and doc["replaced_stages"] == []
  d = dict(copy.deepcopy(doc), replaced_stages=["lower", "render", XSS[0]])
  p = render_html(d)
  line = re.search(r'<div class="lzt-yours">(.*?)</div>', p).group(1)
  assert "Your stages" in line and "lower, render, " in line and p.index('class="lzt-yours"') < p.index('class="lzt-tabs')
  assert_inert(p)

def test_bundle_is_bound_by_what_a_notebook_saves():
  """Past its bound (json.dumps of the whole bundle, as a notebook saves it), an output's document is bounded again,
  tighter, until the bundle fits; the kernel list stays whole and the view says what went."""
  from lazynb import viz
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
