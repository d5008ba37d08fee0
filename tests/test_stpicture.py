"""The ShapeTracker picture (lazynb/notebook/picture.py, lazynb/notebook/stpicture.py): every drawn cell's memory index
is what numpy reads for the same movement ops on an arange, masked cells are numpy's padding; the static HTML
holds the same numbers; the trace document carries a picture per buffer access. The renderer's hover is tested
in Chromium in tests/ui/test_lab_ui.py and in node (labextension/test/stpicture.test.ts)."""
from __future__ import annotations
import itertools, json
from html.parser import HTMLParser
import numpy as np
import pytest
from lazynb import Tensor
from lazynb.shape import ShapeTracker, View
from lazynb.notebook.picture import picture
from lazynb.notebook.stpicture import show_st, make_picture, picture_text, pictures_html
from lazynb.trace import capture
from lazynb.notebook.tracedoc import MIME

PAD = -1  # numpy's padding value: the arange never holds it

def np_pool(a: np.ndarray, k: tuple[int, int], stride: int = 1) -> np.ndarray:
  w = np.lib.stride_tricks.sliding_window_view(a, k, axis=(-2, -1))
  return w[..., ::stride, ::stride, :, :]

# (name, base shape, lazynb chain, numpy chain on the arange of the base shape)
CHAINS = [
  ("permute", (4, 8), lambda t: t.permute(1, 0), lambda a: a.transpose(1, 0)),
  ("permute 3d", (2, 3, 4), lambda t: t.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
  ("reshape", (4, 6), lambda t: t.reshape(2, 12), lambda a: a.reshape(2, 12)),
  ("expand", (4, 1), lambda t: t.expand(4, 5), lambda a: np.broadcast_to(a, (4, 5))),
  ("pad", (3, 4), lambda t: t.pad(((1, 2), (2, 0))), lambda a: np.pad(a, ((1, 2), (2, 0)), constant_values=PAD)),
  ("shrink", (5, 6), lambda t: t.shrink(((1, 4), (2, 5))), lambda a: a[1:4, 2:5]),
  ("flip", (3, 5), lambda t: t.flip(1), lambda a: a[:, ::-1]),
  ("flip both", (3, 5), lambda t: t.flip((0, 1)), lambda a: a[::-1, ::-1]),
  ("slice with a stride", (6, 7), lambda t: t[1::2, ::3], lambda a: a[1::2, ::3]),
  ("negative-stride slice", (9,), lambda t: t[::-2], lambda a: a[::-2]),
  ("reshape after permute (two views)", (4, 6), lambda t: t.permute(1, 0).reshape(3, 8),
   lambda a: a.transpose(1, 0).reshape(3, 8)),
  ("reshape after permute and pad", (3, 4), lambda t: t.pad(((1, 0), (0, 1))).permute(1, 0).reshape(4, 5),
   lambda a: np.pad(a, ((1, 0), (0, 1)), constant_values=PAD).transpose(1, 0).reshape(4, 5)),
  ("pad, permute, reshape, shrink", (3, 4), lambda t: t.pad(((1, 1), (1, 1))).permute(1, 0).reshape(2, 15)[:, 2:11],
   lambda a: np.pad(a, ((1, 1), (1, 1)), constant_values=PAD).transpose(1, 0).reshape(2, 15)[:, 2:11]),
  ("expand then reshape", (3, 1), lambda t: t.expand(3, 4).reshape(2, 6), lambda a: np.broadcast_to(a, (3, 4)).reshape(2, 6)),
  ("conv windows", (1, 2, 6, 6), lambda t: t._pool((3, 3)), lambda a: np_pool(a, (3, 3))),
  ("conv windows, padded, stride 2", (1, 2, 5, 5), lambda t: t.pad(((0, 0), (0, 0), (1, 1), (1, 1)))._pool((3, 3), 2),
   lambda a: np_pool(np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=PAD), (3, 3), 2)),
  ("conv input view (expanded over output channels)", (1, 2, 5, 5),
   lambda t: t._pool((3, 3)).reshape(1, 1, 2, 1, 3, 3, 3, 3).expand(1, 1, 2, 4, 3, 3, 3, 3).permute(0, 1, 3, 4, 5, 2, 6, 7),
   lambda a: np.broadcast_to(np_pool(a, (3, 3)).reshape(1, 1, 2, 1, 3, 3, 3, 3), (1, 1, 2, 4, 3, 3, 3, 3)).transpose(0, 1, 3, 4, 5, 2, 6, 7)),
]

def drawn(p: dict) -> dict[tuple, int | None]:
  return {tuple(c["idx"]): c["mem"] for row in p["cells"] for c in row}

def all_pictures(t: Tensor) -> list[dict]:
  """Pictures over every index of a small tensor: each choice of the held dims, last two dims as the grid."""
  shape = t.shape
  held = [range(s) for s in shape[:-2]] if len(shape) > 2 else [()]
  out = []
  for at in itertools.product(*held) if len(shape) > 2 else [()]:
    p = make_picture(t, dims=(len(shape) - 2, len(shape) - 1) if len(shape) >= 2 else None, at=list(at) + [0] * min(2, len(shape)), cap=64)
    out.append(p)
  return out

@pytest.mark.parametrize("name,base,chain,np_chain", CHAINS, ids=[c[0] for c in CHAINS])
def test_every_drawn_cell_reads_what_numpy_reads(name, base, chain, np_chain):
  t = chain(Tensor.arange(int(np.prod(base))).reshape(*base))
  ref = np_chain(np.arange(int(np.prod(base))).reshape(base))
  assert t.shape == ref.shape
  seen = {}
  for p in all_pictures(t):
    assert p["mem_size"] == int(np.prod(base))
    seen.update(drawn(p))
  assert len(seen) == ref.size, "the pictures cover every index"
  for idx, mem in seen.items():
    want = int(ref[idx])
    assert (mem if mem is not None else PAD) == want, f"{name}: cell {idx} reads {mem}, numpy reads {want}"
  # and the steps through the views end where the stack ends
  for p in all_pictures(t):
    for row in p["cells"]:
      for c in row:
        if c["mem"] is not None: assert c["steps"][-1]["out"] == c["mem"] and all(s["valid"] for s in c["steps"])
        else: assert not all(s["valid"] for s in c["steps"])

def test_two_views_are_drawn_step_by_step():
  """A reshape after a permute keeps two views; each cell tells the index in view 1, the flat position, the index
  in view 0 and the memory, and the steps agree with numpy at every stage."""
  st = ShapeTracker.from_shape((4, 6)).permute((1, 0)).reshape((3, 8))
  assert len(st.views) == 2
  p = picture(st)
  ref_mid = np.arange(24).reshape(4, 6).T  # view 0's logical content
  for row in p["cells"]:
    for c in row:
      top, bottom = c["steps"]
      assert top["view"] == 1 and bottom["view"] == 0
      assert top["out"] == c["idx"][0] * 8 + c["idx"][1]                  # view 1 is contiguous: the flat position
      assert tuple(bottom["idx"]) == divmod(top["out"], 4)               # unflattened into view 0's shape (6, 4)
      assert c["mem"] == ref_mid[tuple(bottom["idx"])]
  text = picture_text(dict(p, title="t"))
  assert "unflatten into view 0's shape (6, 4)" in text and "view 1:" in text

def test_large_shapes_are_capped_with_a_note():
  t = Tensor.arange(40 * 50).reshape(40, 50).permute(1, 0)
  p = make_picture(t)
  assert (p["rows"], p["cols"], p["total_rows"], p["total_cols"]) == (16, 16, 50, 40)
  assert sum(len(r) for r in p["cells"]) == 256 and p["mem_end"] - p["mem_start"] <= 64
  assert len(json.dumps(p)) < 60_000
  html = show_st(t)._repr_mimebundle_()["text/html"]
  assert "rows: first 16 of 50; cols: first 16 of 40" in html
  assert len(html) < 120_000

def test_dims_and_at_pick_the_grid_and_bad_ones_say_what_is_wrong():
  t = Tensor.arange(24).reshape(2, 3, 4)
  p = make_picture(t, dims=(0, 2), at=[0, 2, 0])
  assert [[c["mem"] for c in r] for r in p["cells"]] == np.arange(24).reshape(2, 3, 4)[:, 2, :].tolist()
  with pytest.raises(ValueError, match="at="): make_picture(t, at=[0, 5, 0])
  with pytest.raises(ValueError, match="two different dims"): make_picture(t, dims=(1, 1))
  with pytest.raises(TypeError, match="Tensor, a ShapeTracker or a View"): show_st(np.zeros(3))
  # an empty tensor has no cells; a 0-d one has one
  empty = make_picture(Tensor.arange(6).reshape(2, 3)[:, 0:0])
  assert empty["cells"] == [] and "no cells" in show_st(Tensor.arange(6).reshape(2, 3)[:, 0:0])._repr_mimebundle_()["text/html"]
  assert make_picture(Tensor(3.0))["cells"] == [[{"idx": [], "mem": 0, "steps": [{"view": 0, "idx": [], "out": 0, "valid": True}]}]]
  # a View and a 1-d tensor
  assert [c["mem"] for c in picture(View.create((5,), (2,), 1))["cells"][0]] == [1, 3, 5, 7, 9]

class Cells(HTMLParser):
  """The logical cells (data-mem, text) and memory cells of a static picture."""
  def __init__(self):
    super().__init__()
    self.cells, self.mem, self._cur = [], [], None
  def handle_starttag(self, tag, attrs):
    a = dict(attrs)
    cls = (a.get("class") or "").split()
    if tag == "td" and "lzs-c" in cls: self._cur = ("c", a)
    elif tag == "td" and "lzs-m" in cls: self._cur = ("m", a)
  def handle_data(self, data):
    if self._cur:
      kind, a = self._cur
      (self.cells if kind == "c" else self.mem).append((a.get("data-mem"), data.strip(), a.get("title"), a.get("class")))
      self._cur = None

def test_static_html_holds_the_same_numbers():
  t = Tensor.arange(12).reshape(3, 4).permute(1, 0).pad(((0, 0), (1, 0)))
  ref = np.pad(np.arange(12).reshape(3, 4).T, ((0, 0), (1, 0)), constant_values=PAD)
  bundle = show_st(t)._repr_mimebundle_()
  parser = Cells()
  parser.feed(bundle["text/html"])
  assert len(parser.cells) == ref.size and len(parser.mem) == 12
  for (mem, text, title, cls), want in zip(parser.cells, ref.flatten()):
    if want == PAD: assert mem == "" and text == "\u00b7" and "reads nothing" in title and "lzs-masked" in cls
    else:
      assert mem == text == str(want) and f"reads memory[{want}]" in title
      assert f"lzs-h{want % 10}" in cls  # the colour of the memory cell it reads
  read = {int(m) for m, *_ in parser.cells if m}
  for mem, text, _, cls in parser.mem: assert ("lzs-read" in cls) == (int(mem) in read) and text == mem
  assert "<script" not in bundle["text/html"]
  # the same document as JSON (what a saved notebook holds), drawn again
  doc = json.loads(json.dumps(bundle[MIME]))
  assert doc["show"] == ["stpicture"] and doc["pictures"][0]["cells"] == json.loads(json.dumps(make_picture(t)))["cells"]
  p2 = Cells()
  p2.feed(pictures_html(doc["pictures"]))
  assert [c[:2] for c in p2.cells] == [c[:2] for c in parser.cells]
  assert "." in bundle["text/plain"] and "reads memory" in bundle["text/plain"]

def test_static_html_escapes_the_document():
  evil = '<img src=x onerror=alert(1)>'
  doc = show_st(Tensor.arange(4).reshape(2, 2), titles=[evil]).doc()
  doc["pictures"][0]["index"] = evil
  doc["pictures"][0]["dims"] = [evil, evil]
  doc["pictures"][0]["mem_end"] = 10 ** 9
  out = pictures_html(doc["pictures"])
  assert evil not in out and "&lt;img" in out and out.count('class="lzs-m ') == 256
  doc["pictures"][0]["cells"] = 3  # malformed: this picture says so, the page still renders
  assert "could not be drawn" in pictures_html(doc["pictures"])

def test_the_trace_has_a_picture_per_buffer_access():
  with capture() as tr:
    (Tensor.arange(12).reshape(3, 4).realize().T.pad(((1, 0), (0, 0))) + 1).realize()
  doc = tr.to_json()
  load = next(v for v in doc["views"] if v["access"] == "load")
  p = load["picture"]
  assert p["shape"] == load["shape"] and p["views"] == [{k: w[k] for k in p["views"][0]} for w in load["views"]]
  ref = np.pad(np.arange(12).reshape(3, 4).T, ((1, 0), (0, 0)), constant_values=PAD)
  cells = drawn(p)
  # the kernel's view may split axes (opts), so compare through the kernel's own shape
  flat = ref.reshape(tuple(p["shape"]))
  for idx, mem in cells.items(): assert (mem if mem is not None else PAD) == flat[idx]
  assert p["mem_size"] == 12
  assert all(v["picture"] is None for v in doc["views"] if v["access"] not in ("load", "store")), "a constant reads no memory"

def conv_load_views(x: Tensor, w: Tensor) -> list[ShapeTracker]:
  (k,) = [si for si in x.conv2d(w).schedule() if si.kind == "kernel"]
  return [u.src[1].arg for u in k.ast.toposort() if u.op.name == "LOAD"]

def test_conv_two_views():
  """The slides' "a conv is two views": the conv kernel's two loads, drawn over the kernel window (ky, kx) for every
  output position and channel: the input's view reads the image patch under the window, the weights' view reads
  the same 3x3 kernel at every output position (stride 0)."""
  x, w = Tensor.rand(1, 2, 6, 6).realize(), Tensor.rand(3, 2, 3, 3).realize()
  sts = conv_load_views(x, w)
  assert len(sts) == 2
  shape = sts[0].shape  # (batch, groups, cout, oy, ox, cin, ky, kx)
  assert shape == (1, 1, 3, 4, 4, 2, 3, 3) and sts[1].shape == shape
  img = np.arange(72).reshape(1, 2, 6, 6)
  wts = np.arange(54).reshape(3, 2, 3, 3)
  (wv,) = [st for st in sts if st.real_strides()[3:5] == (0, 0)]  # the weights do not move along the output position
  (inp,) = [st for st in sts if st is not wv]
  for co, oy, ox, ci in itertools.product(range(3), range(4), range(4), range(2)):
    at = [0, 0, co, oy, ox, ci, 0, 0]
    pi, pw = picture(inp, dims=(6, 7), at=at), picture(wv, dims=(6, 7), at=at)
    assert [[c["mem"] for c in r] for r in pi["cells"]] == img[0, ci, oy:oy + 3, ox:ox + 3].tolist()
    assert [[c["mem"] for c in r] for r in pw["cells"]] == wts[co, ci].tolist()

def test_a_big_trace_draws_a_bounded_number_of_pictures():
  import lazynb.notebook.tracedoc as td
  xs = [Tensor.rand(3 + i, 5).realize() for i in range(10)]
  with capture() as tr:
    for a in xs: (a.T * 2).realize()   # a kernel per shape
  doc = tr.to_json()
  drawn_ = [v for v in doc["views"] if v["picture"] is not None]
  assert len(doc["views"]) > td.PICTURE_LIMIT and len(drawn_) == td.PICTURE_LIMIT
  assert all(max(v["picture"]["rows"], v["picture"]["cols"]) <= td.PICTURE_CAP for v in drawn_)
