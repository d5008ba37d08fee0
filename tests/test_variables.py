"""Variables: symbolic sizes. One kernel (compiled once) serves every value of a variable; results match numpy for
each value; errors for values out of range, unbound variables and symbolic data."""
import json
import numpy as np
import pytest
from lazynb import Tensor, Variable, TinyJit, GlobalCounters, UOp, Ops, dtypes, Device
from lazynb.trace import Recorder, capture
from lazynb.engine.realize import method_cache

A = np.arange(40, dtype=np.float32).reshape(10, 4) * 0.5 - 3
W = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)

def rows(t: Tensor, n: int, v=None) -> Tensor:
  return t.shrink(((0, (v or Variable("i", 1, 10)).bind(n)), (0, 4)))

def programs(rec: Recorder) -> int: return len(rec.of("program"))  # kernels compiled (codegen runs on a method_cache miss)

# ---------------------------------------------------------------- the API, as tinygrad 0.10 has it

def test_variable_and_bind():
  v = Variable("i", 1, 10)
  assert v is UOp.variable("i", 1, 10) and v.op is Ops.DEFINE_VAR and v.arg == ("i", 1, 10)
  b = v.bind(3)
  assert b.op is Ops.BIND and b.unbind() == (v, 3)
  assert v.bind(3) is b and v.bind(4) is not b
  t = rows(Tensor(A), 3)
  assert t.shape[0] is b and t.shape[1] == 4

@pytest.mark.parametrize("val", [0, 11, -1])
def test_bind_out_of_range(val):
  with pytest.raises(AssertionError, match="not in range"): Variable("i", 1, 10).bind(val)
  with pytest.raises(ValueError): Variable("i", 1, 10).bind(val)

def test_symbolic_data_and_unbound_errors():
  t = rows(Tensor(A), 3)
  with pytest.raises(AssertionError, match="symbolic"): t.numpy()
  with pytest.raises(ValueError, match="bind"): Tensor(A).reshape(Variable("i", 1, 10), 4)
  with pytest.raises(ValueError, match="can be bound"): UOp.const(dtypes.int32, 1).bind(2)
  # one variable with two values in one computation: each kernel runs with its own
  got = (rows(Tensor(A), 3).sum(1) * rows(Tensor(A), 4).sum(1).sum()).sum().numpy()
  np.testing.assert_allclose(got, (A[:3].sum(1) * A[:4].sum()).sum(), rtol=1e-6)
  with pytest.raises(ValueError, match="broadcast"): rows(Tensor(A), 3) + rows(Tensor(A), 4)

def test_shrink_must_fit_for_every_value():
  v = Variable("s", 0, 9)
  with pytest.raises(ValueError, match="variables"): Tensor(A).shrink(((v.bind(2), v.bind(2) + 2), None))
  w = Variable("s", 0, 8)  # start_pos style: a window that moves with the variable
  for s in (0, 3, 8):
    np.testing.assert_allclose(Tensor(A).shrink(((w.bind(s), w.bind(s) + 2), None)).sum(0).numpy(), A[s:s + 2].sum(0))

# ---------------------------------------------------------------- values against numpy, one kernel per shape

CL = pytest.param("CL", marks=pytest.mark.skipif(not Device.available("CL")[0], reason="no OpenCL device (GPU hardware or PoCL)"))

@pytest.mark.parametrize("device", ["CPU", "PYTHON", CL])
def test_reduce_and_elementwise_over_a_variable_axis(device):
  t = Tensor(A, device=device)
  cases = {"sum": (lambda s: s.sum(), lambda a: a.sum()), "sum0": (lambda s: s.sum(0), lambda a: a.sum(0)),
           "sum1": (lambda s: (s * 2 + 1).sum(1).sum(), lambda a: (a * 2 + 1).sum(1).sum()),
           "mean": (lambda s: s.mean(), lambda a: a.mean()), "mean0": (lambda s: s.mean(0), lambda a: a.mean(0)),
           "max0": (lambda s: s.max(0), lambda a: a.max(0)), "exp": (lambda s: s.exp().sum(0), lambda a: np.exp(a).sum(0))}
  method_cache.clear()
  with Recorder(rewrites=False) as rec:
    for i, n in enumerate([3, 1, 10, 7, 5, 2, 9, 4]):
      for name, (f, ref) in cases.items():
        np.testing.assert_allclose(f(rows(t, n)).numpy(), ref(A[:n]), rtol=1e-5, atol=1e-5, err_msg=f"{name} i={n}")
      if i == 0: first = programs(rec)
      if i == 3: four = programs(rec)
  # one program per kernel, whatever the value (a few more appear when a cached sum lets a mean run only its division)
  assert len(cases) <= first <= four <= len(cases) + 3 and programs(rec) == four

def test_kernel_takes_the_variable_as_an_int_argument():
  with capture(rewrites=False) as tr:
    out = (rows(Tensor(A), 6) * 2).sum(0).numpy()
  np.testing.assert_allclose(out, (A[:6] * 2).sum(0))
  k = next(k for k in tr.kernels if k["vars"])
  assert k["vars"] == ["i"] and "const int i" in k["source"] and "< i;" in k["source"]
  assert k["full_shape"][0] == "i" and k["var_vals"] == {"i": 6}
  assert any(s["var_vals"] == {"i": 6} for s in tr.schedule)
  assert [e.data["var_vals"] for e in tr.events if e.kind == "exec" and e.data.get("var_vals")] == [{"i": 6}]
  json.dumps(tr.to_json())  # the views get plain data

def test_expression_cache_keeps_values_apart():
  t = Tensor(A)
  got = [rows(t, n).sum(0).numpy() for n in (3, 4, 3, 4)]
  for g, n in zip(got, (3, 4, 3, 4)): np.testing.assert_allclose(g, A[:n].sum(0))
  s3 = rows(t, 3) * 2
  s3.realize()  # a symbolic-shaped result in memory sized for the largest value
  np.testing.assert_allclose(s3.sum(0).numpy(), (A[:3] * 2).sum(0))
  np.testing.assert_allclose((rows(t, 5) * 2).sum(0).numpy(), (A[:5] * 2).sum(0))

def test_reshape_pad_expand_and_creation():
  v = Variable("n", 1, 8)
  for n in (2, 5):
    np.testing.assert_allclose(Tensor(A[:n]).reshape(v.bind(n), 4).sum(0).numpy(), A[:n].sum(0))
    np.testing.assert_allclose(Tensor(A[:n].reshape(-1)).reshape(v.bind(n) * 4).reshape(v.bind(n), 4).max(0).numpy(), A[:n].max(0))
    s = rows(Tensor(A), n, v)
    np.testing.assert_allclose(s.pad(((2, 1), (1, 0))).sum(0).numpy(), np.pad(A[:n], ((2, 1), (1, 0))).sum(0))
    np.testing.assert_allclose(s.reshape(v.bind(n) * 4).sum().numpy(), A[:n].sum(), rtol=1e-6)
    assert Tensor.ones(1, 4).expand(v.bind(n), 4).sum().item() == 4 * n
    assert Tensor.ones(v.bind(n), 3).sum().item() == 3 * n
    assert Tensor.full((v.bind(n),), 2).sum().item() == 2 * n
    np.testing.assert_allclose(s.std(0).numpy(), A[:n].std(0, ddof=1) if n > 1 else np.full(4, np.nan), rtol=1e-5)

def test_matmul_with_a_variable_dim():
  t, w = Tensor(A), Tensor(W)
  with Recorder(rewrites=False) as rec:
    for i, n in enumerate([4, 9, 2]):
      s = rows(t, n)
      np.testing.assert_allclose((s @ w).relu().sum(0).numpy(), np.maximum(A[:n] @ W, 0).sum(0), rtol=1e-5, atol=1e-5)
      np.testing.assert_allclose((s.T @ s).numpy(), A[:n].T @ A[:n], rtol=1e-5)
      if i == 0: first = programs(rec)
  assert programs(rec) == first

def test_schedule_with_vars():
  v = Variable("i", 1, 10)
  items, var_vals = (rows(Tensor(A).realize(), 4, v) * 3).sum(0).schedule_with_vars()
  assert var_vals == {v: 4} and [si.var_vals for si in items] == [{"i": 4}]

# ---------------------------------------------------------------- TinyJit: one capture, every length

def test_jit_bound_variable_argument():
  v, base = Variable("i", 1, 10), Tensor(A).realize()
  jf = TinyJit(lambda x, n: (x.shrink(((0, n), (0, 4))) * 2).sum(0).realize())
  method_cache.clear()
  with Recorder(rewrites=False) as rec:
    for call, n in enumerate([3, 4, 5, 10, 1, 7]):
      GlobalCounters.reset()
      np.testing.assert_allclose(jf(base, v.bind(n)).numpy(), (A[:n] * 2).sum(0), err_msg=f"call {call + 1}, i={n}")
      if call == 0: first = programs(rec)
      if call >= 2: assert GlobalCounters.kernel_count == 1  # a replay: the one captured kernel
  assert first == 1 and programs(rec) == 1 and [e.data["phase"] for e in rec.of("jit")] == ["capture"] + ["replay"] * 4

def test_jit_input_with_a_variable_shape():
  v, base, w = Variable("i", 1, 10), Tensor(A).realize(), Tensor(W).realize()
  jf = TinyJit(lambda x: ((x @ w).relu() + 1).mean(0).realize())
  method_cache.clear()
  with Recorder(rewrites=False) as rec:
    for call, n in enumerate([2, 6, 9, 3, 10]):
      GlobalCounters.reset()
      np.testing.assert_allclose(jf(rows(base, n, v)).numpy(), (np.maximum(A[:n] @ W, 0) + 1).mean(0), rtol=1e-5, atol=1e-6)
      if call == 0: first = programs(rec)
      if call >= 2: assert GlobalCounters.kernel_count == first
  assert first >= 1 and programs(rec) == first and [e.data["phase"] for e in rec.of("jit")] == ["capture"] + ["replay"] * 3

def test_jit_prune_keeps_variable_kernels():
  v, base = Variable("i", 1, 10), Tensor(A).realize()
  jf = TinyJit(lambda n: base.shrink(((0, n), (0, 4))).sum(0).realize(), prune=True)
  for n in [2, 3, 8, 5]: np.testing.assert_allclose(jf(v.bind(n)).numpy(), A[:n].sum(0))

def test_html_view_shows_variables():
  """The trace holds each kernel's variables and their values; the view without JavaScript names them too."""
  from lazynb.notebook import viz
  with capture(rewrites=False) as tr: rows(Tensor(A), 7).max(0).numpy()
  doc = tr.to_json()
  (k,) = [k for k in doc["kernels"] if k["vars"]]
  assert k["vars"] == ["i"] and k["var_vals"] == {"i": 7}
  assert ", i=7)</summary>" in viz.text_fallback(doc)

def test_jitted_attention_over_a_variable_length():
  """(L, L) scores, softmax and two matmuls with L symbolic: one capture serves every length."""
  L, rng = Variable("L", 1, 16), np.random.default_rng(1)
  X = rng.standard_normal((16, 8)).astype(np.float32)
  ws = [rng.standard_normal((8, 8)).astype(np.float32) for _ in range(3)]
  x_all, (wq, wk, wv) = Tensor(X).realize(), [Tensor(w).realize() for w in ws]
  def ref(n):
    q, k, v = (X[:n] @ w for w in ws)
    s = q @ k.T / 8 ** 0.5
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True) @ v).sum(0)
  attn = TinyJit(lambda x: (((x @ wq) @ (x @ wk).T / 8 ** 0.5).softmax(-1) @ (x @ wv)).sum(0).realize())
  method_cache.clear()
  with Recorder(rewrites=False) as rec:
    for call, n in enumerate([5, 9, 16, 1, 7]):
      np.testing.assert_allclose(attn(x_all.shrink(((0, L.bind(n)), None))).numpy(), ref(n), rtol=1e-4, atol=1e-4, err_msg=f"L={n}")
      if call == 0: first = programs(rec)
  assert first >= 3 and programs(rec) == first

@pytest.mark.parametrize("name", ["ridx0", "data1", "int", "acc0"])
def test_variable_names_that_would_shadow_kernel_names(name):
  with pytest.raises(ValueError, match="clashes"): rows(Tensor(A), 3, Variable(name, 1, 10)).sum(0).numpy()

def test_variable_down_to_zero():
  v = Variable("n", 0, 10)
  for n in (0, 1, 4):
    s = Tensor(A).shrink(((0, v.bind(n)), None))
    np.testing.assert_allclose(s.sum(0).numpy(), A[:n].sum(0))
    assert (s > 0).sum().item() == (A[:n] > 0).sum()

# ---------------------------------------------------------------- cat, stack, arange, size arithmetic, gradients

def test_size_arithmetic_has_one_form():
  from lazynb.uop.ops import sym_canon
  i, j = Variable("i", 1, 10).bind(3), Variable("j", 1, 5).bind(2)
  assert sym_canon((i + 2) - i) == 2 and isinstance(sym_canon((i + 2) - i), int)
  assert sym_canon(2 + i) is sym_canon(i + 2) and sym_canon(i * j + 1) is sym_canon(1 + j * i)
  assert sym_canon(i - i) == 0 and sym_canon((i + 1) * 2 - i) is sym_canon(i + 2)

def test_cat_and_stack_with_a_variable_length():
  with Recorder() as rec:
    for n in (3, 5, 7):
      a = rows(Tensor(A), n)
      c = a.cat(Tensor.ones(2, 4), a * 2, dim=0)
      ref = np.concatenate([A[:n], np.ones((2, 4)), A[:n] * 2])
      np.testing.assert_allclose(c.sum(0).numpy(), ref.sum(0), rtol=1e-6)
      np.testing.assert_allclose((c * c).sum(1).max().numpy(), (ref * ref).sum(1).max(), rtol=1e-6)
      np.testing.assert_allclose(Tensor.stack(a, a + 1, dim=1).sum(0).numpy(), np.stack([A[:n], A[:n] + 1], 1).sum(0), rtol=1e-6)
  assert programs(rec) == 4  # one program per expression, compiled for the first value only

def test_arange_and_tensor_plus_a_variable():
  v = Variable("i", 1, 10)
  for n in (1, 4, 9):
    b = v.bind(n)
    assert Tensor.arange(b).sum().item() == sum(range(n))
    assert (Tensor.arange(b) * Tensor.arange(b)).sum().item() == sum(k * k for k in range(n))
    np.testing.assert_array_equal(Tensor.arange(b, b + 4).numpy(), np.arange(n, n + 4))  # a fixed length: 4
    np.testing.assert_allclose((Tensor(A[0]) + b).numpy(), A[0] + n)
    np.testing.assert_allclose((Tensor(A[0]) * b - b).numpy(), A[0] * n - n)
  with pytest.raises(ValueError, match="step 1"): Tensor.arange(v.bind(3), step=2)

def test_random_numbers_need_a_fixed_shape():
  for f in (Tensor.rand, Tensor.randn, Tensor.randint):
    with pytest.raises(ValueError, match="fixed shape"): f(Variable("i", 1, 10).bind(3), 2)

def test_gradient_through_a_variable_shape():
  for n in (2, 6):
    x = Tensor(A, requires_grad=True)
    y = rows(x, n)
    ((y * y).sum() + y.cat(y, dim=0).sum()).backward()
    ref = np.zeros_like(A)
    ref[:n] = 2 * A[:n] + 2
    np.testing.assert_allclose(x.grad.numpy(), ref, rtol=1e-6)

def test_shrink_past_a_variable_size_is_refused():
  t = rows(Tensor(A), 3)
  with pytest.raises(ValueError, match="for some value of its variables"): t.shrink(((0, 2), None))

def _each_value(fn, ref, v, values):
  """fn(v bound to n) against numpy's ref(n) for each value: plainly, then in one TinyJit (captured on the first two
  values, replayed for the rest with the variable's new value only)."""
  for n in values: np.testing.assert_array_equal((fn(v.bind(n)) + 0).numpy(), ref(n), err_msg=f"{v.arg[0]}={n}")
  jf = TinyJit(lambda b: (fn(b) * 1).realize())
  for n in values: np.testing.assert_array_equal(jf(v.bind(n)).numpy(), ref(n), err_msg=f"TinyJit, {v.arg[0]}={n}")

def test_a_window_over_padding_is_not_folded_to_zero():
  """A window (s, s+3) over a padded tensor, s in [0, 2]: the mask's start 2-s has a variable; the window reads padding
  only for no value of s, so the schedule must not fold it to 0 (it did: a comparison of sizes with variables was taken
  for true)."""
  x = Tensor(A[:5, 0].copy()).realize()
  _each_value(lambda b: x.pad(((2, 2),)).shrink(((b, b + 3),)), lambda n: np.pad(A[:5, 0], 2)[n:n + 3], Variable("s", 0, 2), [0, 2, 1])

def test_a_moving_window_expanded():
  """A window (s, s+3) of a column, expanded to 4 columns: its size is 3 for every s, so only the columns broadcast."""
  col, s = Tensor(A[:, :1].copy()).realize(), Variable("s", 0, 7)
  _each_value(lambda b: col.shrink(((b, b + 3), None)).expand(3, 4), lambda n: np.broadcast_to(A[n:n + 3, :1], (3, 4)), s, [0, 3, 7, 5])
  with pytest.raises(RuntimeError, match="broadcasts"): col.shrink(((s.bind(2), s.bind(2) + 3), None)).expand(3, 4).assign(Tensor.ones(3, 4))

def test_an_offset_of_two_variables_has_one_form():
  """tinygrad's test_var_vals_complex: the offset z*y (z rows of y) is the node y*z; values as numpy's."""
  from lazynb.shape.shapetracker import ShapeTracker
  x, y, z = Variable("x", 1, 100).bind(3), Variable("y", 1, 100).bind(4), Variable("z", 0, 4)
  st = ShapeTracker.from_shape((x, 5, y)).shrink(((0, x), (z.bind(2), z.bind(2) + 1), (0, 3)))
  assert st.views[-1].offset is y * z.bind(2) and st.shape == (x, 1, 3)
  for m in (3, 4, 6):
    B = np.arange(3 * 5 * m, dtype=np.float32).reshape(3, 5, m)
    t = Tensor(B).realize().reshape(3, 5, Variable("y", 3, 100).bind(m))
    _each_value(lambda b: t.shrink((None, (b, b + 1), (0, 3))), lambda n: B[:, n:n + 1, :3], z, [2, 0, 4])

def test_a_window_moving_over_padding():
  """A shrink whose start is a variable, over a padded tensor: the mask's bounds, max(0, 2-s) and min(3, 7-s), depend on
  s in both directions (once NotImplementedError)."""
  x, s = Tensor(A[:5, 0].copy()).realize(), Variable("s", 0, 6)
  _each_value(lambda b: x.pad(((2, 2),)).shrink(((b, b + 3),)), lambda n: np.pad(A[:5, 0], 2)[n:n + 3], s, [0, 3, 6, 1, 5, 2, 4])
  # one row read through a padded size-1 dim: valid for r == 2 only, so a reshape keeps the mask (in a view of its own)
  row, r = Tensor(A[:1].copy()).realize(), Variable("r", 0, 4)
  _each_value(lambda b: row.pad(((2, 2), None)).shrink(((b, b + 1), None)).reshape(4), lambda n: np.pad(A[:1], ((2, 2), (0, 0)))[n], r,
              [2, 0, 4, 1, 3])

def test_reshape_into_a_variable_size_is_dim_by_dim_unless_contiguous():
  """tinygrad's rule: a view that is not contiguous takes variable sizes only in place of its own, dim by dim."""
  i = Variable("i", 1, 5).bind(4)
  for t, shape in [(Tensor.ones(4, 3), (3, i)), (Tensor.ones(3, 4, 1), (3, i)), (Tensor(A).permute(1, 0), (10, i))]:
    with pytest.raises(ValueError, match="dim by dim"): t.reshape(shape)
  assert Tensor.ones(3, 4).reshape(3, i).shape == (3, i) and Tensor(A).permute(1, 0).reshape(i, 10).shape == (i, 10)
  assert Tensor(A[:3].copy()).reshape(3, i).shape == (3, i) and Tensor(A).reshape(i, 10).shape == (i, 10)

def test_a_tensors_shapetracker_as_tinygrad_shows_it():
  """UOp.st (tinygrad 0.10's): the ShapeTracker of the movement ops down to the base; var_vals and unbind() as tinygrad's
  tests use them; 2*i is the same size as i*2 (a cat's length compares equal to the sum written by hand)."""
  i = Variable("i", 1, 5)
  t = Tensor.ones(3, 4).contiguous().permute(1, 0)
  assert not t.lazydata.st.contiguous and t.lazydata.st.real_strides() == (1, 4)
  c = Tensor.rand(3, 3).reshape(i.bind(3), 3).cat(Tensor.rand(3, 3), dim=0)
  assert c.shape[0] is i.bind(3) + 3 and (2 * i) is (i * 2) and (3 + i) is (i + 3)
  j = Variable("j", 0, 2)
  st = Tensor.rand(3, 4).shrink(((j.bind(2), j.bind(2) + 1), (0, 4))).lazydata.st
  assert st.var_vals == {j: 2}
  unbound, vals = st.unbind()
  assert vals == {j: 2} and unbound.views[-1].offset is j * 4 and not unbound.var_vals and unbound.vars() == [j]

@pytest.mark.parametrize("n", [2, 4])
def test_a_non_contiguous_view_reshaped_to_a_bound_size_keeps_one_view(n):
  """Reshaping (4, 3, 2) to (i, 3, 2) with i bound to 4 changes only the shape (one view, strides, offset and mask
  kept); values as numpy's, whole and shrunk to n rows."""
  i = Variable("i", 4, 6).bind(4)
  base = np.arange(12, dtype=np.float32).reshape(3, 4)
  t = Tensor(base).expand(2, 3, 4).pad(((1, 1), None, None)).shrink((None, None, (1, 3)))
  ref = np.pad(np.broadcast_to(base, (2, 3, 4)), ((1, 1), (0, 0), (0, 0)))[:, :, 1:3]
  r = t.reshape(i, 3, 2)
  assert len(r.lazydata.st.views) == 1 and r.lazydata.st.views[0].strides == t.lazydata.st.views[0].strides
  np.testing.assert_array_equal((r * 1).reshape(4, 3, 2).numpy(), ref)
  np.testing.assert_array_equal((r.shrink(((0, n), None, None)) + 0).sum(0).numpy(), ref[:n].sum(0))

def test_a_tensor_of_a_bound_variable_is_its_value():
  """Tensor(bound variable) (tinygrad's tests make one) is a 0-d tensor of the variable's value, an int computed in the
  kernel; tinygrad's run_schedule(items, var_vals) spelling runs it."""
  from lazynb.engine.realize import run_schedule
  a = Tensor(Variable("a", 0, 10).bind(7)) + 2
  items, var_vals = a.schedule_with_vars()
  assert a.shape == () and a.dtype is dtypes.int and len(items) == 1 and list(var_vals.values()) == [7]
  run_schedule(items, var_vals)
  assert a.tolist() == 9 and (Tensor(Variable("a", 0, 10).bind(3)) * Tensor([1, 2, 3])).tolist() == [3, 6, 9]

def test_a_bound_variable_as_a_tensor_needs_no_kernel_until_memory_is_asked_for():
  """Tensor(bound variable) is a constant whose value the kernels receive: realize() runs nothing (tinygrad 0.10: no
  kernel either); its value, and values built on it, come right."""
  v = Variable("n", 1, 10).bind(7)
  t = Tensor(v)
  assert len(t.schedule()) == 0 and len(t.realize().schedule()) == 0
  assert t.item() == 7 and (t * 2 + 1).item() == 15 and t.contiguous().item() == 7

@pytest.mark.parametrize("device", ["CPU", "PYTHON", "LLVM"])
def test_a_reduce_over_a_window_that_is_empty_for_one_value(device):
  """x.shrink((1, w)) with w bound to 1 is empty: its sum is 0 and its max -inf (a loop run 0 times; the PYTHON device
  crashed reading the accumulator's update it never ran), and the same kernel gives numpy's sums for the other values."""
  xn = np.arange(20, dtype=np.float32).reshape(5, 4)
  x = Tensor(xn, device=device).realize()
  for k in range(1, 6):
    w = Variable("w", 1, 5).bind(k)
    win = x.shrink(((1, w), (0, 4)))
    np.testing.assert_array_equal(win.sum(0).numpy(), xn[1:k].sum(0))
    np.testing.assert_array_equal(win.max(0).numpy(), xn[1:k].max(0) if k > 1 else np.full(4, -np.inf, np.float32))

@pytest.mark.parametrize("device", ["CPU", "PYTHON", "LLVM"])
def test_indexing_with_bound_variables_matches_numpy_for_every_value(device):
  """t[v], t[v:v+2], t[:w] and t[1:w, 2] with bound Variables (tinygrad's kv-cache slicing): for each value, numpy's
  values and shapes (an empty window too: a reduce over a loop run 0 times); one kernel serves every value under a
  TinyJit; a window that leaves the tensor for some value of the variable, or a step, is a clear error."""
  xn = np.arange(5 * 4, dtype=np.float32).reshape(5, 4)
  x = Tensor(xn, device=device).realize()
  @TinyJit
  def window(v, w): return (x[v:v + 2] * 2 + x[:w].sum(0)).realize()
  for k in range(4):
    v, w = Variable("v", 0, 3).bind(k), Variable("w", 1, 5).bind(k + 1)
    np.testing.assert_array_equal(x[v].numpy(), xn[k])
    assert x[v].shape == (4,) and isinstance(x[1:w, 2].shape[0], UOp) and x[:w].shape[0].op is Ops.BIND
    np.testing.assert_array_equal(x[v:v + 2].numpy(), xn[k:k + 2])
    np.testing.assert_array_equal(x[1:w, 2].sum().numpy(), xn[1:k + 1, 2].sum())
    np.testing.assert_array_equal(window(v, w).numpy(), xn[k:k + 2] * 2 + xn[:k + 1].sum(0))
  v = Variable("v", 0, 4).bind(3)
  with pytest.raises(ValueError, match="some value of its variables"): x[v:v + 2]   # v = 4 would read row 5
  with pytest.raises(ValueError, match="some value of its variables"): x[:, v]       # v = 4 is past column 3
  with pytest.raises(IndexError, match="step 1"): x[v:v + 1:2]
  with pytest.raises(ValueError, match="no value"): x[Variable("u", 0, 2)]

def test_a_kv_cache_written_and_read_through_variable_slices_under_tinyjit():
  """tinygrad's LLaMA cache step: cache[:, pos:pos+1].assign(x) then a read of cache[:, :pos+1], in a TinyJit, for each
  position: the cache and every read as numpy's, and x[p:p+1] = value writes at p."""
  cache, ref = Tensor.zeros(2, 6, 3).contiguous().realize(), np.zeros((2, 6, 3), np.float32)
  @TinyJit
  def step(x, pos):
    cache[:, pos:pos + 1].assign(x).realize()
    return cache[:, :pos + 1].sum(1).realize()
  for i in range(6):
    xv = np.full((2, 1, 3), i + 1, np.float32)
    got = step(Tensor(xv), Variable("p", 0, 5).bind(i)).numpy()
    ref[:, i:i + 1] = xv
    np.testing.assert_array_equal(got, ref[:, :i + 1].sum(1))
    np.testing.assert_array_equal(cache.numpy(), ref)
  c = Tensor.zeros(4).contiguous().realize()
  c[Variable("p", 0, 3).bind(2):Variable("p", 0, 3).bind(2) + 1] = Tensor([7.0])
  assert c.tolist() == [0.0, 0.0, 7.0, 0.0]

@pytest.mark.parametrize("device", ["CPU", "PYTHON"])
def test_a_bound_variable_among_index_tensors_drops_its_axis_as_an_int_does(device):
  """x[v, t], x[v, None, t], x[v, :, t], x[t, v] and writes x[v, t] = c: for each value k the same values and shapes as
  with the int k (found by review: before the Variable was counted as keeping its axis, so t picked from the wrong one)."""
  xn = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
  x, t = Tensor(xn, device=device), Tensor([0, 2], device=device)
  forms = [lambda i: x[i, t], lambda i: x[i, None, t], lambda i: x[i, :, t], lambda i: x[t, i], lambda i: x[:, t, i], lambda i: x[None, t, i, 1:3]]
  for k in range(3):
    v = Variable("v", 0, 2).bind(k)
    for f in forms:
      want = f(k).numpy()
      np.testing.assert_array_equal(f(v).numpy(), want)
    np.testing.assert_array_equal(x[v, t].numpy(), xn[k, [0, 2]])  # (numpy agrees where the int and the tensor are adjacent)
    for where in [(v, t), (t, v), (slice(None), t, v)]:
      y, yn = Tensor(np.arange(48, dtype=np.float32).reshape(3, 4, 4), device=device), np.arange(48, dtype=np.float32).reshape(3, 4, 4)
      y[where] = -1.0
      yn[tuple(k if isinstance(w, UOp) else [0, 2] if isinstance(w, Tensor) else w for w in where)] = -1.0
      np.testing.assert_array_equal(y.numpy(), yn)

@pytest.mark.parametrize("device", ["CPU", "PYTHON"])
def test_slicing_an_axis_whose_size_is_a_variable_matches_numpy(device):
  """Once an axis has a variable size (x[:w]), any later index on it works as on a fixed axis for slices of step 1 with
  ends >= 0 (x[:w][:, 0], x[:w][1:], x[:w][0]), checked against numpy for every value; a step or a negative end, which
  would depend on the size, is a clear IndexError, not a TypeError from inside the slicing."""
  xn = np.arange(5 * 4, dtype=np.float32).reshape(5, 4)
  x = Tensor(xn, device=device).realize()
  for n in range(1, 6):
    y = x[:Variable("w", 1, 5).bind(n)]
    np.testing.assert_array_equal(y[:, 0].sum().numpy(), xn[:n, 0].sum())
    np.testing.assert_array_equal(y[:, 1:].sum(0).numpy(), xn[:n, 1:].sum(0))
    np.testing.assert_array_equal(y[:, ::2].sum(0).numpy(), xn[:n, ::2].sum(0))
    np.testing.assert_array_equal(y[0:1].numpy(), xn[0:1])
    np.testing.assert_array_equal(y[0].numpy(), xn[0])
    np.testing.assert_array_equal(y[:, None, 1:3].sum(0).numpy(), xn[:n, None, 1:3].sum(0))
  y = x[:Variable("w", 1, 5).bind(3)]
  for bad in (lambda: y[::2], lambda: y[-1:], lambda: y[:-1]):
    with pytest.raises(IndexError, match="step 1 and ends >= 0"): bad()
  with pytest.raises(ValueError, match="out of bounds"): y[0:2]  # w = 1 has one row
