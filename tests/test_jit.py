"""TinyJit: same results as the plain function, replay without re-scheduling, input checks, a jitted training step.
Open bugs found here are marked xfail(strict=True) with a `bug:` reason.
"""
import numpy as np
import pytest
from lazynb import Tensor, TinyJit, GlobalCounters, nn
from lazynb.engine.jit import JitError
from lazynb.nn import optim
from lazynb.trace import Recorder

def rnd(*shape, seed=0): return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

def ref(a, b): return np.maximum(a @ b, 0) + b.sum(0)

def f(x, y): return ((x @ y).relu() + y.sum(0)).realize()

def real(a): return Tensor(a).realize()

def test_jit_matches_unjitted_over_many_calls():
  jf = TinyJit(f)
  for i in range(6):  # call 1 warm-up, call 2 capture, calls 3.. replay
    a, b = rnd(3, 4, seed=i), rnd(4, 5, seed=100 + i)
    out = jf(real(a), real(b))
    np.testing.assert_allclose(out.numpy(), ref(a, b), rtol=1e-5, atol=1e-6, err_msg=f"call {i + 1}")
    np.testing.assert_allclose(f(Tensor(a), Tensor(b)).numpy(), out.numpy(), rtol=1e-6, atol=1e-6)
  assert jf.cnt == 6

def test_jit_with_unrealized_inputs():
  jf = TinyJit(lambda x: (x * 2 + 1).sum(1).realize())
  for i in range(4):
    a = rnd(2, 3, seed=i)
    np.testing.assert_allclose(jf(Tensor(a) * 3).numpy(), (a * 3 * 2 + 1).sum(1), rtol=1e-5)

def test_jit_replay_runs_same_kernels_without_scheduling():
  jf = TinyJit(f)
  counts, schedules = [], []
  from lazynb import pipeline
  orig = pipeline.reference("schedule")
  calls = {"n": 0}
  def counting(*a, **k):
    calls["n"] += 1
    return orig(*a, **k)
  with pipeline.use("schedule", counting): _jit_counts(jf, counts, schedules, calls)
  assert counts[1] >= 1, counts
  assert counts[2:] == [counts[1]] * 3, f"replay should run as many kernels as the capture: {counts}"
  assert schedules[0] >= 1 and schedules[1] >= 1
  assert schedules[2:] == [0, 0, 0], f"replay must not schedule: {schedules}"

def _jit_counts(jf, counts, schedules, calls):
  for i in range(5):
    x, y = real(rnd(3, 4, seed=i)), real(rnd(4, 5, seed=10 + i))
    k0, s0 = GlobalCounters.kernel_count, calls["n"]
    jf(x, y)
    counts.append(GlobalCounters.kernel_count - k0)
    schedules.append(calls["n"] - s0)

def test_jit_trace_events_capture_then_replay():
  jf = TinyJit(f)
  xs = [(real(rnd(3, 4, seed=i)), real(rnd(4, 5, seed=20 + i))) for i in range(4)]
  with Recorder(rewrites=False) as rec:
    for x, y in xs: jf(x, y)
  jit = rec.of("jit")
  assert [e.data["phase"] for e in jit] == ["capture", "replay", "replay"]
  assert jit[0].data["kernels"] == jit[1].data["kernels"] >= 1
  assert jit[0].data["name"] == "f"
  # nothing is scheduled during the replays
  replay_start = jit[0].seq
  assert not [e for e in rec.of("schedule") if e.seq > replay_start]

def test_jit_replay_is_faster_than_capture():
  import time
  def g(x):
    for _ in range(6): x = (x * 1.01 + 0.5).relu().sum(1, keepdim=True).expand(x.shape) * 0.1 + x
    return x.realize()
  jf = TinyJit(g)
  times = []
  for i in range(6):
    x = real(rnd(4, 4, seed=i))
    st = time.perf_counter()
    jf(x)
    times.append(time.perf_counter() - st)
  assert min(times[2:]) < times[1], f"replay should skip Python graph building and scheduling: {times}"

def test_jit_wrong_shape_on_replay_raises():
  jf = TinyJit(f)
  for i in range(3): jf(real(rnd(3, 4, seed=i)), real(rnd(4, 5, seed=i)))
  with pytest.raises(JitError, match=r"inputs changed.*reset"):
    jf(real(rnd(2, 4)), real(rnd(4, 5)))
  assert issubclass(JitError, RuntimeError)

def test_jit_wrong_dtype_on_replay_raises():
  jf = TinyJit(lambda x: (x + 1).realize())
  for i in range(3): jf(real(rnd(3, seed=i)))
  with pytest.raises(JitError, match="inputs changed"):
    jf(Tensor(np.arange(3, dtype=np.int32)))

def test_jit_wrong_number_of_inputs_raises():
  jf = TinyJit(lambda *xs: sum(xs[1:], xs[0]).realize())
  for i in range(3): jf(real(rnd(3, seed=i)), real(rnd(3, seed=i + 1)))
  with pytest.raises(JitError):
    jf(real(rnd(3)), real(rnd(3)), real(rnd(3)))

def test_jit_reset_allows_new_shapes():
  jf = TinyJit(f)
  for i in range(3): jf(real(rnd(3, 4, seed=i)), real(rnd(4, 5, seed=i)))
  jf.reset()
  for i in range(4):
    a, b = rnd(2, 2, seed=50 + i), rnd(2, 3, seed=60 + i)
    np.testing.assert_allclose(jf(real(a), real(b)).numpy(), ref(a, b), rtol=1e-5, atol=1e-6)

def test_jit_kwargs_and_tuple_outputs():
  @TinyJit
  def h(x, *, scale, y):
    return (x * scale).realize(), (x + y).sum().realize()
  for i in range(5):
    a, b = rnd(2, 3, seed=i), rnd(2, 3, seed=30 + i)
    p, q = h(real(a), scale=2.0, y=real(b))
    np.testing.assert_allclose(p.numpy(), a * 2, rtol=1e-6)
    np.testing.assert_allclose(q.numpy(), (a + b).sum(), rtol=1e-5)

def test_jit_output_realized_without_explicit_realize():
  jf = TinyJit(lambda x: x.exp().sum(0))
  for i in range(4):
    a = rnd(3, 2, seed=i)
    np.testing.assert_allclose(jf(real(a)).numpy(), np.exp(a).sum(0), rtol=1e-5)

def test_jit_as_method():
  class M:
    def __init__(self): self.w = Tensor(rnd(3, 2, seed=7)).realize()
    @TinyJit
    def __call__(self, x): return (x @ self.w).realize()
  m = M()
  for i in range(4):
    a = rnd(1, 3, seed=i)
    np.testing.assert_allclose(m(real(a)).numpy(), a @ m.w.numpy(), rtol=1e-5)

def test_jit_with_view_inputs():
  jf = TinyJit(lambda x: (x * 2).realize())
  for i in range(4):
    a = rnd(3, 4, seed=i)
    base = real(a)
    np.testing.assert_allclose(jf(base.T).numpy(), a.T * 2, rtol=1e-6, err_msg=f"call {i + 1}")

# ------------------------------------------------------------------ a jitted training step

def make_model(seed=0):
  Tensor.manual_seed(seed)
  l = nn.Linear(4, 3)
  l.weight, l.bias = l.weight.contiguous().realize(), l.bias.contiguous().realize()
  return l

def data(i):
  g = np.random.default_rng(1000 + i)
  return g.standard_normal((8, 4)).astype(np.float32), g.integers(0, 3, (8,)).astype(np.int32)

@pytest.mark.usefixtures("training_mode")
@pytest.mark.parametrize("opt_kw", [dict(momentum=0.9), dict(momentum=0.0)], ids=["momentum", "plain"])
def test_jitted_training_step_matches_unjitted(opt_kw):
  def run(jit: bool):
    l = make_model()
    opt = optim.SGD([l.weight, l.bias], lr=0.1, **opt_kw)
    def step(x, y):
      opt.zero_grad()
      loss = l(x).sparse_categorical_crossentropy(y)
      loss.backward()
      loss.realize()
      opt.step()
      return loss
    fn = TinyJit(step) if jit else step
    losses = []
    for i in range(6):
      x, y = data(i)
      losses.append(fn(real(x), real(y)).item())
    return losses, l.weight.numpy(), l.bias.numpy()
  (lj, wj, bj), (lu, wu, bu) = run(True), run(False)
  np.testing.assert_allclose(lj, lu, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(wj, wu, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(bj, bu, rtol=1e-5, atol=1e-6)
  assert len(set(np.round(lj, 6))) == len(lj), "different batches should give different losses"

@pytest.mark.usefixtures("training_mode")
def test_jitted_training_step_matches_torch():
  torch = pytest.importorskip("torch")
  l = make_model(1)
  tl = torch.nn.Linear(4, 3)
  with torch.no_grad():
    tl.weight.copy_(torch.tensor(l.weight.numpy()))
    tl.bias.copy_(torch.tensor(l.bias.numpy()))
  opt = optim.SGD([l.weight, l.bias], lr=0.1, momentum=0.9)
  topt = torch.optim.SGD(tl.parameters(), lr=0.1, momentum=0.9)
  @TinyJit
  def step(x, y):
    opt.zero_grad()
    loss = l(x).sparse_categorical_crossentropy(y)
    loss.backward()
    loss.realize()
    opt.step()
    return loss
  for i in range(5):
    x, y = data(i)
    lv = step(real(x), real(y)).item()
    topt.zero_grad()
    tloss = torch.nn.functional.cross_entropy(tl(torch.tensor(x)), torch.tensor(y, dtype=torch.long))
    tloss.backward()
    topt.step()
    np.testing.assert_allclose(lv, tloss.item(), rtol=1e-5, atol=1e-6, err_msg=f"step {i}")
  np.testing.assert_allclose(l.weight.numpy(), tl.weight.detach().numpy(), rtol=1e-4, atol=1e-6)

def test_a_block_under_capturing_0_is_run_in_the_capture_but_not_recorded():
  from lazynb.helpers import Context
  side = []
  @TinyJit
  def f(a, b):
    with Context(CAPTURING=0):
      side.append(Tensor.full((4,), float(len(side))).contiguous().realize())
    return (a + b).realize()
  for i in range(5):
    out = f(Tensor([float(i)]), Tensor([1.0]))
    assert out.numpy().tolist() == [i + 1.0]
  assert len(f.jit_cache) == 1  # only a + b was recorded
  assert len(side) == 2 and side[1].numpy().tolist() == [1.0] * 4  # the warm-up and the capture ran the block; replays do not
