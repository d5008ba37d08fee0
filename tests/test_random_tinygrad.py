"""Seeded random numbers are tinygrad 0.10.3's (issue 31.7): the same Threefry stream per device, the same layout of
draws, the same bits to floats. tinygrad itself is the oracle (a test dependency); every draw below runs on both."""
import numpy as np, pytest
import lazynb
from lazynb.tensor_create import _threefry2x32
tinygrad = pytest.importorskip("tinygrad")  # (the test extra pins tinygrad==0.10.3)

def draws(T, dtypes):
  """A session of draws of every kind, in one order (the stream's counter depends on it)."""
  T.manual_seed(42)
  out = [T.rand(5), T.rand(2, 3), T.rand(3, dtype=dtypes.half), T.rand(3, dtype=dtypes.float64), T.rand(1),
         T.randint(6, low=-5, high=9), T.randint(2, 2, low=0, high=1000, dtype=dtypes.int64), T.uniform(4, low=-2, high=3),
         T.randperm(8), T([0.1, 0.5, 0.4]).multinomial(6, replacement=True), T([[0.1, 0.9], [0.7, 0.3]]).multinomial(3, replacement=True)]
  with T.train(): out.append(T.ones(10).dropout(0.3))
  T.manual_seed(7)
  out += [T.rand(1001), T.rand(4, 4)]
  return [t.numpy() for t in out]

def test_seeded_draws_are_tinygrads_bit_for_bit():
  ours, theirs = draws(lazynb.Tensor, lazynb.dtypes), draws(tinygrad.Tensor, tinygrad.dtypes)
  for i, (a, b) in enumerate(zip(ours, theirs)):
    assert a.dtype == b.dtype and a.shape == b.shape, (i, a.dtype, b.dtype, a.shape, b.shape)
    assert a.tobytes() == b.tobytes(), f"draw {i}: {a} vs tinygrad's {b}"

def test_randn_and_normal_within_an_ulp_of_tinygrads():
  """The same uniform draws through Box-Muller: tinygrad's own float32 sin/log2 polynomials round differently."""
  def run(T):
    T.manual_seed(3)
    return [T.randn(64).numpy(), T.normal(8, mean=1.0, std=2.0).numpy(), T.randn(3, 3).numpy()]
  for a, b in zip(run(lazynb.Tensor), run(tinygrad.Tensor)):
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)

def test_threefry_known_answers():
  """Threefry-2x32-20's published known-answer vectors (Random123's kat_vectors): zero, ones and the pi digits."""
  u = np.uint32
  cases = [((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
           ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
           ((0x243F6A88, 0x85A308D3), (0x13198A2E, 0x03707344), (0xC4923A9C, 0x483DF7A0))]
  for (x0, x1), (k0, k1), want in cases:
    a, b = _threefry2x32(np.array([x0], u), np.array([x1], u), k0, k1)
    assert (int(a[0]), int(b[0])) == want

def test_jit_replays_draw_fresh_numbers_as_a_plain_call_would():
  def run(jit: bool):
    lazynb.Tensor.manual_seed(5)
    f = lambda x: (x + lazynb.Tensor.rand(4) + lazynb.Tensor.randn(2, 2).reshape(4)).realize()  # noqa: E731
    g = lazynb.TinyJit(f) if jit else f
    return [g(lazynb.Tensor.ones(4).contiguous().realize()).numpy() for _ in range(5)]
  plain, jitted = run(False), run(True)
  assert all(np.array_equal(a, b) for a, b in zip(plain, jitted))
  assert len({a.tobytes() for a in jitted}) == 5

def test_rand_errors_as_tinygrad():
  for T in (lazynb.Tensor, tinygrad.Tensor):
    with pytest.raises(ValueError): T.rand(3, dtype="int32")
    with pytest.raises(TypeError): T.randint(3, low=0.5, high=2)

def test_seeded_layers_are_tinygrads():
  """Layers draw their initial weights as tinygrad's do, in the same order (ConvTranspose2d first draws a Conv2d's
  weight and bias, as tinygrad's subclass does), so a seeded model starts from tinygrad's numbers."""
  def run(T, nn):
    T.manual_seed(42)
    ms = [nn.ConvTranspose1d(1, 1, 3), nn.ConvTranspose2d(2, 4, 3, groups=2), nn.Linear(3, 4), nn.Embedding(5, 3), nn.Conv2d(2, 3, 2),
          nn.Conv1d(2, 2, 3, bias=False)]
    return [m.weight.numpy() for m in ms] + [m.bias.numpy() for m in ms if getattr(m, "bias", None) is not None] + [T.glorot_uniform(3, 4).numpy()]
  for a, b in zip(run(lazynb.Tensor, lazynb.nn), run(tinygrad.Tensor, tinygrad.nn)):
    assert a.shape == b.shape and np.array_equal(a, b)

def test_threefry_random_bits_as_tinygrads():
  """Tensor._threefry_random_bits (tinygrad 0.10 exposes it; its test_randomness checks it against JAX): the low words of
  the encrypted pairs, then the high ones."""
  z = lazynb.Tensor._threefry_random_bits(lazynb.Tensor([0, 0], dtype="uint32"), lazynb.Tensor([0], dtype="uint32"), lazynb.Tensor([0], dtype="uint32"))
  assert z.tolist() == [0x6B200159, 0x99BA4EFE]
  rng = np.random.default_rng(0)
  key, c0, c1 = (rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32) for n in (2, 9, 9))
  ours = lazynb.Tensor._threefry_random_bits(*(lazynb.Tensor(a, dtype="uint32") for a in (key, c0, c1))).numpy()
  theirs = tinygrad.Tensor._threefry_random_bits(*(tinygrad.Tensor(a, dtype="uint32") for a in (key, c0, c1))).numpy()
  assert np.array_equal(ours, theirs)
