"""The build track: you write the compiler's stages yourself, lazynb grades each one inside its real pipeline, keeps
it as a file, and from then on runs the course on it.

    check("b02.render", my_render)   the exercise: the corpus's programs run through lazynb with yours in place of its
                                     own stage, kind by kind (elementwise first); the values must be the reference's.
                                     When it passes, the stage is kept:
    keep("render", my_render)        the cell that defines it, saved as my_compiler/render.py (its imports, functions,
                                     classes and constants; calls are left out)
    mine()                           `with mine(): ...`: every kept stage in place of lazynb's, all at once
    assemble()                       the kept stages in one file, my_compiler.py: the compiler you wrote, in pipeline order

The build track runs with NOOPT=1: kernels are plain loops (no vector lanes, no threads), which is what the stages
you write here handle. The folder is ./my_compiler unless LAZYNB_BUILD_DIR names another.
"""
from __future__ import annotations
import ast, contextlib, functools, linecache, os, pathlib, shutil, subprocess, tempfile
from typing import Callable, Iterator
from lazynb import pipeline
from lazynb.helpers import Context
from lazynb.notebook.exercise import exercise, need, Fail

def build_dir() -> pathlib.Path: return pathlib.Path(os.environ.get("LAZYNB_BUILD_DIR") or "my_compiler")

# ---------------------------------------------------------------- keeping a stage as a file
KEEP_NODES = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)

def _cell_source(fn: Callable) -> str:
  """The top-level definitions of the cell (or file) that defines fn: imports, functions, classes, constants."""
  code = getattr(fn, "__code__", None)
  if code is None: raise TypeError(f"keep needs a function defined with def, got {type(fn).__name__}")
  text = "".join(linecache.getlines(code.co_filename))
  if not text: raise ValueError(f"cannot find the source of {fn.__name__}: define it with def in a notebook cell or a .py file")
  tree = ast.parse(text)
  keep = [n for n in tree.body if isinstance(n, KEEP_NODES)]
  if not any(isinstance(n, ast.FunctionDef) and n.name == fn.__name__ for n in keep):
    raise ValueError(f"{fn.__name__} is not defined at the top of its cell: keep the def that is your stage")
  out = ""
  for prev, n in zip([None, *keep], keep):  # imports one under another, a blank line before anything else
    imports = isinstance(n, (ast.Import, ast.ImportFrom)) and isinstance(prev, (ast.Import, ast.ImportFrom))
    out += ("" if prev is None else "\n" if imports else "\n\n") + (ast.get_source_segment(text, n) or ast.unparse(n))
  return out

def keep(stage: str, fn: Callable) -> pathlib.Path:
  """Save the cell that defines `fn` as your `stage` (my_compiler/STAGE.py) and say where. Returns the path."""
  pipeline.stage(stage)  # a name that is not a stage is a KeyError listing the stages
  src = _cell_source(fn)
  d = build_dir()
  d.mkdir(parents=True, exist_ok=True)
  path = d / f"{stage}.py"
  path.write_text(f'"""Your {stage} stage: it takes {pipeline.stage(stage).takes} and gives {pipeline.stage(stage).gives}."""\n'
                  f"{src}\n\nSTAGE = {fn.__name__}\n")
  print(f"kept your {stage} stage ({fn.__name__}) in {path}: {len(src.splitlines())} lines")
  return path

def kept() -> dict[str, Callable]:
  """{stage name: your function} for every stage kept so far, in pipeline order. A kept file that no longer runs is a
  clear error naming it."""
  out: dict[str, Callable] = {}
  for name in pipeline.stages():
    path = build_dir() / f"{name}.py"
    if not path.exists(): continue
    ns: dict = {"__name__": f"my_compiler.{name}", "__file__": str(path)}
    try: exec(compile(path.read_text(), str(path), "exec"), ns)
    except Exception as e: raise RuntimeError(f"your kept {name} stage ({path}) does not run: {type(e).__name__}: {e}") from e
    if not callable(ns.get("STAGE")): raise RuntimeError(f"{path} has no STAGE function: keep({name!r}, fn) writes one")
    out[name] = ns["STAGE"]
  return out

@contextlib.contextmanager
def mine(*names: str) -> Iterator[dict[str, Callable]]:
  """`with mine(): ...` runs everything realized inside on your kept stages (only `names`, if given: each must be kept),
  with NOOPT=1. Yields {stage: your function}; with none kept yet it says so and runs on lazynb's own."""
  stages = kept()
  if not stages and not names:
    print(f"no stage of yours is kept yet (in {build_dir()}): this block runs on lazynb's own stages")
  if names:
    missing = [n for n in names if n not in stages]
    if missing: raise FileNotFoundError(f"not kept yet: {', '.join(missing)} (in {build_dir()}); run keep(name, fn) after its check passes")
    stages = {n: f for n, f in stages.items() if n in names}
  if stages: print(f"running on your stages: {', '.join(stages)} (from {build_dir()}), NOOPT=1")
  with contextlib.ExitStack() as stack:
    stack.enter_context(Context(NOOPT=1))
    for n, fn in stages.items(): stack.enter_context(pipeline.use(n, fn))
    yield stages

def assemble(path: str | os.PathLike | None = None) -> pathlib.Path:
  """Your kept stages in one module, in pipeline order, with a STAGES dict at the end: the compiler you wrote. It is
  written next to the folder they are kept in (my_compiler.py), unless `path` says where."""
  parts, names = [], []
  for name in pipeline.stages():
    f = build_dir() / f"{name}.py"
    if not f.exists(): continue
    body = f.read_text().replace("\nSTAGE = ", f"\n{name.upper()}_STAGE = ")
    parts.append(f"# {'-' * 40} {name}\n{body}")
    names.append(name)
  if not parts: raise FileNotFoundError(f"no stage kept yet in {build_dir()}")
  out = pathlib.Path(path) if path is not None else build_dir().with_suffix(".py")
  out.write_text(f'"""My compiler: the stages {", ".join(names)}, written in the build track. Use them with\n'
                 f'`with contextlib.ExitStack() as s: [s.enter_context(pipeline.use(n, f)) for n, f in STAGES.items()]`."""\n\n'
                 + "\n\n".join(parts) + "\n\nSTAGES = {" + ", ".join(f"{n!r}: {n.upper()}_STAGE" for n in names) + "}\n")
  return out

# ---------------------------------------------------------------- grading a stage
STAGE_OF: dict[str, str] = {}  # exercise key -> the stage a pass keeps

def stage_exercise(key: str, stage: str):
  """Register a build exercise: its hidden tests (exercise.exercise), and the stage a pass keeps."""
  pipeline.stage(stage)
  STAGE_OF[key] = stage
  return exercise(key)

KINDS = ("elementwise", "movement", "reduce", "matmul", "conv", "several kernels")  # easiest first
PER_KIND = 6

def symbolic_programs() -> list:
  """Programs whose kernel takes a variable (a shrink bound to 3, then to 7: one kernel, two values of `vals`)."""
  import numpy as np
  from lazynb import Tensor, Variable
  from lazynb.corpus import Program
  a = np.arange(40, dtype=np.float32).reshape(10, 4)
  def build(n: int): return lambda: (Tensor(a.copy()).shrink(((0, Variable("i", 1, 10).bind(n)), (0, 4))) * 2).sum(axis=0)
  return [Program(f"the column sums of the first {n} of 10 rows, n a variable", "symbolic", build(n)) for n in (3, 7)]

def grade(stage: str, fn, per_kind: int = PER_KIND, extra: tuple = ()) -> None:
  """Raise Fail with the check's message at the first kind of program where `fn` as `stage` gives other values than
  lazynb's own stage (NOOPT=1: plain loops). A stub's bare NotImplementedError is raised as it is (not written yet)."""
  need(callable(fn), f"the {stage} stage must be a function taking {pipeline.stage(stage).takes}; got {type(fn).__name__}.")
  progs = pipeline.default_programs() if pipeline.default_programs is not None else []
  done: list[str] = []
  with Context(NOOPT=1):
    for kind in KINDS:
      some = [p for p in progs if p.kind == kind]
      res = pipeline.check(stage, fn, some[::max(1, len(some) // per_kind)][:per_kind])
      if res.ok:
        done.append(kind)
        continue
      if "raised NotImplementedError: \n" in res.message: raise NotImplementedError
      raise Fail((f"{', '.join(done)} programs pass. " if done else "") + res.message)
    if extra and not (res := pipeline.check(stage, fn, list(extra))).ok: raise Fail(f"{', '.join(done)} programs pass. " + res.message)

def _find_cc() -> str:
  cc = os.environ.get("CC") or shutil.which("clang") or shutil.which("gcc") or shutil.which("cc")
  if cc is None: raise RuntimeError("no C compiler found: install clang (apt-get install clang) or gcc")
  return cc

def shared_library(device: str, src: str) -> bytes:
  """The grader's own compile stage: C source to a shared library (what a load stage written with ctypes can open)."""
  return _shared_library(src)

@functools.lru_cache(maxsize=1024)
def _shared_library(src: str) -> bytes:
  with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "k.so")
    done = subprocess.run([_find_cc(), "-shared", "-fPIC", "-O2", "-x", "c", "-", "-o", out], input=src.encode(), capture_output=True)
    if done.returncode != 0: raise RuntimeError(done.stderr.decode())
    return pathlib.Path(out).read_bytes()

@stage_exercise("b01.compile", "compile")
def _(my_compile):
  lib = my_compile("CPU", "int twice(int x) { return 2 * x; }\n")
  need(isinstance(lib, (bytes, bytearray)), f"my_compile returned a {type(lib).__name__}: it must return the library's bytes (read the .so file).")
  need(bytes(lib[:4]) == b"\x7fELF", "the bytes are not a compiled library (an ELF file starts with b'\\x7fELF'): "
                                     "return what the compiler wrote to its output file, not the source or the file's name.")
  need(bytes(lib[16:18]) == b"\x03\x00", "that is an object file, not a shared library: ctypes can only open a shared library "
                                         "(compile with -shared -fPIC).")
  try: my_compile("CPU", "int broken(int x) { return x +; }\n")
  except Exception as e: need("error" in str(e).lower(), f"a source that does not compile raised {type(e).__name__}: {e}. Say why "
                                                        "instead: raise an error holding what the compiler wrote to stderr.")
  else: raise Fail("a source that does not compile must raise an error (with the compiler's message), not return bytes: "
                   "check the compiler's returncode.")
  grade("compile", my_compile)

@stage_exercise("b01.load", "load")
def _(my_load):
  with pipeline.use("compile", shared_library): grade("load", my_load, extra=tuple(symbolic_programs()))

@stage_exercise("b02.render", "render")
def _(my_render):
  grade("render", my_render)

@stage_exercise("b03.linearize", "linearize")
def _(my_linearize):
  grade("linearize", my_linearize, extra=tuple(symbolic_programs()))
