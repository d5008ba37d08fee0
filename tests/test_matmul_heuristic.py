"""The default heuristic on matmuls: which opts it picks for a 1024 matmul at each vector width, that the kernel it
makes sums into its accumulators with one multiply-add per product, and that its kernels give numpy's answer
on shapes no tile divides (odd, prime, batched, transposed, int, half)."""
import re
import numpy as np
import pytest
from lazynb import Tensor, Device, dtypes
from lazynb.codegen import get_program
from lazynb.codegen.kernel import Kernel, Opt, OptOps, AxisType, hand_coded_optimizations
from lazynb.engine.schedule import create_schedule

def matmul_kernel(m: int, k: int, n: int, device: str = "CPU"):
  a, b = Tensor.empty(m, k, device=device), Tensor.empty(k, n, device=device)
  (si,) = [s for s in create_schedule([(a @ b).uop])[0] if s.kind == "kernel"]
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
  # AVX-512: 8 rows x 16 floats (one zmm, one cache line per row: 8 accumulators of 32 registers)
  ((16, 32), [Opt(OptOps.UPCAST, 1, 16), Opt(OptOps.UPCAST, 0, 8), Opt(OptOps.UNROLL, 2, 4), Opt(OptOps.THREAD, 0, 2)]),
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
  assert ups.get(1) == r.simd_floats and cols == min(16, 2 * r.simd_floats) and ups.get(1024) in (4, 8), (k.applied_opts, ups)
  assert dtypes.float32 is si.ast.src[0].src[0].dtype.base
