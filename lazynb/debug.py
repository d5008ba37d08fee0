"""The DEBUG printer: one reader of the trace bus, writing to the terminal. What each level prints: README.md."""
from __future__ import annotations
from lazynb import trace
from lazynb.helpers import DEBUG, colored, ansistrip_pad, fmt_time, GlobalCounters, plural

def _line_for_exec(d: dict) -> str:
  t = d["seconds"]
  name = d["display_name"] or d["name"]
  gflops = d["op_estimate"] / t * 1e-9 if t > 0 else 0.0
  gbs = d["mem_estimate"] / t * 1e-9 if t > 0 else 0.0
  kind = colored("copy", "yellow") if d["kind"] == "copy" else "    "
  vals = "".join(f"  {k}={v}" for k, v in (d.get("var_vals") or {}).items())  # variables' values for this run
  md = f"  {[repr(m) for m in si.metadata]}" if (si := d.get("item")) is not None and si.metadata else ""  # the Tensor methods inside
  return (f"*** {d['device']:6s} {GlobalCounters.kernel_count:4d} {kind} {ansistrip_pad(name, 30)} "
          f"tm {fmt_time(t)}  {gflops:8.2f} GFLOPS {gbs:7.2f} GB/s{vals}{md}")

def print_event(ev: trace.Event):
  lvl = DEBUG.value
  if lvl <= 0: return
  d = ev.data
  if ev.kind == "realize" and lvl >= 1:
    copies = f" and {plural(d['copies'], 'copy', 'copies')}" if d["copies"] else ""
    print(f"realized {plural(d['kernels'], 'kernel')}{copies} in {d['seconds']*1e3:.2f} ms")
  elif ev.kind == "exec" and lvl >= 2: print(_line_for_exec(d))
  elif ev.kind == "program" and lvl >= 3:
    p = d["program"]
    if lvl >= 4:
      print(colored(f"--- AST of {p.name}", "cyan")); print(p.ast)  # noqa: E702
      print(colored("--- lowered", "cyan")); print(d["lowered"])  # noqa: E702
      print(colored("--- linearized", "cyan"))
      for i, u in enumerate(p.uops): print(f"{i:4d} {str(u.op):20s} {str(u.dtype):16s} {[p.uops.index(s) for s in u.src if s in p.uops]} {u.arg!r}")
    print(colored(f"--- {p.display_name}  opts={p.opts}", "green"))
    print(p.src)
  elif ev.kind == "schedule" and lvl >= 5:
    print(colored(f"schedule: {plural(len(d['items']), 'item')}", "magenta"))
    for i, si in enumerate(d["items"]): print(f"  {i}: {si.kind:6s} reason={si.reason:8s} bufs={[f'{b.size}x{b.dtype.name}' for b in si.bufs]}")
    if d.get("constants"): print(f"  {d['constants']} of the tensors are constants after folding: no kernel (fold constants)")
  elif ev.kind == "rewrite" and lvl >= 4 and (d["name"] != "graph_rewrite" or lvl >= 6):
    print(colored(f"pass [{d.get('stage') or 'other'}] {d['name']}", "blue") + f": {plural(len(d['steps']), 'step')}")
  elif ev.kind == "jit" and lvl >= 2:
    vals = "".join(f"  {k}={v}" for k, v in (d.get("var_vals") or {}).items())
    print(colored(f"JIT {d['phase']} {d.get('name', '')}: {plural(d.get('kernels', 0), 'kernel')}{vals}", "cyan"))

trace.subscribe(print_event, rewrites=lambda: DEBUG.value >= 4)
