"""The course material's claims, with `from lazynb import ...` in place of `from tinygrad import ...`.

Seeds: 000 a tinygrad course, 001 an intro blog about UOps, 002 a hacking guide, 003 a quiz module, 004 slides.
Each test names the seed and section it checks.
"""
import re
import numpy as np
import pytest
from lazynb import Tensor, Device, dtypes, Context, GlobalCounters
from lazynb.uop import UOp, Ops
from lazynb.trace import Recorder
from lazynb.helpers import strip_ansi
from lazynb.engine import realize as realize_mod

def kernel_items(t, *more): return [si for si in t.schedule(*more) if si.kind == "kernel"]

def kernels_run(fn) -> int:
  k0 = GlobalCounters.kernel_count
  fn()
  return GlobalCounters.kernel_count - k0

def sources(fn, **ctx) -> list[str]:
  """Run fn with a forgotten program cache and return the source of every kernel it compiled."""
  realize_mod.method_cache.clear()
  with Context(**ctx), Recorder(rewrites=False) as rec: fn()
  return [e.data["program"].src for e in rec.of("program")]

@pytest.fixture
def restore_default():
  old = Device.DEFAULT
  yield
  Device.DEFAULT = old

def rnd(*shape, seed=0): return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

# ================================================================ seed 000: the tinygrad course

def test_000_verifying_setup():
  assert isinstance(Device.DEFAULT, str) and Device.DEFAULT
  np.testing.assert_array_equal(Tensor([1, 2, 3]).numpy(), [1, 2, 3])

def test_000_factory_methods():
  assert Tensor([1, 2, 3, 4]).shape == (4,)
  assert Tensor(np.array([[1.0, 2.0], [3.0, 4.0]])).dtype is dtypes.float64  # numpy's float64 is kept, as in tinygrad 0.10
  z, o = Tensor.zeros(3, 4), Tensor.ones(3, 4)
  assert z.shape == o.shape == (3, 4) and z.numpy().sum() == 0 and o.numpy().sum() == 12
  r, u = Tensor.randn(3, 4), Tensor.rand(3, 4)
  assert r.shape == u.shape == (3, 4) and r.dtype is dtypes.float32
  un = u.numpy()
  assert (un >= 0).all() and (un < 1).all()
  assert Tensor.arange(0, 10, 2).tolist() == [0, 2, 4, 6, 8]
  np.testing.assert_array_equal(Tensor.eye(4).numpy(), np.eye(4))

def test_000_operations_api():
  a, b = rnd(4, 4, seed=1), rnd(4, 4, seed=2)
  A, B = Tensor(a), Tensor(b)
  np.testing.assert_allclose((A + B).numpy(), a + b, rtol=1e-6)
  np.testing.assert_allclose((A * B).numpy(), a * b, rtol=1e-6)
  np.testing.assert_allclose(A.relu().numpy(), np.maximum(a, 0))
  np.testing.assert_allclose(A.exp().numpy(), np.exp(a), rtol=1e-5)
  np.testing.assert_allclose(A.abs().log().numpy(), np.log(np.abs(a)), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(A.abs().sqrt().numpy(), np.sqrt(np.abs(a)), rtol=1e-6)
  np.testing.assert_allclose(A.sum().numpy(), a.sum(), rtol=1e-5)
  np.testing.assert_allclose(A.sum(axis=0).numpy(), a.sum(0), rtol=1e-5)
  assert A.sum(axis=0).shape == (4,)
  m = A.max(axis=1, keepdim=True)
  assert m.shape == (4, 1)
  np.testing.assert_allclose(m.numpy(), a.max(1, keepdims=True))
  np.testing.assert_allclose((A @ B).numpy(), a @ b, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(A.T.numpy(), a.T)
  assert A.reshape(2, 8).shape == (2, 8) and A.permute(1, 0).shape == (4, 4)
  assert A.expand(2, 4, 4).shape == (2, 4, 4) and A.unsqueeze(0).shape == (1, 4, 4)
  assert A.unsqueeze(0).squeeze(0).shape == (4, 4)
  np.testing.assert_allclose(A.expand(2, 4, 4).numpy(), np.broadcast_to(a, (2, 4, 4)))

def test_000_realize_returns_same_tensor_and_item():
  t = Tensor.randn(3, 3)
  assert t.realize() is t
  arr = t.numpy()
  assert isinstance(arr, np.ndarray) and arr.shape == (3, 3)
  assert isinstance(Tensor([2.5]).sum().item(), float)

def test_000_lazy_nothing_runs_until_realize(capsys):
  a = Tensor.randn(4, 4)
  k0 = GlobalCounters.kernel_count
  b = a + 1
  c = b * 2
  d = c.relu()
  assert GlobalCounters.kernel_count == k0, "building the graph ran a kernel"
  assert not d.uop.is_realized
  with Context(DEBUG=1): d.realize()
  assert GlobalCounters.kernel_count - k0 == 1, "a+1, *2 and relu are fused into ONE kernel"
  assert "realized 1 kernel" in capsys.readouterr().out
  np.testing.assert_allclose(d.numpy(), np.maximum((a.numpy() + 1) * 2, 0), rtol=1e-6)

def test_000_uop_attribute_is_a_dag_node():
  x = Tensor([1.0, 2.0, 3.0])
  y = x + 1
  assert isinstance(y.uop, UOp)
  assert y.uop.op is Ops.ADD
  assert isinstance(y.uop.src, tuple) and all(isinstance(s, UOp) for s in y.uop.src)
  assert x.uop in y.uop.toposort()

def test_000_three_op_types_lowering():
  x = Tensor(rnd(8, seed=3))
  # relu is a WHERE, exp is a MUL then EXP2, sigmoid a chain of unary and binary ops
  assert x.relu().uop.op is Ops.WHERE
  e = x.exp().uop
  assert e.op is Ops.EXP2 and e.src[0].op is Ops.MUL
  ops = {u.op for u in x.sigmoid().uop.toposort()}
  assert {Ops.EXP2, Ops.RECIP, Ops.ADD} <= ops
  assert Ops.REDUCE_AXIS in {u.op for u in x.sum().uop.toposort()}
  assert x.reshape(2, 4).uop.op is Ops.RESHAPE
  np.testing.assert_allclose(x.sigmoid().numpy(), 1 / (1 + np.exp(-x.numpy())), rtol=1e-5)

def test_000_movement_ops_are_zero_copy():
  x = Tensor.randn(4, 8, 16).realize()
  views = [x.reshape(32, 16), x.permute(2, 0, 1), x.expand(10, 4, 8, 16), x[1:3, :, ::2]]
  for v in views:
    assert kernels_run(v.realize) == 0
    assert v.uop.base is x.uop.base
  xn = x.numpy()
  np.testing.assert_array_equal(views[1].numpy(), xn.transpose(2, 0, 1))
  np.testing.assert_array_equal(views[3].numpy(), xn[1:3, :, ::2])
  assert views[2].shape == (10, 4, 8, 16)

# ---- Project 1

def test_000_project1_fused_add_relu_sum(capsys):
  a, b = Tensor.randn(16), Tensor.randn(16)
  out = (a + b).relu().sum()
  assert len(kernel_items(out)) == 1
  with Context(DEBUG=1): n = kernels_run(out.realize)
  assert n == 1 and "realized 1 kernel" in capsys.readouterr().out

def test_000_project1_read_the_kernel():
  """DEBUG=3 task: the fused kernel has the add, the relu (a compare and select) and the sum's accumulator."""
  a, b = Tensor.randn(16), Tensor.randn(16)
  (src,) = sources(lambda: (a + b).relu().sum().realize())
  assert "+" in src and "?" in src and "acc0" in src

def test_000_project1_break_fusion_three_kernels():
  a, b = Tensor.randn(16), Tensor.randn(16)
  def run():
    c = (a + b).realize()
    d = c.relu().realize()
    d.sum().realize()
  assert kernels_run(run) == 3

def test_000_project1_schedule_before_and_after_realize():
  a, b = Tensor.randn(16), Tensor.randn(16)
  out = (a + b).relu()
  assert len(out.schedule()) == 1
  out.realize()
  assert out.schedule() == []

# ---- Project 2

def test_000_project2_movement_ops_zero_kernels(capsys):
  x = Tensor.randn(4, 4).realize()
  with Context(DEBUG=2):
    for v in (x.reshape(2, 8), x.permute(1, 0), x.reshape(4, 4, 1).expand(4, 4, 3)):
      assert kernels_run(v.realize) == 0
  assert "***" not in capsys.readouterr().out

def test_000_project2_reduce_has_loop():
  x = Tensor.randn(16, 16).realize()
  (src,) = sources(lambda: x.max(axis=0).realize(), NOOPT=1)
  assert "for (" in src and "acc0" in src

def test_000_project2_mixed_kernel_count():
  x, y = Tensor.randn(4, 4), Tensor.randn(4, 4)
  out = (x.permute(1, 0) @ y.reshape(4, 4)).sum(axis=1)
  assert len(kernel_items(out)) == 1  # the matmul's sum and the sum after it are one reduce (docs/fusion.md)
  np.testing.assert_allclose(out.numpy(), (x.numpy().T @ y.numpy()).sum(1), rtol=1e-4, atol=1e-5)

def test_000_project2_manual_matmul_matches():
  x, y = Tensor.randn(4, 3), Tensor.randn(3, 5)
  manual = (x.reshape(4, 3, 1).expand(4, 3, 5) * y.reshape(1, 3, 5).expand(4, 3, 5)).sum(axis=1)
  np.testing.assert_allclose(manual.numpy(), (x @ y).numpy(), rtol=1e-5, atol=1e-6)

# ---- Project 6

def test_000_project6_custom_ops_match_numpy():
  from math import erf
  xn, gn = rnd(8, seed=4), rnd(8, seed=5)
  x, g = Tensor(xn), Tensor(gn)
  gelu = x * 0.5 * (1 + (x / np.sqrt(2)).erf())
  np.testing.assert_allclose(gelu.numpy(), xn * 0.5 * (1 + np.vectorize(erf)(xn / np.sqrt(2))), rtol=1e-5, atol=1e-6)
  rms = x / ((x * x).mean() + 1e-6).sqrt()
  np.testing.assert_allclose(rms.numpy(), xn / np.sqrt((xn * xn).mean() + 1e-6), rtol=1e-5)
  swiglu = x * g.sigmoid()
  np.testing.assert_allclose(swiglu.numpy(), xn / (1 + np.exp(-gn)), rtol=1e-5, atol=1e-6)

def test_000_project6_fused_vs_unfused_gelu():
  x = Tensor.randn(32).realize()
  assert kernels_run(lambda: (x * 0.5 * (1 + (x / np.sqrt(2)).erf())).realize()) == 1
  def steps():
    t = (x / np.sqrt(2)).realize()
    t = t.erf().realize()
    t = (1 + t).realize()
    (x * 0.5 * t).realize()
  assert kernels_run(steps) == 4

# ---- Part 7: compiler pipeline

def test_000_stage1_schedule_of_matmul_relu_sum():
  x, y = Tensor.randn(4, 4), Tensor.randn(4, 4)
  z = (x @ y).relu().sum(axis=0)
  sched = z.schedule()
  assert len(sched) == 2
  for item in sched:
    assert item.ast.op is Ops.SINK
    assert "UOp(Ops.SINK" in str(item.ast)
  assert sum(u.op is Ops.REDUCE_AXIS for u in sched[0].ast.toposort()) == 1

def test_000_stage4_debug3_prints_c_for_matmul(capsys):
  x, y = Tensor.randn(4, 4), Tensor.randn(4, 4)
  realize_mod.method_cache.clear()
  with Context(DEBUG=3): (x @ y).realize()
  out = strip_ansi(capsys.readouterr().out)
  assert re.search(r"void r_\w+\(float\* restrict data0", out)

def test_000_algebraic_rewrites_x_times_1_plus_0():
  x = Tensor.randn(8).realize()
  (src,) = sources(lambda: (x * 1 + 0).realize())
  body = src.split("{", 1)[1]
  assert "*1" not in body.replace(" ", "") and "+0" not in re.sub(r"data\d\+0", "", body.replace(" ", ""))

# ================================================================ seed 001: intro blog about UOps

def test_001_tensor_basics():
  t = Tensor([1, 2, 3, 4])
  assert (t * 2).tolist() == [2, 4, 6, 8]
  # the blog's comment says [8, 10, 12, 14], a typo in the seed: [1,2,3,4] + 7 is [8, 9, 10, 11] (tinygrad agrees)
  assert (t + 3 + 4).tolist() == [8, 9, 10, 11]

def test_001_device_default_override(restore_default):
  Device.DEFAULT = "CPU"
  assert Device.DEFAULT == "CPU"
  Device.DEFAULT = "CLANG"  # seed 002 uses the old name: an alias of CPU
  assert Device.DEFAULT == "CPU"

def test_001_lazy_tensor_properties():
  t = Tensor([1, 2, 3, 4])
  assert t.device == Device.DEFAULT
  assert t.dtype == dtypes.int
  assert t.shape == (4,)

def test_001_uop_is_copy_of_python_buffer_before_realize():
  t = Tensor([1, 2, 3, 4])
  u = t.uop
  assert u.op is Ops.COPY and u.dtype is dtypes.int and u.arg is None
  buf, dev = u.src
  assert buf.op is Ops.BUFFER and buf.arg == 4 and buf.dtype is dtypes.int
  assert [s.op for s in buf.src] == [Ops.UNIQUE, Ops.DEVICE] and buf.src[1].arg == "PYTHON"
  assert dev.op is Ops.DEVICE and dev.arg == "CPU" == Device.DEFAULT
  text = repr(u)
  assert text.startswith("UOp(Ops.COPY, dtypes.int, arg=None, src=(") and "arg='PYTHON'" in text

def test_001_uop_is_buffer_after_realize():
  t = Tensor([1, 2, 3, 4])
  before = t.uop.src[0].src[0]
  t.realize()
  u = t.uop
  assert u.op is Ops.BUFFER and u.arg == 4 and u.dtype is dtypes.int
  uniq, dev = u.src
  assert uniq.op is Ops.UNIQUE and dev.op is Ops.DEVICE and dev.arg == "CPU"
  assert uniq is not before, "a new buffer, so a new UNIQUE"
  assert u.is_realized

def test_001_times_2_is_mul_with_broadcast_const():
  t = Tensor([1, 2, 3, 4]).realize()
  m = (t * 2).uop
  assert m.op is Ops.MUL
  assert m.src[0] is t.uop
  ex = m.src[1]
  assert ex.op is Ops.EXPAND and ex.arg == (4,)
  rs = ex.src[0]
  assert rs.op is Ops.RESHAPE and rs.arg == (1,)
  const = rs.src[0]
  assert const.op is Ops.CONST and const.arg == 2 and const.dtype is dtypes.int
  assert (t * 2).tolist() == [2, 4, 6, 8]

def test_001_smart_dedup():
  t = Tensor([1, 2, 3, 4]).realize()
  A = t * 4
  B = t * 4
  assert A is not B
  assert A.uop is B.uop
  A.realize()
  assert A.uop is B.uop
  assert kernels_run(lambda: B.tolist()) == 0
  assert B.tolist() == [4, 8, 12, 16]

def test_001_smart_dedup_unrealized_input():
  t = Tensor([1, 2, 3, 4])
  A, B = t * 4, t * 4
  assert A.uop is B.uop
  A.realize()
  assert A.uop is B.uop and B.tolist() == [4, 8, 12, 16]

def test_001_autodiff_forward_values():
  x = Tensor([2.0], requires_grad=True)
  y = x ** 2 + 3 * x + 1
  assert x.item() == 2.0 and y.item() == 11.0
  z = (x ** 2 + 1).log()
  assert z.item() == pytest.approx(np.log(5.0), rel=1e-6)

needs_grad = pytest.mark.skipif(not hasattr(Tensor, "gradient") or not hasattr(Tensor, "backward"), reason="gradients not implemented")

@needs_grad
def test_001_gradient():
  x = Tensor([2.0], requires_grad=True)
  grad, = (x ** 2 + 3 * x + 1).sum().gradient(x)
  assert grad.item() == pytest.approx(7.0)

@needs_grad
def test_001_gradient_chain_rule():
  x = Tensor([2.0], requires_grad=True)
  z = (x ** 2 + 1).log()
  grad, = z.sum().gradient(x)
  assert grad.item() == pytest.approx(0.8, rel=1e-6)

GRAD_AFTER_REALIZE = ("bug: gradient()/backward() differentiate lookup_realized(graph): an intermediate that was realized "
                      "(y.item(), loss.item()) becomes a constant buffer, so the gradient silently becomes 0 / backward raises")

@needs_grad
def test_001_gradient_seed_order():
  """The blog's exact order: loss is built, then x and y are printed (realized), then the gradient is taken."""
  x = Tensor([2.0], requires_grad=True)
  y = x ** 2 + 3 * x + 1
  loss = y.sum()
  assert x.item() == 2.0
  assert y.item() == 11.0
  grad, = loss.gradient(x)
  assert grad.item() == pytest.approx(7.0)

@needs_grad
def test_001_gradient_chain_rule_seed_order():
  x = Tensor([2.0], requires_grad=True)
  z = (x ** 2 + 1).log()
  loss = z.sum()
  assert x.item() == 2.0
  assert z.item() == pytest.approx(1.6094378232955933, rel=1e-6)
  grad, = loss.gradient(x)
  assert grad.item() == pytest.approx(0.8, rel=1e-6)

@needs_grad
def test_000_print_loss_then_backward():
  x = Tensor([1.0, 2.0], requires_grad=True)
  loss = (x * x).sum()
  assert loss.item() == 5.0
  loss.backward()
  np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])

@needs_grad
def test_000_backward_grad():
  x = Tensor([2.0, 3.0], requires_grad=True)
  (x * x).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), [4.0, 6.0])

@needs_grad
def test_000_project3_gradients_by_hand():
  xn, wn = rnd(5, seed=40), rnd(5, seed=41)
  x = Tensor(xn, requires_grad=True)
  x.pow(2).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), 2 * xn, rtol=1e-5)
  x, w = Tensor(xn, requires_grad=True), Tensor(wn, requires_grad=True)
  (x * w).sum().backward()
  np.testing.assert_allclose(w.grad.numpy(), xn, rtol=1e-6)
  x = Tensor(xn, requires_grad=True)
  x.sigmoid().sum().backward()
  s = 1 / (1 + np.exp(-xn))
  np.testing.assert_allclose(x.grad.numpy(), s * (1 - s), rtol=1e-4, atol=1e-6)

@needs_grad
def test_000_training_loop_pattern():
  """Part 6's loop, scaled down: Adam on two weight tensors, MSE to zeros; the loss must go down. The seed's loop never
  turns training mode on: tinygrad 0.10 (and lazynb) refuse the step then, so the loop runs with Tensor.train()."""
  from lazynb.nn.optim import Adam
  Tensor.manual_seed(0)
  class MLP:
    def __init__(self):
      self.l1 = Tensor.randn(16, 8) * 0.1
      self.l2 = Tensor.randn(8, 4) * 0.1
    def __call__(self, x): return x.linear(self.l1).relu().linear(self.l2)
  model = MLP()
  optim = Adam([model.l1, model.l2], lr=0.01)
  x, y_target = Tensor.randn(8, 16), Tensor.zeros(8, 4)
  losses = []
  optim.zero_grad()
  (model(x) - y_target).pow(2).mean().backward()
  with pytest.raises(RuntimeError, match="training"): optim.step()  # the seed's loop as written
  for _ in range(10):
    with Tensor.train():
      optim.zero_grad()
      loss = (model(x) - y_target).pow(2).mean()
      loss.backward()
      optim.step()
    losses.append(loss.item())
  assert losses[-1] < losses[0] * 0.5

def test_001_t_plus_3_plus_4_graph_has_two_adds():
  t = Tensor([1, 2, 3, 4])
  u = (t + 3 + 4).uop
  assert u.op is Ops.ADD and u.src[0].op is Ops.ADD
  assert u.src[0].src[0].op is Ops.COPY
  consts = sorted(n.arg for n in u.toposort() if n.op is Ops.CONST)
  assert consts == [3, 4]

def test_001_t_plus_3_plus_4_one_kernel_adds_7():
  t = Tensor([1, 2, 3, 4])
  r = t + 3 + 4
  kinds = [si.kind for si in r.schedule()]
  assert kinds.count("kernel") == 1 and kinds.count("copy") == 1
  out = []
  (src,) = sources(lambda: out.append(r.tolist()))
  assert out == [[8, 9, 10, 11]]
  assert "+7)" in src
  assert not re.search(r"(?<!data\d)\+[34]\)", src), "3 and 4 are folded into 7 (data1+3 is an index, not the constant)"

def test_001_default_opts_unroll_4_element_kernel():
  """Like the blog's E_4 listing: no loop, four loads and four stores."""
  t = Tensor([1, 2, 3, 4])
  (src,) = sources(lambda: (t + 3 + 4).realize())
  assert "for (" not in src
  assert src.lstrip().startswith("void E_4(int* restrict data0, int* restrict data1)")
  loads = re.findall(r"int val\d+ = \*\(data1\+(\d)\);", src)
  stores = re.findall(r"\*\(data0\+(\d)\) = \(val\d+\+7\);", src)
  assert sorted(loads) == ["0", "1", "2", "3"] and sorted(stores) == ["0", "1", "2", "3"]

def test_001_noopt_has_loop():
  t = Tensor([1, 2, 3, 4])
  (src,) = sources(lambda: (t + 3 + 4).realize(), NOOPT=1)
  assert re.search(r"for \(int \w+ = 0; \w+ < 4; \w+\+\+\) \{", src)
  assert len(re.findall(r"\*\(data1\+", src)) == 1 and len(re.findall(r"\*\(data0\+", src)) == 1
  assert "+7)" in src

def test_001_kernelize_then_kernel_ast():
  t = Tensor([1, 2, 3, 4])
  r = t + 3 + 4
  r.kernelize()
  assert r.uop.op is Ops.ASSIGN and r.uop.src[0].op is Ops.BUFFER and r.uop.src[1].op is Ops.KERNEL
  kernel_ast = r.uop.src[1].arg.ast
  assert kernel_ast.op is Ops.SINK
  from lazynb.codegen import full_rewrite_to_sink
  rewritten = full_rewrite_to_sink(kernel_ast)
  nodes = rewritten.toposort()
  consts = {n.arg for n in nodes if n.op is Ops.CONST and n.dtype is dtypes.int and any(p.op is Ops.ADD and n in p.src and p.src[0].op is Ops.LOAD for p in nodes)}
  assert consts == {7}
  assert sum(n.op is Ops.STORE for n in nodes) >= 1
  assert r.tolist() == [8, 9, 10, 11]

def test_001_low_level_uop_construction():
  a = UOp(Ops.CONST, dtypes.int, arg=2)
  b = UOp(Ops.CONST, dtypes.int, arg=2)
  assert a is b
  s = a + b
  assert s.op is Ops.ADD and s.src == (a, a)
  assert repr(s).startswith("UOp(Ops.ADD, dtypes.int, arg=None, src=(") and "UOp(Ops.CONST, dtypes.int, arg=2" in repr(s)

def test_001_pattern_matching_examples():
  from lazynb.uop.ops import graph_rewrite, UPat, PatternMatcher
  a = UOp(Ops.CONST, dtypes.int, arg=2)
  a_plus_b = a + a
  simple_pm = PatternMatcher([
    (UPat(Ops.ADD, src=(UPat(Ops.CONST, name="c1"), UPat(Ops.CONST, name="c2"))),
     lambda c1, c2: UOp(Ops.CONST, dtype=c1.dtype, arg=c1.arg + c2.arg)),
  ])
  simplified = graph_rewrite(a_plus_b, simple_pm)
  assert simplified is UOp(Ops.CONST, dtypes.int, arg=4)
  simpler_pm = PatternMatcher([(UPat.cvar("c1") + UPat.cvar("c2"), lambda c1, c2: c1.const_like(c1.arg + c2.arg))])
  assert graph_rewrite(a_plus_b, simple_pm) is graph_rewrite(a_plus_b, simpler_pm)

# ================================================================ seed 002: hacking guide

def test_002_inspect_graph_and_realize():
  a, b = Tensor([1, 2, 3, 4]), Tensor([5, 6, 7, 8])
  c = a + b
  d = c * 2
  assert isinstance(d.uop, UOp) and d.shape == (4,) and d.dtype is dtypes.int
  result = d.realize()
  assert result is d
  assert result.numpy().tolist() == [12, 16, 20, 24]

def test_002_debug4_matmul_prints_ir(capsys):
  a, b = Tensor.randn(8, 8), Tensor.randn(8, 8)
  realize_mod.method_cache.clear()
  with Context(DEBUG=4): (a @ b).realize()
  out = strip_ansi(capsys.readouterr().out)
  assert "AST of" in out and "UOp(Ops.SINK" in out and "linearized" in out and "void r_" in out

def test_002_exploring_the_scheduler():
  x, y = Tensor([1, 2, 3, 4]), Tensor([5, 6, 7, 8])
  z = (x + y) * 2
  schedule = z.schedule()
  assert [si.kind for si in schedule].count("kernel") == 1
  for si in schedule:
    assert si.ast is not None and isinstance(si.bufs, tuple) and len(si.bufs) >= 2
    assert str(si.ast) and str(si.bufs)
  k = next(si for si in schedule if si.kind == "kernel")
  assert len(k.bufs) == 3 and k.bufs[0].size == 4  # output, x, y
  assert z.tolist() == [12, 16, 20, 24]

def test_002_custom_activation():
  def custom_activation(x): return x * x + x.sin()
  xn = np.array([0.5, 1.0, 1.5, 2.0], dtype=np.float32)
  y = custom_activation(Tensor([0.5, 1.0, 1.5, 2.0]))
  assert len(kernel_items(y)) == 1
  np.testing.assert_allclose(y.numpy(), xn * xn + np.sin(xn), rtol=1e-5)

def test_002_inspecting_generated_kernels_on_clang(capsys, restore_default):
  Device.DEFAULT = "CLANG"
  a = Tensor.randn(1024)
  b = a.relu().exp()
  realize_mod.method_cache.clear()
  with Context(DEBUG=3): b.realize()
  out = strip_ansi(capsys.readouterr().out)
  assert "__builtin_exp2f" in out and "void E_" in out
  np.testing.assert_allclose(b.numpy(), np.exp(np.maximum(a.numpy(), 0)), rtol=1e-5)

def test_002_debugging_execution_schedule_softmax():
  x, y = Tensor.randn(10, 10), Tensor.randn(10, 10)
  z = (x @ y).relu()
  w = z.sum(axis=0)
  result = w.softmax()
  schedule = result.schedule()
  kern = [si for si in schedule if si.kind == "kernel"]
  # matmul, its relu+sum, the softmax max, the exp-sum, the division: 5 today; never fewer than the 2 reductions
  # that cannot share a kernel with their consumers, never more than one kernel per op group
  assert 2 <= len(kern) <= 5
  for si in kern: assert si.ast.op is Ops.SINK
  ref = np.maximum(x.numpy() @ y.numpy(), 0).sum(0)
  e = np.exp(ref - ref.max())
  np.testing.assert_allclose(result.numpy(), e / e.sum(), rtol=1e-4, atol=1e-6)

def test_002_watching_operation_fusion():
  x = Tensor.randn(100, 100)
  result = (((x + 1) * 2) - 1) / 2
  assert kernels_run(result.realize) == 1
  np.testing.assert_allclose(result.numpy(), (((x.numpy() + 1) * 2) - 1) / 2, rtol=1e-5)

def test_002_zero_copy_movement_ops():
  x = Tensor.randn(4, 8, 16).realize()
  y = x.permute(2, 0, 1)
  z = y.reshape(16, 32)
  w = z.reshape(16, 32, 1).expand(16, 32, 4)
  assert w.shape == (16, 32, 4)
  assert kernels_run(w.realize) == 0
  np.testing.assert_array_equal(w.numpy(), np.broadcast_to(x.numpy().transpose(2, 0, 1).reshape(16, 32, 1), (16, 32, 4)))

def test_002_debug2_kernel_names_and_shapes(capsys):
  a = Tensor.randn(4, 4).realize()
  with Context(DEBUG=2): (a * 3).sum(axis=1).realize()
  lines = [strip_ansi(l) for l in capsys.readouterr().out.splitlines()]
  assert any(l.startswith("***") and re.search(r"\br_\d", l) for l in lines)

# ================================================================ seed 003: quiz module (lazy evaluation)

def test_003_graph_built_without_executing():
  a = Tensor.randn(2, 3)
  k0 = GlobalCounters.kernel_count
  logits = (a @ Tensor.randn(3, 4)).relu()
  assert GlobalCounters.kernel_count == k0
  nodes = logits.uop.toposort()
  assert len(nodes) > 3 and len(set(nodes)) == len(nodes)  # a DAG of UOps, each node once
  logits.realize()
  assert GlobalCounters.kernel_count > k0

# ================================================================ seed 004: slides

def test_004_conv_is_two_views_a_mul_and_a_sum():
  x, w = Tensor.randn(1, 3, 8, 8).realize(), Tensor.randn(4, 3, 3, 3).realize()
  c = x.conv2d(w)
  (k,) = kernel_items(c)
  red = [u for u in k.ast.toposort() if u.op is Ops.REDUCE_AXIS]
  assert len(red) == 1 and red[0].arg[0] is Ops.ADD
  mul = red[0].src[0]
  assert mul.op is Ops.MUL and [s.op for s in mul.src] == [Ops.LOAD, Ops.LOAD]
  assert all(s.src[1].op is Ops.VIEW for s in mul.src)
  xn, wn = x.numpy(), w.numpy()
  ref = np.zeros((1, 4, 6, 6), np.float32)
  for o in range(4):
    for i in range(6):
      for j in range(6): ref[0, o, i, j] = (xn[0, :, i:i + 3, j:j + 3] * wn[o]).sum()
  np.testing.assert_allclose(c.numpy(), ref, rtol=1e-4, atol=1e-4)

def test_004_view_has_shape_strides_offset_mask():
  from lazynb.shape import View
  v = View.create((4, 4)).pad(((1, 0), (0, 0)))
  assert (v.shape, v.strides, v.offset, v.mask) == ((5, 4), (4, 1), -4, ((1, 5), (0, 4)))

def test_004_reshape_can_make_multiview_shapetracker():
  x = Tensor.randn(4, 8).realize()
  (k,) = kernel_items(x.permute(1, 0).reshape(32) + 1)
  sts = [u.arg for u in k.ast.toposort() if u.op is Ops.VIEW]
  assert any(len(st.views) > 1 for st in sts)

# ---- Project 5, task 5: BEAM search ("What tile size did BEAM choose?")

@pytest.mark.slow
def test_000_project5_beam_result_is_correct_and_reported():
  a = rnd(4, 6, seed=20)
  realize_mod.method_cache.clear()
  with Context(BEAM=2), Recorder(rewrites=False) as rec:
    out = Tensor(a).sum(axis=1).numpy()
  np.testing.assert_allclose(out, a.sum(1), rtol=1e-5, atol=1e-6)
  (beam,) = rec.of("beam")
  (prg,) = rec.of("program")
  assert list(beam.data["opts"]) == list(prg.data["program"].opts)

@pytest.mark.slow
def test_000_project5_beam_progress_names_the_chosen_opts(monkeypatch, capsys):
  """Regression: the progress line once named the losing round's best opts. Make BEAM's starting kernel the
  fastest (fake timings): BEAM keeps it, and what it prints must name exactly those opts."""
  from types import SimpleNamespace
  from lazynb.engine import search
  timer = getattr(search, "_Timer", None)
  if timer is None or not hasattr(timer, "time") or not hasattr(timer, "compile_all"): pytest.skip("BEAM internals changed")
  state = {"start": None}
  def fake_time(self, r, runs, *_, **__):
    opts = tuple(r.p.opts)
    if state["start"] is None: state["start"] = opts  # the first kernel timed is where the search starts
    return 1e-6 if opts == state["start"] else 2e-6
  monkeypatch.setenv("IGNORE_BEAM_CACHE", "1")
  monkeypatch.setattr(timer, "compile_all", lambda self, ks: [SimpleNamespace(p=SimpleNamespace(opts=list(k.applied_opts))) for k in ks])
  monkeypatch.setattr(timer, "time", fake_time)
  realize_mod.method_cache.clear()
  with Context(BEAM=2), Recorder(rewrites=False) as rec:
    (Tensor(rnd(4, 4, seed=22)) @ Tensor(rnd(4, 4, seed=23))).realize()
  (beam,) = rec.of("beam")
  assert tuple(beam.data["opts"]) == state["start"]
  last = [l for l in capsys.readouterr().out.replace("\r", "\n").splitlines() if l.startswith("BEAM")][-1]  # (stdout: stderr showed red)
  assert last.rstrip().endswith(repr(list(state["start"]))), f"BEAM kept {list(state['start'])} but printed: {last!r}"

# ---- Part 8 / Project 7: a custom backend from the course's skeleton (Allocator, Compiler, Runner, Compiled)

@pytest.fixture
def my_device():
  import ctypes, itertools, os, shutil, subprocess, tempfile
  from lazynb.device import Compiled, Allocator, Compiler, Runner
  from lazynb.renderer.cstyle import CStyleLanguage
  cc = next((c for c in (os.environ.get("CC"), "clang", "cc", "gcc") if c and shutil.which(c)), None)
  if cc is None: pytest.skip("no C compiler")
  calls = {"alloc": 0, "compile": 0, "run": 0}
  class SeedAllocator(Allocator):
    def _alloc(self, size, options):
      calls["alloc"] += 1
      return ctypes.create_string_buffer(size)
    def _free(self, buf, options): pass
    def copyin(self, dst, src: memoryview): ctypes.memmove(dst, bytes(src), len(src))
    def copyout(self, dst: memoryview, src): dst[:] = ctypes.string_at(src, len(dst))
  class SeedCompiler(Compiler):
    def compile(self, src: str) -> bytes:
      calls["compile"] += 1
      with tempfile.TemporaryDirectory() as d:
        so = os.path.join(d, "k.so")
        subprocess.run([cc, "-shared", "-fPIC", "-O1", "-x", "c", "-", "-o", so], input=src.encode(), check=True, capture_output=True)
        return open(so, "rb").read()
  class SeedRunner(Runner):
    def __init__(self, name, lib):
      fd, path = tempfile.mkstemp(suffix=".so")
      os.write(fd, lib); os.close(fd)  # noqa: E702
      self.fxn = getattr(ctypes.CDLL(path), name)
    def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False):
      calls["run"] += 1
      ptrs = [ctypes.cast(b, ctypes.c_void_p) for b in bufs]
      for g in itertools.product(*[range(n) for n in global_size]):  # the global loop, in Python
        self.fxn(*ptrs, *[ctypes.c_int(i) for i in g])
  class SeedDevice(Compiled):
    def __init__(self, device):
      super().__init__(device, SeedAllocator(), CStyleLanguage(), SeedCompiler(), SeedRunner)
  Device._devices["MYSEED"] = SeedDevice
  yield calls
  Device._devices.pop("MYSEED", None)
  Device._opened.pop("MYSEED", None)

def test_000_project7_part_a_allocator_roundtrip(my_device):
  alloc = Device["MYSEED"].allocator
  buf = alloc.alloc(12)
  src = np.array([1.5, -2.0, 3.25], dtype=np.float32)
  alloc.copyin(buf, memoryview(src.view(np.uint8)))
  out = np.empty(3, dtype=np.float32)
  alloc.copyout(memoryview(out.view(np.uint8)), buf)
  np.testing.assert_array_equal(out, src)

def test_000_project7_part_d_integration(my_device):
  out = (Tensor([1, 2, 3], device="MYSEED") + Tensor([4, 5, 6], device="MYSEED")).tolist()
  assert out == [5, 7, 9]
  assert my_device["compile"] >= 1 and my_device["run"] >= 1

def test_000_project7_two_global_axes_and_reduce(my_device):
  """The runner's grid order must match the kernel's gidx arguments (non-square, permuted, no upcast)."""
  a, b = np.arange(51, dtype=np.float32).reshape(17, 3), np.arange(51, dtype=np.float32).reshape(3, 17)
  np.testing.assert_array_equal((Tensor(a, device="MYSEED").T + Tensor(b, device="MYSEED")).numpy(), a.T + b)
  m, n = rnd(3, 5, seed=30), rnd(5, 2, seed=31)
  np.testing.assert_allclose((Tensor(m, device="MYSEED") @ Tensor(n, device="MYSEED")).numpy(), m @ n, rtol=1e-5, atol=1e-5)
