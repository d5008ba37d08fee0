"""lazynb.nn.datasets.mnist(): the real files from $LAZYNB_DATA, the user cache, download, and clear errors on bad files.
No test touches the network: downloads go to 127.0.0.1 only (an unreachable port, or a local HTTP server started here).
Open bugs found here are marked xfail(strict=True) with a `bug:` reason.
"""
import gzip, http.server, os, pathlib, subprocess, sys, threading
import numpy as np
import pytest
from lazynb import dtypes
from lazynb.nn import datasets
from freshenv import data_dir

SHARED = pathlib.Path(data_dir())  # the course data as CI has it ($LAZYNB_DATA, set by .ci/run, or ../shared/data)
REAL = SHARED / "mnist"
NAMES = ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]
DEAD_MIRROR = "http://127.0.0.1:9/"
ROOT = pathlib.Path(__file__).resolve().parent.parent

needs_real = pytest.mark.skipif(not all((REAL / n).is_file() for n in NAMES), reason=f"MNIST files not in {REAL}")

@pytest.fixture
def env(tmp_path, monkeypatch):
  """An empty data dir and cache dir, and a mirror that refuses connections (fails fast, never leaves the machine)."""
  data, cache = tmp_path / "data", tmp_path / "cache"
  data.mkdir()
  monkeypatch.setenv("LAZYNB_DATA", str(data))
  monkeypatch.setenv("LAZYNB_CACHE", str(cache))
  monkeypatch.setenv("LAZYNB_MNIST_MIRROR", DEAD_MIRROR)
  return data, cache

_real_urlopen = datasets.urllib.request.urlopen

@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch):
  """Whatever lazynb does, no test here may reach beyond this machine."""
  def guarded(url, *a, **k):
    u = url if isinstance(url, str) else url.full_url
    if not u.startswith(("http://127.0.0.1:", "http://localhost:")):
      raise AssertionError(f"test tried to download from {u}: LAZYNB_MNIST_MIRROR was not honoured")
    return _real_urlopen(url, *a, **k)
  monkeypatch.setattr(datasets.urllib.request, "urlopen", guarded)

def link_real(dst: pathlib.Path, skip=()):
  dst.mkdir(parents=True, exist_ok=True)
  for n in NAMES:
    if n not in skip: (dst / n).symlink_to(REAL / n)

def own_parse(path, images: bool) -> np.ndarray:
  raw = gzip.open(path).read()
  return np.frombuffer(raw, np.uint8, offset=16 if images else 8)

# ------------------------------------------------------------------ the real files

@needs_real
def test_mnist_from_lazynb_data(monkeypatch, tmp_path):
  monkeypatch.setenv("LAZYNB_DATA", str(SHARED))
  monkeypatch.setenv("LAZYNB_CACHE", str(tmp_path / "cache"))
  monkeypatch.setenv("LAZYNB_MNIST_MIRROR", DEAD_MIRROR)
  X_train, Y_train, X_test, Y_test = datasets.mnist()
  assert X_train.shape == (60000, 1, 28, 28) and Y_train.shape == (60000,)
  assert X_test.shape == (10000, 1, 28, 28) and Y_test.shape == (10000,)
  assert X_train.dtype is dtypes.uint8 and X_test.dtype is dtypes.uint8
  assert Y_train.dtype is dtypes.uint8 and Y_test.dtype is dtypes.uint8  # the files' bytes, as tinygrad 0.10 gives them
  ytr, yte = Y_train.numpy(), Y_test.numpy()
  assert ytr.min() == 0 and ytr.max() == 9 and yte.min() == 0 and yte.max() == 9
  assert set(np.bincount(ytr)) and (np.bincount(ytr, minlength=10) > 5000).all()
  assert ytr[0] == 5 and yte[0] == 7  # the well-known first labels of MNIST
  np.testing.assert_array_equal(ytr, own_parse(REAL / NAMES[1], False))
  np.testing.assert_array_equal(yte, own_parse(REAL / NAMES[3], False))
  xte = X_test.numpy()
  assert xte.dtype == np.uint8 and xte.max() == 255 and xte.min() == 0
  np.testing.assert_array_equal(xte.reshape(-1), own_parse(REAL / NAMES[2], True))
  first = X_train[:2].numpy()
  np.testing.assert_array_equal(first.reshape(-1), own_parse(REAL / NAMES[0], True)[:2 * 784])
  assert not (tmp_path / "cache" / "mnist").exists() or not any((tmp_path / "cache" / "mnist").iterdir()), "nothing should be downloaded"

@needs_real
def test_mnist_from_user_cache_when_lazynb_data_unset(monkeypatch, tmp_path):
  cache = tmp_path / "cache"
  link_real(cache / "mnist")
  monkeypatch.delenv("LAZYNB_DATA", raising=False)
  monkeypatch.setenv("LAZYNB_CACHE", str(cache))
  monkeypatch.setenv("LAZYNB_MNIST_MIRROR", DEAD_MIRROR)
  _, Y_train, _, Y_test = datasets.mnist()
  assert Y_train.shape == (60000,) and Y_test.shape == (10000,)
  assert Y_test.numpy()[0] == 7

@needs_real
def test_mnist_downloads_into_cache_from_local_mirror(env, tmp_path, monkeypatch):
  data, cache = env
  served = tmp_path / "served"
  link_real(served)
  class Quiet(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k): super().__init__(*a, directory=str(served), **k)
    def log_message(self, *a): pass
  srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
  th = threading.Thread(target=srv.serve_forever, daemon=True)
  th.start()
  try:
    monkeypatch.setenv("LAZYNB_MNIST_MIRROR", f"http://127.0.0.1:{srv.server_address[1]}/")
    _, Y_train, _, Y_test = datasets.mnist()
  finally:
    srv.shutdown()
    srv.server_close()
  assert Y_test.numpy()[0] == 7 and Y_train.shape == (60000,)
  for n in NAMES:
    assert (cache / "mnist" / n).read_bytes() == (REAL / n).read_bytes()
  assert not list((cache / "mnist").glob("*.part"))

# ------------------------------------------------------------------ bad files in LAZYNB_DATA

def _gz(payload: bytes) -> bytes: return gzip.compress(payload)

CORRUPTIONS = {
  "truncated_gz": lambda real: real[: len(real) // 2],
  "not_gzip": lambda real: b"this is not a gzip file" * 10,
  "empty": lambda real: b"",
  "bad_magic": lambda real: _gz((1234).to_bytes(4, "big") + (60000).to_bytes(4, "big") + bytes(60000)),
  "too_few_items": lambda real: _gz(gzip.decompress(real)[:8 + 100]),
  "wrong_count": lambda real: _gz((2049).to_bytes(4, "big") + (100).to_bytes(4, "big") + bytes(100)),
  "trailing_garbage": lambda real: _gz(gzip.decompress(real) + b"\x00" * 7),
}

@needs_real
@pytest.mark.parametrize("how", list(CORRUPTIONS))
def test_corrupt_labels_file_raises_value_error_without_download(env, how):
  data, cache = env
  name = "train-labels-idx1-ubyte.gz"
  link_real(data / "mnist", skip=(name,))
  (data / "mnist" / name).write_bytes(CORRUPTIONS[how]((REAL / name).read_bytes()))
  with pytest.raises(ValueError) as ei:
    datasets.mnist()
  msg = str(ei.value)
  assert str(data / "mnist" / name) in msg, msg
  assert any(w in msg for w in ("corrupt", "truncated", "not an MNIST")), msg
  assert not (cache / "mnist" / name).exists(), "a corrupt local file must not trigger a download"

@needs_real
def test_truncated_images_file_raises_value_error(env):
  data, cache = env
  name = "t10k-images-idx3-ubyte.gz"
  link_real(data / "mnist", skip=(name,))
  real = (REAL / name).read_bytes()
  (data / "mnist" / name).write_bytes(real[: len(real) - 1000])
  with pytest.raises(ValueError, match="corrupt or truncated"):
    datasets.mnist()

def test_images_file_in_place_of_labels_is_rejected(env):
  data, cache = env
  d = data / "mnist"
  d.mkdir()
  (d / "train-labels-idx1-ubyte.gz").write_bytes(_gz((2051).to_bytes(4, "big") + (60000).to_bytes(4, "big") + bytes(8)))
  with pytest.raises(ValueError, match="not an MNIST label file"):
    datasets._read("train-labels-idx1-ubyte.gz")

# ------------------------------------------------------------------ missing files, no way to download

def test_empty_data_and_cache_unreachable_mirror_names_paths_and_variable(env):
  data, cache = env
  with pytest.raises(FileNotFoundError) as ei:
    datasets.mnist()
  msg = str(ei.value)
  assert str(data / "mnist") in msg, msg
  assert str(cache / "mnist") in msg, msg
  assert "LAZYNB_DATA" in msg
  assert "train-images-idx3-ubyte.gz" in msg
  assert not list((cache / "mnist").glob("*")), "no partial download may be left behind"

@needs_real
def test_one_missing_file_tries_download_and_fails_clearly(env):
  data, cache = env
  link_real(data / "mnist", skip=("t10k-labels-idx1-ubyte.gz",))
  with pytest.raises(FileNotFoundError, match=r"t10k-labels-idx1-ubyte\.gz.*LAZYNB_DATA"):
    datasets.mnist()

def test_unset_lazynb_data_error_still_names_the_variable(env, monkeypatch):
  data, cache = env
  monkeypatch.delenv("LAZYNB_DATA")
  with pytest.raises(FileNotFoundError) as ei:
    datasets.mnist()
  assert str(cache / "mnist") in str(ei.value) and "LAZYNB_DATA" in str(ei.value)

def test_mirror_variable_is_honoured_in_a_fresh_process(tmp_path):
  """Set in the environment before lazynb is imported, LAZYNB_MNIST_MIRROR is where the download goes."""
  env = dict(os.environ, LAZYNB_DATA=str(tmp_path / "d"), LAZYNB_CACHE=str(tmp_path / "c"), LAZYNB_MNIST_MIRROR=DEAD_MIRROR,
             PYTHONPATH=str(ROOT))
  code = ("from lazynb.nn import datasets\n"
          "try: datasets.mnist()\n"
          "except FileNotFoundError as e: print('FNF', e)\n")
  r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
  assert "FNF" in r.stdout, r.stdout + r.stderr
  assert "refused" in r.stdout.lower() or "errno 111" in r.stdout.lower(), r.stdout

def test_mirror_variable_set_after_import_is_honoured(tmp_path, monkeypatch):
  monkeypatch.setenv("LAZYNB_DATA", str(tmp_path / "d"))
  monkeypatch.setenv("LAZYNB_CACHE", str(tmp_path / "c"))
  monkeypatch.setenv("LAZYNB_MNIST_MIRROR", DEAD_MIRROR)
  urls = []
  def fake_urlopen(url, *a, **k):  # no network: record where the download would go, then fail like a dead host
    urls.append(url if isinstance(url, str) else url.full_url)
    raise OSError("connection refused (test stub)")
  monkeypatch.setattr(datasets.urllib.request, "urlopen", fake_urlopen)
  with pytest.raises(FileNotFoundError):
    datasets.mnist()
  assert urls and urls[0].startswith(DEAD_MIRROR), urls
