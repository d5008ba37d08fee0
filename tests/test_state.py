"""lazynb.nn.state: finding a model's tensors, safetensors save/load, load_state_dict and its error handling.
Open bugs found here are marked xfail(strict=True) with a `bug:` reason.
"""
import numpy as np
import pytest
from lazynb import Tensor, dtypes, nn
from lazynb.nn.state import get_state_dict, get_parameters, load_state_dict, safe_save, safe_load

safetensors = pytest.importorskip("safetensors")

def rnd(*shape, seed=0): return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

class Block:
  def __init__(self):
    self.conv = nn.Conv2d(2, 3, 3, padding=1)
    self.bn = nn.BatchNorm2d(3)
class Model:
  def __init__(self):
    self.blocks = [Block(), Block.__new__(Block)]
    self.blocks[1].conv = nn.Conv2d(3, 2, 1, bias=False)
    self.heads = {"cls": nn.Linear(2 * 4 * 4, 5), "aux": (nn.Linear(5, 1),)}
    self.norm = nn.LayerNorm(5)
    self.name, self.depth, self.nothing = "model", 2, None  # not tensors: skipped
  def __call__(self, x):
    x = self.blocks[0].bn(self.blocks[0].conv(x)).relu()
    x = self.blocks[1].conv(x).flatten(1)
    x = self.norm(self.heads["cls"](x))
    return x, self.heads["aux"][0](x)

EXPECTED_KEYS = {
  "blocks.0.conv.weight", "blocks.0.conv.bias", "blocks.0.bn.weight", "blocks.0.bn.bias", "blocks.0.bn.running_mean",
  "blocks.0.bn.running_var", "blocks.0.bn.num_batches_tracked", "blocks.1.conv.weight",
  "heads.cls.weight", "heads.cls.bias", "heads.aux.0.weight", "heads.aux.0.bias", "norm.weight", "norm.bias"}

def snapshot(model): return {k: v.numpy().copy() for k, v in get_state_dict(model).items()}

def assert_same(a: dict, b: dict):
  assert a.keys() == b.keys()
  for k in a: np.testing.assert_array_equal(a[k], b[k], err_msg=k)

@pytest.fixture
def model():
  Tensor.manual_seed(0)
  return Model()

# ------------------------------------------------------------------ get_state_dict / get_parameters

def test_state_dict_keys_on_nested_objects(model):
  sd = get_state_dict(model)
  assert set(sd) == EXPECTED_KEYS
  assert sd["heads.aux.0.weight"] is model.heads["aux"][0].weight
  assert sd["blocks.0.bn.running_var"] is model.blocks[0].bn.running_var
  assert sd["blocks.1.conv.weight"].shape == (2, 3, 1, 1)

def test_state_dict_prefix(model):
  sd = get_state_dict(model.norm, prefix="enc.")
  assert set(sd) == {"enc.weight", "enc.bias"}

def test_state_dict_of_plain_containers():
  a, b, c = Tensor([1.0]), Tensor([2.0]), Tensor([3.0])
  sd = get_state_dict({"x": [a, {"y": b}], "z": (None, c)})
  assert set(sd) == {"x.0", "x.1.y", "z.1"}
  assert sd["x.1.y"] is b and sd["z.1"] is c

def test_state_dict_survives_reference_cycles():
  class Node: pass
  n = Node()
  n.w = Tensor([1.0])
  n.me = n
  n.children = [n]
  assert list(get_state_dict(n)) == ["w"]

def test_get_parameters_finds_all_tensors_deduplicated(model):
  model.tied = model.heads["cls"].weight  # the same tensor under a second name
  params = get_parameters(model)
  sd = get_state_dict(model)
  assert len(sd) == len(EXPECTED_KEYS) + 1
  assert len(params) == len(EXPECTED_KEYS)
  assert len({id(p) for p in params}) == len(params)
  assert any(p is model.heads["cls"].weight for p in params)

@pytest.mark.usefixtures("training_mode")
def test_get_parameters_trains_a_model_end_to_end():
  Tensor.manual_seed(1)
  m = [nn.Linear(2, 3), nn.Linear(3, 1)]
  params = get_parameters(m)
  assert len(params) == 4
  opt = nn.optim.Adam(params, lr=0.05)
  x, y = Tensor(rnd(8, 2, seed=2)), Tensor(rnd(8, 1, seed=3))
  losses = []
  for _ in range(5):
    opt.zero_grad()
    loss = ((x.sequential([m[0], Tensor.relu, m[1]]) - y) ** 2).mean()
    loss.backward()
    losses.append(loss.item())
    opt.step()
  assert losses[-1] < losses[0]

# ------------------------------------------------------------------ safe_save / safe_load

def test_safe_save_load_round_trip_values_and_dtypes(tmp_path):
  g = np.random.default_rng(4)
  arrays = {
    "f32": rnd(3, 4, seed=5),
    "f16": rnd(5, seed=6).astype(np.float16),
    "i32": g.integers(-1000, 1000, (2, 3)).astype(np.int32),
    "i64": g.integers(-2 ** 40, 2 ** 40, (4,)).astype(np.int64),
    "u8": g.integers(0, 256, (2, 2, 2)).astype(np.uint8),
    "b": g.random((3,)) > 0.5,
    "nested.name.w": rnd(1, 1, seed=7),
  }
  path = tmp_path / "m.safetensors"
  safe_save({k: Tensor(v) for k, v in arrays.items()}, path)
  loaded = safe_load(path)
  assert set(loaded) == set(arrays)
  for k, v in arrays.items():
    t = loaded[k]
    assert isinstance(t, Tensor)
    assert t.dtype.np == v.dtype, f"{k}: {t.dtype} != {v.dtype}"
    assert t.shape == v.shape
    np.testing.assert_array_equal(t.numpy(), v, err_msg=k)

def test_safe_save_is_readable_by_safetensors_and_keeps_metadata(tmp_path):
  from safetensors import safe_open
  a = rnd(2, 3, seed=8)
  path = tmp_path / "x.safetensors"
  safe_save({"a": Tensor(a)}, path, metadata={"epoch": "3"})
  with safe_open(str(path), framework="numpy") as f:
    assert f.metadata() == {"epoch": "3"}
    np.testing.assert_array_equal(f.get_tensor("a"), a)

def test_safe_save_lazy_and_non_contiguous_tensors(tmp_path):
  a = rnd(3, 4, seed=9)
  lazy = Tensor(a).permute(1, 0)[::2] * 2 + 1
  path = tmp_path / "lazy.safetensors"
  safe_save({"v": lazy}, path)
  np.testing.assert_allclose(safe_load(path)["v"].numpy(), a.T[::2] * 2 + 1, rtol=1e-6)

def test_safe_load_missing_file(tmp_path):
  with pytest.raises(FileNotFoundError, match="nope.safetensors"):
    safe_load(tmp_path / "nope.safetensors")

@pytest.mark.parametrize("content", [b"", b"this is not a safetensors file at all", b"\xff" * 64,
                                     (10).to_bytes(8, "little") + b"{not json}"], ids=["empty", "text", "garbage", "bad_header"])
def test_safe_load_not_safetensors_raises_clear_error(tmp_path, content):
  path = tmp_path / "bad.safetensors"
  path.write_bytes(content)
  with pytest.raises(ValueError, match="not a valid safetensors"):
    safe_load(path)

def test_safe_load_truncated_file_raises_clear_error(tmp_path):
  path = tmp_path / "t.safetensors"
  safe_save({"w": Tensor(rnd(16, 16, seed=10))}, path)
  data = path.read_bytes()
  path.write_bytes(data[:len(data) - 100])
  with pytest.raises(ValueError, match="not a valid safetensors"):
    safe_load(path)

# ------------------------------------------------------------------ load_state_dict

def test_load_state_dict_into_fresh_model_gives_identical_outputs(tmp_path, model):
  x = Tensor(rnd(2, 2, 4, 4, seed=11))
  with Tensor.train(): model(x)[0].realize()  # move the BatchNorm running stats away from their init
  path = tmp_path / "model.safetensors"
  safe_save(get_state_dict(model), path)
  out_a, aux_a = model(x)  # from the saved (realized) state, so both models run the very same kernels
  out_a, aux_a = out_a.numpy(), aux_a.numpy()
  Tensor.manual_seed(123)
  fresh = Model()
  out_f = fresh(x)[0].numpy()
  assert not np.allclose(out_f, out_a), "a differently seeded model should differ before loading"
  load_state_dict(fresh, safe_load(path))
  assert_same(snapshot(fresh), snapshot(model))
  out_b, aux_b = fresh(x)
  np.testing.assert_array_equal(out_b.numpy(), out_a)
  np.testing.assert_array_equal(aux_b.numpy(), aux_a)

def test_load_state_dict_writes_into_the_existing_tensors(model):
  src = Model()
  w_obj = model.heads["cls"].weight
  load_state_dict(model, get_state_dict(src))
  assert model.heads["cls"].weight is w_obj
  np.testing.assert_array_equal(w_obj.numpy(), src.heads["cls"].weight.numpy())

def test_load_state_dict_accepts_numpy_values_and_casts_dtype():
  l = nn.Linear(3, 2)
  w, b = rnd(2, 3, seed=12).astype(np.float16), rnd(2, seed=13)
  load_state_dict(l, {"weight": w, "bias": b})
  assert l.weight.dtype is dtypes.float32
  np.testing.assert_array_equal(l.weight.numpy(), w.astype(np.float32))
  np.testing.assert_array_equal(l.bias.numpy(), b)

@pytest.mark.usefixtures("training_mode")
def test_loaded_model_trains_and_original_file_unchanged(tmp_path):
  l = nn.Linear(2, 1)
  path = tmp_path / "l.safetensors"
  safe_save(get_state_dict(l), path)
  before = {k: v.numpy().copy() for k, v in safe_load(path).items()}
  m = nn.Linear(2, 1)
  load_state_dict(m, safe_load(path))
  opt = nn.optim.SGD(get_parameters(m), lr=0.5, momentum=0.5)
  (m(Tensor(rnd(4, 2, seed=14))) ** 2).mean().backward()
  opt.step()
  assert not np.array_equal(m.weight.numpy(), before["weight"])
  after = safe_load(path)
  for k in before: np.testing.assert_array_equal(after[k].numpy(), before[k])

def _bad_load(model, sd, match):
  before = snapshot(model)
  with pytest.raises(ValueError, match=match) as ei:
    load_state_dict(model, sd)
  assert "nothing was loaded" in str(ei.value)
  assert_same(snapshot(model), before)
  return str(ei.value)

def test_load_missing_keys_raises_and_loads_nothing(model):
  sd = {k: v.numpy() + 1 for k, v in get_state_dict(Model()).items()}
  del sd["norm.bias"], sd["blocks.0.bn.running_mean"]
  msg = _bad_load(model, sd, "missing keys")
  assert "norm.bias" in msg and "blocks.0.bn.running_mean" in msg

def test_load_unexpected_keys_raises_and_loads_nothing(model):
  sd = {k: v.numpy() + 1 for k, v in get_state_dict(Model()).items()}
  sd["heads.extra.weight"] = rnd(2, 2)
  msg = _bad_load(model, sd, "unexpected keys")
  assert "heads.extra.weight" in msg

def test_load_misshaped_key_raises_and_loads_nothing(model):
  sd = {k: v.numpy() + 1 for k, v in get_state_dict(Model()).items()}
  sd["heads.cls.weight"] = rnd(5, 31)
  msg = _bad_load(model, sd, "shape mismatch")
  assert "heads.cls.weight" in msg and "(5, 32)" in msg and "(5, 31)" in msg

def test_load_all_problems_reported_together(model):
  sd = {k: v.numpy() + 1 for k, v in get_state_dict(Model()).items()}
  del sd["norm.weight"]
  sd["bogus"] = rnd(1)
  sd["blocks.1.conv.weight"] = rnd(3, 2, 1, 1)
  msg = _bad_load(model, sd, "missing keys")
  assert "unexpected keys" in msg and "shape mismatch" in msg

def test_load_non_strict_allows_missing_and_unexpected(model):
  src = Model()
  sd = {k: v.numpy() + 1 for k, v in get_state_dict(src).items() if k.startswith("heads.")}
  sd["extra"] = rnd(3)
  keep_norm = model.norm.weight.numpy().copy()
  load_state_dict(model, sd, strict=False)
  np.testing.assert_array_equal(model.heads["cls"].bias.numpy(), sd["heads.cls.bias"])
  np.testing.assert_array_equal(model.norm.weight.numpy(), keep_norm)

def test_load_non_strict_still_rejects_shape_mismatch(model):
  before = snapshot(model)
  with pytest.raises(ValueError, match="shape mismatch"):
    load_state_dict(model, {"heads.cls.bias": rnd(5), "norm.weight": rnd(6)}, strict=False)
  assert_same(snapshot(model), before)

def test_load_from_file_with_wrong_shapes_leaves_model_intact(tmp_path, model):
  other = nn.Linear(4, 4)
  path = tmp_path / "other.safetensors"
  safe_save(get_state_dict(other), path)
  l = nn.Linear(4, 3)
  before = snapshot(l)
  with pytest.raises(ValueError, match="shape mismatch"):
    load_state_dict(l, safe_load(path))
  assert_same(snapshot(l), before)

def test_safe_load_unsupported_dtypes_keep_their_values(tmp_path):
  """int8 and float64 are valid safetensors dtypes lazynb has no exact match for: the values must survive (widened)."""
  import safetensors.numpy as stn
  path = tmp_path / "other_dtypes.safetensors"
  stn.save_file({"i8": np.array([1, -2, 127, -128], np.int8), "f64": np.array([1.5, -0.25], np.float64)}, str(path))
  sd = safe_load(path)
  np.testing.assert_array_equal(sd["i8"].numpy(), [1, -2, 127, -128])
  np.testing.assert_array_equal(sd["f64"].numpy(), [1.5, -0.25])
