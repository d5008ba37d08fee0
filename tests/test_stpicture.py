"""The ShapeTracker picture (lazynb/notebook/picture.py, lazynb/notebook/stpicture.py): every drawn cell's memory index
is what numpy reads for the same movement ops on an arange, masked cells are numpy's padding; the output's text/html
carries the document for the one renderer and the picture as text for pages without scripts; the trace document
carries a picture per buffer access. The renderer's hover is tested in Chromium in tests/ui/test_stpicture_ui.py and
in node (labextension/test/stpicture.test.ts)."""
from __future__ import annotations
import itertools, json
import html as htmllib
import numpy as np
import pytest
from lazynb import Tensor
from lazynb.shape import ShapeTracker, View
from lazynb.notebook.picture import picture
from lazynb.notebook.stpicture import show_st, make_picture, picture_text
from lazynb.notebook.viz import doc_of
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
  b = show_st(t)._repr_mimebundle_()
  assert "rows: first 16 of 50; cols: first 16 of 40" in b["text/plain"] and htmllib.escape(b["text/plain"]) in b["text/html"]
  assert len(json.dumps(b)) < 120_000

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

def fallback_of(text_html: str) -> str:
  """The picture a page without scripts shows: the <pre> inside the output's static part, unescaped."""
  static = text_html.split('class="lazynb-static">', 1)[1]
  return htmllib.unescape(static.split("<pre>", 1)[1].split("</pre>", 1)[0])

def test_the_output_is_the_document_for_the_one_renderer_and_text_without_scripts():
  t = Tensor.arange(12).reshape(3, 4).permute(1, 0).pad(((0, 0), (1, 0)))
  ref = np.pad(np.arange(12).reshape(3, 4).T, ((0, 0), (1, 0)), constant_values=PAD)
  bundle = json.loads(json.dumps(show_st(t)._repr_mimebundle_()))  # as a saved notebook holds it
  doc = doc_of(bundle)  # the document is packed once, in the text/html, for the TypeScript view (its script or the extension)
  assert doc is not None and doc["show"] == ["stpicture"] and bundle[MIME].get("payload") == "text/html"
  assert doc["pictures"][0]["cells"] == json.loads(json.dumps(make_picture(t)))["cells"]
  # where no script runs, the grid of memory indices as text: numpy's, row by row (. = padding)
  text = fallback_of(bundle["text/html"])
  assert text == bundle["text/plain"] == picture_text(doc["pictures"][0])
  grid = [ln.split() for ln in text.splitlines()[text.splitlines().index(next(ln for ln in text.splitlines() if ln.startswith("memory index"))) + 1:][:ref.shape[0]]]
  assert grid == [["." if v == PAD else str(v) for v in row] for row in ref]
  assert "class=\"lzs" not in bundle["text/html"], "no second, Python-drawn picture"

def test_the_text_fallback_escapes_the_document():
  evil = '<img src=x onerror=alert(1)>'
  out = show_st(Tensor.arange(4).reshape(2, 2), titles=[evil])._repr_mimebundle_()["text/html"]
  static = out.split('class="lazynb-static">', 1)[1]
  assert evil not in static and "&lt;img" in static and evil in fallback_of(out)

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
