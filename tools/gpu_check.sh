#!/usr/bin/env bash
# Where a GPU exists, run lazynb's op, dtype, conv and TinyJit suites and one course-CNN training step on it, and print a
# one-line summary: CUDA=1 when an NVIDIA GPU and driver are there (nvidia-smi lists one, or the CUDA driver answers), and
# CL=1 when an OpenCL platform offers a GPU. Without a GPU it prints "gpu_check: no GPU ..." and exits 0.
#
#   bash tools/gpu_check.sh [pytest arguments, e.g. -x or -k conv]
#
# It uses the python3 on PATH (activate the environment lazynb's test extras are installed in first; CUDA also needs
# pip install cuda-bindings nvidia-cuda-nvrtc) and this checkout's lazynb. Exit status: 0 when every pass passed (or
# there is no GPU), 1 otherwise. GPU_CHECK_DEVICES="CL" (or "CUDA CL") runs those passes whatever is detected: on a
# machine without a GPU, CL then runs on PoCL's CPU OpenCL (a rehearsal of the script, not a GPU check). GPU_CHECK_CNN
# passes arguments to tools/gpu_cnn_step.py (e.g. "--batch 8 --width 8").
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
PY=python3
command -v "$PY" >/dev/null 2>&1 || { echo "gpu_check: python3 is not on PATH" >&2; exit 1; }
SUITES="tests/test_ops.py tests/test_dtypes.py tests/test_dtypes_more.py tests/test_conv_grad.py tests/test_jit.py tests/test_jit_replay.py"
# the few tests that read the CPU device's C source text (as for the DEVICE=LLVM pass in .ci/run)
SKIP="not (loop_bound_of_2_31 or no_window_buffer or int_argument or shadow_kernel_names)"

# ---------------------------------------------------------------- which GPUs are there
cuda_why="" cl_why=""
detect_cuda() {
  local smi=""
  if command -v nvidia-smi >/dev/null 2>&1; then smi="$(nvidia-smi -L 2>/dev/null | grep -m1 '^GPU ' || true)"; fi
  local drv
  drv="$("$PY" -c 'from lazynb.runtime.ops_cuda import driver_status; d, why = driver_status(); print("ok" if d else why)' 2>&1 | tail -n 1 || true)"
  if [ "$drv" = "ok" ] || [ -n "$smi" ]; then return 0; fi
  cuda_why="CUDA: ${drv:-no answer}"
  command -v nvidia-smi >/dev/null 2>&1 || cuda_why="$cuda_why, no nvidia-smi"
  return 1
}
detect_cl() {
  local out
  out="$("$PY" -c '
import sys
try:
  import pyopencl as cl
  gpus = [d.name for p in cl.get_platforms() for d in p.get_devices() if d.type & cl.device_type.GPU]
except Exception as e: print(f"no OpenCL ({type(e).__name__})"); sys.exit()
print("ok " + gpus[0] if gpus else "no OpenCL GPU device")' 2>&1 | tail -n 1 || true)"
  case "$out" in "ok "*) return 0;; esac
  cl_why="OpenCL: ${out:-no answer}"
  return 1
}

devices="${GPU_CHECK_DEVICES:-}"
if [ -z "$devices" ]; then
  if detect_cuda; then devices="CUDA"; fi
  if detect_cl; then devices="$devices CL"; fi
fi
if [ -z "${devices// /}" ]; then
  echo "gpu_check: no GPU ($cuda_why; $cl_why): nothing to run"
  exit 0
fi

# ---------------------------------------------------------------- one pass per device
summary="" failed=0
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for dev in $devices; do
  echo "=== gpu_check: $dev=1"
  # a first kernel, so that a device lazynb cannot drive (no bindings, no NVRTC) is one clear line, not a thousand failures
  if ! smoke="$(env -u DEVICE "$dev=1" "$PY" -c '
from lazynb import Tensor, Device
print(Device.DEFAULT, (Tensor([1.0, 2.0, 3.0]) * 2 + 1).tolist())' 2>&1)" || ! grep -q "^$dev \[3.0, 5.0, 7.0\]" <<<"$smoke"; then
    echo "$smoke" | tail -n 5
    summary="$summary | $dev: cannot run a kernel ($(echo "$smoke" | tail -n 1 | sed 's/^[a-z_.]*\.\([A-Za-z]*Error\|DeviceUnavailable\): /\1: /' | cut -c1-300))"
    failed=1
    continue
  fi
  set +e
  env -u DEVICE "$dev=1" "$PY" -m pytest -p no:cacheprovider -rfE $SUITES -k "$SKIP" "$@" 2>&1 | tee "$log"
  suites_rc=${PIPESTATUS[0]}
  step="$(env -u DEVICE "$dev=1" "$PY" tools/gpu_cnn_step.py "$dev" ${GPU_CHECK_CNN:-} 2>&1)"
  step_rc=$?
  set -e
  echo "$step"
  counts="$(grep -E '(passed|failed|errors?|skipped|deselected).* in [0-9.]+s' "$log" | tail -n 1 | grep -Eo '[0-9]+ (passed|failed|errors?|skipped)' | paste -sd, - | sed 's/,/, /g' || true)"
  [ "$suites_rc" = 0 ] || failed=1
  [ "$step_rc" = 0 ] || failed=1
  summary="$summary | $dev: suites ${counts:-no result} (exit $suites_rc); $(echo "$step" | tail -n 1)"
done
echo "gpu_check: $([ "$failed" = 0 ] && echo PASS || echo FAIL)${GPU_CHECK_DEVICES:+ (devices forced: $GPU_CHECK_DEVICES)}$summary"
exit "$failed"
