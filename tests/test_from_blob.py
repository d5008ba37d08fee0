"""Tensor.from_blob: a tensor over host memory lazynb does not own. Each use reads the memory as it is then (a value
computed from it is never reused from the cache), assign() writes into it, and lazynb never frees or pools it."""
import gc
import numpy as np
import pytest
from lazynb import Tensor, TinyJit, dtypes
from lazynb.helpers import mv_address

# every way a value can be computed, cached and read again: each must see the memory's new contents
USES = {
  "add": lambda t: t + 1,
  "sum": lambda t: t.sum(),
  "max of rows": lambda t: t.reshape(2, 3).max(1),
  "view, contiguous": lambda t: t.reshape(3, 2).T.contiguous(),
  "shrink": lambda t: t[1:4],
  "matmul": lambda t: t.reshape(2, 3) @ Tensor.ones(3, 2, dtype=t.dtype, device=t.device),
  "cast": lambda t: t.cast(dtypes.int32) * 3,
  "itself": lambda t: t,
}

@pytest.mark.parametrize("device", ["CPU", "PYTHON", "LLVM"])
@pytest.mark.parametrize("use", list(USES))
def test_each_use_reads_the_memory_as_it_is_then(use, device):
  host = np.zeros(6, np.float32)
  t = Tensor.from_blob(host.ctypes.data, (6,), dtype=dtypes.float32, device=device)
  f = USES[use]
  for step in range(3):
    host[:] = np.arange(6) * (step + 1) - 2
    want = f(Tensor(host.copy())).numpy()
    np.testing.assert_allclose(f(t).numpy(), want, err_msg=f"step {step}")

def test_tinygrads_example_with_mv_address():
  mv = memoryview(bytearray(16)).cast("I")
  t = Tensor.from_blob(mv_address(mv), (4,), dtype=dtypes.uint32, device="CPU")
  assert (t + 1).tolist() == [1, 1, 1, 1]
  mv[:] = memoryview(np.array([0, 1, 2, 3], np.uint32).tobytes()).cast("I")
  assert (t + 1).tolist() == [1, 2, 3, 4]

def test_a_jit_replay_reads_the_memory_of_that_call():
  host = np.zeros(4, np.float32)
  t = Tensor.from_blob(host.ctypes.data, (4,), dtype=dtypes.float32)
  step = TinyJit(lambda: (t * 2).realize())
  for k in range(5):
    host[:] = k
    assert step().tolist() == [2.0 * k] * 4

def test_assign_writes_into_the_memory_and_nothing_frees_it():
  host = np.arange(4, dtype=np.int32)
  t = Tensor.from_blob(host.ctypes.data, (2, 2), dtype=dtypes.int32)
  t.assign(t * 10).realize()
  assert host.tolist() == [0, 10, 20, 30]
  del t
  gc.collect()
  fresh = [Tensor.empty(4, dtype=dtypes.int32).realize() for _ in range(8)]  # would reuse the memory if it had been pooled
  for f in fresh: f.assign(Tensor.full((4,), -1, dtype=dtypes.int32)).realize()
  assert host.tolist() == [0, 10, 20, 30]

def test_bad_arguments_are_clear_errors():
  host = np.zeros(4, np.float32)
  with pytest.raises(ValueError, match="memory address"): Tensor.from_blob(0, (4,))
  with pytest.raises(ValueError, match="memory address"): Tensor.from_blob(float(host.ctypes.data), (4,))
  from lazynb import Variable
  with pytest.raises(ValueError, match="fixed shape"): Tensor.from_blob(host.ctypes.data, (Variable("n", 1, 4).bind(2),))

def test_a_device_with_memory_of_its_own_is_refused():  # PoCL: CI installs it with the backends extra
  host = np.zeros(4, np.float32)
  with pytest.raises(ValueError, match="host's"): Tensor.from_blob(host.ctypes.data, (4,), device="CL")

def test_a_value_built_on_an_assign_to_the_memory_reads_it_after_the_write():
  """z = t + 1 built on t.assign(...) before t is realized: z reads the memory the write filled (a normal tensor's
  result), and later reads see the owner's changes (found by review: the write's cache entry was never valid)."""
  host = np.arange(4, dtype=np.float32)
  t = Tensor.from_blob(host.ctypes.data, (4,), dtype=dtypes.float32)
  t.assign(t * 10)
  z = t + 1
  t.realize()
  assert z.tolist() == [1.0, 11.0, 21.0, 31.0] and host.tolist() == [0.0, 10.0, 20.0, 30.0]
  host[:] = 5
  assert (t + 1).tolist() == [6.0] * 4 and z.tolist() == [1.0, 11.0, 21.0, 31.0]  # z was computed: it keeps its value
