"""Bad input raises what tinygrad 0.10.3 raises (its own tests check the class, sometimes the words): each case runs on
both libraries, and lazynb's error must be an instance of tinygrad's error class, with tinygrad's key words."""
import pytest
import lazynb
tinygrad = pytest.importorskip("tinygrad")  # (the test extra pins tinygrad==0.10.3)

CASES = {
  "unknown dtype name": lambda T: T([1.0, 2.0]).sum(dtype=""),
  "einsum with an operand too many": lambda T: T.einsum("ij,jk->ij", T.zeros(10, 15), T.zeros(15, 20), T.zeros(20, 10)),
  "einsum with an operand too few": lambda T: T.einsum("ij,jk,kl->il", T.zeros(10, 15), T.zeros(15, 20)),
  "two ellipses": lambda T: T.zeros(2, 3, 4)[..., ...],
  "bitwise and of floats": lambda T: (T([1.0]) & T([2.0])).tolist(),
  "bitwise or of a float and an int": lambda T: (T([1.0]) | T([1])).tolist(),
  "an unknown rounding mode": lambda T: T([7]).div(2, rounding_mode="round").tolist(),
  "matmul inner sizes differ": lambda T: T.ones(2, 4) @ T.ones(1, 3),
  "matmul of a vector and a mismatched matrix": lambda T: T.ones(4).matmul(T.ones(1, 2)),
  "matmul of a 0-d tensor": lambda T: T(2.0) @ T.ones(3, 3),
  "permute with an axis missing": lambda T: T.ones(3, 4, 5, 6).permute((0, 2)),
  "permute with an axis twice": lambda T: T.ones(3, 4, 5, 6).permute((0, 0, 1, 2)),
  "flip of an axis twice": lambda T: T.ones(3, 4).flip((1, -1)),
  "reshape with two -1": lambda T: T.ones(3, 4).reshape((-1, -1, 2)),
  "gather index of other rank": lambda T: T.ones(4, 5, 6).gather(0, T([1], dtype="int32")),
  "scatter index larger than the tensor": lambda T: T.ones(2, 3, 10).scatter(1, T.zeros(10, 3, 10, dtype="int32"), T.ones(10, 3, 10)),
  "conv kernel larger than the input": lambda T: T.ones(1, 1, 6, 7).conv2d(T.ones(6, 1, 3, 3), dilation=3),
  "einsum sizes of a letter differ": lambda T: T.einsum("ij,jk->ik", T.ones(2, 3), T.ones(4, 5)),
  "clip with neither bound": lambda T: T.ones(3).clip(None, None),
  "scatter src smaller than the index": lambda T: T.ones(10, 3, 10).scatter(1, T.zeros(10, 3, 10, dtype="int32"), T.ones(3, 3, 5)),
  "linspace of bools": lambda T: T.linspace(5, 10, 3, dtype="bool"),
}
WORDS = {"two ellipses": "single ellipsis"}

def raised(fn, T) -> BaseException:
  try: fn(T)
  except Exception as e: return e  # noqa: BLE001 (any class: compared below)
  raise AssertionError(f"{T.__module__}: no error")

@pytest.mark.parametrize("case", sorted(CASES))
def test_error_class_matches_tinygrad(case):
  want, got = raised(CASES[case], tinygrad.Tensor), raised(CASES[case], lazynb.Tensor)
  assert isinstance(got, type(want)), f"tinygrad raises {type(want).__name__}, lazynb {type(got).__name__}: {got}"
  if case in WORDS: assert WORDS[case] in str(want) and WORDS[case] in str(got), (str(want), str(got))
