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
you write here handle; the one opt you write (Build 9, an UNROLL of a reduce loop) keeps them plain loops. One exercise
(b01.launch) grades a load stage on kernels split over thread ids (`threaded`), which it must launch once per id.
The folder is ./my_compiler unless LAZYNB_BUILD_DIR names another.
"""
from __future__ import annotations
import ast, collections, contextlib, functools, linecache, math, os, pathlib, subprocess, sys, tempfile
from typing import Callable, Iterator
from lazynb import pipeline, trace
from lazynb.gradient import gradient_rules
from lazynb.dtype import dtypes
from lazynb.helpers import Context, plural
from lazynb.shape.shapetracker import expr_str
from lazynb.uop.ops import UOp, Ops, GroupOp, exec_alu, rewrite_hooks, toposort_with
from lazynb.notebook.exercise import exercise, need, Fail

def build_dir() -> pathlib.Path: return pathlib.Path(os.environ.get("LAZYNB_BUILD_DIR") or "my_compiler")

# ---------------------------------------------------------------- keeping a stage (or another piece) as a file
KEEP_NODES = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)
# pieces the learner writes that are not stages of the pipeline: kept like a stage, used where the notebooks ask for them
PIECES = {"graph": "a function node(op, dtype, src, arg) that builds hash-consed nodes: the same spec twice gives the same object",
          "toposort": "a function of a graph's root giving its nodes, each once and after all of its sources: under mine() it orders every kernel",
          "boundaries": "a function of the outputs' UOps giving the set of nodes to realize: the scheduler's decision of what becomes a kernel",
          "views": "a function of (views, idxs) giving (index, valid): the index math lazynb's lower stage puts in kernels",
          "gradient": "a function returning a PatternMatcher of gradient rules, tried before lazynb's own (lazynb.gradient)",
          "optimizer": "an optimizer class like nn.optim.Adam: Opt(params, lr=...) with zero_grad() and step()"}

def parts() -> list[str]:
  """Everything that can be kept: the pipeline's stages in order, then the other pieces."""
  return pipeline.stages() + list(PIECES)

def _what(name: str) -> str:
  """What the part `name` is, in words (a KeyError naming the parts for a name that is none)."""
  if name in PIECES: return PIECES[name]
  if name not in pipeline.stages(): raise KeyError(f"no stage named {name!r}: the stages are {', '.join(pipeline.stages())}; other parts: {', '.join(PIECES)}")
  st = pipeline.stage(name)
  return f"it takes {st.takes} and gives {st.gives}"

def _cell_source(obj) -> str:
  """The top-level definitions of the cell (or file) that defines obj (a function or a class): imports, functions,
  classes, constants."""
  code = getattr(obj, "__code__", None)
  if code is None and isinstance(obj, type):  # a class: the cell of its first method
    code = next((f.__code__ for f in vars(obj).values() if hasattr(f, "__code__")), None)
  if code is None: raise TypeError(f"keep needs a function defined with def (or a class with methods), got {type(obj).__name__}")
  text = "".join(linecache.getlines(code.co_filename))
  if not text: raise ValueError(f"cannot find the source of {obj.__name__}: define it in a notebook cell or a .py file")
  tree = ast.parse(text)
  keep = [n for n in tree.body if isinstance(n, KEEP_NODES)]
  if not any(isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == obj.__name__ for n in keep):
    raise ValueError(f"{obj.__name__} is not defined at the top of its cell: keep the def (or class) that is your stage")
  out = ""
  for prev, n in zip([None, *keep], keep):  # imports one under another, a blank line before anything else
    imports = isinstance(n, (ast.Import, ast.ImportFrom)) and isinstance(prev, (ast.Import, ast.ImportFrom))
    out += ("" if prev is None else "\n" if imports else "\n\n") + (ast.get_source_segment(text, n) or ast.unparse(n))
  return out

def keep(name: str, obj) -> pathlib.Path:
  """Save the cell that defines `obj` as your `name` (a stage, or another part: my_compiler/NAME.py) and say where."""
  what = _what(name)
  src = _cell_source(obj)
  d = build_dir()
  d.mkdir(parents=True, exist_ok=True)
  path = d / f"{name}.py"
  path.write_text(f'"""Your {name}: {what}."""\n{src}\n\nSTAGE = {obj.__name__}\n')
  print(f"kept your {name}{'' if name in PIECES else ' stage'} ({obj.__name__}) in {path}: {plural(len(src.splitlines()), 'line')}")
  return path

def _load(name: str, path: pathlib.Path):
  ns: dict = {"__name__": f"my_compiler.{name}", "__file__": str(path)}
  try: exec(compile(path.read_text(), str(path), "exec"), ns)
  except Exception as e: raise RuntimeError(f"your kept {name} ({path}) does not run: {type(e).__name__}: {e}") from e
  if not callable(ns.get("STAGE")): raise RuntimeError(f"{path} has no STAGE: keep({name!r}, fn) writes one")
  return ns["STAGE"]

def kept(names: list[str] | None = None) -> dict[str, Callable]:
  """{name: yours} for every stage kept so far, in pipeline order (or for `names`: kept_pieces() gives the other parts).
  A kept file that no longer runs is a clear error naming it."""
  return {n: _load(n, build_dir() / f"{n}.py") for n in (pipeline.stages() if names is None else names) if (build_dir() / f"{n}.py").exists()}

def kept_pieces() -> dict[str, Callable]:
  """{name: yours} for the kept parts that are not pipeline stages (PIECES: an optimizer class)."""
  return kept(list(PIECES))

@contextlib.contextmanager
def mine(*names: str) -> Iterator[dict[str, Callable]]:
  """`with mine(): ...` runs everything realized inside on your kept stages (only `names`, if given: each must be kept),
  with NOOPT=1 (lazynb's own opts off: your optimize stage, if kept, chooses its own, its search held to a budget per
  kernel), and backward() with your kept gradient rules first, your index math in lower, your kernel boundaries in the
  scheduler and your toposort in linearize (unless `names` are given). Yields {stage: your function}; with no stage kept
  yet it says so and runs on lazynb's own."""
  stages = kept()
  if names:
    missing = [n for n in names if n not in stages]
    if missing: raise FileNotFoundError(f"not kept yet: {', '.join(missing)} (in {build_dir()}); run keep(name, fn) after its check passes")
    stages = {n: f for n, f in stages.items() if n in names}
  rules = kept(["gradient"]).get("gradient") if not names else None
  label, topo = ", ".join(stages), None
  if not names and "lower" not in stages and (views := kept(["views"]).get("views")) is not None:
    stages = {**stages, "lower": lower_with_index_math(views)}  # lazynb's lower, with your index math
    label += (", " if label else "") + "lower (lazynb's, with your index math)"
  if "optimize" in stages: stages = {**stages, "optimize": budgeted(stages["optimize"])}
  if not names and "schedule" not in stages and (decide := kept(["boundaries"]).get("boundaries")) is not None:
    stages = {"schedule": schedule_with_boundaries(decide), **stages}  # lazynb's scheduler, with your decision of the kernels
    label += (", " if label else "") + "schedule (lazynb's, with your kernel boundaries)"
  inside: dict[str, Callable] = {}  # lazynb's stages with your kept parts inside (not yielded as yours)
  if not names and (topo := kept(["toposort"]).get("toposort")) is not None:  # every graph the linearize stage walks, in your order
    (stages if "linearize" in stages else inside)["linearize"] = linearize_with_toposort(topo, stages.get("linearize"))
  if label: print(f"running on your stages: {label} (from {build_dir()}), NOOPT=1")
  elif not names: print(f"no stage of yours is kept yet (in {build_dir()}): this block runs on lazynb's own stages"
                        + (", with your kept parts inside" if inside else ""))
  if topo is not None: print(("your" if "linearize" in label else "lazynb's") + " linearize stage walks each kernel in the order of your toposort")
  if rules is not None: print("backward() uses your gradient rules first")
  with contextlib.ExitStack() as stack:
    stack.enter_context(Context(NOOPT=1))
    for n, fn in {**stages, **inside}.items(): stack.enter_context(pipeline.use(n, fn))
    if rules is not None: stack.enter_context(gradient_rules(rules()))
    yield stages

def assemble(path: str | os.PathLike | None = None) -> pathlib.Path:
  """Your kept parts in one module, the stages in pipeline order, then the other parts, with a PARTS dict at the end
  ({name: yours}; STAGES holds the pipeline stages among them): the compiler you wrote. It is written next to the folder
  they are kept in (my_compiler.py), unless `path` says where."""
  bodies, names = [], []
  for name in parts():
    f = build_dir() / f"{name}.py"
    if not f.exists(): continue
    bodies.append(f"# {'-' * 40} {name}\n" + f.read_text().replace("\nSTAGE = ", f"\n{name.upper()}_STAGE = "))
    names.append(name)
  if not bodies: raise FileNotFoundError(f"nothing kept yet in {build_dir()}")
  out = pathlib.Path(path) if path is not None else build_dir().with_suffix(".py")
  stages = [n for n in names if n not in PIECES]
  out.write_text(f'"""My compiler: {", ".join(names)}, written in the build track. Use the stages with\n'
                 f'`with contextlib.ExitStack() as s: [s.enter_context(pipeline.use(n, f)) for n, f in STAGES.items()]`."""\n\n'
                 + "\n\n".join(bodies) + "\n\nPARTS = {" + ", ".join(f"{n!r}: {n.upper()}_STAGE" for n in names) + "}\n"
                 + "STAGES = {" + ", ".join(f"{n!r}: PARTS[{n!r}]" for n in stages) + "}\n")
  return out

# ---------------------------------------------------------------- grading a stage
STAGE_OF: dict[str, str] = {}  # exercise key -> the stage (or other part) a pass keeps

def regrade(name: str, obj) -> tuple[bool, str]:
  """Your kept `name` graded again by the exercise that kept it: (passed?, message). Where two exercises keep the same
  part (b01.load, then b01.launch: both the load stage), the first grades it: what mine() needs (NOOPT=1, no threads)."""
  from lazynb.notebook.exercise import run
  return run(next(k for k, v in STAGE_OF.items() if v == name), obj)

def stage_exercise(key: str, stage: str):
  """Register a build exercise: its hidden tests (exercise.exercise), and the stage (or other part) a pass keeps."""
  _what(stage)
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

def graded_programs(per_kind: int = PER_KIND) -> dict[str, list]:
  """{kind: the corpus programs `grade` runs of that kind}, easiest kind first: `per_kind` spread over each kind."""
  progs = pipeline.default_programs() if pipeline.default_programs is not None else []
  return {kind: (some := [p for p in progs if p.kind == kind])[::max(1, len(some) // per_kind)][:per_kind] for kind in KINDS}

def grade(stage: str, fn, per_kind: int = PER_KIND, extra: tuple = ()) -> None:
  """Raise Fail with the check's message at the first kind of program where `fn` as `stage` gives other values than
  lazynb's own stage (NOOPT=1: plain loops). A stub's bare NotImplementedError is raised as it is (not written yet)."""
  need(callable(fn), f"the {stage} stage must be a function taking {pipeline.stage(stage).takes}; got {type(fn).__name__}.")
  done: list[str] = []
  with Context(NOOPT=1):
    for kind, some in graded_programs(per_kind).items():
      res = pipeline.check(stage, fn, some)
      if res.ok:
        done.append(kind)
        continue
      if "raised NotImplementedError: \n" in res.message: raise NotImplementedError
      raise Fail((f"{', '.join(done)} programs pass. " if done else "") + res.message)
    if extra and not (res := pipeline.check(stage, fn, list(extra))).ok: raise Fail(f"{', '.join(done)} programs pass. " + res.message)

def _find_cc() -> list[str]:
  """The C compiler command the CPU device uses (CC, else clang, cc or gcc), as a list: CC may carry flags."""
  from lazynb.runtime.ops_cpu import find_cc
  return find_cc().split()

def shared_library(device: str, src: str) -> bytes:
  """The grader's own compile stage: C source to a shared library (what a load stage written with ctypes can open)."""
  return _shared_library(src)

@functools.lru_cache(maxsize=1024)
def _shared_library(src: str) -> bytes:
  with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "k.so")
    done = subprocess.run([*_find_cc(), "-shared", "-fPIC", "-O2", "-x", "c", "-", "-o", out], input=src.encode(), capture_output=True)
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

# ---------------------------------------------------------------- b01.launch: a load stage that launches over the grid
def threaded(ast, renderer, opts=None):
  """An optimize stage that gives kernels a THREAD axis on every machine: lazynb's own (plain loops under NOOPT=1), then
  the outer loop split over 4, 3 or 2 thread ids (the first that divides it; a kernel with no concrete outer loop stays
  plain). lazynb's own heuristic threads only big kernels, by the machine's cores; this one is the same everywhere."""
  import copy
  from lazynb.codegen.kernel import Opt, OptOps, AxisType, KernelOptError
  if opts is None and getattr(type(renderer), "has_threads", False) and not renderer.has_threads:  # one core: C still takes an id
    renderer = copy.copy(renderer)
    renderer.has_threads = True
  k = pipeline.reference("optimize")(ast, renderer, opts)
  if opts is not None or not k.full_shape or k.axis_types[0] is not AxisType.GLOBAL or k.is_sym(0): return k
  for t in (4, 3, 2):
    if k.full_shape[0] % t == 0:
      try: k.apply_opt(Opt(OptOps.THREAD, 0, t))
      except KernelOptError: continue
      break
  return k

LAUNCH_PROBE = """void probe(int* restrict data0, int* restrict data1, const int n, const int tidx0) {
  if (n != 1234) data1[0] += 1;
  if (tidx0 < 0 || tidx0 >= 16) { data0[16] += 1; return; }
  data0[tidx0] += 1;
}
"""

def _launch_said(program, g: int) -> None:
  """Launch the probe kernel (it counts the thread ids it is called with) over global_size (g, 1, 1): a Fail saying how the
  launch went wrong, if it did."""
  import numpy as np
  counts, flags = np.zeros(17 * 4, np.uint8), np.zeros(4, np.uint8)
  program(counts, flags, global_size=(g, 1, 1), local_size=(1, 1, 1), vals=(1234,), wait=True)
  ids, bad_id, bad_n = counts.view(np.int32)[:16], int(counts.view(np.int32)[16]), int(flags.view(np.int32)[0])
  launch = f"launched with global_size=({g}, 1, 1) and vals=(1234,)"
  seen = [i for i in range(16) for _ in range(ids[i])]
  runs = len(seen) + bad_id  # every call counts once, whatever its id
  need(runs > 0, f"{launch}, the kernel never ran: call it once per thread id.")
  need(runs > 1, f"{launch}, the kernel ran once: a kernel with a thread axis runs once per thread id, 0 to global_size[0] - 1 "
                 f"(here {plural(g, 'time')}), with the id as its last argument, a c_int after the buffers and the vals.")
  need(bad_n == 0, f"{launch}, the kernel's variable was not 1234: pass each of vals as a c_int right after the buffers, "
                   "and the thread id after them, last.")
  if seen == list(range(g)) and bad_id == 0: return
  said = f"the kernel ran {plural(runs, 'time')}" + (f", with the ids {', '.join(map(str, seen))}" if seen else "") + \
         (f" and {plural(bad_id, 'time')} with an id outside 0..15 or none" if bad_id else "")
  if seen == list(range(1, g + 1)): said += ": thread ids start at 0"
  raise Fail(f"{launch}, {said}. It must run once per id {', '.join(map(str, range(g)))}, each exactly once: the ids are range(global_size[0]).")

@stage_exercise("b01.launch", "load")
def _(my_load):
  """A load stage whose programs launch a kernel with a thread axis once per id: first a probe kernel that counts the ids
  it runs with (over two grid sizes: a fixed count cannot fit both), then the corpus with every kernel it can split over
  threads split (and the symbolic programs: vals and an id together). A kernel reduces its id modulo the thread count, so
  ids off by one still compute every value: only the probe can see them."""
  need(callable(my_load), f"the load stage must be a function taking {pipeline.stage('load').takes}; got {type(my_load).__name__}.")
  program = my_load("CPU", "probe", shared_library("CPU", LAUNCH_PROBE))
  need(callable(program), f"my_load returned a {type(program).__name__}: it must return a program, a function that launches the kernel.")
  for g in (3, 5): _launch_said(program, g)
  with pipeline.use("compile", shared_library), pipeline.use("optimize", threaded):
    try: grade("load", my_load, extra=tuple(symbolic_programs()))
    except Fail as e:
      raise Fail(f"{e}\n  (these kernels have a thread axis where they can: each thread id computes its share of the output, so values "
                 "that are wrong or NaN, the poison of memory never written, mean ids that did not run or ran the wrong way)") from None

@stage_exercise("b02.render", "render")
def _(my_render):
  grade("render", my_render)

# ---------------------------------------------------------------- Build 5: optimizers (a kept part, not a stage)
def _train(cls, kwargs: dict, steps: int, jit: bool) -> list[list]:
  """The parameters (as numpy) after each of `steps` optimizer steps of `cls(params, **kwargs)` on a small regression whose
  gradients change with the parameters; with `jit`, the step runs under TinyJit (replayed from the third call on)."""
  import numpy as np
  from lazynb import Tensor, TinyJit
  r = np.random.default_rng(3)
  w = Tensor(r.standard_normal((3, 4)).astype(np.float32), requires_grad=True)
  b = Tensor(r.standard_normal(4).astype(np.float32), requires_grad=True)
  x, y = r.standard_normal((6, 3)).astype(np.float32), r.standard_normal((6, 4)).astype(np.float32)
  opt = cls([w, b], **kwargs)
  need(callable(getattr(opt, "zero_grad", None)) and callable(getattr(opt, "step", None)),
       "the optimizer needs zero_grad() and step() (subclass lazynb.nn.optim.Optimizer and write _step).")
  def step(xt: Tensor, yt: Tensor) -> Tensor:
    with Tensor.train():
      opt.zero_grad()
      loss = ((xt @ w + b).tanh() - yt).square().mean()
      loss.backward()
      opt.step()
      return loss
  fn = TinyJit(step) if jit else step
  out = []
  for _ in range(steps):
    fn(Tensor(x), Tensor(y)).realize()
    out.append([w.numpy().copy(), b.numpy().copy()])
  return out

def _optimizer_check(cls, ref, kwargs: dict, what: str) -> None:
  import numpy as np
  from lazynb.nn import optim
  need(isinstance(cls, type), f"{what} must be a class (class My...(Optimizer)), got {type(cls).__name__}.")
  need(not issubclass(cls, (optim.LARS, optim.LAMB)), f"{what} subclasses lazynb's own optimizer: the exercise is to write the update.")
  def blocked(*a, **k): raise Fail(f"{what} calls lazynb's own optimizer: the exercise is to write the update yourself.")
  saved = optim.LARS._step, optim.LAMB._step
  want = _train(ref, kwargs, 6, jit=False)
  optim.LARS._step, optim.LAMB._step = blocked, blocked  # type: ignore[method-assign]
  try:
    got = _train(cls, kwargs, 6, jit=False)
    got_jit = _train(cls, kwargs, 6, jit=True)
  finally: optim.LARS._step, optim.LAMB._step = saved  # type: ignore[method-assign]
  args = ", ".join(f"{k}={v}" for k, v in kwargs.items())
  for i, (g, w) in enumerate(zip(got, want)):
    for name, a, e in (("w", g[0], w[0]), ("b", g[1], w[1])):
      need(np.allclose(a, e, rtol=1e-4, atol=1e-6),
           f"with {args}, after step {i + 1} the parameter {name} is off by up to {np.abs(a - e).max():.3g}"
           + (" (the first step is already wrong: look at the formula)" if i == 0 else
              " (the first step was right: is the state kept from one step to the next, and updated in place with assign?)"))
  for i, (g, w) in enumerate(zip(got_jit, want)):
    need(all(np.allclose(a, e, rtol=1e-4, atol=1e-6) for a, e in zip(g, w)),
         f"under TinyJit the parameters go wrong at step {i + 1} (without it they are right): something your update uses changes "
         "in Python from step to step (a counter or a float computed in _step). TinyJit replays the kernels of its first calls, "
         "so whatever changes per step must live in a Tensor that the step updates with assign.")

@exercise("b05.sgd")
def _(MySGD):
  from lazynb.nn import optim
  _optimizer_check(MySGD, optim.SGD, {"lr": 0.05, "momentum": 0.8}, "MySGD")
  _optimizer_check(MySGD, optim.SGD, {"lr": 0.1, "momentum": 0.0}, "MySGD")

@stage_exercise("b05.adam", "optimizer")
def _(MyAdam):
  from lazynb.nn import optim
  _optimizer_check(MyAdam, optim.Adam, {"lr": 0.01, "b1": 0.8, "b2": 0.99, "eps": 1e-6}, "MyAdam")
  _optimizer_check(MyAdam, optim.Adam, {"lr": 0.002}, "MyAdam")

# ---------------------------------------------------------------- Build 6: gradient rules (a kept part, not a stage)
def _grad_cases():
  """(what, the op it needs a rule for, loss(x, y, w), x, y): each loss is weighted by w, so the gradient that flows in
  differs from element to element."""
  import numpy as np
  from lazynb.uop.ops import Ops
  r = np.random.default_rng(11)
  def f(*shape, pos=False): return (np.abs(r.standard_normal(shape)) + 0.5 if pos else r.standard_normal(shape)).astype(np.float32)
  x, y = f(3, 4), f(3, 4)
  tie = y.copy()
  tie[0, :2] = x[0, :2]  # equal entries: each side of a MAX gets half the gradient there
  return [("x * y", Ops.MUL, lambda a, b, w: (a * b * w).sum(), x, y),  # first: every case multiplies by w
          ("x + y", Ops.ADD, lambda a, b, w: ((a + b) * w).sum(), x, y),
          ("1 / x", Ops.RECIP, lambda a, b, w: (a.reciprocal() * w).sum(), f(3, 4, pos=True), y),
          ("exp(x)", Ops.EXP2, lambda a, b, w: (a.exp() * w).sum(), x, y),
          ("log(x)", Ops.LOG2, lambda a, b, w: (a.log() * w).sum(), f(3, 4, pos=True), y),
          ("sqrt(x)", Ops.SQRT, lambda a, b, w: (a.sqrt() * w).sum(), f(3, 4, pos=True), y),
          ("maximum(x, y), with ties", Ops.MAX, lambda a, b, w: (a.maximum(b) * w).sum(), x, tie),
          ("x.sum(axis=1)", Ops.REDUCE_AXIS, lambda a, b, w: (a.sum(axis=1) * w[:, 0]).sum(), x, y),
          ("x.max(axis=1) (a max, not a sum)", Ops.REDUCE_AXIS, lambda a, b, w: (a.max(axis=1) * w[:, 0]).sum(), x, y),
          ("x * y[0:1] (y's row expanded)", Ops.EXPAND, lambda a, b, w: (a * b[0:1] * w).sum(), x, y),
          ("x * y[:, 0:1] (y's column expanded)", Ops.EXPAND, lambda a, b, w: (a * b[:, 0:1] * w).sum(), x, y)]

def _gradients(loss, x, y, pm=None) -> list:
  import numpy as np
  from lazynb import Tensor
  w = Tensor(np.random.default_rng(5).standard_normal((3, 4)).astype(np.float32))
  a, b = Tensor(x, requires_grad=True), Tensor(y, requires_grad=True)
  with gradient_rules(pm) if pm is not None else contextlib.nullcontext(): loss(a, b, w).backward()
  return [t.grad.numpy() if t.grad is not None else np.zeros_like(v) for t, v in ((a, x), (b, y))]

@stage_exercise("b06.gradients", "gradient")
def _(my_gradient_rules):
  import functools
  import numpy as np
  from lazynb.uop.ops import PatternMatcher
  pm = my_gradient_rules()
  need(isinstance(pm, PatternMatcher), f"my_gradient_rules must return a PatternMatcher([(UPat(...), rule), ...]), got {type(pm).__name__}.")
  fired: set = set()
  def spy(pat, fn):
    @functools.wraps(fn)  # (the matcher reads which arguments the rule wants from its signature)
    def rule(**kw):
      out = fn(**kw)
      if out is not None: fired.update(pat.op or ())
      return out
    return rule
  spied = PatternMatcher([(pat, spy(pat, fn)) for pat, fn in pm.patterns])
  for what, op, loss, x, y in _grad_cases():
    want, before = _gradients(loss, x, y), set(fired)
    fired.clear()
    try: got = _gradients(loss, x, y, spied)
    except Exception as err: raise Fail(f"the gradient of {what} with your rules raised {type(err).__name__}: {err}") from None
    ran = set(fired)
    fired.update(before)
    for name, g, w in zip("xy", got, want):
      if not np.allclose(g, w, rtol=1e-4, atol=1e-5):
        raise Fail(f"the gradient of {what} with respect to {name} is off by up to {np.abs(g - w).max():.3g} (your rules that ran for it: "
                   f"{', '.join(o.name for o in sorted(ran, key=lambda o: o.value))}; this case is about {op.name}).")
  from lazynb.uop.ops import Ops
  missing = [o.name for o in (Ops.ADD, Ops.MUL, Ops.RECIP, Ops.EXP2, Ops.LOG2, Ops.SQRT, Ops.MAX, Ops.REDUCE_AXIS, Ops.EXPAND) if o not in fired]
  need(not missing, f"the gradients are right, but lazynb's own rules gave them for {', '.join(missing)}: yours never did. Write a rule for each.")

# ---------------------------------------------------------------- Build 7: index math of views (a kept part, not a stage)
def _value(u, memo: dict | None = None):
  """The value of a UOp of constants (index math, C semantics: division truncates), computed here, without lazynb's rules."""
  from lazynb.uop.ops import Ops, UOp
  memo = {} if memo is None else memo
  if not isinstance(u, UOp): return u
  if u in memo: return memo[u]
  s = [_value(x, memo) for x in u.src]
  def cdiv(a, b): return abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
  ops = {Ops.ADD: lambda: s[0] + s[1], Ops.MUL: lambda: s[0] * s[1], Ops.NEG: lambda: -s[0], Ops.MAX: lambda: max(s),
         Ops.IDIV: lambda: cdiv(s[0], s[1]), Ops.MOD: lambda: s[0] - cdiv(s[0], s[1]) * s[1], Ops.CMPLT: lambda: s[0] < s[1],
         Ops.CMPNE: lambda: s[0] != s[1], Ops.AND: lambda: s[0] & s[1], Ops.OR: lambda: s[0] | s[1], Ops.XOR: lambda: s[0] ^ s[1],
         Ops.WHERE: lambda: s[1] if s[0] else s[2], Ops.CONST: lambda: u.arg, Ops.CAST: lambda: s[0]}
  if u.op not in ops: raise Fail(f"your index math uses {u.op}, which index math does not need (use +, *, //, %, <, & on UOps).")
  memo[u] = out = ops[u.op]()
  return out

def _view_cases() -> list:
  """ShapeTrackers to grade index math on: single views (strides of 0 and negative, offsets, masks from pads), and
  stacks of two views (a reshape that one view cannot express), some padded below."""
  from lazynb.shape.shapetracker import ShapeTracker
  from lazynb.shape.view import View
  base = View.create((3, 4))
  cases = [ShapeTracker((base,)), ShapeTracker((base.permute((1, 0)),)), ShapeTracker((base.flip((False, True)),)),
           ShapeTracker((View.create((3, 1)).expand((3, 5)),)), ShapeTracker((base.shrink(((1, 3), (1, 4))),)),
           ShapeTracker((base.pad(((1, 0), (2, 1))),)), ShapeTracker((base.pad(((0, 2), (0, 0))).flip((True, False)),))]
  cases.append(ShapeTracker((base.permute((1, 0)), View.create((2, 6)))))              # transposed, then reshaped
  cases.append(ShapeTracker((base.pad(((1, 1), (0, 0))), View.create((4, 5)))))        # padded, then reshaped
  cases.append(ShapeTracker((View.create((4, 6)).shrink(((1, 3), (0, 6))).permute((1, 0)), View.create((3, 2, 2)).permute((2, 0, 1)))))
  return cases

def _index_points(shape):
  import itertools
  return itertools.product(*[range(s) for s in shape])

def _index_math_check(fn) -> None:
  from lazynb.dtype import dtypes
  from lazynb.uop.ops import UOp
  from lazynb.shape.shapetracker import ShapeTracker
  for st in _view_cases():
    what = f"the views {', '.join(f'(shape {v.shape}, strides {v.strides}, offset {v.offset}, mask {v.mask})' for v in st.views)}"
    for point in _index_points(st.shape):
      idxs = [UOp.const(dtypes.index, i) for i in point]
      want_i, want_v = ShapeTracker.to_indexed_uops(st, idxs)
      try: got = fn(st.views, idxs)
      except Exception as e: raise Fail(f"for {what} at index {point}, your function raised {type(e).__name__}: {e}") from None
      need(isinstance(got, tuple) and len(got) == 2 and all(isinstance(g, UOp) for g in got),
           f"your function must return (index, valid), two UOps; for {what} it returned {got!r:.120}.")
      gv, wv = bool(_value(got[1])), bool(_value(want_v))
      need(gv == wv, f"for {what}, at index {point} your valid is {gv}, it should be {wv}"
                     + (" (a mask bound is off by one, or a view's mask is not checked)" if len(st.views) == 1 else " (check every view's mask)"))
      if wv: need(_value(got[0]) == _value(want_i), f"for {what}, at index {point} your index is {_value(got[0])}, the element is at {_value(want_i)}.")

def lower_with_index_math(fn: Callable) -> Callable:
  """A lower stage: lazynb's own, with every view's index math from fn(views, idxs) (a replaced stage is part of the
  kernel cache's key, and its kernels run bounds-checked)."""
  from lazynb.shape.shapetracker import index_math
  ref = pipeline.reference("lower")
  def lower(kernel):
    with index_math(fn): return ref(kernel)
  lower.__qualname__ = f"lazynb's lower with your index math ({getattr(fn, '__name__', fn)})"
  return lower

@stage_exercise("b07.index_math", "views")
def _(my_index_math):
  need(callable(my_index_math), f"my_index_math must be a function of (views, idxs), got {type(my_index_math).__name__}.")
  _index_math_check(my_index_math)
  grade("lower", lower_with_index_math(my_index_math))
# ---------------------------------------------------------------- Build 8: what becomes a kernel (a kept part, not a stage)
def schedule_with_boundaries(fn: Callable) -> Callable:
  """A schedule stage: lazynb's own, realizing the nodes fn(outs) decides (kernel_boundaries); a decision it cannot build
  into kernels is an error that says why."""
  from lazynb.engine.schedule import kernel_boundaries
  ref = pipeline.reference("schedule")
  def schedule(outs):
    with kernel_boundaries(fn): return ref(outs)
  schedule.__qualname__ = f"lazynb's schedule with your kernel boundaries ({getattr(fn, '__name__', fn)})"
  return schedule

def boundary_programs() -> list:
  """Programs with what the graded corpus programs lack: an assign (also one that reads the memory it overwrites), a
  tensor realized before and read again, a pad of exp, a reduce read by two kernels."""
  import numpy as np
  from lazynb import Tensor
  from lazynb.corpus import Program
  a = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
  def assign(flip: bool):
    t = Tensor(a.copy()).contiguous().realize()
    return t.assign(t.flip(0) * 2 + 1) if flip else t.assign(t * 2 + 1) + 1  # (the assign is read by a kernel, not an output)
  def again():
    t = (Tensor(a.copy()) * 2).realize()
    return t.T, t.sum(0) + 1
  def two():
    s = Tensor(a.copy()).sum(1)
    return s + 1, s * 2
  return [Program("t.assign(t * 2 + 1) + 1", "boundaries", lambda: assign(False)), Program("t.assign(t.flip(0) * 2 + 1)", "boundaries", lambda: assign(True)),
          Program("t = (a * 2).realize(), then t.T and t.sum(0) + 1", "boundaries", again),
          Program("exp(a / 2) padded by a row above and below, summed over rows", "boundaries", lambda: (Tensor(a.copy()) * 0.5).exp().pad(((1, 1), (0, 0))).sum(0)),
          Program("s = a.sum(1), then s + 1 and s * 2", "boundaries", two)]

def kernels_made(p, schedule: Callable) -> collections.Counter:
  """The items a program's schedule makes with `schedule` as the stage, as (kind, the realized node's op, its shape)."""
  made: collections.Counter = collections.Counter()
  def spy(outs):
    items, becomes = schedule(outs)
    made.update((si.kind, si.out.op.name, si.out.shape) for si in items)
    return items, becomes
  with Context(NOOPT=1), pipeline.use("schedule", spy): p.run()
  return made

def _nodes(c: collections.Counter, most: int = 5) -> str:
  said = [f"{n} x {op} of shape {shape}" if n > 1 else f"{op} of shape {shape}" for (_, op, shape), n in c.items()]
  return ", ".join(said[:most]) + (f" and {len(said) - most} more" if len(said) > most else "")

@stage_exercise("b08.boundaries", "boundaries")
def _(my_boundaries):
  need(callable(my_boundaries), f"my_boundaries must be a function of the outputs' UOps, got {type(my_boundaries).__name__}.")
  extra = boundary_programs()
  grade("schedule", schedule_with_boundaries(my_boundaries), extra=tuple(extra))
  # right values are not enough: realizing every node gives them too, with a kernel per node
  for p in [p for ps in graded_programs().values() for p in ps] + extra:
    want, got = kernels_made(p, pipeline.reference("schedule")), kernels_made(p, schedule_with_boundaries(my_boundaries))
    with Context(DONT_GROUP_REDUCES=1): plain = kernels_made(p, pipeline.reference("schedule"))
    if got in (want, plain): continue  # (a reduce stored itself, not the elementwise ops above it: as many kernels, fine)
    counts = f"your decision makes {plural(got.total(), 'kernel or copy', 'kernels and copies')} for '{p.name}' ({p.kind}), lazynb's {want.total()}"
    need(got.total() <= want.total(), f"{counts}: the values are right, but you also realize {_nodes(got - want)}; lazynb computes those inside "
                                      "the kernels that read them. Too many kernels: realize a node only when no kernel can compute it where it is read.")
    raise Fail(f"{counts}: you realize {_nodes(got - want) or 'nothing else'} where lazynb realizes {_nodes(want - got)}.")

# ---------------------------------------------------------------- b04: simplify, graded by values and by what it leaves
def simplify_programs() -> list:
  """Programs whose index math the graded corpus programs lack: a % of an index that stays below its divisor, a
  comparison the loop sizes decide, and divisions of flattened transposed matrices where a rule that forgets a bound
  (the rest of a sum reaching the divisor, a negative rest, a negative factor) reads the wrong element."""
  import numpy as np
  from lazynb import Tensor
  from lazynb.corpus import Program
  m, t = np.arange(32, dtype=np.float32).reshape(4, 8), np.arange(12, dtype=np.float32).reshape(3, 4)
  b = np.arange(8, dtype=np.float32).reshape(2, 1, 4)
  rng = np.random.default_rng(4)
  x, w = rng.standard_normal((1, 2, 5, 6)).astype(np.float32), rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
  def prog(name: str, build) -> Program: return Program(name, "index math", build)
  return [prog("a (2, 1, 4) broadcast to (2, 2, 4), flattened, + 1", lambda: Tensor(b.copy()).expand(2, 2, 4).reshape(16) + 1),
          prog("conv2d x(1, 2, 5, 6) w(2, 2, 3, 3) stride=2 padding=1", lambda: Tensor(x.copy()).conv2d(Tensor(w.copy()), stride=2, padding=1)),
          prog("a transposed (3, 4) flattened, elements 1 to 3, * 2", lambda: Tensor(t.copy()).T.reshape(12)[1:4] * 2),
          prog("a transposed (3, 4) flattened, elements 1 to 9 as rows of 3, summed", lambda: Tensor(t.copy()).T.reshape(12)[1:10].reshape(3, 3).sum(1)),
          prog("a transposed (4, 8) flattened, as rows of 8, flipped, summed", lambda: Tensor(m.copy()).T.reshape(32).reshape(4, 8).flip(1).sum(1)),
          prog("a transposed (4, 8) flattened, padded by 1 and 3, as rows of 4, summed",
               lambda: Tensor(m.copy()).T.reshape(32).pad(((1, 3),)).reshape(9, 4).sum(1))]

def lowered_graphs(programs: list) -> list[tuple]:
  """(program, lowered SINK) for every kernel the programs make with NOOPT=1: what a simplify stage is given."""
  out: list[tuple] = []
  for p in programs:
    def spy(lowered, p=p):
      out.append((p, lowered))
      return pipeline.reference("simplify")(lowered)
    with Context(NOOPT=1), pipeline.use("simplify", spy): p.run()
  return out

def _terms(x: UOp) -> list[UOp]: return _terms(x.src[0]) + _terms(x.src[1]) if x.op is Ops.ADD else [x]
def _factor(t: UOp) -> int: return next((s.arg for s in t.src if s.op is Ops.CONST), 1) if t.op is Ops.MUL else 1

# what b04.simplify's structural check looks for, in the order it reports them
FOLDS = {"identity": "an op that changes nothing (+ 0, * 1, // 1, & True)", "constants": "two constants added one after the other",
         "valid": "a valid that is always True", "fixed": "an op whose value the loop sizes fix",
         "divmod": "a // or % that needs no division"}

def foldable(u: UOp) -> tuple[str, str] | None:
  """(kind, why in words) if the index math node u is one that b04's rules fold (FOLDS), else None. Each kind is a
  rule lazynb's own simplify applies too: its result on the corpus holds none of them."""
  if u.op is Ops.INDEX and len(u.src) == 3 and u.src[2].is_const(True):
    return "valid", f"the load or store at `{expr_str(u.src[1])}` keeps its valid, which is the constant True"
  if u.op not in GroupOp.ALU or u.dtype not in (dtypes.index, dtypes.bool): return None
  e = expr_str(u)
  if u.vmin == u.vmax: return "fixed", f"`{e}` is always {u.vmin}: its smallest and largest possible values (vmin, vmax) are equal"
  a, b = u.src[0], u.src[-1]
  if (u.op is Ops.ADD and any(s.is_const(0) for s in u.src) or u.op is Ops.MUL and any(s.is_const(1) for s in u.src) or
      u.op is Ops.IDIV and b.is_const(1) or u.op is Ops.AND and any(s.is_const(True) for s in u.src)):
    return "identity", f"`{e}` gives its other source unchanged"
  if u.op is Ops.ADD and any(s.op is Ops.CONST for s in u.src) and any(s.op is Ops.ADD and any(x.op is Ops.CONST for x in s.src) for s in u.src):
    return "constants", f"`{e}` adds one constant and then another"
  if u.op in (Ops.IDIV, Ops.MOD) and b.op is Ops.CONST and (c := b.arg) > 0 and a.vmin >= 0:
    whole = [t for t in _terms(a) if t.op is not Ops.CONST and _factor(t) % c == 0]
    rest = [t for t in _terms(a) if t not in whole]
    lo, hi = sum(t.vmin for t in rest), sum(t.vmax for t in rest)
    if 0 <= lo and hi < c and whole:
      return "divmod", (f"`{e}`: the terms {', '.join(f'`{expr_str(t)}`' for t in whole)} are multiples of {c}, and the other terms add up to "
                        f"{lo}..{hi}, below {c}")
    if 0 <= lo and hi < c and u.op is Ops.MOD: return "divmod", f"`{e}`: the value left of % is {lo}..{hi}, always below {c}"
  return None

def unfolded(pairs: list[tuple]) -> str | None:
  """What a simplify stage's results still hold that b04's rules fold, in words (per kind: in how many kernels, and
  its shortest example), or None. `pairs`: (program, result SINK)."""
  count: dict[str, int] = {}
  example: dict[str, tuple] = {}
  for p, out in pairs:
    kinds: set[str] = set()
    for u in out.toposort():
      if (f := foldable(u)) is None: continue
      kinds.add(f[0])
      if f[0] not in example or len(f[1]) < len(example[f[0]][1]): example[f[0]] = (p, f[1])
    for k in kinds: count[k] = count.get(k, 0) + 1
  if not count: return None
  return "\n".join(f"  - {FOLDS[k]}, in {count[k]} of {plural(len(pairs), 'kernel')}; e.g. in '{example[k][0].name}' ({example[k][0].kind}): "
                   f"{example[k][1]}" for k in FOLDS if k in count)

def _loop_positions(nodes: list[UOp], most: int = 1024) -> list[dict[UOp, int]]:
  """Values for the loop counters and variables in `nodes`: every combination when there are at most `most`, else a
  fixed sample of that many."""
  import itertools, random
  vs = sorted({u for n in nodes for u in n.toposort() if u.op in (Ops.RANGE, Ops.SPECIAL, Ops.DEFINE_VAR)}, key=lambda u: (u.op.name, str(u.arg)))
  spans = [range(int(u.vmin), int(u.vmax) + 1) for u in vs]
  if math.prod(len(r) for r in spans) <= most: return [dict(zip(vs, c)) for c in itertools.product(*spans)]
  rng = random.Random(0)
  return [{v: rng.choice(r) for v, r in zip(vs, spans)} for _ in range(most)]

def _evaluate(u: UOp, at: dict[UOp, int]):
  """The value of index math u at one loop position (None: u reads memory or is not index math)."""
  memo: dict[UOp, object] = {}
  for n in u.toposort():
    if n in at: memo[n] = at[n]
    elif n.op is Ops.CONST: memo[n] = n.arg
    elif n.op in GroupOp.ALU and all(memo.get(s) is not None for s in n.src): memo[n] = exec_alu(n.op, n.dtype, tuple(memo[s] for s in n.src))
    else: memo[n] = None
  return memo[u]

def _access(u: UOp, at: dict[UOp, int]) -> tuple:
  """What an INDEX does at one loop position: (valid, the element if valid)."""
  valid = _evaluate(u.src[2], at) if len(u.src) == 3 else True
  return (valid, _evaluate(u.src[1], at) if valid else None)

def wrong_rewrite(fn, lowered: UOp) -> str | None:
  """The first rewrite `fn` makes (through graph_rewrite) on `lowered` that changes what index math computes at some
  loop position, in words, or None."""
  steps: list[tuple] = []
  def hook(name, before, after, st, stage): steps.extend(st)
  hook.wanted = lambda: True  # type: ignore[attr-defined]
  rewrite_hooks.append(hook)
  try: fn(lowered)
  except Exception: return None
  finally: rewrite_hooks.remove(hook)
  for n, r, _ in steps:
    if not isinstance(r, UOp): continue
    if n.op is Ops.INDEX and r.op is Ops.INDEX: what, a, b = _access, n, r
    elif n.dtype in (dtypes.index, dtypes.bool) and n.op in GroupOp.ALU: what, a, b = _evaluate, n, r
    else: continue
    for at in _loop_positions([a, b]):
      if (x := what(a, at)) != (y := what(b, at)) and None not in (x, y):
        where = ", ".join(f"{expr_str(v)}={i}" for v, i in at.items())
        if what is _access:
          return (f"one of your rules turned the access at `{expr_str(a.src[1])}` (valid `{expr_str(a.src[2]) if len(a.src) == 3 else True}`) into "
                  f"the access at `{expr_str(b.src[1])}` (valid `{expr_str(b.src[2]) if len(b.src) == 3 else True}`), but where {where} "
                  f"the first {'reads element ' + str(x[1]) if x[0] else 'reads nothing'} and the second {'element ' + str(y[1]) if y[0] else 'nothing'}")
        return f"one of your rules turned `{expr_str(a)}` into `{expr_str(b)}`, but where {where} the first is {x} and the second {y}"
  return None

@stage_exercise("b04.simplify", "simplify")
def _(my_simplify):
  extra = simplify_programs()
  graded = [p for ps in graded_programs().values() for p in ps] + extra
  try: grade("simplify", my_simplify, extra=tuple(extra))
  except Fail as e:  # name the rewrite that changed what an index computes, where one did
    said, why = str(e), None
    if "did not finish" in said:  # (not run again here: it would not finish either)
      why = "a simplify stage that never ends: do two of your rules undo each other, or does a rule's result match it again?"
    elif (failed := next((p for p in graded if f": {p.name}\n" in said), None)) is not None:
      why = next((w for _, lowered in lowered_graphs([failed]) if (w := wrong_rewrite(my_simplify, lowered)) is not None), None)
    raise Fail(said + (f"\n  {why}" if why else "")) from None
  # a stage that leaves its input as it is gives the right values too: what it gives is checked as well
  left = unfolded([(p, my_simplify(lowered)) for p, lowered in lowered_graphs(graded)])
  need(left is None, "every program gives lazynb's values, but your simplified kernels still hold index math that folds "
                     f"(the values cannot show it; the kernels do more work than they need):\n{left}")
@stage_exercise("b03.linearize", "linearize")
def _(my_linearize):
  grade("linearize", my_linearize, extra=tuple(symbolic_programs()))
# ---------------------------------------------------------------- b00: the graph, hash-consed, and its toposort (kept parts)
def _walk(root) -> list:
  """Every node reachable from root through .src, each once (this grader's own walk: no UOp.toposort, no recursion)."""
  seen, stack = {id(root): root}, [root]
  while stack:
    for s in stack.pop().src:
      if id(s) not in seen: seen[id(s)] = s; stack.append(s)  # noqa: E702
  return list(seen.values())

def _name(u) -> str: return f"{getattr(u.op, 'name', u.op)} (arg {getattr(u, 'arg', None)!r:.40}, {len(u.src)} sources)"

def toposort_error(root, order) -> str | None:
  """What is wrong with `order` as a toposort of the graph under root, in words, or None."""
  if order is None: return "it returned None: return a list of the graph's nodes"
  order, pos = list(order), dict[int, int]()
  for i, u in enumerate(order):
    if id(u) in pos: return f"{_name(u)} is in the list twice (at {pos[id(u)]} and {i}): each node once, even one that several nodes use"
    pos[id(u)] = i
  graph = _walk(root)
  if missing := [u for u in graph if id(u) not in pos]: return f"{len(missing)} of the graph's {plural(len(graph), 'node')} {'is' if len(missing) == 1 else 'are'} missing, e.g. {_name(missing[0])}"
  if len(order) > len(graph): return f"the list has {plural(len(order), 'node')}, the graph {len(graph)}: give only the nodes reachable from the root"
  for u in order:
    if (s := next((s for s in u.src if pos[id(s)] > pos[id(u)]), None)) is not None:
      return f"{_name(u)} comes before its source {_name(s)}: a node goes in the list only after all of its sources are in it"
  return None

def checked_toposort(fn: Callable, who: str = "your kept toposort") -> Callable:
  """fn as a toposort lazynb can use: a wrong order or a crash is an error naming `who`, never a wrong kernel."""
  def toposort(root):
    try: order = fn(root)
    except RecursionError: raise RuntimeError(f"{who} hit Python's recursion limit on a graph of {plural(len(_walk(root)), 'node')}: walk it with a stack of your own") from None
    if (err := toposort_error(root, order)) is not None: raise RuntimeError(f"{who} is wrong on a graph of {plural(len(_walk(root)), 'node')}: {err}")
    return list(order)
  return toposort

def linearize_with_toposort(fn: Callable, linearize: Callable | None = None, who: str | None = None) -> Callable:
  """A linearize stage (`linearize`, else lazynb's) inside which every UOp.toposort() is fn's, checked (a replaced stage is
  part of the kernel cache's key, and its kernels run bounds-checked). `who`: fn in an error's words (your kept toposort)."""
  ref, topo = linearize or pipeline.reference("linearize"), checked_toposort(fn, who or f"your kept toposort ({build_dir() / 'toposort.py'})")
  def linearize_(sink):
    with toposort_with(topo): return ref(sink)
  whose = "your" if linearize else "lazynb's"
  linearize_.__qualname__ = f"{whose} linearize, ordered by your toposort ({getattr(fn, '__name__', fn)})"
  return linearize_

DEEP = 20_000  # a chain longer than Python's recursion limit (lazynb raises it to 10,000): a walk by recursion cannot finish it

def graph_cases(per_kind: int = 2) -> list[tuple[str, UOp]]:
  """(what, root) for graded corpus programs: each one's lazy tensor graph, and its kernels as lowered with NOOPT=1
  (index math, shared widely)."""
  progs = [p for ps in graded_programs(per_kind).values() for p in ps]
  out = []
  for p in progs:
    ts = p.build()
    out.append((f"the lazy graph of '{p.name}' ({p.kind})", UOp.sink(*[t.uop for t in (ts if isinstance(ts, (tuple, list)) else [ts])])))
  return out + [(f"a lowered kernel of '{p.name}' ({p.kind})", s) for p, s in lowered_graphs(progs)]

def _fresh(a):
  """An arg equal to a, but a new object where Python makes one (tuples, floats, large ints): equal, not identical."""
  if type(a) is tuple: return tuple([_fresh(x) for x in a])
  if type(a) is float and not math.isnan(a): return float(repr(a))
  if type(a) is int and not -5 <= a <= 256: return int(str(a))
  return a

def rebuild(node: Callable, root: UOp, fresh: bool = False) -> dict[UOp, object]:
  """{UOp: your node} for the graph under root, built with node(op, dtype, src, arg) sources first (args copied: `fresh`)."""
  memo: dict[UOp, object] = {}
  for u in root.toposort(): memo[u] = node(u.op, u.dtype, tuple(memo[s] for s in u.src), _fresh(u.arg) if fresh else u.arg)
  return memo

def _spec(u: UOp) -> str: return f"node({u.op}, {u.dtype}, <{len(u.src)} sources>, {u.arg!r:.60})"

@stage_exercise("b00.node", "graph")
def _(node):
  need(callable(node), f"node must be a function of (op, dtype, src, arg), got {type(node).__name__}.")
  f, i = dtypes.float32, dtypes.int32
  a = node(Ops.CONST, f, (), 2.0)
  need(all(hasattr(a, k) for k in ("op", "dtype", "src", "arg")), f"node(...) returned a {type(a).__name__}: return a node (your Node) with .op, .dtype, .src and .arg.")
  b = node(Ops.CONST, f, (), 3.0)
  s = node(Ops.ADD, f, (a, b), None)
  need(a.op is Ops.CONST and a.dtype is f and a.arg == 2.0 and tuple(a.src) == () and len(s.src) == 2 and s.src[0] is a and s.src[1] is b,
       "a node must hold what it was built from: .op, .dtype, .arg as given, and .src the tuple of source nodes, the same objects.")
  need(node(Ops.CONST, f, (), 2.0) is a, "node(CONST, float32, (), 2.0) twice gave two different objects: keep a table from what a node is "
       "built from to the node, and give back the one already there.")
  need(node(Ops.ADD, f, (a, b), None) is s, "node(ADD, float32, (a, b)) twice, with the same a and b, gave two different objects: the src tuple "
       "is a new tuple each time, but what it holds is the same; key the table by what the tuple holds.")
  r = node(Ops.RESHAPE, f, (s,), (2, 3))
  need(node(Ops.RESHAPE, f, (s,), _fresh((2, 3))) is r, "node(RESHAPE, float32, (x,), (2, 3)) twice gave two different objects when the second (2, 3) "
       "was a new tuple: args are values, equal ones are the same arg (compare them with ==, not by id).")
  seen = [("node(CONST, float32, (), 2.0)", a), ("node(CONST, float32, (), 3.0)", b), ("node(ADD, float32, (a, b))", s),
          ("node(RESHAPE, float32, (a+b,), (2, 3))", r)]
  for what, n in [("node(CONST, float32, (), 4.0)", lambda: node(Ops.CONST, f, (), 4.0)), ("node(CONST, int32, (), 2)", lambda: node(Ops.CONST, i, (), 2)),
                  ("node(ADD, float32, (b, a))", lambda: node(Ops.ADD, f, (b, a), None)), ("node(MUL, float32, (a, b))", lambda: node(Ops.MUL, f, (a, b), None)),
                  ("node(RESHAPE, float32, (a+b,), (3, 2))", lambda: node(Ops.RESHAPE, f, (s,), (3, 2))),
                  ("node(RESHAPE, float32, (a,), (2, 3))", lambda: node(Ops.RESHAPE, f, (a,), (2, 3))), ("node(ADD, int32, (a, b))", lambda: node(Ops.ADD, i, (a, b), None))]:
    made = n()
    if (same := next((w for w, x in seen if x is made), None)) is not None:
      raise Fail(f"{same} and {what} are different nodes, but node gave the same object for both: two nodes are the same only if op, "
                 "dtype, src and arg are all equal.")
    seen.append((what, made))
  z, nz = node(Ops.CONST, f, (), 0.0), node(Ops.CONST, f, (), -0.0)
  need(z is not nz, "node(CONST, float32, (), 0.0) and node(CONST, float32, (), -0.0) gave the same node: 0.0 == -0.0 in Python and they hash "
       "alike, but they are different constants (1/x is inf for one and -inf for the other). Make the sign of a float arg part of the key.")
  need(node(Ops.CONST, f, (), -0.0) is nz and node(Ops.CONST, f, (), 0.0) is z, "-0.0 and 0.0 are two nodes now, but building one of them again "
       "gave a new object: each must still be found in the table.")
  x = node(Ops.CONST, i, (), 0)
  try:
    for _ in range(DEEP): x = node(Ops.ADD, i, (x, node(Ops.CONST, i, (), 1)), None)
  except RecursionError: raise Fail(f"a chain of {DEEP:,} nodes hit Python's recursion limit: node must not walk a node's sources (they are "
                                    "interned already, so the same objects are the same sources).") from None
  # the real graphs: the corpus programs' lazy graphs and lowered kernels, node by node
  for what, root in graph_cases():
    topo = root.toposort()
    first = rebuild(node, root)
    ids: dict[int, UOp] = {}
    for u in topo:
      if (v := ids.setdefault(id(first[u]), u)) is not u:
        raise Fail(f"in {what}: {_spec(v)} and {_spec(u)} are different nodes (lazynb has {len(topo)}), but node gave the same object.")
    again = rebuild(node, root, fresh=True)
    if (u := next((u for u in topo if again[u] is not first[u]), None)) is not None:
      raise Fail(f"in {what} ({plural(len(topo), 'node')}): built a second time (new but equal args), {_spec(u)} gave a new object: the same spec "
                 "must give the same node.")

@stage_exercise("b00.toposort", "toposort")
def _(toposort):
  from lazynb.notebook.exercise import _forbid
  need(callable(toposort), f"toposort must be a function of a graph's root, got {type(toposort).__name__}.")
  def run(what: str, root) -> int:
    """toposort(root) checked; how many times it read a _Counted node's .src."""
    _Counted.reads = 0
    with _forbid("toposort", cls=UOp, why="this exercise is to write the walk yourself"):
      try: order = toposort(root)
      except RecursionError: raise Fail(f"on {what} your toposort hit Python's recursion limit ({sys.getrecursionlimit():,} calls deep): keep "
                                        "the nodes still to do on a list of your own instead of in recursive calls.") from None
    reads = _Counted.reads
    if (err := toposort_error(root, order)) is not None: raise Fail(f"on {what}: {err}.")
    return reads
  i = dtypes.int32
  one, x = UOp(Ops.CONST, i, (), 1), UOp(Ops.DEFINE_VAR, i, (), ("x", 0, 9))
  y = UOp(Ops.ADD, i, (x, one))
  run("(x+1)*(x+1), where x+1 is one node used twice", UOp(Ops.MUL, i, (y, y)))
  ladder = _Counted(Ops.CONST, ())
  for _ in range(16): ladder = _Counted(Ops.ADD, (ladder, ladder))
  reads = run("a graph of 17 nodes where each adds the one below to itself", ladder)
  need(reads <= 20 * 17, f"on a graph of 17 nodes where each adds the one below to itself, your toposort read .src {plural(reads, 'time')}: it "
       "walks a shared node again every time a path reaches it (2**16 paths here). Remember which nodes are visited already.")
  chain = x
  for k in range(DEEP): chain = UOp(Ops.ADD, i, (chain, UOp(Ops.CONST, i, (), k)))
  run(f"a chain of {DEEP:,} additions", chain)
  for what, root in graph_cases(): run(what, root)
  grade("linearize", linearize_with_toposort(toposort, who="your toposort"))

class _Counted:
  """A node that counts how often any node's .src is read (what a toposort must not do once per path)."""
  reads = 0
  def __init__(self, op, src): self.op, self.dtype, self._src, self.arg = op, dtypes.int32, src, None
  @property
  def src(self):
    _Counted.reads += 1
    return self._src

# ---------------------------------------------------------------- Build 9: one opt (UNROLL) and a beam search: the optimize stage
SEARCH_BUDGET_S = 2.0  # mine(): seconds of timing one kernel's search may spend; past it time_kernel gives inf (not timed)
_spent: dict = {}       # the kernel's AST -> seconds its search has spent timing (inside mine())

def budgeted(fn: Callable) -> Callable:
  """Your optimize stage as mine() runs it: a search (no opts given) may spend SEARCH_BUDGET_S seconds timing each
  kernel; past that time_kernel gives inf (not timed), so the search keeps what it has."""
  @functools.wraps(fn)
  def optimize(ast, renderer, opts=None):
    if opts is not None: return fn(ast, renderer, opts)
    _spent[ast] = 0.0
    try: return fn(ast, renderer, opts)
    finally: _spent.pop(ast, None)
  return optimize

def time_kernel(k, runs: int = 3) -> float:
  """Seconds one run of Kernel `k` takes, on scratch buffers of random data: k is compiled through the pipeline with its
  opts given to the optimize stage (inside mine(): all your stages), then run once to warm up and `runs` times (the
  median counts; a kernel whose warm-up takes over 50 ms runs once more only). inf: not timed (its sizes are variables,
  or inside mine() its search has used its budget, SEARCH_BUDGET_S), so a search keeps what it has."""
  import statistics, time
  from lazynb.codegen import get_program
  from lazynb.engine.realize import CompiledRunner
  from lazynb.engine.search import scratch_buffers
  if any(k.is_sym(i) for i in range(len(k.full_shape))) or _spent.get(k.ast, 0.0) > SEARCH_BUDGET_S: return float("inf")
  st = time.perf_counter()
  with trace.muted():
    runner, bufs = CompiledRunner(get_program(k.ast, k.renderer, list(k.applied_opts))), scratch_buffers(k)
    ts = [runner(bufs)]
    ts = [runner(bufs) for _ in range(1 if ts[0] > 0.05 else runs)]
  if k.ast in _spent: _spent[k.ast] += time.perf_counter() - st
  return statistics.median(ts)

def _legal_unrolls(k, amounts=(2, 4)) -> list:
  """The UNROLL opts b09's search tries on k: each amount that divides a reduce axis of fixed size and is smaller than it."""
  from lazynb.codegen.kernel import Opt, OptOps, AxisType
  return [Opt(OptOps.UNROLL, a, amt) for a in k.axes_of(AxisType.REDUCE) if not k.is_sym(a) for amt in amounts
          if amt < k.full_shape[a] and k.full_shape[a] % amt == 0]

def _key(k) -> tuple: return tuple((o.axis, o.arg) for o in k.applied_opts)

def reachable(k, width: int, rounds: int, seconds: Callable) -> tuple:
  """The opts (as (axis, amount) pairs) b09's beam search ends with from Kernel k: each round every kernel in the beam
  gets each legal unroll, each new kernel is timed once (seconds(kernel)), the beam becomes the `width` fastest timed
  so far (the kernels it held included: "no opt" stays a candidate); after `rounds` rounds the fastest wins."""
  times, kernels = {(): seconds(k)}, {(): k}
  beam = [k]
  for _ in range(rounds):
    for b in beam:
      for o in _legal_unrolls(b):
        (c := b.copy()).apply_opt(o)
        if _key(c) not in times: times[_key(c)], kernels[_key(c)] = seconds(c), c
    beam = sorted(kernels.values(), key=lambda c: times[_key(c)])[:width]
  return _key(beam[0])

def _search_asts() -> dict:
  """{name: (ast, renderer)}: "mm" a matmul (one reduce axis of 16), "two" a sum over two reduce axes (8 and 16) that
  cannot merge, "ew" an elementwise kernel (nothing to unroll), "sym" a kernel whose reduce axis is a variable."""
  import numpy as np
  from lazynb import Tensor
  got: list = []
  ref = pipeline.reference("optimize")
  def spy(ast, renderer, opts=None):
    got.append((ast, renderer))
    return ref(ast, renderer, opts)
  x = np.arange(12 * 8 * 16, dtype=np.float32).reshape(8, 12, 16) / 100
  builds = {"mm": lambda: (Tensor(x[:, 0, :].copy()) @ Tensor(x[0].T.copy())).realize(), "two": lambda: Tensor(x).sum((0, 2)).realize(),
            "ew": lambda: (Tensor(x) * 2).realize(), "sym": symbolic_programs()[0].run}
  out = {}
  with Context(NOOPT=1), pipeline.use("optimize", spy):
    for name, build in builds.items():
      got.clear()
      build()
      out[name] = got[-1]
  return out

def _made_up(table: dict, key: tuple) -> float:
  """The grader's made-up seconds for a kernel with the opts `key` ((axis, amount) pairs): from `table`, else a time
  between 50 and 60 that depends only on the opts."""
  import hashlib
  return table.get(key, 50 + int(hashlib.sha256(repr(key).encode()).hexdigest()[:6], 16) % 10000 / 1000)

def _fake(table: dict, calls: list) -> Callable:
  """A timer for the grader: a kernel's made-up seconds; every call's opts are recorded in `calls`."""
  def seconds(k) -> float:
    calls.append(_key(k))
    return _made_up(table, _key(k))
  return seconds

SEARCH_CASES: tuple[tuple[str, int, int, dict, str], ...] = (  # (the kernel, width, rounds, made-up seconds by opts, what the case is about)
  ("mm", 2, 2, {(): 1.0}, "no opt is the fastest"),
  ("mm", 2, 2, {(): 10.0, ((2, 2),): 5.0, ((2, 4),): 6.0, ((2, 4), (2, 2)): 1.0}, "the second best of round 1 leads to the best"),
  ("mm", 1, 2, {(): 10.0, ((2, 2),): 5.0, ((2, 4),): 6.0, ((2, 4), (2, 2)): 1.0}, "a beam of width 1"),
  ("two", 2, 3, {(): 10.0, ((1, 4),): 5.0, ((1, 4), (2, 4)): 3.0, ((1, 4), (2, 4), (2, 2)): 1.0}, "the best takes three rounds"),
  ("ew", 2, 2, {}, "an elementwise kernel: nothing to unroll"), ("sym", 2, 2, {}, "a reduce axis whose size is a variable"))

def _optimize_check(fn) -> None:
  import inspect
  from lazynb.codegen.kernel import Kernel, Opt, OptOps, KernelOptError, AxisType
  try: params = inspect.signature(fn).parameters
  except (TypeError, ValueError): params = {}  # type: ignore[assignment]
  need(all(p in params for p in ("opts", "width", "rounds", "time_fn")),
       f"my_optimize must take (ast, renderer, opts=None, width=..., rounds=..., time_fn=...); yours takes ({', '.join(params)}).")
  asts = _search_asts()
  mm, two = asts["mm"], asts["two"]
  def loops(k) -> tuple:
    return (tuple((s, t.name) for s, t in zip(k.full_shape, k.axis_types) if t is not AxisType.UNROLL),
            sorted(s for s, t in zip(k.full_shape, k.axis_types) if t is AxisType.UNROLL))
  def said(k) -> str: return str(list(zip(k.full_shape, [t.name for t in k.axis_types])))
  def no_search(k): raise Fail("given opts, your my_optimize searched (it called time_fn): with opts, apply them and return the kernel.")
  # given opts: the same loops as lazynb's own UNROLL; an illegal one raises KernelOptError
  U = OptOps.UNROLL
  for (a, r), opts in ((mm, [Opt(U, 2, 4)]), (mm, [Opt(U, 2, 4), Opt(U, 2, 2)]), (two, [Opt(U, 1, 2)]), (two, [Opt(U, 2, 4)]),
                       (two, [Opt(U, 1, 2), Opt(U, 2, 8)])):
    want = Kernel(a, r)
    for o in opts: want.apply_opt(o)
    try: got = fn(a, r, opts, time_fn=no_search)
    except KernelOptError as e:
      raise Fail(f"your my_optimize refused the legal opts {opts} for a kernel of loops {said(Kernel(a, r))}: {e}" + (" (after an opt, the axes "
                 "the kernel had keep their numbers: the new axis goes after them)" if len(opts) > 1 else "")) from None
    except (Fail, NotImplementedError): raise
    except Exception as e:
      raise Fail(f"given the legal opts {opts} for the kernel of loops {said(Kernel(a, r))}, your my_optimize raised {type(e).__name__}: {e} (every "
                 "ShapeTracker is split and moved like the loops, the output's too, which has size 1 on a reduce axis)") from None
    need(isinstance(got, Kernel), f"my_optimize must return a Kernel, got {type(got).__name__}.")
    need(list(got.applied_opts) == opts, f"given the opts {opts}, your kernel's applied_opts are {got.applied_opts}: record each opt you apply.")
    need(loops(got) == loops(want), f"given the opts {opts} for the kernel of loops {said(Kernel(a, r))}, your kernel's loops are "
                                    f"{said(got)}; they should be {said(want)}.")
    need(all(len(v.shape) == len(got.full_shape) and all(n in (1, f) for n, f in zip(v.shape, got.full_shape)) for v in got.sts),
         f"given the opts {opts}, your kernel's loops are {said(got)} but its views' shapes are {', '.join(str(v.shape) for v in got.sts)}: each "
         "view must follow the loops (split and moved the same way; size 1 where its buffer does not move along a loop).")
  for (a, r), opt, why in ((mm, Opt(U, 2, 3), "3 does not divide the axis's 16"), (mm, Opt(U, 0, 2), "axis 0 is not a reduce axis"),
                             (mm, Opt(U, 5, 2), "the kernel has 3 axes"), (asts["sym"], Opt(U, 1, 2), "axis 1's size is a variable")):
    try: fn(a, r, [opt], time_fn=no_search)
    except KernelOptError: continue
    except Fail: raise
    except Exception as e: raise Fail(f"the illegal {opt} ({why}) raised {type(e).__name__}: {e}; raise KernelOptError, which a search catches to skip it.") from None
    raise Fail(f"your my_optimize applied the illegal {opt} ({why}): an opt that cannot apply must raise KernelOptError, not make a kernel.")
  # the search, with made-up times: it must end where the beam can reach, timing each kernel once
  for name, width, rounds, table, what in SEARCH_CASES:
    (a, r), calls = asts[name], list[tuple]()
    k = Kernel(a, r)
    best = reachable(k, width, rounds, _fake(table, []))
    try: out = fn(a, r, None, width=width, rounds=rounds, time_fn=_fake(table, calls))
    except (Fail, NotImplementedError): raise
    except Exception as e: raise Fail(f"with width {width} and {plural(rounds, 'round')} ({what}), your search raised {type(e).__name__}: {e}") from None
    need(isinstance(out, Kernel), f"my_optimize must return a Kernel, got {type(out).__name__}.")
    need(calls or not _legal_unrolls(k), "your search never called the time_fn it was given: time every candidate with it.")
    twice = next(((c, n) for c in calls if (n := calls.count(c)) > 1), None)
    need(twice is None, f"your search timed the kernel with opts {list(twice[0]) or 'none' if twice else ''} {plural(twice and twice[1], 'time')}: keep each time you "
                        "measure (a dict by opt list) and time a kernel only once.")
    if (mine_ := _key(out)) == best: continue
    if len(set(calls)) > 1 and mine_ == max(calls, key=lambda c: _made_up(table, c)): why = "that is the slowest it timed: keep the fastest"
    elif best == (): why = "\"no opt\" (the kernel you started from) stays a candidate: the beam keeps the fastest of everything timed so far"
    else:
      ends = [w for w, yes in (("the first round ends (do all the rounds)", rounds > 1 and mine_ == reachable(k, width, 1, _fake(table, []))),
                               (f"a beam of width 1 ends (the beam keeps the {width} fastest)", width > 1 and mine_ == reachable(k, 1, rounds, _fake(table, []))))
              if yes]
      why = (f"that is where {' and where '.join(ends)}" if ends else f"the beam keeps the {width} fastest of everything timed so far (the kernels "
             "it held included), and each round tries every legal unroll on each of them")
    times = ", ".join(f"{list(o) or 'no opt'}: {t}" for o, t in table.items())
    raise Fail(f"with width {width} and {plural(rounds, 'round')}, {what} (made-up times in seconds, by opts as (axis, amount): {times or 'none'}; any other: 50 "
               f"to 60), the beam ends at {list(best) or 'no opt'}; yours returned {list(mine_) or 'no opt'} ({why}).")

@stage_exercise("b09.optimize", "optimize")
def _(my_optimize):
  need(callable(my_optimize), f"my_optimize must be a function of (ast, renderer, opts=None, ...), got {type(my_optimize).__name__}.")
  _optimize_check(my_optimize)
  def deepest(k) -> float: return 1 / (1 + k.upcast_size()) + sum(o.axis * 1e-4 + o.arg * 1e-5 for o in k.applied_opts)
  # the values: each program's kernels unrolled as much as the search allows (the made-up timer favours unrolling)
  def stage(ast, renderer, opts=None): return my_optimize(ast, renderer, opts, time_fn=deepest)
  stage.__qualname__ = getattr(my_optimize, "__name__", "my_optimize")
  grade("optimize", stage, extra=tuple(symbolic_programs()))
