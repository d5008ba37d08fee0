"""A kernel-opt playground: take one kernel, apply or undo opts, and see at once what each one changed.

    pg = Playground(a @ b, reference=a.numpy() @ b.numpy())   # the main kernel of the schedule (or index=...)
    pg.legal()                      # every opt the Kernel accepts from its current state
    pg.apply(Opt(OptOps.UPCAST, 1, 4)); pg.undo(); pg.reset("heuristic"); pg.reset("none")
    pg.beam(2)                      # BEAM search from the heuristic's kernel, every round's candidates with their times

Every state is compiled, run on the kernel's real input buffers (several runs, the median counts) and its output
compared with the reference (numpy when given, else the unoptimized kernel's output): an opt must never change the
answer, and a state that does is marked WRONG everywhere it shows. `pg.doc()` is the view as plain data
(application/vnd.lazynb.playground+json, described by lazynb/playground.schema.json): the JupyterLab extension draws
it (labextension/src/optview.ts, the one renderer), `fallback_html` is a short text for pages without the extension
(opts, time, result, source), and `pg.widget()` adds ipywidgets controls in a live notebook, above the same view.
"""
from __future__ import annotations
import difflib, html, os, re, statistics, time
from functools import lru_cache
import numpy as np
from lazynb import trace
from lazynb.device import Device
from lazynb.helpers import plural
from lazynb.codegen import get_program
from lazynb.codegen.kernel import Kernel, Opt, OptOps, AxisType, KernelOptError, hand_coded_optimizations, arange_axes
from lazynb.engine.search import beam_search, scratch_buffers
from lazynb.engine.realize import CompiledRunner, run_schedule
from lazynb.tensor import Tensor
from lazynb.notebook.tracedoc import kernel_views, name_parts
from lazynb.notebook.words import clip_words
from lazynb.uop.ops import UOp, Ops

MIME = "application/vnd.lazynb.playground+json"
AMOUNTS = (0, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32)
ROLE = {AxisType.GLOBAL: "a loop over output positions (one per output element, split across the launch)",
        AxisType.THREAD: "split over CPU threads: each core runs its share of the outer loop",
        AxisType.LOCAL: "a GPU work-group axis (threads that share local memory)",
        AxisType.GROUP: "a reduce split across a work-group, combined in shared memory",
        AxisType.REDUCE: "a reduce loop: accumulates into a register",
        AxisType.UNROLL: "a reduce axis written out inline: no loop, the body repeats",
        AxisType.UPCAST: "computed in registers, no loop: several outputs per iteration (vectors)"}

# ---------------------------------------------------------------- the machine's peak, stated with how it was found

@lru_cache(maxsize=None)
def numpy_peak(n: int = 512, runs: int = 10) -> float:
  """GFLOPS of a float32 n x n matmul in numpy (its BLAS, all cores), the fastest of `runs`, measured in this process
  (the fastest: other load on the machine only ever slows a run down)."""
  r = np.random.default_rng(0)
  a, b = r.random((n, n), dtype=np.float32), r.random((n, n), dtype=np.float32)
  a @ b
  ts = []
  for _ in range(runs):
    st = time.perf_counter()
    a @ b
    ts.append(time.perf_counter() - st)
  return 2 * n ** 3 / min(ts) * 1e-9

def cpu_peak() -> dict | None:
  """cores x GHz x SIMD floats x 2 (FMA) x 2 (FMA units, assumed), from /proc/cpuinfo; None where it cannot be read."""
  try: info = open("/proc/cpuinfo").read()
  except OSError: return None
  mhz = [float(x) for x in re.findall(r"^cpu MHz\s*:\s*([\d.]+)", info, re.M)]
  flags = set(m.group(1).split()) if (m := re.search(r"^flags\s*:(.*)$", info, re.M)) else set()
  if not mhz or not flags: return None
  simd = 16 if "avx512f" in flags else 8 if "avx2" in flags or "avx" in flags else 4
  fma = 2 if "fma" in flags or "avx512f" in flags else 1
  cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
  return {"cores": cores, "ghz": max(mhz) / 1000, "simd_floats": simd, "fma": fma == 2,
          "gflops": cores * max(mhz) / 1000 * simd * fma * 2}

def peak() -> dict:
  cp = cpu_peak()
  return {"numpy_gflops": numpy_peak(), "numpy_what": "numpy float32 512x512 matmul on this machine, measured in this session (fastest of 10)",
          "cpu": cp, "cpu_what": ("theoretical: cores x clock x SIMD floats x 2 (FMA) x 2 FMA units per core (assumed), from /proc/cpuinfo"
                                  if cp else None)}

# ---------------------------------------------------------------- decoding an opt for a learner

def explain(opt: Opt, k: Kernel) -> str:
  """`opt` in words, for the kernel `k` it is about to be applied to."""
  if not 0 <= opt.axis < len(k.full_shape): return f"{opt}: there is no axis {opt.axis} (the kernel has {len(k.full_shape)})."
  size, t, name = k.full_shape[opt.axis], k.axis_types[opt.axis], k.axis_names()[opt.axis]
  amt = opt.arg or size
  where = f"axis {opt.axis} ({name}, a {t.name.lower()} axis of size {size})"
  rest = f"the loop over {name} then runs {plural(size // amt, 'time')}" if amt and size % amt == 0 and size // amt > 1 else f"the loop over {name} disappears"
  if opt.op is OptOps.UPCAST:
    return (f"{opt}: split {where} into {size // amt if amt else '?'} x {amt}; the inner {amt} become an upcast axis: computed together in "
            f"registers with no loop, so each iteration produces {amt} outputs. In the C: float vectors (or {amt} separate "
            f"variables) and {plural(amt, 'value')} per load/store; {rest}.")
  if opt.op is OptOps.UNROLL:
    return (f"{opt}: split {where} into {size // amt if amt else '?'} x {amt}; the inner {amt} are unrolled: the loop body is written out "
            f"{plural(amt, 'time')} (the C repeats the multiply-add with {amt} different indexes), fewer loop steps and more independent work; {rest}.")
  if opt.op is OptOps.LOCAL:
    return f"{opt}: split {where}; the inner {amt} become a work-group (local) axis: {amt} GPU threads that can share local memory (lidx in the code)."
  if opt.op in (OptOps.GROUP, OptOps.GROUPTOP):
    return (f"{opt}: split the reduce {where} over {amt} threads of a work-group; each sums its part and the parts are combined "
            "in shared memory.")
  if opt.op is OptOps.THREAD:
    return (f"{opt}: split {where} over {amt} CPU threads: the outer part (tidx0 in the C) says which share of the loop a core runs, "
            f"each runs {size // amt if amt else '?'} iterations. Starting threads costs time: it pays off only for enough work.")
  if opt.op is OptOps.PADTO:
    new = -(-size // opt.arg) * opt.arg if opt.arg > 1 else size
    return (f"{opt}: grow {where} to {new}, a multiple of {opt.arg}, so it can be split evenly; the {new - size} extra positions are "
            "masked: their loads read 0, their stores are skipped, on a reduce axis they add the reduce's identity, and an integer "
            "division there divides by 1 (a `valid` condition appears in the index math).")
  return f"{opt}"

# ---------------------------------------------------------------- the playground

def _kernel_items(items) -> list:
  return [si for si in items if si.kind == "kernel" and si.bufs[0].size]

def _work(si) -> int:
  k = Kernel(si.ast, Device[si.bufs[0].device].renderer)
  n = 1
  for s in k.full_shape: n *= s if isinstance(s, int) else 1
  return n

class Playground:
  def __init__(self, what, index: int | None = None, reference: np.ndarray | None = None, runs: int = 7):
    """`what`: a Tensor (its schedule's largest kernel, or the `index`-th kernel), a ScheduleItem, or a kernel AST (SINK).
    `reference`: the expected output as a numpy array (the kernel's output buffer, any shape with the same size)."""
    self.runs = runs
    if isinstance(what, Tensor):
      items = what.schedule()
      ks = _kernel_items(items)
      if not ks: raise ValueError("this tensor needs no kernel (it is a constant or already realized): nothing to optimize")
      if index is None: si = max(ks, key=_work)
      elif not -len(ks) <= index < len(ks): raise IndexError(f"kernel index {index}: the schedule has {plural(len(ks), 'kernel')}")
      else: si = ks[index]
      with trace.muted(): run_schedule(items[:items.index(si)])  # the inputs this kernel reads
      if any(si.var_vals.values()): raise ValueError("the playground needs concrete sizes: this kernel has variables")
      self.ast, self.renderer, self.bufs = si.ast, Device[si.bufs[0].device].renderer, list(si.bufs)
      for b in self.bufs: b.allocate()
    elif isinstance(what, UOp) or hasattr(what, "ast"):
      self.ast = what if isinstance(what, UOp) else what.ast
      self.renderer = Device[Device.DEFAULT].renderer
      self.bufs = list(what.bufs) if hasattr(what, "bufs") else scratch_buffers(Kernel(self.ast, self.renderer))
      for b in self.bufs: b.allocate()
    else: raise TypeError(f"Playground takes a Tensor, a ScheduleItem or a kernel AST, not {type(what).__name__}")
    if self.ast.op is not Ops.SINK: raise ValueError(f"a kernel AST is a SINK, got {self.ast.op}")
    base = Kernel(self.ast, self.renderer)
    self.heuristic = list(hand_coded_optimizations(base.copy()))
    self._states: dict[tuple, dict] = {}
    if reference is not None:
      ref = np.asarray(reference)
      if ref.size != self.bufs[0].size: raise ValueError(f"reference has {plural(ref.size, 'value')}, the kernel writes {self.bufs[0].size}")
      self.reference, self.reference_what = ref.reshape(-1), "numpy"
    else:
      self.reference, self.reference_what = self._output([]), "the unoptimized kernel (NOOPT) on the same inputs"
    self.history: list[list[Opt]] = [list(self.heuristic)]
    self.notes: list[str] = []
    self.beam_info: dict | None = None
    self.listeners: list = []  # called after every change of state (a widget redraws: it must never show a stale state)
    self.measure()

  # ---- the current state
  @property
  def opts(self) -> list[Opt]: return list(self.history[-1])
  def kernel(self, opts: list[Opt] | None = None) -> Kernel:
    k = Kernel(self.ast, self.renderer)
    for o in (self.opts if opts is None else opts): k.apply_opt(o)
    return k

  def legal(self) -> list[Opt]:
    """Every single opt the Kernel accepts from the current state (the axis and amount are part of each)."""
    k, out = self.kernel(), []
    keep = arange_axes(k)
    for op in OptOps:
      for axis in range(len(k.full_shape)):
        if k.is_sym(axis) or axis in keep and op in (OptOps.UNROLL, OptOps.GROUP, OptOps.GROUPTOP, OptOps.PADTO): continue
        for amt in ((4, 8, 16, 32) if op is OptOps.PADTO else AMOUNTS):
          if op is not OptOps.PADTO and amt and (k.full_shape[axis] % amt or amt == k.full_shape[axis]): continue
          opt = Opt(op, axis, amt)
          try: k.copy().apply_opt(opt)
          except KernelOptError: continue
          out.append(opt)
    return out

  # ---- changing it
  def apply(self, opt: Opt) -> Playground:
    """Apply one more opt; an opt the Kernel refuses raises KernelOptError saying why (the state does not change)."""
    if not isinstance(opt, Opt): raise TypeError(f"apply takes an Opt, e.g. Opt(OptOps.UPCAST, 0, 4), not {type(opt).__name__}")
    self.kernel().apply_opt(opt)   # raises with the reason if it is not legal here
    self.history.append(self.opts + [opt])
    return self._changed()
  def undo(self) -> Playground:
    if len(self.history) == 1: raise IndexError("nothing to undo")
    self.history.pop()
    return self._changed()
  def reset(self, to: str = "heuristic") -> Playground:
    """Back to the heuristic's opts ("heuristic") or to none ("none", the NOOPT kernel); undo goes back to before."""
    if to not in ("heuristic", "none"): raise ValueError(f"reset to 'heuristic' or 'none', not {to!r}")
    self.history.append(list(self.heuristic) if to == "heuristic" else [])
    return self._changed()
  def set(self, opts: list[Opt]) -> Playground:
    k = self.kernel(list(opts))  # raises if any is illegal
    self.history.append(list(k.applied_opts))
    return self._changed()
  def _changed(self) -> Playground:
    self.measure()
    for f in list(self.listeners): f()
    return self

  def beam(self, width: int = 2, on_progress=None) -> Playground:
    """BEAM search for this kernel (searching again even if cached, to show its rounds); moves to the winner.
    `on_progress(line)` is told each round's progress (then None); without it the progress is one line on stdout."""
    with trace.Recorder(rewrites=False) as rec:
      best = beam_search(Kernel(self.ast, self.renderer), int(width), cache=False, on_progress=on_progress)
    ev = rec.of("beam")[-1].data
    self.beam_info = {"width": int(width), "rounds": ev["rounds"], "tried": ev["tried"], "seconds": ev["seconds"],
                      "start": _opts_json(ev["start"]), "path": [[repr(o) for o in p] for p in ev["path"]],
                      "winner": [repr(o) for o in best.applied_opts],
                      "rounds_detail": [dict(r, candidates=[_opts_json(c) for c in r["candidates"]], best=[repr(o) for o in r["best"]],
                                             kept=[[repr(o) for o in kk] for kk in r["kept"]]) for r in ev["rounds_detail"]]}
    self.history.append(list(best.applied_opts))
    return self._changed()

  # ---- measuring
  def _runner(self, opts: list[Opt]) -> CompiledRunner:
    with trace.muted(): return CompiledRunner(get_program(self.ast, self.renderer, list(opts)))
  def _output(self, opts: list[Opt], runner: CompiledRunner | None = None) -> np.ndarray:
    """The kernel's output with these opts, on an output buffer filled with NaN first (a skipped store cannot pass)."""
    out = self.bufs[0]
    fill = np.full(out.size, np.nan) if out.dtype.name.startswith(("float", "half", "bfloat")) else np.full(out.size, 123457)
    out.copyin(np.ascontiguousarray(fill.astype(out.numpy().dtype)).view(np.uint8).data)
    (runner or self._runner(opts))(self.bufs)
    return out.numpy().copy()

  def measure(self, opts: list[Opt] | None = None) -> dict:
    """Compile, check against the reference, time (median of `runs` after one warm-up); cached per opts."""
    opts = self.opts if opts is None else list(opts)
    key = tuple(opts)
    if key in self._states: return self._states[key]
    k = self.kernel(opts)
    r = self._runner(opts)
    got = self._output(opts, r)
    ref = self.reference
    scale = float(np.max(np.abs(ref))) if ref.size and np.issubdtype(ref.dtype, np.number) else 1.0
    if np.issubdtype(ref.dtype, np.floating) or np.issubdtype(got.dtype, np.floating):
      ok = bool(np.allclose(got.astype(np.float64), ref.astype(np.float64), rtol=1e-4, atol=1e-5 * max(1.0, scale), equal_nan=True))
      err = float(np.nanmax(np.abs(got.astype(np.float64) - ref.astype(np.float64)))) if got.size else 0.0
    else:
      ok, err = bool(np.array_equal(got, ref)), float(np.sum(got != ref))
    r(self.bufs)
    ts = [r(self.bufs) for _ in range(self.runs)]
    t = statistics.median(ts)
    ops = r.p.op_estimate if isinstance(r.p.op_estimate, int) else 0
    st = {"opts": [repr(o) for o in opts], "source": r.p.src, "name": r.p.name, "name_parts": name_parts(r.p.display_name),
          "language": r.p.language, "full_shape": list(k.full_shape), "axis_types": [a.name for a in k.axis_types],
          "axis_names": k.axis_names(), "roles": [ROLE[a] for a in k.axis_types],
          "global_size": list(r.p.global_size), "time_s": t, "times_s": ts, "runs": len(ts), "op_estimate": ops,
          "gflops": ops / t * 1e-9 if t > 0 else 0.0, "correct": ok, "max_error": err,
          "views": [{"buf": v["buf"], "access": v["access"], "index": v["index"], "valid": v["valid"]} for v in kernel_views(self.ast, k, None)]}
    if not ok: self.notes.append(f"WRONG RESULT with opts {st['opts']}: largest error {err:.3g} against {self.reference_what}")
    self._states[key] = st
    return st

  def race(self, opts_a: list[Opt], opts_b: list[Opt], rounds: int = 5, runs: int = 9) -> tuple[float, float]:
    """A fair race between two states: `rounds` rounds, each `runs` runs of a then of b (after a warm-up); the median
    of every run of each. Interleaving means load from elsewhere on the machine hits both alike."""
    ra, rb = self._runner(list(opts_a)), self._runner(list(opts_b))
    ra(self.bufs); rb(self.bufs)  # noqa: E702
    ta: list[float] = []
    tb: list[float] = []
    for _ in range(rounds):
      ta += [ra(self.bufs) for _ in range(runs)]
      tb += [rb(self.bufs) for _ in range(runs)]
    return statistics.median(ta), statistics.median(tb)

  # ---- the view as data
  def doc(self) -> dict:
    cur = self.measure()
    prev = self.measure(self.history[-2]) if len(self.history) > 1 else None
    diff = list(difflib.unified_diff(prev["source"].splitlines(), cur["source"].splitlines(), "before", "after", lineterm="", n=2)) if prev else []
    k = self.kernel()
    steps = []
    for i in range(len(cur["opts"])):
      kk = self.kernel(self.opts[:i])
      steps.append({"opt": cur["opts"][i], "explain": explain(self.opts[i], kk)})
    hs = self.measure(self.heuristic)
    return {"version": 1, "kernel": cur["name"], "device": self.renderer.device, "state": cur, "previous": prev and {"opts": prev["opts"], "time_s": prev["time_s"]},
            "diff": diff, "steps": steps, "heuristic": {"opts": hs["opts"], "time_s": hs["time_s"], "gflops": hs["gflops"]},
            "legal": [{"opt": repr(o), "op": o.op.name, "axis": o.axis, "arg": o.arg, "explain": explain(o, k)} for o in self.legal()],
            "history": [[repr(o) for o in h] for h in self.history], "reference": self.reference_what,
            "peak": peak(), "beam": self.beam_info, "notes": list(self.notes)}

  def summary(self) -> str:
    s = self.measure()
    pk = numpy_peak()
    lines = [f"kernel {s['name']}  opts {s['opts'] or 'none (NOOPT)'}",
             "axes   " + "  ".join(f"{n}={sz}:{t.lower()}" for n, sz, t in zip(s["axis_names"], s["full_shape"], s["axis_types"])),
             f"time   {s['time_s'] * 1e6:.1f} us (median of {s['runs']})  {s['gflops']:.2f} GFLOPS  "
             f"({s['gflops'] / pk * 100:.0f}% of numpy's float32 matmul here, {pk:.1f} GFLOPS)",
             f"result {'equal to ' + self.reference_what if s['correct'] else 'WRONG: differs from ' + self.reference_what + ' by ' + format(s['max_error'], '.3g')}"]
    lines += [f"index  {v['access']} data{v['buf']}: {v['index']}" + (f"  valid: {v['valid']}" if v["valid"] not in ("True", "") else "")
              for v in s["views"] if v["buf"] is not None]
    return "\n".join(lines)
  def __repr__(self): return self.summary()
  def _repr_mimebundle_(self, include=None, exclude=None):
    d = self.doc()
    return {MIME: d, "text/html": fallback_html(d), "text/plain": self.summary()}

  def widget(self) -> PlaygroundWidget: return PlaygroundWidget(self)

FALLBACK_SOURCE_CHARS = 20_000

def fallback_html(doc: dict) -> str:
  """The playground without its renderer (GitHub, nbconvert, a notebook without the lazynb extension): the current
  opts, time and result, any notes, and the kernel's source, as escaped text. The view itself is optview.ts's."""
  esc = lambda x: html.escape(str(x))  # noqa: E731
  s = doc.get("state") or {}
  src = str(s.get("source", ""))
  cut = src if len(src) <= FALLBACK_SOURCE_CHARS else src[:src.rfind("\n", 0, FALLBACK_SOURCE_CHARS)] + f"\n... ({len(src)} characters in all)"
  t = s.get("time_s")
  time_text = f"{t * 1e6:.1f} us (median of {plural(s.get('runs', 0), 'run')}), {s.get('gflops', 0):.2f} GFLOPS" if isinstance(t, (int, float)) else "not timed"
  result = (f"result equal to {esc(doc.get('reference'))}" if s.get("correct") is True else
            f"<b>WRONG RESULT</b>: largest error {esc(s.get('max_error'))} against {esc(doc.get('reference'))}")
  notes = "".join(f"<p>{esc(n)}</p>" for n in (doc.get("notes") or [])[-5:])
  return (f'<div class="lazynb-playground-text"><p><b>kernel-opt playground</b>: <code>{esc(s.get("name"))}</code> on {esc(doc.get("device"))}. '
          "The interactive view needs the lazynb JupyterLab extension.</p>"
          f'<p>opts: <code>{esc(", ".join(map(str, s.get("opts") or [])) or "none (NOOPT)")}</code><br>time: {time_text}<br>{result}</p>'
          f"{notes}<details><summary>source</summary><pre>{esc(cut)}</pre></details></div>")

def _opts_json(c: dict | None) -> dict | None:
  if c is None: return None
  return dict(c, opts=[repr(o) for o in c["opts"]])

def playground(t, index: int | None = None, reference=None, runs: int = 7) -> Playground:
  return Playground(t, index=index, reference=reference, runs=runs)

# ---------------------------------------------------------------- ipywidgets controls

def esc(x) -> str: return html.escape(str(x))

class PlaygroundWidget:
  """Controls for a Playground in a live notebook: pick a legal opt, apply, undo, reset, run BEAM. Below them an Output
  widget shows the playground's own output (its MIME bundle: the extension's view), displayed again after every change
  of the playground, whether made here or by calling pg.apply/beam/... elsewhere. `box` is the widget to display."""
  def __init__(self, pg: Playground):
    try: import ipywidgets as w
    except ImportError as e: raise ImportError("the playground's controls need ipywidgets: pip install ipywidgets (or lazynb[notebook])") from e
    self.pg = pg
    self.choice = w.Dropdown(description="opt", layout={"width": "520px"})
    self.apply_b, self.undo_b = w.Button(description="apply"), w.Button(description="undo")
    self.heur_b, self.none_b = w.Button(description="reset: heuristic"), w.Button(description="reset: none")
    self.width = w.IntSlider(value=2, min=1, max=4, description="BEAM")
    self.beam_b = w.Button(description="run BEAM")
    self.status = w.HTML()
    self.view = w.Output()
    self.apply_b.on_click(lambda _: self._do(lambda: pg.apply(self.choice.value)))
    self.undo_b.on_click(lambda _: self._do(pg.undo))
    self.heur_b.on_click(lambda _: self._do(lambda: pg.reset("heuristic")))
    self.none_b.on_click(lambda _: self._do(lambda: pg.reset("none")))
    # BEAM takes seconds: a bar (one step per round; the search stops when a round finds nothing faster) and the round's line
    self.bar = w.IntProgress(value=0, min=0, max=1, description="BEAM", bar_style="info", layout={"visibility": "hidden"})
    self.beam_b.on_click(lambda _: self.run_beam())
    self.box = w.VBox([w.HBox([self.choice, self.apply_b, self.undo_b]), w.HBox([self.heur_b, self.none_b, self.width, self.beam_b]),
                       self.bar, self.status, self.view])
    pg.listeners.append(self.refresh)
    self.refresh()

  def run_beam(self):
    width = self.width.value
    self.bar.value, self.bar.max, self.bar.layout.visibility = 0, 1, "visible"
    self.beam_b.disabled = True
    def step(line: str | None):
      if line is None: return
      self.bar.max = self.bar.value + 2  # this round is done and the next one is running
      self.bar.value += 1
      self.status.value = f"<i>{esc(line)} ...</i>"
    try: self._do(lambda: self.pg.beam(width, on_progress=step), busy=f"BEAM {width}: timing the heuristic's kernel and round 1's candidates ...")
    finally: self.bar.layout.visibility, self.beam_b.disabled = "hidden", False

  def _do(self, fn, busy: str | None = None):
    if busy: self.status.value = f"<i>{esc(busy)}</i>"
    try: fn()
    except (KernelOptError, IndexError, ValueError) as e:
      self.status.value = f"<b>not applied</b>: {esc(e)}"
      return

  def refresh(self):
    out = self.pg._repr_mimebundle_()
    d = out[MIME]
    self.choice.options = [(f"{o['opt']}  \u2014 {clip_words(o['explain'][len(o['opt']) + 2:], 90)}", Opt(OptOps[o["op"]], o["axis"], o["arg"])) for o in d["legal"]]
    self.undo_b.disabled = len(self.pg.history) == 1
    s = d["state"]
    self.status.value = (f"<span style='font-family:monospace'>{esc(', '.join(s['opts']) or 'no opts (NOOPT)')}: {s['time_s'] * 1e6:.1f} us, "
                         f"{s['gflops']:.2f} GFLOPS, " + ("result equal to " + esc(self.pg.reference_what) if s["correct"]
                                                          else "<b style='color:#d32f2f'>WRONG RESULT</b>") + "</span>")
    self.view.outputs = ({"output_type": "display_data", "data": out, "metadata": {}},)

  def _ipython_display_(self):
    from IPython.display import display
    display(self.box)
