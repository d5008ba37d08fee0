"""The simplifier's integer rules hold for integers, not always modulo 2**n: div/mod of a product or a sum and comparisons
of a shifted value are rewritten only where nothing wraps. Reference: numpy's wrapping int32/uint8 arithmetic."""
import numpy as np
import pytest
from lazynb import Tensor, Context

X0, Z0, X1 = np.array([2**30, 5, -7, 2**29 + 3], np.int32), np.array([217, 3, 0, 255], np.uint8), np.array([2**31 - 1, 4], np.int32)
CASES = [
  ("(x*4)//4", lambda t: (t * 4) // 4, X0), ("(x*4)%3", lambda t: (t * 4) % 3, X0), ("(x*6+2)//2", lambda t: (t * 6 + 2) // 2, X0),
  ("(x*8)//2", lambda t: (t * 8) // 2, X0), ("-z//255", lambda t: (-t) // 255, Z0), ("(z*3)%4", lambda t: (t * 3) % 4, Z0),
  ("(x+1)<0", lambda t: (t + 1) < 0, X1), ("(x*4)<1", lambda t: (t * 4) < 1, X0), ("(x+(-5))<2**31-1", lambda t: (t + (-5)) < (2**31 - 1), X1),
]

@pytest.mark.parametrize("noopt", [0, 1])
@pytest.mark.parametrize("device", ["CPU", "PYTHON"])
@pytest.mark.parametrize("name,f,a", CASES, ids=[c[0] for c in CASES])
def test_wrapping_int_arithmetic_is_not_simplified_away(name, f, a, device, noopt):
  with np.errstate(over="ignore"): want = f(a)
  with Context(NOOPT=noopt): got = f(Tensor(a, device=device)).numpy()
  np.testing.assert_array_equal(got, want)

def test_index_math_still_simplifies():
  """The exact index dtype keeps every rule: a reshape/permute chain's index still has no division left."""
  t = Tensor(np.arange(24, dtype=np.float32)).realize().reshape(2, 3, 4).permute(2, 0, 1).reshape(4, 6)
  idx, _ = t.uop.st.render()
  assert "//" not in idx and "%" not in idx, idx
