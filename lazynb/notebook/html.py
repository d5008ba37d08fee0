"""The text/html views of a trace document (see lazynb.tracedoc): `bundle(doc)` for an output, `render_html(doc)`.

`bundle` is what a %%tinygrad output carries: a stub under the trace MIME type and, as text/html (`render_view`), the
document once, packed, with the loader of the interactive view (lazynb.viz.embed: the JupyterLab renderer's code as one
script, which only the session's first output carries) and a short view for pages where scripts do not run
(lazynb.viz.text_fallback). `render_html`, the static Python view below, is no longer part of an output.

`render_html`, the static view, is one self-contained <div> with a scoped <style>: no scripts, no network, no external
fonts, so it renders the same in JupyterLab, classic Notebook 7, nbviewer, VS Code and GitHub. Views are CSS-only tabs (radio inputs + labels with
ids unique to this output) and <details> sections; where the <style> is stripped (GitHub) every panel shows in turn.

Every string in the document is untrusted: it only reaches the page through `esc` (html.escape), through pygments
(which escapes), or as a DOT label (which dot escapes, see graphviz.py). Output size is bounded: tables have row
limits, and drawn graphs and kernel sources share byte budgets, so a huge graph still gives a small page.
"""
from __future__ import annotations
import base64, io, json, re, secrets, sys
from lazynb import viz as _viz
from lazynb.helpers import plural
from lazynb.notebook import graphviz as gv
from lazynb.notebook.stpicture import pictures_html, esc, as_list as _list, tuple_text

VIEWS = ("schedule", "graph", "shapetracker", "kernels", "timing", "rewrites")
TITLES = {"schedule": "Schedule", "graph": "Graph", "shapetracker": "ShapeTracker", "kernels": "Kernels", "timing": "Timing",
          "rewrites": "Rewrites"}
REASONS = {
  "realize": "a tensor you realized (or marked .contiguous()): its value is stored to a buffer",
  "reduce": "a reduce that cannot fuse into the kernel using it: that kernel has a reduce already, or reads the result "
            "through a view (expand, permute, pad ...) or more than once",
  "copy": "the data moves to another device, which is a copy of its own",
  "pad": "a padded (masked) view cannot pass through an op where f(0) != 0 (exp, log, 1/x, //, %), so the value is stored first",
}
REASON_COLORS = {"realize": "#b6e8b6", "reduce": "#ff9e9e", "copy": "#b9dcff", "pad": "#ffe599"}
AXIS_KINDS = ("global", "thread", "local", "group", "reduce", "unroll", "upcast")
AXIS_PREFIX = {"gidx": "global", "tidx": "thread", "lidx": "local", "ridx": "reduce", "unroll": "unroll", "upcast": "upcast"}

# size bounds
SVG_BUDGET = 600_000         # bytes of inline SVG per output
SOURCE_BUDGET = 200_000      # bytes of highlighted source + uop tables per output
MAX_SOURCE_CHARS = 40_000    # per kernel
MAX_ROWS = 300               # schedule items, buffer accesses
MAX_KERNELS = 60             # kernel cards / graphs
MAX_UOPS = 300
MAX_PASSES = 30
MAX_STEPS = 40
MAX_PICTURES = 12            # ShapeTracker pictures (without per-cell tooltips) in the ShapeTracker view
REWRITE_GRAPH_NODES = 200    # draw a rewrite's before/after graphs only up to this many nodes


# ---------------------------------------------------------------- which output carries the view's script
_script_sent = False
_carrier: str | None = None  # the notebook cell whose output carries the script, if the front end said which cell ran

def _cell_id() -> str | None:
  """The id of the notebook cell running now, as JupyterLab and Notebook 7 send it with each execute request (else None)."""
  try:
    from IPython import get_ipython  # (the notebook layer: IPython is there when a cell runs)
    kernel = getattr(get_ipython(), "kernel", None)
    cid = (kernel.get_parent().get("metadata") or {}).get("cellId") if kernel is not None else None
    return cid if isinstance(cid, str) else None
  except Exception: return None  # noqa: BLE001  (no IPython, an older kernel: no cell id)

def script_once() -> bool:
  """True for the first output of this process (the first output of a kernel session carries the script), again for a
  later output of that same cell (re-running it must not drop the script from the notebook), and always in Colab."""
  global _script_sent, _carrier
  if "google.colab" in sys.modules: return True
  cell = _cell_id()
  if not _script_sent:
    _script_sent, _carrier = True, cell
    return True
  return cell is not None and cell == _carrier

def _num(x, scale: float = 1.0, fmt: str = "{:.2f}") -> str:
  try: return fmt.format(float(x) * scale)
  except (TypeError, ValueError): return esc(x)

def _vars_row(k: dict) -> str:
  """Variables (symbolic sizes): the int arguments of the kernel and their values in its last run."""
  if not k.get("vars"): return ""
  vals = _dict(k.get("var_vals"))
  return ('<tr><th>variables</th><td colspan="3"><code>' + ", ".join(f"{esc(n)}={esc(vals.get(n, '?'))}" for n in k["vars"]) +
          "</code> (int arguments: one compiled kernel for every value)</td></tr>")

def _expr(x, limit: int = 2000) -> str:
  """An index/valid expression, escaped, with break opportunities after its operators."""
  x = "" if x is None else str(x)
  x = x if len(x) <= limit else x[:limit] + f" ... ({len(x) - limit} more characters)"
  return "".join(c + "<wbr>" if c in "+*" else c for c in esc(x))

def _dict(x) -> dict: return x if isinstance(x, dict) else {}

class _Ctx:
  def __init__(self, doc: dict):
    self.doc = doc
    self.root = "lzt-" + secrets.token_hex(5)
    self.graphs = _dict(doc.get("graphs"))
    self.kernels = {k.get("id"): k for k in _list(doc.get("kernels")) if isinstance(k, dict) and isinstance(k.get("id"), (int, str))}
    self.svg_left, self.src_left = SVG_BUDGET, SOURCE_BUDGET
    self.n = 0
    self.draws: list[tuple[int, dict, bool, int]] = []  # (priority, graph, hide_index, max_nodes), filled in by resolve()
  def kernel(self, kid) -> dict | None: return self.kernels.get(kid) if isinstance(kid, (int, str)) else None
  def new_id(self) -> str:
    self.n += 1
    return f"{self.root}-{self.n}"

  def draw(self, g: dict, hide: bool, max_nodes: int, priority: int) -> str:
    """A placeholder for a drawn graph. Drawing waits until the page is built, so that the SVG budget goes to the
    most useful graphs first (priority 0 first) and dot can run on several graphs at once."""
    self.draws.append((priority, g, hide, max_nodes))
    return f"<!--{self.root}:draw:{len(self.draws) - 1}-->"

  def resolve(self, page: str) -> str:
    done: dict[int, str] = {}
    for prio in sorted({d[0] for d in self.draws}):
      todo = [i for i, d in enumerate(self.draws) if d[0] == prio]
      drawable = [i for i in todo if gv.available() and len(gv.subgraph(self.draws[i][1], self.draws[i][2])[0]) <= self.draws[i][3]]
      svgs = dict(zip(drawable, gv.render_many([(self.draws[i][1], self.draws[i][2]) for i in drawable]))) if self.svg_left > 0 else {}
      for i in todo: done[i] = self._drawn(self.draws[i], i in drawable, svgs.get(i))
    return re.sub(f"<!--{self.root}:draw:(\\d+)-->", lambda m: done[int(m.group(1))], page)

  def _listing(self, g: dict, hide: bool, why: str = "") -> str:
    text = gv.text_listing(g, hide)
    if len(text) > self.svg_left: return _note(why + "Not listed: this output reached its size bound.")
    self.svg_left -= len(text)
    return (_note(why) if why else "") + text

  def _drawn(self, d: tuple, drawable: bool, svg: str | None) -> str:
    _, g, hide, max_nodes = d
    if not gv.available(): return self._listing(g, hide)
    n = len(gv.subgraph(g, hide)[0])
    if not drawable: return _note(f"{plural(n, 'node')}: too many to draw here (limit {max_nodes}).")
    if svg is None and self.svg_left > 0: return self._listing(g, hide, "Graphviz failed on this graph; listing it instead. ")
    note = ""
    if svg is not None and len(svg) > self.svg_left:  # too big for what is left: draw the part nearest the output
      fit = int(n * self.svg_left / len(svg) * 0.85)
      svg = gv.render_svg(g, hide, fit) if fit >= 40 else None
      note = _note(f"Drawing the {plural(fit, 'node')} nearest the output of these {n}: this output is near its size bound.", "lzt-warn")
    if svg is None or len(svg) > self.svg_left:
      return _note(f"Not drawn: this output already holds {(SVG_BUDGET - self.svg_left) // 1000} kB of graphs, its size bound. "
                   "Capture a smaller block, or render this view alone with render_html(doc, show={...}).")
    self.svg_left -= len(svg)
    return f'{note}<div class="lzt-svg">{svg}</div>'

def _note(text: str, cls: str = "lzt-note") -> str: return f'<div class="{cls}">{text}</div>'

def _tabs(ctx: _Ctx, items: list[tuple[str, str]], sub: bool = False) -> str:
  """CSS-only tabs: radio inputs and labels first, then the panels (shown by :checked ~ nth-of-type rules)."""
  name, heads = ctx.new_id(), []
  for i, (title, _) in enumerate(items):
    tid = ctx.new_id()
    heads.append(f'<input type="radio" name="{name}" id="{tid}"{" checked" if i == 0 else ""}><label for="{tid}">{title}</label>')
  panels = "".join(f'<div class="lzt-panel">{body}</div>' for _, body in items)
  return f'<div class="lzt-tabs{" lzt-sub" if sub else ""}">{"".join(heads)}{panels}</div>'

def _kname(k: dict | None) -> str:
  """A kernel name coloured by axis kind, like tinygrad's DEBUG output."""
  if not isinstance(k, dict): return "?"
  parts = [p for p in _list(k.get("name_parts")) if isinstance(p, list) and len(p) == 2]
  if not parts: return f'<span class="lzt-kn">{esc(k.get("name"))}</span>'
  spans = "".join(f'<span class="lzt-ax-{kind}">{esc(t)}</span>' if kind in AXIS_KINDS else esc(t) for t, kind in parts)
  return f'<span class="lzt-kn">{spans}</span>'

def _axis(name) -> str:
  kind = next((v for p, v in AXIS_PREFIX.items() if str(name).startswith(p)), "")
  return f'<span class="lzt-ax-{kind}">{esc(name)}</span>' if kind else esc(name)

# ---------------------------------------------------------------- views

def view_schedule(ctx: _Ctx) -> str:
  items = [s for s in _list(ctx.doc.get("schedule")) if isinstance(s, dict)]
  n = ctx.doc.get("folded_constants")
  folded = _note(f"{esc(n)} tensor{' was a constant' if n == 1 else 's were constants'} after folding: no kernel (fold constants)."
                 ) if isinstance(n, int) and n > 0 else ""
  if not items: return folded or _note("Nothing was scheduled in this block (everything was already realized, or nothing was realized).")
  rows = []
  for s in items[:MAX_ROWS]:
    bufs = "<br>".join(f'<span class="lzt-role">{esc(b.get("role"))}</span> <code>buf{esc(b.get("buf"))}</code> '
                       f'{esc(b.get("size"))} &times; {esc(b.get("dtype"))} <span class="lzt-muted">on {esc(b.get("device"))}</span>'
                       for b in _list(s.get("bufs")) if isinstance(b, dict))
    reason = str(s.get("reason") or "")
    color = REASON_COLORS.get(reason, "#dedede")
    why = REASONS.get(reason, "no explanation recorded for this reason" if reason else "")
    kern = _kname(ctx.kernel(s.get("kernel"))) if s.get("kernel") is not None else '<span class="lzt-muted">(not run)</span>'
    rows.append(f'<tr><td>{esc(s.get("index"))}</td><td>{esc(s.get("kind"))}</td><td>{kern}</td>'
                f'<td><span class="lzt-badge" style="background:{color}">{esc(reason or "-")}</span>'
                f'<div class="lzt-why">{esc(why)}</div></td><td>{bufs}</td></tr>')
  more = _note(f"Showing {MAX_ROWS} of {len(items)} schedule items.") if len(items) > MAX_ROWS else ""
  return ('<p class="lzt-muted">Kernels in the order they run. Each one stores one buffer (out) and loads others (in); '
          'the reason says why the graph was cut there.</p>'
          '<table><tr><th>#</th><th>kind</th><th>kernel</th><th>reason for the kernel boundary</th><th>buffers</th></tr>'
          + "".join(rows) + "</table>" + more + folded)

def _legend() -> str:
  swatches = (f'<span><i style="background:{c}"></i>{k}</span>' for k, c in gv.KIND_COLORS.items())
  return '<div class="lzt-legend">' + " ".join(swatches) + "</div>"

def graph_block(ctx: _Ctx, gid, max_nodes: int = gv.MAX_NODES, tabs: bool = True, priority: int = 0) -> str:
  """One graph, with tabs for all nodes / without index and const nodes, and a note if the document truncated it."""
  g = ctx.graphs.get(gid) if isinstance(gid, str) else None
  if not isinstance(g, dict): return _note(f"Graph {esc(gid)} is not in the document.")
  n_all = len(_list(g.get("nodes")))
  note = ""
  if g.get("truncated"):
    note = _note(f"Truncated: showing the {plural(n_all, 'node')} nearest the output of {esc(g.get('total_nodes'))}.", "lzt-warn")
  n_vis = len(gv.subgraph(g, True)[0])
  if not tabs or n_vis == n_all: return note + ctx.draw(g, False, max_nodes, priority)
  return note + _tabs(ctx, [(f"all nodes ({n_all})", ctx.draw(g, False, max_nodes, priority)),
                            (f"no index/const ({n_vis})", ctx.draw(g, True, max_nodes, priority + 1))], sub=True)

def view_graph(ctx: _Ctx) -> str:
  out = [_legend()]
  if not gv.available(): out.append(_note("Graphviz was not found, so graphs are listed as text. " + esc(gv.INSTALL_HINT), "lzt-warn"))
  tgs = _list(ctx.doc.get("tensor_graphs"))
  for i, gid in enumerate(tgs[:MAX_KERNELS]):
    out.append(f"<h4>Lazy tensor graph{f' {i + 1}' if len(tgs) > 1 else ''}</h4>" + graph_block(ctx, gid))
  ks = list(ctx.kernels.values())
  for k in ks[:MAX_KERNELS]:
    out.append(f"<h4>Kernel {esc(k.get('id'))} {_kname(k)}: AST</h4>" + graph_block(ctx, k.get("graph")))
  if len(ks) > MAX_KERNELS: out.append(_note(f"Showing the graphs of {MAX_KERNELS} of {plural(len(ks), 'kernel')}."))
  if len(out) == 1: out.append(_note("No graphs in this trace."))
  return "".join(out)

def view_shapetracker(ctx: _Ctx) -> str:
  views = [v for v in _list(ctx.doc.get("views")) if isinstance(v, dict)]
  if not views: return _note("No buffer accesses in this trace.")
  rows = []
  for v in views[:MAX_ROWS]:
    k = ctx.kernel(v.get("kernel"))
    stack = "".join(f'<div class="lzt-view">shape {esc(tuple_text(w.get("shape")))} strides {esc(tuple_text(w.get("strides")))} offset {esc(w.get("offset"))}'
                    + (f' mask {esc(w.get("mask"))}' if w.get("mask") else "") + "</div>"
                    for w in _list(v.get("views")) if isinstance(w, dict))
    mvs = [f"{esc(m[0])} <code>{esc(m[1])}</code>" for m in reversed(_list(v.get("movement"))) if isinstance(m, list) and len(m) == 2]
    if len(mvs) > 12: mvs = mvs[:6] + [f'<span class="lzt-muted">({len(mvs) - 12} more)</span>'] + mvs[-6:]
    mv = " &rarr; ".join(mvs)
    buf = f"data{esc(v.get('buf'))}" if v.get("buf") is not None else "-"
    axes = " ".join(_axis(a) for a in _list(v.get("axis_names")))
    rows.append(f'<tr><td class="lzt-nw">{esc(v.get("kernel"))} {_kname(k) if k else ""}</td><td><code>{buf}</code></td>'
                f'<td>{esc(v.get("access"))}</td>'
                f'<td><code>{esc(tuple_text(v.get("shape")))}</code><div class="lzt-mono lzt-small">{axes}</div></td><td class="lzt-mono">{stack}</td>'
                f'<td><code>{_expr(v.get("index"))}</code></td><td><code>{_expr(v.get("valid"))}</code></td>'
                f'<td class="lzt-small">{mv or "<span class=lzt-muted>none</span>"}</td></tr>')
  more = _note(f"Showing {MAX_ROWS} of {len(views)} buffer accesses.") if len(views) > MAX_ROWS else ""
  more += _pictures(ctx, views)
  return ('<p class="lzt-muted">Every load, store and masked constant of every kernel: the stack of views (after the kernel\'s opts) '
          'and the index and valid expressions it renders to, in the kernel\'s own axis names.</p>'
          '<table class="lzt-st"><tr><th>kernel</th><th>buffer</th><th>access</th><th>shape / axes</th><th>view stack</th><th>index</th>'
          '<th>valid</th><th>movement ops (buffer &rarr; kernel)</th></tr>' + "".join(rows) + "</table>" + more)

def _pictures(ctx: _Ctx, views: list[dict]) -> str:
  """Each access's ShapeTracker picture (lazynb.shape.picture), folded: the grid of memory indices it reads."""
  out = []
  for v in [v for v in views if isinstance(v.get("picture"), dict)][:MAX_PICTURES]:
    k = ctx.kernel(v.get("kernel"))
    buf = f"data{v.get('buf')}" if v.get("buf") is not None else ""
    title = f"{v.get('access')} {buf}".strip()
    out.append(f'<details class="lzt-pic"><summary>picture: kernel {esc(v.get("kernel"))} {_kname(k) if k else ""} '
               f'<code>{esc(title)}</code></summary>{pictures_html([dict(v["picture"], title=title)], tooltips=False)}</details>')
  return "".join(out)

def _lexer(language: str):
  from pygments.lexers import CLexer, CppLexer, CudaLexer, LlvmLexer, PythonLexer, TextLexer
  lang = language.lower()
  for key, lexer in (("cuda", CudaLexer), ("python", PythonLexer), ("metal", CppLexer), ("llvm", LlvmLexer), ("clang", CLexer),
                     ("opencl", CLexer), ("c", CLexer)):
    if key in lang: return lexer()
  return TextLexer()

def highlight(source: str, language: str) -> str:
  try:
    from pygments import highlight as _hl
    from pygments.formatters import HtmlFormatter
    return _hl(source, _lexer(language), HtmlFormatter(cssclass="lzt-hl", linenos="inline"))
  except ImportError: return f'<div class="lzt-hl"><pre>{esc(source)}</pre></div>'

def _source(ctx: _Ctx, src: str, lang: str) -> tuple[str, str]:
  """(note, highlighted source), cut at a line end to fit MAX_SOURCE_CHARS and what is left of the source budget."""
  if ctx.src_left <= 0: return _note(f"Source ({len(src)} characters) not shown: this output reached its size bound."), ""
  keep = min(len(src), MAX_SOURCE_CHARS)
  for _ in range(8):  # shrink until it fits (a few rounds at most)
    cut = src[:keep] if keep == len(src) else src[:src.rfind("\n", 0, keep) + 1 or keep]
    body = highlight(cut, lang)
    if len(body) <= ctx.src_left or len(cut) < 2000: break
    keep = max(0, min(len(cut) - 1, int(len(cut) * ctx.src_left / len(body) * 0.9)))
  if len(body) > ctx.src_left: return _note(f"Source ({len(src)} characters) not shown: this output reached its size bound."), ""
  ctx.src_left -= len(body)
  lines = src.count("\n") + 1
  return (_note(f"Showing the first {cut.count(chr(10))} of {plural(lines, 'line')}.") if len(cut) < len(src) else ""), body

def _lines(xs) -> str: return ", ".join(map(str, sorted({x for x in xs if isinstance(x, int)})[:6])) if isinstance(xs, list) else ""

def _uops(ctx: _Ctx, k: dict) -> str:
  uops = [u for u in _list(k.get("uops")) if isinstance(u, dict)]
  lm = _list(k.get("line_map"))
  rows = "".join(f'<tr><td>{esc(u.get("i"))}</td><td>{esc(u.get("op"))}</td><td>{esc(u.get("dtype"))}</td><td>{esc(u.get("src"))}</td>'
                 f'<td>{esc(u.get("arg"))}</td><td>{esc(_lines(lm[i]) if i < len(lm) else "")}</td></tr>'
                 for i, u in enumerate(uops[:MAX_UOPS]))
  more = f" (showing {MAX_UOPS})" if len(uops) > MAX_UOPS else ""
  return (f"<details><summary>{len(uops)} linearized UOps{more}</summary><table class=\"lzt-mono lzt-small\">"
          f"<tr><th>#</th><th>op</th><th>dtype</th><th>src</th><th>arg</th><th>source lines</th></tr>{rows}</table></details>")

def view_kernels(ctx: _Ctx) -> str:
  ks = list(ctx.kernels.values())
  if not ks: return _note("No kernels were compiled or run in this block.")
  out = []
  for k in ks[:MAX_KERNELS]:
    shape = " ".join(f'<span class="lzt-ax-{str(t).lower()}">{esc(s)}</span>' if str(t).lower() in AXIS_KINDS else esc(s)
                     for s, t in zip(_list(k.get("full_shape")), _list(k.get("axis_types"))))
    opts = ", ".join(f"<code>{esc(o)}</code>" for o in _list(k.get("opts"))) or '<span class="lzt-muted">none</span>'
    stages = ", ".join(f"{esc(n)} {_num(t, 1e3, '{:.1f}')} ms" for n, t in _dict(k.get("timings")).items())
    lang = str(k.get("language") or "")
    srcnote, body = _source(ctx, str(k.get("source") or ""), lang)
    uops = _uops(ctx, k) if ctx.src_left > 0 else _note("UOps not shown: this output reached its size bound.")
    ctx.src_left -= len(uops)
    out.append(f'<div class="lzt-card"><div class="lzt-title">{_kname(k)} <span class="lzt-muted">kernel {esc(k.get("id"))} &middot; '
               f'{esc(k.get("device"))} &middot; {esc(lang)}</span></div><table class="lzt-kv">'
               f'<tr><th>global size</th><td><code>{esc(tuple_text(k.get("global_size")))}</code></td><th>local size</th>'
               f'<td><code>{esc(tuple_text(k.get("local_size")))}</code></td></tr>'
               f'<tr><th>full shape</th><td class="lzt-mono">{shape}</td><th>applied opts</th><td>{opts}</td></tr>'
               f'<tr><th>estimates</th><td>{esc(plural(k.get("op_estimate"), "op"))}, {esc(plural(k.get("mem_estimate"), "byte"))}</td>'
               f'<th>codegen</th><td>{stages or "-"}</td></tr>{_vars_row(k)}</table>{srcnote}<div class="lzt-src">{body}</div>{uops}</div>')
  if len(ks) > MAX_KERNELS: out.append(_note(f"Showing {MAX_KERNELS} of {plural(len(ks), 'kernel')}."))
  return ('<p class="lzt-muted">Name colours: ' + " ".join(f'<span class="lzt-ax-{a}">{a}</span>' for a in AXIS_KINDS) + "</p>"
          + "".join(out))

def _chart(ks: list[dict]) -> str:
  """Horizontal bars of run time per kernel as an inline PNG; empty if matplotlib is missing."""
  try:
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg
  except ImportError: return ""
  ks = ks[:40]
  names, times = [], []
  for k in ks:
    n = str(k.get("display_name") or k.get("name") or "?")
    names.append(f"{k.get('id')}: " + (n if len(n) <= 40 else n[:37] + "..."))
    try: times.append(float(k.get("time_s") or 0) * 1e6)
    except (TypeError, ValueError): times.append(0.0)
  grey = "#888888"
  with matplotlib.rc_context({"text.parse_math": False, "font.size": 9}):
    fig = Figure(figsize=(7, 0.9 + 0.28 * len(ks)), dpi=96)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.barh(range(len(ks)), times, color="#4a90d9")
    ax.set_yticks(range(len(ks)), labels=names)
    ax.invert_yaxis()
    ax.set_xlabel("run time (µs)", color=grey)
    ax.tick_params(colors=grey)
    for s in ax.spines.values(): s.set_color(grey)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", transparent=True)
  return f'<img class="lzt-chart" alt="run time per kernel" src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}">'

def view_timing(ctx: _Ctx) -> str:
  t = _dict(ctx.doc.get("timing"))
  ks = list(ctx.kernels.values())
  rows = "".join(f'<tr><td>{esc(k.get("id"))}</td><td>{_kname(k)}</td><td>{esc(k.get("device"))}</td><td>{esc(k.get("runs"))}</td>'
                 f'<td>{_num(k.get("compile_s"), 1e3, "{:.1f}") if k.get("compile_s") is not None else "cached"}</td>'
                 f'<td>{_num(k.get("time_s"), 1e6, "{:.1f}")}</td><td>{_num(k.get("gflops"))}</td><td>{_num(k.get("gbs"))}</td></tr>'
                 for k in ks[:MAX_ROWS])
  summary = (f'<p>Block took <b>{_num(t.get("total_s"), 1e3, "{:.1f}")} ms</b>: {_num(t.get("compile_s"), 1e3, "{:.1f}")} ms compiling, '
             f'{_num(t.get("run_s"), 1e3, "{:.3f}")} ms running kernels and copies.</p>')
  if not ks: return summary + _note("No kernels ran.")
  return (summary + '<table><tr><th>#</th><th>kernel</th><th>device</th><th>runs</th><th>compile (ms)</th><th>run (&micro;s)</th>'
          '<th>GFLOPS</th><th>GB/s</th></tr>' + rows + "</table>" + _chart(ks))

def view_rewrites(ctx: _Ctx) -> str:
  passes = [r for r in _list(ctx.doc.get("rewrites")) if isinstance(r, dict)]
  if not passes: return _note("No rewrites recorded (capture with rewrites=True to see them).")
  out: list[str] = []
  seen: dict[tuple, int] = {}  # (before, after) graphs -> the pass that showed them
  for i, r in enumerate(passes[:MAX_PASSES]):
    steps = [s for s in _list(r.get("steps")) if isinstance(s, dict)]
    rows = "".join(f'<tr><td>{j}</td><td><code>{esc(s.get("pattern"))}</code></td><td><code>{esc(s.get("before"))}</code></td>'
                   f'<td>&rarr;</td><td><code>{esc(s.get("after"))}</code></td></tr>' for j, s in enumerate(steps[:MAX_STEPS]))
    more = _note(f"Showing {MAX_STEPS} of {esc(plural(r.get('total_steps', len(steps)), 'step'))}.") if len(steps) > MAX_STEPS else ""
    key = (str(r.get("before_graph")), str(r.get("after_graph")))
    if key in seen: graphs = _note(f"Same before/after graphs as pass {seen[key]} above.")
    else:
      seen[key] = i
      graphs = ('<div class="lzt-pair"><div><b>before</b>' + graph_block(ctx, r.get("before_graph"), REWRITE_GRAPH_NODES, False, 2) +
                '</div><div><b>after</b>' + graph_block(ctx, r.get("after_graph"), REWRITE_GRAPH_NODES, False, 2) + "</div></div>")
    table = (f'<table class="lzt-small"><tr><th>#</th><th>matched pattern</th><th>before</th><th></th><th>after</th></tr>{rows}</table>'
             if rows else _note("No pattern matched."))
    sizes = " &rarr; ".join(esc(_dict(ctx.graphs.get(str(r.get(g)))).get("total_nodes", "?")) for g in ("before_graph", "after_graph"))
    stage = f'<b>[{esc(r.get("stage") or "other")}]</b>'
    out.append(f'<details class="lzt-pass"><summary>{i}: {stage} {esc(r.get("name"))} <span class="lzt-muted">{esc(plural(r.get("total_steps"), "step"))}, '
               f'nodes {sizes}</span></summary>{table}{more}{graphs}</details>')
  if len(passes) > MAX_PASSES: out.append(_note(f"Showing {MAX_PASSES} of {plural(len(passes), 'pass', 'passes')}."))
  return ('<p class="lzt-muted">Each compiler pass in the order it ran, tagged with its stage (tensor graph, kernels, lowered, '
          'simplified, linearized): the patterns that fired, and the graph before and after.</p>' + "".join(out))

RENDER = {"schedule": view_schedule, "graph": view_graph, "shapetracker": view_shapetracker, "kernels": view_kernels,
          "timing": view_timing, "rewrites": view_rewrites}

# ---------------------------------------------------------------- page

def _header(ctx: _Ctx) -> str:
  d, t = ctx.doc, _dict(ctx.doc.get("timing"))
  settings = " ".join(f"{esc(k)}={esc(v)}" for k, v in _dict(d.get("settings")).items())
  head = (f'<div class="lzt-head"><b>lazynb trace</b> &middot; {plural(len(_list(d.get("schedule"))), "schedule item")} &middot; '
          f'{plural(len(ctx.kernels), "kernel")} &middot; {_num(t.get("run_s"), 1e3, "{:.3f}")} ms run &middot; '
          f'{_num(t.get("compile_s"), 1e3, "{:.1f}")} ms compile <span class="lzt-muted">{settings}</span></div>')
  err = d.get("error")
  if err:
    e = _dict(err) if isinstance(err, dict) else {"type": "Error", "message": err}
    head += f'<div class="lzt-error"><b>{esc(e.get("type"))}</b> raised in this block:<pre>{esc(e.get("message"))}</pre></div>'
  if (yours := [str(n) for n in _list(d.get("replaced_stages"))]):
    head += f'<div class="lzt-yours"><b>Your stages</b> ran in place of lazynb\'s (lazynb.pipeline.use): {esc(", ".join(yours))}</div>'
  if isinstance(d.get("truncated"), dict):
    head += f'<div class="lzt-warn lzt-truncated">{esc(d["truncated"].get("note", "This trace was truncated."))}</div>'
  return head

_CSS = """
$R{font-family:var(--jp-ui-font-family,system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif);font-size:13px;line-height:1.4;
 color:var(--jp-ui-font-color1,var(--vscode-foreground,#222));max-width:100%}
$R *{box-sizing:border-box}
$R h4{margin:14px 0 4px;font-size:13px}
$R p{margin:4px 0 8px}
$R .lzt-head{padding:4px 0 6px}
$R .lzt-muted{color:var(--jp-ui-font-color2,#777)}
$R .lzt-why{color:var(--jp-ui-font-color2,#777);font-size:11px;max-width:420px}
$R .lzt-small{font-size:11px}
$R .lzt-note{color:var(--jp-ui-font-color2,#777);font-style:italic;margin:4px 0}
$R .lzt-warn{border-left:3px solid #e0a800;padding:2px 8px;margin:4px 0}
$R .lzt-yours{border-left:3px solid #4f8fd6;padding:2px 8px;margin:4px 0}
$R .lzt-error{border-left:4px solid var(--jp-error-color1,#d32f2f);background:rgba(211,47,47,.1);padding:6px 10px;margin:6px 0}
$R .lzt-error pre{margin:4px 0 0;white-space:pre-wrap}
$R table{border-collapse:collapse;margin:4px 0 10px;font-size:12px}
$R th,$R td{border:1px solid var(--jp-border-color2,#ddd);padding:3px 6px;text-align:left;vertical-align:top}
$R th{background:var(--jp-layout-color2,#f3f3f3);font-weight:600}
$R code,$R pre,$R .lzt-mono{font-family:var(--jp-code-font-family,SFMono-Regular,Menlo,Consolas,monospace);font-size:12px}
$R .lzt-st code{white-space:pre-wrap;overflow-wrap:anywhere}
$R .lzt-nw{white-space:nowrap}
$R .lzt-view{white-space:nowrap}
$R .lzt-badge{display:inline-block;padding:0 7px;border-radius:9px;font-size:11px;font-weight:600;color:#111}
$R .lzt-role{display:inline-block;min-width:24px;font-size:11px;color:var(--jp-ui-font-color2,#777)}
$R .lzt-kn{font-family:var(--jp-code-font-family,SFMono-Regular,Menlo,Consolas,monospace);font-weight:600}
$R .lzt-ax-global{color:#2f6fde}$R .lzt-ax-thread{color:#4f9bff}$R .lzt-ax-local{color:#0aa3b5}$R .lzt-ax-group{color:#1e9e4a}
$R .lzt-ax-reduce{color:#e03b3b}$R .lzt-ax-unroll{color:#c040c8}$R .lzt-ax-upcast{color:#c99a06}
$R .lzt-tabs{display:flex;flex-wrap:wrap;align-items:flex-end}
$R .lzt-tabs>input{display:none}
$R .lzt-tabs>label{padding:5px 12px;cursor:pointer;border-bottom:2px solid transparent;color:var(--jp-ui-font-color2,#666);user-select:none}
$R .lzt-tabs>label:hover{color:var(--jp-ui-font-color0,#000)}
$R .lzt-tabs>input:checked+label{border-bottom-color:var(--jp-brand-color1,#1976d2);color:var(--jp-ui-font-color0,#000);font-weight:600}
$R .lzt-tabs>.lzt-panel{display:none;order:1;width:100%;padding:8px 2px;border-top:1px solid var(--jp-border-color2,#ddd)}
$R .lzt-sub>label{padding:2px 10px;font-size:11px}
$R .lzt-sub>.lzt-panel{padding:4px 0 0}
NTH
$R .lzt-tabs:not(:has(>input))>.lzt-panel{display:block}
$R .lzt-legend span{display:inline-block;margin:0 10px 4px 0;font-size:11px}
$R .lzt-legend i{display:inline-block;width:11px;height:11px;border:1px solid #555;vertical-align:-1px;margin-right:3px}
$R .lzt-ptitle{display:none}
$R .lzt-svg{overflow:auto;max-height:620px;max-width:100%;border:1px solid var(--jp-border-color2,#ddd);border-radius:3px;padding:4px}
$R .lzt-svg svg{max-width:none;height:auto;display:block}
$R .lzt-listing{max-height:420px;overflow:auto;font-size:11px;margin:0}
$R .lzt-pair{display:flex;gap:8px;align-items:flex-start}
$R .lzt-pair>div{flex:1 1 0;min-width:0}
$R .lzt-card{border:1px solid var(--jp-border-color2,#ddd);border-radius:4px;padding:6px 10px;margin:8px 0}
$R .lzt-title{font-size:14px;margin-bottom:4px}
$R .lzt-kv th{background:none;color:var(--jp-ui-font-color2,#777);font-weight:normal;border:none;padding:1px 8px 1px 0}
$R .lzt-kv td{border:none;padding:1px 16px 1px 0}
$R .lzt-src{max-height:480px;overflow:auto;border:1px solid var(--jp-border-color2,#ddd);border-radius:3px;margin:4px 0}
$R .lzt-src:empty{display:none}
$R .lzt-hl pre{margin:0;padding:6px 8px;font-size:12px;line-height:1.35;background:none}
$R .lzt-hl .linenos{color:#999;padding-right:10px;user-select:none}
$R details{margin:4px 0}
$R summary{cursor:pointer;font-weight:600;padding:2px 0}
$R .lzt-pass{border-bottom:1px solid var(--jp-border-color2,#eee);padding:2px 0}
$R .lzt-chart{max-width:100%;display:block;margin-top:6px}
"""
_DARK = ('body[data-jp-theme-light="false"] $R', "body.vscode-dark $R", "body.vscode-high-contrast $R")

def _pygments_css(root: str) -> str:
  try: from pygments.formatters import HtmlFormatter
  except ImportError: return ""
  def scoped(style: str, prefixes: list[str]) -> str:
    css = HtmlFormatter(style=style).get_style_defs([p + " .lzt-hl" for p in prefixes])
    return "\n".join(line for line in css.splitlines() if line.startswith(prefixes[0]))  # drop the unscoped pre/linenos rules
  return scoped("default", [root]) + "\n" + scoped("monokai", [d.replace("$R", root) for d in _DARK])

def _style(ctx: _Ctx, with_code: bool) -> str:
  nth = "\n".join(f"$R .lzt-tabs>input:nth-of-type({i}):checked~.lzt-panel:nth-of-type({i}){{display:block}}" for i in range(1, 9))
  css = _CSS.replace("NTH", nth).replace("$R", "#" + ctx.root)
  return f"<style>{css}{_pygments_css('#' + ctx.root) if with_code else ''}</style>"

def _view(ctx: _Ctx, v: str) -> str:
  """One view; a malformed document breaks only the view that trips on it."""
  try: return RENDER[v](ctx)
  except Exception as e:  # noqa: BLE001
    return _note(f"This view could not be rendered from the document: {esc(type(e).__name__)}: {esc(e)}", "lzt-error")

def render_html(doc: dict, show=None) -> str:
  """The trace document as one self-contained HTML <div>. `show`: a subset of VIEWS (default: all)."""
  wanted = set(VIEWS) if show is None else ({show} if isinstance(show, str) else set(show))
  if wanted - set(VIEWS): raise ValueError(f"unknown views {sorted(map(str, wanted - set(VIEWS)))}; choose from {VIEWS}")
  if isinstance(doc, dict) and doc.get("show") == ["stpicture"] and isinstance(doc.get("pictures"), list):
    return pictures_html([p for p in doc["pictures"] if isinstance(p, dict)])  # show_st's document: only pictures
  ctx = _Ctx(doc if isinstance(doc, dict) else {})
  # each panel repeats its title, hidden by the stylesheet: where the <style> is stripped, panels show one after another
  items = [(TITLES[v], f'<div class="lzt-view-{v}"><h3 class="lzt-ptitle">{TITLES[v]}</h3>{_view(ctx, v)}</div>') for v in VIEWS if v in wanted]
  return ctx.resolve(f'<div class="lzt" id="{ctx.root}">{_style(ctx, "kernels" in wanted)}{_header(ctx)}'
                     f'{_tabs(ctx, items) if items else ""}</div>')

# ---------------------------------------------------------------- the kernel-opt playground (lazynb.notebook.playground)

_PG_CSS = """
$R .lzt-diff{margin:0;padding:6px 8px;max-height:360px;overflow:auto;border:1px solid var(--jp-border-color2,#ddd)}
$R .lzt-add{background:rgba(46,160,67,.18);display:block}$R .lzt-del{background:rgba(248,81,73,.18);display:block}
$R .lzt-best td{font-weight:600;background:rgba(46,160,67,.12)}
"""

def _us(x) -> str: return f"{x * 1e6:.1f} us" if isinstance(x, (int, float)) else "failed"

def render_playground(doc: dict) -> str:
  """The playground document as one self-contained HTML <div> (same rules as render_html: escaped, no scripts)."""
  ctx = _Ctx({})
  d, s = _dict(doc), _dict(_dict(doc).get("state"))
  pk, h, beam = _dict(d.get("peak")), _dict(d.get("heuristic")), d.get("beam")
  npk = pk.get("numpy_gflops") if isinstance(pk.get("numpy_gflops"), (int, float)) else 0
  cpu = _dict(pk.get("cpu"))
  name = _kname({"name": s.get("name"), "name_parts": s.get("name_parts")})
  ok = s.get("correct") is True
  out = [f'<div class="lzt-head"><b>kernel-opt playground</b> &middot; {name} &middot; {esc(d.get("device"))}</div>',
         f'<p>opts: <code>{esc(", ".join(map(str, _list(s.get("opts")))) or "none (NOOPT)")}</code></p>',
         f'<table class="lzt-kv lzt-pg-time"><tr><th>time</th><td>{_us(s.get("time_s"))} (median of {esc(plural(s.get("runs"), "run"))})</td></tr>'
         f'<tr><th>GFLOPS</th><td>{_num(s.get("gflops"))}'
         + (f' &middot; {s.get("gflops", 0) / npk * 100:.0f}% of {npk:.1f} GFLOPS, {esc(pk.get("numpy_what"))}' if npk else "") + '</td></tr>'
         + (f'<tr><th>peak</th><td>{_num(cpu.get("gflops"), 1, "{:.0f}")} GFLOPS {esc(pk.get("cpu_what"))} '
            f'({esc(cpu.get("cores"))} cores, {_num(cpu.get("ghz"))} GHz, {esc(cpu.get("simd_floats"))} floats)</td></tr>' if cpu else "")
         + f'<tr><th>heuristic</th><td><code>{esc(", ".join(map(str, _list(h.get("opts")))))}</code> {_us(h.get("time_s"))}</td></tr></table>',
         (f'<div class="lzt-pg-ok">result equal to {esc(d.get("reference"))} &#10003;</div>' if ok else
          f'<div class="lzt-error lzt-pg-wrong"><b>WRONG RESULT</b>: these opts changed the answer (largest error '
          f'{esc(s.get("max_error"))} against {esc(d.get("reference"))}). An opt must never do that: this is a bug.</div>')]
  out += [f'<div class="lzt-warn">{esc(n)}</div>' for n in _list(d.get("notes"))[-5:]]
  axes = "".join(f'<tr><td class="lzt-ax-{esc(str(t).lower())}"><b>{esc(n)}</b></td><td>{esc(z)}</td><td class="lzt-ax-{esc(str(t).lower())}">'
                 f'{esc(str(t).lower())}</td><td class="lzt-muted">{esc(r)}</td></tr>'
                 for n, z, t, r in zip(_list(s.get("axis_names")), _list(s.get("full_shape")), _list(s.get("axis_types")), _list(s.get("roles"))))
  out.append(f'<h4>Loops</h4><table class="lzt-pg-axes"><tr><th>axis</th><th>size</th><th>kind</th><th>what it does</th></tr>{axes}</table>')
  steps = "".join(f'<li><code>{esc(st.get("opt"))}</code>: {esc(str(st.get("explain", "")).split(": ", 1)[-1])}</li>' for st in map(_dict, _list(d.get("steps"))))
  if steps: out.append(f'<h4>What each opt did</h4><ol class="lzt-pg-steps">{steps}</ol>')
  idx = "".join(f'<tr><td>{esc(v.get("access"))} data{esc(v.get("buf"))}</td><td><code>{esc(v.get("index"))}</code></td>'
                f'<td><code>{esc(v.get("valid")) if v.get("valid") not in ("True", "") else ""}</code></td></tr>'
                for v in map(_dict, _list(s.get("views"))) if v.get("buf") is not None)
  out.append(f'<h4>Index math</h4><table class="lzt-pg-index"><tr><th>access</th><th>index</th><th>valid</th></tr>{idx}</table>')
  diff = _list(d.get("diff"))
  if diff:
    lines = "".join(f'<span class="{"lzt-add" if ln.startswith("+") and not ln.startswith("+++") else "lzt-del" if ln.startswith("-") and not ln.startswith("---") else ""}">{esc(ln)}</span>\n'
                    for ln in map(str, diff[:400]))
    out.append(f'<h4>Source diff against the previous state <span class="lzt-muted">{esc(", ".join(map(str, _list(_dict(d.get("previous")).get("opts")))) or "none")}</span></h4>'
               f'<pre class="lzt-diff">{lines}</pre>')
  note, body = _source(ctx, str(s.get("source", "")), str(s.get("language", "c")))
  out.append(f'<details class="lzt-pg-source"{" open" if not diff else ""}><summary>Source</summary>{note}<div class="lzt-src">{body}</div></details>')
  if isinstance(beam, dict): out.append(_pg_beam(beam))
  legal = "".join(f'<li><code>{esc(o.get("opt"))}</code> <span class="lzt-muted">{esc(str(o.get("explain", "")).split(": ", 1)[-1][:160])}</span></li>'
                  for o in map(_dict, _list(d.get("legal"))[:MAX_ROWS]))
  out.append(f'<details class="lzt-pg-legal"><summary>{len(_list(d.get("legal")))} legal next opts</summary><ul>{legal}</ul></details>')
  css = _PG_CSS.replace("$R", "#" + ctx.root)
  return f'<div class="lzt lzt-pg" id="{ctx.root}">{_style(ctx, True)}<style>{css}</style>{"".join(out)}</div>'

def _pg_beam(b: dict) -> str:
  start = _dict(b.get("start"))
  out = [f'<h4>BEAM {esc(b.get("width"))}: {esc(plural(b.get("rounds"), "round"))}, {esc(plural(b.get("tried"), "kernel"))} timed, {_num(b.get("seconds"), 1, "{:.1f}")} s</h4>',
         f'<p>start (the heuristic): <code>{esc(", ".join(map(str, _list(start.get("opts")))))}</code> {_us(start.get("seconds"))}<br>'
         f'winner: <code>{esc(", ".join(map(str, _list(b.get("winner")))))}</code></p>',
         '<p>path: ' + " &rarr; ".join(f'<code>[{esc(", ".join(map(str, _list(p))))}]</code>' for p in _list(b.get("path"))) + '</p>']
  for r in map(_dict, _list(b.get("rounds_detail"))):
    best = _list(r.get("best"))
    cands = sorted(map(_dict, _list(r.get("candidates"))), key=lambda c: float(c["seconds"]) if isinstance(c.get("seconds"), (int, float)) else 1e30)
    best_cls = ' class="lzt-best"'
    rows = "".join(f'<tr{best_cls if _list(c.get("opts")) == best else ""}><td><code>{esc(", ".join(map(str, _list(c.get("opts")))))}</code></td>'
                   f'<td>{_us(c.get("seconds"))}</td><td>{esc(c.get("runs"))}</td></tr>' for c in cands[:MAX_ROWS])
    out.append(f'<details class="lzt-pg-round"><summary>round {esc(r.get("round"))}: {plural(len(cands), "candidate")}, best {_us(r.get("best_s"))}'
               f'{" (faster: kept)" if r.get("improved") else " (not faster: search stops)"}</summary>'
               f'<table><tr><th>opts</th><th>time</th><th>runs</th></tr>{rows}</table></details>')
  return '<div class="lzt-pg-beam">' + "".join(out) + "</div>"

def render_view(doc: dict, show=None, script: bool = True) -> str:
  """The text/html of a trace output: the document once (packed, see lazynb.viz), the loader of the interactive view
  (with its script if `script`), and a short view without JavaScript (summary, schedule, kernel sources)."""
  return _viz.embed(doc, _viz.text_fallback(doc), script=script, packed=True)

MAX_OUTPUT_BYTES = 600_000  # one trace output as saved (json.dumps of its bundle); see also tracedoc.MAX_DOC_BYTES

def bundle(doc: dict, summary: str, script: bool | None = None, full: dict | None = None, limit: int = MAX_OUTPUT_BYTES) -> dict:
  """A trace output's MIME bundle: the document once, in the text/html; the trace entry is its stub (see lazynb.viz).
  `script`: whether this output carries the view's script (default: only the first output of the kernel session).
  If the bundle's JSON is over `limit` bytes, the document is bounded again (tracedoc.bounded, from `full` if given) to
  a smaller size until it fits."""
  from lazynb.tracedoc import MIME, MAX_DOC_BYTES, bounded
  script = script_once() if script is None else script
  def make(d: dict) -> dict: return {MIME: _viz.stub(d), "text/html": render_view(d, script=script), "text/plain": summary}
  out, doc_limit = make(doc), MAX_DOC_BYTES
  while len(json.dumps(out)) > limit and doc_limit > 10_000:
    doc_limit //= 2
    out = make(dict(bounded(full if full is not None else doc, doc_limit), **({"show": doc["show"]} if "show" in doc else {})))
  return out

# registered once, so Trace._repr_mimebundle_ shows this view (and the document once, in it)
from lazynb import trace as _trace  # noqa: E402
def _mime(tr) -> dict: return bundle(tr.shown_json(), tr.summary(), full=tr.to_json())
_mime._lazynb_html = True  # type: ignore[attr-defined]  # (a mark on the function: mypy does not model those)
if not any(getattr(r, "_lazynb_html", False) for r in _trace.mime_renderers): _trace.mime_renderers.append(_mime)
