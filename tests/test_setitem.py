"""t[idx] = value writes in place like numpy's: every basic index form (ints, negative ints, slices with steps and negative
steps, None, ...), broadcast values of another dtype, views of other tensors, lazy tensors, and inside a jitted step."""
import numpy as np
import pytest
from lazynb import Tensor, TinyJit, Context, dtypes

IDX = [(1,), (-1,), (slice(1, 3),), (slice(None, None, 2),), (slice(None, None, -1),), (slice(3, 0, -2),), (Ellipsis, 1),
       (1, slice(None), 2), (None, 1), (slice(None), None, -1), (Ellipsis,), (slice(None),), (-2, slice(1, None, 2), slice(None, 1))]

@pytest.mark.parametrize("opts", [dict(), dict(NOOPT=1), dict(BEAM=1)], ids=["default", "noopt", "beam"])
@pytest.mark.parametrize("idx", IDX, ids=[repr(i) for i in IDX])
def test_setitem_matches_numpy(idx, opts):
  base = np.arange(4 * 5 * 3, dtype=np.float32).reshape(4, 5, 3)
  want = base.copy()
  shape = want[idx].shape
  val = (np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) + 100) * -1
  want[idx] = val
  t = Tensor(base).realize()
  with Context(**opts): t[idx] = Tensor(val)
  np.testing.assert_array_equal(t.numpy(), want)

def test_setitem_broadcasts_and_casts_the_value():
  a, t = np.zeros((3, 4), np.int32), Tensor(np.zeros((3, 4), np.int32))
  a[:, 1], a[2] = 2.7, np.array([1.9, -2.9, 3, 4])
  t[:, 1] = 2.7
  t[2] = Tensor([1.9, -2.9, 3, 4])
  np.testing.assert_array_equal(t.numpy(), a)
  assert t.dtype == dtypes.int32
  with pytest.raises(ValueError, match="cannot be broadcast|cannot assign"): t[0] = Tensor([1.0, 2.0])

def test_setitem_on_a_view_writes_into_the_viewed_tensor():
  a = Tensor.zeros(2, 3).contiguous().realize()
  v = a[0]
  v[1] = 5
  np.testing.assert_array_equal(a.numpy(), [[0, 5, 0], [0, 0, 0]])
  np.testing.assert_array_equal(v.numpy(), [0, 5, 0])

def test_setitem_on_lazy_tensors():
  z = Tensor.zeros(4)
  z[1] = 1
  np.testing.assert_array_equal(z.numpy(), [0, 1, 0, 0])
  w = Tensor([1.0, 2.0, 3.0]) * 2
  w[0] = -1
  np.testing.assert_array_equal(w.numpy(), [-1, 4, 6])
  x = Tensor([1.0, 2.0]).realize()
  y = (x * 3).realize()
  same = (x * 3).realize()  # y and same may share one cached buffer: writing y must not change same
  y[0] = 0
  np.testing.assert_array_equal(y.numpy(), [0, 6])
  np.testing.assert_array_equal(same.numpy(), [3, 6])

def test_value_read_before_setitem_keeps_old_contents():
  t = Tensor(np.arange(4, dtype=np.float32)).realize()
  s = t.sum()
  t[0] = 10
  assert s.item() == 6 and t.sum().item() == 16

def test_setitem_with_an_index_tensor_writes_like_numpy():  # more cases in test_tensor_methods.py
  t, want = Tensor.zeros(5).contiguous().realize(), np.zeros(5, np.float32)
  t[Tensor([1, 3, -1])] = 7
  want[[1, 3, -1]] = 7
  np.testing.assert_array_equal(t.numpy(), want)

def test_setitem_inside_a_jitted_step():
  buf = Tensor.zeros(4).contiguous().realize()
  @TinyJit
  def step(x):
    buf[1:3] = buf[1:3] + x
    return buf.realize()
  for _ in range(5): step(Tensor([1.0, 2.0]).realize())
  np.testing.assert_array_equal(buf.numpy(), [0, 5, 10, 0])

def test_setitem_with_a_tensor_that_requires_grad_is_refused_outside_no_grad():
  """No gradient goes through an in-place write: t[idx] = v where t (torch refuses a leaf's too) or v requires grad is a
  NotImplementedError (tinygrad's class, a RuntimeError as torch's), not a gradient that ignores the write (z's was 2
  where the write replaced z); under Tensor.no_grad the write happens (weight surgery)."""
  z, x = Tensor.ones(4, 3, requires_grad=True), Tensor([7.0, 8.0, 9.0], requires_grad=True)
  for target, value in ((z, Tensor.zeros(3)), (Tensor.ones(4, 3), x)):
    with pytest.raises(NotImplementedError, match="requires grad"): target[1] = value
    with pytest.raises(RuntimeError): target[:2] = value
  Tensor.no_grad = True
  try: z[1] = x
  finally: Tensor.no_grad = False
  np.testing.assert_array_equal(z.numpy(), [[1, 1, 1], [7, 8, 9], [1, 1, 1], [1, 1, 1]])

@pytest.mark.parametrize("dt,v", [("int32", 2**31), ("int32", -2**31 - 1), ("uint8", 256), ("uint8", -1), ("int16", 2**40)])
def test_setitem_of_a_python_int_the_dtype_cannot_hold_raises_and_writes_nothing(dt, v):
  """numpy 2 and torch raise; lazynb wrapped it (int32 a[0] = 2**31 gave -2**31), where `a + 2**31` already raised."""
  for idx in (0, slice(0, 2), Tensor([1])):
    a = Tensor(np.array([1, 2, 3], dt)).realize()
    with pytest.raises(OverflowError, match="does not fit"): a[idx] = v
    np.testing.assert_array_equal(a.numpy(), [1, 2, 3])
  with pytest.raises(OverflowError): np.array([1, 2, 3], dt)[0] = v  # the reference
