"""TinyJit replays the same computation, not the same numbers: random ops, keyword inputs, outputs of every shape,
misuse that would freeze values (errors instead), prune=True, and in-place updates inside a jitted step.
Reference for each: the same function called without the jit (same seed), or numpy."""
import numpy as np
import pytest
from lazynb import Tensor, TinyJit, GlobalCounters, nn
from lazynb.engine.jit import JitError
from lazynb.nn import optim

def real(a): return Tensor(np.asarray(a, dtype=np.float32)).realize()

def run_both(fn, make_args, calls=6, seed=3):
  """fn called `calls` times plainly and through a TinyJit, from the same seed: the two lists of results."""
  Tensor.manual_seed(seed)
  plain = [[t.numpy() for t in fn(*make_args(i))] for i in range(calls)]
  Tensor.manual_seed(seed)
  jf = TinyJit(fn)
  jitted = [[t.numpy() for t in jf(*make_args(i))] for i in range(calls)]
  return plain, jitted

@pytest.mark.parametrize("maker", [
  lambda x: x + Tensor.rand(*x.shape),
  lambda x: x + Tensor.randn(*x.shape),
  lambda x: x + Tensor.uniform(*x.shape, low=-2, high=5),
  lambda x: x + Tensor.normal(*x.shape, mean=1, std=3),
  lambda x: x + Tensor.randint(*x.shape, low=0, high=1000).float(),
  lambda x: x + Tensor.kaiming_uniform(*x.shape),
], ids=["rand", "randn", "uniform", "normal", "randint", "kaiming_uniform"])
def test_random_ops_draw_fresh_numbers_on_every_replay(maker):
  def fn(x): return [maker(x).realize()]
  plain, jitted = run_both(fn, lambda i: [real(np.zeros((4, 8)))])
  outs = [o[0] for o in jitted]
  # never the same numbers twice (the bug: calls 3.. repeated the captured draw)
  for i in range(len(outs)):
    for j in range(i):
      assert not np.array_equal(outs[i], outs[j]), f"calls {j + 1} and {i + 1} drew the same random numbers"
  # and exactly the numbers an unjitted run draws from the same seed
  for i, (p, q) in enumerate(zip(plain, jitted)): np.testing.assert_array_equal(p[0], q[0], err_msg=f"call {i + 1}")

def test_dropout_mask_changes_every_replay_in_training():
  def fn(x):
    with Tensor.train(): return [x.dropout(0.5).realize()]
  plain, jitted = run_both(fn, lambda i: [real(np.ones((64,)))])
  masks = [o[0] != 0 for o in jitted]
  assert len({m.tobytes() for m in masks}) == len(masks), "the dropout mask repeated across calls"
  for p, q in zip(plain, jitted): np.testing.assert_array_equal(p[0], q[0])

def test_beautiful_mnist_batch_sampling_inside_the_jit():
  """The course's loop: `samples = Tensor.randint(BS, high=N)` inside the jitted step picks a new batch every call."""
  X = real(np.arange(100, dtype=np.float32).reshape(100, 1))
  def step():
    samples = Tensor.randint(8, high=X.shape[0])
    return [X[samples].realize(), samples.realize()]
  plain, jitted = run_both(step, lambda i: [], calls=8)
  batches = [o[0].ravel() for o in jitted]
  assert len({b.tobytes() for b in batches}) == 8, "the jitted step trained on a frozen batch"
  for (pb, ps), (jb, js) in zip(plain, jitted):
    np.testing.assert_array_equal(pb, jb)
    np.testing.assert_array_equal(ps, js)
    np.testing.assert_array_equal(jb.ravel(), js.astype(np.float32))  # the gathered rows are the sampled ones

def test_manual_seed_reproduces_a_jitted_run():
  jf = TinyJit(lambda x: (x + Tensor.rand(3)).realize())
  Tensor.manual_seed(7)
  first = [jf(real(np.zeros(3))).numpy() for _ in range(5)]
  Tensor.manual_seed(7)
  again = [jf(real(np.zeros(3))).numpy() for _ in range(5)]
  np.testing.assert_array_equal(np.stack(first), np.stack(again))

def test_keyword_inputs_are_matched_by_name_in_any_order():
  jf = TinyJit(lambda x, y: (x - 2 * y).realize())
  for i in range(6):
    a, b = np.full(3, 10.0 * i, np.float32), np.full(3, float(i), np.float32)
    out = jf(x=real(a), y=real(b)) if i % 2 else jf(y=real(b), x=real(a))
    np.testing.assert_array_equal(out.numpy(), a - 2 * b, err_msg=f"call {i + 1}")

@pytest.mark.parametrize("kind", ["tuple", "list", "dict"])
def test_tuple_list_and_dict_outputs_come_back_right(kind):
  def fn(x):
    a, b = x + 1, (x * x).sum()
    return {"tuple": (a, b), "list": [a, b], "dict": {"plus": a, "sumsq": b}}[kind]
  jf = TinyJit(fn)
  for i in range(5):
    v = np.arange(4, dtype=np.float32) * (i + 1)
    ret = jf(real(v))
    a, b = (ret["plus"], ret["sumsq"]) if kind == "dict" else ret
    assert type(ret).__name__ == kind
    np.testing.assert_array_equal(a.numpy(), v + 1, err_msg=f"call {i + 1}")
    np.testing.assert_allclose(b.numpy(), (v * v).sum(), rtol=1e-6)

def test_the_same_tensor_twice_is_an_error():
  jf = TinyJit(lambda x, y: (x + y).realize())
  t = real(np.ones(3))
  with pytest.raises(JitError, match="shares its memory"):
    for _ in range(3): jf(t, t)
  base = real(np.ones((2, 3)))
  with pytest.raises(JitError, match="shares its memory"):
    TinyJit(lambda x, y: (x + y).realize())(base[0], base[1])

def test_a_call_that_jits_nothing_is_an_error():
  jf = TinyJit(lambda x: 1)
  jf(real(np.ones(2)))
  with pytest.raises(JitError, match="nothing was jitted"): jf(real(np.ones(2)))

@pytest.mark.parametrize("change", ["shape", "dtype"])
def test_changed_input_after_capture_is_an_error(change):
  jf = TinyJit(lambda x: (x * 2).realize())
  for _ in range(3): jf(real(np.ones(3)))
  bad = real(np.ones(4)) if change == "shape" else Tensor(np.ones(3, np.int32)).realize()
  with pytest.raises(JitError, match="inputs changed"): jf(bad)

def test_python_values_that_change_are_an_error_not_frozen():
  calls = {"n": 0}
  def fn(x):
    calls["n"] += 1
    return (x + Tensor([float(calls["n"])])).realize()
  jf = TinyJit(fn)
  jf(real(np.zeros(1)))
  with pytest.raises(JitError, match="different data from Python values"): jf(real(np.zeros(1)))
  jg = TinyJit(lambda x, scale: (x * scale).realize())
  for _ in range(3): jg(real(np.ones(2)), 2.0)
  np.testing.assert_array_equal(jg(real(np.ones(2)), 2.0).numpy(), [2, 2])
  with pytest.raises(JitError, match="non-Tensor arguments changed"): jg(real(np.ones(2)), 3.0)

def test_constant_python_data_inside_is_fine():
  jf = TinyJit(lambda x: (x + Tensor([1.0, 2.0]) * Tensor.arange(2)).realize())
  for i in range(5): np.testing.assert_array_equal(jf(real([i, i])).numpy(), [i, i + 2])

def test_prune_skips_kernels_that_never_change_and_keeps_results():
  w = real(np.arange(6).reshape(2, 3))
  def fn(x): return ((w.exp() * 2).sum(0).realize() + x).realize()  # its own kernel, the same every call
  plain, pruned = TinyJit(fn), TinyJit(fn, prune=True)
  counts = []
  for i in range(5):
    x = real(np.full(3, i))
    want = (np.exp(np.arange(6, dtype=np.float32).reshape(2, 3)) * 2).sum(0) + i
    k0 = GlobalCounters.kernel_count
    np.testing.assert_allclose(pruned(x).numpy(), want, rtol=1e-6)
    counts.append(GlobalCounters.kernel_count - k0)
    np.testing.assert_allclose(plain(x).numpy(), want, rtol=1e-6)
  assert len(plain.jit_cache) > len(pruned.jit_cache) >= 1
  assert counts[2:] == [len(pruned.jit_cache)] * 3

def test_prune_keeps_in_place_updates():
  acc = Tensor.zeros(2).contiguous().realize()
  def fn(x):
    acc.assign(acc + 1)
    return (acc * 1 + x).realize()
  jf = TinyJit(fn, prune=True)
  for i in range(5): np.testing.assert_array_equal(jf(real([0, 0])).numpy(), [i + 1, i + 1])

def test_augmented_assignment_inside_a_jitted_step_updates_every_call():
  state = {"w": Tensor.zeros(3).contiguous().realize()}
  w = state["w"]
  @TinyJit
  def step(x):
    w_ = state["w"]
    w_ += x
    w_ *= 2
    return w_.realize()
  want = np.zeros(3, np.float32)
  for i in range(6):
    want = (want + i) * 2
    np.testing.assert_array_equal(step(real([i, i, i])).numpy(), want, err_msg=f"call {i + 1}")
  assert state["w"] is w
  np.testing.assert_array_equal(w.numpy(), want)

def test_results_cached_before_replays_are_not_reused_after():
  w = Tensor.ones(4).contiguous().realize()
  @TinyJit
  def step(x):
    w.assign(w + x)
    return w.realize()
  for _ in range(3): step(real(np.ones(4)))
  y = (w * 3).realize()
  for _ in range(3): step(real(np.ones(4)))
  np.testing.assert_array_equal(w.numpy(), [7] * 4)
  np.testing.assert_array_equal((w * 3).numpy(), [21] * 4)  # was the cached 12 computed before the replays
  np.testing.assert_array_equal(y.numpy(), [12] * 4)        # y keeps the value it was computed with

def test_jitted_training_with_sampled_batches_learns_like_the_plain_loop():
  """A small classifier trained with batches sampled inside the step: jitted and plain give the same weights."""
  rng = np.random.default_rng(0)
  X = rng.standard_normal((200, 5)).astype(np.float32)
  Y = (X @ rng.standard_normal(5) > 0).astype(np.int32)
  Xt, Yt = Tensor(X).realize(), Tensor(Y).realize()
  def train(use_jit):
    Tensor.manual_seed(1)
    model = nn.Linear(5, 2)
    opt = optim.SGD(nn.state.get_parameters(model), lr=0.5)
    def step():
      with Tensor.train():
        s = Tensor.randint(16, high=Xt.shape[0])
        opt.zero_grad()
        loss = model(Xt[s]).sparse_categorical_crossentropy(Yt[s]).backward()
        opt.step()
        return loss.realize()
    f = TinyJit(step) if use_jit else step
    losses = [f().item() for _ in range(40)]
    return model.weight.numpy(), losses
  w_plain, l_plain = train(False)
  w_jit, l_jit = train(True)
  np.testing.assert_allclose(w_jit, w_plain, rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(l_jit, l_plain, rtol=1e-4, atol=1e-5)
  assert len(set(np.round(l_jit[2:], 6))) > 10, "losses of replayed steps repeat: the batch is frozen"

def test_capture_computes_again_what_was_cached_for_the_same_inputs():
  """A result computed earlier from the capture's own inputs must still be recorded: replays with new inputs need it."""
  def fn(x): return (x * 3 + 1).realize()
  x0 = real([1, 2])
  kept = fn(x0)                # cached while kept holds its graph: x0*3+1
  jf = TinyJit(fn)
  jf(x0); jf(x0)               # warm-up and capture with the very same input
  for i in range(3):
    v = np.array([i, 10 * i], np.float32)
    np.testing.assert_array_equal(jf(real(v)).numpy(), v * 3 + 1, err_msg=f"replay {i + 1}")
  np.testing.assert_array_equal(kept.numpy(), [4, 7])

# ---------------------------------------------------------------- returning inputs: this call's, not the capture call's

def _as_values(ret):
  """A result as plain values: the container kept, each tensor as numpy (with its shape), anything else as it is."""
  one = lambda r: (r.shape, r.numpy()) if isinstance(r, Tensor) else r  # noqa: E731
  if isinstance(ret, (tuple, list)): return type(ret).__name__, [one(r) for r in ret]
  if isinstance(ret, dict): return "dict", {k: one(v) for k, v in ret.items()}
  return "single", one(ret)

def _check_same(got, want, msg):
  assert got[0] == want[0], msg
  g, w = (got[1], want[1]) if got[0] != "single" else ([got[1]], [want[1]])
  for a, b in zip(g.values() if isinstance(g, dict) else g, w.values() if isinstance(w, dict) else w):
    if isinstance(b, tuple):
      assert a[0] == b[0], f"{msg}: shape {a[0]}, plain call gives {b[0]}"
      np.testing.assert_array_equal(a[1], b[1], err_msg=msg)
    else: assert a == b, msg

RETURNS = {
  "the input": lambda x, y: x,
  "the second input": lambda x, y: y,
  "reshape": lambda x, y: x.reshape(3, 2),
  "slice": lambda x, y: x[:, 1:],
  ".T": lambda x, y: x.T,
  "a view of a view": lambda x, y: x.T[1:].reshape(-1).flip(0),
  "tuple of inputs, views, computed values and a constant": lambda x, y: (x, (x * 2).realize(), y.T, 3, (x + y).sum()),
  "list": lambda x, y: [x[0], (x @ y.T).realize()],
  "dict": lambda x, y: {"in": y, "out": (x - y).realize(), "view": x[1]},
  "a constant and a computed value": lambda x, y: ((x + 1).realize(), 7),
  "an input updated in place": lambda x, y: x.assign(x + y).realize(),
}

@pytest.mark.parametrize("name", list(RETURNS))
@pytest.mark.parametrize("views", [False, True], ids=["buffers", "view inputs"])
def test_returned_inputs_and_views_are_this_calls(name, views):
  """Issue 28: a replay handed back the capture call's input (or view of it) on every call. Against the plain function,
  with new inputs each call (also inputs that are themselves views of bigger buffers)."""
  fn = RETURNS[name]
  def make(i):
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3) + 10 * i, np.arange(6, dtype=np.float32).reshape(2, 3) * (i - 2)
    if not views: return real(a), real(b)
    return real(np.stack([a, -a]))[0], real(np.concatenate([b, b], 1))[:, 3:]
  jf = TinyJit(fn)
  for i in range(6):
    x, y = make(i)
    want = _as_values(fn(*make(i)))
    ret = jf(x, y)
    _check_same(_as_values(ret), want, f"{name}, call {i + 1}")
    if name == "the input": assert ret is x  # the caller's own tensor, as a plain call returns it
  assert jf.cnt == 6

def test_returned_keyword_input_and_view_are_this_calls():
  jf = TinyJit(lambda *, a, b: (b.T, (a * b).realize(), a))
  for i in range(5):
    a, b = real(np.full((2, 2), i)), real(np.arange(4).reshape(2, 2) + i)
    bt, prod, aa = jf(b=b, a=a)
    np.testing.assert_array_equal(bt.numpy(), (np.arange(4).reshape(2, 2) + i).T)
    np.testing.assert_array_equal(prod.numpy(), i * (np.arange(4).reshape(2, 2) + i))
    assert aa is a

def test_returned_view_of_a_variable_shaped_input():
  """An input with a symbolic size: the view is rebuilt on this call's input, with this call's size."""
  from lazynb import Variable
  from lazynb.uop.ops import sym_eval
  v, A = Variable("n", 1, 6), np.arange(24, dtype=np.float32).reshape(6, 4)
  base = real(A)
  jf = TinyJit(lambda x: (x.T, (x * 2).sum(0).realize()))
  for n in (2, 5, 3, 6, 1):
    t, s = jf(base.shrink(((0, v.bind(n)), (0, 4))))
    assert t.shape[0] == 4 and sym_eval(t.shape[1]) == n
    np.testing.assert_array_equal((t * Tensor.arange(4).reshape(4, 1)).sum(1).numpy(), A[:n].sum(0) * np.arange(4))
    np.testing.assert_array_equal(s.numpy(), (A[:n] * 2).sum(0))

def test_a_view_with_a_variable_of_its_own_is_an_error():
  """A view whose size comes from another argument (a bound Variable) cannot be rebuilt for a new value: an error, not n frozen."""
  from lazynb import Variable
  v, base = Variable("k", 1, 6), real(np.arange(24).reshape(6, 4))
  jf = TinyJit(lambda x, k: (x.shrink(((0, k), (0, 4))), (x * 2).realize()))
  jf(base, v.bind(2))
  with pytest.raises(JitError, match="variable of its own"): jf(base.contiguous().realize(), v.bind(3))

@pytest.mark.parametrize("base_alive", [True, False])
def test_an_assign_to_a_view_input_matches_the_plain_function(base_alive):
  """TinyJit x views: x.assign(x + y) on an input that is a view. With its base alive the write goes into the base (and
  every view of it); with the base gone x takes the value's graph. A replay must do what the plain call does, and leave
  the caller's other memory alone (it recorded the inputs' buffers after the function had rebound x: it then wrote the
  result into the next call's input and read a stale copy)."""
  fn = lambda x, y: x.assign(x + y).realize()  # noqa: E731
  def make(i):
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3) + 10 * i, np.arange(6, dtype=np.float32).reshape(2, 3) * (i - 2)
    big = real(np.stack([a, -a]))
    other = real(np.stack([a, -a]))[1]  # memory the function never sees
    return big, big[0], real(np.concatenate([b, b], 1))[:, 3:], other
  jf, keep = TinyJit(fn), []
  for i in range(6):
    big, x, y, other = make(i)
    big2, x2, y2, _ = make(i)
    want, want_big = fn(x2, y2).numpy(), big2.numpy()
    if not base_alive: del big, big2
    got = jf(x, y).numpy()
    np.testing.assert_array_equal(got, want, err_msg=f"call {i + 1}")
    np.testing.assert_array_equal(x.numpy(), want, err_msg=f"the caller's x, call {i + 1}")
    if base_alive: np.testing.assert_array_equal(big.numpy(), want_big, err_msg=f"the base, call {i + 1}")
    np.testing.assert_array_equal(other.numpy(), -(np.arange(6, dtype=np.float32).reshape(2, 3) + 10 * i))
    keep.append(x)

@pytest.mark.parametrize("kind", ["buffer", "host data", "view"])
def test_a_global_update_reading_an_input_the_step_then_writes(kind):
  """S.assign(S + x.sum()) leaves a pending assign that reads x; the step then writes into x. The plain call gives S the old
  sum (the pending assign runs before the write). TinyJit realizes its inputs first, so there S read x's memory, which the
  scheduler did not treat as a reader of the write: the capture raised StaleReadError (found by tests/test_jit_fuzz.py)."""
  def make(i):
    a = np.arange(4, dtype=np.float32) + i
    if kind == "buffer": return real(a)
    if kind == "host data": return Tensor(a)
    return Tensor(np.stack([a, -a]))[0]
  S = real(np.zeros(3))
  def step(x, s):
    S.assign(S + x.sum())
    x[(None, 0, Ellipsis)] = s
  jf, total = TinyJit(step), 0.0
  for i in range(5):
    x = make(i)
    jf(x, 7.0)
    total += (np.arange(4) + i).sum()
    np.testing.assert_array_equal(S.numpy(), [total] * 3, err_msg=f"call {i + 1}")
    np.testing.assert_array_equal(x.numpy(), [7, 1 + i, 2 + i, 3 + i], err_msg=f"call {i + 1}")
