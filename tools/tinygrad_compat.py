"""Measure lazynb's tinygrad 0.10 compatibility with tinygrad 0.10.3's own tests and docstring examples (issue 31).

tinygrad's files come from its PyPI sdist, fetched at run time into a cache and never committed. Each test file runs
twice, each time as its own pytest subprocess: against the real tinygrad 0.10.3 (the installed package: which tests
tinygrad itself passes on this machine) and against a package named `tinygrad` that serves lazynb's modules (a
meta-path finder maps `tinygrad.X` to `lazynb.X`; the real package cannot be imported there). A file's score is how
many of the tests tinygrad passes lazynb passes too. A test that hangs past --timeout, or kills its process (a
segfault), is counted and named, and the file goes on from the next test in a new process.

Usage (from the repo root, in the venv that has pytest, torch, hypothesis, ml_dtypes and tinygrad==0.10.3):
  python tools/tinygrad_compat.py                             # test_ops.py and the learner files: a table
  python tools/tinygrad_compat.py --files test_ops test_nn    # some files (test_X, test_X.py or test/test_X.py)
  python tools/tinygrad_compat.py --json run.json             # also each test's outcome on both sides (diff two runs)
  python tools/tinygrad_compat.py --list-failing test_ops.py  # lazynb's failures among tinygrad's passes, by error
  python tools/tinygrad_compat.py --docs                      # tinygrad's docstring examples, printed outputs compared
The cache is $LAZYNB_COMPAT_CACHE or ~/.cache/lazynb-compat: the sdist, the copied test files, the shim, and each
side's results (tinygrad's are reused while its version and the test file are unchanged; --fresh runs them again).

The shim is lenient by default: a name tinygrad has and lazynb lacks imports as a stand-in that is 0 in a truth test or
a comparison (tinygrad's flags CI, OSX, IMAGE... are ints) and raises `LazynbLacks` naming it when anything else uses
it, so one missing name fails the tests that use it, not the whole file. --strict-imports makes it an ImportError.
Two private helpers tinygrad's tests use as plumbing (HARNESS below) are supplied when lazynb lacks them; the report
lists every missing name a file imported and every helper supplied."""
from __future__ import annotations
import argparse, ast, collections, contextlib, datetime, hashlib, importlib, importlib.util, io, json, os, pathlib, platform, re, shutil
import signal, subprocess, sys, tarfile, textwrap, time, types

VERSION = "0.10.3"
ROOT = pathlib.Path(__file__).resolve().parent.parent
TOOLS = pathlib.Path(__file__).resolve().parent
# the learner-facing files issue 31 names, as the sdist has them (its test/unit/test_shapetracker.py is not in the sdist:
# test_symbolic_shapetracker.py stands for the shapetracker tests)
LEARNER = ["test_tensor.py", "test_nn.py", "test_optim.py", "test_setitem.py", "test_assign.py", "test_jit.py", "test_dtype.py",
           "test_randomness.py", "test_arange.py", "test_schedule.py", "test_symbolic_shapetracker.py"]
DEFAULT_FILES = ["test_ops.py"] + LEARNER
# what tinygrad's repository has and its sdist does not: said in every report, since it cannot be measured from PyPI
WANTED_BUT_ABSENT = ["test/helpers.py", "test/unit/test_shapetracker.py", "docs/quickstart.md", "docs/mnist.md", "docs/abstractions2.py",
                     "docs/abstractions3.py", "extra/gradcheck.py", "extra/models/unet.py"]
PASS = ("passed", "xpassed")
RANDOM_DOC_SEED_SHIFT = 7919  # the probe run of the docs adds this to every seed: an output that changes is a random draw

def cache_dir(arg: str | None) -> pathlib.Path:
  d = pathlib.Path(arg or os.environ.get("LAZYNB_COMPAT_CACHE") or pathlib.Path.home() / ".cache" / "lazynb-compat").expanduser()
  d.mkdir(parents=True, exist_ok=True)
  return d

def say(*a): print(*a, file=sys.stderr, flush=True)

# ---------------------------------------------------------------------------------------------------------------------
# the sdist and the work folder

def fetch_sdist(cache: pathlib.Path) -> pathlib.Path:
  """tinygrad's sdist from PyPI (pip download), unpacked once; returns the unpacked folder."""
  src = cache / f"tinygrad-{VERSION}"
  if (src / "PKG-INFO").exists(): return src
  dl = cache / "sdist"
  tgz = dl / f"tinygrad-{VERSION}.tar.gz"
  if not tgz.exists():
    say(f"fetching tinygrad {VERSION}'s sdist from PyPI into {dl} ...")
    r = subprocess.run([sys.executable, "-m", "pip", "download", f"tinygrad=={VERSION}", "--no-deps", "--no-binary", ":all:", "-d", str(dl)],
                       capture_output=True, text=True)
    if r.returncode != 0 or not tgz.exists(): sys.exit(f"pip download of tinygrad=={VERSION} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
  with tarfile.open(tgz) as tf:
    kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
    tf.extractall(cache, **kw)
  if not (src / "PKG-INFO").exists(): sys.exit(f"{tgz} did not unpack to {src}")
  # the files this tool measures must be where it looks: a sdist laid out otherwise is a clear stop, not a 0 % score
  if lost := [f for f in DEFAULT_FILES if not (src / "test" / f).exists()]: sys.exit(f"tinygrad {VERSION}'s sdist lacks test/{lost}")
  return src

def absent_from_sdist(src: pathlib.Path) -> list[str]:
  return [p for p in WANTED_BUT_ABSENT if not (src / p).exists()]

def _imported_modules(path: pathlib.Path) -> set[str]:
  mods = set()
  for node in ast.walk(ast.parse(path.read_text())):
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0: mods.add(node.module)
    elif isinstance(node, ast.Import): mods.update(a.name for a in node.names)
  return mods

STANDIN = '''"""Stand-in for {mod}, which tinygrad's PyPI sdist does not ship (written by tools/tinygrad_compat.py): any name
imported from it raises NotInSdist when used, so the tests that need it count as unmeasurable, on both sides."""
from compat_unavailable import unavailable
def __getattr__(name):
  if name.startswith("__"): raise AttributeError(name)
  return unavailable("{mod}." + name)
'''
UNAVAILABLE = '''"""Written by tools/tinygrad_compat.py: what a file the sdist lacks stands on."""
class NotInSdist(Exception):
  """A test needed a file that tinygrad's PyPI sdist does not ship: it cannot be measured from PyPI's files."""

class unavailable:
  def __init__(self, name): self.name = name
  def __call__(self, *a, **k): raise NotInSdist(f"{self.name} is not in tinygrad's sdist")
  def __mro_entries__(self, bases): raise NotInSdist(f"{self.name} is not in tinygrad's sdist")
  def __getattr__(self, k):
    if k.startswith("__"): raise AttributeError(k)
    raise NotInSdist(f"{self.name} is not in tinygrad's sdist")
'''
# tinygrad's test/helpers.py is not in the sdist; the measured files import four names from it, written here anew
HELPERS = '''"""Stand-in for tinygrad's test/helpers.py, which its PyPI sdist does not ship (written by tools/tinygrad_compat.py):
the helpers the measured files import, same on both sides; any other name raises NotInSdist when used."""
import os
import numpy as np
from tinygrad import Device, dtypes
from compat_unavailable import unavailable

REAL_DEV = Device.DEFAULT

def not_support_multi_device():
  """tinygrad skips its multi-device tests on CI's GPU and CUDA runners only."""
  return bool(os.environ.get("CI")) and REAL_DEV in ("GPU", "CUDA")

def assert_jit_cache_len(fxn, expected_len):
  """The number of kernels a TinyJit captured: its cache's items, or the items of the one graph runner batching them."""
  cache = fxn.jit_cache
  if not cache:
    assert expected_len == 0, f"expected {expected_len} kernels in the jit cache, got none"
    return
  if type(cache[0].prg).__name__.endswith("Graph"):
    assert len(cache) == 1 and len(cache[0].prg.jit_cache) == expected_len, f"expected {expected_len} kernels in the graph"
  else: assert len(cache) == expected_len, f"expected {expected_len} kernels in the jit cache, got {len(cache)}"

def rand_for_dtype(dt, size):
  """Random numpy values that fit `dt`: small ints, booleans, or floats in [-10, 10)."""
  npdt = np.dtype(dt.fmt) if dt.fmt is not None else None
  if dtypes.is_unsigned(dt): return np.random.randint(0, 100, size=size).astype(npdt)
  if dtypes.is_int(dt): return np.random.randint(-100, 100, size=size).astype(npdt)
  if dt == dtypes.bool: return np.random.choice([True, False], size=size)
  return np.random.uniform(-10, 10, size=size).astype(npdt)

def __getattr__(name):
  if name.startswith("__"): raise AttributeError(name)
  return unavailable("test.helpers." + name)
'''

def prepare_work(cache: pathlib.Path, src: pathlib.Path, files: list[str]) -> pathlib.Path:
  """The folder pytest runs in: test/ with the sdist's files (and no tinygrad/ beside it, so only the installed
  package or the shim can be imported), stand-ins for the test/ and extra/ modules the sdist lacks, a pytest.ini."""
  work = cache / "work"
  (work / "test").mkdir(parents=True, exist_ok=True)
  (work / "pytest.ini").write_text("[pytest]\n# written by tools/tinygrad_compat.py: pins pytest's rootdir here\n")
  (work / "test" / "__init__.py").write_text("")  # a regular package, so `test` is this one and not the standard library's
  (work / "compat_unavailable.py").write_text(UNAVAILABLE)
  (work / "test" / "helpers.py").write_text(HELPERS)
  needed = set()
  for f in files:
    shutil.copyfile(src / "test" / f, work / "test" / f)
    needed |= {m for m in _imported_modules(src / "test" / f) if m.split(".")[0] in ("extra", "test") and m != "test.helpers"}
  for mod in sorted(needed):
    rel = pathlib.Path(*mod.split("."))
    if (src / rel).with_suffix(".py").exists():
      shutil.copyfile((src / rel).with_suffix(".py"), (work / rel).with_suffix(".py")); continue
    for i in range(1, len(rel.parts)):  # the packages on the way
      (work / pathlib.Path(*rel.parts[:i])).mkdir(parents=True, exist_ok=True)
      init = work / pathlib.Path(*rel.parts[:i]) / "__init__.py"
      if not init.exists(): init.write_text("")
    (work / rel).with_suffix(".py").write_text(STANDIN.format(mod=mod))
  return work

SHIM_INIT = '''# written by tools/tinygrad_compat.py: this `tinygrad` serves lazynb's modules (install_shim there says how)
import sys
for p in ({root!r}, {tools!r}):
  if p not in sys.path: sys.path.append(p)
import tinygrad_compat
tinygrad_compat.install_shim()
'''

def write_shim(cache: pathlib.Path) -> pathlib.Path:
  shim = cache / "shim"
  (shim / "tinygrad").mkdir(parents=True, exist_ok=True)
  (shim / "tinygrad" / "__init__.py").write_text(SHIM_INIT.format(root=str(ROOT), tools=str(TOOLS)))
  return shim

def side_env(side: str, shim: pathlib.Path, work: pathlib.Path, strict: bool) -> dict:
  """The subprocess's environment: the shim first for lazynb; for tinygrad nothing that could shadow the real one."""
  path = [str(shim), str(ROOT)] if side == "lazynb" else []
  env = dict(os.environ, PYTHONPATH=os.pathsep.join(path + [str(work), str(TOOLS)]), COMPAT_SIDE=side, PYTHONDONTWRITEBYTECODE="1")
  if strict: env["COMPAT_STRICT"] = "1"
  # tinygrad on its CPU device, as lazynb runs on its own: left to itself it takes an installed OpenCL library (PoCL on
  # a CPU, no fp16), where a hundred of its own schedule tests fail; a device named in the environment is kept
  if side == "tinygrad" and not any(env.get(d) for d in ("CPU", "CLANG", "LLVM", "GPU", "CL", "CUDA", "METAL", "AMD", "NV")):
    env["CPU"] = "1"
  return env

# ---------------------------------------------------------------------------------------------------------------------
# running one file on one side

def tinygrad_version() -> str | None:
  from importlib import metadata
  try: return metadata.version("tinygrad")
  except metadata.PackageNotFoundError: return None

def git_commit() -> str:
  r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
  dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "lazynb"], capture_output=True, text=True).stdout.strip()
  return (r.stdout.strip() or "?") + ("+changes" if dirty else "")

def _events(path: pathlib.Path) -> list[dict]:
  if not path.exists(): return []
  out = []
  for ln in path.read_text(errors="replace").splitlines():
    try: out.append(json.loads(ln))
    except json.JSONDecodeError: pass  # a line cut short by a crash
  return out

def _fault_summary(text: str) -> tuple[str, str | None]:
  """From faulthandler's dump: 'timeout' or 'crash', and the innermost lazynb/tinygrad frame named in it."""
  kind = "timeout" if "Timeout (" in text else "crash"
  first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
  frames = re.findall(r'File "([^"]+)", line (\d+) in (\S+)', text)  # innermost first
  where = next((f"{_short(p)}:{n} {fn}" for p, n, fn in frames if _library_file(p)), None)
  return kind, (first + (f" at {where}" if where else "")) if first else (where or "")

def run_file(side: str, fname: str, work: pathlib.Path, shim: pathlib.Path, cache: pathlib.Path, timeout: float, strict: bool,
             key: dict | None = None, max_restarts: int = 60) -> dict:
  """Run test/FNAME with pytest on one side, restarting past any test that hangs or kills the process. A run that was
  interrupted (the tool stopped) goes on where it stopped when run again with the same key."""
  rdir = cache / "runs" / side / fname.removesuffix(".py")
  old = sorted(rdir.glob("events*.jsonl"), key=lambda p: int(p.stem[6:]))
  resume = key is not None and (rdir / "key.json").exists() and json.loads((rdir / "key.json").read_text()) == key and old
  if not resume:
    shutil.rmtree(rdir, ignore_errors=True); rdir.mkdir(parents=True)
    if key is not None: (rdir / "key.json").write_text(json.dumps(key))
  outcomes: dict[str, dict] = {}
  collected: dict[str, None] = {}
  collect_errors, missing, supplied, notes, real_tinygrad = [], set(), set(), [], []
  def absorb(events: pathlib.Path) -> str | None:
    """Take in one process's events; returns the test it was running when it ended, if it ended inside one."""
    running = None
    for ev in _events(events):
      kind = ev["event"]
      if kind == "collected": collected.update(dict.fromkeys(ev["ids"]))
      elif kind == "start": running = ev["id"]
      elif kind == "done":
        outcomes[ev["id"]] = {k: ev[k] for k in ("outcome", "error", "where", "seconds") if ev.get(k) is not None}
        if running == ev["id"]: running = None
      elif kind == "collect_error": collect_errors.append(ev["error"])
      elif kind == "session":
        missing.update(ev["missing"]); supplied.update(ev["supplied"]); real_tinygrad.extend(ev["real_tinygrad"])
    return running
  first = 1
  if resume:
    for p in old: absorb(p)
    first = int(old[-1].stem[6:]) + 1
    say(f"  {fname} [{side}]: resuming an interrupted run, {len(outcomes)} tests done before")
  started_at = time.time()
  for attempt in range(first, first + max_restarts + 1):
    (rdir / "skip.txt").write_text("\n".join(sorted(outcomes)))
    events, faults, log = rdir / f"events{attempt}.jsonl", rdir / f"faults{attempt}.log", rdir / f"pytest{attempt}.log"
    env = dict(side_env(side, shim, work, strict), COMPAT_EVENTS=str(events), COMPAT_FAULTS=str(faults), COMPAT_SKIP=str(rdir / "skip.txt"),
               COMPAT_TIMEOUT=str(timeout))
    cmd = [sys.executable, "-m", "pytest", f"test/{fname}", "-p", "tinygrad_compat", "-p", "no:cacheprovider", "-p", "no:faulthandler",
           "-q", "--continue-on-collection-errors", "-o", "addopts=", f"--rootdir={work}"]
    with open(log, "w") as lf: rc = subprocess.run(cmd, cwd=work, env=env, stdout=lf, stderr=subprocess.STDOUT).returncode
    running = absorb(events)
    if running is not None:
      kind, msg = _fault_summary(faults.read_text(errors="replace") if faults.exists() else "")
      err = f"{kind}: the process ended (exit code {rc}) in this test" + (f"; {msg}" if msg else "")
      with open(events, "a") as f: f.write(json.dumps({"event": "done", "id": running, "outcome": kind, "error": err}) + "\n")
      absorb(events)
      say(f"  {fname} [{side}] {kind} in {running}: going on in a new process")
      continue
    if rc not in (0, 1, 5): notes.append(f"pytest exited with code {rc}: see {log}")
    break
  else: notes.append(f"gave up after {max_restarts} restarts")
  for i in collected:
    if i not in outcomes: outcomes[i] = {"outcome": "not run", "error": "collected but never run (the process ended?)"}
  if real_tinygrad and side == "lazynb": notes.append(f"the REAL tinygrad was imported in the lazynb run: {real_tinygrad[:3]}")
  return {"side": side, "file": fname, "outcomes": outcomes, "collect_errors": list(dict.fromkeys(collect_errors)), "missing": sorted(missing),
          "supplied": sorted(supplied), "notes": notes, "seconds": round(time.time() - started_at, 1),
          "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}

def result_path(cache: pathlib.Path, side: str, fname: str) -> pathlib.Path: return cache / "results" / side / (fname + ".json")

def side_key(side: str, src: pathlib.Path, fname: str, timeout: float, strict: bool) -> dict:
  """What a stored result depends on: a tinygrad result stays valid while these are equal."""
  key = {"tinygrad": tinygrad_version(), "python": platform.python_version(), "timeout": timeout, "strict": strict,
         "file_sha": hashlib.sha256((src / "test" / fname).read_bytes()).hexdigest()[:16]}
  if side == "lazynb": key["lazynb"] = git_commit()
  return key

def get_result(side: str, fname: str, ctx: dict, reuse: bool) -> dict:
  path, key = result_path(ctx["cache"], side, fname), side_key(side, ctx["src"], fname, ctx["timeout"], ctx["strict"])
  if reuse and path.exists():
    old = json.loads(path.read_text())
    if old.get("key") == key: return old
  if side == "tinygrad" and key["tinygrad"] != VERSION:  # an empty run would overwrite the stored oracle result
    if path.exists():
      say(f"warning: tinygrad {VERSION} is not installed: using the stored tinygrad result of {fname}")
      return json.loads(path.read_text())
    sys.exit(f"tinygrad {VERSION} is not installed, and no stored tinygrad result of {fname}: pip install tinygrad=={VERSION}")
  say(f"running test/{fname} against {side} ...")
  res = run_file(side, fname, ctx["work"], ctx["shim"], ctx["cache"], ctx["timeout"], ctx["strict"], key=key)
  res["key"] = key
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_text(json.dumps(res, indent=1, sort_keys=True))
  n = collections.Counter(o["outcome"] for o in res["outcomes"].values())
  say(f"  {fname} [{side}] {dict(n)} in {res['seconds']:.0f} s")
  return res

# ---------------------------------------------------------------------------------------------------------------------
# tests whose expectation lazynb does not share, on purpose

# Each reason names where lazynb's docs say why. These tests still count as failures in the score (the figure issue 31
# sets its goal for); the report gives them apart, so that what is left is the gaps. A listed test that passes now, or
# that tinygrad's files no longer have, is reported: the list must stay true.
ON_PURPOSE: dict[str, tuple[str, str]] = {}  # "file::Class::test" -> (reason, where the docs say why)
def _on_purpose(reason: str, where: str, tests: str) -> None:
  for t in tests.split():
    f, rest = t.split("::", 1)
    ON_PURPOSE[f"test/{f}::{rest}"] = (reason, where)
_on_purpose("fewer kernels than tinygrad (or less memory freed: fewer intermediates)", 'docs/fusion.md, "Fewer kernels than tinygrad"', """
  test_schedule.py::TestSchedule::test_adam_2convs_fuse test_schedule.py::TestSchedule::test_adam_conv_fuse
  test_schedule.py::TestSchedule::test_adam_step_fusion test_schedule.py::TestSchedule::test_argmax_multireduce_fusion
  test_schedule.py::TestSchedule::test_argmin_multireduce_fusion test_schedule.py::TestSchedule::test_base_change_expand_expand
  test_schedule.py::TestSchedule::test_base_change_pad_expand test_schedule.py::TestSchedule::test_children_dont_push
  test_schedule.py::TestSchedule::test_example_matmul_contig test_schedule.py::TestSchedule::test_expand_nofuse
  test_schedule.py::TestSchedule::test_fold_2convs_sgd_nesterov_momentum_wd test_schedule.py::TestSchedule::test_fold_batchnorm_backward
  test_schedule.py::TestSchedule::test_late_fusion_post_permute test_schedule.py::TestSchedule::test_preserve_multistage_reduce
  test_schedule.py::TestSchedule::test_reduce_expand_child test_schedule.py::TestSchedule::test_reduce_permute_nofuse
  test_schedule.py::TestSchedule::test_reduceop_reshape_dont_push test_schedule.py::TestSchedule::test_reduce_permute_binop_fusion
  test_schedule.py::TestSchedule::test_scaled_dot_product_attention_causal_fusion test_schedule.py::TestSchedule::test_scaled_dot_product_attention_fusion
  test_schedule.py::TestSchedule::test_scaled_dot_product_attention_multireduce_fusion test_schedule.py::TestSchedule::test_simplify_padded_const
  test_schedule.py::TestSchedule::test_conv2d test_schedule.py::TestSchedule::test_conv2d_half
  test_schedule.py::TestIndexing::test_advanced_indexing test_schedule.py::TestIndexing::test_advanced_simple_indexing_combined
  test_schedule.py::TestIndexing::test_arange_index_contiguous test_schedule.py::TestIndexing::test_arange_index_contiguous_child
  test_schedule.py::TestIndexing::test_simple_indexing test_schedule.py::TestIndexing::test_simple_indexing_alt
  test_nn.py::TestNN::test_embedding_one_kernel test_arange.py::TestIndexing::test_index_fused
  test_arange.py::TestIndexing::test_llama_embedding test_arange.py::TestIndexing::test_llama_embedding_opt
  test_jit.py::TestJitFree::test_free_intermediates""")
_on_purpose("a new value gets memory of its own where tinygrad aliases", 'docs/fusion.md, "More kernels than tinygrad, on purpose"', """
  test_schedule.py::TestContiguous::test_contiguous_buffer test_schedule.py::TestContiguous::test_contiguous_buffer_view
  test_schedule.py::TestContiguous::test_double_contiguous_realizes_once test_schedule.py::TestSchedule::test_const_no_recompute
  test_schedule.py::TestSchedule::test_contiguous_while_contiguous test_schedule.py::TestSchedule::test_copy_dedups
  test_schedule.py::TestSchedule::test_dedup_assign test_schedule.py::TestSchedule::test_dedup_contiguous
  test_schedule.py::TestSchedule::test_div_collapse_buffer test_schedule.py::TestSchedule::test_div_collapse_const
  test_schedule.py::TestConst::test_src_const_folding test_schedule.py::TestUOpBecome::test_become_const_in_base
  test_schedule.py::TestUOpBecome::test_become_const_in_view test_schedule.py::TestUOpBecome::test_become_existing_buf_complex
  test_schedule.py::TestUOpBecome::test_become_existing_buf_simple test_schedule.py::TestUOpBecome::test_become_existing_buf_view
  test_schedule.py::TestUOpBecome::test_become_existing_buf_view_alt test_schedule.py::TestUOpBecome::test_become_existing_buffer
  test_schedule.py::TestUOpBecome::test_become_multiple_choices""")
_on_purpose("an optimizer step also realizes the gradients and the loss; the CPU's row layout for convolutions",
            'docs/fusion.md, "More kernels than tinygrad, on purpose"', """
  test_schedule.py::TestSchedule::test_sgd_conv_fuse test_schedule.py::TestSchedule::test_sgd_4convs_fuse
  test_schedule.py::TestSchedule::test_sgd_4convs_fuse_conv_bw test_schedule.py::TestSchedule::test_fold_conv_batchnorm_optim
  test_schedule.py::TestSchedule::test_resnet_block""")
_on_purpose("a schedule handed out does not count as computed before its items run", 'docs/internals.md, "Schedules handed out"', """
  test_schedule.py::TestSchedule::test_cache_binaryop test_schedule.py::TestSchedule::test_no_binop_rerun
  test_schedule.py::TestSchedule::test_fold_conv_elu_alt""")
_on_purpose("an assign through any view is computed (numpy's values) where tinygrad refuses, and written at once",
            'docs/compat.md, "Deliberate differences"; docs/internals.md, "Views and in-place writes"', """
  test_assign.py::TestAssign::test_assign_diamond_contiguous_cycle test_assign.py::TestAssign::test_assign_diamond_cycle
  test_assign.py::TestAssign::test_permuted_assignment_correct test_assign.py::TestAssign::test_permuted_assignment_masked_view_not_contiguous
  test_assign.py::TestAssign::test_permuted_reduceop_child_dual_use test_assign.py::TestAssign::test_post_permuted_assignment
  test_assign.py::TestAssign::test_permuted_assignment test_assign.py::TestAssign::test_permuted_assignment_masked_view_possible
  test_assign.py::TestAssign::test_simple_assignment test_setitem.py::TestSetitem::test_setitem_into_noncontiguous
  test_schedule.py::TestIndexing::test_fuse_assign_contiguous test_schedule.py::TestUOpBecome::test_setitem_becomes_subbuffer""")
_on_purpose("a clear error where tinygrad returns a stale, silent or unchecked result", 'docs/compat.md, "Deliberate differences"', """
  test_jit.py::TestJit::test_jit_output_non_tensor_fail test_jit.py::TestJit::test_array_jit
  test_tensor.py::TestInferenceMode::test_inference test_tensor.py::TestInferenceMode::test_no_grad_mode_context_manager
  test_setitem.py::TestSetitem::test_jit_setitem_variable_offset test_assign.py::TestAssign::test_assign_kv_cache""")
_on_purpose("a size with variables must fit for every value in their ranges", 'docs/compat.md, "A shrink with variables must fit"', """
  test_symbolic_shapetracker.py::TestShapeTrackerUnbind::test_shrink_unbind test_symbolic_shapetracker.py::TestSymbolicShrink::test_shrink_symbols""")
_on_purpose("tinygrad's internals lazynb does not share (its graph rewrites, UOp forms, arange as a reduce, device graphs)",
            'docs/compat.md, "Internals it does not share"', """
  test_schedule.py::TestSimplifier::test_all_const_uops test_schedule.py::TestSimplifier::test_cast_folding
  test_schedule.py::TestSimplifier::test_const_folding_lt test_schedule.py::TestSimplifier::test_const_folding_mul
  test_schedule.py::TestSimplifier::test_const_folding_ne test_schedule.py::TestSimplifier::test_elementwise_ops
  test_schedule.py::TestSimplifier::test_masked_const_elementwise test_schedule.py::TestBufferUOp::test_buffer_view_not_allowed
  test_schedule.py::TestTensorUOpSpec::test_expanded_const_ok test_schedule.py::TestTensorUOpSpec::test_const_must_be_unmasked
  test_schedule.py::TestConst::test_tensor_const test_schedule.py::TestConst::test_tensor_variable test_schedule.py::TestConst::test_const_ast
  test_schedule.py::TestIndexing::test_recursive_swizzle test_schedule.py::TestSwizzle::test_unsafe_pad
  test_schedule.py::TestSchedule::test_multioutput_ast test_schedule.py::TestSchedule::test_multireduce_push_shrink_chase
  test_schedule.py::TestView::test_parent_multiple_children_no_collapse test_schedule.py::TestSchedule::test_cast_padded_view
  test_schedule.py::TestSchedule::test_pow_neg_05_is_rsqrt test_schedule.py::TestSchedule::test_image_conv_fusion
  test_arange.py::TestArange::test_all_opts_w_unroll test_arange.py::TestArange::test_all_opts_w_upcast_and_unroll
  test_arange.py::TestArange::test_complexity_w_unroll2 test_arange.py::TestArange::test_complexity_w_unroll4
  test_arange.py::TestArange::test_complexity_w_unroll8 test_arange.py::TestArange::test_complexity_w_upcast_and_unroll
  test_arange.py::TestIndexing::test_manual_index test_jit.py::TestJit::test_jit_batch_split test_jit.py::TestJitFree::test_replan_buffers_memory_layout
  test_ops.py::TestOps::test_logcumsumexp_numerical""")
_on_purpose("numerics as numpy and torch where tinygrad's rewrites differ", 'docs/compat.md, "Deliberate differences"', """
  test_schedule.py::TestSchedule::test_div_collapse test_ops.py::TestOps::test_sigmoid_alt_extreme""")

# ---------------------------------------------------------------------------------------------------------------------
# reports

def file_score(fname: str, tg: dict | None, lz: dict | None) -> dict:
  tgo, lzo = (tg or {}).get("outcomes", {}), (lz or {}).get("outcomes", {})
  ids = sorted(set(tgo) | set(lzo))
  tg_pass = [i for i in ids if tgo.get(i, {}).get("outcome") in PASS]
  lz_fail = collections.Counter(lzo.get(i, {}).get("outcome", "not collected") for i in tg_pass)
  both = lz_fail.pop("passed", 0) + lz_fail.pop("xpassed", 0)
  prefix = f"test/{fname}::"
  listed = [i for i in ON_PURPOSE if i.startswith(prefix)]
  on_purpose = collections.Counter(ON_PURPOSE[i][0] for i in tg_pass if i in ON_PURPOSE and lzo.get(i, {}).get("outcome") not in PASS)
  stale = [i for i in listed if lzo and (i not in ids or lzo.get(i, {}).get("outcome") in PASS)]
  return {"file": fname, "tests": len(ids), "tinygrad_passed": len(tg_pass), "lazynb_passed": both,
          "on_purpose": dict(on_purpose), "on_purpose_stale": stale,
          "lazynb_only": sum(1 for i in ids if lzo.get(i, {}).get("outcome") in PASS and i not in tg_pass),
          "unmeasurable": sum(1 for i in ids if tgo.get(i, {}).get("outcome") == "unmeasurable"),
          "lazynb_not_passed": dict(lz_fail)}

def pct(a: int, b: int) -> str: return f"{100 * a / b:.1f}" if b else "-"

def print_table(scores: list[dict], results: dict) -> None:
  print(f"{'file':30s} {'tests':>6s} {'tinygrad':>9s} {'lazynb':>7s} {'%':>6s}  lazynb's other outcomes on tinygrad's passes")
  for s in scores:
    other = ", ".join(f"{n} {k}" for k, n in sorted(s["lazynb_not_passed"].items(), key=lambda kv: -kv[1]))
    print(f"{s['file']:30s} {s['tests']:6d} {s['tinygrad_passed']:9d} {s['lazynb_passed']:7d} {pct(s['lazynb_passed'], s['tinygrad_passed']):>6s}  {other}")
  print("(tinygrad: the tests tinygrad 0.10.3 passes here; lazynb: how many of those lazynb passes; "
        + "%: lazynb / tinygrad)")
  for f, sides in results.items():
    for side, r in sides.items():
      if r is None: continue
      for n in r["notes"]: print(f"note: {f} [{side}]: {n}")
      if r["collect_errors"]: print(f"note: {f} [{side}] did not import: {r['collect_errors'][0]}")
    lz = sides.get("lazynb")
    if lz and lz["missing"]: print(f"{f}: names lazynb lacks ({len(lz['missing'])}): {' '.join(lz['missing'])}")
    if lz and lz["supplied"]: print(f"{f}: private helpers the tool supplied: {' '.join(lz['supplied'])}")
  def line(label, ss):
    a, b = sum(s["lazynb_passed"] for s in ss), sum(s["tinygrad_passed"] for s in ss)
    return f"{label}: lazynb passes {a} of the {b} tests tinygrad passes ({pct(a, b)} %)"
  def apart(ss):
    """The failures that differ on purpose (ON_PURPOSE), by reason, and the score over the tests whose expectation lazynb shares."""
    why: collections.Counter = collections.Counter()
    for s in ss: why.update(s["on_purpose"])
    a, b, k = sum(s["lazynb_passed"] for s in ss), sum(s["tinygrad_passed"] for s in ss), sum(why.values())
    if not k: return
    print(f"  of the {b - a} it does not pass, {k} differ on purpose (tools/tinygrad_compat.py ON_PURPOSE, each with the docs that say why):")
    for r, n in why.most_common(): print(f"    {n:4d}  {r}")
    print(f"  the other {b - a - k} are the gaps: lazynb passes {a} of the {b - k} tests whose expectation it shares ({pct(a, b - k)} %)")
  ops = [s for s in scores if s["file"] == "test_ops.py"]
  rest = [s for s in scores if s["file"] != "test_ops.py"]
  if ops: print(line("test_ops.py", ops)); apart(ops)  # noqa: E702
  if rest: print(line("the other files" if set(s["file"] for s in rest) != set(LEARNER) else "the learner files", rest)); apart(rest)  # noqa: E702
  for s in scores:
    if s["on_purpose_stale"]: print(f"note: ON_PURPOSE lists tests of {s['file']} that lazynb passes or that are gone (remove them): {' '.join(s['on_purpose_stale'])}")
  unm = sum(s["unmeasurable"] for s in scores)
  if unm: print(f"({unm} tests need a file the sdist lacks: counted on neither side)")

def error_key(msg: str) -> str:
  """An error's first line with its numbers, addresses and quoted values masked: the errors of one cause group together."""
  m = re.sub(r"0x[0-9a-fA-F]+", "0x_", msg or "")
  m = re.sub(r"(?<![A-Za-z_])[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", "N", m)
  m = re.sub(r"\[[^\[\]]{40,}\]", "[...]", m)
  return re.sub(r"\s+", " ", m).strip()[:140]

def list_failing(fname: str, tg: dict, lz: dict, show_all: bool) -> None:
  tgo, lzo = tg["outcomes"] if tg else {}, lz["outcomes"]
  ids = [i for i in sorted(set(tgo) | set(lzo)) if lzo.get(i, {}).get("outcome") not in PASS]
  if not show_all: ids = [i for i in ids if tgo.get(i, {}).get("outcome") in PASS]
  groups: dict[str, list[str]] = collections.defaultdict(list)
  for i in ids:
    o = lzo.get(i, {"outcome": "not collected", "error": (lz["collect_errors"] or ["not collected on the lazynb side"])[0]})
    groups[error_key(o.get("error") or o["outcome"])].append(i)
  print(f"{fname}: {len(ids)} tests lazynb does not pass{'' if show_all else ' among those tinygrad passes'}, "
        f"{len(groups)} kinds of error (lazynb run {lz['date']}, commit {lz['key'].get('lazynb')})")
  for key, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
    wheres = collections.Counter(lzo.get(i, {}).get("where") for i in members if lzo.get(i, {}).get("where"))
    print(f"\n[{len(members)}] {key}" + (f"\n     at {wheres.most_common(1)[0][0]}" if wheres else ""))
    for i in members:
      o = lzo.get(i, {})
      err = o.get("error") or o.get("outcome", "")
      why = f"  [on purpose: {ON_PURPOSE[i][0]}; {ON_PURPOSE[i][1]}]" if i in ON_PURPOSE else ""
      print(f"  {i.split('::', 1)[-1]}" + (f"  -- {err[:160]}" if error_key(err) != key or len(members) == 1 else "") + why)
  if gaps := [i for i in ids if i not in ON_PURPOSE]: print(f"\nthe gaps (not on purpose), {len(gaps)}: " + " ".join(i.split("::", 1)[-1] for i in gaps))

# ---------------------------------------------------------------------------------------------------------------------
# the docstring examples

def doc_blocks(src: pathlib.Path) -> list[dict]:
  """Every ```python exec="true" block of the docstrings in tinygrad's sources, in the order the files and lines give
  (tensor.py first: its first block sets the session up), read with ast: tinygrad is not imported for this."""
  files = sorted(p for p in (src / "tinygrad").rglob("*.py") if 'exec="true"' in p.read_text(errors="replace"))
  files.sort(key=lambda p: p.name != "tensor.py")
  blocks = []
  for p in files:
    rel = p.relative_to(src).as_posix()
    docs = []
    def visit(node, prefix):
      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        d = ast.get_docstring(node, clean=False)  # as written: its line offsets are the file's
        if d and node.body and isinstance(node.body[0], ast.Expr): docs.append((node.body[0].lineno, prefix.strip("."), d))
      for child in ast.iter_child_nodes(node):
        visit(child, prefix + "." + child.name if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) else prefix)
    visit(ast.parse(p.read_text()), "")
    for line, qual, d in sorted(docs):
      for m in re.finditer(r"```python([^\n]*)\n(.*?)```", d, re.S):
        if 'exec="true"' not in m.group(1): continue
        blocks.append({"id": f"{rel}:{line + d[:m.start()].count(chr(10))} {qual or '<module>'}", "code": textwrap.dedent(m.group(2))})
  return blocks

class CompatTimeout(Exception):
  """A test or an example ran past the tool's --timeout."""

def _alarm(seconds: float) -> None:
  def on_alarm(signum, frame): raise CompatTimeout(f"ran past the {seconds:g} s timeout")
  signal.signal(signal.SIGALRM, on_alarm)
  signal.setitimer(signal.ITIMER_REAL, seconds)

def docs_child(blocks_path: str, out_path: str, skip_path: str, timeout: float, probe: bool) -> None:
  """In the subprocess: run the blocks in one namespace (the docs' one session), each one's printed output recorded."""
  import faulthandler
  blocks, skip = json.loads(pathlib.Path(blocks_path).read_text()), set(pathlib.Path(skip_path).read_text().split("\n"))
  done = {e["id"] for e in _events(pathlib.Path(out_path))}
  faults = open(out_path + ".faults", "w")
  faulthandler.enable(faults)
  if probe:  # every seed shifted: an example whose output changes is a random draw
    from tinygrad import Tensor
    seed = Tensor.manual_seed
    Tensor.manual_seed = staticmethod(lambda s=0: seed(s + RANDOM_DOC_SEED_SHIFT))
    Tensor.manual_seed(0)
  ns: dict = {"__name__": "__main__"}
  with open(out_path, "a") as out:
    for b in blocks:
      if b["id"] in skip: continue
      buf, err = io.StringIO(), None
      faulthandler.dump_traceback_later(timeout + 30, exit=True, file=faults)
      out.write(json.dumps({"event": "start", "id": b["id"]}) + "\n"); out.flush()
      try:
        _alarm(timeout)
        with contextlib.redirect_stdout(buf): exec(compile(b["code"], b["id"], "exec"), ns)
      except BaseException as e:  # noqa: B036  an example's SystemExit or KeyboardInterrupt is its failure too
        err = f"{type(e).__name__}: {first_line(str(e))}"
      finally: signal.setitimer(signal.ITIMER_REAL, 0)
      faulthandler.cancel_dump_traceback_later()
      if b["id"] not in done: out.write(json.dumps({"event": "done", "id": b["id"], "out": buf.getvalue(), "error": err}) + "\n"); out.flush()

def run_docs_side(side: str, blocks: list[dict], ctx: dict, probe: bool = False) -> dict:
  ddir = ctx["cache"] / "docs" / (side + ("-probe" if probe else ""))
  shutil.rmtree(ddir, ignore_errors=True); ddir.mkdir(parents=True)
  (ddir / "blocks.json").write_text(json.dumps(blocks))
  out, skip, res = ddir / "out.jsonl", set(), {}
  for _ in range(60):
    (ddir / "skip.txt").write_text("\n".join(sorted(skip)))
    cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--_docs-child", str(ddir / "blocks.json"), str(out), str(ddir / "skip.txt"),
           str(ctx["timeout"])] + (["--_probe"] if probe else [])
    with open(ddir / "log.txt", "a") as lf:
      rc = subprocess.run(cmd, cwd=ddir, env=side_env(side, ctx["shim"], ctx["work"], ctx["strict"]), stdout=lf, stderr=subprocess.STDOUT).returncode
    running = None
    for ev in _events(out):
      if ev["event"] == "start": running = ev["id"]
      elif ev["event"] == "done":
        res[ev["id"]] = {"out": ev["out"], "error": ev["error"]}
        if running == ev["id"]: running = None
    if running is None or running in res: break
    kind, msg = _fault_summary((out.parent / (out.name + ".faults")).read_text(errors="replace"))
    res[running] = {"out": "", "error": f"{kind}: the process ended (exit code {rc}) in this example; {msg}"}
    with open(out, "a") as f: f.write(json.dumps({"event": "done", "id": running, **res[running]}) + "\n")
    skip.add(running)
  return res

NUM = re.compile(r"(?<![A-Za-z_])[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")

def close_outputs(a: str, b: str) -> bool:
  """The same text with every number equal to print rounding (a last printed digit may differ)."""
  if NUM.sub("#", a) != NUM.sub("#", b): return False
  for x, y in zip(NUM.finditer(a), NUM.finditer(b)):
    fx, fy = float(x.group()), float(y.group())
    if abs(fx - fy) > 1e-4 + 1e-3 * abs(fy): return False
  return True

def run_docs(ctx: dict, reuse: bool) -> dict:
  blocks = doc_blocks(ctx["src"])
  say(f"{len(blocks)} docstring examples; running them on tinygrad, tinygrad with shifted seeds, lazynb ...")
  key = {"tinygrad": tinygrad_version(), "python": platform.python_version(), "blocks": hashlib.sha256(json.dumps(blocks).encode()).hexdigest()[:16]}
  stored = ctx["cache"] / "results" / "docs-tinygrad.json"
  old = json.loads(stored.read_text()) if reuse and stored.exists() else {}
  if old.get("key") == key: tg, probe = old["tinygrad"], old["probe"]
  else:
    tg, probe = run_docs_side("tinygrad", blocks, ctx), run_docs_side("tinygrad", blocks, ctx, probe=True)
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_text(json.dumps({"key": key, "tinygrad": tg, "probe": probe}))
  lz = run_docs_side("lazynb", blocks, ctx)
  per = {}
  for b in blocks:
    i, t, p, z = b["id"], tg.get(b["id"], {}), probe.get(b["id"], {}), lz.get(b["id"], {"out": "", "error": "not run"})
    if t.get("error") is not None or not t: per[i] = {"outcome": "tinygrad fails", "error": t.get("error")}
    elif z["error"] is not None: per[i] = {"outcome": "error", "error": z["error"]}
    elif z["out"] == t["out"]: per[i] = {"outcome": "exact"}
    elif close_outputs(z["out"], t["out"]): per[i] = {"outcome": "close"}
    else: per[i] = {"outcome": "differs", "error": f"output differs: tinygrad {t['out'].strip()[:70]!r}, lazynb {z['out'].strip()[:70]!r}"}
    # a random draw (its output moves with the seed): counted like the rest, since lazynb draws tinygrad's stream
    if t and t.get("error") is None and (p.get("out") != t["out"] or p.get("error") is not None): per[i]["random"] = True
  return per

def print_docs(per: dict, absent: list[str]) -> None:
  n = collections.Counter(o["outcome"] for o in per.values())
  total = n["exact"] + n["close"] + n["error"] + n["differs"]
  rnd = [o for o in per.values() if o.get("random")]
  rnd_ok = sum(o["outcome"] in ("exact", "close") for o in rnd)
  print(f"docstring examples (tinygrad/*.py exec blocks): {n['exact'] + n['close']} of {total} match "
        f"({pct(n['exact'] + n['close'], total)} %; {n['exact']} exact, {n['close']} within print rounding; "
        f"{rnd_ok} of the {len(rnd)} that draw random numbers); not counted: {n['tinygrad fails']} that fail under tinygrad here")
  groups = collections.defaultdict(list)
  for i, o in per.items():
    if o["outcome"] in ("error", "differs"): groups[error_key(o["error"]) if o["outcome"] == "error" else "output differs"].append(i)
  for key, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
    print(f"\n[{len(members)}] {key}")
    for i in members: print(f"  {i}" + (f"  -- {per[i]['error'][:160]}" if per[i]["outcome"] == "differs" else ""))
  docs = [a for a in absent if a.startswith("docs/")]
  if docs: print(f"\nnot measured: {', '.join(docs)} are not in tinygrad's PyPI sdist")

# ---------------------------------------------------------------------------------------------------------------------
# inside the lazynb test process: the shim

class LazynbLacks(NotImplementedError):
  """A test used a name tinygrad 0.10 has and lazynb does not."""

_MISSING_SEEN: set[str] = set()
_SUPPLIED: set[str] = set()

def _to_np_dtype(dt):
  """tinygrad.tensor's private numpy-dtype helper, which its tests import: numpy's scalar type (a class, as tinygrad's
  returns: its tests ask issubclass of it) for dt's struct format."""
  import numpy as np
  return np.dtype(dt.fmt).type if dt.fmt is not None else None

def _temp(x: str, append_user: bool = False) -> str:
  """tinygrad.helpers.temp, which its tests import: a path in the system's temporary folder."""
  import tempfile, getpass
  return str(pathlib.Path(tempfile.gettempdir()) / (f"{x}.{getpass.getuser()}" if append_user else x))

# private plumbing of tinygrad's tests: supplied when lazynb lacks it (reported), so the tests measure the public API
HARNESS = {"tinygrad.tensor._to_np_dtype": _to_np_dtype, "tinygrad.helpers.temp": _temp}

class _Missing:
  """A name tinygrad has and lazynb lacks: 0 in a truth test or a comparison, LazynbLacks when used in any other way."""
  def __init__(self, name): object.__setattr__(self, "_name", name)
  def _fail(self, *a, **k): raise LazynbLacks(f"lazynb has no {self._name}")
  __call__ = __iter__ = __len__ = __getitem__ = __setitem__ = __enter__ = __exit__ = __mro_entries__ = _fail
  __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __floordiv__ = __mod__ = __neg__ = _fail
  def __getattr__(self, k):
    if k == "value": return 0
    if k.startswith("__"): raise AttributeError(k)
    self._fail()
  def __setattr__(self, k, v): self._fail()
  def __bool__(self): return False
  def __int__(self): return 0
  def __index__(self): return 0
  def __eq__(self, o): return o is self or (isinstance(o, (int, float)) and o == 0)
  def __ne__(self, o): return not self.__eq__(o)
  def __lt__(self, o): return 0 < o
  def __le__(self, o): return 0 <= o
  def __gt__(self, o): return 0 > o
  def __ge__(self, o): return 0 >= o
  def __hash__(self): return hash(self._name)
  def __repr__(self): return f"<lazynb lacks {self._name}>"

class _ShimModule(types.ModuleType):
  """tinygrad.X serving lazynb.X: reads go to lazynb's module (submodules come back as their shims), writes go through."""
  def __getattr__(self, name): return _shim_getattr(self, name)
  def __setattr__(self, name, value):
    real = self.__dict__.get("_lazynb")
    if name.startswith("__") or isinstance(value, _ShimModule) or real is None: super().__setattr__(name, value)
    else: setattr(real, name, value)
  def __dir__(self): return dir(self.__dict__.get("_lazynb") or ())

def _shim_getattr(mod: _ShimModule, name: str):
  real = mod.__dict__.get("_lazynb")
  if name.startswith("__") and name.endswith("__"):
    if name == "__all__" and real is not None: return getattr(real, "__all__", [n for n in vars(real) if not n.startswith("_")])
    raise AttributeError(name)
  if real is not None:
    if hasattr(real, name):
      v = getattr(real, name)
      if isinstance(v, types.ModuleType) and v.__name__.startswith("lazynb."): return importlib.import_module("tinygrad" + v.__name__[len("lazynb"):])
      return v
    if hasattr(real, "__path__") and importlib.util.find_spec(f"{real.__name__}.{name}") is not None:
      return importlib.import_module(f"{mod.__name__}.{name}")
  full = f"{mod.__name__}.{name}"
  if full in HARNESS and not os.environ.get("COMPAT_STRICT"):
    _SUPPLIED.add(full)
    return HARNESS[full]
  if os.environ.get("COMPAT_STRICT"): raise AttributeError(f"module {mod.__name__!r} has no attribute {name!r}: lazynb has no {full}")
  _MISSING_SEEN.add(full)
  return _Missing(full)

class _ShimFinder:
  """Finds every tinygrad.* name and makes it a _ShimModule of lazynb's module of the same path."""
  def find_spec(self, fullname, path=None, target=None):
    if fullname != "tinygrad" and not fullname.startswith("tinygrad."): return None
    return importlib.util.spec_from_loader(fullname, self, is_package=True)
  def create_module(self, spec):
    target = "lazynb" + spec.name[len("tinygrad"):]
    mod = _ShimModule(spec.name)
    try: real = importlib.import_module(target)
    except ModuleNotFoundError as e:
      if e.name is None or not target.startswith(e.name): raise  # lazynb has the module, but an import inside it failed
      if os.environ.get("COMPAT_STRICT"): raise ModuleNotFoundError(f"No module named {spec.name!r}: lazynb has no {target}", name=spec.name) from None
      _MISSING_SEEN.add(spec.name)
      real = None
    mod.__dict__["_lazynb"] = real
    return mod
  def exec_module(self, module): pass

def install_shim() -> None:
  """Called by the shim's tinygrad/__init__.py: the finder goes first, and `tinygrad` itself becomes lazynb's shim."""
  for k, m in list(sys.modules.items()):
    if (k == "tinygrad" or k.startswith("tinygrad.")) and "site-packages" in str(getattr(m, "__file__", "")):
      raise RuntimeError(f"the real tinygrad was imported before the shim: {k}")
  finder = _ShimFinder()
  sys.meta_path.insert(0, finder)
  sys.modules["tinygrad"] = importlib.util.module_from_spec(finder.find_spec("tinygrad"))

# ---------------------------------------------------------------------------------------------------------------------
# inside the test process: the pytest plugin (loaded with -p tinygrad_compat; acts only when COMPAT_EVENTS is set)

_plugin: dict = {}

def _emit(**ev) -> None:
  f = _plugin.get("events")
  if f is not None: f.write(json.dumps(ev) + "\n"); f.flush()

def _short(path: str) -> str:
  p = str(path)
  for base in (str(ROOT) + "/", "site-packages/"):
    if base in p: return p.split(base, 1)[1]
  return p.rsplit("/", 2)[-1] if "/test/" not in p else "test/" + p.rsplit("/test/", 1)[1]

def _library_file(path: str) -> bool:
  p = str(path)
  return p.startswith(str(ROOT / "lazynb")) or "site-packages/tinygrad/" in p

def first_line(text: str) -> str:
  """An error's first line, with the next one when it ends in ':' (numpy's and test_ops' messages say what on the next)."""
  lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
  if not lines: return ""
  return lines[0] + (" " + lines[1] if lines[0].endswith(":") and len(lines) > 1 else "")

def _describe(excinfo) -> tuple[str, str | None, str]:
  """(first line of the error, innermost lazynb/tinygrad frame, outcome it means)."""
  e = excinfo.value
  msg = f"{type(e).__name__}: {first_line(str(e))}"
  where = None
  for entry in reversed(excinfo.traceback):
    if _library_file(str(entry.path)):
      where = f"{_short(str(entry.path))}:{entry.lineno + 1} {entry.name}"; break
  kind = {"CompatTimeout": "timeout", "NotInSdist": "unmeasurable"}.get(type(e).__name__, "failed")
  return msg, where, kind

def pytest_configure(config):
  if not os.environ.get("COMPAT_EVENTS"): return
  import faulthandler
  _plugin["events"] = open(os.environ["COMPAT_EVENTS"], "a")
  _plugin["faults"] = open(os.environ["COMPAT_FAULTS"], "w")
  _plugin["timeout"] = float(os.environ.get("COMPAT_TIMEOUT", "120"))
  faulthandler.enable(_plugin["faults"])
  faulthandler.dump_traceback_later(600, exit=True, file=_plugin["faults"])  # a hang while importing the test file

def pytest_collectreport(report):
  if _plugin and report.failed:
    lines = [ln for ln in str(report.longrepr).splitlines() if re.match(r"^E\s+\S", ln)]
    _emit(event="collect_error", nodeid=report.nodeid, error=" ".join(lines[-1].split()[1:]) if lines else str(report.longrepr)[-300:])

def pytest_collection_modifyitems(session, config, items):
  if not _plugin: return
  _emit(event="collected", ids=[it.nodeid for it in items])
  path = os.environ.get("COMPAT_SKIP")
  skip = set(pathlib.Path(path).read_text().split("\n")) if path and os.path.exists(path) else set()
  if skip:
    keep = [it for it in items if it.nodeid not in skip]
    config.hook.pytest_deselected(items=[it for it in items if it.nodeid in skip])
    items[:] = keep

def _hookwrapper(fn):
  import pytest
  return pytest.hookimpl(wrapper=True)(fn)

def _runtest_protocol(item, nextitem):
  if not _plugin: return (yield)
  import faulthandler
  _plugin["cur"] = {"outcome": "passed", "error": None, "where": None, "t": time.time()}
  _emit(event="start", id=item.nodeid)
  # stuck in C code the alarm cannot fire: then faulthandler ends the process a grace period later
  faulthandler.dump_traceback_later(_plugin["timeout"] + float(os.environ.get("COMPAT_HARD_GRACE", "60")), exit=True, file=_plugin["faults"])
  _alarm(_plugin["timeout"])
  try: return (yield)
  finally:
    signal.setitimer(signal.ITIMER_REAL, 0)
    faulthandler.cancel_dump_traceback_later()
    c = _plugin.pop("cur")
    _emit(event="done", id=item.nodeid, outcome=c["outcome"], error=c["error"], where=c["where"], seconds=round(time.time() - c["t"], 2))

def _makereport(item, call):
  rep = yield
  c = _plugin.get("cur")
  if c is None: return rep
  if rep.skipped and hasattr(rep, "wasxfail"): c["outcome"] = "xfailed"
  elif rep.passed and hasattr(rep, "wasxfail") and rep.when == "call": c["outcome"] = "xpassed"
  elif rep.skipped and c["outcome"] == "passed": c["outcome"], c["error"] = "skipped", str(rep.longrepr[-1] if isinstance(rep.longrepr, tuple) else "")
  elif rep.failed and c["outcome"] in ("passed", "xpassed", "skipped"):
    msg, where, kind = _describe(call.excinfo) if call.excinfo is not None else (str(rep.longrepr)[:300], None, "failed")
    c["outcome"], c["error"], c["where"] = (kind if rep.when == "call" or kind != "failed" else "error"), msg, where
  return rep

def pytest_sessionfinish(session, exitstatus):
  if not _plugin: return
  real = [k for k, m in sys.modules.items() if k.split(".")[0] == "tinygrad" and "site-packages" in str(getattr(m, "__file__", ""))]
  _emit(event="session", missing=sorted(_MISSING_SEEN), supplied=sorted(_SUPPLIED),
        real_tinygrad=real if os.environ.get("COMPAT_SIDE") == "lazynb" else [])

if os.environ.get("COMPAT_EVENTS"):  # the hooks that need pytest exist only in the test process
  pytest_runtest_protocol = _hookwrapper(_runtest_protocol)
  pytest_runtest_makereport = _hookwrapper(_makereport)

# ---------------------------------------------------------------------------------------------------------------------

def norm_file(f: str) -> str:
  f = f.removeprefix("test/")
  return f if f.endswith(".py") else f + ".py"

def check_requirements(files: list[str], src: pathlib.Path) -> list[str]:
  """Modules the measured files import that this Python lacks: their files would fail on both sides, so say it."""
  warn = []
  tv = tinygrad_version()
  if tv != VERSION: warn.append(f"tinygrad {VERSION} is not installed (found {tv}): the tinygrad side cannot run (pip install tinygrad=={VERSION})")
  need = set()
  for f in files: need |= {m.split(".")[0] for m in _imported_modules(src / "test" / f)}
  for m in sorted(need - {"tinygrad", "test", "extra"} - set(sys.stdlib_module_names)):
    if importlib.util.find_spec(m) is None: warn.append(f"{m} is not installed: the files importing it fail on both sides (pip install {m})")
  return warn

def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--files", nargs="+", help=f"test files (default: {' '.join(DEFAULT_FILES)}; 'learner' for the learner files)")
  ap.add_argument("--side", choices=["both", "lazynb", "tinygrad", "stored"], default="both",
                  help="run one side only (the other's stored result is used), or 'stored': run nothing, report the stored results")
  ap.add_argument("--json", help="write every test's outcome on each side (and the docs' examples with --docs) to this file")
  ap.add_argument("--list-failing", metavar="FILE", help="lazynb's failing tests of FILE among those tinygrad passes, grouped by error "
                  "(uses the stored results when there are some; --fresh runs the file again)")
  ap.add_argument("--all", action="store_true", help="with --list-failing: also the tests tinygrad does not pass")
  ap.add_argument("--docs", action="store_true", help="run the docstring examples instead of the test files")
  ap.add_argument("--timeout", type=float, default=120.0, help="seconds one test or example may run (default 120)")
  ap.add_argument("--strict-imports", action="store_true", help="a name lazynb lacks fails the import (and the whole file)")
  ap.add_argument("--fresh", action="store_true", help="run tinygrad's side again too, not its stored results")
  ap.add_argument("--cache", help="cache folder (default $LAZYNB_COMPAT_CACHE or ~/.cache/lazynb-compat)")
  ap.add_argument("--_docs-child", nargs=4, help=argparse.SUPPRESS)
  ap.add_argument("--_probe", action="store_true", help=argparse.SUPPRESS)
  args = ap.parse_args(argv)
  if args._docs_child:
    docs_child(*args._docs_child[:3], float(args._docs_child[3]), args._probe)
    return 0

  cache = cache_dir(args.cache)
  src = fetch_sdist(cache)
  absent = absent_from_sdist(src)
  files = DEFAULT_FILES if not args.files else [g for f in args.files for g in (LEARNER if f == "learner" else [norm_file(f)])]
  if args.list_failing: files = [norm_file(args.list_failing)]
  bad = [f for f in files if not (src / "test" / f).exists()]
  if bad: sys.exit(f"not in tinygrad {VERSION}'s sdist: {' '.join(bad)} (it has: {' '.join(sorted(p.name for p in (src / 'test').glob('test_*.py')))})")
  for w in check_requirements(files, src): say("warning: " + w)
  if absent: say(f"not in tinygrad {VERSION}'s PyPI sdist: {', '.join(absent)}. test/helpers.py: the helpers the files use are written anew; "
                 "extra/: stand-ins raise NotInSdist (those tests count on neither side); the rest is not measured")
  ctx = {"cache": cache, "src": src, "work": prepare_work(cache, src, files), "shim": write_shim(cache), "timeout": args.timeout,
         "strict": args.strict_imports}
  report: dict = {"meta": {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "machine": platform.processor()
                           or platform.machine(), "cores": os.cpu_count(), "python": platform.python_version(), "tinygrad": tinygrad_version(),
                           "lazynb_commit": git_commit(), "timeout": args.timeout, "strict_imports": args.strict_imports, "absent_from_sdist": absent}}

  if args.docs:
    stored = cache / "results" / "docs.json"
    if args.side == "stored" and stored.exists(): per = json.loads(stored.read_text())
    else:
      per = run_docs(ctx, reuse=not args.fresh)
      stored.write_text(json.dumps(per, indent=1, sort_keys=True))
    print_docs(per, absent)
    report["docs"] = per
  elif args.list_failing:
    f = files[0]
    tg = get_result("tinygrad", f, ctx, reuse=not args.fresh)
    lzp = result_path(cache, "lazynb", f)
    lz = json.loads(lzp.read_text()) if lzp.exists() and not args.fresh else get_result("lazynb", f, ctx, reuse=False)
    list_failing(f, tg, lz, args.all)
    report["files"] = {f: {"tinygrad": tg, "lazynb": lz}}
  else:
    results: dict = {}
    for f in files:  # one side after the other: the machine's cores are shared
      results[f] = {}
      for side in ("tinygrad", "lazynb"):
        stored = result_path(cache, side, f)
        if args.side in ("both", side) or (side == "tinygrad" and args.side == "lazynb" and not stored.exists()):
          results[f][side] = get_result(side, f, ctx, reuse=side == "tinygrad" and not args.fresh)
        else: results[f][side] = json.loads(stored.read_text()) if stored.exists() else None
    scores = [file_score(f, r["tinygrad"], r["lazynb"]) for f, r in results.items()]
    print_table(scores, results)
    report["scores"], report["files"] = scores, results
  if args.json:
    slim = {k: v for k, v in report.items() if k != "files"}
    slim["files"] = {f: {side: ({i: o["outcome"] for i, o in r["outcomes"].items()} if r else None) for side, r in sides.items()}
                     for f, sides in report.get("files", {}).items()}
    slim["lazynb_errors"] = {f: {i: o.get("error") for i, o in sides["lazynb"]["outcomes"].items() if o.get("error")}
                             for f, sides in report.get("files", {}).items() if sides.get("lazynb")}
    pathlib.Path(args.json).write_text(json.dumps(slim, indent=1, sort_keys=True))
    say(f"wrote {args.json}")
  return 0

if __name__ == "__main__": sys.exit(main())
