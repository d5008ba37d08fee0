"""Finding, saving and loading a model's tensors. Files are safetensors (via the `safetensors` package)."""
from __future__ import annotations
import os
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
  """Copy state_dict into the model's tensors. Every key and shape is checked first: on any mismatch
  nothing is loaded."""
  own = get_state_dict(model)
  missing = sorted(set(own) - set(state_dict))
  unexpected = sorted(set(state_dict) - set(own))
  bad = [f"{k}: model {own[k].shape} vs file {tuple(state_dict[k].shape)}" for k in own if k in state_dict and own[k].shape != tuple(state_dict[k].shape)]
  problems = []
  if strict and missing: problems.append(f"missing keys: {missing}")
  if strict and unexpected: problems.append(f"unexpected keys: {unexpected}")
  if bad: problems.append("shape mismatches: " + "; ".join(bad))
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
  stn.save_file({k: t.numpy() for k, t in tensors.items()}, str(path), metadata=metadata)

def safe_load(path: str | os.PathLike) -> dict[str, Tensor]:
  stn = _safetensors()
  if not os.path.isfile(path): raise FileNotFoundError(f"no such file: {path}")
  try: arrays = stn.load_file(str(path))
  except Exception as e: raise ValueError(f"{path} is not a valid safetensors file ({type(e).__name__}: {e})") from None
  return {k: Tensor(v) for k, v in arrays.items()}
