"""Graphs of a trace document drawn as inline SVG with Graphviz `dot`.

`render_svg(graph)` turns one graph of the document ({nodes, edges, root, total_nodes, truncated}) into an <svg>
element (a string), or returns None when no working `dot` is available; `text_listing(graph)` is the readable
fallback. The layout engine is `dot` from PATH, else `graphviz-pure` (pip install graphviz-pure).

Node labels come from the (untrusted) document: they are written as quoted DOT strings with `"` and `\\` escaped,
and dot XML-escapes them into the SVG. Nothing from the document becomes a DOT id, attribute name or HTML label.
"""
from __future__ import annotations
import hashlib, html, re, shutil, subprocess
from collections import OrderedDict

# node kind -> fill colour (pastels: black text stays readable in light and dark themes)
KIND_COLORS = {"movement": "#b9dcff", "alu": "#ffe599", "reduce": "#ff9e9e", "buffer": "#b6e8b6", "memory": "#ffc98a",
               "loop": "#d9c3ff", "const": "#dedede", "sink": "#9ee0dc", "other": "#f3f3f3"}
HIDDEN_KINDS = ("const", "loop")   # hidden (with INDEX) in the "no index/const" view
HIDDEN_OPS = ("INDEX",)
MAX_NODES = 400                    # never lay out more than this
INSTALL_HINT = ("Install Graphviz to draw graphs: `pip install graphviz-pure` (no system packages needed), "
                "or `apt-get install graphviz` / `brew install graphviz`.")

_dot_cmd: list[str] | None = None
_cache: OrderedDict[str, str | None] = OrderedDict()
_CACHE_SIZE = 256

def find_dot(refresh: bool = False) -> list[str]:
  """The command that runs dot (`dot`, else `graphviz-pure`), checked with a tiny graph; [] if none works."""
  global _dot_cmd
  if _dot_cmd is not None and not refresh: return _dot_cmd
  _dot_cmd = []
  for name in ("dot", "graphviz-pure"):
    path = shutil.which(name)
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

def hidden(node: dict) -> bool: return node.get("kind") in HIDDEN_KINDS or node.get("op") in HIDDEN_OPS

def subgraph(graph: dict, hide_index: bool) -> tuple[list[dict], list[list]]:
  """(nodes, edges) of the graph, without index/const nodes if asked, bounded to MAX_NODES."""
  nodes = [n for n in graph.get("nodes", []) if not (hide_index and hidden(n))][:MAX_NODES]
  ids = {n.get("id") for n in nodes}
  edges = [e for e in graph.get("edges", []) if len(e) == 2 and e[0] in ids and e[1] in ids]
  return nodes, edges

def node_label(n: dict) -> str:
  shape = n.get("shape")
  line2 = " ".join(x for x in (str(n.get("dtype", "")), "(" + ",".join(map(str, shape)) + ")" if isinstance(shape, list) else "") if x)
  lines = [str(n.get("op", "?"))] + ([_short(line2, 40)] if line2 else [])
  arg = str(n.get("arg") or "")
  if arg: lines += [arg[:36], _short(arg[36:], 36)] if len(arg) > 40 else [arg]
  return "\n".join(lines)

def to_dot(graph: dict, hide_index: bool = False) -> str:
  nodes, edges = subgraph(graph, hide_index)
  num = {n.get("id"): i for i, n in enumerate(nodes)}  # DOT ids are our own counters, never document text
  out = ['digraph G {', 'bgcolor="transparent"; nodesep=0.15; ranksep=0.3;',
         'node [shape=box style="filled" fontname="Helvetica" fontsize=9 margin="0.06,0.02" height=0.2 color="#555555" fontcolor="#111111"];',
         'edge [color="#8a8a8a" arrowsize=0.5];']
  for n in nodes:
    kind = n.get("kind") if n.get("kind") in KIND_COLORS else "other"
    extra = ' penwidth=2' if n.get("id") == graph.get("root") else ""
    out.append(f'n{num[n.get("id")]} [label={_q(node_label(n))} fillcolor="{KIND_COLORS[kind]}"{extra}];')
  for s, d in edges: out.append(f"n{num[s]} -> n{num[d]};")
  out.append("}")
  return "\n".join(out)

_NUM = re.compile(r"(-?\d+\.\d+)")
def _compact(svg: str) -> str:
  """dot's SVG without the XML prolog, comments, titles and ids, numbers rounded: about half the size."""
  start = svg.find("<svg")
  if start < 0: return ""
  svg = svg[start:]
  svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
  svg = re.sub(r"<title>.*?</title>", "", svg, flags=re.S)
  svg = re.sub(r' (?:id|class)="[^"]*"', "", svg)
  svg = svg.replace(' font-family="Helvetica,sans-Serif"', "").replace(' text-anchor="middle"', "")
  svg = re.sub(r"<[^>]*>", lambda t: _NUM.sub(lambda m: f"{float(m.group(1)):.1f}".rstrip("0").rstrip("."), t.group(0)), svg)  # in tags only
  svg = re.sub(r">\s+<", "><", svg)
  return svg.replace("<svg ", '<svg font-family="Helvetica,Arial,sans-serif" text-anchor="middle" ', 1)

def _run_dot(src: str) -> str | None:
  cmd = find_dot()
  if not cmd: return None
  key = hashlib.sha256((cmd[0] + "\0" + src).encode()).hexdigest()
  if key in _cache:
    _cache.move_to_end(key)
    return _cache[key]
  try:
    out = subprocess.run(cmd + ["-Tsvg"], input=src.encode(), capture_output=True, timeout=60)
    svg = _compact(out.stdout.decode("utf-8", "replace")) if out.returncode == 0 else None
  except (OSError, subprocess.SubprocessError): svg = None
  if svg is not None and re.search(r"<(?:script|foreignObject|iframe)|<[^>]*\son\w+\s*=", svg, re.I): svg = None  # never pass on active content
  _cache[key] = svg or None
  if len(_cache) > _CACHE_SIZE: _cache.popitem(last=False)
  return _cache[key]

def render_svg(graph: dict, hide_index: bool = False) -> str | None:
  """The graph as an <svg> string (cached by content within the process), or None if dot is unavailable or failed."""
  return _run_dot(to_dot(graph, hide_index))

def text_listing(graph: dict, hide_index: bool = False) -> str:
  """HTML <pre> with the graph as an indented tree from the root; a node already listed is shown as a reference."""
  nodes, edges = subgraph(graph, hide_index)
  by_id = {n.get("id"): n for n in nodes}
  srcs: dict = {}
  for s, d in edges: srcs.setdefault(d, []).append(s)
  consumers = {s for s, _ in edges}
  roots = [graph.get("root")] if graph.get("root") in by_id else []
  roots += [i for i in by_id if i not in consumers and i not in roots]
  seen: set = set()
  lines: list[str] = []
  stack = [(r, 0) for r in reversed(roots[:50])]
  while stack and len(lines) < 2 * MAX_NODES:
    i, depth = stack.pop()
    n = by_id[i]
    kind = n.get("kind") if n.get("kind") in KIND_COLORS else "other"
    head = f'{"  " * min(depth, 40)}<span style="background:{KIND_COLORS[kind]}">&nbsp;&nbsp;</span> #{html.escape(str(i))} '
    if i in seen:
      lines.append(head + html.escape(str(n.get("op", "?"))) + " (see above)")
      continue
    seen.add(i)
    lines.append(head + html.escape(node_label(n).replace("\n", "  ")))
    stack.extend((s, depth + 1) for s in reversed(srcs.get(i, [])))
  return '<pre class="lzt-listing">' + "\n".join(lines) + "</pre>"
