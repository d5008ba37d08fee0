"""Tensor.schedule() hands out kernels without running them, and (as tinygrad 0.10) their values count as computed from
then on: a graph with the same nodes schedules no kernel for them and reads the buffers those kernels will fill.
Whatever reads such a buffer first (a kernel, a copy to the host) runs the handed-out items up to the one that writes
it; an item that writes into existing memory (an assign) runs once, however it is asked to run."""
import numpy as np
from lazynb import Tensor
from lazynb.engine.realize import run_schedule, lower_schedule_item

def test_the_same_graph_again_needs_no_kernel_and_both_read_right():
  a, b = Tensor([1.0, 2.0]).realize(), Tensor([10.0, 20.0]).realize()
  c = a + b
  assert len(c.schedule()) == 1
  d = a + b
  assert d.schedule() == []
  assert d.tolist() == [11.0, 22.0] and c.tolist() == [11.0, 22.0]  # d read first: it runs c's kernel
  e = (a + b).reshape(2, 1)  # (tinygrad's test_no_binop_rerun)
  assert e.schedule() == [] and e.tolist() == [[11.0], [22.0]]

def test_a_kernel_reading_a_handed_out_value_runs_its_item_first():
  x, y = np.array([1.0, 2.0, 3.0], np.float32), np.array([4.0, 5.0, 6.0], np.float32)
  a, b = Tensor(x).realize(), Tensor(y).realize()
  c = a * b
  sched = c.schedule()
  e = (a * b + 1).realize()  # a kernel that reads c's buffer
  assert sched[0].done
  np.testing.assert_allclose(e.numpy(), x * y + 1)
  run_schedule(sched)  # run again by hand: a kernel that only computes a value, harmless
  np.testing.assert_allclose(c.numpy(), x * y)

def test_the_same_tensor_scheduled_twice_gets_the_same_items():
  t = Tensor.ones(4).contiguous() * 3
  first = t.schedule()
  assert t.schedule() is first and len(first) == 2  # (the Playground schedules the tensor it is given)
  assert t.tolist() == [3.0] * 4

def test_a_handed_out_assign_is_read_after_it_and_runs_once():
  x = Tensor([1.0, 1.0]).contiguous().realize()
  x.assign(x + 1)
  sched = x.schedule()
  assert (x * 10).tolist() == [20.0, 20.0]  # reads x's memory: the assign runs first
  assert (x * 5).tolist() == [10.0, 10.0]
  for si in sched: lower_schedule_item(si).run()  # by hand after it ran: not a second time
  run_schedule(sched)
  assert x.tolist() == [2.0, 2.0]
  w = Tensor([3.0]).contiguous().realize()
  w.assign(w * 2)
  sched = w.schedule()
  for si in sched: lower_schedule_item(si).run()
  assert (w + 1).tolist() == [7.0] and w.tolist() == [6.0]

def test_never_run_items_run_when_the_tensor_is_read():
  a = Tensor([2.0, 3.0]).realize()
  c = (a * a).sum()
  assert len(c.schedule()) == 1
  assert c.item() == 13.0

def test_a_cell_run_again_schedules_again():
  """Counted as computed while a scheduled tensor lives: a notebook cell run again (`z = x + y; z.schedule()`) makes a
  new z, the old one dies with its items not run, and the new schedule shows the kernel again."""
  x, y = Tensor([1.0, 2.0]).realize(), Tensor([3.0, 4.0]).realize()
  z = x + y
  assert len(z.schedule()) == 1
  z = x + y  # the old z dies here
  assert len(z.schedule()) == 1
  w = x + y  # z lives: w's value is z's
  assert w.schedule() == [] and w.tolist() == [4.0, 6.0] and z.tolist() == [4.0, 6.0]
