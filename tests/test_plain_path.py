"""LAZYNB_PLAIN=1 switches off the CPU device's speed work (docs/architecture.md, "The teaching path"): the packed matmul,
the conv's row windows, gcc's lane vectors, the ELF loader and the compiler started ahead. It must change how the work
is done (fewer kernels here, other loaders) and never a value: the same results as the fast path and as numpy/torch.
CI also runs the op, conv, nn and fuzz suites with LAZYNB_PLAIN=1 (.ci/run)."""
import json, os, subprocess, sys
import numpy as np
import pytest
from lazynb import Tensor, Context

rng = np.random.default_rng(7)
A, B = rng.standard_normal((128, 1024)).astype(np.float32), rng.standard_normal((1024, 1024)).astype(np.float32)
X, W = rng.standard_normal((2, 8, 40, 40)).astype(np.float32), rng.standard_normal((16, 8, 5, 5)).astype(np.float32)

def run() -> dict:
  a, b, x, w = Tensor(A), Tensor(B), Tensor(X, requires_grad=True), Tensor(W, requires_grad=True)
  m, c = a @ b, x.conv2d(w, padding=1)
  kernels = {"matmul": len([s for s in m.schedule() if s.kind == "kernel"]), "conv": len([s for s in c.schedule() if s.kind == "kernel"])}
  (c * c).sum().backward()
  return {"kernels": kernels, "matmul": m.numpy(), "conv": c.numpy(), "dx": x.grad.numpy(), "dw": w.grad.numpy()}

def test_plain_path_gives_the_same_values_with_fewer_kernels():
  with Context(LAZYNB_PLAIN=0): fast = run()  # (also when the whole run has LAZYNB_PLAIN=1: CI's plain pass)
  with Context(LAZYNB_PLAIN=1): plain = run()
  for k in ("matmul", "conv", "dx", "dw"): np.testing.assert_allclose(plain[k], fast[k], rtol=1e-5, atol=1e-4, err_msg=k)
  np.testing.assert_allclose(plain["matmul"], A @ B, rtol=1e-4, atol=1e-3)
  # the switch did something: no panel copy before the matmul, no row layout (and its extra kernels) for the conv
  assert plain["kernels"]["matmul"] < fast["kernels"]["matmul"] and plain["kernels"]["conv"] < fast["kernels"]["conv"], (plain["kernels"], fast["kernels"])

def test_plain_path_conv_matches_torch():
  torch = pytest.importorskip("torch")
  with Context(LAZYNB_PLAIN=1): got = Tensor(X).conv2d(Tensor(W), padding=1).numpy()
  want = torch.nn.functional.conv2d(torch.from_numpy(X), torch.from_numpy(W), padding=1).numpy()
  np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)

@pytest.mark.parametrize("plain", ["0", "1"])
def test_plain_path_runtime_knobs(plain):
  """The runtime's speed work follows LAZYNB_PLAIN unless its own variable says otherwise (read when the device opens)."""
  code = ("import json; from lazynb import Device, Tensor; from lazynb.runtime import ops_cpu, compiler_process as cp;"
          "r = Device['CPU'].renderer; assert (Tensor([1.0, 2.0]) * 3).tolist() == [3.0, 6.0];"
          "from lazynb.runtime import elfload; print(json.dumps([ops_cpu.loader_knob(), cp.prestart_knob(), r.lane_vectors, elfload.supported()]))")
  env = {k: v for k, v in os.environ.items() if k not in ("LAZYNB_LOADER", "LAZYNB_CC_PRESTART")}
  env.update(LAZYNB_PLAIN=plain, CC="gcc", PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
  assert p.returncode == 0, p.stderr[-2000:]
  loader, prestart, lanes, elf = json.loads(p.stdout.strip().splitlines()[-1])
  if plain == "1": assert (loader, prestart, lanes) == ("dlopen", False, False)
  else: assert lanes is True and loader == ("elf" if elf else "dlopen")  # gcc writes lane vectors; lazynb's loader where it runs
