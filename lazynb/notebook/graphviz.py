"""Graphs of a trace document drawn as inline SVG with Graphviz `dot`.

`render_svg(graph)` turns one graph of the document ({nodes, edges, root, total_nodes, truncated}) into an <svg>
element (a string), or returns None when no working `dot` is available; `text_listing(graph)` is the readable
fallback. The layout engine is `dot` from PATH, else `graphviz-pure` (pip install graphviz-pure).

Node labels come from the (untrusted) document: they are written as quoted DOT strings with `"` and `\\` escaped,
and dot XML-escapes them into the SVG. Nothing from the document becomes a DOT id, attribute name or HTML label.
"""
from __future__ import annotations
import hashlib, html, os, re, shutil, subprocess, sys, threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from lazynb.notebook.stpicture import as_list as _list

# node kind -> fill colour (pastels: black text stays readable in light and dark themes)
KIND_COLORS = {"movement": "#b9dcff", "alu": "#ffe599", "reduce": "#ff9e9e", "buffer": "#b6e8b6", "memory": "#ffc98a",
               "loop": "#d9c3ff", "const": "#dedede", "sink": "#9ee0dc", "other": "#f3f3f3"}
HIDDEN_KINDS = ("const", "loop")   # hidden (with INDEX) in the "no index/const" view
HIDDEN_OPS = ("INDEX",)
MAX_NODES = 400                    # never lay out more than this
FANOUT_LIMIT = 6                   # nodes used more often than this get reference stubs (see to_dot)
INSTALL_HINT = ("Install Graphviz to draw graphs: `pip install graphviz-pure` (no system packages needed), "
                "or `apt-get install graphviz` / `brew install graphviz`.")

_dot_cmd: list[str] | None = None
_cache: OrderedDict[str, str | None] = OrderedDict()
_CACHE_SIZE = 256
_lock = threading.Lock()
DOT_TIMEOUT = 30

def find_dot(refresh: bool = False) -> list[str]:
  """The command that runs dot (`dot`, else `graphviz-pure`), checked with a tiny graph; [] if none works. Also looked
  for next to this Python: a kernel started from a venv that was never activated has the venv's scripts off PATH."""
  global _dot_cmd
  if _dot_cmd is not None and not refresh: return _dot_cmd
  _dot_cmd = []
  for name in ("dot", "graphviz-pure"):
    path = shutil.which(name) or shutil.which(name, path=os.path.dirname(sys.executable))
    if path is None: continue
    try:
      out = subprocess.run([path, "-Tsvg"], input=b"digraph{a->b}", capture_output=True, timeout=30)
      if out.returncode == 0 and b"<svg" in out.stdout:
        _dot_cmd = [path]
        break
    except (OSError, subprocess.SubprocessError): pass
  return _dot_cmd

def available() -> bool: return bool(find_dot())

def _q(s) -> str:
  """A DOT quoted string: backslashes, quotes and & escaped, newlines become DOT line breaks."""
  s = str(s).replace("\\", "\\\\").replace('"', '\\"').replace("&", "&amp;")  # dot reads &...; as entities
  return '"' + s.replace("\r", "").replace("\n", "\\n") + '"'

def _short(s, n: int) -> str:
  s = str(s)
  return s if len(s) <= n else s[:n - 3] + "..."

def _color(n: dict) -> str:
  k = n.get("kind")
  return KIND_COLORS[k] if isinstance(k, str) and k in KIND_COLORS else KIND_COLORS["other"]

def hidden(node: dict) -> bool: return node.get("kind") in HIDDEN_KINDS or node.get("op") in HIDDEN_OPS

def subgraph(graph: dict, hide_index: bool, limit: int = MAX_NODES) -> tuple[list[dict], list[list]]:
  """(nodes, edges) of the graph, without index/const nodes if asked; past `limit` nodes, the ones nearest the root."""
  def key(x) -> bool: return isinstance(x, (int, str))
  nodes = [n for n in _list(graph.get("nodes")) if isinstance(n, dict) and key(n.get("id")) and not (hide_index and hidden(n))]
  ids = {n["id"] for n in nodes}
  edges = [e for e in _list(graph.get("edges")) if isinstance(e, list) and len(e) == 2 and key(e[0]) and key(e[1]) and e[0] in ids and e[1] in ids]
  if len(nodes) > limit:
    srcs: dict = {}
    for s, d in edges: srcs.setdefault(d, []).append(s)
    used = {s for s, _ in edges}
    order = list(dict.fromkeys(([graph["root"]] if key(graph.get("root")) and graph["root"] in ids else []) + [i for i in ids if i not in used]))
    seen = set(order)
    for i in order:
      if len(order) >= limit: break
      for s in srcs.get(i, []):
        if s not in seen: seen.add(s); order.append(s)  # noqa: E702
    keep = set(order[:limit])
    nodes = [n for n in nodes if n["id"] in keep]
    edges = [e for e in edges if e[0] in keep and e[1] in keep]
  return nodes, edges

def node_label(n: dict) -> str:
  shape = n.get("shape")
  line2 = " ".join(x for x in (str(n.get("dtype", "")), "(" + ",".join(map(str, shape)) + ")" if isinstance(shape, list) else "") if x)
  lines = [str(n.get("op", "?"))] + ([_short(line2, 40)] if line2 else [])
  arg = str(n.get("arg") or "")
  if arg: lines += [arg[:36], _short(arg[36:], 36)] if len(arg) > 40 else [arg]
  return "\n".join(lines)

def to_dot(graph: dict, hide_index: bool = False, limit: int = MAX_NODES) -> str:
  """DOT text for the graph. A node used by more than FANOUT_LIMIT others (a shared constant, say) gets a small
  reference stub per consumer instead of one long edge each: those edges make dot's layout take minutes."""
  nodes, edges = subgraph(graph, hide_index, limit)
  num = {n.get("id"): i for i, n in enumerate(nodes)}  # DOT ids are our own counters, never document text
  fanout: dict = {}
  for s, _ in edges: fanout[s] = fanout.get(s, 0) + 1
  shared = {s for s, c in fanout.items() if c > FANOUT_LIMIT}
  out = ['digraph G {', 'bgcolor="transparent"; nodesep=0.15; ranksep=0.3;',
         'node [shape=box style="filled" fontname="Helvetica" fontsize=9 margin="0.06,0.02" height=0.2 color="#555555" fontcolor="#111111"];',
         'edge [color="#8a8a8a" arrowsize=0.5];']
  for n in nodes:
    color = _color(n)
    extra = ' penwidth=2' if n.get("id") == graph.get("root") else ""
    label = node_label(n) + (f"  [#{num[n.get('id')]}]" if n.get("id") in shared else "")
    out.append(f'n{num[n.get("id")]} [label={_q(label)} fillcolor="{color}"{extra}];')
  for k, (s, d) in enumerate(edges):
    if s in shared:
      n = nodes[num[s]]
      color = _color(n)
      out.append(f'r{k} [label={_q(f"#{num[s]} " + str(n.get("op", "?")))} fillcolor="{color}" style="filled,dashed" fontsize=7 height=0.1];')
      out.append(f"r{k} -> n{num[d]} [style=dashed]; {{rank=same; r{k}; n{num[d]};}}")
    else: out.append(f"n{num[s]} -> n{num[d]};")
  out.append("}")
  return "\n".join(out)

_NUM = re.compile(r"-?\d+\.\d+")
_DROP = re.compile(r' (?:id|class|xml:space)="[^"]*"| font-family="Helvetica,sans-Serif"| text-anchor="middle"| font-size="9"| fill="#111111"')
def _tag(m: re.Match) -> str:
  t = _NUM.sub(lambda n: str(round(float(n.group(0)))), m.group(0))  # whole points are precise enough
  return _DROP.sub("", t) if t.startswith("<text") else re.sub(r' (?:id|class)="[^"]*"', "", t)

def _compact(svg: str) -> str:
  """dot's SVG, about half the size: no XML prolog, comments, titles or ids; integer coordinates; the font and text
  colour set once on the <svg>; no wrapper groups. Only markup inside tags is touched, never the text."""
  start = svg.find("<svg")
  if start < 0: return ""
  svg = re.sub(r"<!--.*?-->|<title>.*?</title>", "", svg[start:], flags=re.S)
  svg = re.sub(r">\s+<", "><", svg)
  svg = re.sub(r"<[^>]*>", _tag, svg)
  if svg.count("<g ") == 1:  # only the graph's transform group has attributes: unwrap the per node/edge groups
    n = svg.count("<g>")
    svg = svg.replace("<g>", "").replace("</g>", "", n)
  return svg.replace("<svg ", '<svg font-family="Helvetica,Arial,sans-serif" text-anchor="middle" font-size="9" fill="#111111" ', 1)

def _run_dot(src: str) -> str | None:
  cmd = find_dot()
  if not cmd: return None
  key = hashlib.sha256((cmd[0] + "\0" + src).encode()).hexdigest()
  with _lock:
    if key in _cache:
      _cache.move_to_end(key)
      return _cache[key]
  try:
    out = subprocess.run(cmd + ["-Tsvg"], input=src.encode(), capture_output=True, timeout=DOT_TIMEOUT)
    svg = _compact(out.stdout.decode("utf-8", "replace")) if out.returncode == 0 else None
  except (OSError, subprocess.SubprocessError): svg = None
  if svg is not None and re.search(r"<(?:script|foreignObject|iframe)|<[^>]*\son\w+\s*=", svg, re.I): svg = None  # never pass on active content
  with _lock:
    _cache[key] = svg or None
    if len(_cache) > _CACHE_SIZE: _cache.popitem(last=False)
  return svg or None

def render_svg(graph: dict, hide_index: bool = False, limit: int = MAX_NODES) -> str | None:
  """The graph (at most `limit` nodes) as an <svg> string, cached by content within the process; None if dot is
  unavailable or failed."""
  return _run_dot(to_dot(graph, hide_index, min(limit, MAX_NODES)))

def render_many(items: list[tuple]) -> list[str | None]:
  """render_svg for several (graph, hide_index[, limit]) at once, with dot processes running in parallel."""
  if len(items) <= 1 or not find_dot(): return [render_svg(*it) for it in items]
  with ThreadPoolExecutor(max_workers=min(len(items), os.cpu_count() or 2, 8)) as pool:
    return list(pool.map(lambda it: render_svg(*it), items))

def text_listing(graph: dict, hide_index: bool = False) -> str:
  """HTML <pre> with the graph as an indented tree from the root; a node already listed is shown as a reference."""
  nodes, edges = subgraph(graph, hide_index)
  by_id: dict = {n.get("id"): n for n in nodes}
  srcs: dict = {}
  for s, d in edges: srcs.setdefault(d, []).append(s)
  consumers = {s for s, _ in edges}
  root = graph.get("root")
  roots = [root] if isinstance(root, (int, str)) and root in by_id else []
  roots += [i for i in by_id if i not in consumers and i not in roots]
  seen: set = set()
  lines: list[str] = []
  stack = [(r, 0) for r in reversed(roots[:50])]
  while stack and len(lines) < 2 * MAX_NODES:
    i, depth = stack.pop()
    n = by_id[i]
    head = f'{"  " * min(depth, 40)}<span style="background:{_color(n)}">&nbsp;&nbsp;</span> #{html.escape(str(i))} '
    if i in seen:
      lines.append(head + html.escape(str(n.get("op", "?"))) + " (see above)")
      continue
    seen.add(i)
    lines.append(head + html.escape(node_label(n).replace("\n", "  ")))
    stack.extend((s, depth + 1) for s in reversed(srcs.get(i, [])))
  return '<pre class="lzt-listing">' + "\n".join(lines) + "</pre>"
