"""BEAM search: instead of guessing opts, try them (tinygrad 0.10 has it at this path too); how it searches, times and
caches: docs/internals.md, "BEAM search"."""
from __future__ import annotations
import hashlib, json, os, statistics, sys, textwrap, time
from concurrent.futures import ThreadPoolExecutor, TimeoutError as FutureTimeout
from lazynb import trace, pipeline
from lazynb.dtype import to_storage
from lazynb.helpers import getenv, DEBUG, prod, plural
import numpy as np
from lazynb.device import Device, Buffer, diskcache_get, diskcache_put
from lazynb.uop.ops import UOp, Ops, pretty
from lazynb.codegen import get_program, set_beam_search
from lazynb.codegen.kernel import Kernel, Opt, OptOps, AxisType, KernelOptError, all_opt_candidates, hand_coded_optimizations
from lazynb.engine.realize import CompiledRunner
from lazynb.renderer import ProgramSpec

CANDIDATE_TIMEOUT_S = float(os.environ.get("BEAM_TIMEOUT", "10"))
# limits on the unrolled body: accumulators (upcast product) and upcast x unroll. Bigger bodies spill registers
# and take seconds to compile. The heuristic's AVX-512 matmul tile (8x32, unrolled by 4) is 256 and 1024: the limits.
MAX_UPCAST, MAX_BODY = 256, 1024

def ast_key(ast: UOp, device: str, width: int) -> str: return hashlib.sha256(f"{device}|{width}|{pretty(ast, limit=100000)}".encode()).hexdigest()

def scratch_buffers(k: Kernel):
  """Scratch buffers big enough for every index the kernel can touch, filled with random data."""
  globs = {u.arg: u.dtype.base for u in k.ast.toposort() if u.op is Ops.DEFINE_GLOBAL}
  sizes = dict.fromkeys(globs, 1)
  for view, st in zip(k.views, k.sts):
    if any(lo >= hi for v in st.views if v.mask for lo, hi in v.mask): continue  # nothing valid: reads no memory
    # memory is read through the bottom view, where every mask holds: its own extent bounds the index (the rendered
    # index's range does not, with several views: past a mask it may be anything)
    bottom = st.views[0]
    top = bottom.offset + sum(max(lo * s, (hi - 1) * s) for (lo, hi), s in zip(bottom.mask or [(0, n) for n in bottom.shape], bottom.strides))
    for u in k.ast.toposort():
      if u.op in (Ops.LOAD, Ops.STORE) and u.src[1] is view: sizes[u.src[0].arg] = max(sizes[u.src[0].arg], top + 1)
  bufs = [Buffer(k.renderer.device, max(sizes[i], 1), globs[i]).allocate() for i in range(len(sizes))]
  for i, b in enumerate(bufs[1:], 1): b.copyin(to_storage(np.random.default_rng(i).random(b.size), b.dtype).view(np.uint8).data)
  return bufs

class _Timer:
  """Compiles and times candidates; a run that exceeds the time limit is abandoned."""
  def __init__(self, bufs):
    self.bufs = bufs
    self.workers = max(1, os.cpu_count() or 1)
    self.pool = ThreadPoolExecutor(self.workers)
    self.runner_pool = ThreadPoolExecutor(1)
    self.skipped: list[str] = []
  def runner(self, k: Kernel | ProgramSpec, lib: bytes | None = None, compile_s: float = 0.0, batch: int = 1, render_only: bool = False):
    """Compile and load candidate `k` (render_only: just its ProgramSpec); given its ProgramSpec, load `lib` (its binary)."""
    p = k if isinstance(k, ProgramSpec) else get_program(k.ast, k.renderer, k.applied_opts)
    return p if render_only else CompiledRunner(p, lib, compile_s, batch=batch)
  def _skip(self, k, e: Exception):
    self.skipped.append(f"{getattr(k, 'applied_opts', getattr(k, 'opts', '?'))}: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
  def compile_all(self, ks: list[Kernel]) -> list:
    """A runner per candidate (None: skipped). A compiler that batches gets one call per worker thread, each for its
    share of the candidates (a failed batch is compiled one by one, so one bad candidate skips only itself)."""
    def one(k):
      try: return self.runner(k)
      except Exception as e: return self._skip(k, e)
    compiler = Device[ks[0].renderer.device].compiler if ks else None
    if compiler is None or not compiler.batches or len(ks) < 2 or pipeline.replacement("compile") is not None:
      return list(self.pool.map(pipeline.carry(one), ks))
    def render(k):
      try: return self.runner(k, render_only=True)
      except Exception as e: return self._skip(k, e)
    progs = list(self.pool.map(pipeline.carry(render), ks))
    live = [i for i, p in enumerate(progs) if p is not None]
    workers = self.workers
    def chunk(idx: list[int]) -> dict:
      st = time.perf_counter()
      try: libs = compiler.compile_batch([(progs[i].name, progs[i].src) for i in idx])
      except Exception: return {i: one(ks[i]) for i in idx}
      share, out = (time.perf_counter() - st) / len(idx), {}
      for i, lib in zip(idx, libs):
        compiler.store(progs[i].src, lib)
        try: out[i] = self.runner(progs[i], lib, share, len(idx))
        except Exception as e: out[i] = self._skip(progs[i], e)
      return out
    done: dict = {}
    for d in self.pool.map(pipeline.carry(chunk), [c for c in (live[j::workers] for j in range(workers)) if c]): done.update(d)
    return [done.get(i) for i in range(len(ks))]
  def time(self, r, runs: int, warmup: bool = True) -> float:
    """Median of `runs` timed runs; with `warmup`, a first run under 20 ms is not counted (docs/internals.md, "BEAM search")."""
    if r is None: return float("inf")
    ts: list[float] = []
    while len(ts) < runs:
      fut = self.runner_pool.submit(pipeline.carry(r), self.bufs)
      try: t = fut.result(timeout=CANDIDATE_TIMEOUT_S)
      except FutureTimeout:
        self.skipped.append(f"{r.p.opts}: ran longer than {CANDIDATE_TIMEOUT_S} s")
        self.runner_pool = ThreadPoolExecutor(1)  # leave the stuck one behind
        return float("inf")
      except Exception as e:
        self.skipped.append(f"{r.p.opts}: {type(e).__name__}: {e}")
        return float("inf")
      if warmup and not ts and t < 0.02:  # the first run, and short: not counted
        warmup = False
        continue
      ts.append(t)
    return statistics.median(ts)
  def close(self): self.pool.shutdown(wait=False); self.runner_pool.shutdown(wait=False)  # noqa: E702

def parse_cached(hit: bytes) -> list[Opt] | None:
  """The opts of a BEAM cache entry, a JSON list of [op name, axis, amount]; None for anything else."""
  try: entry = json.loads(hit)
  except (ValueError, TypeError): return None
  if not isinstance(entry, list): return None
  opts = []
  for o in entry:
    if not (isinstance(o, list) and len(o) == 3 and isinstance(o[0], str) and o[0] in OptOps.__members__): return None
    if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in o[1:]): return None
    opts.append(Opt(OptOps[o[0]], o[1], o[2]))
  return opts

def _applied(k: Kernel, opts: list[Opt]) -> Kernel | None:
  """k with opts applied in order (k changes), or None when one does not apply."""
  try:
    for o in opts: k.apply_opt(o)
  except KernelOptError: return None
  return k
def replay(k: Kernel, opts: list[Opt]) -> Kernel | None: return _applied(Kernel(k.ast, k.renderer), opts)

def neighbours(k: Kernel) -> list[Kernel]:
  """Kernels one step away: one action added, one removed, or one action's amount changed."""
  out = [nk for opt in all_opt_candidates(k) if (nk := _applied(k.copy(), [opt])) is not None]
  opts = k.applied_opts
  for i, o in enumerate(opts):
    variants = [opts[:i] + opts[i + 1:]]
    if o.op in (OptOps.UPCAST, OptOps.UNROLL, OptOps.LOCAL, OptOps.GROUPTOP):
      variants += [opts[:i] + [Opt(o.op, o.axis, a)] + opts[i + 1:] for a in (2, 4, 8, 16) if a != o.arg]
    out += [rk for v in variants if (rk := replay(k, v)) is not None]
  return out

def get_kernel_actions(k: Kernel, include_0: bool = True) -> dict[int, Kernel]:
  """tinygrad 0.10's name for the search's moves from k, numbered (0: k itself): here its neighbours."""
  return dict(enumerate(([k] if include_0 else []) + neighbours(k)))

def too_big(k: Kernel) -> bool: return prod(k.full_shape[i] for i in k.axes_of(AxisType.UPCAST)) > MAX_UPCAST or k.upcast_size() > MAX_BODY

def beam_search(k: Kernel, width: int, cache: bool = True, on_progress=None) -> Kernel:
  """The fastest kernel BEAM finds (`cache=False`: search even when the disk cache knows; docs/internals.md, "BEAM search").
  Each round's progress goes to `on_progress(line)` (None at the end), else to stdout, one line rewritten (BEAM_PROGRESS=0: none)."""
  key = ast_key(k.ast, k.renderer.device, width)
  if cache and getenv("IGNORE_BEAM_CACHE", 0) == 0 and (hit := diskcache_get("beam", key)) is not None:
    if (opts := parse_cached(hit)) is not None and (nk := replay(k, opts)) is not None:
      trace.emit("beam", name=nk.name, cached=True, opts=list(nk.applied_opts), rounds=0, tried=0, seconds=0.0, skipped=[],
                 width=width, start=None, rounds_detail=[], path=[])
      return nk
    # a stale entry (another version wrote it, or it was damaged): search again, and the result replaces it
  with trace.muted(), Device[k.renderer.device].compiler.quiet(): best, info = _search(k, width, key, on_progress)
  trace.emit("beam", name=best.name, cached=False, opts=list(best.applied_opts), width=width, **info)
  return best

def _search(k: Kernel, width: int, key: str, on_progress=None) -> tuple[Kernel, dict]:
  st = time.perf_counter()
  timer = _Timer(scratch_buffers(k))
  progress = on_progress or (_print_progress if DEBUG >= 1 or getenv("BEAM_PROGRESS", 1) else None)
  k = k.copy()
  hand_coded_optimizations(k)
  best_t = timer.time(timer.compile_all([k])[0], 5)
  beam: list[tuple[float, Kernel]] = [(best_t, k)]
  tried, rounds = 1, 0
  seen = {tuple(k.applied_opts)}
  # what the search saw, for readers of the `beam` event: each round's candidates (opts, seconds: the median of 5 runs for
  # those near the best, else one run; None when it failed or timed out) and the one it kept
  opening = {"opts": list(k.applied_opts), "seconds": _finite(best_t)}
  detail: list[dict] = []
  path = [list(k.applied_opts)]
  try:
    while True:
      rounds += 1
      cands = []
      for _, bk in beam:
        for nk in neighbours(bk):
          if too_big(nk) or (sig := tuple(nk.applied_opts)) in seen: continue
          seen.add(sig)
          cands.append(nk)
      if not cands: break
      runners = timer.compile_all(cands)  # in parallel: the C compiler runs outside the GIL
      # one run each (after a warm-up); a candidate within 1.5x of the best so far is timed again, 5 runs (the median counts)
      first = [timer.time(r, 1) for r in runners]
      limit = min([best_t] + first) * 1.5
      timed = sorted(((timer.time(r, 5, warmup=False) if t <= limit else t), i) for i, (r, t) in enumerate(zip(runners, first)))
      tried += len(cands)
      round_best = timed[0][0]
      detail.append({"round": rounds, "candidates": [{"opts": list(cands[i].applied_opts), "seconds": _finite(t), "runs": 5 if first[i] <= limit else 1}
                                                     for t, i in sorted(timed, key=lambda x: x[1])],
                     "best": list(cands[timed[0][1]].applied_opts), "best_s": _finite(round_best), "improved": round_best < best_t,
                     "kept": [list(cands[i].applied_opts) for t, i in timed[:width] if t < float("inf")] if round_best < best_t else []})
      if progress:
        progress(f"BEAM {width}: round {rounds}, {plural(tried, 'kernel')} tried, best {min(best_t, round_best) * 1e6:.1f} us "
                 f"{cands[timed[0][1]].applied_opts if round_best < best_t else beam[0][1].applied_opts}")
      if round_best >= best_t: break
      best_t = round_best
      beam = [(t, cands[i]) for t, i in timed[:width] if t < float("inf")]
      path.append(list(beam[0][1].applied_opts))
  finally:
    timer.close()
    if progress: progress(None)
  best = beam[0][1]
  if DEBUG >= 2 and timer.skipped: print("BEAM skipped:\n  " + "\n  ".join(timer.skipped[:20]), file=sys.stderr)
  diskcache_put("beam", key, json.dumps([(o.op.name, o.axis, o.arg) for o in best.applied_opts]).encode())
  return best, {"rounds": rounds, "tried": tried, "seconds": time.perf_counter() - st, "best_s": best_t, "skipped": timer.skipped[:50],
                "start": opening, "rounds_detail": detail, "path": path}

def _print_progress(line: str | None):  # stdout (stderr shows as an error in a notebook); cut at a word, at most 160 characters
  print(f"\r{textwrap.shorten(line, 160, placeholder=' ...')}" if line else "", end="" if line else "\n", flush=True)

def _finite(t: float) -> float | None: return t if t < float("inf") else None

set_beam_search(beam_search)  # codegen.optimize runs it when BEAM is set (codegen cannot import this module: it is above it)
