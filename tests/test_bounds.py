"""No kernel reads or writes outside its buffers.

The scheduler's side: a kernel's shape is its reduce's only when the root reaches the reduce through elementwise ops
and plain reshapes (chunk's first half, a shrink from offset 0, once passed for a reshape: the store wrote 64 floats
into a 32-float buffer). The devices' side: LAZYNB_CHECK=1 compiles a bounds check into every load and store (CPU
with clang and gcc, object loader and dlopen; LLVM; CL), and the PYTHON device checks every access always; all of
them raise OutOfBoundsError naming the kernel, the buffer, the index and the size. Planted kernels (a load or store
view moved past its buffer) prove each device catches it."""
import re
import numpy as np
import pytest
from lazynb import Tensor, Device, dtypes, nn
from lazynb.device import OutOfBoundsError, Buffer
from lazynb.engine import realize, schedule
from lazynb.engine.realize import exec_item, get_runner
from lazynb.helpers import Context
from lazynb.runtime.ops_cpu import CPUDevice
from lazynb.shape.shapetracker import ShapeTracker
from lazynb.shape.view import View
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
  monkeypatch.setattr(schedule, "is_reshape_chain", lambda u: u.st.contiguous)
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

# ---------------------------------------------------------------- LAZYNB_CHECK: devices

@pytest.fixture
def fresh_runners(monkeypatch):
  """An empty kernel cache: a device rebuilt under other knobs compiles its own kernels."""
  monkeypatch.setattr(realize, "method_cache", {})

CPU_CONFIGS = [("clang", "elf"), ("clang", "dlopen"), ("gcc", "elf"), ("gcc", "dlopen")]

def open_cpu(monkeypatch, cc: str, loader: str) -> str:
  monkeypatch.setenv("CC", cc)
  monkeypatch.setenv("LAZYNB_LOADER", loader)
  monkeypatch.setitem(Device._opened, "CPU", CPUDevice("CPU"))
  return "CPU"

def planted(device: str, n: int = 8, shift: int = 4, store: bool = False, shape=None):
  """The kernel of `x + 1` (x: n floats) with its load's view (or its store's) moved by `shift` elements."""
  x = Tensor(np.arange(n, dtype=np.float32), device=device).reshape(shape or (n,)).realize()
  si = (x + 1).schedule()[-1]
  def move(u):
    if u.op is (Ops.STORE if store else Ops.LOAD):
      v = u.src[1].arg.views[-1]
      st = ShapeTracker((View.create(v.shape, v.strides, v.offset + shift, v.mask),))
      return u.replace(src=(u.src[0], u.src[1].replace(arg=st), *u.src[2:]))
    return u.replace(src=tuple(move(s) for s in u.src)) if u.src else u
  si.ast = move(si.ast)
  return si

def run_checked(si):
  with Context(LAZYNB_CHECK=1): exec_item(si)

def expect_oob(si, what: str, buf: int, index: int | None, size: int):
  """The run raises, naming the kernel, the buffer, the index (None: any index past the end) and the size."""
  with pytest.raises(OutOfBoundsError) as e: run_checked(si)
  with Context(LAZYNB_CHECK=1): name = get_runner(si.bufs[0].device, si.ast).p.name
  msg = str(e.value)
  m = re.match(rf"kernel {name}: {what} buffer data{buf} at index (-?\d+), outside its {size} elements", msg)
  assert m, msg
  assert int(m.group(1)) == index if index is not None else int(m.group(1)) >= size, msg

@pytest.mark.parametrize("cfg", CPU_CONFIGS, ids=["-".join(c) for c in CPU_CONFIGS])
def test_check_catches_a_planted_load_and_store_on_cpu(monkeypatch, fresh_runners, cfg):
  dev = open_cpu(monkeypatch, *cfg)
  expect_oob(planted(dev, 8, 4), "load from", 1, 8, 8)
  expect_oob(planted(dev, 8, -3), "load from", 1, -3, 8)  # below the start too
  expect_oob(planted(dev, 8, 2, store=True), "store to", 0, 8, 8)

@pytest.mark.parametrize("device", [d for d in DEVICES if d != "CPU"])
def test_check_catches_a_planted_load_and_store(fresh_runners, device):
  expect_oob(planted(device, 8, 4), "load from", 1, 8, 8)
  expect_oob(planted(device, 8, -3), "load from", 1, -3, 8)
  expect_oob(planted(device, 8, 2, store=True), "store to", 0, 8, 8)

def test_python_device_checks_without_the_flag(fresh_runners):
  """The PYTHON device checks every access always (numpy would read index -1 from the end)."""
  with pytest.raises(OutOfBoundsError, match="load from buffer data1 at index -1, outside its 8 elements"): exec_item(planted("PYTHON", 8, -1))

@pytest.mark.parametrize("cfg", CPU_CONFIGS[::2], ids=["-".join(c) for c in CPU_CONFIGS[::2]])
def test_check_on_a_threaded_kernel(monkeypatch, fresh_runners, cfg):
  """A kernel whose outer axis runs on the thread pool: every thread may fail; one failure is reported, whole."""
  dev = open_cpu(monkeypatch, *cfg)
  si = planted(dev, 512 * 256, 3, shape=(512, 256))
  with Context(LAZYNB_CHECK=1): prg = get_runner(dev, si.ast).p
  assert prg.global_size[0] > 1, "the kernel should run on several threads"
  expect_oob(si, "load from", 1, None, 512 * 256)

@pytest.mark.parametrize("device", DEVICES)
def test_check_passes_gated_loads(fresh_runners, device):
  """Padding is a gated load: with its gate off the index may be anything, and nothing is read or reported."""
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  with Context(LAZYNB_CHECK=1):
    t = Tensor(x, device=device)
    np.testing.assert_array_equal(t.pad(((2, 3), (1, 4))).numpy(), np.pad(x, ((2, 3), (1, 4))))
    np.testing.assert_array_equal((t.pad(((0, 0), (3, 0))).flip(1)[:, 1:] + 1).numpy(), np.pad(x, ((0, 0), (3, 0)))[:, ::-1][:, 1:] + 1)
    np.testing.assert_array_equal(Tensor.cat(t, t[:1] * 2, dim=0).exp2().numpy(), np.exp2(np.concatenate([x, x[:1] * 2])))

def test_check_sizes_come_from_the_buffers_of_each_run(fresh_runners):
  """A compiled kernel may run on other buffers: the check reads their sizes at every run, not the sizes it was built for."""
  si = (Tensor(np.arange(8, dtype=np.float32)).realize() + 1).schedule()[-1]
  with Context(LAZYNB_CHECK=1):
    runner = get_runner("CPU", si.ast)
    for b in si.bufs: b.allocate()
    runner(list(si.bufs))  # in bounds
    small = Buffer("CPU", 5, dtypes.float32).allocate()
    with pytest.raises(OutOfBoundsError, match="store to buffer data0 at index 5, outside its 5 elements"): runner([small, si.bufs[1]])

def test_checked_and_unchecked_kernels_never_mix(fresh_runners):
  si = (Tensor(np.arange(8, dtype=np.float32)).realize() * 3).schedule()[-1]
  plain = get_runner("CPU", si.ast)
  with Context(LAZYNB_CHECK=1): checked = get_runner("CPU", si.ast)
  assert plain is not checked and not plain.p.checked and checked.p.checked
  assert plain.p.src != checked.p.src  # the disk cache is keyed by the source
  assert get_runner("CPU", si.ast) is plain

def _strip_checks(src: str) -> str:
  """A checked C kernel without its check: the helper, the guards and the slot argument."""
  src = re.sub(r"static void lz_oob\(.*?\n}\n", "", src, flags=re.S)
  src = "\n".join(ln for ln in src.splitlines() if not re.match(r"\s*if \(.*lz_oob\(lz_chk", ln))
  return src.replace(", long long* restrict lz_chk", "")

@pytest.mark.slow
@pytest.mark.parametrize("cc", ["clang", "gcc"])
def test_the_unchecked_source_is_the_checked_one_without_its_checks(monkeypatch, fresh_runners, cc):
  """Checks are only added: without them the C text is what LAZYNB_CHECK=0 gives, which has no trace of them (gcc: lane
  vectors; a conv, a padded reduce, a threaded matmul, float16)."""
  dev = open_cpu(monkeypatch, cc, "elf")
  rng = np.random.default_rng(0)
  x, w = Tensor(rng.standard_normal((2, 3, 9, 9)).astype(np.float32), device=dev), Tensor(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), device=dev)
  m = Tensor(rng.standard_normal((128, 128)).astype(np.float32), device=dev)
  outs = [x.conv2d(w, padding=1), x.pad(((0, 0), (0, 0), (1, 2), (3, 0))).sum(3), m @ m, x.cast(dtypes.float16) * 3]
  for t in outs:
    for si in t.schedule():
      if si.kind != "kernel": continue
      plain = get_runner(dev, si.ast).p.src
      with Context(LAZYNB_CHECK=1): checked = get_runner(dev, si.ast).p.src
      assert not re.search(r"lz_chk|lz_oob|lz_ok", plain)
      assert "lz_chk" in checked and _strip_checks(checked) == plain
