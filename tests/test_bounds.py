"""No kernel reads or writes outside its buffers.

The scheduler's side: a kernel's shape is its reduce's only when the root reaches the reduce through elementwise ops
and plain reshapes (chunk's first half, a shrink from offset 0, once passed for a reshape: the store wrote 64 floats
into a 32-float buffer). The devices' side: LAZYNB_CHECK=1 compiles a bounds check into every load and store (CPU
with clang and gcc, object loader and dlopen; LLVM; CL), and the PYTHON device checks every access always; all of
them raise OutOfBoundsError naming the kernel, the buffer, the index and the size. Planted kernels (a load or store
view moved past its buffer) prove each device catches it."""
import numpy as np
import pytest
from lazynb import Tensor, Device, nn
from lazynb.engine import schedule
from lazynb.uop.ops import Ops

def _available(dev: str) -> bool: return Device.available(dev)[0]
DEVICES = ["CPU", "PYTHON", "LLVM"] + (["CL"] if _available("CL") else [])

# ---------------------------------------------------------------- the scheduler: a reduce joins only through reshapes

@pytest.mark.parametrize("device", DEVICES)
def test_chunk_of_a_matmul_with_a_constant_side(device):
  """The issue's reproducer: (zeros @ W.T).chunk(2) -- the first chunk is a shrink from offset 0, contiguous, and was
  taken for a reshape: the matmul's reduce joined the a+b kernel at its own size (64) and stored past the 32-float output."""
  w = np.random.default_rng(0).uniform(-1, 1, (64, 16)).astype(np.float32)
  W = Tensor(w, device=device).realize()
  for x in (np.zeros((1, 16), np.float32), np.ones((1, 16), np.float32)):
    lhs = Tensor.zeros(1, 16, device=device) if not x.any() else Tensor.ones(1, 16, device=device)
    a, b = (lhs @ W.T).chunk(2, dim=1)
    want = x @ w.T
    np.testing.assert_allclose((a + b).numpy(), want[:, :32] + want[:, 32:], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose((a * 2).numpy(), 2 * want[:, :32], rtol=1e-5, atol=1e-6)  # the first half alone

@pytest.mark.parametrize("device", ["CPU", "PYTHON"])
@pytest.mark.parametrize("batch", [1, 3])
def test_lstmcell_first_step_matches_torch(device, batch):
  """nn.LSTMCell's first step (no state: h = zeros, so h @ W_hh.T is a matmul with a constant side, then chunk(4); with
  one row, the first chunk is contiguous)."""
  torch = pytest.importorskip("torch")
  torch.manual_seed(0)
  tm = torch.nn.LSTMCell(3, 5)
  lz = nn.LSTMCell(3, 5)
  for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"): setattr(lz, n, Tensor(getattr(tm, n).detach().numpy().copy(), device=device))
  x = np.random.default_rng(1).standard_normal((batch, 3)).astype(np.float32)
  h, c = lz(Tensor(x, device=device))
  th, tc = tm(torch.tensor(x))
  np.testing.assert_allclose(h.numpy(), th.detach().numpy(), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(c.numpy(), tc.detach().numpy(), rtol=1e-5, atol=1e-6)

def _store_sizes(t: Tensor) -> list[tuple[int, int]]:
  """(elements the store's view covers, elements of the output buffer) for each kernel of t's schedule."""
  out = []
  for si in t.schedule():
    if si.kind != "kernel": continue
    st = si.ast.src[0].src[1].arg
    out.append((int(np.prod(st.shape)), si.bufs[0].size))
  return out

def test_every_store_covers_its_buffer():
  """Movement ops between a reduce and the kernel's root that are not a reshape (shrinks from 0 and elsewhere, pads, flips,
  permutes, expands) give the reduce a kernel of its own; every store covers its output buffer exactly."""
  W = Tensor.rand(8, 6).realize()
  r, r1 = Tensor.ones(2, 6) @ W.T, Tensor.zeros(1, 6) @ W.T  # (2, 8), (1, 8): a shrink of r1 from 0 is contiguous
  for t in (r1[:, :4] + 1, r1[:, :4] + r1[:, 4:], r1.reshape(8)[:3] * 2, r[:, :4] + 1, r[:, 4:] * 2, r.chunk(2, 1)[0] + r.chunk(2, 1)[1], r.pad(((0, 0), (1, 1))) + 1, r.flip(1) + r,
            r.T + 1, r.reshape(16) + 1, r.reshape(4, 4).T[:2] + 1, r.sum(1)[:1] + 1, r.reshape(2, 1, 8).expand(2, 3, 8) + 1):
    for covered, size in _store_sizes(t): assert covered == size

def test_scheduler_refuses_a_kernel_that_does_not_cover_its_root(monkeypatch):
  """If a region rule goes wrong again (here: the old one, any contiguous view taken for a reshape), build() stops with an
  error instead of storing past the buffer."""
  monkeypatch.setattr(schedule, "is_reshape_chain", lambda u: schedule.chain_st(u).contiguous)
  W = Tensor.rand(8, 6).realize()
  with pytest.raises(RuntimeError, match="reduce may join a kernel only through elementwise ops and reshapes"):
    ((Tensor.ones(1, 6) @ W.T)[:, :4] * 2).schedule()  # a shrink from 0 of a (1, 8) row: contiguous

def test_a_reduce_read_through_a_view_is_computed_once():
  """r + r.flip(0): r gets a kernel of its own (it is read flipped); it is not also computed inside the other kernel."""
  x = Tensor.rand(4, 8).realize()
  r = x.sum(1)
  items = (r + r.flip(0)).schedule()
  assert sum(u.op is Ops.REDUCE_AXIS for si in items for u in si.ast.toposort()) == 1
  np.testing.assert_allclose((r + r.flip(0)).numpy(), x.numpy().sum(1) + x.numpy().sum(1)[::-1], rtol=1e-6)
