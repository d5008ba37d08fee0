"""Gradients of values built on buffers that assign() writes: backward gives numpy's numbers, or a clear StaleReadError
when the value read memory an assign overwrote before the value was realized; never a false error (found by a fuzzer:
a value defined after two chained assigns raised StaleReadError in backward, because the check walked into the first
assign, realized already, and read its overwritten target as if the value still did)."""
import random
import numpy as np
import pytest
from lazynb import Tensor
from lazynb.engine.schedule import StaleReadError

def test_a_value_after_two_chained_assigns_has_a_gradient():
  b = Tensor(np.arange(3, dtype=np.float32)).contiguous().realize()
  p = Tensor(np.ones(3, np.float32), requires_grad=True)
  b.assign(b * 2)
  b.assign(b * 2)  # (the first, pending, runs first)
  v = b * 2 + 1
  (p * v).sum().backward()
  assert p.grad.tolist() == [1.0, 9.0, 17.0] and v.tolist() == [1.0, 9.0, 17.0] and b.tolist() == [0.0, 4.0, 8.0]

def program(seed: int) -> None:
  """Two buffers; a random run of assigns (chained, from the other buffer, from a value), values (lazy or realized, some
  with a parameter q in them (added or multiplied), some an older value times a buffer as it is now, maybe with an assign into it pending),
  backwards of (p * value).sum() and reads, each checked against numpy. A StaleReadError is allowed only where torch
  raises too: a buffer the value read was assigned since the value was defined (an in-place write into a saved tensor);
  the program ends there."""
  rng = random.Random(seed)
  ref = [np.arange(3, dtype=np.float32) + i for i in range(2)]
  bufs = [Tensor(r.copy()).contiguous().realize() for r in ref]
  p, q = Tensor(np.ones(3, np.float32), requires_grad=True), Tensor(np.full(3, 0.5, np.float32), requires_grad=True)
  vals: list[Tensor] = []
  vref: list[tuple[np.ndarray, np.ndarray]] = []  # value, its derivative by q (elementwise)
  gp, gq = np.zeros(3, np.float32), np.zeros(3, np.float32)
  writes, reads = [0, 0], []  # assigns into each buffer so far; per value, the buffers it read and the writes into them then
  def overwritten(j: int) -> bool: return any(writes[b] != n for b, n in reads[j])
  for _ in range(rng.randint(3, 9)):
    k, i = rng.choice("aaavvmmbbr"), rng.randrange(2)
    if k == "a":
      how = rng.choice(["self", "other", "value"] if vals else ["self", "other"])
      writes[i] += 1
      if how == "self": c = rng.choice([2.0, 0.5, -1.0]); bufs[i].assign(bufs[i] * c); ref[i] = ref[i] * c
      elif how == "other": bufs[i].assign(bufs[1 - i] + 1); ref[i] = ref[1 - i] + 1
      else:
        j = rng.randrange(len(vals))
        bufs[i].assign(vals[j].detach() + bufs[i]); ref[i] = vref[j][0] + ref[i]
    elif k == "v" or k == "m" and not vals:
      how = rng.choice(["+1", "+q", "*q"])
      v = bufs[i] * q if how == "*q" else bufs[i] * 2 + (q if how == "+q" else 1)
      r, dq = (ref[i] * 0.5, ref[i].copy()) if how == "*q" else (ref[i] * 2 + (0.5 if how == "+q" else 1), np.full(3, float(how == "+q"), np.float32))
      vals.append(v.realize() if rng.random() < 0.5 else v); vref.append((r, dq)); reads.append({(i, writes[i])})
    elif k == "m":
      j = rng.randrange(len(vals))
      i = rng.choice(sorted(reads[j]))[0]  # (a buffer value j read: maybe with an assign into it pending since)
      vals.append(vals[j] * bufs[i]); vref.append((vref[j][0] * ref[i], vref[j][1] * ref[i])); reads.append(reads[j] | {(i, writes[i])})
    elif k == "b" and vals:
      j = rng.randrange(len(vals))
      try:
        (p * vals[j]).sum().backward()
        gp += vref[j][0]; gq += vref[j][1]
        np.testing.assert_allclose(p.grad.numpy(), gp, rtol=1e-6)
        if q.grad is not None: np.testing.assert_allclose(q.grad.numpy(), gq, rtol=1e-6)
      except StaleReadError:
        assert overwritten(j), f"seed {seed}: a StaleReadError, but no buffer value {j} read was assigned since"
        return
    elif k == "r" and vals:
      j = rng.randrange(len(vals))
      try: np.testing.assert_allclose(vals[j].numpy(), vref[j][0], rtol=1e-6)
      except StaleReadError: assert overwritten(j), f"seed {seed}: a StaleReadError, but no buffer value {j} read was assigned since"
  for b, r in zip(bufs, ref): np.testing.assert_allclose(b.numpy(), r, rtol=1e-6)
  for j, (v, (r, _)) in enumerate(zip(vals, vref)):
    try: np.testing.assert_allclose(v.numpy(), r, rtol=1e-6)
    except StaleReadError: assert overwritten(j), f"seed {seed}: a StaleReadError, but no buffer value {j} read was assigned since"

@pytest.mark.parametrize("seed", range(60))
def test_backward_among_assigns_fuzz_against_numpy(seed):
  program(seed)

# ---------------------------------------------------------------- found by an outside review of the first fix

def test_backward_twice_through_a_value_folded_to_a_constant():
  """A realized value that folds to a constant is its own expression: no cycle for backward to walk into (was a KeyError)."""
  c = (Tensor.ones(3) * 2).realize()
  p = Tensor([1.0, 2.0, 3.0], requires_grad=True)
  (p * 2).sum().backward()
  (p * 2).sum().backward()
  assert p.grad.tolist() == [4.0, 4.0, 4.0] and c.tolist() == [2.0, 2.0, 2.0]

def test_gradient_with_respect_to_tensors_without_requires_grad_and_realized_intermediates():
  """Tensor.gradient(t) for t without requires_grad, below a realized value, and for each value of a realized chain: as
  torch computes them (the chain's last value was zero and the first case was zeros)."""
  bn = np.array([1.0, 2.0, 3.0], np.float32)
  b = Tensor(bn)
  x = b * 3
  x.numpy()
  assert (x * x).sum().gradient(b)[0].tolist() == (18 * bn).tolist()
  p = Tensor(bn, requires_grad=True)
  x1 = (p * 2).realize()
  x2 = (x1 * x1).realize()
  g2, g1, gp = (x2 * x2).sum().gradient(x2, x1, p)
  assert g2.tolist() == (8 * bn ** 2).tolist() and g1.tolist() == (32 * bn ** 3).tolist() and gp.tolist() == (64 * bn ** 3).tolist()

def test_a_value_realized_before_an_assign_keeps_its_gradient():
  """v = f(b + p), realized; then b is assigned: d(v.sum())/dp needs b's old values, which its own expression gives (torch's numbers)."""
  bn, pn = np.array([1.0, 2.0, 3.0], np.float32), np.full(3, 0.5, np.float32)
  for f, df in ((lambda u: u * u, lambda u: 2 * u), (lambda u: u.sigmoid(), lambda u: np.exp(-u) / (1 + np.exp(-u)) ** 2), (lambda u: u.log(), lambda u: 1 / u)):
    b = Tensor(bn).contiguous().realize()
    p = Tensor(pn, requires_grad=True)
    v = f(b + p).realize()
    b.assign(b * 10).realize()
    v.sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), df(bn + pn), rtol=1e-6)

def test_a_value_realized_along_with_another_keeps_its_graph():
  """v is realized by the realize of an assign that reads it: backward through v still reaches q (was cut: q.grad 1 for 3)."""
  b, q = Tensor([0.0, 0.0, 0.0]).contiguous().realize(), Tensor([1.0, 2.0, 3.0], requires_grad=True)
  v = q.contiguous()
  b.assign(v.detach() + b).realize()
  (v * 2 + q).sum().backward()
  assert q.grad.tolist() == [3.0, 3.0, 3.0]

def test_a_hundred_realized_values_nested():
  """Each of 100 steps realized and kept: the gradient goes through all of them (was cut after 64)."""
  p = Tensor([1.0], requires_grad=True)
  hs = [Tensor([0.0])]
  for _ in range(100): hs.append((hs[-1] + p).realize())
  hs[-1].sum().backward()
  assert p.grad.tolist() == [100.0]

def test_memory_a_tinyjit_replay_overwrote_is_a_clear_error_not_a_wrong_gradient():
  """A jitted function's output buffer is written again by its next replay: a gradient that needs the old values raises
  StaleReadError (it read the new ones: [80, 320, 720] for [8, 32, 72]); without the replay, torch's numbers."""
  from lazynb import TinyJit
  from lazynb.engine.schedule import StaleReadError
  an, bn = np.array([1.0, 2.0, 3.0], np.float32), np.array([10.0, 20.0, 30.0], np.float32)
  for replay in (False, True):
    f = TinyJit(lambda x: (x * 2).realize())
    for _ in range(3): f(Tensor(an * 0 + 5))
    p = Tensor([1.0, 1.0, 1.0], requires_grad=True)
    y = f(Tensor(an))
    v = (y * p).realize()
    if not replay:
      (v * v).sum().backward()
      assert p.grad.tolist() == (8 * an ** 2).tolist()
      continue
    f(Tensor(bn))
    with pytest.raises(StaleReadError, match="TinyJit replay"): (v * v).sum().backward()

# ---------------------------------------------------------------- found by a second outside review

def test_an_old_name_of_two_dimensional_memory_is_put_back():
  """The old-name rule through a view (a 2-D tensor is a reshape of its buffer): torch's numbers, as for 1-D (was a StaleReadError)."""
  for bn in (np.array([1.0, 2.0, 3.0, 4.0], np.float32), np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)):
    b = Tensor(bn).contiguous().realize()
    p = Tensor(np.ones(bn.shape, np.float32), requires_grad=True)
    v = (b * p).realize()
    b.assign(b * 10).realize()
    (v * p).sum().backward()
    assert p.grad.numpy().tolist() == (2 * bn).tolist()

def test_backward_outside_a_tinyjit_through_its_replayed_output_is_a_clear_error():
  """A replay writes the jitted function's output again, for inputs its recorded expression never saw: backward through it
  raises (it gave the second call's gradient for every later call); on the calls that run the function, torch's numbers."""
  from lazynb import TinyJit
  from lazynb.engine.schedule import StaleReadError
  w = Tensor([[1.0], [1.0]], requires_grad=True)
  f = TinyJit(lambda x: (x @ w).realize())
  for i in range(4):
    x = np.array([[1.0, 2.0]], np.float32) * (i + 1)
    w.grad = None
    y = f(Tensor(x))
    if i < 2:
      (y * y).sum().backward()
      assert w.grad.numpy().ravel().tolist() == (2 * x.T @ (x @ np.ones((2, 1), np.float32))).ravel().tolist()
    else:
      with pytest.raises(StaleReadError, match="TinyJit replay"): (y * y).sum().backward()

def test_gradient_for_a_lazy_value_above_a_realized_one():
  """k = h * 3 with h realized: gradient(k) is h (was zeros: putting h back rebuilt k's node, which no longer stood for k)."""
  p = Tensor([1.0, 2.0, 3.0], requires_grad=True)
  h = (p * p).realize()
  k = h * 3
  gh, gk, gp = (k * h).sum().gradient(h, k, p)
  assert gh.tolist() == [6.0, 24.0, 54.0] and gk.tolist() == [1.0, 4.0, 9.0] and gp.tolist() == [12.0, 96.0, 324.0]

# ---------------------------------------------------------------- found by a third outside review (older than the fixes above)

@pytest.mark.parametrize("realize_old", [True, False])
@pytest.mark.parametrize("loss_first", [True, False])
def test_a_gradient_that_reads_memory_before_a_pending_assign_into_it(realize_old, loss_first):
  """old = m * x, then m.assign(m * 3) left pending, loss = (old * m).sum(): d/dx is old m times new m (torch: 3), in
  either order of reading the loss and the gradient (was 9: the gradient read m after the write)."""
  x = Tensor([1.0, 2.0, 4.0], requires_grad=True)
  m = Tensor.ones(3).contiguous().realize()
  old = m * x
  if realize_old: old = old.realize()
  m.assign(m * 3)
  loss = (old * m).sum()
  if loss_first: assert loss.item() == 21.0
  loss.backward()
  assert x.grad.tolist() == [3.0, 3.0, 3.0] and loss.item() == 21.0 and m.tolist() == [3.0, 3.0, 3.0]

def test_a_gradient_through_an_assign_is_a_clear_error():
  """b.assign(b * q) with q requiring grad, then a backward through b: no gradient goes through an in-place write (tinygrad
  refuses the assign itself); the error says so and what to do, and a detached value needs no gradient through it."""
  b, q = Tensor([1.0, 2.0, 3.0]).contiguous().realize(), Tensor([2.0, 2.0, 2.0], requires_grad=True)
  b.assign(b * q)
  with pytest.raises(NotImplementedError, match=r"assign\(\), an in-place write.*x\.detach\(\)"): (b * q).sum().backward()
  c = Tensor([1.0, 2.0, 3.0]).contiguous().realize()
  c.assign(c * q.detach())
  (c * q).sum().backward()
  assert q.grad.tolist() == [2.0, 4.0, 6.0]

@pytest.mark.parametrize("how", ["assign", "setitem", "isub"])
def test_a_leaf_written_under_no_grad_after_the_loss_keeps_its_gradient(how):
  """loss = (w * x).sum(), then w written in place under no_grad, then backward: d loss/dw is x (torch gives it: w is
  not needed for it). w's memory has a new name after the write; backward found no tensor for the old one, and said
  "no tensor contributes". Where the gradient needs the old w (w * w), it is a clear error (torch's too)."""
  def run(f):
    w, x = Tensor([1.0, 2.0, 3.0], requires_grad=True).realize(), Tensor([4.0, 5.0, 6.0])
    loss = f(w, x).sum()
    with Tensor.test():
      if how == "assign": w.assign(Tensor([7.0, 8.0, 9.0])).realize()
      elif how == "setitem": w[0] = 10
      else: w -= 1; w.realize()  # noqa: E702
    loss.backward()
    return w
  np.testing.assert_array_equal(run(lambda w, x: w * x).grad.numpy(), [4.0, 5.0, 6.0])
  with pytest.raises(StaleReadError): run(lambda w, x: w * w * x).grad.numpy()  # (when the gradient is computed)
