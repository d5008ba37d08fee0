"""The scheduler's promises: which graphs become how many kernels, what a ScheduleItem holds, and that running
the schedule gives numpy's answer. Kernel counts are read two ways: from `t.schedule()` items of kind
"kernel" and from `GlobalCounters.kernel_count` deltas when the schedule runs."""
import os
import numpy as np
import pytest
from lazynb import Tensor, Device, GlobalCounters, Context, dtypes
from lazynb.uop import Ops, GroupOp, UOp
from lazynb.engine.schedule import ScheduleItem

REASONS = {"realize", "copy", "reduce", "pad"}

def kernel_items(t, *more):
  return [si for si in t.schedule(*more) if si.kind == "kernel"]

def n_kernels(t, *more) -> int: return len(kernel_items(t, *more))

def kernels_run(fn) -> int:
  k0 = GlobalCounters.kernel_count
  fn()
  return GlobalCounters.kernel_count - k0

def rnd(*shape, seed=0):
  return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

@pytest.fixture
def xy():
  a, b = rnd(4, 4, seed=1), rnd(4, 4, seed=2)
  return a, b, Tensor(a).realize(), Tensor(b).realize()

# ---------------------------------------------------------------- fusion: how many kernels

def test_add_relu_sum_is_one_kernel(xy):
  a, b, A, B = xy
  out = (A + B).relu().sum()
  assert n_kernels(out) == 1
  assert kernels_run(out.realize) == 1
  np.testing.assert_allclose(out.item(), np.maximum(a + b, 0).sum(), rtol=1e-5)

def test_elementwise_chain_is_one_kernel(xy):
  a, _, A, _ = xy
  out = (((A + 1) * 2) - 1) / 2
  items = kernel_items(out)
  assert len(items) == 1 and items[0].reason == "realize"
  assert kernels_run(out.realize) == 1
  np.testing.assert_allclose(out.numpy(), (((a + 1) * 2) - 1) / 2, rtol=1e-6)

def test_realize_after_each_op_is_three_kernels(xy):
  a, b, A, B = xy
  def run():
    c = (A + B).realize()
    d = c.relu().realize()
    e = d.sum().realize()
    np.testing.assert_allclose(e.item(), np.maximum(a + b, 0).sum(), rtol=1e-5)
  assert kernels_run(run) == 3

@pytest.mark.parametrize("move", [
  lambda t: t.reshape(2, 8), lambda t: t.permute(1, 0), lambda t: t.T, lambda t: t.expand(3, 4, 4),
  lambda t: t.reshape(4, 4, 1).expand(4, 4, 5), lambda t: t[1:3, ::2], lambda t: t.unsqueeze(0),
  lambda t: t.permute(1, 0).reshape(16).reshape(2, 8), lambda t: t.flip(0), lambda t: t.pad(((1, 1), (0, 2))),
], ids=["reshape", "permute", "T", "expand", "reshape-expand", "slice", "unsqueeze", "permute-reshape", "flip", "pad"])
def test_movement_ops_alone_are_zero_kernels(xy, move):
  a, _, A, _ = xy
  out = move(A)
  assert out.schedule() == []
  assert kernels_run(out.realize) == 0
  assert out.uop.base is A.uop.base  # still a view of the same buffer

def test_movement_ops_then_compute_fuse(xy):
  a, b, A, B = xy
  out = (A.permute(1, 0) + B.flip(0)).reshape(16)
  assert n_kernels(out) == 1
  np.testing.assert_allclose(out.numpy(), (a.T + b[::-1]).reshape(16), rtol=1e-6)

def test_reduce_read_through_expand_is_its_own_kernel(xy):
  a, _, A, _ = xy
  out = A - A.sum(axis=1, keepdim=True)
  items = kernel_items(out)
  assert [si.reason for si in items] == ["reduce", "realize"]
  np.testing.assert_allclose(out.numpy(), a - a.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)

def test_reduce_of_reduce_is_two_kernels(xy):
  a, _, A, _ = xy
  out = A.sum(0).max(0)
  assert n_kernels(out) == 2
  np.testing.assert_allclose(out.item(), a.sum(0).max(), rtol=1e-5)

def test_reduce_with_elementwise_after_is_one_kernel(xy):
  a, _, A, _ = xy
  out = (A.sum(axis=1) * 2 + 1).exp()
  assert n_kernels(out) == 1
  np.testing.assert_allclose(out.numpy(), np.exp(a.sum(1) * 2 + 1), rtol=1e-4)

def test_reduce_used_twice_in_one_kernel(xy):
  """(s+1)*(s+2): the reduce may join the kernel (computed once, used twice) or get its own; never twice."""
  a, _, A, _ = xy
  s = A.sum()
  out = (s + 1) * (s + 2)
  items = kernel_items(out)
  assert 1 <= len(items) <= 2
  assert sum(u.op is Ops.REDUCE_AXIS for si in items for u in si.ast.toposort()) == 1
  np.testing.assert_allclose(out.item(), (a.sum() + 1) * (a.sum() + 2), rtol=1e-4)

def test_reduce_needed_by_two_outputs_is_its_own_kernel(xy):
  a, _, A, _ = xy
  s = A.sum(axis=1)
  p, q = s + 1, s * 2
  items = kernel_items(p, q)
  assert sorted(si.reason for si in items) == ["realize", "realize", "reduce"]
  p.realize(q)
  np.testing.assert_allclose(p.numpy(), a.sum(1) + 1, rtol=1e-5)
  np.testing.assert_allclose(q.numpy(), a.sum(1) * 2, rtol=1e-5)

def test_shared_elementwise_is_recomputed_not_split(xy):
  a, _, A, _ = xy
  c = A + 1
  assert n_kernels(c * c) == 1

def test_matmul_relu_sum_axis0_is_two_kernels(xy):
  a, b, A, B = xy
  z = (A @ B).relu().sum(axis=0)
  items = kernel_items(z)
  assert len(items) == 2 and items[0].reason == "reduce"
  np.testing.assert_allclose(z.numpy(), np.maximum(a @ b, 0).sum(0), rtol=1e-4, atol=1e-5)

def test_softmax_kernels(xy):
  a, _, A, _ = xy
  x = A.reshape(16)
  sm = x.softmax()
  items = kernel_items(sm)
  # max and sum are reduces read through an expand: each gets a kernel; the division is the third
  assert [si.reason for si in items] == ["reduce", "reduce", "realize"]
  e = np.exp(a.reshape(16) - a.max())
  np.testing.assert_allclose(sm.numpy(), e / e.sum(), rtol=1e-5)

def test_contiguous_forces_a_kernel(xy):
  a, _, A, _ = xy
  p = A.permute(1, 0)
  assert n_kernels(p) == 0
  assert n_kernels(p.contiguous()) == 1
  assert n_kernels(p.contiguous() + 1) == 2
  np.testing.assert_allclose((p.contiguous() + 1).numpy(), a.T + 1)

def test_pad_through_unsafe_op_splits(xy):
  """exp(0) != 0: the exp must run before the pad, else the padding would read exp(0)=1."""
  a, _, A, _ = xy
  out = A.exp().pad(((1, 1), (0, 0))) + 1
  assert [si.reason for si in kernel_items(out)] == ["pad", "realize"]
  np.testing.assert_allclose(out.numpy(), np.pad(np.exp(a), ((1, 1), (0, 0))) + 1, rtol=1e-5)

def test_pad_through_safe_op_fuses(xy):
  a, _, A, _ = xy
  out = A.relu().pad(((1, 1), (0, 0))) * 3
  assert n_kernels(out) == 1
  np.testing.assert_allclose(out.numpy(), np.pad(np.maximum(a, 0), ((1, 1), (0, 0))) * 3, rtol=1e-6)

def test_noopt_does_not_change_kernel_count(xy):
  a, b, A, B = xy
  with Context(NOOPT=1):
    assert n_kernels((A + B).relu().sum()) == 1
    assert n_kernels((A @ B).relu().sum(axis=0)) == 2

# ---------------------------------------------------------------- copies from Python lists

def test_tensor_from_list_schedules_a_copy():
  t = Tensor([1, 2, 3, 4])
  items = (t + 1).schedule()
  kinds = [si.kind for si in items]
  assert kinds == ["copy", "kernel"]
  cp = items[0]
  assert cp.reason == "copy" and cp.ast.op is Ops.COPY
  assert cp.bufs[0].device == Device.DEFAULT and cp.bufs[1].device == "PYTHON"
  assert kernels_run((t + 1).realize) == 1  # the copy is not counted as a kernel

def test_copy_then_kernel_order_and_values():
  t = Tensor([1, 2, 3, 4])
  out = t * 4
  items = out.schedule()
  assert items.index(next(si for si in items if si.kind == "copy")) < items.index(next(si for si in items if si.kind == "kernel"))
  assert out.tolist() == [4, 8, 12, 16]

# ---------------------------------------------------------------- what a ScheduleItem holds

def _check_item(si: ScheduleItem):
  assert si.kind in ("kernel", "copy") and si.reason in REASONS
  if si.kind == "copy": return
  ast = si.ast
  assert ast.op is Ops.SINK and len(ast.src) >= 1
  store = ast.src[0]
  assert store.op is Ops.STORE
  dg, view, _ = store.src
  assert dg.op is Ops.DEFINE_GLOBAL and dg.arg == 0 and view.op is Ops.VIEW
  assert view.arg.size == si.bufs[0].size  # the store covers the whole output buffer
  gl = sorted({u.arg for u in ast.toposort() if u.op is Ops.DEFINE_GLOBAL})
  assert gl == list(range(len(si.bufs))), "one DEFINE_GLOBAL per buffer, numbered in bufs order"
  assert sum(u.op is Ops.REDUCE_AXIS for u in ast.toposort()) <= 1, "at most one reduce per kernel"
  for u in ast.toposort():
    if u.op is Ops.LOAD:
      assert u.src[0].arg >= 1 and u.src[1].op is Ops.VIEW
      assert u.src[1].arg.shape == view.arg.shape or u.src[1].arg.size >= view.arg.size
  for b in si.bufs: assert hasattr(b, "device") and hasattr(b, "size") and hasattr(b, "dtype")

@pytest.mark.parametrize("make", [
  lambda A, B: (A + B).relu().sum(), lambda A, B: (A @ B).relu().sum(axis=0), lambda A, B: (A @ B).relu().sum(axis=0).softmax(),
  lambda A, B: A.exp().pad(((1, 1), (0, 0))) + 1, lambda A, B: A - A.max(axis=1, keepdim=True),
], ids=["relu-sum", "matmul", "softmax", "pad", "sub-max"])
def test_schedule_item_structure(xy, make):
  _, _, A, B = xy
  items = make(A, B).schedule()
  assert items
  for si in items: _check_item(si)

def test_schedule_order_respects_dependencies(xy):
  _, _, A, B = xy
  out = ((A @ B).relu().sum(axis=0)).softmax()
  items = out.schedule()
  made = set()
  for si in items:
    for b in si.bufs[1:]:
      assert b.is_allocated() or id(b) in made, "an item reads a buffer no earlier item writes"
    made.add(id(si.bufs[0]))

def test_output_buffer_matches_tensor(xy):
  _, _, A, B = xy
  out = (A + B).sum(axis=1)
  si = kernel_items(out)[-1]
  assert si.bufs[0].size == 4 and si.bufs[0].dtype is dtypes.float32 and si.bufs[0].device == A.device

def test_schedule_does_not_run(xy):
  _, _, A, B = xy
  out = (A + B) * 3
  k0 = GlobalCounters.kernel_count
  items = out.schedule()
  assert GlobalCounters.kernel_count == k0
  assert not items[-1].bufs[0].is_allocated()
  assert not out.uop.is_realized

def test_realized_tensor_schedules_nothing(xy):
  _, _, A, B = xy
  out = (A + B).realize()
  assert out.schedule() == []
  assert kernels_run(out.realize) == 0

def test_later_graph_reads_realized_buffer(xy):
  a, b, A, B = xy
  c = (A + B).realize()
  d = c * 2
  items = kernel_items(d)
  assert len(items) == 1
  assert any(buf is c.uop.base.buffer for buf in items[0].bufs[1:])
  np.testing.assert_allclose(d.numpy(), (a + b) * 2, rtol=1e-6)

def test_schedule_several_outputs(xy):
  a, _, A, _ = xy
  p, q = A + 1, A * 2
  items = kernel_items(p, q)
  assert len(items) == 2
  assert kernels_run(lambda: p.realize(q)) == 2
  np.testing.assert_allclose(p.numpy(), a + 1)
  np.testing.assert_allclose(q.numpy(), a * 2)

def test_kernel_count_matches_kernel_items(xy):
  _, _, A, B = xy
  for make in (lambda: (A + B).relu().sum(), lambda: (A @ B).relu().sum(axis=0).softmax(), lambda: A - A.sum()):
    out = make()
    n = n_kernels(out)
    assert kernels_run(out.realize) == n

def test_dedup_realize_shares_buffer():
  t = Tensor([1, 2, 3, 4])
  A, B = t * 4, t * 4
  assert A is not B and A.uop is B.uop
  A.realize()
  assert A.uop is B.uop
  assert B.schedule() == []
  assert kernels_run(lambda: B.tolist()) == 0
  assert B.tolist() == [4, 8, 12, 16]

# ---------------------------------------------------------------- movement ops end to end (values, not only counts)

def _ref_apply(a, ops):
  for kind, arg in ops:
    if kind == "slice": a = a[arg]
    elif kind == "flip": a = np.flip(a, arg)
    elif kind == "pad": a = np.pad(a, arg)
    elif kind == "permute": a = a.transpose(arg)
    elif kind == "reshape": a = a.reshape(arg)
    elif kind == "expand": a = np.broadcast_to(a, arg)
  return a

def _t_apply(t, ops):
  for kind, arg in ops:
    if kind == "slice": t = t[arg]
    elif kind == "flip": t = t.flip(arg)
    elif kind == "pad": t = t.pad(arg)
    elif kind == "permute": t = t.permute(arg)
    elif kind == "reshape": t = t.reshape(arg)
    elif kind == "expand": t = t.expand(arg)
  return t

GOOD_CHAINS = {
  "permute-reshape": ((4, 3), [("permute", (1, 0)), ("reshape", (2, 6))]),
  "pad-reshape": ((2, 3), [("pad", ((1, 0), (0, 1))), ("reshape", (12,))]),
  "slice-step": ((6, 5), [("slice", (slice(1, 5), slice(None, None, 2)))]),
  "expand-permute": ((3, 1), [("expand", (3, 4)), ("permute", (1, 0))]),
  "suffix-slice": ((5,), [("slice", (slice(2, 5),))]),
  "flip-once": ((3, 4), [("flip", 1)]),
}

@pytest.mark.parametrize("name", list(GOOD_CHAINS))
def test_movement_chain_values(name):
  shape, ops = GOOD_CHAINS[name]
  a = np.arange(1, int(np.prod(shape)) + 1, dtype=np.float32).reshape(shape)
  t = _t_apply(Tensor(a).realize(), ops)
  np.testing.assert_array_equal((t + 0).numpy(), _ref_apply(a, ops))
  np.testing.assert_array_equal(t.numpy(), _ref_apply(a, ops))

@pytest.mark.parametrize("name,make,ref", [
  ("row0", lambda: Tensor([[1., 2.], [3., 4.]])[0].numpy(), [1., 2.]),
  ("item0", lambda: Tensor([1., 2., 3.])[0].item(), 1.0),
  ("prefix", lambda: Tensor([1., 2., 3.])[:2].numpy(), [1., 2.]),
  ("flip-prefix", lambda: (Tensor([1., 2., 3.]).flip(0)[:2] + 1).numpy(), [4., 3.]),
  ("pad-prefix", lambda: Tensor([1., 2.]).pad(((1, 1),))[:3].numpy(), [0., 1., 2.]),
  ("T-row0", lambda: Tensor([[1., 2.], [3., 4.]]).T[0].numpy(), [1., 3.]),
])
def test_prefix_slices(name, make, ref):
  """Regression: offset-0 prefix views were treated as the whole buffer (numpy) or crashed ShapeTracker.simplify."""
  np.testing.assert_array_equal(np.asarray(make()), np.asarray(ref))

def test_index_into_padding_of_one_element():
  t = Tensor([5.0]).pad(((0, 1),))
  assert t.numpy().tolist() == [5.0, 0.0]
  assert t[1].item() == 0.0

def test_index_into_padding_of_bigger_buffer():
  t = Tensor([5.0, 6.0]).pad(((0, 2),))
  assert t[3].item() == 0.0 and (t[3] + 1).item() == 1.0 and t[1].item() == 6.0

def test_flip_of_flip_values():
  """Regression: two flips stack two views in the scheduler; symbolic once produced out-of-bounds indices here."""
  a = np.arange(18, dtype=np.float32).reshape(3, 2, 3)
  t = Tensor(a).realize()
  np.testing.assert_array_equal(t.flip(1).flip((0, 1, 2)).numpy(), a[:, ::-1][::-1, ::-1, ::-1])

def test_permute_reshape_flip_values():
  a = np.arange(12, dtype=np.float32).reshape(4, 3)
  t = Tensor(a).realize()
  np.testing.assert_array_equal(t.permute(1, 0).reshape(4, 3).flip(0).numpy(), a.T.reshape(4, 3)[::-1])

# ---------------------------------------------------------------- constants fold before kernels are cut (fold_consts)

def test_a_tensor_of_constants_needs_no_kernel_until_memory_is_asked_for():
  from lazynb.trace import capture
  t = Tensor.ones(3, 4) * 2 + 1
  with capture(rewrites=False) as tr: t.realize()
  assert tr.schedule == [] and t.uop.base.op is Ops.CONST and t.uop.base.arg == 3.0
  with capture(rewrites=False) as tr: arr = t.numpy()
  assert [s["kind"] for s in tr.schedule] == ["kernel"] and (arr == np.full((3, 4), 3.0, np.float32)).all()
  assert len(Tensor.full((2, 2), 5.0).contiguous().schedule()) == 1  # contiguous() asks for memory

def test_fold_constants_is_a_reported_rewrite_and_keeps_the_kernel_small():
  from lazynb.trace import capture
  a = Tensor(np.arange(4, dtype=np.float32)).realize()
  with capture() as tr: r = (a + Tensor.ones(4) * 2 - Tensor.full((4,), 0.5).exp()).realize()
  folds = [rw for rw in tr.to_json()["rewrites"] if rw["name"] == "fold constants"]
  assert len(folds) == 1 and folds[0]["total_steps"] >= 2
  np.testing.assert_allclose(r.numpy(), np.arange(4) + 2 - np.exp(np.float32(0.5)), rtol=1e-6)
  with capture() as tr: (a * 3).realize()
  # nothing folded: the pass is still shown (the tensor graph, where the Rewrites view starts), with no steps
  (fold,) = [rw for rw in tr.to_json()["rewrites"] if rw["name"] == "fold constants"]
  assert fold["stage"] == "tensor graph" and fold["total_steps"] == 0 and fold["before_graph"] == fold["after_graph"]

@pytest.mark.parametrize("dt", [dtypes.int32, dtypes.uint8, dtypes.float32], ids=str)
def test_values_known_before_any_kernel_need_none(dt):
  """A padded constant (cast too), an int times 0 and a view that reads only padding are known without a kernel, as in
  tinygrad 0.10; a float times 0 is not (NaN * 0 is NaN), nor is a fold allowed to drop a write."""
  padded = Tensor(3, dtype=dt).reshape(1, 1).pad(((1, 2), (0, 1)))
  assert len(padded.schedule()) == 0 and len(padded.cast(dtypes.int64).schedule()) == 0
  assert padded.cast(dtypes.int64).tolist() == np.pad(np.full((1, 1), 3), ((1, 2), (0, 1))).tolist() == padded.tolist()
  x = Tensor(np.array([1, 200, 7]).astype(dt.np)).realize()
  unread = x.pad(((0, 3),))[3:]  # (only padding)
  assert len(unread.schedule()) == 0 and len((unread * 2 + 1).schedule()) == 0 and (unread + 1).tolist() == [1, 1, 1]
  if dtypes.is_float(dt):
    y = Tensor([np.nan, np.inf, 2.0], dtype=dt) * 0
    assert len(y.schedule()) == 2 and np.array_equal(y.numpy(), [np.nan, np.nan, 0], equal_nan=True)  # (a copy and the mul)
  else:
    assert len((x * 0 + x.sum() * 0).schedule()) == 0 and (x * 0).tolist() == [0, 0, 0]
    w = Tensor(np.zeros(3, dt.np)).realize()
    r = w.assign(x + 1) * 0
    assert len(r.schedule()) == 2 and r.tolist() == [0, 0, 0] and w.tolist() == [2, 201, 8]  # the write is kept

@pytest.mark.parametrize("case", ["two reduces of it", "read transposed", "read shrunk", "cast to half"])
def test_a_reduce_that_needs_its_kernel_stores_the_elementwise_ops_above_it(case):
  """r = a.sum(0) + b read by two reduces (or through a permute, a shrink): r's kernel is the reduce's, and it stores r,
  so the + b is computed once, not in every reader (tinygrad 0.10 groups them the same way); DONT_GROUP_REDUCES=1
  stores the reduce itself. As many kernels either way, the same values."""
  a = np.random.default_rng(3).standard_normal((4, 4, 4)).astype(np.float32)
  b = np.random.default_rng(4).standard_normal((4, 4)).astype(np.float32)
  def build(T, sum0, cast):
    r = sum0(T(a)) + T(b)
    if case == "cast to half": r = cast(r)
    if case == "read transposed": return [r.T * 4, r * (r.T * 4)]
    if case == "read shrunk": return [r[1:3, :2] * 2, r.sum(0)]
    return [r.sum(0) * 4, r.sum(1) * 2]
  T = lambda x: Tensor(x).realize()  # noqa: E731
  outs = build(T, lambda t: t.sum(0), lambda t: t.half())
  items = Tensor.schedule(*outs)
  first = [si for si in items if si.reason == "reduce"]
  assert len(first) == 1 and first[0].ast.src[0].src[2].op is (Ops.CAST if case == "cast to half" else Ops.ADD)
  assert first[0].bufs[0].dtype is (dtypes.half if case == "cast to half" else dtypes.float32)
  want = build(np.asarray, lambda x: x.sum(0), lambda x: x.astype(np.float16))
  for o, w in zip(outs, want):  # (numpy adds halves in half: a cancelling sum differs in its last bits)
    np.testing.assert_allclose(o.numpy(), w, rtol=1e-5, atol=2e-2 if case == "cast to half" else 1e-5)
  with Context(DONT_GROUP_REDUCES=1):
    plain = Tensor.schedule(*build(T, lambda t: t.sum(0), lambda t: t.half()))
    assert len(plain) == len(items) and [si.ast.src[0].src[2].op for si in plain if si.reason == "reduce"] == [Ops.REDUCE_AXIS]

def test_a_reduce_read_back_in_order_through_permutes_stays_in_its_readers_kernel():
  """Permutes and reshapes that add up to a reshape (tinygrad's test_multi_permute_should_collapse) read the reduce in
  order: one kernel, nothing stored for it."""
  a, b = np.random.default_rng(5).standard_normal((4, 4, 4, 4)).astype(np.float32), np.arange(16, dtype=np.float32)
  c = Tensor(a).realize().sum((0, 1)).cast(dtypes.float16).permute(1, 0).reshape(4, 4, 1).permute(1, 0, 2).reshape(16) + Tensor(b).realize()
  assert len(c.schedule()) == 1
  np.testing.assert_allclose(c.numpy(), a.sum((0, 1)).astype(np.float16).reshape(16) + b, rtol=1e-3, atol=1e-2)

def test_folded_constants_can_be_written():
  w = Tensor.zeros(4).realize()
  w.assign(Tensor(np.arange(4, dtype=np.float32)))
  w[1:3] = 9
  w += 1
  np.testing.assert_array_equal(w.numpy(), np.array([1, 10, 10, 4], np.float32))

def test_a_pad_of_a_pad_is_one_view():
  """Movement ops in a row (no reshape between) are applied to the shape below them as one view: a pad of a pad
  indexes like the single wider pad (composed one by one from above, it left two views and /2304 and %64 in the
  index of the transposed conv's padded input)."""
  from lazynb import trace
  g = Tensor(np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)).realize()
  ref = np.pad(g.numpy(), ((0, 0), (0, 0), (2, 3), (1, 2)))
  srcs = []
  for y in (g.pad(((0, 0), (0, 0), (2, 2), (1, 2))).pad(((0, 0), (0, 0), (0, 1), (0, 0))), g.pad(((0, 0), (0, 0), (2, 3), (1, 2)))):
    with trace.Recorder(rewrites=False) as rec: got = y.contiguous().numpy()
    np.testing.assert_array_equal(got, ref)
    srcs.append([e.data["program"].src for e in rec.of("exec") if e.data["kind"] == "kernel"])
  assert len(srcs[0]) == 1 and srcs[0] == srcs[1], srcs
  assert "/" not in srcs[0][0].split("for (", 1)[-1] and "%" not in srcs[0][0].split("for (", 1)[-1]

# ---------------------------------------------------------------- kernel_boundaries: the build track's seam
def _lazynbs_decision(outs, bases=False):
  """The nodes lazynb's own rules realize for outs (the graph a decision function is given); with `bases`, also the
  outputs' bases in that graph."""
  from lazynb.engine.schedule import Scheduler, kernel_boundaries
  with kernel_boundaries(None):
    s = Scheduler(outs)
    s.run()
  roots = {r for r in s.roots if r in set(s.nodes)}
  return (roots, {o.base for o in s.outs}) if bases else roots

def test_any_decision_that_holds_lazynbs_gives_the_same_values():
  """Realizing more nodes than lazynb does (a third of the graph, at random) is more kernels, never other values; the
  nodes realized are exactly the decision's."""
  import random
  from lazynb import pipeline
  from lazynb.uop.ops import UOp
  from lazynb.engine.schedule import kernel_boundaries
  rng, skip = random.Random(0), (Ops.BUFFER, Ops.DEVICE, Ops.UNIQUE, Ops.SINK)
  from lazynb.corpus import Program
  a = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
  def assign(flip):
    t = Tensor(a.copy()).contiguous().realize()
    return t.assign(t.flip(0) * 2 + 1) if flip else t.assign(t * 2 + 1) + 1
  extra = [Program("assign", "x", lambda: assign(False)), Program("flip assign", "x", lambda: assign(True)),
           Program("pad of exp", "x", lambda: (Tensor(a.copy()) * 0.5).exp().pad(((1, 1), (0, 0))).sum(0))]
  for p in pipeline.default_programs()[::5] + extra * 4:
    want, chosen = p.run(), []
    def decide(outs):
      graph = [n for n in UOp.sink(*outs).toposort() if n.op not in skip]
      chosen.append(_lazynbs_decision(outs) | set(rng.sample(graph, len(graph) // 3)))
      return chosen[-1]
    made = []
    def schedule(outs):
      items, becomes = pipeline.reference("schedule")(outs)
      made.extend(si.out for si in items)
      return items, becomes
    with kernel_boundaries(decide), pipeline.use("schedule", schedule): got = p.run()
    for g, w in zip(got, want): np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=p.name)
    assert set(made) <= set().union(*chosen) and len(made) == len(set(made)), p.name

def test_a_decision_that_leaves_out_a_node_lazynb_needs_is_an_error_that_names_it():
  """Each node lazynb realizes that is not an output (a reduce no kernel can compute in place, a copy), left out of the
  decision: a BoundaryError naming the node, before any kernel runs; a BUFFER or a non-UOp in the decision likewise."""
  from lazynb import pipeline
  from lazynb.engine.schedule import kernel_boundaries, BoundaryError
  tried = 0
  for p in [p for p in pipeline.default_programs() if p.kind == "several kernels"][::3]:
    o = p.build()
    outs = [t.uop for t in (o if isinstance(o, (tuple, list)) else [o])]
    roots, bases = _lazynbs_decision(outs, bases=True)
    for drop in roots - bases:
      tried += 1
      with kernel_boundaries(lambda g: _lazynbs_decision(g) - {drop}):
        # (an elementwise op stored in place of the reduce below it, chase_reduces: without it, that reduce is named)
        name = f"({drop.op.name}|REDUCE_AXIS)" if drop.op in GroupOp.ALU | {Ops.CAST} else drop.op.name
        with pytest.raises(BoundaryError, match=rf"your schedule decision \(<lambda>\) (fuses|leaves) {name}"): pipeline.reference("schedule")(outs)
  assert tried >= 5
  a = Tensor(np.arange(6, dtype=np.float32)).realize()
  with kernel_boundaries(lambda g: {a.uop.base}), pytest.raises(BoundaryError, match="in memory already"): (a + 1).realize()
  with kernel_boundaries(lambda g: ["x"]), pytest.raises(BoundaryError, match="must return a set of UOps"): (a + 1).realize()
  with kernel_boundaries(lambda g: set()), pytest.raises(BoundaryError, match="leaves the output ADD"): (a + 1).realize()

TINYGRAD_SWITCHES = {"FUSE_ARANGE": (0, 1), "FUSE_CONV_BW": (0, 1), "TRACK_MATCH_STATS": (0, 1, 2)}

@pytest.mark.parametrize("name", sorted(TINYGRAD_SWITCHES))
def test_tinygrads_scheduler_switches_are_accepted_and_change_nothing(name):
  """tinygrad 0.10's code and tests set these in `Context`; lazynb accepts them (docs/compat.md) and schedules as many
  kernels for every value: an indexing gather (arange), a parallel reduce, argmax."""
  x, idx = Tensor(np.arange(20, dtype=np.float32).reshape(4, 5)).realize(), Tensor([3, 0, 2]).realize()
  progs = {"gather": lambda: x[idx], "two sums": lambda: x.sum(0) + x.sum(1).reshape(4, 1).expand(4, 5).sum(0), "argmax": lambda: x.argmax(0)}
  want = {"gather": x.numpy()[[3, 0, 2]], "two sums": x.numpy().sum(0) + x.numpy().sum(1).sum(0), "argmax": x.numpy().argmax(0)}
  base = {k: n_kernels(f()) for k, f in progs.items()}
  for v in TINYGRAD_SWITCHES[name]:
    with Context(**{name: v}):
      for k, f in progs.items():
        assert n_kernels(f()) == base[k], (name, v, k)
        np.testing.assert_allclose(f().numpy(), want[k])

def test_dont_group_reduces_puts_reduces_over_the_same_loops_in_one_kernel():
  """DONT_GROUP_REDUCES=1, as tinygrad's: reduces of one input shape over the same axes, each read in place, share one
  kernel's loops (two accumulators); reduces over different lengths do not; without the switch each has a kernel."""
  rng = np.random.default_rng(3)
  xn, yn, wn = (rng.standard_normal(s).astype(np.float32) for s in ((4, 5, 3), (4, 5, 3), (4, 7, 3)))
  x, y, w = Tensor(xn).realize(), Tensor(yn).realize(), Tensor(wn).realize()
  progs = [(lambda: x.sum(1) + y.max(1), xn.sum(1) + yn.max(1), 2, 1),
           (lambda: (x * 2).sum(1).exp() * y.min(1) - x.sum(1), np.exp((xn * 2).sum(1)) * yn.min(1) - xn.sum(1), 3, 1),
           (lambda: x.sum(1) + w.sum(1), xn.sum(1) + wn.sum(1), 2, 2),  # 5 and 7 long: no shared loop
           (lambda: x.sum(1) + x.sum(1).reshape(4, 1, 3).expand(4, 2, 3).sum(1), xn.sum(1) * 3, 2, 2)]  # read twice: stored
  for f, want, grouped, together in progs:
    assert n_kernels(f()) == grouped
    with Context(DONT_GROUP_REDUCES=1):
      assert n_kernels(f()) == together
      np.testing.assert_allclose(f().numpy(), want, rtol=1e-5, atol=1e-5)

def test_dont_realize_expand_computes_a_reduce_again_under_its_expand():
  """DONT_REALIZE_EXPAND=1, as tinygrad's: a reduce read (only) through an expand is computed in its reader's kernel,
  once per copy: the views above it move onto its input (tinygrad's test_swizzle_reduceop and test_permute_rewrite)."""
  rng = np.random.default_rng(4)
  xn, yn, an, bn, zn = (rng.standard_normal(s).astype(np.float32) for s in ((4, 4), (4, 4, 4), (4, 4, 16), (4, 1, 16), (4, 4, 1)))
  x, y, a, b, z = (Tensor(n).realize() for n in (xn, yn, an, bn, zn))
  progs = [(lambda: x.reshape(4, 4, 1).expand(4, 4, 4).sum(axis=1) + y, np.tile(xn.reshape(4, 4, 1), (1, 1, 4)).sum(1) + yn),
           (lambda: (a * b).sum(axis=(0, 2)).reshape(1, 4, 1).permute(0, 2, 1) + z, (an * bn).sum(axis=(0, 2)).reshape(1, 4, 1).transpose(0, 2, 1) + zn),
           (lambda: y - y.max(1, keepdim=True), yn - yn.max(1, keepdims=True)),
           (lambda: x.sum(0).flip(0)[1:].reshape(3, 1).expand(3, 4) * x[1:], xn.sum(0)[::-1][1:].reshape(3, 1) * xn[1:])]
  for f, want in progs:
    assert n_kernels(f()) == 2
    with Context(DONT_REALIZE_EXPAND=1):
      assert n_kernels(f()) == 1
      np.testing.assert_allclose(f().numpy(), want, rtol=1e-5, atol=1e-5)
  with Context(DONT_REALIZE_EXPAND=1):  # a reduce also read without the expand is stored once, not computed twice
    r = x.sum(1, keepdim=True)
    assert n_kernels((r + x) * r.reshape(4)) == 2

def test_context_refuses_an_unknown_setting():
  with pytest.raises(KeyError, match="unknown setting 'FUSE_ARANGEE'"): Context(FUSE_ARANGEE=1)

@pytest.mark.parametrize("axes,order", [((0,), (2, 1, 0)), ((1,), (1, 2, 0)), ((0, 2), (2, 0, 1)), ((2,), (0, 2, 1))])
def test_a_permuted_reduce_joins_its_consumer(axes, order):
  """x.sum(axes, keepdim).permute(order) + y is one kernel (the permute moves onto the reduce's input), same values as numpy;
  a reduce also read unpermuted keeps a kernel of its own (moving the permute would compute it twice)."""
  rng = np.random.default_rng(1)
  xn = rng.standard_normal((3, 4, 5)).astype(np.float32)
  ref = xn.sum(axis=axes, keepdims=True).transpose(order)
  yn = rng.standard_normal(ref.shape).astype(np.float32)
  x, y = Tensor(xn).realize(), Tensor(yn).realize()
  out = x.sum(axes, keepdim=True).permute(order) + y
  assert [si.kind for si in out.schedule()] == ["kernel"]
  np.testing.assert_allclose(out.numpy(), ref + yn, rtol=1e-5, atol=1e-5)
  r, y2 = x.sum(axes, keepdim=True), Tensor(yn).realize()  # (y2: `out` is realized, and r.permute(order) + y is it)
  both = r.permute(order) + y2 + r.reshape(-1).sum()  # r read twice: stored once, read by both
  assert len(both.schedule()) == 3
  np.testing.assert_allclose(both.numpy(), ref + yn + ref.sum(), rtol=1e-4, atol=1e-4)

@pytest.mark.parametrize("axes,order,keep", [((0,), (1, 0), False), ((1,), (1, 0), False), ((2,), (1, 0), False), ((0, 2), None, False),
                                             ((1,), (2, 0, 1), True), ((0,), (1, 0, 2), True)])
def test_a_permute_above_elementwise_ops_reaches_the_reduce(axes, order, keep):
  """x.sum(axes).permute(order) (the reduced axes dropped), and a permute above elementwise ops over a reduce
  ((r + c).permute(order) * 2, then permuted back), are one kernel: the permutes move onto the reduce's input, pass after
  pass (tinygrad's schedule tests test_image_conv_fusion_more_minimal, test_late_fusion_double_transpose). Values as
  numpy's; a reduce or an op read twice keeps its kernel."""
  rng = np.random.default_rng(2)
  xn = rng.standard_normal((3, 4, 5)).astype(np.float32)
  rn = xn.sum(axis=axes, keepdims=keep)
  order = order or tuple(range(rn.ndim))[::-1]
  cn = rng.standard_normal(rn.shape).astype(np.float32)
  x, c = Tensor(xn).realize(), Tensor(cn).realize()
  inv = tuple(int(i) for i in np.argsort(order))
  for got, want in [(x.sum(axes, keepdim=keep).permute(order), rn.transpose(order)),
                    ((x.sum(axes, keepdim=keep) + c).permute(order) * 2, (rn + cn).transpose(order) * 2),
                    (((x.sum(axes, keepdim=keep) + c).permute(order) * 2).permute(inv).contiguous(), (rn + cn) * 2)]:
    assert [si.kind for si in got.schedule()] == ["kernel"]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
  e = x.sum(axes, keepdim=keep) + c  # read twice: the permute stays on the stored value
  both = e.permute(order) * 2 + e.sum()
  assert len(both.schedule()) == (3 if len(order) > 1 else 2)  # (one axis left: the permute is no op)
  np.testing.assert_allclose(both.numpy(), (rn + cn).transpose(order) * 2 + (rn + cn).sum(), rtol=1e-4, atol=1e-4)

@pytest.mark.parametrize("case", ["sum 1 then 0", "sum 2 then all", "max then max", "keepdim sum then sum", "three sums",
                                  "float sum then sum", "sum then max", "inner read twice"])
def test_a_reduce_of_a_reduce_is_one_reduce(case):
  """x.sum(1).sum(0) is one kernel that reads x once (tinygrad's test_swizzle_simple): the same op in the same dtype, the
  inner reduce read by nothing else; a sum then a max, or an inner reduce read twice, keep two reduces. Ints exact as
  numpy's, floats to rounding (the sum adds in another order)."""
  rng = np.random.default_rng(3)
  an = rng.integers(-50, 50, (6, 5, 4)).astype(np.int32)
  fn = rng.standard_normal((6, 5, 4)).astype(np.float32)
  a, f = Tensor(an).realize(), Tensor(fn).realize()
  got, want, kernels = {
    "sum 1 then 0": ((a + a).sum(1).sum(0), (an + an).sum(1).sum(0), 1), "sum 2 then all": (a.sum(2).sum(), an.sum(2).sum(), 1),
    "max then max": (a.max(1).max(), an.max(1).max(), 1), "keepdim sum then sum": (a.sum(1, keepdim=True).sum(2), an.sum(1, keepdims=True).sum(2), 1),
    "three sums": (a.sum(0).sum(0).sum(0), an.sum(), 1), "float sum then sum": (f.sum(2).sum(0), fn.astype(np.float64).sum(2).sum(0), 1),
    "sum then max": (a.sum(1).max(0), an.sum(1).max(0), 2), "inner read twice": (a.sum(1).sum(0) + a.sum(1).max(0), an.sum(1).sum(0) + an.sum(1).max(0), 3),
  }[case]
  assert len(got.schedule()) == kernels
  np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5) if case.startswith("float") else np.testing.assert_array_equal(got.numpy(), want)

def test_the_permute_pass_is_in_the_trace():
  from lazynb.trace import Recorder
  x, y = Tensor.ones(4, 3).contiguous().realize(), Tensor.ones(3, 1).contiguous().realize()
  with Recorder(rewrites=True) as rec: (x.sum(0, keepdim=True).permute(1, 0) + y).realize()
  assert any(e.data["name"] == "swizzle reduces" and e.data["steps"] for e in rec.of("rewrite"))

# ---------------------------------------------------------------- the swizzle pass, fuzzed against numpy
from hypothesis import given, settings, strategies as st  # noqa: E402

@st.composite
def _reduce_chains(draw):
  """A random chain over a 2-4 dim tensor of small integers (as float32: every sum is exact in any order): sums and
  maxes (keepdim or not), permutes, elementwise ops with a constant or another tensor, in any order; each op as
  lazynb code and as numpy code."""
  shape = tuple(draw(st.lists(st.integers(1, 4), min_size=2, max_size=4)))
  steps, nd = [], len(shape)
  for i in range(draw(st.integers(2, 6))):  # (a reduce first, then what the pass moves or merges: permutes, more reduces)
    kind = draw(st.sampled_from((["sum", "max"] if i == 0 else ["sum", "max", "permute", "permute", "add", "mul", "addt"]) if nd else ["add", "mul"]))
    if kind in ("sum", "max"):
      axes = tuple(sorted(draw(st.sets(st.integers(0, nd - 1), min_size=1, max_size=nd))))
      keep = draw(st.booleans())
      steps.append((kind, axes, keep))
      nd = nd if keep else nd - len(axes)
    elif kind == "permute": steps.append((kind, tuple(draw(st.permutations(range(nd)))), None))
    else: steps.append((kind, draw(st.integers(-3, 3)), None))
  return shape, steps

def _apply(x, steps, np_side: bool):
  for kind, arg, keep in steps:
    if kind == "sum": x = x.sum(arg, keepdims=keep) if np_side else x.sum(arg, keepdim=keep)
    elif kind == "max": x = x.max(arg, keepdims=keep) if np_side else x.max(arg, keepdim=keep)
    elif kind == "permute": x = x.transpose(arg) if np_side else x.permute(arg)
    elif kind == "add": x = x + arg
    elif kind == "mul": x = x * arg
    else: x = x + (np.flip(x, -1) if x.ndim else x) if np_side else x + (x.flip(-1) if x.ndim else x)  # read twice
  return x

@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", 60)), deadline=None)
@given(_reduce_chains(), st.integers(0, 2**31 - 1))
def test_swizzled_schedules_compute_numpys_values(chain, s):
  """Whatever the swizzle pass does to a chain of reduces, permutes and elementwise ops (a permute moved onto a reduce's
  input, through ops and reshapes; a reduce of a reduce merged), the values are numpy's exactly, and the schedule has
  at most one kernel per reduce and per value read twice, plus the result's."""
  shape, steps = chain
  xn = np.random.default_rng(s).integers(-4, 5, shape).astype(np.float32)
  got = _apply(Tensor(xn).realize(), steps, False)
  want = _apply(xn, steps, True)
  n = len(got.schedule())
  assert n <= sum(k in ("sum", "max", "addt") for k, _, _ in steps) + 1, (steps, n)
  np.testing.assert_array_equal(got.numpy(), want, err_msg=str(steps))

# ---------------------------------------------------------------- long float sums add in two stages
@pytest.mark.parametrize("shape,axes", [((2**17,), None), ((65537,), None), ((300, 3, 301), (0, 2)), ((5, 70001), 1), ((70001, 3), 0)])
def test_a_long_float_sum_adds_in_two_stages(shape, axes):
  """A float sum over 2**16 elements or more is partial sums, then their sum (split_sums; tinygrad's SPLIT_REDUCEOP): a
  value that dwarfs the rest no longer swallows every later addition (2**24 + 1 is 2**24 in float32: one running sum of
  [2**24, 1, 1, ...] stayed 2**24). Small integers elsewhere: exact as numpy's, padded axes (65537 is prime) included."""
  rng = np.random.default_rng(4)
  xn = rng.integers(-3, 4, shape).astype(np.float32)
  got = Tensor(xn).realize().sum(axes)
  assert len(got.schedule()) == 2
  np.testing.assert_array_equal(got.numpy(), xn.astype(np.float64).sum(axes))
  big = np.ones(2**17, np.float32)
  big[0] = 2**24
  want = 2**24 + 2**17 - 1
  assert abs(Tensor(big).sum().item() - want) <= 512  # (the slice that holds 2**24 still loses its ones: at most 512 of them)
  with Context(SPLIT_REDUCEOP=0):
    assert Tensor(big).sum().item() < want  # one running sum (per vector lane): the ones after 2**24 in its lane are lost
    assert len(Tensor(xn).realize().sum(axes).schedule()) == 1

@pytest.mark.parametrize("op", ["sum", "mean", "var", "std", "logsumexp", "softmax", "dot", "cumsum", "mean backward"])
def test_long_reductions_are_as_accurate_as_numpy(op):
  """The siblings of a long sum: every reduction built on one (means, variances, logsumexp, softmax's denominator, a
  long dot product, a mean's gradient, cumsum's last prefix, computed in blocks of 256) over 2**18 numbers near 1000,
  within 1e-5 of float64 (one running float32 sum is off by about 1e-3 here, and so is numpy's float32 cumsum)."""
  rng = np.random.default_rng(5)
  xn = (1000 + rng.random(2**18)).astype(np.float32)
  x64 = xn.astype(np.float64)
  if op == "mean backward":
    t = Tensor(xn, requires_grad=True)
    (t * t).mean().backward()
    np.testing.assert_allclose(t.grad.numpy(), 2 * x64 / x64.size, rtol=1e-5)
    return
  got = {"sum": lambda t: t.sum(), "mean": lambda t: t.mean(), "var": lambda t: t.var(), "std": lambda t: t.std(),
         "logsumexp": lambda t: (t - 1000).logsumexp(0), "softmax": lambda t: (t - 1000).softmax(0)[:4],
         "dot": lambda t: t.dot(t), "cumsum": lambda t: t.cumsum(0)[-1]}[op](Tensor(xn)).numpy()
  e = np.exp(x64 - 1000)
  want = {"sum": x64.sum(), "mean": x64.mean(), "var": x64.var(ddof=1), "std": x64.std(ddof=1), "logsumexp": np.log(e.sum()),
          "softmax": (e / e.sum())[:4], "dot": x64 @ x64, "cumsum": x64.sum()}[op]
  np.testing.assert_allclose(got, want, rtol=1e-5)

def test_kernel_ast_views_as_tinygrad_names_them():
  """st_arg: a LOAD's (or STORE's) ShapeTracker; full_shape: the largest size of each axis over the AST's views;
  UOp.contiguous(): a node stored in a buffer of its own (tinygrad 0.10's spellings)."""
  a = Tensor.rand(10, 10).realize()
  b = a.pad(((0, 5), None))[5:]
  (si,) = b.contiguous().schedule()
  store = si.ast.src[0]
  assert store.src[2].op is Ops.LOAD and store.src[2].st_arg == b.lazydata.st and store.st_arg.shape == (10, 10)
  assert si.ast.full_shape == (10, 10)
  (si,) = (Tensor.empty(4, 1) + Tensor.empty(1, 6)).contiguous().schedule()
  assert si.ast.full_shape == (4, 6)
  a = Tensor.empty(32, 32).sum(axis=1) + Tensor.empty(1, 32)
  assert a.schedule()[0].ast.shape == (32, 1) and a.lazydata.shape == (1, 32)  # a kernel's shape: its stores' (reduced axes 1)
  assert UOp.sink(Tensor.empty(2).lazydata, Tensor.empty(3).lazydata).shape is None  # a SINK of tensors has none
  c = Tensor.empty(2, 2).lazydata.const_like(10).contiguous()
  assert c.op is Ops.CONTIGUOUS and c is not Tensor.empty(2, 2).lazydata.const_like(10).contiguous()
  t = Tensor(c)
  assert len(t.schedule()) == 1 and t.tolist() == [[10.0, 10.0], [10.0, 10.0]]

def test_a_max_of_upcast_halves_is_stored_in_half():
  """The max of half values cast to float is the float of their max: a float softmax of half input stores the max in
  half (tinygrad's test_softmax_upcast), then reads it cast. The same values as numpy's, NaN and infinities included;
  a sum of upcast halves is not a half sum and stays float."""
  xn = np.random.default_rng(5).standard_normal((3, 7, 16)).astype(np.float16)
  xn[0, 0, 3], xn[1, 2, :] = np.nan, -np.inf
  xn[2, 1, 5] = np.inf
  x = Tensor(xn).realize()
  out = x.softmax(dtype=dtypes.float)
  sched = out.schedule()
  assert len(sched) == 3 and [si.bufs[0].dtype for si in sched] == [dtypes.half, dtypes.float, dtypes.float]
  xf = xn.astype(np.float32)
  with np.errstate(invalid="ignore"):
    e = np.exp(xf - xf.max(-1, keepdims=True))
    np.testing.assert_allclose(out.numpy(), e / e.sum(-1, keepdims=True), rtol=1e-6, atol=1e-7)
  for f, g in ((lambda t: t.cast(dtypes.float).max(-1), lambda a: a.astype(np.float32).max(-1)),
               (lambda t: t.cast(dtypes.float64).max((0, 2)) * 3, lambda a: a.astype(np.float64).max((0, 2)) * 3)):
    np.testing.assert_array_equal(f(x).numpy(), g(xn))
  big = Tensor(np.full(4096, 60000, np.float16)).realize()
  assert big.cast(dtypes.float).sum().item() == 60000 * 4096  # (a half sum would be inf)
  assert Tensor(xf).realize().max(-1).schedule()[0].bufs[0].dtype is dtypes.float

def test_a_reduce_read_by_several_kernels_through_a_half_stores_the_half():
  """x.sum().half().float() read by two kernels: the reduce's kernel stores the half (2 bytes, what the readers use),
  not the float sum (tinygrad's test_prefer_half_buffer); as many kernels, the same values as numpy's."""
  xn = np.arange(1, 5, dtype=np.float32)
  x = Tensor(xn).realize()
  shared = x.sum().half().float()
  a, b = shared * 2, shared * 3
  sched = Tensor.schedule(a, b)
  assert len(sched) == 3 and sched[0].bufs[0].dtype is dtypes.half and [si.bufs[0].dtype for si in sched[1:]] == [dtypes.float] * 2
  want = np.float32(np.float16(xn.sum()))
  assert a.item() == want * 2 and b.item() == want * 3
  one = x.sum().half().float()
  assert n_kernels(one * 2 + one * 3) == 1  # read by one kernel: the reduce stays inside it
  with Context(DONT_GROUP_REDUCES=1):
    shared = x.sum().half().float()
    assert Tensor.schedule(shared * 4, shared * 5)[0].bufs[0].dtype is dtypes.float  # the switch turns grouping off
  big = Tensor(np.full(8, 10000, np.float32)).realize().sum().half().float()  # 80000: past half's largest, inf both ways
  assert (big * 1).item() == np.inf and (big * 2).item() == np.inf

def _reduces_computed(sched) -> int:
  return sum(1 for si in sched if si.kind == "kernel" for u in si.ast.toposort() if u.op is Ops.REDUCE_AXIS)

def test_a_value_read_also_through_its_permuted_contiguous_copy_is_stored_once():
  """x.T.contiguous() and x + ... both read x: x is computed straight into the copy's layout and the other op reads the copy
  through the inverse permute (tinygrad's test_image_conv_fusion_minimal: 4 kernels), each reduce once, numpy's values."""
  xn, b1n, b2n = rnd(16, 32, seed=3), rnd(16, seed=4), rnd(16, seed=5)
  x0, b1, b2 = Tensor(xn).realize(), Tensor(b1n).realize(), Tensor(b2n).realize()
  def p(x): return x.permute(1, 0).contiguous().reshape(32, 16, 1).expand(32, 16, 16).sum(axis=2).permute(1, 0)
  def pn(x): return np.broadcast_to(x.T.reshape(32, 16, 1), (32, 16, 16)).sum(2).T
  base = p(x0) + b1.reshape(16, 1)
  out = p(p(base) + b2.reshape(16, 1) + base)
  sched = out.schedule()
  assert len(sched) == 4 and _reduces_computed(sched) == 3
  basen = pn(xn) + b1n.reshape(16, 1)
  np.testing.assert_allclose(out.numpy(), pn(pn(basen) + b2n.reshape(16, 1) + basen), rtol=1e-5, atol=1e-5)

@pytest.mark.parametrize("seed", range(12))
def test_reading_a_value_through_its_contiguous_copy_matches_numpy(seed):
  """Random values read both raw and through a permuted or reshaped contiguous copy, by elementwise ops, movement ops or
  outputs: numpy's values, and no reduce computed twice (the copy is used only where every other reader is elementwise)."""
  rng = np.random.default_rng(seed)
  an = rnd(4, 6, 8, seed=seed)
  a = Tensor(an).realize()
  perm = tuple(int(i) for i in rng.permutation(3))
  x, xn = (a.sum(2, keepdim=True) * a, an.sum(2, keepdims=True) * an) if seed % 2 else (a.exp2() - 1, np.exp2(an) - 1)
  c, cn = x.permute(perm).contiguous(), xn.transpose(perm)
  if seed % 3 == 0: c, cn = c.reshape(-1, 4).contiguous(), cn.reshape(-1, 4)
  outs = [(c * 2, cn * 2), (x + 1, xn + 1), (x.max(1) * 3, xn.max(1) * 3)][: 2 + seed % 2]
  if seed % 4 == 1: outs.append((x.reshape(8, 24), xn.reshape(8, 24)))  # x itself read by a movement op and an output
  sched = Tensor.schedule(*[t for t, _ in outs])
  assert _reduces_computed(sched) == seed % 2 + (len(outs) > 2)
  for t, want in outs: np.testing.assert_allclose(t.numpy(), want, rtol=1e-5, atol=1e-5, err_msg=f"seed {seed}")
