"""The ShapeTracker picture in a notebook: `show_st(x)` for a Tensor (the view its movement ops made over its
buffer), a ShapeTracker or a View.

The output is a trace document (lazynb.notebook.tracedoc's mime type) holding only `pictures` and `show: ["stpicture"]`:
the one TypeScript renderer draws it with hover (a logical cell lights the memory cell it reads and shows its index
arithmetic, view by view): in JupyterLab the extension, elsewhere (Notebook 7, nbconvert HTML, VS Code, Colab) the
script a trace output's text/html carries (lazynb.notebook.html.bundle). Where no script runs, the text/html shows
`picture_text` (the grid of memory indices, the views and a worked example), which is also text/plain.
The numbers all come from lazynb.notebook.picture (the views' own index expressions).
"""
from __future__ import annotations
import html
from lazynb.helpers import prod, plural
from lazynb.shape import ShapeTracker, View
from lazynb.notebook.picture import picture, GRID_CAP
from lazynb.tensor import Tensor
from lazynb.notebook.tracedoc import VERSION
from lazynb.notebook.html import bundle
from lazynb.uop.ops import GroupOp, UOp


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
    return bundle(self.doc(), repr(self), fallback="<pre>" + html.escape(repr(self)) + "</pre>")
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
