"""The build track's notebooks as a learner who solved every exercise would run them: each `# EXERCISE key` cell
replaced by the section of notebooks/solutions/NOTEBOOK.py that starts `# %% EXERCISE key`."""
import pathlib, re, sys
ROOT = pathlib.Path(__file__).parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from make_notebook import build  # noqa: E402

def sections(text: str) -> dict[str, str]:
  """{exercise key: its solution cell} from a solutions file split by `# %% EXERCISE key` lines."""
  parts = re.split(r"^# %% EXERCISE (\S+)\n", text, flags=re.M)
  return {key: f"# EXERCISE {key}\n" + body.strip("\n") for key, body in zip(parts[1::2], parts[2::2])}

def solved_source(stem: str) -> str:
  """notebooks/src/STEM.py with every exercise cell holding its reference solution."""
  f = ROOT / "notebooks" / "solutions" / f"{stem}.py"
  sols = sections(f.read_text()) if f.exists() else {}  # a notebook without exercises (the capstone) has none
  cells = re.split(r"^(# %%.*)$", (ROOT / "notebooks" / "src" / f"{stem}.py").read_text(), flags=re.M)
  out, used = [cells[0]], set()
  for head, body in zip(cells[1::2], cells[2::2]):
    m = re.match(r"\n# EXERCISE (\S+)\n", body)
    if m:
      if m.group(1) not in sols: raise KeyError(f"{stem}: no solution section for exercise {m.group(1)}")
      body, _ = "\n" + sols[m.group(1)] + "\n\n", used.add(m.group(1))
    out += [head, body]
  if set(sols) - used: raise KeyError(f"{stem}: solutions for exercises the notebook lacks: {sorted(set(sols) - used)}")
  return "".join(out)

def solved_notebook(stem: str):
  return build(solved_source(stem))

BUILD_NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks" / "src").glob("b[0-9]*.py"))

def load_solution(stem: str):
  """notebooks/solutions/STEM.py as a module."""
  import importlib.util
  spec = importlib.util.spec_from_file_location(f"solution_{stem}", ROOT / "notebooks" / "solutions" / f"{stem}.py")
  mod = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(mod)
  return mod
