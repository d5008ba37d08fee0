"""How the C renderer writes relu's select, max, float equality, 0/1 selects and offset loads (rules of the C table in
renderer/cstyle.py; max is NaN-propagating by a shared rewrite, renderer/prerender.py): in forms gcc compiles without a
branch per element and with one base pointer per buffer, and clang makes max one masked vmaxps. The values must stay
numpy's on the edge cases (NaN, infinities, signed zeros, denormals) with both compilers, and the forms must really be
in the source (the benchmark is in docs/benchmarks.md, not here)."""
import re
import numpy as np
import pytest
from lazynb import Tensor
from test_lanes import open_cpu, sources

EDGE = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 0.5, -0.5, 1.0, -1.0, 3.4e38, -3.4e38], np.float32)
X, Y = np.meshgrid(EDGE, EDGE)  # every pair of edge values

def same(got: np.ndarray, want: np.ndarray):
  """Equal, NaN where numpy has NaN, and zeros with numpy's sign."""
  np.testing.assert_array_equal(got, want)
  assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all(), "a zero has the wrong sign"

@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_edge_values_match_numpy(monkeypatch, cc):
  dev = open_cpu(monkeypatch, cc, lanes=None)
  x, y = Tensor(X, device=dev), Tensor(Y, device=dev)
  same(x.relu().numpy(), np.where((X > 0) | np.isnan(X), X, np.float32(0)))
  same(((x < 0.5) | x.isnan()).where(x, 7.0).numpy(), np.where((X < 0.5) | np.isnan(X), X, np.float32(7)))
  same(x.eq(y).where(1.0, 0.0).numpy(), (X == Y).astype(np.float32))
  same((x.eq(y).float() * 3).numpy(), (X == Y).astype(np.float32) * 3)
  same(x.eq(y).where(1.0, -0.0).numpy(), np.where(X == Y, np.float32(1), np.float32(-0.0)))  # not a cast: -0.0 stays
  np.testing.assert_array_equal(x.maximum(y).numpy(), np.maximum(X, Y))  # NaN from either side (-0.0 == 0.0 here)
  np.testing.assert_array_equal(x.max(axis=1).numpy(), X.max(axis=1))
  np.testing.assert_array_equal(x.T.max(axis=1).numpy(), X.T.max(axis=1))
  srcs = "\n".join(sources())
  assert re.search(r"\(!\(\w+<=0\.0f\)\)", srcs), "relu is not written as one compare"
  assert re.search(r"\(!\(\w+>=0\.5f\)\)", srcs), "(x<c)|isnan(x) is not written as one compare"
  assert re.search(r"\(\((\w+)<=(\w+)\)&\(\1>=\2\)\)", srcs), "float equality is not written as two ordered compares"
  assert "((float)(" in srcs and "?1.0f:0.0f" not in srcs, "a 0/1 select is not written as a cast"
  assert "||" not in srcs, "float max still has its short-circuit form"
  assert re.search(r"\(!\((\w+)==\1\)\?\1:\(\((\w+)<\1\)\?\1:\2\)\)", srcs), "float max is not `!(a==a)?a:((b<a)?a:b)` (clang: a!=a costs a blend)"

@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_offset_loads_are_pointer_arithmetic(monkeypatch, cc):
  """buf+i+k, not buf+(i+k): int math that may wrap (-fwrapv) kept gcc from sharing one pointer among offset loads."""
  dev = open_cpu(monkeypatch, cc, lanes=None)
  rng = np.random.default_rng(3)
  a, w = rng.standard_normal((2, 3, 12, 12)).astype(np.float32), rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
  b = rng.standard_normal((9, 16)).astype(np.float32)
  out = Tensor(a, device=dev).conv2d(Tensor(w, device=dev)).numpy()
  want = np.zeros((2, 4, 10, 10), np.float32)
  for i in range(3):
    for j in range(3): want += np.einsum("nchw,oc->nohw", a[:, :, i:i + 10, j:j + 10], w[:, :, i, j])
  np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)
  flipped = Tensor(b, device=dev).flip(1)[:, 1:].sum(1).numpy()  # offsets below a base: buf+i-k
  np.testing.assert_allclose(flipped, b[:, ::-1][:, 1:].sum(1), rtol=1e-5, atol=1e-5)
  srcs = "\n".join(sources())
  assert re.search(r"\(data\d+\+\w+\+\d+\)", srcs), "no offset load written as pointer arithmetic"
  assert not re.search(r"\(data\d+\+\((alu|val|gidx|ridx|tidx)\d+[+-]\d+\)\)", srcs), "an offset load still adds in int first"
