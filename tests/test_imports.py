"""Imports go one way, down the pipeline (docs/architecture.md), and the core never imports the notebook layer.

Each lazynb module belongs to a layer; a module may import its own layer or lower ones, at the top of the file. A
function-local import of another lazynb module is how an upward edge or a cycle hides, so there are none in the core,
except the one entry point named in ALLOWED (with its reason). The checker reads the source (ast), so it sees imports
inside functions that never ran."""
from __future__ import annotations
import ast, pathlib
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "lazynb"
# lowest first; a module may import modules of its own layer or any layer before it
LAYERS: list[tuple[str, tuple[str, ...]]] = [
  ("base", ("lazynb.helpers", "lazynb.dtype", "lazynb.runstate")),  # runstate: the realize/autograd registries, read by every layer above
  ("ir", ("lazynb.uop", "lazynb.trace", "lazynb.gradient")),
  ("pipeline", ("lazynb.pipeline",)),  # the stages declared; the modules below it mark their references (@implements)
  ("shape", ("lazynb.shape",)),
  ("renderer", ("lazynb.renderer",)),
  ("device", ("lazynb.device",)),
  ("runtime", ("lazynb.runtime",)),
  ("codegen", ("lazynb.codegen",)),
  ("schedule", ("lazynb.engine.schedule", "lazynb.engine.kernelize")),
  ("realize", ("lazynb.engine.realize", "lazynb.engine.search")),
  ("frontend", ("lazynb.tensor", "lazynb.tensor_")),
  ("jit", ("lazynb.engine", "lazynb.engine.jit")),
  ("nn", ("lazynb.nn",)),
  ("corpus", ("lazynb.corpus",)),  # the programs pipeline.check grades on: built with Tensor
  ("readers", ("lazynb.debug",)),
  ("package", ("lazynb", "lazynb.ops")),
  ("notebook", ("lazynb.notebook",)),
]
# (module, imported module): why a function-local import is right there
ALLOWED = {("lazynb", "lazynb.notebook.magic"): "`%load_ext lazynb` is IPython's entry point into the notebook layer; "
                                                  "importing lazynb alone must not import IPython",
           ("lazynb", "lazynb.notebook.viz"): "VIZ=1 writes the views' standalone page; only then is the view layer imported",
           ("lazynb.trace", "lazynb.notebook.tracedoc"): "capture() yields the views' trace document, which lives with the "
                                                         "views; core code never needs it",
           ("lazynb.uop.ops", "lazynb.shape.shapetracker"): "UOp.st (tinygrad 0.10's) is the ShapeTracker of a movement "
                                                              "chain; the shape layer is built on UOps",
           ("lazynb.shape.view", "lazynb.shape.shapetracker"): "View + View (tinygrad 0.10's) merges two views as a two-view "
                                                                "ShapeTracker simplifies; the tracker is built on View",
           ("lazynb.codegen.kernel", "lazynb.codegen"): "k.to_program() (tinygrad's Kernel method) runs the codegen pipeline, "
                                                        "whose package imports Kernel"}

def layer(mod: str) -> int:
  best = (-1, -1)
  for i, (_, prefixes) in enumerate(LAYERS):
    for p in prefixes:
      if mod == p or mod.startswith(p + ".") or (p.endswith("_") and mod.startswith(p)): best = max(best, (len(p), i))
  assert best[1] >= 0, f"{mod} is in no layer: add it to LAYERS"
  return best[1]

def module_name(path: pathlib.Path, root: pathlib.Path) -> str:
  return ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")

def imports(path: pathlib.Path, root: pathlib.Path) -> list[tuple[str, str, bool, int]]:
  """(module, imported lazynb module, inside a function?, line) for every import of a lazynb module in the file."""
  tree, me = ast.parse(path.read_text()), module_name(path, root)
  local = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(f)}
  out = []
  for n in ast.walk(tree):
    if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module and n.module.split(".")[0] == root.name:
      names = [n.module] if n.module != root.name else [f"{root.name}.{a.name}" for a in n.names]
    elif isinstance(n, ast.Import): names = [a.name for a in n.names if a.name.split(".")[0] == root.name]
    else: continue
    out += [(me, m, id(n) in local, n.lineno) for m in names]
  return out

def violations(root: pathlib.Path) -> list[str]:
  bad = []
  for path in sorted(root.rglob("*.py")):
    for me, m, local, line in imports(path, root):
      where = f"{path.relative_to(root.parent)}:{line}: {me} -> {m}"
      core = layer(me) < layer(f"{root.name}.notebook")
      if layer(m) > layer(me) and (me, m) not in ALLOWED: bad.append(f"{where}: imports upward ({LAYERS[layer(me)][0]} -> {LAYERS[layer(m)][0]})")
      elif core and local and (me, m) not in ALLOWED: bad.append(f"{where}: a function-local import in the core (move it to the top)")
  return bad

def test_imports_go_one_way():
  assert violations(ROOT) == []

def test_every_module_has_a_layer():
  for path in ROOT.rglob("*.py"): layer(module_name(path, ROOT))

def test_allowed_exceptions_are_still_needed():
  found = {(me, m) for path in ROOT.rglob("*.py") for me, m, local, _ in imports(path, ROOT) if local or layer(m) > layer(me)}
  assert set(ALLOWED) <= found, f"no longer needed, remove from ALLOWED: {set(ALLOWED) - found}"

def test_the_checker_finds_what_it_should(tmp_path):
  pkg = tmp_path / "lazynb"
  for rel, src in {"__init__.py": "", "helpers.py": "from lazynb.tensor import Tensor\n", "tensor.py": "def f():\n  from lazynb.dtype import dtypes\n",
                   "dtype.py": "", "uop/__init__.py": "", "uop/ops.py": "import lazynb.helpers\n",
                   "trace.py": "def capture():\n  from lazynb.notebook import html\n", "notebook/__init__.py": "def g():\n  from lazynb.tensor import Tensor\n"}.items():
    (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
    (pkg / rel).write_text(src)
  got = violations(pkg)
  assert any("helpers.py:1" in v and "upward (base -> frontend)" in v for v in got), got
  assert any("tensor.py:2" in v and "function-local" in v for v in got), got
  assert any("trace.py:2" in v and "upward" in v for v in got), got
  assert not any("uop/ops.py" in v or "notebook/__init__.py" in v for v in got), got  # downward; the notebook layer may import late
  with pytest.raises(AssertionError, match="no layer"): layer("elsewhere")

def test_the_notebook_layer_uses_only_public_core_names():
  """lazynb/notebook/ imports no underscored name from the core (a private helper is free to change)."""
  bad = []
  for path in sorted((ROOT / "notebook").rglob("*.py")):
    for n in ast.walk(ast.parse(path.read_text())):
      if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("lazynb") and not n.module.startswith("lazynb.notebook"):
        bad += [f"{path.name}:{n.lineno}: from {n.module} import {a.name}" for a in n.names if a.name.startswith("_")]
  assert not bad, "\n".join(bad)
