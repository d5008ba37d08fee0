"""Finding, saving and loading a model's tensors. Files are safetensors (via the `safetensors` package)."""
from __future__ import annotations
import os
import json
import numpy as np
from lazynb.dtype import dtypes
from lazynb.tensor import Tensor

def get_state_dict(obj, prefix: str = "") -> dict[str, Tensor]:
  """Every Tensor reachable from obj (attributes, lists, tuples, dicts), keyed by its path: "l1.weight"."""
  out: dict[str, Tensor] = {}
  seen: set[int] = set()
  def walk(o, p: str):
    if isinstance(o, Tensor): out[p.rstrip(".")] = o; return  # noqa: E702
    if id(o) in seen or o is None or isinstance(o, (int, float, str, bool, bytes)): return
    seen.add(id(o))
    if isinstance(o, dict):
      for k, v in o.items(): walk(v, f"{p}{k}.")
    elif isinstance(o, (list, tuple)):
      for i, v in enumerate(o): walk(v, f"{p}{i}.")
    elif hasattr(o, "__dict__") and not isinstance(o, type):
      for k, v in vars(o).items(): walk(v, f"{p}{k}.")
  walk(obj, prefix)
  return out

def get_parameters(obj) -> list[Tensor]: return list(dict.fromkeys(get_state_dict(obj).values()))

def load_state_dict(model, state_dict: dict[str, Tensor], strict: bool = True) -> None:
  """Copy state_dict into the model's tensors; every key and shape is checked first (on a mismatch nothing loads)."""
  own = get_state_dict(model)
  missing = sorted(set(own) - set(state_dict))
  unexpected = sorted(set(state_dict) - set(own))
  bad = [f"Shape mismatch in layer `{k}`: Expected shape {own[k].shape}, but found {tuple(state_dict[k].shape)} in state dict."  # tinygrad's words
         for k in own if k in state_dict and own[k].shape != tuple(state_dict[k].shape)]
  problems = []
  if strict and missing: problems.append(f"missing keys: {missing}")
  if strict and unexpected: problems.append(f"unexpected keys: {unexpected}")
  if bad: problems.append("shape mismatches: " + " ".join(bad))
  if problems: raise ValueError("load_state_dict: nothing was loaded, because of " + " / ".join(problems))
  targets = []
  for k, t in own.items():
    if k not in state_dict: continue
    v = state_dict[k] if isinstance(state_dict[k], Tensor) else Tensor(state_dict[k])
    t.assign(v.to(t.device).cast(t.dtype))
    targets.append(t)
  Tensor.realize_all(*targets)

def _safetensors():
  try:
    import safetensors.numpy as stn
    return stn
  except ImportError: raise ImportError("saving and loading models needs the safetensors package: pip install safetensors") from None

def safe_save(tensors: dict[str, Tensor], path: str | os.PathLike, metadata: dict[str, str] | None = None) -> None:
  stn = _safetensors()
  if any(t.dtype is dtypes.bfloat16 for t in tensors.values()): return _save_with_bf16(tensors, path, metadata)
  stn.save_file({k: t.numpy() for k, t in tensors.items()}, str(path), metadata=metadata)

def safe_load(path: str | os.PathLike) -> dict[str, Tensor]:
  stn = _safetensors()
  if not os.path.isfile(path): raise FileNotFoundError(f"no such file: {path}")
  try: arrays = stn.load_file(str(path))
  except Exception as e:
    if isinstance(e, TypeError) and "bfloat16" in str(e): return _load_with_bf16(path)
    raise ValueError(f"{path} is not a valid safetensors file ({type(e).__name__}: {e})") from None
  # with ml_dtypes imported (jax, tensorflow...) numpy knows bfloat16 and the package returns such arrays: read the bits ourselves
  return _load_with_bf16(path) if any(a.dtype.name == "bfloat16" for a in arrays.values()) else {k: Tensor(v) for k, v in arrays.items()}

_ST_DTYPES = {"BOOL": np.bool_, "I8": np.int8, "U8": np.uint8, "I16": np.int16, "U16": np.uint16, "BF16": np.uint16, "I32": np.int32,
              "U32": np.uint32, "I64": np.int64, "U64": np.uint64, "F16": np.float16, "F32": np.float32, "F64": np.float64}
def _load_with_bf16(path) -> dict[str, Tensor]:
  """A safetensors file (8-byte header length, JSON header, data) with BF16 entries, which numpy cannot hold: their
  16-bit patterns are read as uint16 and bitcast to bfloat16."""
  raw = open(path, "rb").read()
  n = int.from_bytes(raw[:8], "little")
  out = {}
  for k, v in json.loads(raw[8:8 + n]).items():
    if k == "__metadata__": continue
    a, b = v["data_offsets"]
    arr = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=_ST_DTYPES[v["dtype"]]).reshape(v["shape"])
    out[k] = Tensor(arr).bitcast(dtypes.bfloat16) if v["dtype"] == "BF16" else Tensor(arr)
  return out

def _save_with_bf16(tensors: dict[str, Tensor], path, metadata: dict[str, str] | None) -> None:
  """The safetensors layout written directly (numpy has no bfloat16 for the package to take): an 8-byte little-endian
  header length, the JSON header (names -> dtype, shape, byte range; padded with spaces to 8 bytes), then the data."""
  names = {v: k for k, v in _ST_DTYPES.items() if k != "BF16"}
  header: dict = {"__metadata__": metadata} if metadata else {}
  blobs, off = [], 0
  for k in sorted(tensors):
    t = tensors[k]
    arr = t.bitcast(dtypes.uint16).numpy() if t.dtype is dtypes.bfloat16 else t.numpy()
    blobs.append(np.ascontiguousarray(arr).tobytes())
    header[k] = {"dtype": "BF16" if t.dtype is dtypes.bfloat16 else names[arr.dtype.type], "shape": list(arr.shape),
                 "data_offsets": [off, off + len(blobs[-1])]}
    off += len(blobs[-1])
  head = json.dumps(header, separators=(",", ":")).encode()
  head += b" " * (-len(head) % 8)
  with open(path, "wb") as f: f.write(len(head).to_bytes(8, "little") + head + b"".join(blobs))
