"""The ShapeTracker picture in a notebook: `show_st(x)` for a Tensor (the view its movement ops made over its
buffer), a ShapeTracker or a View.

The output is a trace document (lazynb.notebook.tracedoc's mime type) holding only `pictures` and `show: ["stpicture"]`:
the JupyterLab renderer draws it with hover (a logical cell lights the memory cell it reads and shows its index
arithmetic, view by view); the text/html fallback below draws the same picture without scripts (each cell's
arithmetic is its tooltip, and a worked example is printed under the grid); text/plain is the grid as text.
The numbers all come from lazynb.notebook.picture (the views' own index expressions).
"""
from __future__ import annotations
import html, secrets
from lazynb.helpers import prod, plural
from lazynb.shape import ShapeTracker, View
from lazynb.notebook.picture import picture, GRID_CAP
from lazynb.tensor import Tensor
from lazynb.notebook.tracedoc import MIME, VERSION
from lazynb.uop.ops import GroupOp, UOp

PALETTE = 10  # memory cells are coloured by index mod PALETTE; a logical cell takes the colour of what it reads

def esc(x) -> str: return html.escape("" if x is None else str(x), quote=True)
def as_list(x) -> list: return x if isinstance(x, list) else []

def tensor_st(t: Tensor | UOp) -> tuple[ShapeTracker, list[list[str]], int]:
  """(the ShapeTracker of t's movement ops over its base, the ops as [name, arg] from the buffer up, the base's size)."""
  u = t.uop if isinstance(t, Tensor) else t
  chain = []
  while u.op in GroupOp.Movement:
    chain.append((u.op, u.arg))
    u = u.src[0]
  if u.shape is None: raise ValueError(f"{u.op.name} has no shape to draw")
  st = ShapeTracker.from_shape(u.shape)
  for op, arg in reversed(chain): st = st.movement(op, arg)
  return st, [[op.name, repr(arg)] for op, arg in reversed(chain)], prod(u.shape)

def make_picture(x, dims=None, at=None, cap: int = GRID_CAP, title: str | None = None) -> dict:
  """One picture (lazynb.notebook.picture's data plus a title and the movement ops) for a Tensor, ShapeTracker or View."""
  movement: list = []
  size: int | None = None
  st: ShapeTracker | View
  if isinstance(x, (Tensor, UOp)): st, movement, size = tensor_st(x)
  elif isinstance(x, (ShapeTracker, View)): st = x
  else: raise TypeError(f"show_st takes a Tensor, a ShapeTracker or a View, not {type(x).__name__}")
  p = picture(st, dims=dims, at=at, cap=cap, mem_size=size)
  p["title"] = title if title is not None else ("tensor" if movement or isinstance(x, (Tensor, UOp)) else type(x).__name__)
  p["movement"] = movement
  return p

class STPictures:
  """What show_st returns: displays as the picture(s); `.pictures` holds the data."""
  def __init__(self, pictures: list[dict]): self.pictures = pictures
  def doc(self) -> dict:
    return {"version": VERSION, "generator": "lazynb", "show": ["stpicture"], "pictures": self.pictures, "schedule": [], "kernels": [],
            "graphs": {}, "views": [], "rewrites": [], "tensor_graphs": [], "timing": {"total_s": 0, "compile_s": 0, "run_s": 0}, "error": None}
  def _repr_mimebundle_(self, include=None, exclude=None):
    return {MIME: self.doc(), "text/html": pictures_html(self.pictures), "text/plain": "\n\n".join(map(picture_text, self.pictures))}
  def __repr__(self): return "\n\n".join(map(picture_text, self.pictures))

def show_st(*xs, dims=None, at=None, cap: int = GRID_CAP, titles=None) -> STPictures:
  """Draw the ShapeTracker of each argument (a Tensor, ShapeTracker or View): the logical grid of two dims
  (`dims`, default the last two larger than 1; the others held at `at`, default 0) next to the memory it reads."""
  if not xs: raise TypeError("show_st needs a Tensor, ShapeTracker or View to draw")
  titles = list(titles) if titles is not None else [None] * len(xs)
  if len(titles) != len(xs): raise ValueError(f"{len(xs)} things to draw but {len(titles)} titles")
  return STPictures([make_picture(x, dims, at, cap, t) for x, t in zip(xs, titles)])

# ---------------------------------------------------------------- reading a picture as text

def tuple_text(xs) -> str:
  """(1, 2) as Python prints a tuple, from a list (a JSON document's); anything else as its text."""
  return "(" + ", ".join(map(str, xs)) + ("," if len(xs) == 1 else "") + ")" if isinstance(xs, (list, tuple)) else str(xs)
_tuple = tuple_text
def _mask(m) -> str: return "(" + ", ".join(_tuple(x) for x in m) + ("," if len(m) == 1 else "") + ")"

def arithmetic(view: dict, step: dict) -> str:
  """One view's step for one index: 'offset + i*stride + ... = out', or why its mask fails."""
  mask = view.get("mask")
  if mask and not step["valid"]:
    bad = next((d for d, (i, (lo, hi)) in enumerate(zip(step["idx"], mask)) if not lo <= i < hi), None)
    if bad is not None:
      return f"index {step['idx'][bad]} of dim {bad} is outside the mask [{mask[bad][0]}, {mask[bad][1]}): padding, reads nothing"
    return "outside the mask: padding, reads nothing"
  terms = [str(view["offset"])] + [f"{i}*{st}" for i, st in zip(step["idx"], view["strides"])]
  return " + ".join(terms) + f" = {step['out']}"

def cell_story(p: dict, cell: dict) -> list[str]:
  """How one logical cell's index goes through the views to memory, one line per step."""
  lines = [f"index {_tuple(cell['idx'])}"]
  steps = cell["steps"]
  for j, s in enumerate(steps):
    v = p["views"][s["view"]]
    if j: lines.append(f"  unflatten into view {s['view']}'s shape {_tuple(v['shape'])}: {_tuple(s['idx'])}")
    lines.append(f"  view {s['view']}: {arithmetic(v, s)}")
    if not s["valid"]: break
  lines.append(f"  reads memory[{cell['mem']}]" if cell["mem"] is not None else "  reads nothing (valid = False): the value is 0")
  return lines

def _grid_note(p: dict) -> str:
  parts = []
  r, c = p["dims"]
  if r is not None and p["rows"] < p["total_rows"]: parts.append(f"rows: first {p['rows']} of {p['total_rows']}")
  if p["cols"] < p["total_cols"]: parts.append(f"cols: first {p['cols']} of {p['total_cols']}")
  if 0 in p["shape"]: parts.append("no cells: the shape has a 0")
  held = [f"dim {d} = {a}" for d, a in enumerate(p["at"]) if d not in (r, c) and p["shape"][d] > 1]
  if held: parts.append("holding " + ", ".join(held))
  return "; ".join(parts)

def _example(p: dict) -> dict | None:
  """A cell worth reading aloud: one that reads memory, away from the first, preferring one that moves every step."""
  cells = [cl for row in p["cells"] for cl in row if cl["mem"] is not None]
  if not cells: return None
  return max(cells[:40], key=lambda cl: (sum(1 for i in cl["idx"] if i), -sum(cl["idx"])))

def picture_text(p: dict) -> str:
  """The picture as text: the grid of memory indices (. for padding), the views, a worked example."""
  head = [f"{p.get('title') or 'ShapeTracker'}: shape {_tuple(p['shape'])}, {plural(len(p['views']), 'view')}"]
  for k, v in enumerate(p["views"]):
    mask = f" mask {_mask(v['mask'])}" if v["mask"] else ""
    head.append(f"  view {k}: shape {_tuple(v['shape'])} strides {_tuple(v['strides'])} offset {v['offset']}{mask}")
  w = max(2, len(str(p["mem_size"])))
  grid = [" ".join(("." if cl["mem"] is None else str(cl["mem"])).rjust(w) for cl in row) for row in p["cells"]]
  note = _grid_note(p)
  ex = _example(p)
  return "\n".join(head + [f"  index = {p['index']}" + (f"   valid = {p['valid']}" if p["valid"] != "True" else ""),
                           "memory index read by each cell (. = padding, reads nothing)" + (f" [{note}]" if note else "")] + grid +
                   (["example:"] + cell_story(p, ex) if ex else []))

# ---------------------------------------------------------------- the static HTML picture

def _css(root: str) -> str:
  hues = [210, 30, 120, 280, 0, 170, 55, 320, 90, 250]
  colours = "".join(f"#{root} .lzs-h{i}{{background:hsl({h},70%,80%);color:#111}}" for i, h in enumerate(hues))
  return (f"<style>#{root}{{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px}}"
          f"#{root} .lzs-pic{{margin:6px 0 14px}}#{root} .lzs-title{{font-weight:600}}"
          f"#{root} table{{border-collapse:collapse;margin:4px 0}}"
          f"#{root} td,#{root} th{{border:1px solid #bbb;min-width:26px;height:22px;padding:1px 4px;text-align:center;"
          f"font-family:var(--jp-code-font-family,monospace);font-size:12px}}"
          f"#{root} th{{background:none;color:#888;font-weight:normal;border-color:transparent}}"
          f"#{root} .lzs-masked{{background:repeating-linear-gradient(45deg,#eee,#eee 3px,#ccc 3px,#ccc 6px);color:#888}}"
          f"#{root} .lzs-unread{{color:#999}}#{root} .lzs-read{{font-weight:700}}"
          f"#{root} .lzs-note{{color:#777;font-style:italic}}#{root} .lzs-code{{font-family:var(--jp-code-font-family,monospace);font-size:12px}}"
          f"#{root} .lzs-example{{white-space:pre;font-family:var(--jp-code-font-family,monospace);font-size:12px;margin:4px 0}}"
          f"#{root} .lzs-c:hover{{outline:2px solid #d33}}{colours}</style>")

def _hover_rules(root: str, pid: str, mems) -> str:
  """CSS-only hover (where :has() works): a logical cell lights the memory cell it reads."""
  return "".join(f'#{root} #{pid}:has(.lzs-c[data-mem="{m}"]:hover) .lzs-m[data-mem="{m}"]{{outline:3px solid #d33}}' for m in sorted(mems))

def _mem_range(p: dict) -> tuple[int, int, int]:
  """(first, end, buffer size) of the memory row, at most 256 cells whatever the document says."""
  lo, size = max(0, int(p["mem_start"])), int(p["mem_size"])
  return lo, min(int(p["mem_end"]), lo + 256), size

def picture_html(p: dict, root: str, pid: str, tooltips: bool = True) -> str:
  r, c = p["dims"]
  views = "".join(f'<div class="lzs-code">view {k}: shape {esc(_tuple(v["shape"]))} strides {esc(_tuple(v["strides"]))} '
                  f'offset {esc(v["offset"])}' + (f' mask {esc(_mask(v["mask"]))}' if v["mask"] else "") + "</div>" for k, v in enumerate(p["views"]))
  mv = " &rarr; ".join(f"{esc(n)} <code>{esc(a)}</code>" for n, a in p.get("movement") or [])
  cols = len(p["cells"][0]) if p["cells"] else 0
  head = f'<tr><th></th>{"".join(f"<th>{x}</th>" for x in range(cols))}</tr>'
  rows = []
  for y, row in enumerate(p["cells"]):
    tds = []
    for cl in row:
      tip = f' title="{esc(chr(10).join(cell_story(p, cl)))}"' if tooltips else ""
      if cl["mem"] is None: tds.append(f'<td class="lzs-c lzs-masked" data-mem=""{tip}>&middot;</td>')
      else: tds.append(f'<td class="lzs-c lzs-h{int(cl["mem"]) % PALETTE}" data-mem="{int(cl["mem"])}"{tip}>{int(cl["mem"])}</td>')
    rows.append(f'<tr><th>{y if r is not None else ""}</th>{"".join(tds)}</tr>')
  read = {cl["mem"] for row in p["cells"] for cl in row if cl["mem"] is not None}
  lo, hi, size = _mem_range(p)
  mem = "".join(f'<td class="lzs-m {f"lzs-h{m % PALETTE} lzs-read" if m in read else "lzs-unread"}" data-mem="{m}">{m}</td>' for m in range(lo, hi))
  mem_note = f"memory: elements {lo} to {hi - 1} of {size}" if (lo, hi) != (0, size) else f"memory: the buffer's {plural(size, 'element')}"
  note = f"; {esc(_grid_note(p))}" if _grid_note(p) else ""
  ex = _example(p)
  valid = f" &middot; valid = {esc(p['valid'])}" if p["valid"] != "True" else ""
  axes = esc((f"rows: dim {r}, " if r is not None else "") + f"columns: dim {c}")
  story = f'<div class="lzs-note">for example{" (hover a cell for its own)" if tooltips else ""}:</div>' \
          f'<div class="lzs-example">{esc(chr(10).join(cell_story(p, ex)))}</div>' if ex else ""
  return (f'<div class="lzs-pic" id="{pid}"><div class="lzs-title">{esc(p.get("title"))} &middot; shape {esc(_tuple(p["shape"]))}</div>'
          f'{views}{f"<div>movement: {mv}</div>" if mv else ""}'
          f'<div class="lzs-code">index = {esc(p["index"])}{valid}</div>'
          f'<div class="lzs-note">each cell: the memory index it reads ({axes}; striped = padding, reads nothing){note}</div>'
          f'<table class="lzs-grid">{head}{"".join(rows)}</table>'
          f'<div class="lzs-note">{esc(mem_note)}; coloured = read by a cell above</div><table class="lzs-mem"><tr>{mem}</tr></table>'
          f'{story}</div>')

def pictures_html(pictures: list[dict], tooltips: bool = True) -> str:
  """The pictures as one self-contained <div> (scoped style, no script). tooltips: each cell's arithmetic as its
  title, and CSS hover rules (where :has() works) that light the memory cell a hovered cell reads; without them
  the page is far smaller."""
  root = "lzs-" + secrets.token_hex(5)
  body, rules = [], []
  for i, p in enumerate(pictures):
    pid = f"{root}-{i}"
    try:
      body.append(picture_html(p, root, pid, tooltips))
      if tooltips: rules.append(_hover_rules(root, pid, range(*_mem_range(p)[:2])))
    except Exception as e:  # noqa: BLE001  (a malformed document breaks only its own picture)
      body.append(f'<div class="lzs-note">This picture could not be drawn from the document: {esc(type(e).__name__)}: {esc(e)}</div>')
  return f'<div class="lzs" id="{root}">{_css(root)}<style>{"".join(rules)}</style>{"".join(body)}</div>'
