"""The build track's machinery (lazynb/notebook/build.py): a stage kept as a file from the cell that defines it, every
kept stage used at once by mine(), the kept stages assembled into one module; each build notebook's exercises have
reference solutions the integration tier runs the notebooks with (tests/test_build_track.py)."""
import importlib.util, linecache, textwrap
import numpy as np
import pytest
from lazynb import Tensor, pipeline
from lazynb.helpers import NOOPT
from lazynb.notebook import build, exercise as ex
from lazynb.uop.ops import UOp, Ops, UPat, PatternMatcher, graph_rewrite
from lazynb.codegen.lowerer import lower_rules
from build_track import BUILD_NOTEBOOKS, sections, solved_source, load_solution, ROOT

CELL = textwrap.dedent('''\
  from lazynb import pipeline
  SCALE = 1  # a constant the stage uses: kept
  def helper(name, uops, renderer): return pipeline.reference("render")(name, uops, renderer)
  def my_render(name, uops, renderer):
    CALLS.append(name)
    return helper(name, uops, renderer) * SCALE
  print("a call in the cell: left out of the kept file")
  ''')

def cell_function(source: str, name: str, filename: str = "<cell-1>"):
  """A function defined the way a notebook cell defines it: the cell's text in linecache under a made-up file name."""
  linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
  ns: dict = {"CALLS": []}
  exec(compile(source, filename, "exec"), ns)
  return ns[name]

@pytest.fixture
def build_dir(tmp_path, monkeypatch):
  d = tmp_path / "my_compiler"
  monkeypatch.setenv("LAZYNB_BUILD_DIR", str(d))
  return d

def test_keep_saves_the_cells_definitions_and_not_its_calls(build_dir, capsys):
  fn = cell_function(CELL, "my_render")
  path = build.keep("render", fn)
  assert path == build_dir / "render.py" and "kept your render stage (my_render)" in capsys.readouterr().out
  text = path.read_text()
  assert "def helper" in text and "SCALE = 1" in text and "from lazynb import pipeline" in text and text.endswith("STAGE = my_render\n")
  assert "print(" not in text and "takes the kernel's name" in text

def test_kept_stages_run_in_pipeline_order_and_mine_uses_them(build_dir, capsys):
  build.keep("render", cell_function(CELL.replace("CALLS.append(name)", "pass"), "my_render"))
  build.keep("schedule", cell_function("from lazynb import pipeline\ndef s(outs): return pipeline.reference('schedule')(outs)\n", "s", "<cell-2>"))
  assert list(build.kept()) == ["schedule", "render"]
  capsys.readouterr()
  with build.mine() as yours:
    assert set(yours) == {"schedule", "render"} and NOOPT.value == 1
    assert [n for n, _ in pipeline.replaced()] == ["schedule", "render"]
    out = (Tensor(np.arange(6, dtype=np.float32)) * 3).numpy()
  assert "running on your stages: schedule, render" in capsys.readouterr().out
  assert pipeline.replaced() == () and np.allclose(out, np.arange(6) * 3)
  with build.mine("render") as yours: assert list(yours) == ["render"]
  with pytest.raises(FileNotFoundError, match="not kept yet: lower"):
    with build.mine("lower"): pass

def test_mine_with_nothing_kept_says_so_and_runs_on_lazynbs_stages(build_dir, capsys):
  with build.mine() as yours: assert yours == {} and pipeline.replaced() == ()
  assert "no stage of yours is kept yet" in capsys.readouterr().out

def test_a_kept_file_that_no_longer_runs_is_named(build_dir):
  build_dir.mkdir(parents=True)
  (build_dir / "render.py").write_text("def f(:\n")
  with pytest.raises(RuntimeError, match=r"your kept render .*render.py\) does not run: SyntaxError"): build.kept()
  (build_dir / "render.py").write_text("x = 1\n")
  with pytest.raises(RuntimeError, match="has no STAGE"): build.kept()

def test_keep_refuses_what_it_cannot_keep(build_dir):
  with pytest.raises(KeyError, match="no stage named 'renderer'"): build.keep("renderer", cell_function(CELL, "my_render"))
  with pytest.raises(TypeError, match="defined with def"): build.keep("render", print)
  inner = cell_function("def outer():\n  def my_render(n, u, r): return ''\n  return my_render\n", "outer", "<cell-3>")()
  with pytest.raises(ValueError, match="not defined at the top of its cell"): build.keep("render", inner)

def test_assemble_makes_one_module_whose_stages_are_the_kept_ones(build_dir):
  build.keep("render", cell_function(CELL.replace("CALLS.append(name)", "pass"), "my_render"))
  build.keep("compile", cell_function("from lazynb import pipeline\ndef c(d, s): return pipeline.reference('compile')(d, s)\n", "c", "<cell-4>"))
  path = build.assemble()
  assert path == build_dir.with_suffix(".py")
  spec = importlib.util.spec_from_file_location("assembled", path)
  mod = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(mod)
  assert list(mod.STAGES) == ["render", "compile"] and mod.STAGES["render"].__name__ == "my_render"
  with pipeline.use("render", mod.STAGES["render"]): assert np.allclose((Tensor([1.0, 2.0]) + 1).numpy(), [2, 3])

def test_a_passing_build_check_keeps_the_stage_and_a_failing_one_does_not(build_dir, capsys):
  def stub(name, uops, renderer): raise NotImplementedError
  ex.check("b02.render", stub)
  assert "not yet" in capsys.readouterr().out and not (build_dir / "render.py").exists()
  ex.check("b02.render", load_solution("b02_renderer").my_render)
  assert "\u2713 pass" in capsys.readouterr().out and (build_dir / "render.py").exists()
  assert list(build.kept()) == ["render"]

def test_build_exercises_keep_known_parts_and_every_notebook_has_its_solutions():
  keys = {k for k in ex.EXERCISES if k.startswith("b")}
  assert set(build.STAGE_OF) <= keys and set(build.STAGE_OF.values()) <= set(build.parts()) and BUILD_NOTEBOOKS[-1] == "b10_capstone"
  for stem in BUILD_NOTEBOOKS:
    src = solved_source(stem)
    assert "raise NotImplementedError  # YOUR CODE" not in src, stem
    sols = ROOT / "notebooks" / "solutions" / f"{stem}.py"
    assert not sols.exists() or set(sections(sols.read_text())) <= keys

def test_a_class_is_kept_as_a_part_that_is_not_a_stage(build_dir):
  src = "from lazynb.nn.optim import Optimizer\nclass MyOpt(Optimizer):\n  def _step(self): return []\n"
  cls = cell_function(src, "MyOpt", "<cell-5>")
  build.keep("optimizer", cls)
  assert list(build.kept()) == [] and list(build.kept_pieces()) == ["optimizer"] and build.kept_pieces()["optimizer"].__name__ == "MyOpt"
  build.keep("render", cell_function(CELL.replace("CALLS.append(name)", "pass"), "my_render"))
  spec = importlib.util.spec_from_file_location("assembled2", build.assemble())
  mod = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(mod)
  assert list(mod.PARTS) == ["render", "optimizer"] and list(mod.STAGES) == ["render"]
  with pytest.raises(KeyError, match="other parts: .*optimizer"): build.keep("optimiser", cls)

def test_index_math_of_your_own_goes_only_into_the_kernels_lowered_with_it():
  """build.lower_with_index_math: lazynb's lower stage with fn's index math. A wrong fn (here: every view's offset
  forgotten) changes the values it lowers, and nothing else: the same program afterwards, on lazynb's lower, is right
  (the replaced stage is part of the kernel cache's key; ShapeTracker's cached template is not used under it)."""
  from lazynb.shape.shapetracker import ShapeTracker
  sol = load_solution("b07_views")
  def no_offset(views, idxs):
    idx, valid = sol.my_index_math(views, idxs)
    top = views[-1]
    return (idx - top.offset if len(views) == 1 else idx), valid
  a = np.arange(20, dtype=np.float32).reshape(4, 5)
  def prog(): return (Tensor(a)[1:3, 2:] * 2).contiguous().numpy()
  want = a[1:3, 2:] * 2
  with pipeline.use("lower", build.lower_with_index_math(sol.my_index_math)): np.testing.assert_array_equal(prog(), want)
  with pipeline.use("lower", build.lower_with_index_math(no_offset)): assert not np.array_equal(prog(), want)
  np.testing.assert_array_equal(prog(), want)
  st = ShapeTracker.from_shape((4, 5)).pad(((1, 0), (0, 0))).permute((1, 0)).reshape((25,))
  assert len(st.views) == 2 and st.views[0].mask is not None  # the masked template path, cached
  from lazynb.shape.shapetracker import index_math
  from lazynb.uop.ops import UOp
  from lazynb.dtype import dtypes
  i = [UOp.const(dtypes.index, 7)]
  ref = [u.vmin for u in st.to_indexed_uops(i)]
  with index_math(lambda views, idxs: (UOp.const(dtypes.index, -5), UOp.const(dtypes.bool, False))):
    assert [u.vmin for u in st.to_indexed_uops(i)] == [-5, False]
  assert [u.vmin for u in st.to_indexed_uops(i)] == ref
def test_a_kept_kernel_decision_cuts_every_schedule_that_mine_runs(build_dir, capsys):
  """The boundaries piece (b08): kept, mine() runs lazynb's scheduler with it (every kernel's reason is `yours`); a
  decision that realizes more gives more kernels and the same values; it lasts only inside the block."""
  sol = load_solution("b08_schedule")
  x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
  def softmax(t):
    e = (t - t.max(axis=1, keepdim=True)).exp()
    return e / e.sum(axis=1, keepdim=True)
  want = [si.reason for si in softmax(Tensor(x)).schedule() if si.kind == "kernel"]
  build.keep("boundaries", sol.my_boundaries)
  with build.mine() as yours:
    assert list(yours) == ["schedule"]
    assert [si.reason for si in softmax(Tensor(x)).schedule() if si.kind == "kernel"] == ["yours"] * len(want)
    got = softmax(Tensor(x)).numpy()
  assert "running on your stages: schedule (lazynb's, with your kernel boundaries)" in capsys.readouterr().out
  np.testing.assert_allclose(got, np.exp(x - x.max(1, keepdims=True)) / np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True), rtol=1e-5)
  def more(outs): return sol.my_boundaries(outs) | {n for n in UOp.sink(*outs).toposort() if n.op is Ops.EXP2}
  with pipeline.use("schedule", build.schedule_with_boundaries(more)):
    assert len([si for si in softmax(Tensor(x)).schedule() if si.kind == "kernel"]) == len(want) + 1
    np.testing.assert_allclose(softmax(Tensor(x)).numpy(), got, rtol=1e-6)
  assert [si.reason for si in softmax(Tensor(x)).schedule() if si.kind == "kernel"] == want

# ---- b04.simplify: values cannot tell a stage that folds nothing from a right one, so its results are read too
def _index_math():
  from lazynb.uop.ops import UOp, Ops
  from lazynb.dtype import dtypes
  g, r = (UOp(Ops.RANGE, dtypes.index, (), (i, n, name)) for i, n, name in ((0, 4, "gidx0"), (1, 3, "ridx0")))
  return UOp, Ops, dtypes, g, r

def test_the_simplify_check_names_each_kind_of_foldable_index_math_and_only_that():
  UOp, Ops, dtypes, g, r = _index_math()
  buf = UOp(Ops.DEFINE_GLOBAL, dtypes.float.ptr(), (), 0)
  folds = {"identity": [UOp.const(dtypes.index, 0) + g, g // 1, (g < 2) & True], "constants": [(g + 2) + -1], "fixed": [g < 4, g // 4],
           "valid": [UOp(Ops.INDEX, buf.dtype, (buf, g, UOp.const(dtypes.bool, True)))],
           "divmod": [(g * 3 + r) // 3, (g * 3 + r) % 3, g % 5, (g * 6 + 1) % 3]}
  for kind, us in folds.items():
    for u in us:
      assert (f := build.foldable(u)) is not None and f[0] == kind, (kind, u)
      assert all(build.foldable(n) is None for n in graph_rewrite(u, lower_rules).toposort()), (kind, u)  # lazynb's own rules fold it
  # what does not fold: a rest that can reach the divisor, a sum that can be negative, a % of a value that reaches c
  for u in [(g * 3 + r + 1) // 3, (g * 3 + r + -1) // 3, g % 3, g < 3, UOp(Ops.INDEX, buf.dtype, (buf, g, g < 3))]:
    assert build.foldable(u) is None, u

def test_lazynbs_own_simplify_leaves_nothing_the_check_looks_for():
  progs = [p for ps in build.graded_programs(per_kind=1).values() for p in ps] + build.simplify_programs()
  pairs = build.lowered_graphs(progs)
  assert len(pairs) >= len(progs) and build.unfolded(pairs) is not None  # the lowered kernels hold some
  assert build.unfolded([(p, pipeline.reference("simplify")(g)) for p, g in pairs]) is None

def test_the_simplify_check_names_a_rewrite_that_changes_a_value_and_where():
  UOp, Ops, dtypes, g, r = _index_math()
  wrong = PatternMatcher([(UPat.var("x", dtypes.index) % UPat.cvar("c"), lambda x, c: x if x.vmin >= 0 and x.vmax <= c.arg else None)])
  said = build.wrong_rewrite(lambda s: graph_rewrite(s, wrong), UOp.sink((g + 1) % 4))
  assert said is not None and "turned `((gidx0+1)%4)` into `(gidx0+1)`, but where gidx0=3 the first is 0 and the second 4" in said, said
  right = PatternMatcher([(UPat.var("x", dtypes.index) % UPat.cvar("c"), lambda x, c: x if x.vmin >= 0 and x.vmax < c.arg else None)])
  assert build.wrong_rewrite(lambda s: graph_rewrite(s, right), UOp.sink((g + 1) % 4, g % 4)) is None

@pytest.mark.parametrize("cores", [1, 2])
def test_the_threaded_optimize_stage_gives_thread_axes_on_any_machine_and_numpys_values(cores, monkeypatch):
  """b01.launch grades a load stage on kernels split over thread ids: `threaded` must split them also where the CPU renderer
  has no threads (one core), leave that renderer as it was, and the split kernels must still give numpy's values."""
  from lazynb import Context, Device
  from lazynb.codegen.kernel import AxisType
  r = Device["CPU"].renderer
  monkeypatch.setattr(r, "has_threads", cores > 1)
  a = np.arange(24, dtype=np.float32).reshape(6, 4)
  ast = [si for si in (Tensor(a) * 2).sum(axis=1).schedule() if si.kind == "kernel"][0].ast
  k = build.threaded(ast, r)
  assert k.axis_types[0] is AxisType.THREAD and k.full_shape[0] == 3 and r.has_threads == (cores > 1)
  sizes = []
  def spy_load(device, name, lib):
    prog = pipeline.reference("load")(device, name, lib)
    return lambda *bufs, **kw: sizes.append(kw["global_size"][0]) or prog(*bufs, **kw)
  with Context(NOOPT=1), pipeline.use("optimize", build.threaded), pipeline.use("load", spy_load):
    got = [(Tensor(a) * 2).sum(axis=1).numpy(), (Tensor(a.ravel()[:7]) + 1).numpy(), Tensor(a).sum().numpy()]
  for g, w in zip(got, [(a * 2).sum(axis=1), a.ravel()[:7] + 1, a.sum()]): np.testing.assert_allclose(g, w)
  assert sizes == [3, 1, 1]  # 6 rows: 3 ids; 7 values (a prime) and a full sum: no thread axis

def test_the_recorded_full_capstone_run_is_of_the_current_notebook_and_passed():
  """notebooks/runs/b10_capstone.full.ipynb (tools/record_run.py --solved): the capstone at full size on every part's
  reference solution. Its code is the notebook's as it is now, it reached its accuracy, and every part regraded."""
  import re
  import nbformat
  nb = nbformat.read(ROOT / "notebooks" / "b10_capstone.ipynb", as_version=4)
  rec = nbformat.read(ROOT / "notebooks" / "runs" / "b10_capstone.full.ipynb", as_version=4)
  assert [c.source for c in nb.cells if c.cell_type == "code"] == [c.source for c in rec.cells], "record it again: tools/record_run.py --solved"
  assert rec.metadata["lazynb_record"]["mode"].startswith("full") and "solved" in rec.metadata["lazynb_record"]["mode"]
  out = "".join(o.get("text", "") for c in rec.cells for o in c.outputs)
  assert float(re.search(r"test accuracy ([\d.]+)%", out).group(1)) >= 97.0
  assert all(f"  {p}: \u2713 passes its exercise again" in out for p in set(build.STAGE_OF.values())), out

# ---- b00: the kept toposort orders every kernel the linearize stage walks under mine()
TOPO_CELL = textwrap.dedent('''\
  import os
  def my_toposort(root):
    if os.environ.get("TOPO_LOG"):
      with open(os.environ["TOPO_LOG"], "a") as f: f.write(f"{root.op.name}\\n")
    order, done, stack = [], set(), [(root, False)]
    while stack:
      n, ready = stack.pop()
      if ready: order.append(n)
      elif n not in done:
        done.add(n)
        stack += [(n, True)] + [(s, False) for s in n.src]  # sources in reverse order: another valid order than lazynb's
    return order
  ''')

def _softmax():
  x = np.random.default_rng(1).standard_normal((3, 6)).astype(np.float32)
  return x, lambda: Tensor(x).softmax(axis=1).numpy()

def test_the_kept_toposort_orders_the_linearize_stage_and_the_values_stay(build_dir, capsys, tmp_path, monkeypatch):
  """Under mine() every UOp.toposort() inside the linearize stage is the kept one (even for a program that ran before: the
  replaced stage is in the kernel cache's key); its other valid order gives other linear programs and the same values."""
  from lazynb.helpers import Context
  x, prog = _softmax()
  with Context(NOOPT=1): want = prog()  # on lazynb's stages first: the same kernels are in the cache now
  fn = cell_function(TOPO_CELL, "my_toposort", "<cell-topo>")
  build.keep("toposort", fn)
  capsys.readouterr()
  orders: dict[str, list] = {"lazynb": [], "yours": []}
  def spy(who):
    def linearize(sink):
      out = pipeline.reference("linearize")(sink)
      orders[who].append([u.op for u in out])
      return out
    return linearize
  with Context(NOOPT=1), pipeline.use("linearize", spy("lazynb")): np.testing.assert_allclose(prog(), want, rtol=1e-6)
  monkeypatch.setenv("TOPO_LOG", str(tmp_path / "calls"))
  with build.mine() as yours:
    assert "linearize" not in yours and "ordered by your toposort" in dict(pipeline.replaced())["linearize"].__qualname__
    np.testing.assert_allclose(prog(), want, rtol=1e-6)
  monkeypatch.delenv("TOPO_LOG")
  assert "SINK" in (tmp_path / "calls").read_text(), "the kept toposort never ran"  # (a kernel's graph is a SINK)
  assert "lazynb's linearize stage walks each kernel in the order of your toposort" in capsys.readouterr().out
  with build.mine(), pipeline.use("linearize", build.linearize_with_toposort(fn, spy("yours"))): np.testing.assert_allclose(prog(), want, rtol=1e-6)
  assert len(orders["yours"]) == len(orders["lazynb"]) and orders["yours"] != orders["lazynb"]  # another order, the same values
  assert sorted(map(len, orders["yours"])) == sorted(map(len, orders["lazynb"]))

@pytest.mark.parametrize("bug,said", [("order.append(n)", "comes before its source"), ("done.add(n)", "in the list twice")])
def test_a_broken_kept_toposort_is_an_error_naming_it_not_a_wrong_value(build_dir, bug, said):
  """Pre-order (a node listed when first reached) and a walk that forgets what it visited: each is an error naming the
  kept toposort's file, never a kernel that reads a value before it is computed."""
  cell = TOPO_CELL.replace("    if ready: order.append(n)\n", "    if ready: pass\n").replace("      done.add(n)\n", "      done.add(n)\n      order.append(n)\n") \
    if bug == "order.append(n)" else TOPO_CELL.replace("      done.add(n)\n", "")
  assert cell != TOPO_CELL
  build.keep("toposort", cell_function(cell, "my_toposort", f"<cell-{len(bug)}>"))
  _, prog = _softmax()
  with build.mine(), pytest.raises(pipeline.StageError, match=f"your linearize stage .*raised RuntimeError: your kept toposort \\({build_dir}/toposort.py\\) .*{said}"):
    prog()

def test_the_toposort_seam_is_per_block_and_the_function_walks_lazynbs_way():
  from lazynb.uop.ops import UOp, Ops, toposort_with
  from lazynb.dtype import dtypes
  a = UOp(Ops.CONST, dtypes.int32, (), 3)
  b = UOp(Ops.ADD, dtypes.int32, (a, a))
  inner = []
  def reverse(root):
    inner.append(root.toposort())  # inside fn, UOp.toposort is lazynb's (no recursion into fn)
    return inner[-1][::-1]
  with toposort_with(reverse): assert b.toposort() == [b, a] and inner == [[a, b]]
  assert b.toposort() == [a, b]
  with pytest.raises(ZeroDivisionError):
    with toposort_with(lambda r: 1 // 0): b.toposort()
  assert b.toposort() == [a, b]

def test_a_kept_optimize_stage_chooses_the_loops_mine_runs_and_its_search_has_a_budget(build_dir, monkeypatch):
  """b09: the kept optimize stage runs inside mine() although mine() sets NOOPT=1, and the opts it chooses reach the
  renderer (here its timer is made up, so the choice is known: the deepest unroll, 256 steps as 16 x 4 x 4). time_kernel
  gives inf for a kernel with variable sizes and, inside a search mine() runs, once the kernel's budget is spent."""
  from lazynb.codegen.kernel import Kernel
  build.keep("optimize", load_solution("b09_search").my_optimize)
  monkeypatch.setattr(build, "time_kernel", lambda k, runs=3: 1 / (1 + k.upcast_size()))  # the kept file imports it when mine() loads it
  names: list[str] = []
  def spy(name, uops, renderer):
    names.append(name)
    return pipeline.reference("render")(name, uops, renderer)
  a = np.random.default_rng(0).random((64, 256), dtype=np.float32)
  with build.mine() as yours, pipeline.use("render", spy):
    assert "optimize" in yours
    np.testing.assert_allclose(Tensor(a).sum(axis=1).numpy(), a.sum(axis=1), rtol=1e-5)
  assert names == ["r_64_16_4_4"], names
  monkeypatch.undo()
  asts: list = []
  def record(ast, renderer, opts=None):
    asts.append((ast, renderer))
    return pipeline.reference("optimize")(ast, renderer, opts)
  with pipeline.use("optimize", record): Tensor(a).sum(axis=1).realize()
  k = Kernel(*asts[0])
  assert 0 < build.time_kernel(k) < float("inf") and k.ast not in build._spent
  monkeypatch.setattr(build, "SEARCH_BUDGET_S", 0.0)
  timings: list[float] = []
  def search(ast, renderer, opts=None):
    timings.extend(build.time_kernel(Kernel(ast, renderer)) for _ in range(2))  # the first spends the budget, the second is not timed
    return Kernel(ast, renderer)
  build.budgeted(search)(k.ast, k.renderer)
  assert timings[0] < float("inf") and timings[1] == float("inf") and k.ast not in build._spent
  sym = [p for p in build.symbolic_programs()][0]
  asts.clear()
  with pipeline.use("optimize", record): sym.run()
  assert build.time_kernel(Kernel(*asts[-1])) == float("inf")
