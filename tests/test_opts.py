"""Every action the optimizer or BEAM can take must leave results unchanged. For a set of kernels on odd
shapes (primes, 1, sizes that no tile divides), apply every single action and a seeded sample of 2- and
3-action sequences, run each on the device, and compare with numpy. Two of the kernels hold two reduces over the same
loops (what DONT_GROUP_REDUCES=1 builds), one of them over a padded input."""
import random
import numpy as np
import pytest
from lazynb import Tensor, Device
from lazynb.codegen import get_program
from lazynb.codegen.kernel import Kernel, KernelOptError, all_opt_candidates, hand_coded_optimizations
from lazynb.engine.search import neighbours
from lazynb.engine.realize import CompiledRunner
from lazynb.engine.schedule import create_schedule
from lazynb.helpers import Context
from lazynb.uop.ops import Ops

rng = np.random.default_rng(0)
def arr(*shape): return rng.standard_normal(shape).astype(np.float32)

def cases():
  a, b, x, w = arr(7, 13), arr(13, 5), arr(2, 3, 9, 11), arr(4, 3, 3, 2)
  v, one, big, odd = arr(3, 1, 17), arr(5, 1), arr(31, 6), arr(31, 6)
  num, den = rng.integers(-50, 50, (31, 6)).astype(np.int32), rng.integers(1, 7, (31, 6)).astype(np.int32)
  two = {"DONT_GROUP_REDUCES": 1}  # two reduces in one kernel
  return [
    ("matmul_7x13x5", lambda: Tensor(a) @ Tensor(b), lambda: a @ b),
    ("sum_axis0", lambda: Tensor(big).sum(axis=0), lambda: big.sum(0)),
    ("max_axis1", lambda: Tensor(big).max(axis=1), lambda: big.max(1)),
    ("elementwise_chain", lambda: (Tensor(v) * 2 + 1).relu(), lambda: np.maximum(v * 2 + 1, 0)),
    ("broadcast_sum_ones", lambda: (Tensor(one) + Tensor(v)).sum(axis=2), lambda: (one + v).sum(2)),
    ("conv_3x2_stride", lambda: Tensor(x).conv2d(Tensor(w), stride=(2, 1), padding=1),
     lambda: _conv_ref(x, w, (2, 1), 1)),
    ("pad_then_sum", lambda: Tensor(big).pad(((1, 2), (0, 3))).exp().sum(axis=1), lambda: np.exp(np.pad(big, ((1, 2), (0, 3)))).sum(1)),
    ("two_reduces_sum_max", lambda: Tensor(big).sum(axis=0) * Tensor(odd).max(axis=0), lambda: big.sum(0) * odd.max(0), two),
    ("two_reduces_padded", lambda: Tensor(big).pad(((1, 2), (0, 3))).exp().sum(axis=1) - Tensor(odd).pad(((1, 2), (0, 3))).max(axis=1),
     lambda: np.exp(np.pad(big, ((1, 2), (0, 3)))).sum(1) - np.pad(odd, ((1, 2), (0, 3))).max(1), two),
    ("two_reduces_int_div", lambda: Tensor(num).max(axis=0) + (Tensor(num) // Tensor(den)).sum(axis=0),  # (a padded lane divides by 1)
     lambda: num.max(0) + np.floor_divide(num, den).sum(0), two),
  ]

def _conv_ref(x, w, stride, pad):
  xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
  kh, kw = w.shape[2:]
  oh, ow = (xp.shape[2] - kh) // stride[0] + 1, (xp.shape[3] - kw) // stride[1] + 1
  out = np.zeros((x.shape[0], w.shape[0], oh, ow), np.float32)
  for i in range(oh):
    for j in range(ow):
      out[:, :, i, j] = np.einsum("bchw,ochw->bo", xp[:, :, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw], w)
  return out

def opt_sequences(k: Kernel, n_random: int, seed: int):
  """All single actions from the plain kernel and from the heuristic's, plus random longer walks."""
  seqs = {tuple(), tuple(hand_coded_optimizations(k.copy()))}
  for base in list(seqs):
    kb = Kernel(k.ast, k.renderer)
    for o in base: kb.apply_opt(o)
    for nk in neighbours(kb): seqs.add(tuple(nk.applied_opts))
  r = random.Random(seed)
  for _ in range(n_random):
    kk = k.copy()
    for _ in range(r.randint(2, 3)):
      cands = all_opt_candidates(kk)
      if not cands: break
      try: kk.apply_opt(r.choice(cands))
      except KernelOptError: pass
    seqs.add(tuple(kk.applied_opts))
  return sorted(seqs, key=repr)

def check(device: str, name, build, ref, n_random: int, settings: dict | None = None):
  out = build()
  with Context(**(settings or {})): items, _ = create_schedule([out.to(device).uop if device != Device.DEFAULT else out.uop])
  if settings: assert sum(u.op is Ops.REDUCE_AXIS for u in items[-1].ast.toposort()) == 2, "the case is two reduces in one kernel"
  want = ref()
  # run the items before the last one normally (copies, earlier kernels), then every variant of the last
  from lazynb.engine.realize import exec_item
  for si in items[:-1]: exec_item(si)
  si = items[-1]
  assert si.kind == "kernel"
  for b in si.bufs: b.allocate()
  k = Kernel(si.ast, Device[si.bufs[0].device].renderer)
  tried = 0
  for opts in opt_sequences(k, n_random, seed=hash(name) % 1000):
    prg = get_program(si.ast, k.renderer, list(opts))
    si.bufs[0].copyin(memoryview(np.full(si.bufs[0].size, 12345, dtype=si.bufs[0].dtype.np).view(np.uint8)))
    CompiledRunner(prg)(list(si.bufs))
    got = si.bufs[0].numpy()[:want.size].reshape(want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"{name} with opts {list(opts)}")
    tried += 1
  return tried

@pytest.mark.parametrize("case", cases(), ids=[c[0] for c in cases()])
def test_every_opt_keeps_results_cpu(case):
  assert check("CPU", *case[:3], n_random=12, settings=case[3] if len(case) > 3 else None) >= 5

@pytest.mark.parametrize("case", cases(), ids=[c[0] for c in cases()])
def test_every_opt_keeps_results_llvm(case):
  """The same kernels with every opt sequence, written as LLVM IR (the LLVM device)."""
  old = Device.DEFAULT
  Device.DEFAULT = "LLVM"
  try: assert check("LLVM", *case[:3], n_random=8, settings=case[3] if len(case) > 3 else None) >= 5
  finally: Device.DEFAULT = old

@pytest.mark.slow
@pytest.mark.parametrize("case", cases()[:3] + cases()[-1:], ids=[c[0] for c in cases()[:3] + cases()[-1:]])
def test_every_opt_keeps_results_cl(case):
  ok, why = Device.available("CL")
  if not ok: pytest.skip(f"CL not available: {why}")
  old = Device.DEFAULT
  Device.DEFAULT = "CL"
  try: assert check("CL", *case[:3], n_random=8, settings=case[3] if len(case) > 3 else None) >= 5
  finally: Device.DEFAULT = old

@pytest.mark.parametrize("simd,want_tile", [((16, 32), (8, 32)), ((8, 16), (4, 16)), ((4, 16), (4, 8))])
def test_heuristic_register_tile_fits_the_vector_registers(simd, want_tile):
  """The matmul tile is two vectors wide along the output row and as tall as
  keeps its accumulators within half the vector registers (8 rows at most); the kernel still computes the right product."""
  from lazynb.codegen.kernel import AxisType
  a, b = arr(64, 48), arr(48, 96)
  (si,) = [s for s in create_schedule([(Tensor(a) @ Tensor(b)).uop])[0] if s.kind == "kernel"]
  r = Device["CPU"].renderer
  old = r.simd_floats, r.simd_regs
  r.simd_floats, r.simd_regs = simd
  try:
    k = Kernel(si.ast, r)
    hand_coded_optimizations(k)
    prg = get_program(si.ast, r, list(k.applied_opts))
  finally: r.simd_floats, r.simd_regs = old
  ups = [(k.full_shape[i], k.sts[0].real_strides()[i]) for i in k.axes_of(AxisType.UPCAST)]
  rows = [s for s, st in ups if st != 0 and st % 96 == 0]
  cols = [s for s, st in ups if st is not None and 0 < st < 96]
  assert (int(np.prod(rows)), int(np.prod(cols))) == want_tile, (k.applied_opts, ups)
  assert int(np.prod(rows)) * int(np.prod(cols)) // simd[0] <= simd[1] // 2
  for s in si.bufs: s.allocate()
  for s, x in zip(si.bufs[1:], (a, b)): s.copyin(memoryview(np.ascontiguousarray(x).view(np.uint8).reshape(-1)))
  CompiledRunner(prg)(list(si.bufs))
  np.testing.assert_allclose(si.bufs[0].numpy().reshape(64, 96), a @ b, rtol=1e-4, atol=1e-4)
