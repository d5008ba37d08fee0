"""The realize/autograd registries live in one object, `lazynb.runstate.state`: its counts follow what the program does,
its entries die with the tensors and nodes they are about, and no module keeps a registry of its own."""
import ast, gc, pathlib, weakref
import numpy as np
from lazynb import Tensor, TinyJit
from lazynb.runstate import state, RunState
from lazynb.engine import schedule, realize
from lazynb import tensor as tensor_mod

def counts() -> dict[str, int]:
  gc.collect()
  return state.describe()

def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
  return {k: after[k] - before[k] for k in before if after[k] != before[k]}

def test_realizing_a_computed_tensor_adds_a_buffer_and_a_cache_entry_that_go_with_it():
  x = Tensor(np.arange(16, dtype=np.float32)).realize()
  before = counts()
  y = (x * 3 + 1).realize()
  after = counts()
  d = delta(before, after)
  # one new buffer (allocated), one cache entry for the expression, and the way back to it for backward()
  assert d.get("buffers") == 1 and d.get("allocated") == 1, d
  assert d.get("realized") == 1 and d.get("computed_from") == 1, d
  assert d.get("live", 0) >= 1, d
  assert d.get("owned", 0) == 0, d  # a plain expression's buffer is shared by equal expressions: nobody owns it
  np.testing.assert_allclose(y.numpy(), np.arange(16) * 3 + 1)
  del y
  gone = counts()
  assert {k: gone[k] for k in ("buffers", "allocated", "realized", "computed_from", "live")} == \
         {k: before[k] for k in ("buffers", "allocated", "realized", "computed_from", "live")}, delta(before, gone)

def test_host_data_and_contiguous_make_owned_buffers():
  before = counts()
  a = Tensor([1.0, 2.0, 3.0]).realize()
  b = (a + 1).contiguous().realize()
  d = delta(before, counts())
  assert d.get("owned", 0) >= 2, d  # a's memory and b's own copy
  assert a.uop.base in state.owned and b.uop.base in state.owned
  assert (a + 5).realize().uop.base not in state.owned
  del a, b
  assert counts()["owned"] == before["owned"]

def test_requires_grad_registers_the_tensor_until_it_is_dropped_or_turned_off():
  before = counts()
  w = Tensor([1.0, 2.0], requires_grad=True)
  assert counts()["grad_tensors"] == before["grad_tensors"] + 1 and w in state.grad_tensors
  w.requires_grad = False  # (a WeakSet of tensors raised here: its lookup asked Tensor.__eq__ for a truth value)
  assert counts()["grad_tensors"] == before["grad_tensors"] and w not in state.grad_tensors
  assert w in state.live
  w.requires_grad = True
  del w
  assert counts()["grad_tensors"] == before["grad_tensors"]

def test_backward_remembers_its_loss_weakly():
  w = Tensor([1.0, 2.0, 3.0], requires_grad=True)
  loss = (w * w).sum()
  loss.backward()
  assert state.last_backward is not None and state.last_backward() is loss
  assert counts()["last_backward"] == 1
  np.testing.assert_allclose(w.grad.numpy(), [2.0, 4.0, 6.0])
  del loss
  assert counts()["last_backward"] == 0  # the weak reference does not keep the loss alive

def test_a_lazy_assign_is_pending_until_realized_then_the_old_name_is_superseded():
  a = Tensor([1.0, 2.0, 3.0]).contiguous().realize()
  old = a.uop.base
  before = counts()
  a.assign(Tensor([4.0, 5.0, 6.0]))
  assert counts()["pending_assigns"] == before["pending_assigns"] + 1
  a.realize()
  after = counts()
  assert after["pending_assigns"] == before["pending_assigns"], delta(before, after)
  assert old in state.superseded and state.superseded[old] is a.uop.base and a.uop.base in state.owned
  assert after["superseded"] == before["superseded"] + 1
  np.testing.assert_allclose(a.numpy(), [4.0, 5.0, 6.0])
  del a, old
  assert counts()["superseded"] == before["superseded"]  # the entry dies with the old name

def test_tinyjit_capture_is_recorded_in_the_state_only_while_it_watches():
  seen = []
  @TinyJit
  def step(x: Tensor) -> Tensor:
    out = (x * 2).realize()
    seen.append(state.describe()["capturing"])
    return out
  for i in range(3): step(Tensor([float(i), 1.0]))
  # calls 1 and 2 run the function while watching it (the record holds the kernel and host writes so far); call 3 replays
  assert len(seen) == 2 and all(n >= 1 for n in seen), seen
  assert state.capturing is None and not state.realized.volatile

def test_describe_and_repr_name_every_registry():
  d = state.describe()
  assert set(d) == {"buffers", "allocated", "realized", "superseded", "owned", "live", "grad_tensors", "pending_assigns",
                    "computed_from", "custom_grads", "metadata", "last_backward", "capturing"}
  assert all(isinstance(v, int) for v in d.values())
  r = repr(state)
  assert r.startswith("RunState(") and "grad_tensors=" in r and "realized=" in r
  fresh = RunState().describe()
  assert fresh["capturing"] == -1 and all(v == 0 for k, v in fresh.items() if k != "capturing"), fresh

def test_the_old_module_level_registries_are_gone():
  for mod, names in ((schedule, ("realized", "superseded", "owned", "Realized")), (realize, ("capturing",)),
                     (tensor_mod, ("_grad_tensors", "_live", "_pending_assigns", "computed_from", "_last_backward", "_grad_leaf_uops"))):
    assert not [n for n in names if hasattr(mod, n)], mod.__name__
  import lazynb.uop.ops as ops
  assert not hasattr(ops, "buffers")

def test_no_module_but_runstate_keeps_a_weak_registry():
  """A module-level WeakKeyDictionary or WeakSet outside runstate.py would be a second owner of realize state."""
  root = pathlib.Path(__file__).resolve().parents[1] / "lazynb"
  found = []
  for path in sorted(root.rglob("*.py")):
    if path.name == "runstate.py" or "notebook" in path.parts: continue
    for node in ast.parse(path.read_text()).body:
      value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
      name = getattr(value.func, "attr", getattr(value.func, "id", None)) if isinstance(value, ast.Call) else None
      if name in ("WeakKeyDictionary", "WeakSet", "WeakValueDictionary"):
        found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
  assert found == []

def test_no_gradient_rule_keeps_a_tensor_alive():
  """A rule whose backward held a tensor kept it a live lazy value: realize() and a TinyJit capture computed it as a
  kernel of its own (softmax's rule made a jitted attention compile one more program). Every rule lazynb registers
  (softmax, log_softmax, pow, conv2d, max_unpool2d) holds none, and registering one that does is a TypeError."""
  import pytest
  from lazynb.gradient import custom_gradient
  x = Tensor.rand(2, 3, 4, 4, requires_grad=True)
  pooled, idx = x.max_pool2d(return_indices=True)
  outs = [x.softmax(), x.log_softmax(), x ** 2.5, x.conv2d(Tensor.rand(2, 3, 3, 3)), pooled.max_unpool2d(idx)]
  for o in outs:
    rule = state.custom_grads[o.uop] if o.uop in state.custom_grads else state.custom_grads[o.uop.base] if o.uop.base in state.custom_grads else None
    rule = rule or next(state.custom_grads[u] for u in o.uop.toposort() if u in state.custom_grads)
    held = [c.cell_contents for c in rule.backward.__closure__ or ()]
    assert not any(isinstance(h, Tensor) for h in held), (rule.name, held)
  y = x.exp()
  def leaky(grad, inputs, wanted): return (y.uop,)
  with pytest.raises(TypeError, match="holds the tensor 'y'"): custom_gradient(y.uop, "leaky", (x.uop,), leaky)

def test_custom_gradient_rule_dies_with_its_node():
  """conv2d gives its output a gradient rule (state.custom_grads); the rule holds the conv's inputs, never its output,
  so dropping the output frees the entry and the graph."""
  gc.collect()
  before = state.describe()["custom_grads"]
  x, w = Tensor.rand(1, 2, 6, 6, requires_grad=True), Tensor.rand(3, 2, 3, 3, requires_grad=True)
  y = x.conv2d(w)
  assert state.describe()["custom_grads"] == before + 1
  ref = weakref.ref(y.uop)
  del y
  gc.collect()
  assert ref() is None and state.describe()["custom_grads"] == before
