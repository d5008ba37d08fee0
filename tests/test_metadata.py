"""Which Tensor method made each node, and which methods each kernel computes (tinygrad 0.10's metadata): the outermost
method call tags the nodes it makes, a gradient rule's result is tagged with its forward node's method and `backward`,
and a ScheduleItem lists its nodes' tags, which DEBUG=2 prints after each kernel line."""
import contextlib, io
from lazynb import Tensor, Context
from lazynb.helpers import Metadata
from lazynb.tensor import _METADATA

def names(si) -> list[str]: return [repr(m) for m in si.metadata]

def test_the_outermost_method_tags_its_nodes():
  x = Tensor.ones(3).contiguous().realize()
  assert x.relu().uop.metadata == Metadata("relu")
  assert x.sigmoid().uop.src[0].metadata == Metadata("sigmoid")  # a node made inside sigmoid by other methods
  assert (x + 1).uop.metadata.name == "__add__" and x.add(2).uop.metadata.name == "add"
  assert Tensor.arange(3).uop.metadata.name == "arange" and x.matmul(Tensor.ones(3, 2)).uop.metadata.name == "matmul"
  assert _METADATA.get() is None  # nothing leaks out of a call, also not out of one that raised
  with contextlib.suppress(Exception): x.reshape(7)
  assert _METADATA.get() is None

def test_methods_keep_their_kind():
  x = Tensor.ones(2)
  assert Tensor.rand(2).shape == (2,) and Tensor.linspace(0, 1, 5).numpy().tolist() == [0, 0.25, 0.5, 0.75, 1]
  assert Tensor.stack(x, x).shape == (2, 2) and x.stack(x).shape == (2, 2)  # a staticmethod, called both ways
  assert Tensor.relu.__name__ == "relu" and "relu" in (Tensor.relu.__doc__ or "relu")

def test_a_kernel_lists_the_methods_it_computes():
  x, y = Tensor.ones(3).contiguous().realize(), Tensor.ones(3).contiguous().realize()
  (si,) = (x.relu() * y.sigmoid()).schedule()
  assert sorted(names(si)) == ["__mul__", "relu", "sigmoid"]
  (si,) = (x * 1 + 0).exp().schedule()  # the no-ops x * 1 and + 0 are not computed, so not listed
  assert names(si) == ["exp"]

def test_gradients_are_tagged_with_their_forward_method():
  x = Tensor([1.0, -2.0, 3.0], requires_grad=True).realize()
  y = Tensor([0.5, 0.0, -1.0], requires_grad=True).realize()
  out = (x.relu() * y.sigmoid()).sum()
  out.backward()
  assert x.grad.uop.metadata == Metadata("relu", backward=True)
  assert y.grad.uop.metadata == Metadata("sigmoid", backward=True)
  sched = Tensor.schedule(out, x.grad, y.grad)
  assert any("sigmoid bw" in names(si) and "relu bw" not in names(si) for si in sched)  # y's gradient kernel
  assert any("relu bw" in names(si) for si in sched)
  import numpy as np
  sig = 1 / (1 + np.exp(-np.array([0.5, 0.0, -1.0])))
  np.testing.assert_allclose(x.grad.numpy(), np.array([1, 0, 1]) * sig, rtol=1e-6)
  np.testing.assert_allclose(y.grad.numpy(), np.array([1, 0, 3]) * sig * (1 - sig), rtol=1e-6)

def test_debug_2_prints_each_kernels_methods():
  x = Tensor.ones(4).contiguous().realize()
  out = io.StringIO()
  with Context(DEBUG=2), contextlib.redirect_stdout(out): (x.exp() + 1).realize()
  line = next(ln for ln in out.getvalue().splitlines() if ln.startswith("***"))
  assert line.endswith("['exp', '__add__']")
