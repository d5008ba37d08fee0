"""The lazynb JupyterLab extension in a real JupyterLab, in Chromium: a %%tinygrad cell renders with the extension
(not the HTML fallback), clicking a kernel and hovering source/UOps highlight what line_map says, the session panel
sets defaults for later cells (an edit made while the kernel answers an older request is kept) and links its kernel
list to the cells, a saved notebook renders with no kernel, an untrusted payload runs nothing, and a 2,000-node graph
renders within the budget."""
from __future__ import annotations
import json, warnings
import pytest
from lab_helpers import ARTIFACTS, MIME, cell, lit, open_notebook, run_cell, save_and_read, shot, trace_doc, trace_docs, trace_output, write_notebook

pytestmark = pytest.mark.ui

GOAL_MS = 1000
PROGRAM = "a = Tensor.rand(8, 8).realize()\nc = (a @ a).relu().sum(1).realize()"

def _trace_in(pg, i: int):
  return cell(pg, i).locator(".lz-trace")

def test_tinygrad_cell_renders_and_cross_highlights(lab, page):
  write_notebook(lab.root / "run.ipynb", ["%load_ext lazynb", f"%%tinygrad\n{PROGRAM}"])
  open_notebook(page, lab, "run.ipynb")
  run_cell(page, 0)
  run_cell(page, 1)
  tr = _trace_in(page, 1)
  tr.wait_for()
  page.wait_for_selector(".lz-trace[data-render-ms]")
  # the extension's renderer was chosen over the text/html fallback in the same bundle
  assert cell(page, 1).locator(".jp-RenderedLazynbTrace").count() == 1
  assert cell(page, 1).locator(".lazynb-view").count() == 0, "the text/html (its loader and fallback) is not shown"
  doc = trace_docs(save_and_read(page, lab, "run.ipynb", 1))[0]
  kernels = doc["kernels"]
  assert len(kernels) == 2
  assert tr.locator(".lz-sched-row").count() == len(doc["schedule"])
  assert "2 kernels" in tr.locator(".lz-summary").inner_text()

  # first kernel open: graph drawn, ShapeTracker views and source shown side by side
  svg = tr.locator(".lz-graph-svg")
  page.wait_for_function("el => el.dataset.state === 'drawn'", arg=svg.element_handle())
  assert int(svg.get_attribute("data-nodes")) > 3
  assert tr.locator(".lz-access").count() == len(kernels[0]["views"])
  assert kernels[0]["name"] in tr.locator(".lz-source .lz-line").first.inner_text()
  boxes = [tr.locator(sel).bounding_box() for sel in (".lz-panes > .lz-graph", ".lz-panes > .lz-st", ".lz-panes > .lz-code")]
  assert boxes[0]["x"] < boxes[1]["x"] < boxes[2]["x"], "graph, views and source side by side"
  shot(page, "ui-kernel-view", cell(page, 1))

  # hover a source line: exactly the UOps line_map names light up; hover a UOp: its lines light up
  lm = kernels[0]["line_map"]
  line = max(range(len(lm)), key=lambda i: (len(set(lm[i])), -i))
  tr.locator(f".lz-line[data-line='{line}']").hover()
  assert lit(page, tr, ".lz-uop.lz-lit", "data-uop") == sorted(set(lm[line]))
  assert lit(page, tr, ".lz-line.lz-lit", "data-line") == [line]
  shot(page, "ui-source-hover", tr)
  uop = sorted(set(lm[line]))[0]
  tr.locator(f".lz-uop[data-uop='{uop}']").hover()
  assert lit(page, tr, ".lz-line.lz-lit", "data-line") == [i for i, us in enumerate(lm) if uop in us]
  assert lit(page, tr, ".lz-uop.lz-lit", "data-uop") == [uop]

  # click the second kernel: its name, source and views replace the first's
  tr.locator(".lz-sched-row").nth(1).click()
  k1 = kernels[doc["schedule"][1]["kernel"]]
  page.wait_for_function("([el, name]) => el.textContent.includes(name)", arg=[tr.locator(".lz-kernel-head").element_handle(), k1["name"]])
  assert k1["name"] in tr.locator(".lz-source .lz-line").first.inner_text()
  assert tr.locator(".lz-sched-row").nth(1).get_attribute("aria-selected") == "true"
  lm1 = k1["line_map"]
  line1 = next(i for i, us in enumerate(lm1) if us)
  tr.locator(f".lz-line[data-line='{line1}']").hover()
  assert lit(page, tr, ".lz-uop.lz-lit", "data-uop") == sorted(set(lm1[line1]))

  # lowered graph and collapsing: collapsing hides index/const nodes
  tr.locator(".lz-seg[data-graph='lowered']").click()
  page.wait_for_function("el => el.dataset.state === 'drawn'", arg=svg.element_handle())
  collapsed = int(svg.get_attribute("data-nodes"))
  tr.locator(".lz-graph .lz-check input").first.uncheck()
  page.wait_for_function("([el, n]) => el.dataset.state === 'drawn' && +el.dataset.nodes > n", arg=[svg.element_handle(), collapsed])
  lowered = doc["graphs"][k1["lowered_graph"]]
  assert int(svg.get_attribute("data-nodes")) == len(lowered["nodes"])
  # pan and zoom change the viewport transform
  before = tr.locator(".lz-viewport").first.get_attribute("transform")
  box = svg.bounding_box()
  page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
  page.mouse.wheel(0, -300)
  page.mouse.down(); page.mouse.move(box["x"] + box["width"] / 2 + 60, box["y"] + box["height"] / 2 + 30, steps=5); page.mouse.up()  # noqa: E702
  assert tr.locator(".lz-viewport").first.get_attribute("transform") != before
  tr.locator(".lz-node").first.click()
  shot(page, "ui-lowered-graph", tr)

  # rewrite passes: step through, the matched pattern is shown
  tr.locator(".lz-tab[data-tab='rewrites']").click()
  rw = tr.locator(".lz-rewrites")
  rw.wait_for()
  assert rw.locator("select option").count() == len(doc["rewrites"])
  # each pass is labelled with its stage; the first pass (fold constants) may have no steps: step through the first that has
  labels = rw.locator("select option").all_inner_texts()
  assert [label.split("] ")[0].split(". [")[1] for label in labels] == [r["stage"] or "other" for r in doc["rewrites"]]
  i = next(j for j, r in enumerate(doc["rewrites"]) if len(r["steps"]) >= 2)
  rw.locator("select").select_option(str(i))
  first = doc["rewrites"][i]["steps"]
  assert rw.locator(".lz-pattern").inner_text() == first[0]["pattern"]
  rw.locator("button[data-step='1']").click()
  assert rw.locator(".lz-step-label").inner_text() == f"step 2 / {len(first)}"
  assert rw.locator(".lz-pattern").inner_text() == first[1]["pattern"]
  page.wait_for_function("el => el.querySelectorAll('.lz-graph-svg[data-state=drawn]').length === 2", arg=rw.element_handle())
  shot(page, "ui-rewrites", tr)
  tr.locator(".lz-tab[data-tab='graph']").click()
  page.wait_for_selector(".lz-tab-graph .lz-graph-svg[data-state='drawn']")
  tr.locator(".lz-tab[data-tab='timing']").click()
  assert tr.locator(".lz-timing tbody tr").count() == 2
  assert not page.lazynb_errors, page.lazynb_errors

def _set_range(locator, value: int):
  locator.evaluate("(el, v) => { el.value = String(v); el.dispatchEvent(new Event('input', {bubbles: true})); }", value)

def _wait_status(pg, text: str, timeout: float = 30_000) -> None:
  """Wait until the session panel's status line includes `text`; on a timeout, say what it shows."""
  try:
    pg.wait_for_function("(s) => document.querySelector('#lazynb-session-panel .lz-panel-status').textContent.includes(s)", arg=text, timeout=timeout)
  except Exception:
    raise AssertionError(f"panel status never showed {text!r}: it shows {pg.locator('#lazynb-session-panel .lz-panel-status').inner_text()!r}") from None

def test_session_panel_sets_defaults_and_links_runs(lab, page):
  write_notebook(lab.root / "panel.ipynb", ["%load_ext lazynb", f"%%tinygrad\n{PROGRAM}", "%%tinygrad --no-controls\nd = (Tensor.rand(4, 4) + 1).realize()"])
  open_notebook(page, lab, "panel.ipynb")
  run_cell(page, 0)
  run_cell(page, 1)
  page.locator(".jp-SideBar .lm-TabBar-tab[data-id='lazynb-session-panel']").click()
  panel = page.locator("#lazynb-session-panel")
  panel.wait_for()
  assert panel.locator(".lz-panel-title").inner_text() == "tinygrad"
  page.wait_for_function("() => [...document.querySelectorAll('#lazynb-session-panel select option')].some(o => o.value === 'CPU')")
  _set_range(panel.locator("input[aria-label='DEBUG']"), 2)
  panel.locator("input[aria-label='NOOPT']").check()
  panel.locator("select[aria-label='device']").select_option("CPU")
  _wait_status(page, "--debug 2 --noopt --beam 0 --device CPU")
  assert "lz-status-ok" in panel.locator(".lz-panel-status").get_attribute("class")
  run_cell(page, 2)
  chips = lambda i: {c.get_attribute("data-setting"): c.inner_text() for c in _trace_in(page, i).locator(".lz-chip").all()}  # noqa: E731
  page.wait_for_function("() => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .lz-trace').length === 2")
  assert chips(1)["DEBUG"] == "DEBUG=0" and chips(1)["NOOPT"] == "NOOPT=0"
  assert chips(2)["DEBUG"] == "DEBUG=2" and chips(2)["NOOPT"] == "NOOPT=1"  # the panel's defaults reached the later cell
  # the run list: one group per cell with a trace, each kernel links to its cell
  page.wait_for_function("() => document.querySelectorAll('#lazynb-session-panel .lz-run').length === 2")
  runs = panel.locator(".lz-run")
  assert runs.nth(0).locator(".lz-run-kernel").count() == 2
  assert runs.nth(1).locator(".lz-run-kernel").count() >= 1
  assert "\u00b5s" in runs.nth(0).inner_text() or "ms" in runs.nth(0).inner_text()
  active = "() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')].findIndex(c => c.classList.contains('jp-mod-active'))"
  runs.nth(0).locator(".lz-run-kernel").first.click()
  page.wait_for_function(f"() => ({active})() === 1")
  runs.nth(1).locator(".lz-run-kernel").first.click()
  page.wait_for_function(f"() => ({active})() === 2")
  shot(page, "ui-session-panel")
  assert not page.lazynb_errors, page.lazynb_errors

def _start_cell(pg, i: int) -> None:
  """Run cell i without waiting for it to finish."""
  cell(pg, i).locator(".jp-InputPrompt").click()
  pg.keyboard.press("Escape")
  pg.keyboard.press("Control+Enter")
  pg.wait_for_function(f"() => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')[{i}].querySelector('.jp-InputPrompt').textContent.includes('*')")

def test_session_panel_keeps_edits_made_while_the_kernel_answers(lab, page):
  """A kernel reply that was asked for before the learner's last edit (the panel reading the kernel's defaults, or an
  earlier apply) must not reset the controls: the edit is what gets applied."""
  gates = [lab.root / f"gate{i}" for i in range(2)]
  wait = "import os, time\nwhile not os.path.exists({!r}): time.sleep(0.01)"
  write_notebook(lab.root / "race.ipynb", ["%load_ext lazynb", wait.format(str(gates[0])), wait.format(str(gates[1]))])
  open_notebook(page, lab, "race.ipynb")
  run_cell(page, 0)
  tab = page.locator(".jp-SideBar .lm-TabBar-tab[data-id='lazynb-session-panel']")
  tab.click()
  panel = page.locator("#lazynb-session-panel")
  panel.wait_for()
  page.wait_for_function("() => [...document.querySelectorAll('#lazynb-session-panel select option')].some(o => o.value === 'CPU')")
  # 1. the panel asks for the kernel's defaults while the kernel is busy; the learner edits before the answer comes
  _start_cell(page, 1)
  tab.click()
  tab.click()  # hidden and shown again: it reads the kernel's state (the request waits behind the busy cell)
  panel.wait_for()
  _set_range(panel.locator("input[aria-label='DEBUG']"), 3)
  gates[0].touch()
  _wait_status(page, "--debug 3 --opt --beam 0")
  assert panel.locator("input[aria-label='DEBUG']").input_value() == "3"
  # 2. an apply is waiting behind a busy cell; the learner picks a device just before its answer arrives
  _start_cell(page, 2)
  _set_range(panel.locator("input[aria-label='BEAM']"), 2)
  _wait_status(page, "applying")
  panel.locator("select[aria-label='device']").select_option("CPU")
  gates[1].touch()
  _wait_status(page, "--debug 3 --opt --beam 2 --device CPU")
  assert panel.locator("select[aria-label='device']").input_value() == "CPU"
  assert not page.lazynb_errors, page.lazynb_errors


EVIL = '<img src=x onerror="window.__lz_pwned=1"><script>window.__lz_pwned=2</script>'

def test_saved_notebook_renders_without_kernel_and_runs_no_payload_script(lab, page):
  doc = trace_doc(PROGRAM)
  evil = json.loads(json.dumps(doc))
  evil["kernels"][0]["name_parts"] = [[EVIL, "global"], ["x", '"><script>window.__lz_pwned=3</script>']]
  evil["kernels"][0]["source"] = EVIL + "\n" + evil["kernels"][0]["source"]
  evil["error"] = {"type": "ValueError", "message": EVIL}
  g = next(iter(evil["graphs"].values()))
  g["nodes"][0]["op"] = EVIL
  evil["settings"] = {"DEBUG": EVIL}
  write_notebook(lab.root / "saved.ipynb", ["# ran earlier", "# and a hostile output"], outputs={0: [trace_output(doc)], 1: [trace_output(evil)]},
                 kernelspec={"name": "lazynb-no-such-kernel", "display_name": "gone", "language": "python"})
  open_notebook(page, lab, "saved.ipynb", kernel=False)
  page.wait_for_function("() => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .lz-trace[data-render-ms]').length === 2")
  assert page.locator(".jp-StatusBar-TextItem:has-text('No Kernel')").count() >= 1 or page.locator(".jp-Toolbar-kernelName:has-text('No Kernel')").count() >= 1
  tr = _trace_in(page, 0)
  assert tr.locator(".lz-sched-row").count() == len(doc["schedule"])
  page.wait_for_function("el => el.dataset.state === 'drawn'", arg=tr.locator(".lz-graph-svg").element_handle())
  shot(page, "ui-saved-no-kernel", cell(page, 0))
  bad = _trace_in(page, 1)
  assert EVIL in bad.locator(".lz-error").inner_text()
  assert EVIL in bad.locator(".lz-source .lz-line").first.inner_text()
  assert bad.locator("img, script").count() == 0
  assert page.evaluate("() => window.__lz_pwned") is None
  # the hostile node label is text in the SVG too
  bad.locator(".lz-seg[data-graph='ast']").click()
  assert page.evaluate("() => window.__lz_pwned") is None
  # the views follow JupyterLab's theme: switch to the dark theme
  page.locator(".lm-MenuBar-itemLabel:text-is('Settings')").click()
  page.locator(".lm-Menu-itemLabel:text-is('Theme')").hover()
  page.locator(".lm-Menu-itemLabel:text-is('JupyterLab Dark')").click()
  page.wait_for_selector("body[data-jp-theme-light='false']", state="attached")
  page.wait_for_timeout(500)
  lum = tr.evaluate("""el => { const c = getComputedStyle(el).backgroundColor.match(/[0-9.]+/g).map(Number);
    return (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]) / 255; }""")
  text = tr.locator(".lz-source .lz-line").first.evaluate("el => getComputedStyle(el).color")
  assert lum < 0.3, f"dark background expected, luminance {lum}"
  assert text != "rgb(0, 0, 0)"
  shot(page, "ui-dark-theme", cell(page, 0))
  page.locator(".lm-MenuBar-itemLabel:text-is('Settings')").click()
  page.locator(".lm-Menu-itemLabel:text-is('Theme')").hover()
  page.locator(".lm-Menu-itemLabel:text-is('JupyterLab Light')").click()
  page.wait_for_selector("body[data-jp-theme-light='true']", state="attached")

BENCH_CODE = """
x = Tensor.rand(16, 16).realize()
y = x
for i in range(200): y = (y * 1.01 + i).relu() if i % 2 else (y - 0.5).exp2()
y.realize()
"""

def bench_doc(nodes: int = 2000) -> dict:
  """A real trace whose kernel graph is its lowered graph cut at exactly `nodes` nodes."""
  from lazynb import Tensor
  from lazynb.trace import capture
  from lazynb.notebook.tracedoc import GraphStore
  with capture(rewrites=False) as tr: exec(BENCH_CODE, {"Tensor": Tensor})
  doc = json.loads(json.dumps(tr.to_json()))
  low = next(e.data["lowered"] for e in tr.events if e.kind == "program" and e.data.get("lowered") is not None)
  gs = GraphStore()
  big = gs.graphs[gs.add(low, limit=nodes)]
  assert len(big["nodes"]) == nodes, len(big["nodes"])
  doc["graphs"]["big"] = json.loads(json.dumps(big))
  doc["kernels"][0]["graph"] = "big"
  return doc

FULL_DRAW_JS = """svg => new Promise(resolve => {
  const longTasks = [];
  const obs = new PerformanceObserver(list => list.getEntries().forEach(e => longTasks.push(e.duration)));
  try { obs.observe({ entryTypes: ['longtask'] }); } catch (e) {}
  const box = svg.closest('.lz-graph').querySelector('.lz-check input');
  const t0 = performance.now();
  const check = () => {
    if (svg.dataset.state === 'drawn' && svg.dataset.nodes === '2000') {
      requestAnimationFrame(() => setTimeout(() => { obs.disconnect(); resolve({ painted: performance.now() - t0,
        layout: +svg.dataset.layoutMs, where: svg.dataset.layout, longest: Math.max(0, ...longTasks) }); }, 0));
    } else setTimeout(check, 5);
  };
  box.click();
  check();
})"""

def _first_render(pg, tr) -> dict:
  """Wait (without polling the page's DOM) until the trace's first graph is drawn; read the renderer's own timings."""
  tr.evaluate("el => new Promise(r => { const t = () => el.hasAttribute('data-render-ms') ? r() : setTimeout(t, 10); t(); })")
  svg = tr.locator(".lz-graph-svg")
  return {"render_ms": float(tr.get_attribute("data-render-ms")), "build_ms": float(tr.get_attribute("data-build-ms")),
          "layout_ms": float(svg.get_attribute("data-layout-ms")), "draw_ms": float(svg.get_attribute("data-draw-ms")),
          "nodes": int(svg.get_attribute("data-nodes")), "where": svg.get_attribute("data-layout")}

def test_render_time_2000_node_graph(lab, page):
  """Time to render a trace whose kernel graph has 2,000 nodes: (1) shown by a cell run in a live notebook,
  (2) drawing all 2,000 nodes (collapse off), (3) opening a saved notebook cold (includes JupyterLab loading it)."""
  doc = bench_doc(2000)
  (lab.root / "bench.json").write_text(json.dumps(doc))
  write_notebook(lab.root / "bench-live.ipynb", [
    "import json\nfrom IPython.display import display\ndoc = json.load(open('bench.json'))",
    f"display({{'{MIME}': doc, 'text/plain': 'lazynb trace'}}, raw=True)"])
  open_notebook(page, lab, "bench-live.ipynb")
  run_cell(page, 0)
  runs = []
  for _ in range(3):  # each run replaces the output with a new renderer; the median is reported
    prev = page.evaluate("() => [...document.querySelectorAll('.lz-trace')].map(e => e.dataset.renderStart).join()")
    run_cell(page, 1)
    tr = _trace_in(page, 1)
    page.wait_for_function("prev => { const e = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .lz-trace[data-render-ms]');"
                           " return e && e.dataset.renderStart !== prev; }", arg=prev, polling=50)
    runs.append(_first_render(page, tr))
  live = sorted(runs, key=lambda r: r["render_ms"])[1]
  print("live renders (ms):", [round(r["render_ms"]) for r in runs], "layout:", [round(r["layout_ms"]) for r in runs], "build:", [round(r["build_ms"]) for r in runs])
  fulls = []
  svg = tr.locator(".lz-graph-svg")
  for i in range(3):
    if i:  # collapse again, then measure drawing all 2,000 nodes once more
      tr.locator(".lz-graph .lz-check input").first.check()
      page.wait_for_function("el => el.dataset.state === 'drawn' && el.dataset.nodes !== '2000'", arg=svg.element_handle(), polling=50)
    fulls.append(svg.evaluate(FULL_DRAW_JS))
  full = sorted(fulls, key=lambda r: r["painted"])[1]
  print("full draws (ms):", [round(r["painted"]) for r in fulls])
  shot(page, "ui-2000-nodes", cell(page, 1))
  # fit shows all 2,000 nodes as boxes (labels unreadable, so not drawn); zooming in brings labels back
  tr.locator(".lz-graph button:text-is('fit')").click()
  page.wait_for_function("el => el.classList.contains('lz-lod-low')", arg=svg.element_handle())
  shot(page, "ui-2000-nodes-fit", cell(page, 1))
  for _ in range(15): tr.locator(".lz-graph button:text-is('+')").click()  # noqa: E701
  page.wait_for_function("el => !el.classList.contains('lz-lod-low') && el.querySelectorAll('text').length > 20", arg=svg.element_handle())
  shot(page, "ui-2000-nodes-zoomed", cell(page, 1))

  write_notebook(lab.root / "bench.ipynb", ["# 2,000-node graph"], outputs={0: [trace_output(doc)]},
                 kernelspec={"name": "lazynb-no-such-kernel", "display_name": "gone", "language": "python"})
  open_notebook(page, lab, "bench.ipynb", kernel=False)
  cold = _first_render(page, _trace_in(page, 0))

  line = (f"JupyterLab renderer, trace with a 2,000-node graph: cell output rendered in {live['render_ms']:.0f} ms "
          f"({live['nodes']} nodes drawn after collapsing index/const; build {live['build_ms']:.0f} ms, layout {live['layout_ms']:.0f} ms in the {live['where']}, "
          f"SVG {live['draw_ms']:.0f} ms); all 2,000 nodes (collapse off) painted {full['painted']:.0f} ms after the click "
          f"(layout {full['layout']:.0f} ms in the {full['where']}); longest main-thread task {full['longest']:.0f} ms; "
          f"saved notebook opened cold: {cold['render_ms']:.0f} ms")
  print(line)
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  (ARTIFACTS / "render-2000.json").write_text(json.dumps({"live": live, "full": full, "cold": cold}, indent=1))
  assert live["where"] == "worker" and full["where"] == "worker", "large graphs are laid out off the main thread"
  # the goal is 1 s (met here on a busy 2-core VM, see docs/benchmarks.md); the assertion only guards against a
  # pathological regression, so that a loaded CI machine does not turn the measurement into a flaky failure
  if live["render_ms"] > GOAL_MS or full["painted"] > GOAL_MS:
    warnings.warn(f"2,000-node render above the {GOAL_MS} ms goal: {line}")
  assert live["render_ms"] < 3 * GOAL_MS and full["painted"] < 3 * GOAL_MS, line
