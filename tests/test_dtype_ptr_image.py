"""Pointer, vector and image dtypes as tinygrad 0.10 has them: ptr(size, local), a vector of pointers (vcount), the
image types imagef/imageh, and how each prints (a string that evaluates back to the same dtype).
No kernel computes in an image dtype: every way to give one to a tensor raises UnsupportedDTypeError."""
import numpy as np
import pytest
from lazynb import Tensor, dtypes
from lazynb.dtype import DType, PtrDType, ImageDType, UnsupportedDTypeError, to_dtype

# (expression, its repr, vcount, count)
CASES = [("dtypes.float.vec(4)", "dtypes.float.vec(4)", 4, 4),
         ("dtypes.uint8.vec(3)", "dtypes.uchar.vec(3)", 3, 3),
         ("dtypes.float.ptr()", "dtypes.float.ptr(-1)", 1, 1),
         ("dtypes.int32.ptr(16)", "dtypes.int.ptr(16)", 1, 1),
         ("dtypes.half.ptr(8, local=True)", "dtypes.half.ptr(8, local=True)", 1, 1),
         ("dtypes.float.ptr(1024).vec(4)", "dtypes.float.ptr(1024).vec(4)", 4, 1),
         ("dtypes.float.vec(4).ptr()", "dtypes.float.vec(4).ptr(-1)", 1, 4),
         ("dtypes.bool.vec(2).ptr(5).vec(3)", "dtypes.bool.vec(2).ptr(5).vec(3)", 3, 2),
         ("dtypes.imagef((1, 2, 4))", "dtypes.imagef((1, 2, 4))", 1, 1),
         ("dtypes.imageh((10, 10))", "dtypes.imageh((10, 10))", 1, 1)]

@pytest.mark.parametrize("expr,text,vcount,count", CASES)
def test_prints_as_an_expression_that_makes_it_again(expr, text, vcount, count):
  dt = eval(expr)
  assert repr(dt) == str(dt) == text and eval(text) == dt and hash(eval(text)) == hash(dt)
  assert (dt.vcount, dt.count) == (vcount, count)

def test_a_vector_of_pointers_keeps_what_they_point_to():
  p = dtypes.float.vec(4).ptr(64)
  v = p.vec(2)
  assert isinstance(v, PtrDType) and (v.v, v.size, v.itemsize) == (2, 64, 16)
  assert v.scalar() == p and v.base == p.base == dtypes.float.vec(4) and v.base.scalar() is dtypes.float
  assert p.v == 1 and dtypes.float.ptr(local=True).local and not p.local
  # different sizes, places or widths are different types; a pointer is not the type it points to
  assert len({dtypes.float.ptr(), dtypes.float.ptr(16), dtypes.float.ptr(local=True), dtypes.float.ptr().vec(2), dtypes.float}) == 5
  with pytest.raises(TypeError, match="already a vector"): v.vec(2)
  with pytest.raises(TypeError, match="already a vector"): dtypes.float.vec(4).vec(2)

def test_image_types():
  f, h = dtypes.imagef((2, 3, 4)), dtypes.imageh((2, 3, 4))
  assert isinstance(f, ImageDType) and isinstance(h, PtrDType) and isinstance(h, DType)
  assert f.base is h.base is dtypes.float32 and f.base.vec(4) == dtypes.float.vec(4)  # both hold float32 pixels
  assert (f.itemsize, h.itemsize, f.size, f.shape) == (4, 2, 24, (2, 3, 4))  # imageh stores them as half
  assert f != h and h != dtypes.imageh((2, 4, 3)) and h == dtypes.imageh([2, 3, 4]) and f != dtypes.float32.ptr(24)
  assert f not in (dtypes.float, dtypes.half) and len({f, h, dtypes.imagef((2, 3, 4))}) == 2

def test_as_tinygrad():
  tg = pytest.importorskip("tinygrad.dtype")
  for expr, _, _, _ in CASES:
    ours, theirs = eval(expr), eval(expr, {"dtypes": tg.dtypes})
    assert (repr(ours), ours.vcount, ours.count, ours.itemsize) == (repr(theirs), theirs.vcount, theirs.count, theirs.itemsize), expr
    assert repr(ours.base) == repr(theirs.base) and repr(ours.scalar()) == repr(theirs.scalar()), expr
  assert dtypes.imagef((3, 5)).size == tg.dtypes.imagef((3, 5)).size == 15

IMAGE = dtypes.imagef((1, 4))
@pytest.mark.parametrize("make", [lambda: Tensor([1.0, 2.0], dtype=IMAGE), lambda: Tensor(np.ones(4, np.float32), dtype=IMAGE),
                                  lambda: Tensor.empty(4, dtype=IMAGE), lambda: Tensor.zeros(1, 4, dtype=IMAGE), lambda: Tensor.rand(4, dtype=IMAGE),
                                  lambda: Tensor.arange(4, dtype=IMAGE), lambda: Tensor([1.0, 2.0]).cast(IMAGE),
                                  lambda: Tensor([1.0, 2.0]).bitcast(IMAGE), lambda: Tensor([1.0]).sum(dtype=IMAGE), lambda: to_dtype(IMAGE)])
def test_a_tensor_cannot_have_an_image_dtype(make):
  with pytest.raises(UnsupportedDTypeError, match="lazynb computes no image dtypes"): make()
