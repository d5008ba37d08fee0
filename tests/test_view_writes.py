"""Writes through views, checked against numpy (issue 28, items 2, 3 and 5).

A view (basic indexing, .T, permute, reshape, flip, detach, and views of views) shows the memory of the tensor it
views, as numpy's views and torch's do: a write through it changes that tensor and its other views, whatever that
tensor is (host data not yet copied to the device, a constant, a lazy expression, a pending contiguous()/clone(), a
realized buffer). What must not alias is left alone: clone() and contiguous() are new memory, an arithmetic result is new
memory (also when an equal expression shares its cached buffer), a pad is a new tensor. A write whose value reads the
target's memory through another view reads the old values first (numpy's `m[::-1] = m`).

Two fuzzers draw sequences of these operations and run them on lazynb (CPU, PYTHON and LLVM) and on numpy side by side:
`test_view_write_sequences` (views of every kind of base, setitem, assign, +=, index tensors, reads in between) and
`test_self_overlapping_writes` (target and value both views of one tensor). HYPOTHESIS_SCALE=10 runs ten times the
examples. Reshape is drawn only where numpy's reshape is a view too: lazynb's is always a view (as tinygrad's), numpy's
and torch's copy when the strides cannot express it (torch's docs say not to rely on either).
"""
import os
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from lazynb import Tensor

def ex(n: int) -> int: return n * int(os.environ.get("HYPOTHESIS_SCALE", "1"))
DEVICES = ["CPU", "PYTHON", "LLVM"]

def same(t: Tensor, a: np.ndarray, what: str = ""):
  assert t.shape == a.shape, f"{what}: shape {t.shape} != numpy's {a.shape}"
  np.testing.assert_array_equal(t.numpy(), a, err_msg=what)

# ---------------------------------------------------------------- the reproducers of the issue

BASES = ["data", "zeros", "full", "expr", "contiguous", "clone", "realized", "shared", "detach", "copy"]

def make_base(kind: str, arr: np.ndarray, dev: str):
  """A tensor of the given kind holding arr's values (or zeros/threes), its numpy twin, and the tensors it must not alias
  (with the values they must keep)."""
  if kind == "data": return Tensor(arr, device=dev), arr.copy(), []
  if kind in ("zeros", "full"):
    v = 0.0 if kind == "zeros" else 3.0
    mk = (lambda: Tensor.zeros(*arr.shape, device=dev)) if kind == "zeros" else (lambda: Tensor.full(arr.shape, v, device=dev))
    return mk(), np.full(arr.shape, v, np.float32), [(mk(), np.full(arr.shape, v, np.float32))]  # equal constants share one node
  s = Tensor(arr, device=dev)
  if kind == "expr": return s * 2 + 1, arr * 2 + 1, [(s, arr.copy()), (s * 2 + 1, arr * 2 + 1)]
  if kind == "contiguous": return s.contiguous(), arr.copy(), [(s, arr.copy())]
  if kind == "clone": return s.realize().clone(), arr.copy(), [(s, arr.copy())]
  if kind == "realized": return s.realize(), arr.copy(), []
  if kind == "shared":  # a realized result: an equal expression realized too shares its cached buffer
    s.realize()
    return (s + 1).realize(), arr + 1, [(s, arr.copy()), ((s + 1).realize(), arr + 1)]
  if kind == "detach": return s.realize().detach(), arr.copy(), []  # shares s's memory (torch): s is checked as the twin's base
  if kind == "copy":  # .to(): a new tensor each time, also when an equal copy was made (and realized) before
    src = Tensor(arr, device="CPU" if dev == "PYTHON" else "PYTHON").realize()
    return src.to(dev), arr.copy(), [(src, arr.copy()), (src.to(dev).realize(), arr.copy())]
  raise ValueError(kind)

@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("kind", BASES)
def test_chained_index_write_reaches_the_base(kind, dev):
  arr = np.array([[1, 2], [3, 4]], np.float32)
  t, a, keep = make_base(kind, arr, dev)
  t[0][1] = 9
  a[0][1] = 9
  same(t, a, f"{kind} t[0][1] = 9")
  t.T[0] = 5  # e.T[0] = 5: through a transpose
  a.T[0] = 5
  same(t, a, f"{kind} t.T[0] = 5")
  for k, ka in keep: same(k, ka, f"{kind}: a tensor that must not alias it")

def test_detach_shares_memory_as_torch():
  s = Tensor([1.0, 2.0, 3.0]).realize()
  d = s.detach()
  d[0] = 7
  s[2] += 1
  np.testing.assert_array_equal(s.numpy(), [7, 2, 4])
  np.testing.assert_array_equal(d.numpy(), [7, 2, 4])

def test_clone_and_arithmetic_results_are_new_memory():
  t = Tensor([[1.0, 2.0], [3.0, 4.0]])
  c = t.clone()
  c[0] = 5
  e = t + 1
  e.T[0] = 0
  np.testing.assert_array_equal(t.numpy(), [[1, 2], [3, 4]])
  np.testing.assert_array_equal(c.numpy(), [[5, 5], [3, 4]])
  np.testing.assert_array_equal(e.numpy(), [[0, 3], [0, 5]])
  p = t.pad(((0, 0), (0, 0)))  # no padding at all: still a new tensor, not t's memory
  p += 1
  np.testing.assert_array_equal(t.numpy(), [[1, 2], [3, 4]])
  np.testing.assert_array_equal(p.numpy(), [[2, 3], [4, 5]])

def test_a_view_follows_later_writes_to_its_base():
  t = Tensor.zeros(2, 3)
  v, w = t[1], t.T
  t.assign(Tensor.ones(2, 3))  # t has no memory of its own: it takes the new graph, its views follow
  np.testing.assert_array_equal(v.numpy(), [1, 1, 1])
  t[1, 2] = 4
  np.testing.assert_array_equal(v.numpy(), [1, 1, 4])
  np.testing.assert_array_equal(w.numpy(), [[1, 1], [1, 1], [1, 4]])
  r = t.realize()
  r += 1  # a lazy in-place assign: the views see it too
  np.testing.assert_array_equal(v.numpy(), [2, 2, 5])

def test_views_of_a_temporary():
  """A view holds the tensor it views weakly (a method's own temporaries must not live on: conv2d's gradient rule needs its
  sum to be gone); once that tensor is gone the view stands alone, and views made from it write into it."""
  v = Tensor.zeros(2, 3)[1]
  w = v[1:]
  w[0] = 5
  np.testing.assert_array_equal(v.numpy(), [0, 5, 0])
  x = Tensor([[1.0, 2.0], [3.0, 4.0]]).T
  x[0][1] = 9
  np.testing.assert_array_equal(x.numpy(), [[1, 9], [2, 4]])

@pytest.mark.parametrize("how", ["reshape", "flip", "row"])
def test_a_view_whose_base_is_gone_stands_alone_whatever_its_shape(how):
  """Two views of one tensor, the tensor gone: an assign to one leaves the other as it was, whether or not the first
  happens to cover all of the memory (a reshape of all of it wrote in place, so the second saw the write; a flip did not)."""
  b = Tensor(np.arange(4, dtype=np.float32)).realize()
  x = {"reshape": lambda t: t.reshape(2, 2), "flip": lambda t: t.flip(0), "row": lambda t: t.reshape(2, 2)[0]}[how](b)
  w = b[:1]
  del b
  x.assign(Tensor.full(x.shape, 9.0)).realize()
  np.testing.assert_array_equal(x.numpy(), np.full(x.shape, 9.0))
  np.testing.assert_array_equal(w.numpy(), [0])

def test_copies_to_a_device_are_new_memory():
  src = Tensor([1.0, 2.0, 3.0], device="PYTHON").realize()
  a, b = src.to("CPU"), src.to("CPU")
  b.realize()
  a[0] = 5
  np.testing.assert_array_equal(a.numpy(), [5, 2, 3])
  np.testing.assert_array_equal(b.numpy(), [1, 2, 3])
  np.testing.assert_array_equal(src.numpy(), [1, 2, 3])

@pytest.mark.parametrize("dev", DEVICES)
def test_self_overlapping_assigns_read_the_old_values(dev):
  a = np.array([[1, 2], [3, 4]], np.float32)
  m = Tensor(a, device=dev).realize()
  m.T.assign(m)
  np.testing.assert_array_equal(m.numpy(), a.T)
  m = Tensor(a, device=dev).realize()
  m[::-1] = m
  np.testing.assert_array_equal(m.numpy(), a[::-1])
  m = Tensor(a, device=dev).realize()
  m[:, ::-1] = m
  np.testing.assert_array_equal(m.numpy(), a[:, ::-1])
  d = Tensor([1.0, 2.0, 3.0], device=dev).realize()
  d[::-1] = d  # was "a buffer cannot be a root"
  np.testing.assert_array_equal(d.numpy(), [3, 2, 1])
  d[1:] = d[:-1]
  np.testing.assert_array_equal(d.numpy(), [3, 3, 2])

def test_self_overlapping_assign_leaves_no_stale_cached_copy():
  """The value's copy is a scheduling detail: it must not become what the target tensor (or an equal view) reads later."""
  m = Tensor([[1.0, 2.0], [3.0, 4.0]]).realize()
  v = m.T
  v.assign(m)
  np.testing.assert_array_equal(m.numpy(), [[1, 3], [2, 4]])
  np.testing.assert_array_equal(v.numpy(), [[1, 2], [3, 4]])
  m[0, 0] = 7
  np.testing.assert_array_equal(v.numpy(), [[7, 2], [3, 4]])

@pytest.mark.parametrize("dev", DEVICES)
def test_index_tensor_iadd_on_a_realized_matrix(dev):
  """t[idx] += 1 is t[idx] = t[idx] + 1: a repeated row gets +1 once (numpy, torch and tinygrad 0.10.3 agree)."""
  a = np.arange(6, dtype=np.float32).reshape(3, 2)
  for idx in ([0, 2], [0, 0, 2], [-1]):
    t, want = Tensor(a, device=dev).realize(), a.copy()
    t[Tensor(idx, device=dev)] += 1
    want[idx] += 1
    np.testing.assert_array_equal(t.numpy(), want)
  t = Tensor(a, device=dev)  # not realized, and through a view
  t[1:][Tensor([1, 0], device=dev)] += 10
  np.testing.assert_array_equal(t.numpy(), [[0, 1], [12, 13], [14, 15]])

def test_write_errors_say_what_is_true():
  t = Tensor([1.0, 2.0, 3.0]).realize()
  with pytest.raises(RuntimeError, match="broadcasts"): t.reshape(3, 1).expand(3, 2).assign(Tensor.zeros(3, 2))
  with pytest.raises(RuntimeError, match="broadcasts"): t.reshape(1, 3).expand(2, 3)[:, 0] = 1  # one place, twice
  with pytest.raises(ValueError, match="shape"): t[:2].assign(Tensor.zeros(3))
  with pytest.raises(ValueError, match="cannot be broadcast"): t[:2] = Tensor.zeros(3)
  with pytest.raises(ValueError, match="cannot assign a value of shape"): t[:2] = Tensor.zeros(3, 2)
  np.testing.assert_array_equal(t.numpy(), [1, 2, 3])
  t.reshape(1, 3).expand(2, 3)[1] = 4  # a row of a broadcast is one place each in memory: written, as torch does
  np.testing.assert_array_equal(t.numpy(), [4, 4, 4])

# ---------------------------------------------------------------- fuzzer 1: sequences of writes through views

SHAPES = [(5,), (3, 4), (2, 3, 2)]

@st.composite
def basic_index(draw, shape):
  """A basic index (ints, slices with any step, None) for shape; with an ellipsis when all are ints, so that numpy's
  result is a 0-d view and not a copied scalar."""
  idx = []
  for n in shape[:draw(st.integers(1, len(shape)))]:
    if draw(st.integers(0, 4)) == 0 and n: idx.append(draw(st.integers(-n, n - 1)))
    else: idx.append(slice(draw(st.none() | st.integers(-n - 1, n + 1)), draw(st.none() | st.integers(-n - 1, n + 1)),
                           draw(st.sampled_from([None, 1, 2, 3, -1, -2]))))
  if draw(st.integers(0, 5)) == 0: idx.insert(draw(st.integers(0, len(idx))), None)
  return tuple(idx) + (Ellipsis,)

@st.composite
def view_op(draw, shape):
  """(name, arg) of a view of a tensor of this shape."""
  kinds = (["index", "flip"] if shape else []) + ["detach", "reshape"] + (["permute"] if len(shape) > 1 else []) + (["T"] if len(shape) == 2 else [])
  k = draw(st.sampled_from(kinds))
  if k == "index": return k, draw(basic_index(shape))
  if k == "flip": return k, draw(st.integers(0, len(shape) - 1))
  if k == "permute": return k, tuple(draw(st.permutations(range(len(shape)))))
  if k == "reshape":
    n = int(np.prod(shape))
    return k, draw(st.sampled_from([(n,), (1, n), (n, 1)] + [(d, n // d) for d in (2, 3) if n % d == 0 and n]))
  return k, None

def apply_view(t: Tensor, a: np.ndarray, op):
  """The same view of the lazynb tensor and of the numpy array (None when numpy's would be a copy)."""
  k, arg = op
  if k == "index": return t[arg], a[arg]
  if k == "flip": return t.flip(arg), np.flip(a, arg)
  if k == "permute": return t.permute(arg), a.transpose(arg)
  if k == "T": return t.T, a.T
  if k == "detach": return t.detach(), a[...]
  try: v = np.reshape(a, arg, copy=False)
  except ValueError: return None
  return t.reshape(arg), v

def values_for(draw, shape, live, rng_seed):
  """A value to write into a place of this shape: a number, host data (maybe broadcast), or a live view of the same shape
  (it may overlap the target: numpy reads it before writing)."""
  same_shape = [i for i, (t, a, w) in enumerate(live) if a.shape == shape]
  k = draw(st.sampled_from(["number", "host", "host_bcast"] + (["view"] if same_shape else [])))
  if k == "number":
    v = float(draw(st.integers(-9, 9)))
    return v, np.float32(v)
  if k == "view":
    t, a, _ = live[draw(st.sampled_from(same_shape))]
    return t, a
  vshape = shape[1:] if k == "host_bcast" and shape else shape
  arr = np.random.default_rng(rng_seed).integers(-20, 20, size=vshape).astype(np.float32)
  return Tensor(arr, device=live[0][0].device), arr

@settings(max_examples=ex(20), deadline=None)
@given(data=st.data())
@pytest.mark.parametrize("dev", DEVICES)
def test_view_write_sequences(dev, data):
  draw = data.draw
  shape, kind = draw(st.sampled_from(SHAPES)), draw(st.sampled_from(BASES))
  arr = (np.arange(int(np.prod(shape)), dtype=np.float32) - 3).reshape(shape)
  t, a, keep = make_base(kind, arr, dev)
  live = [(t, a, True)]  # (tensor, numpy twin, writable); live[0] is the base
  log = [f"{kind} base {shape} on {dev}"]
  for step in range(draw(st.integers(2, 7))):
    i = draw(st.integers(0, len(live) - 1))
    h, ha, writable = live[i]
    op = draw(st.sampled_from(["view", "view", "setitem", "assign", "iadd", "fancy", "read", "expand", "adopt"]))
    if op == "view" and writable:  # (a view of a broadcast may pick one place of it: numpy's would still be read-only)
      vo = draw(view_op(ha.shape))
      if (r := apply_view(h, ha, vo)) is not None:
        live.append((*r, True))
        log.append(f"v{len(live) - 1} = v{i} {vo}")
    elif op == "expand" and writable and ha.ndim:  # a broadcast view: readable, never writable (numpy's is read-only too)
      live.append((h.reshape(1, *ha.shape).expand(2, *ha.shape), np.broadcast_to(ha[None], (2, *ha.shape)), False))
      log.append(f"v{len(live) - 1} = v{i} expanded")
    elif op == "adopt":  # a second tensor (of any kind) takes v{i}'s values: its own memory from now on, as numpy's copy
      kind2 = draw(st.sampled_from(BASES))
      n2, _, keep2 = make_base(kind2, np.full(ha.shape, 7, np.float32), dev)
      n2.assign(h if ha.ndim else h.reshape(()))
      live.append((n2, ha.copy(), True))
      keep += keep2
      log.append(f"v{len(live) - 1} = a {kind2} tensor; v{len(live) - 1}.assign(v{i})")
    elif op == "read":
      log.append(f"read v{i}")
      same(h, ha, "\n".join(log))
    elif not writable and ha.size == 0:  # a broadcast of nothing has no places: writing into it writes nothing (as torch)
      log.append(f"{op} into v{i} (an empty broadcast): nothing")
      h.assign(Tensor.zeros(*ha.shape, device=dev))
    elif not writable:
      if ha.size == 0:  # no places, so none is shared: nothing is written (torch's copy_ into an empty broadcast is fine too)
        log.append(f"{op} into v{i} (an empty broadcast): nothing")
        h.assign(Tensor.zeros(*ha.shape, device=dev))
      else:
        log.append(f"{op} into v{i} (a broadcast): an error")
        with pytest.raises(RuntimeError, match="broadcasts"): h.assign(Tensor.zeros(*ha.shape, device=dev))
    elif op == "setitem":
      idx = draw(basic_index(ha.shape)) if ha.ndim else (Ellipsis,)
      target = ha[idx]
      v, va = values_for(draw, target.shape, live, step)
      log.append(f"v{i}[{idx}] = {v if isinstance(v, float) else v.shape}")
      h[idx] = v
      ha[idx] = va
    elif op == "assign":
      v, va = values_for(draw, ha.shape, live, step)
      v = Tensor.full(ha.shape, v, device=dev) if isinstance(v, float) else v.expand(ha.shape)
      log.append(f"v{i}.assign(...)")
      h.assign(v)
      ha[...] = va
    elif op == "iadd":
      v, va = values_for(draw, ha.shape, live, step)
      log.append(f"v{i} += ...")
      h += v  # the same tensor: += assigns in place
      ha += va
    elif op == "fancy" and ha.ndim and ha.shape[0]:
      n = ha.shape[0]
      rows = draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=4))
      plus = draw(st.booleans())
      log.append(f"v{i}[{rows}] {'+= 1' if plus else '= 2'}")
      if plus: h[Tensor(rows, device=dev)] += 1
      else: h[Tensor(rows, device=dev)] = 2
      if plus: ha[rows] += 1
      else: ha[rows] = 2
  msg = "\n".join(log)
  for j, (v, va, _) in enumerate(live): same(v, va, f"v{j} at the end of\n{msg}")
  for k, ka in keep: same(k, ka, f"a tensor that must not alias the base, at the end of\n{msg}")

# ---------------------------------------------------------------- fuzzer 2: target and value views of one tensor

@st.composite
def overlapping_pair(draw, shape):
  """Two basic indexes of `shape` whose views have the same shape (each axis: the same length, any start and step)."""
  a, b = [], []
  for n in shape:
    length = draw(st.integers(1, n))
    for idx in (a, b):
      step = draw(st.sampled_from([1, 2, -1, -2]))
      step = step if (length - 1) * abs(step) < n else (1 if step > 0 else -1)
      span = (length - 1) * abs(step)
      start = draw(st.integers(0, n - 1 - span))
      idx.append(slice(start, start + span + 1, step) if step > 0 else slice(start + span, start - 1 if start else None, step))
  return tuple(a), tuple(b)

def equal_axes_permutation(draw, shape):
  """A permutation that keeps the shape (it swaps axes of equal size): a transpose of a square part."""
  order = list(range(len(shape)))
  for i in range(len(shape)):
    for j in range(i + 1, len(shape)):
      if shape[i] == shape[j] and draw(st.booleans()): order[i], order[j] = order[j], order[i]
  return tuple(order)

@settings(max_examples=ex(20), deadline=None)
@given(data=st.data())
@pytest.mark.parametrize("dev", DEVICES)
def test_self_overlapping_writes(dev, data):
  draw = data.draw
  shape = draw(st.sampled_from([(6,), (3, 3), (4, 3), (2, 3, 3)]))
  kind, op = draw(st.sampled_from(["realized", "data", "expr"])), draw(st.sampled_from(["setitem", "assign", "iadd"]))
  arr = (np.arange(int(np.prod(shape)), dtype=np.float32) * 3 - 5).reshape(shape)
  m, a, _ = make_base(kind, arr, dev)
  # one side may be the tensor itself, the other all of it reversed along some axes or transposed (m.T.assign(m), m[::-1] = m)
  whole = draw(st.sampled_from([None, "target", "value"]))
  if whole is None: ti, vi = draw(overlapping_pair(shape))
  else:
    ti = vi = tuple(slice(None, None, -1) if draw(st.booleans()) else slice(None) for _ in shape)
  to = vo = tuple(range(len(shape)))
  if draw(st.booleans()): to = equal_axes_permutation(draw, a[ti].shape)
  if draw(st.booleans()): vo = equal_axes_permutation(draw, a[vi].shape)
  if whole is not None and ti == (slice(None),) * len(shape) and (to if whole == "value" else vo) == tuple(range(len(shape))):
    ti = vi = (slice(None, None, -1),) + ti[1:]  # not the tensor itself on both sides
  t, ta = (m, a) if whole == "target" else (m[ti].permute(to), a[ti].transpose(to))
  v, va = (m, a) if whole == "value" else (m[vi].permute(vo), a[vi].transpose(vo))
  old, want = va.copy(), a.copy()
  wv = want if whole == "target" else want[ti].transpose(to)
  if op == "iadd": wv += old
  else: wv[...] = old
  if op == "setitem" and to == tuple(range(len(shape))): m[ti if whole != "target" else (Ellipsis,)] = v
  elif op == "setitem": t[...] = v
  elif op == "assign": t.assign(v)
  else: t += v
  same(m, want, f"{kind} m{shape}: m[{ti}].permute({to}) {op} m[{vi}].permute({vo}), the whole tensor: {whole}")

@pytest.mark.parametrize("dev", DEVICES)
def test_a_write_keeps_what_was_computed_from_the_old_contents(dev):
  """A realized assign or contiguous() is memory: writing later into what it read leaves its value as it is. It used to
  be dropped from the realize cache when an input changed, and the value built on it then failed with a StaleReadError
  (a random-seed run of test_view_write_sequences found `v1.assign(v0); v0.assign(...); v1 += ...`, reading v0 first)."""
  x = Tensor([1., 2., 3.], device=dev).contiguous().realize()
  c = x.contiguous()
  y = c + 1
  c.realize()
  x.assign(Tensor([9., 9., 9.], device=dev)).realize()
  assert y.tolist() == [2., 3., 4.] and x.tolist() == [9., 9., 9.]
  a, b = Tensor([1., 2., 3.], device=dev).contiguous().realize(), Tensor([0., 0., 0.], device=dev).contiguous().realize()
  b.assign(a)
  z = b * 10
  b.realize()
  a.assign(Tensor([5., 5., 5.], device=dev)).realize()
  assert z.tolist() == [10., 20., 30.] and b.tolist() == [1., 2., 3.]
  v0 = Tensor(np.arange(5, dtype=np.float32) - 3, device=dev)
  v1 = Tensor(np.full(5, 7, np.float32), device=dev)
  v1.assign(v0)
  v0.assign(Tensor.full((5,), 0.0, device=dev))
  v1 += Tensor(np.ones(5, np.float32), device=dev)
  assert v0.tolist() == [0.0] * 5 and v1.tolist() == [-2., -1., 0., 1., 2.]

# ---------------------------------------------------------------- results that move nothing are still new values
# A method that is not a view in torch (a reduce, pad, cat, repeat, roll...) gives a new value, also where its graph ends
# up as the input's memory itself (a sum over an axis of 1, a pad of 0, a roll by the length): a later write to the input
# must not show in it, realized or not, and a write into it must not reach the input. (An outside review found all three.)
NEW_VALUES = {
  "sum(0)": lambda a: a.sum(0), "sum(0, keepdim)": lambda a: a.sum(0, keepdim=True), "max(0)": lambda a: a.max(0),
  "max(0, keepdim)": lambda a: a.max(0, keepdim=True), "min(0)": lambda a: a.min(0), "prod(0)": lambda a: a.prod(0),
  "mean(0)": lambda a: a.mean(0), "sum(0, dtype)": lambda a: a.sum(0, dtype="float32"), "cumsum(0)": lambda a: a.cumsum(0),
  "cumprod(0)": lambda a: a.cumprod(0), "cummax(0)": lambda a: a.cummax(0), "logsumexp(0)": lambda a: a.logsumexp(0),
  "pad 0": lambda a: a.pad(((0, 0), (0, 0))), "pad": lambda a: a.pad(((0, 0), (1, 1))), "cat of one": lambda a: a.cat(),
  "stack of one": lambda a: Tensor.stack(a), "repeat 1": lambda a: a.repeat(1, 1), "repeat": lambda a: a.repeat(2, 1),
  "roll 0": lambda a: a.roll(0, 0), "roll by the length": lambda a: a.roll(2, 1), "roll": lambda a: a.roll(1, 1),
  "tile": lambda a: a.repeat(1, 2), "sort": lambda a: a.sort(0)[0], "topk": lambda a: a.topk(1, 0)[0],
  "gather": lambda a: a.gather(1, Tensor([[0, 1]])), "clone": lambda a: a.clone(), "contiguous": lambda a: a.contiguous(),
  "+ 0": lambda a: a + 0, "* 1": lambda a: a * 1, "maximum itself": lambda a: a.maximum(a), "where": lambda a: Tensor([[True, True]]).where(a, 0),
  "clip none": lambda a: a.clip(-100, 100), "avg_pool 1": lambda a: a.reshape(1, 1, 1, 2).avg_pool2d(1).reshape(1, 2),
  "max_pool 1": lambda a: a.reshape(1, 1, 1, 2).max_pool2d(1).reshape(1, 2), "interpolate same": lambda a: a.reshape(1, 1, 2).interpolate((2,)).reshape(1, 2),
  "flip then flip": lambda a: a.pad(((0, 0), (0, 0))).flip(1).flip(1), "unsqueeze of a sum": lambda a: a.sum(0).unsqueeze(0),
}

@pytest.mark.parametrize("name", list(NEW_VALUES))
def test_results_that_move_nothing_are_new_values(name):
  fn, orig = NEW_VALUES[name], np.array([[5.0, 6.0]], np.float32)
  want = fn(Tensor(orig)).numpy()
  a = Tensor(orig).realize(); r = fn(a); a[0, 0] = 7  # noqa: E702
  same(r, want, f"{name}, lazy, then a write into its input")
  a = Tensor(orig); r = fn(a); a.detach()[0, 0] = 7  # noqa: E702 (the input still a pending host copy: it reads what that copy fills)
  same(r, want, f"{name}, of host data not yet copied, then a write into it")
  a = Tensor(orig).realize(); r = fn(a).realize(); a += 1; a.realize()  # noqa: E702
  same(r, want, f"{name}, realized, then += on its input")
  a = Tensor(orig).contiguous(); r = fn(a); r.realize(); a.realize()  # noqa: E702 (the result realized first: memory made for a)
  r[(0,) * r.ndim] = 99
  same(a, orig, f"{name}: a write into it reached its input")
  a = Tensor(orig).realize(); r = fn(a); r += 1; r.realize()  # noqa: E702
  same(a, orig, f"{name}: += on it reached its input")
