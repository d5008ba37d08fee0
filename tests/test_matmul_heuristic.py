"""The default heuristic on matmuls: which opts it picks for a 1024 matmul at each vector width, that the kernel it
makes sums into its accumulators with one multiply-add per product, and that its kernels give numpy's answer
on shapes no tile divides (odd, prime, batched, transposed, int, half)."""
import re
import numpy as np
import pytest
from lazynb import Tensor, Device, dtypes, GlobalCounters
from lazynb.helpers import Context
from lazynb.codegen import get_program
from lazynb.codegen.kernel import Kernel, Opt, OptOps, AxisType, hand_coded_optimizations
from lazynb.engine.schedule import create_schedule

def matmul_kernel(m: int, k: int, n: int, device: str = "CPU"):
  """The plain matmul kernel (no packing of b: see the packing tests below)."""
  a, b = Tensor.empty(m, k, device=device), Tensor.empty(k, n, device=device)
  with Context(MATMUL_PACK=0): (si,) = [s for s in create_schedule([(a @ b).uop])[0] if s.kind == "kernel"]
  return si

def heuristic_opts(si, renderer, simd=None, threads=None) -> list:
  saved = renderer.simd_floats, renderer.simd_regs, renderer.threads, renderer.has_threads
  try:
    if simd is not None: renderer.simd_floats, renderer.simd_regs = simd
    if threads is not None: renderer.threads, renderer.has_threads = threads, threads > 1
    k = Kernel(si.ast, renderer)
    return hand_coded_optimizations(k)
  finally: renderer.simd_floats, renderer.simd_regs, renderer.threads, renderer.has_threads = saved

@pytest.mark.parametrize("simd,want", [
  # AVX-512: 8 rows x 32 floats (two zmm per row: 16 accumulators of 32 registers)
  ((16, 32), [Opt(OptOps.UPCAST, 1, 16), Opt(OptOps.UPCAST, 1, 2), Opt(OptOps.UPCAST, 0, 8), Opt(OptOps.UNROLL, 2, 4), Opt(OptOps.THREAD, 0, 2)]),
  # AVX2: 4 rows x 16 floats (8 ymm accumulators of 16)
  ((8, 16), [Opt(OptOps.UPCAST, 1, 8), Opt(OptOps.UPCAST, 1, 2), Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.UNROLL, 2, 4), Opt(OptOps.THREAD, 0, 2)]),
  # baseline x86-64 (SSE): 4 rows x 8 floats
  ((4, 16), [Opt(OptOps.UPCAST, 1, 4), Opt(OptOps.UPCAST, 1, 2), Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.UNROLL, 2, 4), Opt(OptOps.THREAD, 0, 2)]),
])
def test_opts_for_a_1024_matmul(simd, want):
  si = matmul_kernel(1024, 1024, 1024)
  assert heuristic_opts(si, Device["CPU"].renderer, simd, threads=2) == want

def test_opencl_matmul_uses_no_work_group():
  """On PoCL (the CPU OpenCL here) work-groups of more than one item ran the matmul 5-10x slower than one item per
  group with a register tile (docs/benchmarks.md), so the heuristic picks no LOCAL axis, and tiles for 8-float vectors."""
  if not Device.available("CL")[0]: pytest.skip("no OpenCL device")
  r = Device["CL"].renderer
  opts = heuristic_opts(matmul_kernel(1024, 1024, 1024, "CL"), r)
  assert not any(o.op in (OptOps.LOCAL, OptOps.GROUP, OptOps.GROUPTOP) for o in opts), opts
  assert (r.simd_floats, r.simd_regs) == (8, 16)
  assert opts == [Opt(OptOps.UPCAST, 1, 8), Opt(OptOps.UPCAST, 1, 2), Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.UNROLL, 2, 4)]

def test_accumulator_update_is_a_multiply_add_chain():
  """acc = ((((acc+a0*b0)+a1*b1)+a2*b2)+a3*b3): the unrolled terms are added to the accumulator one at a time, so the
  compiler makes each product one FMA, and no term is summed apart first."""
  si = matmul_kernel(64, 64, 64)
  src = get_program(si.ast, Device["CPU"].renderer, [Opt(OptOps.UPCAST, 1, 4), Opt(OptOps.UNROLL, 2, 4)]).src
  updates = re.findall(r"^ *(acc\d+) = (.*);", src, re.M)
  assert len(updates) == 4, src
  for acc, expr in updates:
    assert re.fullmatch(rf"\(\(\(\({acc}\+\(val\d+\*val\d+\)\)\+\(val\d+\*val\d+\)\)\+\(val\d+\*val\d+\)\)\+\(val\d+\*val\d+\)\)", expr), expr

rng = np.random.default_rng(7)
def _arr(*shape, dtype=np.float32):
  if np.issubdtype(dtype, np.integer): return rng.integers(-50, 50, shape).astype(dtype)
  return rng.standard_normal(shape).astype(dtype)

@pytest.mark.parametrize("name,make", [
  ("1000x1000", lambda: (_arr(1000, 1000), _arr(1000, 1000))),
  ("129x257@257x65", lambda: (_arr(129, 257), _arr(257, 65))),
  ("1x1024@1024x1024", lambda: (_arr(1, 1024), _arr(1024, 1024))),
  ("512x3@3x512", lambda: (_arr(512, 3), _arr(3, 512))),
  ("batched_5x33x40@5x40x17", lambda: (_arr(5, 33, 40), _arr(5, 40, 17))),
  ("int32_96x64@64x80", lambda: (_arr(96, 64, dtype=np.int32), _arr(64, 80, dtype=np.int32))),
])
def test_heuristic_matmul_matches_numpy(name, make):
  a, b = make()
  got = (Tensor(a) @ Tensor(b)).numpy()
  want = a.astype(np.float64) @ b.astype(np.float64) if a.dtype == np.float32 else a @ b
  if a.dtype == np.float32: np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
  else: np.testing.assert_array_equal(got, want)

@pytest.mark.parametrize("ta,tb", [(True, False), (False, True), (True, True)])
def test_heuristic_matmul_transposed_inputs(ta, tb):
  a, b = _arr(160, 96), _arr(96, 128)
  an, bn = (np.ascontiguousarray(a.T), np.ascontiguousarray(b.T))
  x = Tensor(an).T if ta else Tensor(a)
  y = Tensor(bn).T if tb else Tensor(b)
  np.testing.assert_allclose((x @ y).numpy(), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)

def test_heuristic_matmul_half():
  a, b = _arr(64, 96).astype(np.float16), _arr(96, 48).astype(np.float16)
  got = (Tensor(a) @ Tensor(b)).numpy()
  assert got.dtype == np.float16
  np.testing.assert_allclose(got.astype(np.float32), (a.astype(np.float32) @ b.astype(np.float32)), rtol=2e-2, atol=5e-2)

def test_heuristic_kernel_axes_for_1024():
  """The tile lands on the right axes: rows (stride N in the output) x the contiguous row of the output."""
  si = matmul_kernel(1024, 1024, 1024)
  r = Device["CPU"].renderer
  k = Kernel(si.ast, r)
  hand_coded_optimizations(k)
  ups = {k.sts[0].real_strides()[i]: k.full_shape[i] for i in k.axes_of(AxisType.UPCAST)}
  cols = ups.get(1, 1) * ups.get(r.simd_floats, 1)  # the row's lanes: one vector, or two side by side
  assert ups.get(1) == r.simd_floats and cols == 2 * r.simd_floats and ups.get(1024) in (4, 8), (k.applied_opts, ups)
  assert dtypes.float32 is si.ast.src[0].src[0].dtype.base


# ---- packing: a big right operand is first copied into column panels (Tensor.dot)
def kernels_for(make) -> int:
  GlobalCounters.reset()
  make().realize()
  return GlobalCounters.kernel_count

@pytest.mark.parametrize("name,make", [
  ("100x1024@1024x1024", lambda: (_arr(100, 1024), _arr(1024, 1024))),
  ("batched_3x70x1024@1024x2048", lambda: (_arr(3, 70, 1024), _arr(1024, 2048))),
  ("64x4096@4096x256", lambda: (_arr(64, 4096), _arr(4096, 256))),
  ("float64_65x512@512x1024", lambda: (_arr(65, 512, dtype=np.float64), _arr(512, 1024, dtype=np.float64))),
])
def test_packed_matmul_matches_numpy_and_costs_one_copy_kernel(name, make):
  a, b = make()
  p = Device["CPU"].renderer.matmul_panel
  assert p == 2 * Device["CPU"].renderer.simd_floats
  want = a.astype(np.float64) @ b.astype(np.float64)
  GlobalCounters.reset()
  got = (Tensor(a) @ Tensor(b)).numpy()
  assert GlobalCounters.kernel_count == 2  # the panel copy, then the product
  np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
  with Context(MATMUL_PACK=0): np.testing.assert_allclose((Tensor(a) @ Tensor(b)).numpy(), want, rtol=1e-4, atol=1e-3)

@pytest.mark.slow
def test_packing_only_where_it_pays():
  """Small operands, few rows, a width no panel divides, NOOPT=1 and MATMUL_PACK=0 keep the one-kernel matmul."""
  big = Tensor.empty(1024, 1024)
  assert kernels_for(lambda: Tensor.empty(256, 1024) @ big) == 2
  assert kernels_for(lambda: Tensor.empty(512, 512) @ Tensor.empty(512, 512)) == 1   # 1 MB: the copy costs more than it saves
  assert kernels_for(lambda: Tensor.empty(8, 1024) @ big) == 1                     # a few rows read b once anyway
  assert kernels_for(lambda: Tensor.empty(256, 1024) @ Tensor.empty(1024, 1000)) == 1  # 1000 columns: no 8-, 16- or 32-wide panels
  with Context(NOOPT=1): assert kernels_for(lambda: Tensor.empty(256, 1024) @ big) == 1
  with Context(MATMUL_PACK=0): assert kernels_for(lambda: Tensor.empty(256, 1024) @ big) == 1

def test_packed_operand_is_read_in_order_along_the_sum():
  """In the product's kernel, b's panels are read p values apart along the summed axis (b's own rows are n apart)."""
  a, b = Tensor.empty(256, 1024), Tensor.empty(1024, 2048)
  p = Device["CPU"].renderer.matmul_panel
  packed = [s for s in create_schedule([(a @ b).uop])[0] if s.kind == "kernel"]
  with Context(MATMUL_PACK=0): (plain,) = [s for s in create_schedule([(a @ b).uop])[0] if s.kind == "kernel"]
  def b_stride_along_sum(si):
    k = Kernel(si.ast, Device["CPU"].renderer)
    (r,) = k.axes_of(AxisType.REDUCE)
    return {i: st.real_strides()[r] for i, (st, m) in enumerate(zip(k.sts, k.is_mem)) if m and i > 0}
  assert len(packed) == 2
  assert sorted(b_stride_along_sum(plain).values()) == [1, 2048]
  assert sorted(b_stride_along_sum(packed[1]).values()) == [1, p]

@pytest.mark.slow
def test_packed_matmul_gradients():
  """Gradients flow through the panel copy as through any copy: both operands' gradients as torch computes them."""
  import torch
  a, b, up = _arr(96, 1024), _arr(1024, 1024), _arr(96, 1024)
  ta, tb = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
  GlobalCounters.reset()
  loss = ((ta @ tb).relu() * Tensor(up)).sum()
  loss.backward()
  xa, xb = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (a, b))
  ((xa @ xb).relu() * torch.tensor(up, dtype=torch.float64)).sum().backward()
  np.testing.assert_allclose(loss.numpy(), ((a.astype(np.float64) @ b).clip(0) * up).sum(), rtol=1e-4)
  np.testing.assert_allclose(ta.grad.numpy(), xa.grad.numpy(), rtol=1e-3, atol=1e-3)
  np.testing.assert_allclose(tb.grad.numpy(), xb.grad.numpy(), rtol=1e-3, atol=1e-3)

def test_opencl_on_a_cpu_packs_too():
  """PoCL runs on the CPU, where the walk down a big right operand costs the same: it packs, and gets numpy's answer."""
  if not Device.available("CL")[0]: pytest.skip("no OpenCL device")
  import pyopencl as cl
  on_cpu = bool(Device["CL"].cl_device.type & cl.device_type.CPU)
  assert Device["CL"].renderer.matmul_panel == (16 if on_cpu else 0)
  a, b = _arr(70, 1024), _arr(1024, 1024)
  GlobalCounters.reset()
  got = (Tensor(a, device="CL") @ Tensor(b, device="CL")).numpy()
  assert GlobalCounters.kernel_count == (2 if on_cpu else 1)
  np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)

def test_packing_is_the_devices_rule_in_the_schedule_stage():
  """Tensor.dot writes the same plain graph for every device; the CPU's own rule of the schedule stage packs, and says
  so in the trace (a tensor-graph rewrite). A device without the rule (PYTHON) keeps the one-kernel matmul, and the
  packed and plain products agree with numpy and with each other."""
  from lazynb.trace import capture
  a, b = _arr(96, 1024), _arr(1024, 1024)
  for dev in ("CPU", "PYTHON"):
    t = Tensor.empty(96, 1024, device=dev) @ Tensor.empty(1024, 1024, device=dev)
    assert not any(u.op.name == "CONTIGUOUS" for u in t.uop.toposort()), "the frontend packed: the layout is the device's choice"
    kernels = [s for s in create_schedule([t.uop])[0] if s.kind == "kernel"]
    assert len(kernels) == (2 if dev == "CPU" else 1), dev
  with capture() as tr: got = (Tensor(a) @ Tensor(b)).numpy()
  (rw,) = [r for r in tr.to_json()["rewrites"] if r["name"] == "CPU: pack matmul operands into panels"]
  assert rw["stage"] == "tensor graph" and rw["total_steps"] == 1
  with Context(MATMUL_PACK=0): plain = (Tensor(a) @ Tensor(b)).numpy()
  np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
  np.testing.assert_allclose(got, plain, rtol=1e-5, atol=1e-4)
