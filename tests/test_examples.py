"""Run the course project scripts in examples/ as subprocesses; each asserts on its own results and exits 0.

project4 (MNIST) runs with --quick (a narrow model on a subset). The MNIST files come from LAZYNB_DATA, which
defaults to the course data folder next to the repository (../shared/data), as in .ci/run."""
import importlib.util, os, pathlib, subprocess, sys, pytest
from freshenv import data_dir

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = data_dir()

SCRIPTS = [
  ("project1_tensor_basics.py", []),
  ("project2_op_types.py", []),
  ("project3_autograd.py", []),
  ("project4_mnist.py", ["--quick"]),
  ("project5_compiler_pipeline.py", []),
  ("project6_custom_ops.py", []),
  ("custom_backend.py", []),
  # beautiful_mnist's loop: batches drawn inside the jitted step (a tiny model on a subset: the path, not the accuracy)
  ("mnist.py", ["--steps", "4", "--batch", "32", "--subset", "1000", "--test-subset", "300", "--eval-every", "0", "--width", "8",
                "--sample-in-jit", "--out", "m.safetensors"]),
]

@pytest.mark.parametrize("script,args", SCRIPTS, ids=[s for s, _ in SCRIPTS])
def test_example_runs(script, args, tmp_path):
  if script == "project6_custom_ops.py" and importlib.util.find_spec("torch") is None: pytest.skip("project 6 compares against torch")
  env = dict(os.environ, LAZYNB_DATA=DATA, BEAM_PROGRESS="0", PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
  p = subprocess.run([sys.executable, str(ROOT / "examples" / script), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
  assert p.returncode == 0, f"{script} exited with {p.returncode}\n--- stdout (end)\n{p.stdout[-4000:]}\n--- stderr (end)\n{p.stderr[-4000:]}"
  if script.startswith("project"): assert "all checks passed" in p.stdout or script == "project4_mnist.py"
  if script == "project4_mnist.py": assert "project 4: test accuracy" in p.stdout
