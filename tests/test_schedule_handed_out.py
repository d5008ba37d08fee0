"""Tensor.schedule() hands out kernels without running them. Reading a scheduled tensor runs the items not run yet; an
item that writes into existing memory (an assign) runs once, however it is asked to run; when the items have been run
by hand to the last, their results are computed values for any graph. Unlike tinygrad 0.10, a handed-out value does not
count as computed before its items run: a value read after the memory it was computed from is overwritten must be the
value of its definition (computed before the write), never one computed late from the new contents."""
import numpy as np
import pytest
from lazynb import Tensor
from lazynb.engine.realize import run_schedule, lower_schedule_item
from lazynb.engine.schedule import StaleReadError

def test_a_handed_out_value_is_computed_before_its_inputs_are_overwritten():
  a = Tensor([1.0, 2.0]).contiguous().realize()
  c = a * 2
  sched = c.schedule()
  a.assign(Tensor([10.0, 20.0])).realize()  # c reads a's old contents: computed first
  assert c.tolist() == [2.0, 4.0] and (c + 1).tolist() == [3.0, 5.0]
  run_schedule(sched)  # the old items run late by hand: c keeps its value
  assert c.tolist() == [2.0, 4.0]
  d = a * 2  # built after the write: the new contents
  assert d.tolist() == [20.0, 40.0]

def test_the_same_tensor_scheduled_twice_gets_the_same_items():
  t = Tensor.ones(4).contiguous() * 3
  first = t.schedule()
  assert t.schedule() is first and len(first) == 2  # (the Playground schedules the tensor it is given)
  assert t.tolist() == [3.0] * 4
  assert len((Tensor.ones(4).contiguous() * 3).schedule()) == 2  # a new tensor: its own kernels

def test_a_handed_out_assign_runs_once():
  x = Tensor([1.0, 1.0]).contiguous().realize()
  x.assign(x + 1)
  sched = x.schedule()
  assert x.tolist() == [2.0, 2.0]  # read: the assign runs
  for si in sched: lower_schedule_item(si).run()  # by hand after it ran: not a second time
  run_schedule(sched)
  assert x.tolist() == [2.0, 2.0]

def test_items_run_by_hand_to_the_last_are_computed_values():
  w = Tensor([3.0]).contiguous().realize()
  w.assign(w * 2)
  sched = w.schedule()
  for si in sched: lower_schedule_item(si).run()
  assert (w + 1).tolist() == [7.0] and w.tolist() == [6.0]  # another graph reads the written memory
  v = Tensor([3.0]).contiguous().realize()
  v.assign(v * 2)
  v.schedule()  # not run: another graph through the pending assign is a clear error, not a second write
  with pytest.raises(StaleReadError): (v + 1).realize()
  assert v.tolist() == [6.0]

def test_never_run_items_run_when_the_tensor_is_read():
  a = Tensor([2.0, 3.0]).realize()
  c = (a * a).sum()
  assert len(c.schedule()) == 1
  assert c.item() == 13.0
  x, y = np.array([1.0, 2.0, 3.0], np.float32), np.array([4.0, 5.0, 6.0], np.float32)
  p = Tensor(x).realize() * Tensor(y).realize()
  half = p.schedule()
  assert p.numpy().tolist() == (x * y).tolist() and all(si.done for si in half)
