"""x ** y at every edge value: values as numpy (C's pow; zeros' signs included), gradients as torch defines them, for a
constant exponent and a tensor one. Issue 31.2: pow gradients at 0 and at negative bases."""
import numpy as np, pytest, torch
from lazynb import Tensor

BASES = [-3.0, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, np.inf, -np.inf, np.nan]
EXPS = [-3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 8.0, 9.0, -np.inf, np.inf, np.nan]

def same(got, want):
  got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
  ok = np.isclose(got, want, rtol=1e-4, atol=1e-6, equal_nan=True) & (np.signbit(got) == np.signbit(want)) | np.isnan(want) & np.isnan(got)
  assert ok.all(), f"at bases {np.array(BASES)[~ok]}: got {got[~ok]}, want {want[~ok]}"

@pytest.mark.parametrize("e", EXPS)
def test_values_as_numpy(e):
  """A tensor exponent: C's pow, as np.power of two arrays. A constant one: as numpy's array ** scalar (the same but
  for 0.5, which numpy and torch take as sqrt: -0.0 at -0.0, NaN at -inf)."""
  b = np.array(BASES, np.float32)
  same((Tensor(BASES) ** Tensor([e] * len(BASES))).numpy(), np.power(b, np.full_like(b, e)))
  if np.isfinite(e): same((Tensor(BASES) ** e).numpy(), b ** np.float32(e))

@pytest.mark.parametrize("e", [x for x in EXPS if np.isfinite(x)])
@pytest.mark.parametrize("exponent", ["const", "tensor"])
def test_gradients_as_torch(e, exponent):
  x, tx = Tensor(BASES, requires_grad=True), torch.tensor(BASES, requires_grad=True)
  y, ty = Tensor([e] * len(BASES), requires_grad=True), torch.tensor([e] * len(BASES), requires_grad=True)
  if exponent == "const": (x ** e).sum().backward(); (tx ** e).sum().backward()
  else: (x ** y).sum().backward(); (tx ** ty).sum().backward()
  # torch's own x ** -0.5 is rsqrt, whose gradient at -inf is NaN; C's pow (and ours) gives -inf ** -0.5 = 0 there
  keep = [i for i, b in enumerate(BASES) if not (e == -0.5 and b == -np.inf)]
  same(x.grad.numpy()[keep], tx.grad.numpy()[keep])
  if exponent == "tensor": same(y.grad.numpy(), ty.grad.numpy())

def test_power_zero_keeps_the_graph():
  """x ** 0 is 1 everywhere, yet still a function of x: backward reaches x with gradient 0 (it used to raise)."""
  x = Tensor([0.0, 2.0, np.inf, np.nan], requires_grad=True)
  y = x ** 0
  y.sum().backward()
  assert y.tolist() == [1.0] * 4 and x.grad.tolist() == [0.0] * 4

def test_int_powers_stay_exact():
  assert (Tensor([3, -3, 7], dtype="int64") ** 21).tolist() == [3 ** 21, (-3) ** 21, (7 ** 21 + 2 ** 63) % 2 ** 64 - 2 ** 63]
  assert (Tensor([2.0, -3.0]) ** 2).tolist() == [4.0, 9.0] and (Tensor([-2.0]) ** 3).tolist() == [-8.0]

@pytest.mark.parametrize("e", [e for e in EXPS if np.isfinite(e)])
def test_a_0d_constant_tensor_exponent_is_the_constant(e):
  """x ** Tensor(e) (a 0-d constant) takes the constant's path (x ** Tensor(2.0) is one multiply, tinygrad's
  test_pow_2_has_1_mul): the same values as x ** e, and as numpy's."""
  b = np.array(BASES, np.float32)
  same((Tensor(BASES) ** Tensor(e)).numpy(), (Tensor(BASES) ** e).numpy())
  same((Tensor(BASES) ** Tensor(e)).numpy(), b ** np.float32(e))

@pytest.mark.parametrize("base", [2.0, 10.0, 0.5, 1e-3, 1.0])
def test_a_positive_constant_base_is_exp2(base):
  """base ** x for a positive constant base is exp2(x * log2(base)): 2.0 ** x is one EXP2 (tinygrad's
  test_2_pow_is_exp2); values as numpy's at every edge exponent (1.0 ** x keeps pow's path: 1 ** inf is 1)."""
  from lazynb.uop.ops import Ops, GroupOp
  e = np.array(EXPS, np.float32)
  t = base ** Tensor(EXPS)
  if base == 2.0:
    (si,) = [si for si in t.schedule() if si.kind == "kernel"]  # (and the list's copy to the device)
    assert [u.op for u in si.ast.toposort() if u.op in GroupOp.ALU] == [Ops.EXP2]
  got, want = t.numpy().astype(np.float64), np.float32(base) ** e
  assert (np.isclose(got, want, rtol=2e-6) | np.isnan(want) & np.isnan(got) | (got == want)).all(), (got, want)

def test_an_int_tensor_to_the_power_zero_is_a_constant():
  t = Tensor([1, 2, 3, 4]) ** Tensor(0.0)
  assert t.schedule() == [] and t.tolist() == [1, 1, 1, 1]
