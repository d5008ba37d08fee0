"""Movement ops checked against numpy: reshape permute expand pad shrink flip T transpose squeeze unsqueeze flatten,
__getitem__ (ints, slices with steps, None, Ellipsis), cat stack repeat, and random chains of them.

Movement ops only change the ShapeTracker (zero strides for expand, negative strides for flip, masks for pad), so
every result is also pushed through an elementwise op and a reduction, which read the view inside a kernel.

Regression notes: three ShapeTracker bugs found while writing this file were fixed in lazynb during the session:
.numpy() of an offset-0 view smaller than its buffer (x[0], x[:2]); chained shrinks such as x[:2, :2][:1, :1] or
x[2:0:-1] failing at realize with "cannot reshape"; and a 1-element all-padding view reading real data when
reshaped to 0-d or reduced. TestPrefixViews and TestPaddingOnlyViews keep them covered.
"""
import os
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp
from lazynb import Tensor

# HYPOTHESIS_SCALE=10 multiplies every example budget below, for a longer bug hunt
def ex(n: int) -> int: return n * int(os.environ.get('HYPOTHESIS_SCALE', '1'))

def check(got: Tensor, expected, atol=0.0, rtol=0.0):
  e = np.asarray(expected)
  assert got.shape == e.shape, f"Tensor.shape {got.shape} != expected {e.shape}"
  g = got.numpy()
  assert g.shape == e.shape and g.dtype == e.dtype, f"{g.shape} {g.dtype} != expected {e.shape} {e.dtype}"
  if e.dtype.kind == "f": np.testing.assert_allclose(g, e, atol=atol, rtol=rtol, equal_nan=True)
  else: np.testing.assert_array_equal(g, e)

def check_deep(got: Tensor, expected):
  """The view itself, the view in a reduction kernel, and the view in an elementwise+reduce kernel."""
  e = np.asarray(expected)
  check(got, e)
  check(got.sum(), np.float32(e.astype(np.float64).sum()), atol=1e-3, rtol=1e-5)
  if e.ndim and e.shape[-1]: check((got * 2 + 1).max(-1), (e * np.float32(2) + np.float32(1)).max(-1))  # max of an empty axis is an error

def arange_f32(shape): return (np.arange(int(np.prod(shape)), dtype=np.float32) - 7).reshape(shape)
small_shapes = hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5)

# ------------------------------------------------------------------ reshape

@settings(max_examples=ex(12))
@given(shape=small_shapes, data=st.data())
def test_reshape(shape, data):
  a = arange_f32(shape)
  n = a.size
  divs = [d for d in range(1, n + 1) if n % d == 0]
  d1 = data.draw(st.sampled_from(divs))
  rest = n // d1
  d2 = data.draw(st.sampled_from([d for d in range(1, rest + 1) if rest % d == 0]))
  new = data.draw(st.permutations([d1, d2, rest // d2]))
  check_deep(Tensor(a).reshape(*new), a.reshape(new))
  check(Tensor(a).reshape(tuple(new)), a.reshape(new))
  check(Tensor(a).reshape(-1, *new[1:]), a.reshape(-1, *new[1:]))

def test_reshape_forms():
  a = arange_f32((2, 3, 4))
  check(Tensor(a).reshape(6, 4), a.reshape(6, 4))
  check(Tensor(a).reshape((4, -1)), a.reshape(4, -1))
  check(Tensor(a).reshape([24]), a.reshape(24))
  check(Tensor(a).view(3, 8), a.reshape(3, 8))
  check(Tensor(a).reshape(1, 24, 1), a.reshape(1, 24, 1))

def test_reshape_after_permute_and_flip():
  a = arange_f32((2, 3, 4))
  check_deep(Tensor(a).permute(2, 0, 1).reshape(4, 6), a.transpose(2, 0, 1).reshape(4, 6))
  check_deep(Tensor(a).flip(1).reshape(6, 4), a[:, ::-1].reshape(6, 4))
  check_deep(Tensor(a).permute(1, 2, 0).reshape(-1), a.transpose(1, 2, 0).reshape(-1))
  check_deep(Tensor(a).T.reshape(2, 2, 6), np.swapaxes(a, 0, 1).reshape(2, 2, 6))

# ------------------------------------------------------------------ permute / transpose / T

@settings(max_examples=ex(12))
@given(shape=small_shapes, data=st.data())
def test_permute(shape, data):
  a = arange_f32(shape)
  order = data.draw(st.permutations(range(len(shape))))
  neg = [o - len(shape) if data.draw(st.booleans()) else o for o in order]
  check_deep(Tensor(a).permute(*order), a.transpose(order))
  check(Tensor(a).permute(tuple(neg)), a.transpose(order))

def test_transpose_and_T():
  a = arange_f32((2, 3, 4))
  check(Tensor(a).transpose(0, 2), np.swapaxes(a, 0, 2))
  check(Tensor(a).transpose(-1, -2), np.swapaxes(a, -1, -2))
  check(Tensor(a).transpose(), np.swapaxes(a, 0, 1))
  m = arange_f32((3, 5))
  check_deep(Tensor(m).T, m.T)
  check(Tensor(m).T.T, m)
  v = arange_f32((4,))
  check(Tensor(v).T, v.T)

# ------------------------------------------------------------------ expand (zero strides)

@settings(max_examples=ex(12))
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), data=st.data())
def test_expand(shape, data):
  base = tuple(1 if data.draw(st.booleans()) else s for s in shape)
  a = arange_f32(base)
  target = tuple(s if b == 1 else b for s, b in zip(shape, base))
  lead = tuple(data.draw(st.lists(st.integers(1, 3), max_size=1)))
  full = lead + target
  check_deep(Tensor(a).expand(*full), np.broadcast_to(a, full))
  check(Tensor(a).expand(full), np.broadcast_to(a, full))
  check(Tensor(a).expand(*lead, *[-1 if b != 1 else t for b, t in zip(base, target)]), np.broadcast_to(a, full))

def test_expand_then_ops():
  a = np.array([[1.0], [2.0], [3.0]], np.float32)
  e = np.broadcast_to(a, (3, 4))
  t = Tensor(a).expand(3, 4)
  check(t.sum(1), e.sum(1))
  check(t.sum(0), e.sum(0))
  check(t.flip(1), e[:, ::-1])
  check(t.flip(0), e[::-1])
  check(t.T, e.T)
  check(t.reshape(12), e.reshape(12))
  check(t.T.reshape(2, 6), e.T.reshape(2, 6))
  check(t.pad(((1, 0), (0, 1))), np.pad(e, ((1, 0), (0, 1))))
  check(t[1:, ::2], e[1:, ::2])
  check(t + Tensor(np.arange(4, dtype=np.float32)), e + np.arange(4, dtype=np.float32))

def test_expand_of_scalar_and_int():
  check(Tensor(3).expand(2, 2), np.full((2, 2), 3, np.int32))
  check(Tensor([[True]]).expand(2, 3), np.ones((2, 3), np.bool_))

# ------------------------------------------------------------------ pad / shrink

@settings(max_examples=ex(12))
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), data=st.data(), value=st.sampled_from([0.0, 1.5, -2.0]))
def test_pad(shape, data, value):
  a = arange_f32(shape)
  pads = [(data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in shape]
  exp = np.pad(a, pads, constant_values=value)
  check_deep(Tensor(a).pad(tuple(pads), value=value), exp)
  flat = sum([list(p) for p in reversed(pads)], [])  # torch order: last dim first
  check(Tensor(a).pad(tuple(flat), value=value), exp)

@settings(max_examples=ex(10))
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=5), data=st.data())
def test_pad_negative_crops(shape, data):
  a = arange_f32(shape)
  pads = [(data.draw(st.integers(-1, 2)), data.draw(st.integers(-1, 2))) for _ in shape]
  sl = tuple(slice(max(0, -b), s - max(0, -e)) for (b, e), s in zip(pads, shape))
  exp = np.pad(a[sl], [(max(0, b), max(0, e)) for b, e in pads])
  check_deep(Tensor(a).pad(tuple(pads)), exp)

def test_pad_forms():
  a = arange_f32((2, 3))
  check(Tensor(a).pad((1, 2)), np.pad(a, ((0, 0), (1, 2))))
  check(Tensor(a).pad(((1, 1), None)), np.pad(a, ((1, 1), (0, 0))))
  check(Tensor(a).pad((0, 0, 2, 0), value=9.0), np.pad(a, ((2, 0), (0, 0)), constant_values=9.0))

@settings(max_examples=ex(12))
@given(shape=small_shapes, data=st.data())
def test_shrink(shape, data):
  a = arange_f32(shape)
  arg = []
  for s in shape:
    b = data.draw(st.integers(0, s - 1))
    arg.append((b, data.draw(st.integers(b + 1, s))))
  exp = a[tuple(slice(b, e) for b, e in arg)]
  check_deep(Tensor(a).shrink(tuple(arg)), exp)

def test_shrink_with_none():
  a = arange_f32((3, 4))
  check(Tensor(a).shrink((None, (1, 3))), a[:, 1:3])

# ------------------------------------------------------------------ flip (negative strides)

@settings(max_examples=ex(10))
@given(shape=small_shapes, data=st.data())
def test_flip(shape, data):
  a = arange_f32(shape)
  axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=len(shape), unique_by=lambda x: x % len(shape)))
  check_deep(Tensor(a).flip(axes), np.flip(a, axes))
  check(Tensor(a).flip(axes[0]), np.flip(a, axes[0]))

def test_flip_composed():
  a = arange_f32((3, 4))
  check_deep(Tensor(a).flip(0).flip(0), a)
  check_deep(Tensor(a).flip((0, 1)).T, a[::-1, ::-1].T)
  check_deep(Tensor(a).flip(1)[:, 1:3], a[:, ::-1][:, 1:3])
  check_deep(Tensor(a).flip(1).pad(((0, 1), (2, 0))), np.pad(a[:, ::-1], ((0, 1), (2, 0))))
  check_deep(Tensor(a[:, :1]).expand(3, 4).flip(1), np.broadcast_to(a[:, :1], (3, 4))[:, ::-1])
  check(Tensor(a).flip(0) - Tensor(a), a[::-1] - a)
  check(Tensor(np.array([1, 2, 3], np.int32)).flip(0), np.array([3, 2, 1], np.int32))

# ------------------------------------------------------------------ squeeze / unsqueeze / flatten / unflatten

def test_squeeze_unsqueeze():
  a = arange_f32((1, 3, 1, 2))
  check(Tensor(a).squeeze(), a.squeeze())
  check(Tensor(a).squeeze(0), a.squeeze(0))
  check(Tensor(a).squeeze(-2), a.squeeze(-2))
  check(Tensor(a).squeeze(1), a)  # not size 1: unchanged, like torch
  for d in range(-5, 5):
    check(Tensor(a).unsqueeze(d), np.expand_dims(a, d))
  check(Tensor(2.0).unsqueeze(0), np.array([2.0], np.float32))
  check(Tensor([[5.0]]).squeeze(), np.float32(5.0))

@pytest.mark.parametrize("start,end", [(0, -1), (1, -1), (0, 1), (1, 2), (-2, -1), (2, 2), (0, 0)])
def test_flatten(start, end):
  a = arange_f32((2, 3, 4))
  s, e = start % 3, end % 3
  exp = a.reshape(a.shape[:s] + (-1,) + a.shape[e + 1:])
  check(Tensor(a).flatten(start, end), exp)

def test_flatten_default_and_0d():
  check(Tensor(arange_f32((2, 3))).flatten(), arange_f32((6,)))
  check(Tensor(1.0).flatten(), np.array([1.0], np.float32))
  check(Tensor(arange_f32((2, 6))).unflatten(1, (3, 2)), arange_f32((2, 3, 2)))

# ------------------------------------------------------------------ __getitem__

@st.composite
def index_for(draw, shape):
  idx, dim = [], 0
  n_ell = 0
  while dim < len(shape):
    kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis", "stop"]))
    if kind == "stop":
      if n_ell: continue  # after an ellipsis every remaining dim is indexed: numpy counts the ellipsis' dims from the end
      break
    if kind == "none": idx.append(None); continue  # noqa: E702
    if kind == "ellipsis":
      if n_ell: continue
      n_ell += 1
      idx.append(Ellipsis)
      dim = max(dim, len(shape) - draw(st.integers(0, len(shape) - dim)))  # the ellipsis eats some dims
      continue
    s = shape[dim]
    if kind == "int": idx.append(draw(st.integers(-s, s - 1)))
    else:
      opt = lambda: draw(st.one_of(st.none(), st.integers(-s - 2, s + 2)))  # noqa: E731
      idx.append(slice(opt(), opt(), draw(st.one_of(st.none(), st.integers(-3, 3).filter(lambda x: x != 0)))))
    dim += 1
  if draw(st.booleans()): idx.append(None)
  return tuple(idx)

@settings(max_examples=ex(25))
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5), data=st.data())
def test_getitem(shape, data):
  a = arange_f32(shape)
  idx = data.draw(index_for(shape))
  exp = a[idx]
  got = Tensor(a)[idx]
  assert got.shape == exp.shape, f"shape {got.shape} != numpy {exp.shape} for index {idx}"
  check_deep(got, exp)

@pytest.mark.parametrize("idx", [
  0, -1, 2, (1, 2), (-1, -1, -1), slice(None), slice(1, 3), slice(None, None, -1), slice(None, None, 2), slice(None, None, -2),
  slice(-1, None, -1), (slice(None), slice(None, None, -1)), (slice(None), slice(None, 1, -1)),
  slice(3, 0, -1), slice(None, 0, -2), slice(3, 0, -2),
  (slice(None), 1), (Ellipsis, 0), (0, Ellipsis), (None, 0), (0, None, slice(1, None)), (Ellipsis, None), (slice(None, None, -1), Ellipsis, 1),
  (slice(-2, None), slice(None, None, 3), slice(None, 1)), (None, Ellipsis, None), (1, slice(None), -2),
])
def test_getitem_cases(idx):
  a = arange_f32((3, 4, 5))
  check_deep(Tensor(a)[idx], a[idx])

def test_getitem_int_dtype_and_chained():
  a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
  check(Tensor(a)[1][2], a[1][2])
  check(Tensor(a)[:, ::-1][1, :, ::2], a[:, ::-1][1, :, ::2])
  check(Tensor(a)[np.int64(1)], a[1])

def test_getitem_numpy_int_index():
  a = arange_f32((4, 3))
  check(Tensor(a)[np.int32(-1)], a[-1])

@pytest.mark.parametrize("ind", [[0, 2, 1], [-1, 0], [[1, 1], [0, 2]]])
def test_getitem_int_tensor_gather(ind):
  a = arange_f32((4, 3))
  check(Tensor(a)[Tensor(np.array(ind, np.int32))], a[np.array(ind)])
  # a list holding lists is a tuple of indices (torch and tinygrad; numpy 2 would read it as one array)
  check(Tensor(a)[ind], a[tuple(np.array(i) for i in ind)] if isinstance(ind[0], list) else a[np.array(ind)])

# ------------------------------------------------------------------ cat / stack / repeat / split

@settings(max_examples=ex(10))
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), data=st.data())
def test_cat(shape, data):
  d = data.draw(st.integers(-len(shape), len(shape) - 1))
  n = data.draw(st.integers(1, 3))
  arrs = []
  for i in range(n):
    s = list(shape)
    s[d] = data.draw(st.integers(1, 3))
    arrs.append(arange_f32(tuple(s)) * (i + 1))
  check_deep(Tensor(arrs[0]).cat(*[Tensor(x) for x in arrs[1:]], dim=d), np.concatenate(arrs, d))

def test_cat_dtype_promotion():
  a, b = np.array([1, 2], np.int32), np.array([0.5], np.float32)
  check(Tensor(a).cat(Tensor(b)), np.array([1, 2, 0.5], np.float32))
  c = np.array([True, False])
  check(Tensor(c).cat(Tensor(a)), np.array([1, 0, 1, 2], np.int32))
  check(Tensor(c).cat(Tensor(c)), np.array([True, False, True, False]))

def test_cat_views():
  a = arange_f32((3, 4))
  check_deep(Tensor(a).T.cat(Tensor(a).flip(0).T, dim=1), np.concatenate([a.T, a[::-1].T], 1))
  check_deep(Tensor(a)[:, 1:].cat(Tensor(a)[:, :1], dim=1), np.concatenate([a[:, 1:], a[:, :1]], 1))

@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_stack(dim):
  xs = [arange_f32((2, 3)) * k for k in range(1, 4)]
  check_deep(Tensor(xs[0]).stack(*[Tensor(x) for x in xs[1:]], dim=dim), np.stack(xs, dim))

def test_stack_single_and_0d():
  check(Tensor(arange_f32((2,))).stack(), arange_f32((2,))[None])
  check(Tensor(1.0).stack(Tensor(2.0)), np.array([1.0, 2.0], np.float32))

@pytest.mark.parametrize("shape,reps", [((3,), (2,)), ((2, 3), (2, 2)), ((2, 3), (1, 3)), ((2,), (3, 2)), ((1, 2), (2, 1, 3)), ((2, 2), (1, 1))])
def test_repeat(shape, reps):
  a = arange_f32(shape)
  check_deep(Tensor(a).repeat(*reps), np.tile(a, reps))
  check(Tensor(a).repeat(reps), np.tile(a, reps))

def test_split_chunk():
  a = arange_f32((7, 2))
  parts = Tensor(a).split(3)
  assert [p.shape for p in parts] == [(3, 2), (3, 2), (1, 2)]
  for p, e in zip(parts, np.split(a, [3, 6])): check(p, e)
  parts = Tensor(a).split([2, 5])
  for p, e in zip(parts, np.split(a, [2])): check(p, e)
  parts = Tensor(a).chunk(2, dim=0)
  for p, e in zip(parts, np.split(a, [4])): check(p, e)
  parts = Tensor(a).split(1, dim=1)
  for p, e in zip(parts, np.split(a, 2, axis=1)): check(p, e)

def test_split_chunk_shapes_and_errors_as_torch():
  """Every split/chunk of a small dim (empty ones too) has torch's pieces; sizes that do not add up, a split size of 0
  on a dim that has elements and 0 chunks are ValueErrors (torch refuses them), not a range() error or a lost tail."""
  import torch
  for n in range(5):
    a = arange_f32((n, 2))
    for k in range(-1, 6):
      for how in ("split", "chunk"):
        try: want = [tuple(p.shape) for p in getattr(torch.tensor(a), how)(k, 0)]
        except RuntimeError:
          with pytest.raises(ValueError): getattr(Tensor(a), how)(k, 0)
          continue
        got = getattr(Tensor(a), how)(k, 0)
        assert [p.shape for p in got] == want, (n, k, how)
        np.testing.assert_equal(np.concatenate([p.numpy() for p in got]), a)  # the pieces, in order, are the whole
  with pytest.raises(ValueError, match="add up"): Tensor(arange_f32((3,))).split([1, 1])
  with pytest.raises(ValueError, match=">= 0"): Tensor(arange_f32((3,))).split([4, -1])
  with pytest.raises(ValueError, match="-1 only keeps"): Tensor(arange_f32((3, 1))).expand(-1, 3, 2)
  assert [p.shape for p in Tensor(arange_f32((5, 2))).split(np.int64(2))] == [(2, 2), (2, 2), (1, 2)]

def test_split_of_a_variable_size_is_refused():
  """A size with a variable cannot be cut into pieces of fixed sizes that add up to it: tinygrad refuses, and so does
  lazynb (it returned one piece of all 6 rows for split(2), and dropped rows for split([2, 2]))."""
  from lazynb import Variable
  x = Tensor(arange_f32((10, 4))).contiguous().realize()[:Variable("n", 1, 10).bind(6)]
  for sizes in (2, [2, 2]):
    with pytest.raises(TypeError, match="has a variable"): x.split(sizes, 0)

# ------------------------------------------------------------------ random chains of movement ops

@st.composite
def movement_chain(draw):
  shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
  ops = []
  cur = list(shape)
  for _ in range(draw(st.integers(1, 5))):
    kind = draw(st.sampled_from(["reshape", "permute", "expand", "pad", "shrink", "flip", "slice"]))
    if kind == "reshape":
      n = int(np.prod(cur))
      d = draw(st.sampled_from([x for x in range(1, n + 1) if n % x == 0]))
      new = [d, n // d] if draw(st.booleans()) else [n // d, 1, d]
      ops.append(("reshape", tuple(new))); cur = new  # noqa: E702
    elif kind == "permute":
      order = draw(st.permutations(range(len(cur))))
      ops.append(("permute", tuple(order))); cur = [cur[o] for o in order]  # noqa: E702
    elif kind == "expand":
      if 1 not in cur: continue
      new = [draw(st.integers(1, 3)) if s == 1 else s for s in cur]
      ops.append(("expand", tuple(new))); cur = new  # noqa: E702
    elif kind == "pad":
      if np.prod(cur) > 300: continue
      p = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 1))) for _ in cur)
      ops.append(("pad", p)); cur = [s + a + b for s, (a, b) in zip(cur, p)]  # noqa: E702
    elif kind == "shrink":
      arg = []
      for s in cur:
        b = draw(st.integers(0, s - 1))
        arg.append((b, draw(st.integers(b + 1, s))))
      ops.append(("shrink", tuple(arg))); cur = [e - b for b, e in arg]  # noqa: E702
    elif kind == "flip":
      ax = tuple(draw(st.lists(st.integers(0, len(cur) - 1), min_size=1, unique=True)))
      ops.append(("flip", ax))
    else:
      sl = tuple(slice(None, None, draw(st.sampled_from([1, 2, -1, -2, 3]))) for _ in cur)
      ops.append(("slice", sl)); cur = [len(range(s)[x]) for s, x in zip(cur, sl)]  # noqa: E702
  return shape, ops

def apply_np(a, op):
  k, arg = op
  if k == "reshape": return a.reshape(arg)
  if k == "permute": return a.transpose(arg)
  if k == "expand": return np.broadcast_to(a, arg)
  if k == "pad": return np.pad(a, arg)
  if k == "shrink": return a[tuple(slice(b, e) for b, e in arg)]
  if k == "flip": return np.flip(a, arg)
  return a[arg]

def apply_t(t, op):
  k, arg = op
  if k == "slice": return t[arg]
  return getattr(t, k)(arg)

@settings(max_examples=ex(20))
@given(chain=movement_chain())
def test_random_movement_chain(chain):
  shape, ops = chain
  a = arange_f32(shape)
  t, e = Tensor(a), a
  for op in ops: t, e = apply_t(t, op), apply_np(e, op)
  check_deep(t, np.ascontiguousarray(e))
  check((t.exp2() - 1).sum(0), (np.exp2(e.astype(np.float64)) - 1).sum(0).astype(np.float32), rtol=1e-5, atol=1e-5)

# ------------------------------------------------------------------ offset-0 views smaller than their buffer (regressions)

class TestPaddingOnlyViews:
  """A view that selects only padding must read as the pad value (regression: a 1-element all-padding view
  reshaped to 0-d, or reduced, used to read the real data, found by test_random_movement_chain)."""
  @pytest.mark.parametrize("case", ["getitem", "sum", "max", "sum-left", "2d-sum"])
  def test_single_padding_element(self, case):
    x = Tensor(np.array([-7.0], np.float32))
    got, exp = {
      "getitem": (lambda: x.pad(((0, 1),))[1], np.float32(0)),
      "sum": (lambda: x.pad(((0, 1),))[1:].sum(), np.float32(0)),
      "max": (lambda: x.pad(((0, 2),))[1:2].max(), np.float32(0)),
      "sum-left": (lambda: x.pad(((1, 0),))[:1].sum(), np.float32(0)),
      "2d-sum": (lambda: Tensor(np.array([[-7.0]], np.float32)).pad(((0, 1), (0, 0)))[1:].sum(), np.float32(0)),
    }[case]
    check(got(), exp)

  def test_padding_only_views_that_work(self):
    x = Tensor(np.array([-7.0, 3.0], np.float32))
    check(x.pad(((0, 2),))[2:].sum(), np.float32(0))
    check(x.pad(((0, 1),))[2:] * 1, np.zeros(1, np.float32))
    check(Tensor(np.array([-7.0], np.float32)).pad(((0, 1),))[1:], np.zeros(1, np.float32))
    check(Tensor(np.array([-7.0], np.float32)).pad(((0, 1),))[1:].exp().sum(), np.float32(1))
    check(Tensor(np.array([-7.0], np.float32)).pad(((0, 1),), value=5.0)[1:].sum(), np.float32(5))
    check(Tensor(np.array([-7.0], np.float32)).pad(((0, 1),), value=2.0)[1], np.float32(2))

def np_ref(name, y):
  return {"flip": y[::-1], "T": y.T, "offset slice": y[1:], "pad": np.pad(y, ((1, 0), (0, 1))), "expand": np.broadcast_to(y[:1], (3, 4)),
          "reshape": y.reshape(4, 3), "step slice": y[:, 1::2], "x[0]": y[0], "x[:2]": y[:2], "x[:2, 0]": y[:2, 0],
          "shrink": y[:2]}[name]

class TestPrefixViews:
  """.numpy(), .tolist(), .item() of views read directly (no elementwise op in between)."""
  @pytest.mark.parametrize("name,fn", [
    ("flip", lambda x: x.flip(0)), ("T", lambda x: x.T), ("offset slice", lambda x: x[1:]), ("pad", lambda x: x.pad(((1, 0), (0, 1)))),
    ("expand", lambda x: x[:1].expand(3, 4)), ("reshape", lambda x: x.reshape(4, 3)), ("step slice", lambda x: x[:, 1::2]),
    ("x[0]", lambda x: x[0]), ("x[:2]", lambda x: x[:2]), ("x[:2, 0]", lambda x: x[:2, 0]), ("shrink", lambda x: x.shrink(((0, 2), (0, 4)))),
  ])
  def test_numpy_of_view(self, name, fn):
    a = arange_f32((3, 4))
    v = fn(Tensor(a))
    np.testing.assert_array_equal(v.numpy(), np_ref(name, a))
    assert v.tolist() == np_ref(name, a).tolist()
    np.testing.assert_array_equal(v.realize().numpy(), np_ref(name, a))

  def test_misc_prefix_reads(self):
    a = arange_f32((3, 4))
    np.testing.assert_array_equal(Tensor.arange(5)[:3].numpy(), np.arange(3, dtype=np.int32))
    assert Tensor(a)[0, 0].item() == a[0, 0]
    assert Tensor(a)[2, 3].item() == a[2, 3]
    np.testing.assert_array_equal(Tensor(a)[:2].contiguous().numpy(), a[:2])

  @pytest.mark.parametrize("case", ["2d", "crop-pad", "getitem-int", "neg-step-1-elem", "step-1-elem", "flip-then-prefix", "neg-step-slice",
                                    "2d-wide", "inner-offset", "1d"])
  def test_chained_shrinks(self, case):
    a = arange_f32((3, 3))
    got, exp = {
      "2d": (lambda: Tensor(a)[:2, :2][:1, :1], a[:2, :2][:1, :1]),
      "crop-pad": (lambda: Tensor(a).pad(((0, -1), (0, -1)))[:1], a[:2, :2][:1]),
      "getitem-int": (lambda: Tensor(a)[:2, :2][0], a[:2, :2][0]),
      "neg-step-1-elem": (lambda: Tensor(a[0])[2:1:-1], a[0][2:1:-1]),
      "step-1-elem": (lambda: Tensor(a[0])[0:1:2], a[0][0:1:2]),
      "flip-then-prefix": (lambda: Tensor(a[0]).flip(0)[:2], a[0][::-1][:2]),
      "neg-step-slice": (lambda: Tensor(a[0])[2:0:-1], a[0][2:0:-1]),
      "2d-wide": (lambda: Tensor(a)[:2, :3][:1, :1], a[:2, :3][:1, :1]),
      "inner-offset": (lambda: Tensor(a)[:2, :2][1:, 1:], a[:2, :2][1:, 1:]),
      "1d": (lambda: Tensor(a[0])[:2][:1], a[0][:2][:1]),
    }[case]
    check(got() + 0, exp)
    check(got(), exp)

def test_pool_and_conv_on_tiny_inputs():
  # these go through chained shrinks inside _pool
  x = arange_f32((1, 1, 2, 2))
  check(Tensor(x).max_pool2d(1, 2), x[:, :, ::2, ::2])
  check(Tensor(x).avg_pool2d(1, 2), x[:, :, ::2, ::2])
  one = np.ones((1, 1, 1, 1), np.float32)
  check(Tensor(one * 3).conv2d(Tensor(one * 2)), one * 6)
