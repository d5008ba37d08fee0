"""The OpenCL and CUDA backends, device selection and copies between devices.

CUDA has no GPU here: the tests render and NVRTC-compile kernels (elementwise, reduce, GROUP reduce, tiled
matmul) and read the PTX; running says clearly that there is no GPU. CL runs for real on PoCL."""
import os, subprocess, sys
import numpy as np
import pytest
from lazynb import Tensor, Device
from lazynb.codegen import get_program, Opt, OptOps
from lazynb.engine.schedule import create_schedule

def _kernel_ast(t: Tensor):
  items, _ = create_schedule([t.uop])
  return [si for si in items if si.kind == "kernel"][-1].ast

# ---------------------------------------------------------------- CUDA, compile-only

@pytest.fixture(scope="module")
def cuda():
  pytest.importorskip("cuda.bindings.nvrtc", reason="NVRTC not installed: pip install cuda-bindings nvidia-cuda-nvrtc")
  return Device["CUDA"]

def _ptx(dev, ast, opts=None):
  prg = get_program(ast, dev.renderer, opts)
  return prg, dev.compiler.compile(prg.src).decode()

def test_cuda_elementwise_renders_and_compiles(cuda):
  x, y = Tensor.empty(64, 64, device="CUDA"), Tensor.empty(64, 64, device="CUDA")
  prg, ptx = _ptx(cuda, _kernel_ast((x * 2 + y).relu()))
  assert prg.src.startswith('extern "C" __global__ void') and "blockIdx.x" in prg.src
  assert f".entry {prg.name}(" in ptx and ".version" in ptx

def test_cuda_reduce(cuda):
  x = Tensor.empty(32, 100, device="CUDA")
  prg, ptx = _ptx(cuda, _kernel_ast(x.sum(axis=1)))
  assert prg.name.startswith("r_") and "for (int ridx0" in prg.src and f".entry {prg.name}(" in ptx

def test_cuda_group_reduce_uses_shared_memory(cuda):
  x = Tensor.empty(8, 256, device="CUDA")
  ast = _kernel_ast(x.sum(axis=1))
  prg, ptx = _ptx(cuda, ast, [Opt(OptOps.GROUPTOP, 1, 16)])
  assert "__shared__ float temp0[16];" in prg.src and "__syncthreads();" in prg.src and "threadIdx.x" in prg.src
  assert ".shared" in ptx and "bar.sync" in ptx and prg.local_size == (16, 1, 1)

def test_cuda_tiled_matmul(cuda):
  a, b = Tensor.empty(64, 64, device="CUDA"), Tensor.empty(64, 64, device="CUDA")
  prg, ptx = _ptx(cuda, _kernel_ast(a @ b), [Opt(OptOps.LOCAL, 0, 8), Opt(OptOps.LOCAL, 1, 8), Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.UPCAST, 1, 2)])
  assert "threadIdx.x" in prg.src and "threadIdx.y" in prg.src and prg.local_size[:2] == (8, 8)
  assert f".entry {prg.name}(" in ptx and ("fma.rn.f32" in ptx or "mul.f32" in ptx)

def test_cuda_compile_error_is_clear(cuda):
  from lazynb.device import CompileError
  with pytest.raises(CompileError, match="NVRTC"): cuda.compiler.compile('extern "C" __global__ void k() { this is not cuda; }')

def test_cuda_without_gpu_says_so(cuda):
  ok, why = Device.available("CUDA")
  if ok: pytest.skip("a GPU is present")
  assert "GPU" in why
  from lazynb.device import DeviceUnavailable
  with pytest.raises(DeviceUnavailable, match="no GPU"): (Tensor([1.0, 2.0], device="CUDA") + 1).realize()

def test_cuda_compile_only_helper(cuda):
  from lazynb.engine.realize import compile_only
  x = Tensor.empty(16, 16, device="CUDA")
  ks = compile_only(x.softmax())
  assert len(ks) >= 2 and all(f".entry {k['name']}(" in k["ptx"] for k in ks)

# ---------------------------------------------------------------- CL on PoCL

@pytest.fixture(scope="module")
def cl():
  ok, why = Device.available("CL")
  if not ok: pytest.skip(f"CL not available: {why}")
  return Device["CL"]

def test_cl_ops_match_numpy(cl):
  rng = np.random.default_rng(0)
  a, b = rng.standard_normal((33, 17)).astype(np.float32), rng.standard_normal((17, 9)).astype(np.float32)
  ta, tb = Tensor(a, device="CL"), Tensor(b, device="CL")
  np.testing.assert_allclose((ta @ tb).numpy(), a @ b, rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(ta.softmax().numpy(), np.exp(a) / np.exp(a).sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(ta.max(axis=0).numpy(), a.max(0))

def test_cl_group_and_local_run_correctly(cl):
  from lazynb.engine.realize import CompiledRunner, exec_item
  a = np.random.default_rng(1).standard_normal((8, 512)).astype(np.float32)
  items, _ = create_schedule([Tensor(a, device="CL").sum(axis=1).uop])
  for si in items[:-1]: exec_item(si)
  si = items[-1]
  for b in si.bufs: b.allocate()
  for opts in ([Opt(OptOps.GROUPTOP, 1, 32)], [Opt(OptOps.LOCAL, 0, 4), Opt(OptOps.GROUP, 2, 16), Opt(OptOps.UNROLL, 3, 4)]):
    prg = get_program(si.ast, cl.renderer, opts)
    assert "barrier(CLK_LOCAL_MEM_FENCE);" in prg.src and "__local float" in prg.src
    CompiledRunner(prg)(list(si.bufs))
    np.testing.assert_allclose(si.bufs[0].numpy(), a.sum(1), rtol=1e-4, atol=1e-4)

# ---------------------------------------------------------------- work-item ids past three global axes

def _launch_of(src: str, prg, call: str) -> dict[str, tuple[int, int]]:
  """Each work-item id the kernel reads: name -> (launch dimension, the axis size its comment gives)."""
  import re
  out = {m[0]: (int(m[1]) if m[1].isdigit() else "xyz".index(m[1]), int(m[2])) for m in re.findall(rf"int (\w+) = {call}; /\* (\d+) \*/", src)}
  return out

# permutations that keep every axis apart (no two neighbours stay neighbours in order, so no axes merge): 2 to 6 global axes
SPREAD = [(2, 3), (2, 3, 4), (2, 3, 4, 5), (2, 3, 2, 4, 3), (2, 3, 2, 2, 3, 2)]
def _spread(n: int) -> tuple[int, ...]: return {2: (1, 0), 3: (2, 1, 0), 4: (1, 3, 0, 2), 5: (1, 3, 0, 4, 2), 6: (1, 3, 5, 0, 2, 4)}[n]

@pytest.mark.parametrize("shape", SPREAD)
def test_workitem_ids_match_the_launch_sizes(shape):
  """A kernel with more than three global axes loops over the outer ones and gives the inner three to work-item dimensions
  0..2. The renderer numbered them by the axis (gidx3 read get_group_id(3), always 0 in OpenCL, while dimension 0 was
  launched with gidx1's size): the course CNN's (8, 8, 24, 24) conv wrote far past its buffer on CL (heap corruption)."""
  from lazynb.renderer.cstyle import OpenCLRenderer, CUDARenderer
  from lazynb.codegen.kernel import Kernel, AxisType
  x = Tensor.empty(*shape)
  moved = x.permute(_spread(len(shape)))
  for ast in (_kernel_ast(moved * 2), _kernel_ast((moved.unsqueeze(-1) * Tensor.empty(3)).sum(-1))):
    for r, grp, loc in ((OpenCLRenderer(), r"get_group_id\((\d)\)", r"get_local_id\((\d)\)"), (CUDARenderer(), r"blockIdx\.([xyz])", r"threadIdx\.([xyz])")):
      k = Kernel(ast, r)
      even = next(a for a, n in enumerate(k.full_shape) if n % 2 == 0 and k.axis_types[a] is AxisType.GLOBAL)
      for opts in ([], [Opt(OptOps.LOCAL, even, 2)], None):  # none, a local axis, the heuristic's
        prg = get_program(ast, r, opts)
        assert opts or len(prg.full_shape) >= len(shape), f"the axes merged: {prg.full_shape}"
        for call, sizes in ((grp, prg.global_size), (loc, prg.local_size)):
          ids = _launch_of(prg.src, prg, call)
          assert sorted(d for d, _ in ids.values()) == list(range(len(ids))), f"{prg.src}\nwork-item dimensions are not 0..{len(ids) - 1}"
          for name, (d, size) in ids.items(): assert sizes[d] == size, f"{name} reads dimension {d}, launched with {sizes[d]}, its axis has {size}"

def test_kernels_with_four_and_five_global_axes_run_right_on_cl(cl):
  from lazynb.helpers import Context
  rng = np.random.default_rng(4)
  w, img = rng.standard_normal((4, 1, 3, 3)).astype(np.float32), rng.standard_normal((2, 1, 9, 10)).astype(np.float32)
  for shape in SPREAD[2:]:
    a = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose((Tensor(a, device="CL").permute(_spread(len(shape))) * 2).numpy(), a.transpose(_spread(len(shape))) * 2)
  want = np.zeros((2, 4, 7, 8), np.float32)
  for i in range(7):
    for j in range(8): want[:, :, i, j] = np.einsum("bchw,ochw->bo", img[:, :, i:i + 3, j:j + 3], w)
  for noopt in (1, 0):  # (2, 4, 7, 8): four global axes and a reduce (the heuristic upcasts some away)
    with Context(NOOPT=noopt): got = Tensor(img, device="CL").conv2d(Tensor(w, device="CL")).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)

def test_at_most_three_work_group_axes():
  from lazynb.codegen.kernel import Kernel, KernelOptError, AxisType
  from lazynb.renderer.cstyle import OpenCLRenderer
  k = Kernel(_kernel_ast(Tensor.empty(2, 2, 2, 2, 3).sum(-1) + 0), OpenCLRenderer())
  for _ in range(3): k.apply_opt(Opt(OptOps.LOCAL, 0, 2))  # the first global axis each time (a local one moves after the globals)
  assert k.axis_types.count(AxisType.LOCAL) == 3
  with pytest.raises(KernelOptError, match="at most 3 axes"): k.apply_opt(Opt(OptOps.LOCAL, 0, 2))

def test_copies_between_devices(cl):
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  t = Tensor(x)                       # CPU
  u = (t.to("CL") * 2).to("PYTHON") + 1
  assert u.device == "PYTHON"
  np.testing.assert_allclose(u.numpy(), x * 2 + 1)
  assert Tensor(x, device="GPU").device == "CL" and Tensor(x, device="opencl").device == "CL"

@pytest.mark.parametrize("env,want", [({"CL": "1"}, "CL"), ({"DEVICE": "PYTHON"}, "PYTHON"), ({"CLANG": "1"}, "CPU"), ({"CUDA": "1"}, "CUDA")])
def test_device_selected_by_environment(env, want):
  code = "from lazynb import Device; print(Device.DEFAULT)"
  e = {k: v for k, v in os.environ.items() if k not in ("CL", "CPU", "CLANG", "PYTHON", "DEVICE", "CUDA", "GPU", "OPENCL", "LLVM")}
  out = subprocess.run([sys.executable, "-c", code], env={**e, **env}, capture_output=True, text=True, check=True).stdout.strip()
  assert out == want

def test_unknown_device_is_a_clear_error():
  with pytest.raises(ValueError, match="unknown device"): Tensor([1.0], device="TPU")
