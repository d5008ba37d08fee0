"""Index arithmetic is exact while the compiler rewrites it, and rendered in 64 bits when a kernel needs it.

A kernel whose index math stays within 32 bits is written with `int`; one whose intermediate values can leave
that range (big stacked views, huge iteration spaces) is written with a 64-bit type, so nothing wraps around.
"""
import ctypes
import numpy as np
import pytest
from lazynb import Tensor, Device
from lazynb.dtype import dtypes
from lazynb.uop.ops import UOp, Ops
from lazynb.uop.symbolic import symbolic
from lazynb.uop.ops import graph_rewrite

def _uops(coeff: int, divisor: int, n: int = 4):
  """out[i] = float((i * coeff) // divisor) for i < n, as the linearizer would emit it."""
  out = UOp(Ops.DEFINE_GLOBAL, dtypes.float.ptr(), (), 0)
  r = UOp(Ops.RANGE, dtypes.index, (), (0, n, "gidx0"))
  c, d = UOp.const(dtypes.index, coeff), UOp.const(dtypes.index, divisor)
  prod_ = UOp(Ops.MUL, dtypes.index, (r, c))
  q = UOp(Ops.IDIV, dtypes.index, (prod_, d))
  val = UOp(Ops.CAST, dtypes.float, (q,))
  idx = UOp(Ops.INDEX, dtypes.float.ptr(), (out, r))
  st = UOp(Ops.STORE, dtypes.void, (idx, val))
  return [out, r, c, d, prod_, q, val, idx, st, UOp(Ops.ENDRANGE, dtypes.void, (r,))]

def _run_cpu(src: str, name: str, n: int) -> np.ndarray:
  from lazynb.runtime.ops_cpu import load_library, kernel_function
  lib = load_library(Device["CPU"].compiler.compile(src))
  out = np.zeros(n, np.float32)
  kernel_function(lib, name)(ctypes.c_void_p(out.ctypes.data))
  return out

def test_small_indices_render_as_int():
  src = Device["CPU"].renderer.render("k", _uops(1000, 7))
  assert "long long" not in src and "for (int gidx0" in src
  np.testing.assert_array_equal(_run_cpu(src, "k", 4), [(i * 1000) // 7 for i in range(4)])

def test_wide_intermediates_render_in_64_bits():
  """i * 1e9 passes 2**31 for i >= 3: in 32 bits out[3] would come out negative."""
  coeff, div = 1_000_000_000, 999_999_937
  src = Device["CPU"].renderer.render("k", _uops(coeff, div))
  assert "for (long long gidx0" in src
  np.testing.assert_array_equal(_run_cpu(src, "k", 4), [(i * coeff) // div for i in range(4)])

def test_renders_on_threads_keep_their_own_index_type():
  """BEAM renders candidates on several threads with one renderer: what one render decides (the index type, the line
  map) must not leak into another's source. Two kernels, one wide and one not, rendered at once many times."""
  from concurrent.futures import ThreadPoolExecutor
  r = Device["CPU"].renderer
  wide, narrow = _uops(1_000_000_000, 999_999_937, 64), _uops(1000, 7, 64)
  def one(i):
    src = r.render("k", wide if i % 2 else narrow)
    return src, [list(x) for x in r.line_map]
  alone = [one(0), one(1)]  # each rendered on its own
  assert "long long" in alone[1][0] and "long long" not in alone[0][0]
  with ThreadPoolExecutor(8) as pool: results = list(pool.map(one, range(400)))
  for i, got in enumerate(results): assert got == alone[i % 2], i  # the same source and this thread's own line map

def test_index_bounds_are_not_clamped_to_32_bits():
  """The simplifier knows i*1e9 + j < 1e9 * 4 exactly, so the division folds (it would not if bounds wrapped)."""
  i, j = UOp(Ops.RANGE, dtypes.index, (), (0, 4, "i")), UOp(Ops.RANGE, dtypes.index, (), (1, 1000, "j"))
  e = (i * 1_000_000_000 + j) // 1_000_000_000
  assert e.vmax == 3 and graph_rewrite(e, symbolic) is i

@pytest.mark.parametrize("backend", ["CL", "CUDA"])
def test_gpu_renderers_use_their_64_bit_type(backend):
  from lazynb.renderer.cstyle import OpenCLRenderer, CUDARenderer
  r = OpenCLRenderer() if backend == "CL" else CUDARenderer()
  uops = _uops(1_000_000_000, 999_999_937)
  # a GPU kernel's global ids are work-item ids, not loops
  g = UOp(Ops.SPECIAL, dtypes.index, (), ("gidx0", 4))
  sub = {uops[1]: g}
  def rebuild(u): return sub.setdefault(u, u.replace(src=tuple(rebuild(s) for s in u.src)))
  body = [rebuild(u) for u in uops if u.op is not Ops.ENDRANGE and u is not uops[1]]
  src = r.render("k", [body[0], g] + body[1:])
  want = "long gidx0" if backend == "CL" else "long long gidx0"
  assert want in src, src

def test_conv_with_stacked_views_over_2_31_is_right():
  """The MNIST CNN's second conv at batch 512: its input window once took two stacked views whose flat index
  went past 2**31 (the kernel wrapped around and crashed). The windows are now one view without a mask (conv2d lays
  them along whole input rows, p + 24*ky + kx, over a copy of the input with a spare zero row: 25 rows of 24), and the
  result matches torch."""
  torch = pytest.importorskip("torch")
  x, w = Tensor.rand(512, 32, 24, 24).realize(), Tensor.rand(32, 32, 5, 5).realize()
  out = x.conv2d(w)
  ast = out.schedule()[-1].ast
  x_view = next(u.src[1].arg for u in ast.toposort() if u.op is Ops.LOAD and u.src[1].arg.shape[-1] == 5
                and 0 not in u.src[1].arg.views[-1].strides[:1])
  assert 512 * 32 * 20 * 20 * 32 * 25 > 2**31 and x_view.views[-1].strides[-4:] == (1, 600, 24, 1)
  assert len(x_view.views) == 1 and x_view.views[0].strides[0] == 32 * 25 * 24 and x_view.views[0].mask is None
  want = torch.nn.functional.conv2d(torch.from_numpy(x.numpy()), torch.from_numpy(w.numpy())).numpy()
  np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-3)

@pytest.mark.parametrize("device", ["CPU", "LLVM"])
def test_int_arguments_of_a_wide_kernel_are_widened(device):
  """A variable and a thread id arrive as 32-bit ints; in a wide kernel each is widened where it is read
  (renderer/prerender.py), so n*1e9 is computed in 64 bits (in C an int times an int literal would wrap around; in
  LLVM IR an i32 would meet i64 math)."""
  from lazynb.runtime.ops_cpu import load_library, kernel_function
  if device == "LLVM" and not Device.available("LLVM")[0]: pytest.skip("llvmlite is not installed")
  out = UOp(Ops.DEFINE_GLOBAL, dtypes.float.ptr(), (), 0)
  n, t = UOp(Ops.DEFINE_VAR, dtypes.index, (), ("n", 1, 10)), UOp(Ops.SPECIAL, dtypes.index, (), ("tidx0", 4))
  c, d = UOp.const(dtypes.index, 1_000_000_000), UOp.const(dtypes.index, 999_999_937)
  r = UOp(Ops.RANGE, dtypes.index, (), (0, 4, "ridx0"))
  nc, tc = UOp(Ops.MUL, dtypes.index, (n, c)), UOp(Ops.MUL, dtypes.index, (t, c))
  q = UOp(Ops.IDIV, dtypes.index, (UOp(Ops.ADD, dtypes.index, (nc, tc)), d))
  qr = UOp(Ops.ADD, dtypes.index, (q, r))
  idx = UOp(Ops.INDEX, dtypes.float.ptr(), (out, r))
  st = UOp(Ops.STORE, dtypes.void, (idx, val := UOp(Ops.CAST, dtypes.float, (qr,))))
  uops = [out, n, t, c, d, r, nc, tc, q.src[0], q, qr, val, idx, st, UOp(Ops.ENDRANGE, dtypes.void, (r,))]
  src = Device[device].renderer.render("k", uops)
  got = np.zeros(4, np.float32)
  kernel_function(load_library(Device[device].compiler.compile(src)), "k")(ctypes.c_void_p(got.ctypes.data), 3, 3)
  np.testing.assert_array_equal(got, [(3 + 3) * 1_000_000_000 // 999_999_937 + i for i in range(4)])

def test_full_rewrite_shows_the_index_type_the_kernel_is_rendered_with():
  """codegen.full_rewrite (tinygrad 0.10's name) gives the linear program with index math in int32 or int64: the type
  the rendered source uses, decided by the largest index (a symbolic size counts with its largest value)."""
  from lazynb.codegen import full_rewrite, get_program
  def store_index_dtype(t: Tensor):
    ast = t.schedule()[-1].ast
    uops = full_rewrite(ast, Device["CPU"].renderer)
    assert not any(u.dtype is dtypes.index for u in uops)
    ity = next(u for u in uops if u.op is Ops.STORE).src[0].src[1].dtype
    assert ("long long" in get_program(ast, Device["CPU"].renderer, []).src) == (ity is dtypes.int64)
    return ity
  big = Tensor.empty(2048, 2048, 1).expand(-1, -1, 2048).contiguous()  # 2**33 elements: never allocated here
  assert store_index_dtype(big) is dtypes.int64
  assert store_index_dtype(Tensor.empty(64, 64, 1).expand(-1, -1, 64).contiguous()) is dtypes.int32
  v = UOp.variable("dim3", 0, 2048).bind(32)
  assert store_index_dtype(Tensor.empty(2048, 2048, 1).expand(-1, -1, v).contiguous()) is dtypes.int64
  v = UOp.variable("dim3", 0, 64).bind(32)
  assert store_index_dtype(Tensor.empty(2048, 2048, 1).expand(-1, -1, v).contiguous()) is dtypes.int32

@pytest.mark.parametrize("device", ["CPU", "LLVM"])
def test_full_rewrite_lists_render_and_compile(device):
  """tinygrad 0.10's renderer.render(uops) on full_rewrite's list (its index math typed int32 / int64): valid source."""
  from lazynb.codegen import full_rewrite
  r = Device[device].renderer
  for t in (Tensor.empty(2048, 2048, 1).expand(-1, -1, 2048).contiguous(), Tensor.arange(65535)):
    src = r.render(full_rewrite(t.schedule()[-1].ast, r))
    assert src.count("long long" if device == "CPU" else "i64") > 0 if t.shape[0] == 2048 else "i64" not in src and "long long" not in src
    Device[device].compiler.compile(src)
