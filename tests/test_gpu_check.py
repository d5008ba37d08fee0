"""tools/gpu_check.sh: without a GPU it says so in one line and exits 0; a GPU it finds but lazynb cannot drive is a failure
with the reason (a fake nvidia-smi stands in for the GPU here). The GPU passes themselves run only where a GPU is."""
import os, pathlib, stat, subprocess
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tools" / "gpu_check.sh"

def _gpu_here() -> str | None:
  from lazynb.runtime.ops_cuda import driver_status
  if driver_status()[0] is not None: return "a CUDA GPU"
  try:
    import pyopencl as cl
    if any(d.type & cl.device_type.GPU for p in cl.get_platforms() for d in p.get_devices()): return "an OpenCL GPU"
  except Exception: pass  # noqa: BLE001 (no OpenCL at all: no GPU)
  return None

def _run(tmp_path, path_prefix: str = "", **env) -> subprocess.CompletedProcess:
  e = {k: v for k, v in os.environ.items() if k not in ("GPU_CHECK_DEVICES", "DEVICE")}
  e.update(env, LAZYNB_CACHE=str(tmp_path / "cache"), PATH=path_prefix + os.environ.get("PATH", ""))
  return subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=e, cwd=str(tmp_path), timeout=600)

def test_without_a_gpu_it_says_so_and_exits_0(tmp_path):
  if (gpu := _gpu_here()) is not None: pytest.skip(f"{gpu} is present: run bash tools/gpu_check.sh itself")
  p = _run(tmp_path)
  assert p.returncode == 0, p.stdout + p.stderr
  lines = p.stdout.strip().splitlines()
  assert len(lines) == 1 and lines[0].startswith("gpu_check: no GPU ("), p.stdout

def test_a_gpu_lazynb_cannot_drive_is_a_failure_with_the_reason(tmp_path):
  """nvidia-smi lists a GPU but there is no driver to run kernels: the CUDA pass fails at its first kernel, in one line."""
  if _gpu_here() is not None: pytest.skip("a GPU is present")
  bin_ = tmp_path / "bin"
  bin_.mkdir()
  fake = bin_ / "nvidia-smi"
  fake.write_text('#!/bin/sh\necho "GPU 0: NVIDIA Pretend (UUID: GPU-0)"\n')
  fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
  p = _run(tmp_path, path_prefix=f"{bin_}{os.pathsep}")
  assert p.returncode == 1, p.stdout + p.stderr
  last = p.stdout.strip().splitlines()[-1]
  assert last.startswith("gpu_check: FAIL | CUDA: cannot run a kernel (DeviceUnavailable: CUDA cannot run kernels here"), p.stdout

def test_the_script_is_strict_bash():
  src = SCRIPT.read_text()
  assert src.startswith("#!/usr/bin/env bash\n") and "\nset -euo pipefail\n" in src and 'PY=python3' in src
  assert subprocess.run(["bash", "-n", str(SCRIPT)]).returncode == 0
