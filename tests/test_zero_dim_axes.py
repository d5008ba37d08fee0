"""0-d tensors and axes: torch (and tinygrad 0.10) take axis 0 or -1 on a 0-d tensor as its one element, so
`Tensor(3.0).sum(0)`, `.softmax()`, `.sort()`, `.topk(1)` ... work and give shape (). Every axis-taking Tensor method is
run on 0-d input against torch (values, shape, dtype), and against lazynb's own answer for a vector of one element (for int
and bool input, whose promotions torch does its own way). Where torch refuses a 0-d tensor (split, cat, roll, size(dim)),
lazynb raises a clear error too, and an axis out of range names the valid range. A new method with an axis parameter and
no row here fails `test_every_axis_method_is_covered`."""
import inspect
import math
import numpy as np
import pytest
from lazynb import Tensor, dtypes

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

def _idx(t, tt): return t if isinstance(t, Tensor) else tt  # noqa: E731

# name -> (lazynb call, torch call), each taking (x, axis); None for torch: torch refuses a 0-d tensor there, so must lazynb
ACCEPTS = {
  "sum": (lambda x, a: x.sum(a), lambda x, a: x.sum(a)),
  "sum keepdim": (lambda x, a: x.sum(a, keepdim=True), lambda x, a: x.sum(a, keepdim=True)),
  "prod": (lambda x, a: x.prod(a), lambda x, a: x.prod(a)),
  "max": (lambda x, a: x.max(a), lambda x, a: x.amax(a)),
  "min": (lambda x, a: x.min(a, keepdim=True), lambda x, a: x.amin(a, keepdim=True)),
  "mean": (lambda x, a: x.mean(a), lambda x, a: x.mean(a)),
  "var": (lambda x, a: x.var(a), lambda x, a: x.var(a)),
  "var correction=0": (lambda x, a: x.var(a, correction=0), lambda x, a: x.var(a, correction=0)),
  "std": (lambda x, a: x.std(a, correction=0), lambda x, a: x.std(a, correction=0)),
  "var_mean": (lambda x, a: x.var_mean(a), lambda x, a: torch.var_mean(x, a)),
  "std_mean": (lambda x, a: x.std_mean(a, correction=0), lambda x, a: torch.std_mean(x, a, correction=0)),
  "logsumexp": (lambda x, a: x.logsumexp(a), lambda x, a: x.logsumexp(a)),
  "all": (lambda x, a: x.all(a), lambda x, a: x.all(a)),
  "any": (lambda x, a: x.any(a, keepdim=True), lambda x, a: x.any(a, keepdim=True)),
  "argmax": (lambda x, a: x.argmax(a), lambda x, a: x.argmax(a)),
  "argmax keepdim": (lambda x, a: x.argmax(a, keepdim=True), lambda x, a: x.argmax(a, keepdim=True)),
  "argmin": (lambda x, a: x.argmin(a), lambda x, a: x.argmin(a)),
  "softmax": (lambda x, a: x.softmax(a), lambda x, a: x.float().softmax(a)),
  "log_softmax": (lambda x, a: x.log_softmax(a), lambda x, a: x.float().log_softmax(a)),
  "cumsum": (lambda x, a: x.cumsum(a), lambda x, a: x.cumsum(a)),
  "cumprod": (lambda x, a: x.cumprod(a), lambda x, a: x.cumprod(a)),
  "cummax": (lambda x, a: x.cummax(a), lambda x, a: x.cummax(a).values),
  "logcumsumexp": (lambda x, a: x.logcumsumexp(a), lambda x, a: x.float().logcumsumexp(a)),
  "sort": (lambda x, a: x.sort(a), lambda x, a: tuple(x.sort(a))),
  "sort descending": (lambda x, a: x.sort(a, descending=True), lambda x, a: tuple(x.sort(a, descending=True))),
  "topk": (lambda x, a: x.topk(1, a), lambda x, a: tuple(x.topk(1, a))),
  "topk smallest": (lambda x, a: x.topk(1, a, largest=False), lambda x, a: tuple(x.topk(1, a, largest=False))),
  "flip": (lambda x, a: x.flip(a), lambda x, a: x.flip(a)),
  "squeeze": (lambda x, a: x.squeeze(a), lambda x, a: x.squeeze(a)),
  "unsqueeze": (lambda x, a: x.unsqueeze(a), lambda x, a: x.unsqueeze(a)),
  "flatten": (lambda x, a: x.flatten(a, a), lambda x, a: x.flatten(a, a)),
  "transpose": (lambda x, a: x.transpose(0, a), lambda x, a: x.transpose(0, a)),
  "permute": (lambda x, a: x.permute(), lambda x, a: x.permute(())),
  "stack": (lambda x, a: x.stack(x, dim=a), lambda x, a: torch.stack([x, x], a)),
  "gather": (lambda x, a: x.gather(a, Tensor(0)), lambda x, a: x.gather(a, torch.tensor(0))),
  "scatter": (lambda x, a: x.scatter(a, Tensor(0), x * 2), lambda x, a: x.scatter(a, torch.tensor(0), x * 2)),
  "scatter_reduce": (lambda x, a: x.scatter_reduce(a, Tensor(0), x + x, "sum"), lambda x, a: x.scatter_reduce(a, torch.tensor(0), x + x, "sum")),
  "scatter_reduce amax": (lambda x, a: x.scatter_reduce(a, Tensor(0), x - 1, "amax", include_self=False),
                          lambda x, a: x.scatter_reduce(a, torch.tensor(0), x - 1, "amax", include_self=False)),
  "layernorm": (lambda x, a: x.layernorm(a), lambda x, a: (x - x.mean(a, keepdim=True)) * (x.var(a, keepdim=True, correction=0) + 1e-5).rsqrt()),
  "batchnorm": (lambda x, a: x.batchnorm(Tensor(2.0), Tensor(1.0), Tensor(1.0), Tensor(0.5), axis=a), lambda x, a: (x - 1) * 2 * 0.5 + 1),
}
# torch refuses these on a 0-d tensor: lazynb says so clearly, as an IndexError naming the 0-d tensor
REFUSES = {
  "split": (lambda x, a: x.split(1, a), lambda x, a: x.split(1, a)),
  "chunk": (lambda x, a: x.chunk(1, a), lambda x, a: x.chunk(1, a)),
  "cat": (lambda x, a: x.cat(x, dim=a), lambda x, a: torch.cat([x, x], a)),
  "roll": (lambda x, a: x.roll(1, a), lambda x, a: x.roll(1, a)),
  "size": (lambda x, a: x.size(a), lambda x, a: x.size(a)),
  "repeat_interleave": (lambda x, a: x.repeat_interleave(2, a), lambda x, a: x.repeat_interleave(2, a + 1)),
}
# what a 0-d tensor gives where torch has no answer (tinygrad 0.10.3 gives the same): unflatten(0, (1,)) is shape (1,)
OTHER = {"unflatten": lambda x, a: x.unflatten(a, (1,)), "shard": lambda x, a: x.shard(("CPU",), axis=a)}

INPUTS = {"float32": (3.0, torch.float32), "negative": (-1.5, torch.float32), "int32": (-2, torch.int32), "bool": (True, torch.bool)}
INDEX_OUTPUTS = {"argmax", "argmax keepdim", "argmin"}  # lazynb's indices are int32, as tinygrad's (torch: int64)

def _np(r): return [(tuple(t.shape), t.numpy()) for t in (r if isinstance(r, tuple) else (r,))]

def _skip(name: str, kind: str) -> bool:
  """Float-only methods (as in torch) are left out for int and bool input; bool has no arithmetic ones."""
  floaty = {"var", "var correction=0", "std", "var_mean", "std_mean", "logsumexp", "layernorm", "batchnorm", "softmax", "log_softmax",
            "logcumsumexp", "mean"}
  if kind in ("int32", "bool") and name in floaty: return True
  return kind == "bool" and name in {"sum", "sum keepdim", "prod", "cumsum", "cumprod", "scatter_reduce", "scatter_reduce amax", "scatter",
                                      "sort", "sort descending", "topk", "topk smallest", "argmax", "argmax keepdim", "argmin"}

@pytest.mark.parametrize("kind", list(INPUTS))
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("name", list(ACCEPTS))
def test_axis_methods_on_0d_match_torch(name, axis, kind):
  if _skip(name, kind): return  # not defined there in torch
  val, tdt = INPUTS[kind]
  ours, theirs = ACCEPTS[name]
  x = Tensor(val) if kind != "int32" else Tensor(val, dtype=dtypes.int32)
  got = _np(ours(x, axis))
  with np.errstate(all="ignore"):
    want_t = theirs(torch.tensor(val, dtype=tdt), axis)
  want = [(tuple(t.shape), t.numpy()) for t in (want_t if isinstance(want_t, tuple) else (want_t,))]
  # the same method on a vector of one element, reshaped as torch would: lazynb's own dtype rules
  vec = ours(x.reshape(1), 0) if name not in ("permute", "stack", "unsqueeze", "flatten", "gather", "scatter", "scatter_reduce",
                                             "scatter_reduce amax", "transpose", "batchnorm") else None
  assert len(got) == len(want), f"{name}: {len(got)} results, torch gives {len(want)}"
  for i, ((gs, g), (ws, w)) in enumerate(zip(got, want)):
    assert gs == ws, f"{name}({axis}) on {kind}: shape {gs}, torch gives {ws}"
    if kind == "float32" or kind == "negative":
      want_dt = np.dtype(np.int32) if name in INDEX_OUTPUTS or name.startswith(("sort", "topk")) and i == 1 else w.dtype
      assert g.dtype == want_dt, f"{name}({axis}) on {kind}: dtype {g.dtype}, torch gives {w.dtype}"
      np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-6, equal_nan=True, err_msg=f"{name}({axis})")
    else:
      np.testing.assert_array_equal(g.astype(np.float64), w.astype(np.float64), err_msg=f"{name}({axis}) on {kind}")
    if vec is not None:
      v = (vec if isinstance(vec, tuple) else (vec,))[i]
      assert g.dtype == v.numpy().dtype, f"{name}({axis}) on {kind}: dtype {g.dtype}, a vector of one gives {v.numpy().dtype}"

@pytest.mark.parametrize("name", list(REFUSES))
def test_axis_methods_torch_refuses_on_0d_raise_clearly(name):
  ours, theirs = REFUSES[name]
  with pytest.raises((IndexError, RuntimeError)): theirs(torch.tensor(3.0), 0)
  for axis in (0, -1):
    with pytest.raises(IndexError, match="0-d tensor"): ours(Tensor(3.0), axis)

def test_unflatten_on_0d_as_tinygrad():
  r = OTHER["unflatten"](Tensor(3.0), 0)
  assert r.shape == (1,) and r.numpy().tolist() == [3.0]
  assert OTHER["shard"](Tensor(3.0), None).item() == 3.0  # one device: the tensor itself; a 0-d one has no axis to split
  with pytest.raises(IndexError): OTHER["shard"](Tensor(3.0), 1)

# permute takes no axis here; stack and unsqueeze add one (1 and -2 are in range for them); batchnorm's is checked below
@pytest.mark.parametrize("name", [n for n in (*ACCEPTS, *REFUSES) if n not in ("permute", "batchnorm", "stack", "unsqueeze")])
@pytest.mark.parametrize("axis", [1, -2, 5])
def test_out_of_range_axis_on_0d_names_the_valid_range(name, axis):
  ours = (ACCEPTS.get(name) or REFUSES[name])[0]
  with pytest.raises(IndexError, match=r"valid axes are -1 to 0|0-d tensor"): ours(Tensor(3.0), axis)

def test_out_of_range_axis_names_the_valid_range():
  x = Tensor.ones(2, 3)
  for call in (lambda: x.sum(2), lambda: x.softmax(-3), lambda: x.cumsum(4), lambda: x.sort(2), lambda: x.argmax(-3), lambda: x.flip(2),
               lambda: x.transpose(0, 3), lambda: Tensor.ones(3).transpose(0, 2), lambda: x.unsqueeze(4), lambda: x.squeeze(2)):
    with pytest.raises(IndexError, match=r"valid axes are -[123] to [012]"): call()
  with pytest.raises(IndexError, match="valid axes are -1 to 0"): Tensor(3.0).batchnorm(None, None, Tensor(0.0), Tensor(1.0), axis=1)
  with pytest.raises(IndexError, match="class axis"): Tensor(3.0).sparse_categorical_crossentropy(Tensor(0))

def test_issue_reproducers():
  """issue 28: each raised a bare IndexError."""
  t = Tensor(3.0)
  assert t.sum(0).item() == 3.0 and t.max(0).item() == 3.0 and t.softmax().item() == 1.0 and t.log_softmax().item() == 0.0
  assert t.cumsum(0).item() == 3.0 and [r.item() for r in t.sort()] == [3.0, 0] and [r.item() for r in t.topk(1)] == [3.0, 0]
  assert math.isnan(t.var(0).item())  # one element, correction 1: NaN, as torch

AXIS_PARAMS = {"axis", "dim", "dims", "start_dim", "end_dim", "dim0", "dim1"}

def test_every_axis_method_is_covered():
  """Every public Tensor method with an axis parameter has a 0-d row above (a new one must get one)."""
  covered = {n.split()[0] for n in (*ACCEPTS, *REFUSES, *OTHER)}
  missing = []
  for n in dir(Tensor):
    if n.startswith("_") or not callable(f := getattr(Tensor, n)): continue
    try: params = set(inspect.signature(f).parameters)
    except (TypeError, ValueError): continue
    if params & AXIS_PARAMS and n not in covered: missing.append(n)
  assert not missing, f"axis-taking methods without a 0-d test: {missing}"
