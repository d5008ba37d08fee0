"""The names tinygrad 0.10's tutorials (docs/abstractions2.py, abstractions3.py) and jit tests use, walked through with
lazynb's own programs: the runtime (MallocAllocator, ClangJITCompiler, CPUProgram), a hand-built kernel AST
(get_kernel, CompiledRunner.exec), the UOp level (get_becomes_map, create_schedule_with_vars), a schedule run by hand
(lower_schedule_item), dtype names, shard, tqdm, and TinyJit's captured/jit_cache/free_intermediates.
Every value is checked against numpy or tinygrad 0.10.3."""
import struct
import numpy as np
import pytest
from lazynb import Tensor, TinyJit, GlobalCounters, dtypes
from lazynb.device import Buffer, Device
from lazynb.uop.ops import UOp, Ops
from lazynb.shape.shapetracker import ShapeTracker
from lazynb.runtime.ops_cpu import ClangJITCompiler, MallocAllocator, CPUProgram
from lazynb.engine.realize import get_kernel, CompiledRunner, ExecItem, lower_schedule_item, run_schedule
from lazynb.engine.search import get_kernel_actions
from lazynb.codegen.kernel import Kernel, Opt, OptOps
from lazynb.engine.schedule import create_schedule_with_vars
from lazynb.engine.grouper import get_becomes_map
from lazynb.helpers import tqdm

def test_runtime_level():
  """A C function compiled by hand and called on allocator memory: 4 products, as numpy computes them."""
  x, y = np.array([3, -7, 11, 2**20], np.int32), np.array([5, 6, -2, 3], np.int32)
  out, a, b = MallocAllocator.alloc(16), MallocAllocator.alloc(16), MallocAllocator.alloc(16)
  MallocAllocator._copyin(a, memoryview(x.tobytes()))
  MallocAllocator._copyin(b, memoryview(y.tobytes()))
  lib = ClangJITCompiler().compile("void mul4(int *o, int *p, int *q) { for (int i = 0; i < 4; i++) o[i] = p[i] * q[i]; }")
  CPUProgram("mul4", lib)(out, a, b)
  assert MallocAllocator._as_buffer(out).cast("i").tolist() == (x * y).tolist()

def _st(n): return ShapeTracker.from_shape((n,)).to_uop()

def test_kernel_ast_level():
  """A kernel AST written by hand (out = a*b + a over 7 floats), made into a program and run on Buffers."""
  x, y = np.linspace(-2, 3, 7).astype(np.float32), np.arange(7, dtype=np.float32) - 2.5
  out = Buffer("CPU", 7, dtypes.float32).allocate()
  a = Buffer("CPU", 7, dtypes.float32).allocate().copyin(memoryview(x.tobytes()))
  b = Buffer("CPU", 7, dtypes.float32).allocate().copyin(memoryview(y.tobytes()))
  g = [UOp(Ops.DEFINE_GLOBAL, dtypes.float32.ptr(), (), i) for i in range(3)]
  la, lb = (UOp(Ops.LOAD, dtypes.float32, (g[i], _st(7))) for i in (1, 2))
  sink = UOp(Ops.SINK, dtypes.void, (UOp(Ops.STORE, dtypes.void, (g[0], _st(7), la * lb + la)),))
  k = get_kernel(Device["CPU"].renderer, sink).linearize()
  assert k.uops and k.to_program() is k.program
  fxn = CompiledRunner(k.to_program())
  assert "void" in fxn.p.src
  fxn.exec([out, a, b])
  np.testing.assert_allclose(np.frombuffer(out.as_buffer(), np.float32), x * y + x, rtol=1e-6)

def test_a_scheduled_kernel_run_by_hand():
  """tinygrad's test_arange walk: Kernel(ast) on the default device, an opt, to_program(), ExecItem(runner, buffers).run()
  into the tensor's lazydata buffer (after schedule() that is the buffer, as tinygrad's), then the tensor reads it."""
  t = Tensor.arange(1000)
  sched = t.schedule()
  assert len(sched) == 1 and t.lazydata.op is Ops.BUFFER
  k = Kernel(sched[0].ast)
  assert k.renderer is Device[Device.DEFAULT].renderer
  k.apply_opt(Opt(OptOps.UPCAST, 0, 4))
  p = k.to_program()
  assert p.opts == [Opt(OptOps.UPCAST, 0, 4)]
  assert p.estimates.ops == p.op_estimate
  ExecItem(CompiledRunner(p), [t.lazydata.buffer]).run()
  assert np.frombuffer(t.lazydata.buffer.as_buffer(), np.int32).tolist() == list(range(1000))
  assert t.tolist() == list(range(1000))
  moves = get_kernel_actions(Kernel(sched[0].ast), include_0=False)
  assert moves and all(len(m.applied_opts) == 1 for m in moves.values())
  assert get_kernel_actions(k)[0] is k

def test_uop_level():
  """get_becomes_map decides the kernel (ASSIGN(BUFFER, KERNEL)); create_schedule_with_vars schedules it; running the
  schedule fills the new buffer with 2*3 - 10."""
  a, b = UOp.new_buffer("CPU", 1, dtypes.int32), UOp.new_buffer("CPU", 1, dtypes.int32)
  a.buffer.allocate().copyin(memoryview(bytearray(struct.pack("i", 2))))
  b.buffer.allocate().copyin(memoryview(bytearray(struct.pack("i", 3))))
  val = a * b - 10
  assign = get_becomes_map(UOp(Ops.SINK, dtypes.void, (val,)))[val]
  assert assign.op is Ops.ASSIGN and assign.src[0].op is Ops.BUFFER and assign.src[1].op is Ops.KERNEL
  sched, var_vals, becomes = create_schedule_with_vars(UOp(Ops.SINK, dtypes.void, (assign,)))
  assert len(sched) == 1 and var_vals == {} and sched[0].ast.op is Ops.SINK
  out = becomes[assign]
  assert out.op is Ops.BUFFER and not out.buffer.is_allocated()
  run_schedule(sched)
  assert out.is_realized and out.buffer.as_buffer().cast("i")[0] == -4
  with pytest.raises(TypeError, match="SINK"): get_becomes_map(val)

def _sgd_step(lr=0.1):
  """Two weights, one SGD step on a squared loss: the tensors and the numpy answer."""
  w0, x0 = np.arange(6, dtype=np.float32).reshape(2, 3) / 5, np.array([[1, -2], [0.5, 3]], np.float32)
  w, x = Tensor(w0, requires_grad=True).realize(), Tensor(x0)  # in memory: the step is an assign into it
  ((x @ w) ** 2).sum().backward()
  w.assign(w.detach() - lr * w.grad)
  return w, w0 - lr * 2 * x0.T @ (x0 @ w0)

@pytest.mark.parametrize("how", ["by_hand", "realize", "half_by_hand"])
def test_schedule_run_by_hand(how):
  """abstractions3's path: Tensor.schedule, then its items lowered and run one by one. Reading the tensor afterwards
  takes what they computed; reading it without running them (or after running some) runs the rest, once."""
  w, want = _sgd_step()
  sched = w.schedule()
  assert len(sched) >= 1
  todo = {"by_hand": sched, "realize": [], "half_by_hand": sched[:len(sched) // 2]}[how]
  for ei in [lower_schedule_item(si) for si in tqdm(todo, disable=True)]: ei.run()
  np.testing.assert_allclose(w.numpy(), want, rtol=1e-5)
  np.testing.assert_allclose((w + 1).numpy(), want + 1, rtol=1e-5)  # the same memory, read again, once written

def test_dtype_reprs_match_tinygrad():
  tinygrad = pytest.importorskip("tinygrad")
  for name in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16", "float32", "float64"):
    assert repr(getattr(dtypes, name)) == repr(getattr(tinygrad.dtypes, name)), name

def test_shard():
  t = Tensor([[1, 2], [3, 4]])
  np.testing.assert_equal(t.shard(("CPU",), axis=0).numpy(), [[1, 2], [3, 4]])
  with pytest.raises(NotImplementedError, match="multi-device"): t.shard(("CPU", "PYTHON"))
  with pytest.raises(IndexError): t.shard(("CPU",), axis=2)

def test_tqdm(capsys):
  assert list(tqdm(range(5), desc="x")) == list(range(5))
  assert "5/5" in capsys.readouterr().err
  with tqdm(total=3, disable=True) as bar: bar.update(3)
  assert bar.n == 3 and capsys.readouterr().err == ""

def test_jit_cache_and_free_intermediates():
  """tinygrad 0.10's TestJitFree pattern: scratch memory is freed and comes back on the next replay with right values."""
  ext = Tensor([1, 24, 23, 45, 1])
  @TinyJit
  def f(x): return (x * 2 + ext).reshape(5, 1).expand(5, 100).contiguous().sum()
  assert f.captured is None and f.jit_cache == []
  for i in range(4): assert f(Tensor([i, 1, 2, 3, 4])).item() == 11400 + 200 * i
  assert len(f.jit_cache) == 2 and all(isinstance(e.prg, CompiledRunner) and e.bufs for e in f.jit_cache)
  for _ in range(2):
    m = GlobalCounters.mem_used
    f.captured.free_intermediates()
    f.captured.free_intermediates()
    assert m - GlobalCounters.mem_used == 5 * 100 * 4
    assert f(Tensor([11, 1, 2, 3, 4])).item() == 13600

def test_free_intermediates_keeps_state():
  """Memory a replay reads before writing is kept: a pruned kernel's result (computed once at capture) and a global
  updated in place."""
  w = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)).realize()
  acc = Tensor.zeros(3).contiguous().realize()
  def fn(x):
    acc.assign(acc + x)
    return ((w.exp() * 2).sum(0).contiguous().realize() + x).realize()
  jf = TinyJit(fn, prune=True)
  const = (np.exp(np.arange(6, dtype=np.float32).reshape(2, 3)) * 2).sum(0)
  for i in range(6):
    if i >= 3: jf.captured.free_intermediates()
    np.testing.assert_allclose(jf(Tensor(np.full(3, i, np.float32))).numpy(), const + i, rtol=1e-6)
  np.testing.assert_allclose(acc.numpy(), np.full(3, sum(range(6)), np.float32))

def test_jit_inside_jit_is_an_error():
  """A TinyJit called while another captures: a clear RuntimeError (tinygrad 0.10's words), not a crash in the capture."""
  f = TinyJit(lambda t: t + 1)
  g = TinyJit(lambda t: f(t) * 3)
  assert g(Tensor([1])).item() == 6  # the first (warm-up) call does not capture
  with pytest.raises(RuntimeError, match="having TinyJit inside another TinyJit is not supported"): g(Tensor([1]))
  assert g.fxn(Tensor([2])).item() == 9  # nothing left capturing

def test_jit_zero_runs_plainly():
  from lazynb.helpers import Context
  add = TinyJit(lambda a, b: (a + b).realize())
  with Context(JIT=0):
    for i in range(4): assert add(Tensor([i]), Tensor([2 * i])).item() == 3 * i
  assert add.jit_cache == [] and add.captured is None

def test_jit_misuse_is_what_tinygrad_raises():
  """tinygrad 0.10 raises AssertionError for a jit's changed input shapes or an input passed twice: code catching it still does."""
  add = TinyJit(lambda a, b: (a + b).realize())
  for _ in range(3): add(Tensor.ones(4), Tensor.ones(4))
  with pytest.raises(AssertionError, match="inputs changed"): add(Tensor.ones(5), Tensor.ones(5))
  x = Tensor.ones(4).realize()
  with pytest.raises(AssertionError, match="shares its memory"): TinyJit(lambda a, b: (a + b).realize())(x, x)

@pytest.mark.parametrize("update", [True, False])
def test_exec_item_run_counts_only_when_asked(update):
  """tinygrad's tests run lowered items with `ei.run(do_update_stats=...)`: with False the kernel still runs (the value is
  there) and GlobalCounters stay as they were; with True they count it."""
  x = Tensor(np.arange(8, dtype=np.float32)).realize()
  y = x * 3 + 1
  (si,) = [si for si in y.schedule() if si.kind == "kernel"]
  GlobalCounters.reset()
  lower_schedule_item(si).run(wait=True, do_update_stats=update)
  assert (GlobalCounters.kernel_count, GlobalCounters.global_ops > 0) == ((1, True) if update else (0, False))
  np.testing.assert_allclose(y.numpy(), np.arange(8) * 3 + 1)

def test_uop_realized_is_the_buffer_once_it_holds_data():
  """tinygrad 0.10's UOp.realized: the Buffer of a BUFFER uop whose memory exists, else None (a view, a lazy value)."""
  from lazynb.device import Buffer
  a = Tensor([1.0, 2.0, 3.0, 4.0])
  assert a.uop.realized is None and not a.uop.is_realized
  a.realize()
  assert isinstance(a.uop.base.realized, Buffer) and a.uop.base.realized.size == 4 and a.uop.is_realized
  assert a.reshape(2, 2).uop.realized is None and a.reshape(2, 2).uop.is_realized  # a view: no buffer of its own
  assert (a + 1).uop.realized is None
