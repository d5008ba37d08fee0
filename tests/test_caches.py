"""Caches never hurt: a damaged compiled kernel (database row or .so file) is rebuilt, never loaded; a cache that cannot
be written means one warning and no disk cache, never a crash or a deleted database; a BEAM entry of an unexpected
shape is searched again. Unwritable places are real: as root (the CI container) `chattr +i`, else chmod."""
import contextlib, json, os, pathlib, sqlite3, subprocess, sys
import numpy as np
import pytest
from lazynb import Tensor
from lazynb.engine import search
from lazynb.codegen.kernel import Kernel, Opt, OptOps
from lazynb.device import Device, diskcache_put
from lazynb.engine.schedule import create_schedule

ROOT = pathlib.Path(__file__).resolve().parents[1]
# one kernel per constant: same name, same code size, different answers
CHILD = """
import json, sys, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as ws:
  import numpy as np
  from lazynb import Tensor
  out = [(Tensor(np.arange(4, dtype=np.float32)) + float(c)).numpy().tolist() for c in sys.argv[1:]]
print(json.dumps({"out": out, "warnings": [f"{w.category.__name__}: {w.message}" for w in ws]}))
"""

def child(cache, *consts, loader: str = "auto"):
  """Run kernels in a fresh process (no in-memory caches) with LAZYNB_CACHE=cache: (results, warnings). `loader`: how
  CPU kernels load (LAZYNB_LOADER): only "dlopen" writes library files into the cache's libs/ directory."""
  env = dict(os.environ, PYTHONPATH=str(ROOT), LAZYNB_CACHE=str(cache), BEAM_PROGRESS="0", LAZYNB_LOADER=loader)
  p = subprocess.run([sys.executable, "-c", CHILD, *map(str, consts)], env=env, capture_output=True, text=True, timeout=300)
  assert p.returncode == 0, p.stderr[-3000:]
  res = json.loads(p.stdout.strip().splitlines()[-1])
  expect = [[i + float(c) for i in range(4)] for c in consts]
  assert res["out"] == expect
  return res["warnings"]

def blob_tables(db: sqlite3.Connection) -> list[str]:
  """Tables holding (key, val) rows, whatever the schema version."""
  names = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
  return [t for t in names if {"key", "val"} <= {r[1] for r in db.execute(f"pragma table_info({t})")}]

def keys(cache) -> set:
  with contextlib.closing(sqlite3.connect(cache / "cache.db")) as db:
    return {(t, k) for t in blob_tables(db) for (k,) in db.execute(f"select key from {t}")}

@contextlib.contextmanager
def unwritable(path: pathlib.Path):
  """Make `path` (a file or directory) unwritable for this process for real, and check that it is."""
  if os.geteuid() == 0: subprocess.run(["chattr", "+i", str(path)], check=True)
  else: os.chmod(path, 0o555 if path.is_dir() else 0o444)
  try:
    with pytest.raises(OSError):
      if path.is_dir(): (path / "probe").write_bytes(b"x")
      else: open(path, "r+b").close()
    yield
  finally:
    if os.geteuid() == 0: subprocess.run(["chattr", "-i", str(path)], check=True)
    else: os.chmod(path, 0o755 if path.is_dir() else 0o644)

def one_cache_warning(ws: list[str]):
  assert len(ws) == 1 and "disk cache" in ws[0], ws

# ---------------------------------------------------------------- damaged compiled kernels

def test_damaged_database_row_is_rebuilt_not_loaded(tmp_path):
  """The row of the `+1` kernel gets the bytes of the `+2` kernel (same function name): loading it would silently add 2."""
  cache = tmp_path / "c"
  assert child(cache, 1) == []
  ((_, key1),) = k1 = keys(cache)
  assert child(cache, 2) == []
  ((_, key2),) = keys(cache) - k1
  with contextlib.closing(sqlite3.connect(cache / "cache.db")) as db:
    for tbl in blob_tables(db):
      db.execute(f"update {tbl} set val=(select val from {tbl} where key=?) where key=?", (key2, key1))
    db.commit()
  assert child(cache, 1) == []
  # truncated bytes are no better
  with contextlib.closing(sqlite3.connect(cache / "cache.db")) as db:
    for tbl in blob_tables(db): db.execute(f"update {tbl} set val=substr(val, 1, 100)")
    db.commit()
  assert child(cache, 2, 1) == []

def test_altered_library_file_is_rewritten_not_loaded(tmp_path):
  """A .so in the libs dir whose bytes changed (same size: here the `+2` kernel's) is rewritten before loading.
  (Library files exist with the dlopen loader only: objects are loaded from the database's bytes, checked above.)"""
  cache = tmp_path / "c"
  child(cache, 1, loader="dlopen")
  libs1 = set((cache / "libs").iterdir())
  child(cache, 2, loader="dlopen")
  (lib1,), (lib2,) = libs1, set((cache / "libs").iterdir()) - libs1
  assert lib1.stat().st_size == lib2.stat().st_size  # so a check of the size alone cannot tell them apart
  lib1.write_bytes(lib2.read_bytes())
  child(cache, 1, loader="dlopen")
  assert lib1.read_bytes() != lib2.read_bytes()

# ---------------------------------------------------------------- unwritable caches

def test_cache_path_is_a_file(tmp_path):
  f = tmp_path / "file"
  f.write_text("not a directory")
  one_cache_warning(child(f, 1, 2))
  one_cache_warning(child(f / "below", 1, 2))
  assert f.read_text() == "not a directory"

@pytest.mark.parametrize("loader", ["auto", "dlopen"])
def test_unwritable_cache_directory(tmp_path, loader):
  cache = tmp_path / "c"
  cache.mkdir()
  with unwritable(cache): one_cache_warning(child(cache, 1, loader=loader))
  child(cache, 1, loader=loader)  # filled now
  before = {p: p.read_bytes() for p in cache.rglob("*") if p.is_file() and "cache.db" not in p.name}
  if loader == "dlopen":
    with unwritable(cache / "libs"): one_cache_warning(child(cache, 3, loader=loader))  # a new kernel, nowhere to write its library
  with unwritable(cache):
    one_cache_warning(child(cache, 1, 4, loader=loader))
  assert all(p.read_bytes() == b for p, b in before.items())

def test_read_only_database_is_used_without_writes_and_kept(tmp_path):
  cache = tmp_path / "c"
  child(cache, 1)
  db = cache / "cache.db"
  with contextlib.closing(sqlite3.connect(db)) as c: c.execute("pragma wal_checkpoint(truncate)")
  data = db.read_bytes()
  with unwritable(db): one_cache_warning(child(cache, 1, 5))
  assert db.read_bytes() == data

def test_damaged_database_that_cannot_be_written_is_not_deleted(tmp_path):
  """A 'corrupt' database used to be reset (deleted); one this process cannot write must stay as it is."""
  cache = tmp_path / "c"
  cache.mkdir()
  db = cache / "cache.db"
  db.write_bytes(b"this is not an sqlite database" * 100)
  with unwritable(db): one_cache_warning(child(cache, 1))
  assert db.read_bytes() == b"this is not an sqlite database" * 100
  with unwritable(cache): one_cache_warning(child(cache, 2))
  assert db.read_bytes() == b"this is not an sqlite database" * 100

# ---------------------------------------------------------------- BEAM entries

@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
  from lazynb import device
  monkeypatch.setenv("LAZYNB_CACHE", str(tmp_path))
  monkeypatch.delenv("IGNORE_BEAM_CACHE", raising=False)
  device._local.db = None
  yield
  device._local.db = None

def _kernel() -> Kernel:
  a = Tensor(np.arange(64, dtype=np.float32).reshape(8, 8)).realize()
  items, _ = create_schedule([(a * 2).uop])
  return Kernel(items[-1].ast, Device["CPU"].renderer)

STALE = [b"5", b"null", b'"UPCAST"', b'{"UPCAST": 0}', b"[[1, 2, 3]]", b'[["UPCAST", 0, 4.0]]', b'[["UPCAST", "0", 2]]',
         b'[["UPCAST", 0, null]]', b'[["UPCAST", 0, true]]', b'[["UPCAST", 0]]', b'[["UPCAST", 0, 2, 1]]', b'[["NOPE", 0, 2]]',
         b'[["UPCAST", 0, 2], ["UNROLL", 0, 2]]', b'[["UPCAST", 9, 2]]', b'[["UPCAST", 0, 3]]', b"\xff\xfe", b"[["]

def test_stale_beam_entries_are_searched_again(fresh_cache, monkeypatch):
  """Each stale entry means a new search and nothing of it applied; a valid entry (the control) is used as is."""
  k = _kernel()
  key = search.ast_key(k.ast, k.renderer.device, 1)
  searched = []
  def fake_search(k, width, key, on_progress=None):
    searched.append(key)
    return k, {"rounds": 0, "tried": 0, "seconds": 0.0, "skipped": []}
  monkeypatch.setattr(search, "_search", fake_search)
  for entry in STALE:
    diskcache_put("beam", key, entry)
    out = search.beam_search(Kernel(k.ast, k.renderer), 1)
    assert searched == [key] and out.applied_opts == [], entry
    searched.clear()
  diskcache_put("beam", key, b'[["UPCAST", 0, 4]]')
  assert search.beam_search(Kernel(k.ast, k.renderer), 1).applied_opts == [Opt(OptOps.UPCAST, 0, 4)] and searched == []

OPEN_RETRY = """
import sqlite3, warnings
warnings.simplefilter("error")  # a DiskCacheWarning (the cache turned off) fails the child
import lazynb.device as dev
real, calls = dev._open, []
def flaky(path):  # what CI saw once with BEAM's threads opening a fresh cache: the first opens fail
  calls.append(path)
  if len(calls) <= 2: raise sqlite3.OperationalError("disk I/O error")
  return real(path)
dev._open = flaky
dev.diskcache_put("t", "k", b"v")
assert dev.no_disk_cache() is None and dev.diskcache_get("t", "k") == b"v" and len(calls) == 3, calls
print("ok")
"""

def test_a_transient_open_error_is_retried_not_turned_off(tmp_path):
  """BEAM's worker threads open the cache together; one CI run saw `disk I/O error` while another connection set up the
  journal, and the whole process ran without its cache. A locked, busy or I/O-erroring open of a writable directory is
  retried (then skipped this once), never a reason to turn the cache off."""
  env = dict(os.environ, PYTHONPATH=str(ROOT), LAZYNB_CACHE=str(tmp_path))
  p = subprocess.run([sys.executable, "-c", OPEN_RETRY], capture_output=True, text=True, timeout=300, env=env)
  assert p.returncode == 0 and p.stdout.strip() == "ok", p.stdout + p.stderr
