"""MNIST from local files: $LAZYNB_DATA/mnist/, then the user cache (~/.cache/lazynb/mnist/). If neither has them, they
are downloaded into the cache (with a progress bar); offline, the error names both places and the variable."""
from __future__ import annotations
import gzip, os, pathlib, sys, urllib.request
import numpy as np
from lazynb.helpers import cache_dir
from lazynb.tensor import Tensor

FILES = {"train-images-idx3-ubyte.gz": (2051, 60000), "train-labels-idx1-ubyte.gz": (2049, 60000),
         "t10k-images-idx3-ubyte.gz": (2051, 10000), "t10k-labels-idx1-ubyte.gz": (2049, 10000)}
DEFAULT_MIRROR = "https://storage.googleapis.com/cvdf-datasets/mnist/"

def _dirs() -> list[pathlib.Path]:
  out = []
  if d := os.environ.get("LAZYNB_DATA"): out.append(pathlib.Path(d) / "mnist")
  out.append(cache_dir() / "mnist")
  return out

def _download(name: str, dest: pathlib.Path):
  dest.parent.mkdir(parents=True, exist_ok=True)
  tmp = dest.with_suffix(".part")
  mirror = os.environ.get("LAZYNB_MNIST_MIRROR", DEFAULT_MIRROR)
  try:
    with urllib.request.urlopen(mirror + name, timeout=30) as r, open(tmp, "wb") as f:
      total, got = int(r.headers.get("Content-Length") or 0), 0
      while chunk := r.read(1 << 16):
        f.write(chunk)
        got += len(chunk)
        if total: print(f"\rdownloading {name}: {got * 100 // total:3d}%", end="", file=sys.stderr)
    print(file=sys.stderr)
    os.replace(tmp, dest)
  except OSError as e:
    tmp.unlink(missing_ok=True)
    places = " or ".join(str(d) for d in _dirs())
    raise FileNotFoundError(f"MNIST file {name} was not found in {places}, and downloading it from {mirror} failed ({e}). "
                            f"To use files you already have: put the four MNIST .gz files ({', '.join(FILES)}) in a folder named "
                            f"'mnist', then set LAZYNB_DATA to the folder that holds it (export LAZYNB_DATA=/path/to/data) and restart "
                            f"the kernel; or copy them into {_dirs()[-1]}. See 'Data' in the README.") from None

def _find(name: str) -> pathlib.Path:
  for d in _dirs():
    if (d / name).is_file(): return d / name
  dest = _dirs()[-1] / name
  _download(name, dest)
  return dest

def _read(name: str) -> np.ndarray:
  path = _find(name)
  magic, count = FILES[name]
  try:
    with gzip.open(path, "rb") as f: raw = f.read()
  except (OSError, EOFError) as e: raise ValueError(f"{path} is corrupt or truncated ({e}); delete it and try again") from None
  hdr = 16 if magic == 2051 else 8
  if len(raw) < hdr or int.from_bytes(raw[:4], "big") != magic:
    raise ValueError(f"{path} is not an MNIST {'image' if magic == 2051 else 'label'} file (bad magic number)")
  n = int.from_bytes(raw[4:8], "big")
  expect = hdr + n * (784 if magic == 2051 else 1)
  if n != count or len(raw) != expect: raise ValueError(f"{path} has {len(raw)} bytes, expected {expect} for {count} items: truncated or corrupt")
  data = np.frombuffer(raw, dtype=np.uint8, offset=hdr)
  return data.reshape(n, 1, 28, 28) if magic == 2051 else data

def mnist(device: str | None = None):
  """(X_train, Y_train, X_test, Y_test): images uint8 (N, 1, 28, 28), labels uint8 (N,), the files' own bytes (as tinygrad 0.10's)."""
  return (Tensor(_read("train-images-idx3-ubyte.gz"), device=device), Tensor(_read("train-labels-idx1-ubyte.gz"), device=device),
          Tensor(_read("t10k-images-idx3-ubyte.gz"), device=device), Tensor(_read("t10k-labels-idx1-ubyte.gz"), device=device))
