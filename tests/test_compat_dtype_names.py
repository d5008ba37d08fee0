"""Names tinygrad 0.10.3's test files import at module level (one missing name and the whole file cannot be collected):
the dtype tables and host-side truncations, Device.default, track_rewrites. Checked against tinygrad itself."""
import math, pytest
import lazynb
from lazynb import dtype as ldt, Device
from lazynb.ops import track_rewrites
tinygrad = pytest.importorskip("tinygrad")  # (the test extra pins tinygrad==0.10.3)
from tinygrad import dtype as tdt  # noqa: E402

def test_dtype_tables_as_tinygrads():
  """The same names for the same dtypes."""
  def kind(m, d): return (d.itemsize, m.dtypes.is_float(d), m.dtypes.is_unsigned(d), d == m.dtypes.bool)
  assert {k: kind(ldt, v) for k, v in ldt.DTYPES_DICT.items()} == {k: kind(tdt, v) for k, v in tdt.DTYPES_DICT.items()}
  assert all(ldt.DTYPES_DICT[k] is getattr(lazynb.dtypes, k) for k in ldt.DTYPES_DICT)
  assert {ldt.DTYPES_DICT[k] for k in ldt.INVERSE_DTYPES_DICT.values() if k != "void"} == set(ldt.DTYPES_DICT.values())

@pytest.mark.parametrize("name", sorted(tdt.DTYPES_DICT))
def test_least_upper_float(name):
  ours, theirs = ldt.least_upper_float(ldt.DTYPES_DICT[name]), tdt.least_upper_float(tdt.DTYPES_DICT[name])
  assert ours is getattr(lazynb.dtypes, next(k for k, v in tdt.DTYPES_DICT.items() if v == theirs))

VALUES = [0.0, -0.0, 1.0, 1.0001, 1.00999, -3.14159, 65504.0, 65519.0, 65520.0, 70000.0, -70000.0, 6e-8, 1e-9, 3.3e38,
          3.3895313892515355e38, 3.4e38, 1e39, -1e39, math.inf, -math.inf, 1 / 3, 2 ** -130]

@pytest.mark.parametrize("x", VALUES)
def test_host_truncations_as_tinygrads(x):
  for ours, theirs in ((ldt.truncate_fp16, tdt.truncate_fp16), (ldt.truncate_bf16, tdt.truncate_bf16)):
    a, b = ours(x), theirs(x)
    assert a == b and math.copysign(1, a) == math.copysign(1, b), (ours.__name__, x, a, b)

def test_device_default_and_track_rewrites():
  assert Device.default is Device[Device.DEFAULT]
  @track_rewrites(named=True)
  def f(x): return lazynb.Tensor([x]).add(1).tolist()
  assert f(2) == [3]

@pytest.mark.parametrize("name", sorted(tdt.DTYPES_DICT))
def test_kind_predicates_of_vector_types(name):
  """A vector type is of its element's kind (tinygrad's tests ask it of float4, uchar3...)."""
  ours, theirs = ldt.DTYPES_DICT[name], tdt.DTYPES_DICT[name]
  for n in (1, 2, 3, 4, 8):
    o, t = (ours.vec(n), theirs.vec(n)) if n > 1 else (ours, theirs)
    assert (ldt.dtypes.is_float(o), ldt.dtypes.is_int(o), ldt.dtypes.is_unsigned(o)) == (tdt.dtypes.is_float(t), tdt.dtypes.is_int(t), tdt.dtypes.is_unsigned(t))
    assert o.scalar() is ours and o.count == n and o.itemsize == t.itemsize

@pytest.mark.parametrize("bad", [None, [None], [1, None], [[2.0], [None]]])
def test_from_py_of_no_number_is_a_runtime_error_as_tinygrads(bad):
  with pytest.raises(RuntimeError): tdt.dtypes.from_py(bad)
  with pytest.raises(RuntimeError, match="cannot infer a dtype"): ldt.dtypes.from_py(bad)
