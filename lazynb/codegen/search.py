"""BEAM search: instead of guessing opts, try them.

Start from the kernel with no opts. Each round, apply every single action (upcast an axis by 2/4/8,
unroll the reduce, thread the outer loop ...) to every kernel in the beam, compile the candidates in
parallel, time each one on scratch buffers (median of a few runs), and keep the `width` fastest. Stop when
a round finds nothing faster. The chosen actions are cached on disk (keyed by AST, device and width), so
the second run of the same kernel costs nothing.
"""
from __future__ import annotations
import hashlib, json, os, statistics, sys, time
from concurrent.futures import ThreadPoolExecutor
from lazynb import trace
from lazynb.helpers import getenv, DEBUG
from lazynb.uop.ops import UOp, Ops, pretty
from lazynb.codegen.kernel import Kernel, Opt, OptOps, KernelOptError, all_opt_candidates

def ast_key(ast: UOp, device: str, width: int) -> str:
  return hashlib.sha256(f"{device}|{width}|{pretty(ast, limit=100000)}".encode()).hexdigest()

def _buffers_for(k: Kernel):
  """Scratch buffers big enough for every index the kernel can touch."""
  import numpy as np
  from lazynb.device import Buffer
  from lazynb.dtype import dtypes
  sizes: dict[int, tuple[int, object]] = {}
  for view, st in zip(k.views, k.sts):
    idxs = [UOp(Ops.SPECIAL, dtypes.index, (), (f"i{i}", s)) if s > 1 else UOp.const(dtypes.index, 0) for i, s in enumerate(st.shape)]
    idx, _ = st.to_indexed_uops(idxs)
    users = [u for u in k.ast.toposort() if u.op in (Ops.LOAD, Ops.STORE) and u.src[1] is view]
    for u in users:
      g = u.src[0]
      sizes[g.arg] = (max(sizes.get(g.arg, (0, None))[0], int(idx.vmax) + 1), g.dtype.base)
  bufs = []
  for i in range(len(sizes)):
    n, dt = sizes[i]
    b = Buffer(k.renderer.device, max(n, 1), dt).allocate()
    if i > 0: b.copyin(memoryview(np.random.default_rng(i).random(max(n, 1)).astype(dt.np).view(np.uint8)))
    bufs.append(b)
  return bufs

def _time(k: Kernel, bufs, runs: int = 3) -> float:
  from lazynb.engine.realize import CompiledRunner
  from lazynb.codegen import get_program
  prg = get_program(k.ast, k.renderer, k.applied_opts)
  r = CompiledRunner(prg)
  return statistics.median(r(bufs) for _ in range(runs))

def beam_search(k: Kernel, width: int) -> Kernel:
  from lazynb.device import diskcache_get, diskcache_put
  key = ast_key(k.ast, k.renderer.device, width)
  if getenv("IGNORE_BEAM_CACHE", 0) == 0 and (hit := diskcache_get("beam", key)) is not None:
    for op, axis, arg in json.loads(hit): k.apply_opt(Opt(OptOps[op], axis, arg))
    trace.emit("beam", name=k.name, cached=True, opts=list(k.applied_opts), rounds=0, tried=0, seconds=0.0)
    return k
  with trace.muted(): return _search(k, width, key)

def _search(k: Kernel, width: int, key: str) -> Kernel:
  from lazynb.device import diskcache_put
  st = time.perf_counter()
  bufs = _buffers_for(k)
  # candidates are timed one at a time (timing is what we measure), compiled in parallel
  pool = ThreadPoolExecutor(max(1, os.cpu_count() or 1))
  def try_one(c: Kernel) -> tuple[float, Kernel]:
    try: return _time(c, bufs), c
    except Exception as e:  # a candidate that fails to build or run is skipped, not fatal
      if DEBUG >= 2: print(f"BEAM: skipped {c.applied_opts}: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr)
      return float("inf"), c
  best_t, _ = try_one(k)
  beam: list[tuple[float, Kernel]] = [(best_t, k)]
  tried, rounds = 1, 0
  seen = {tuple(k.applied_opts)}
  while True:
    rounds += 1
    cands = []
    for _, bk in beam:
      for opt in all_opt_candidates(bk):
        nk = bk.copy()
        try: nk.apply_opt(opt)
        except KernelOptError: continue
        if nk.upcast_size() > 64: continue
        sig = tuple(nk.applied_opts)
        if sig in seen: continue
        seen.add(sig)
        cands.append(nk)
    if not cands: break
    # compile all candidates in parallel (the compiler releases the GIL), then time them one by one
    list(pool.map(_safe_compile, cands))
    timed = sorted((try_one(c) for c in cands), key=lambda x: x[0])
    tried += len(cands)
    if DEBUG >= 1 or getenv("BEAM_PROGRESS", 1):
      print(f"\rBEAM {width}: round {rounds}, {tried} kernels tried, best {min(best_t, timed[0][0]) * 1e6:9.1f} us "
            f"{timed[0][1].applied_opts}", end="", file=sys.stderr)
    if timed[0][0] >= best_t: break
    best_t = timed[0][0]
    beam = timed[:width]
  if DEBUG >= 1 or getenv("BEAM_PROGRESS", 1): print(file=sys.stderr)
  pool.shutdown(wait=False)
  best = beam[0][1]
  diskcache_put("beam", key, json.dumps([(o.op.name, o.axis, o.arg) for o in best.applied_opts]).encode())
  trace.emit_unmuted("beam", name=best.name, cached=False, opts=list(best.applied_opts), rounds=rounds, tried=tried, seconds=time.perf_counter() - st)
  return best

def _safe_compile(c: Kernel):
  from lazynb.codegen import get_program
  from lazynb.device import Device
  try:
    prg = get_program(c.ast, c.renderer, c.applied_opts)
    Device[prg.device].compiler.compile_cached(prg.src)
  except Exception: pass
