"""The trace document: what a block of code made the compiler do, as versioned, JSON-ready data.

A `Trace` is built from the events a Recorder collected (see lazynb.trace). `Trace.to_json()` gives the
`application/vnd.lazynb.trace+json` document that the notebook views and the JupyterLab extension render:

  version, generator, settings            format version 1, flags in force
  schedule   [{index, kind, reason, kernel, bufs: [{buf, role, size, dtype, device}], graph}]
  kernels    [{id, name, name_parts, device, language, source, global_size, local_size, opts, full_shape,
               axis_types, time_s, runs, compile_s, op_estimate, mem_estimate, gflops, gbs, uops, line_map,
               views, graph, lowered_graph, timings, replaced, reference}]
             replaced: the code stages a learner's function ran (lazynb.pipeline.use); reference: null, or lazynb's own
             results from the first replaced stage on, as the views show them: {stages, opts, lowered_graph, uops,
             source, differences: [{stage, message, line, index, node}]} (where yours first differs, per stage)
  replaced_stages  every stage a learner's function ran in this block, in pipeline order
  graphs     {id: {nodes: [{id, op, dtype, arg, shape, kind}], edges: [[src, dst]], total_nodes, truncated}}
  views      every buffer access of every kernel: {kernel, buf, access, views, index, valid, movement, picture}
             (picture: lazynb.notebook.picture's data for loads and stores; null for symbolic sizes and past PICTURE_LIMIT)
  pictures   only in show_st's documents (show: ["stpicture"]): [picture + {title, movement}]
  rewrites   [{name, stage, steps: [{pattern, before, after}], before_graph, after_graph, replaced_stage}] in the order
             they ran; stage is the pipeline stage (uop.ops.STAGES: tensor graph, kernels, lowered, simplified, linearized)
             or null; replaced_stage names the learner's stage the pass ran inside (lazynb.pipeline.use), or is null
  tensor_graphs [graph ids of the lazy graphs that were scheduled]
  folded_constants  how many realized tensors were constants after folding (no kernel)
  timing     {total_s, compile_s, run_s}
  error      null, or {type, message} if the block raised
Everything is plain data (strings, numbers, lists): the renderers treat it as untrusted text.
A %%tinygrad output saves this document once, packed inside its text/html; its MIME entry under this type is then a
stub ({version, payload: "text/html", settings, timing, error, show, kernels: [names and times]}): see lazynb.notebook.viz.
"""
from __future__ import annotations
import json, re, time
from typing import Any
from lazynb import trace, pipeline
from lazynb.device import Device
from lazynb.helpers import strip_ansi, ContextVar, plural
from lazynb.uop.ops import UOp, Ops, GroupOp, sym_str
from lazynb.notebook.picture import picture

VERSION = 1
MIME = "application/vnd.lazynb.trace+json"
GRAPH_NODE_LIMIT = 400
PICTURE_CAP = 8       # cells per grid dim of the ShapeTracker picture of each buffer access
PICTURE_LIMIT = 16    # loads and stores per document that get a picture

# op kind -> colour family, used by every graph view
def _num(x): return sym_str(x) if isinstance(x, UOp) else x  # a variable size shows as its expression ("i", "(i*4)")

def _sym_repr(arg) -> str:
  """repr, with variable sizes as names: ((0, i), (0, 4))."""
  if isinstance(arg, UOp): return sym_str(arg)
  if isinstance(arg, tuple): return "(" + ", ".join(map(_sym_repr, arg)) + ("," if len(arg) == 1 else "") + ")"
  return repr(arg)

def op_kind(op: Ops) -> str:
  if op in GroupOp.Movement or op is Ops.VIEW: return "movement"
  if op in (Ops.REDUCE_AXIS, Ops.REDUCE, Ops.DEFINE_ACC, Ops.ASSIGN): return "reduce"
  if op in (Ops.BUFFER, Ops.DEFINE_GLOBAL, Ops.DEFINE_LOCAL, Ops.UNIQUE, Ops.DEVICE, Ops.COPY): return "buffer"
  if op in (Ops.LOAD, Ops.STORE, Ops.INDEX): return "memory"
  if op in (Ops.RANGE, Ops.ENDRANGE, Ops.SPECIAL): return "loop"
  if op in (Ops.CONST, Ops.ARANGE): return "const"
  if op in GroupOp.Elementwise: return "alu"
  if op in (Ops.SINK, Ops.KERNEL): return "sink"
  return "other"

def _arg_str(u: UOp) -> str:
  a = u.arg
  if u.op is Ops.VIEW: return "ShapeTracker(" + ", ".join(f"shape={v.shape}, strides={v.strides}" + (f", offset={v.offset}" if v.offset else "") +
                                                         (f", mask={v.mask}" if v.mask else "") for v in a.views) + ")"
  s = repr(a) if a is not None else ""
  return s if len(s) <= 120 else s[:117] + "..."

class GraphStore:
  """Graphs as node/edge lists, each stored once, bounded in size."""
  def __init__(self): self.graphs: dict[str, dict] = {}; self._ids: dict[UOp, str] = {}  # noqa: E702
  def add(self, root: UOp, limit: int = GRAPH_NODE_LIMIT) -> str:
    if root in self._ids: return self._ids[root]
    gid = f"g{len(self.graphs)}"
    self._ids[root] = gid
    topo = root.toposort()
    keep = topo
    if len(topo) > limit:  # keep the nodes nearest the root
      depth: dict[UOp, int] = {root: 0}
      order = [root]
      for n in order:
        for s in n.src:
          if s not in depth: depth[s] = depth[n] + 1; order.append(s)  # noqa: E702
        if len(order) >= limit: break
      kept = set(order[:limit])
      keep = [n for n in topo if n in kept]
    ids = {n: i for i, n in enumerate(keep)}
    nodes = [{"id": i, "op": n.op.name, "dtype": str(n.dtype).removeprefix("dtypes."), "arg": _arg_str(n),
              "shape": [_num(x) for x in n.shape] if n.op not in (Ops.DEVICE, Ops.UNIQUE) and n.shape is not None else None, "kind": op_kind(n.op)}
             for n, i in ids.items()]
    edges = [[ids[s], ids[n]] for n in keep for s in n.src if s in ids]
    self.graphs[gid] = {"nodes": nodes, "edges": edges, "root": ids[root], "total_nodes": len(topo), "truncated": len(topo) > len(keep)}
    return gid

_COLOR_RE = re.compile(r"\x1b\[(\d+)m(.*?)\x1b\[0m")
_CODES = {34: "global", 94: "thread", 36: "local", 32: "group", 31: "reduce", 35: "unroll", 33: "upcast"}
def name_parts(display_name: str) -> list[list[str]]:
  """Kernel name split into [text, axis kind] pieces, for coloured rendering without ANSI codes."""
  out, pos = [], 0
  for m in _COLOR_RE.finditer(display_name):
    if m.start() > pos: out.append([display_name[pos:m.start()], ""])
    out.append([m.group(2), _CODES.get(int(m.group(1)), "")])
    pos = m.end()
  if pos < len(display_name): out.append([display_name[pos:], ""])
  return out

class Trace:
  def __init__(self, recorder):
    self.recorder = recorder
    self.started = time.perf_counter()
    self.seconds = 0.0
    self.error: BaseException | None = None
    # the flags, and the default device, in force when the recording starts (a cell's device menu sets it only while it runs)
    self.settings = {**{k: v.value for k, v in ContextVar.registry.items()}, "device": Device.DEFAULT}
    self._doc: dict | None = None
    self._shown: dict | None = None
  def finish(self):
    self.seconds = time.perf_counter() - self.started
  @property
  def events(self): return self.recorder.events

  # ---- quick accessors for scripts and tests
  @property
  def kernels(self) -> list[dict]: return self.to_json()["kernels"]
  @property
  def schedule(self) -> list[dict]: return self.to_json()["schedule"]

  def to_json(self) -> dict:
    if self._doc is None: self._doc = self._build()
    return self._doc
  def shown_json(self) -> dict:
    """to_json() within the size bound an output keeps (see `bounded`), computed once."""
    if self._shown is None: self._shown = bounded(self.to_json())
    return self._shown

  def _build(self) -> dict:
    graphs = GraphStore()
    kernels: list[dict] = []
    by_prog: dict[int, dict] = {}
    compile_s: dict[str, float] = {}
    schedule: list[dict] = []
    views: list[dict] = []
    rewrites: list[dict] = []
    tensor_graphs: list[str] = []
    folded_consts = 0  # tensors that needed no kernel: constants after folding
    run_s = 0.0
    buf_ids: dict[int, int] = {}
    def buf_id(b) -> int: return buf_ids.setdefault(id(b), len(buf_ids))
    def kernel_for(prg, kernel=None, lowered=None, item=None) -> dict:
      if id(prg) in by_prog: return by_prog[id(prg)]
      k = {"id": len(kernels), "name": prg.name, "display_name": strip_ansi(prg.display_name), "name_parts": name_parts(prg.display_name),
           "device": prg.device, "language": prg.language, "source": prg.src, "global_size": [_num(g) for g in prg.global_size],
           "local_size": list(prg.local_size), "opts": [repr(o) for o in prg.opts], "full_shape": [_num(x) for x in prg.full_shape],
           "vars": [v.arg[0] for v in prg.vars],
           "axis_types": list(prg.axis_types), "time_s": 0.0, "runs": 0, "compile_s": compile_s.get(prg.name), "op_estimate": _num(prg.op_estimate),
           "mem_estimate": 0, "gflops": 0.0, "gbs": 0.0, "timings": dict(prg.timings),
           "uops": uop_rows(prg.uops), "uops_total": len(prg.uops),
           "line_map": prg.line_map, "graph": graphs.add(prg.ast), "lowered_graph": graphs.add(lowered) if lowered is not None else None,
           "views": [], "replaced": list(prg.replaced), "reference": reference_doc(prg, graphs)}
      kv = kernel_views(prg.ast, kernel, item, PICTURE_LIMIT - sum(1 for v in views if v["picture"] is not None))
      for v in kv: v["kernel"] = k["id"]
      k["views"] = kv
      views.extend(kv)
      kernels.append(k)
      by_prog[id(prg)] = k
      return k
    def add_items(items):
      for si in items:
        schedule.append({"index": len(schedule), "kind": si.kind, "reason": getattr(si, "reason", ""), "kernel": None,
                         "bufs": [{"buf": buf_id(b), "role": "out" if i == 0 else "in", "size": b.size, "dtype": b.dtype.name, "device": b.device}
                                  for i, b in enumerate(si.bufs)],
                         "graph": graphs.add(si.ast), "var_vals": dict(getattr(si, "var_vals", {})), "_item": si})
    pending_kernel: dict[int, tuple] = {}
    replaced: set[str] = set()
    inside: list[tuple[str, int, int]] = []  # the learner's stages running now: (name, schedule items and lazy graphs before it)
    for ev in self.events:
      d = ev.data
      if ev.kind == "program": pending_kernel[id(d["program"])] = (d.get("kernel"), d.get("lowered"))
      elif ev.kind == "compile": compile_s[d["name"]] = d["seconds"]
      elif ev.kind == "schedule":
        for o in d["outs"]: tensor_graphs.append(graphs.add(o))
        folded_consts += d.get("constants", 0)
        add_items(d["items"])
      elif ev.kind == "stage":
        replaced.add(d["name"])
        if d["phase"] == "start": inside.append((d["name"], len(schedule), len(tensor_graphs)))
        elif (at := next((j for j in range(len(inside) - 1, -1, -1) if inside[j][0] == d["name"]), None)) is not None:
          _, n_items, n_graphs = inside.pop(at)
          if "items" in d:  # a learner's schedule: its items are the schedule (lazynb's, if it called it, are not)
            del schedule[n_items:]
            if len(tensor_graphs) == n_graphs: tensor_graphs.extend(graphs.add(o) for o in d["outs"])
            add_items(d["items"])
      elif ev.kind == "exec":
        run_s += d["seconds"]
        if d["kind"] != "kernel": continue
        prg = d["program"]
        kern, low = pending_kernel.get(id(prg), (prg.kernel, prg.lowered))
        k = kernel_for(prg, kern, low, d.get("item"))
        if k["compile_s"] is None: k["compile_s"] = compile_s.get(prg.name)
        k["runs"] += 1
        k["time_s"] += d["seconds"]
        k["mem_estimate"] = d["mem_estimate"]
        if prg.vars: k["op_estimate"], k["var_vals"] = d["op_estimate"], dict(d.get("var_vals") or {})  # this run's values
        if k["time_s"] > 0:
          k["gflops"] = k["op_estimate"] * k["runs"] / k["time_s"] * 1e-9
          k["gbs"] = k["mem_estimate"] * k["runs"] / k["time_s"] * 1e-9
        for s in schedule:
          if s.get("_item") is d.get("item") and s["kernel"] is None: s["kernel"] = k["id"]
      elif ev.kind == "rewrite":
        rewrites.append({"name": d["name"], "stage": d.get("stage"), "before_graph": graphs.add(d["before"]), "after_graph": graphs.add(d["after"]),
                         "steps": [{"pattern": repr(p)[:300], "before": _arg_line(b), "after": _arg_line(a)} for b, a, p in d["steps"][:200]],
                         "total_steps": len(d["steps"]), "replaced_stage": inside[-1][0] if inside else None})
    # kernels that were compiled but never ran (e.g. an error before they ran)
    for ev in self.events:
      if ev.kind == "program" and id(ev.data["program"]) not in by_prog:
        kernel_for(ev.data["program"], ev.data.get("kernel"), ev.data.get("lowered"))
    for s in schedule: s.pop("_item", None)
    for k in kernels: replaced.update(k["replaced"])
    # the header names the device(s) the kernels ran on: the cell's code may pick one (Device.DEFAULT = ..., device=...)
    settings = {**self.settings, "device": ",".join(dict.fromkeys(k["device"] for k in kernels))} if kernels else dict(self.settings)
    return {"version": VERSION, "generator": "lazynb", "settings": settings,
            "schedule": schedule, "kernels": kernels, "graphs": graphs.graphs, "views": views, "rewrites": rewrites,
            "tensor_graphs": tensor_graphs, "folded_constants": folded_consts, "replaced_stages": [n for n in pipeline.stages() if n in replaced], "timing": {"total_s": self.seconds, "compile_s": sum(compile_s.values()), "run_s": run_s},
            "error": None if self.error is None else {"type": type(self.error).__name__, "message": str(self.error)}}

  def json(self) -> str: return json.dumps(self.to_json())
  def summary(self) -> str:
    doc = self.to_json()
    ks = doc["kernels"]
    lines = [f"lazynb trace: {plural(len(doc['schedule']), 'schedule item')}, {plural(len(ks), 'kernel')}, "
             f"{doc['timing']['run_s'] * 1e3:.2f} ms run, {doc['timing']['compile_s'] * 1e3:.1f} ms compile"]
    for k in ks: lines.append(f"  {k['display_name']:30s} {k['device']:6s} runs={k['runs']} {k['time_s'] * 1e6:9.1f} us  opts={k['opts']}")
    if doc["error"]: lines.append(f"  error: {doc['error']['type']}: {doc['error']['message']}")
    return "\n".join(lines)
  def __repr__(self): return self.summary()
  def _repr_mimebundle_(self, include=None, exclude=None):
    bundle = {MIME: self.shown_json(), "text/plain": self.summary()}
    for r in trace.mime_renderers: bundle.update(r(self))  # the notebook layer's views, once it is imported
    return bundle

UOP_LIMIT = 5000
def uop_rows(uops: list[UOp]) -> list[dict]:
  pos = {u: i for i, u in enumerate(uops)}
  return [{"i": i, "op": u.op.name, "dtype": str(u.dtype).removeprefix("dtypes."), "src": [pos[s] for s in u.src if s in pos], "arg": _arg_str(u)}
          for i, u in enumerate(uops[:UOP_LIMIT])]

def reference_doc(prg, graphs: GraphStore) -> dict | None:
  """lazynb's own results for a kernel a learner's stages made (ProgramSpec.reference, computed when a trace compared),
  in the forms the views show: opts, the lowered graph (after simplify), the UOp table and the source; and where the
  learner's first differs at each stage (a graph's node is its id in the document's graph: null if a graph was cut)."""
  ref = getattr(prg, "reference", None)
  if not ref: return None
  low = ref.get("simplify")
  gid = graphs.add(low) if low is not None else None
  cut = gid is not None and graphs.graphs[gid]["truncated"] or prg.lowered is not None and graphs.graphs[graphs.add(prg.lowered)]["truncated"]
  def where(d: dict) -> dict:
    node = d.get("node") if not (d["stage"] == "simplify" and cut) else None
    return {"stage": d["stage"], "message": d["message"], "line": d.get("line"), "index": d.get("index"), "node": node}
  return {"stages": list(ref), "opts": [repr(o) for o in ref["optimize"].applied_opts] if "optimize" in ref else None,
          "lowered_graph": gid, "uops": uop_rows(ref["linearize"]) if "linearize" in ref else None, "source": ref.get("render"),
          "differences": [where(d) for d in getattr(prg, "differences", [])]}

def _arg_line(u: UOp) -> str:
  return f"{u.op.name} {str(u.dtype).removeprefix('dtypes.')} {_arg_str(u)}".strip()

def _picture(st, size) -> dict | None:
  if st.vars(): return None
  return picture(st, cap=PICTURE_CAP, mem_size=size)

def kernel_views(ast: UOp, kernel, item, pictures: int = PICTURE_LIMIT) -> list[dict]:
  """Every buffer access of a kernel: the views, with index and validity rendered with the kernel's own
  axis names (after opts), and the movement ops that produced the view."""
  if kernel is None: return []
  names = kernel.axis_names()
  accesses = []
  for u in ast.toposort():
    if u.op is Ops.LOAD: accesses.append(("load", u.src[0].arg, u.src[1]))
    elif u.op is Ops.STORE: accesses.append(("store", u.src[0].arg, u.src[1]))
    elif u.op in (Ops.CONST, Ops.ARANGE) and u.src: accesses.append((u.op.name.lower(), None, u.src[0]))
  out: list[dict[str, Any]] = []
  origins = getattr(item, "view_origins", {}) if item is not None else {}
  buf_sizes = {i: b.size for i, b in enumerate(getattr(item, "bufs", None) or ())}  # DEFINE_GLOBAL i is the item's buffer i
  def drawn() -> int: return sum(1 for a in out if a["picture"] is not None)
  for access, buf, view in accesses:
    st = kernel.view_st(view)
    idx, valid = st.render(names)
    out.append({"buf": buf, "access": access, "index": idx, "valid": valid, "shape": [_num(x) for x in st.shape], "axis_names": names,
                "views": [{"shape": [_num(x) for x in v.shape], "strides": [_num(x) for x in v.strides], "offset": _num(v.offset),
                           "mask": [[_num(x) for x in m] for m in v.mask] if v.mask else None,
                           "contiguous": v.contiguous} for v in st.views],
                "ast_views": [{"shape": [_num(x) for x in v.shape], "strides": [_num(x) for x in v.strides], "offset": _num(v.offset),
                           "mask": [[_num(x) for x in m] for m in v.mask] if v.mask else None}
                              for v in view.arg.views],
                "movement": [[op, _sym_repr(arg)] for op, arg in origins.get(view, ())],
                "picture": _picture(st, buf_sizes.get(buf)) if access in ("load", "store") and drawn() < pictures else None})
  return out

# ---- size bound: one output's trace stays small enough for a notebook file and a browser
MAX_DOC_BYTES = 2_000_000

def _size(x) -> int: return len(json.dumps(x))

def bounded(doc: dict, limit: int = MAX_DOC_BYTES) -> dict:
  """`doc` if its JSON is at most `limit` bytes; else a copy with the bulkiest detail dropped for the later kernels and
  passes, in this order, keeping the first `keep` of each and halving `keep` until it fits:
    rewrite passes' step lists and before/after graphs -> lazy tensor graphs -> ShapeTracker pictures -> kernels' UOp
    tables (and line maps, and lazynb's own UOp tables next to a learner's)
    -> kernels' graphs (and their schedule items', and lazynb's own lowered graph next to a learner's).
  The schedule, the kernel list, timings and every kernel's source (and lazynb's next to a learner's) stay; only if that
  is still too big are sources cut to their first lines. `truncated` says what went, as a note the views show."""
  full = _size(doc)
  if full <= limit: return doc
  kernels = [dict(k, reference=dict(k["reference"])) if k.get("reference") else dict(k) for k in doc["kernels"]]
  d = dict(doc, graphs=dict(doc["graphs"]), kernels=kernels, schedule=[dict(s) for s in doc["schedule"]],
           rewrites=[dict(r) for r in doc["rewrites"]], tensor_graphs=list(doc["tensor_graphs"]), views=[dict(v) for v in doc["views"]])
  gsize = {g: _size(v) + len(g) + 6 for g, v in d["graphs"].items()}
  total = full
  dropped: dict[str, int] = {}
  def drop_field(o: dict, key: str, empty, what: str):
    nonlocal total
    if o.get(key) in (None, [], {}, ""): return
    total -= _size(o[key]) - _size(empty)
    o[key] = empty
    dropped[what] = dropped.get(what, 0) + 1
  def drop_graph_ref(o: dict, key: str, what: str):
    drop_field(o, key, None, what)
  def unreferenced():
    nonlocal total
    refs = {k.get(f) for k in d["kernels"] for f in ("graph", "lowered_graph")} | {s.get("graph") for s in d["schedule"]}
    refs |= {k["reference"].get("lowered_graph") for k in d["kernels"] if k.get("reference")}
    refs |= {r.get(f) for r in d["rewrites"] for f in ("before_graph", "after_graph")} | set(d["tensor_graphs"])
    for g in [g for g in d["graphs"] if g not in refs]:
      total -= gsize[g]
      del d["graphs"][g]
  def rewrites(keep):
    for r in d["rewrites"][keep:]:
      drop_field(r, "steps", [], "rewrite step lists")
      drop_graph_ref(r, "before_graph", "rewrite graphs"); drop_graph_ref(r, "after_graph", "rewrite graphs")  # noqa: E702
  def tensor_graphs(keep):
    nonlocal total
    if len(d["tensor_graphs"]) > keep:
      dropped["lazy tensor graphs"] = dropped.get("lazy tensor graphs", 0) + len(d["tensor_graphs"]) - keep
      total -= _size(d["tensor_graphs"]) - _size(d["tensor_graphs"][:keep])
      d["tensor_graphs"] = d["tensor_graphs"][:keep]
  def pictures(keep):  # each access is in the document's list and in its kernel's
    for k in d["kernels"][keep:]:
      k["views"] = [dict(v) for v in k.get("views", [])]
      for v in k["views"]: drop_field(v, "picture", None, "ShapeTracker pictures (kernel)")
    kept = {k["id"] for k in d["kernels"][:keep]}
    for v in d["views"]:
      if v.get("kernel") not in kept: drop_field(v, "picture", None, "ShapeTracker pictures")
  def uop_tables(keep):
    for k in d["kernels"][keep:]:
      drop_field(k, "uops", [], "kernel UOp tables"); drop_field(k, "line_map", [], "kernel line maps")  # noqa: E702
      if k.get("reference"): drop_field(k["reference"], "uops", None, "lazynb's UOp tables (next to yours)")
  def kernel_graphs(keep):
    kept = {k["id"] for k in d["kernels"][:keep]}
    for k in d["kernels"][keep:]:
      drop_graph_ref(k, "graph", "kernel graphs"); drop_graph_ref(k, "lowered_graph", "lowered kernel graphs")  # noqa: E702
      if k.get("reference"): drop_graph_ref(k["reference"], "lowered_graph", "lazynb's lowered graphs (next to yours)")
    for s in d["schedule"]:
      if s.get("kernel") not in kept: drop_graph_ref(s, "graph", "schedule item graphs")
  for keep in (32, 16, 8, 4, 2, 1, 0):
    for step in (rewrites, tensor_graphs, pictures, uop_tables, kernel_graphs):
      step(keep)
      unreferenced()
      if total <= limit * 0.97: break
    if total <= limit * 0.97: break
  lines = 40
  while _size(d) > limit and lines >= 1:  # sources last, and only their tails
    for o in d["kernels"] + [k["reference"] for k in d["kernels"] if k.get("reference")]:
      src = o.get("source") or ""
      if src.count("\n") > lines:
        o["source"] = "\n".join(src.split("\n")[:lines]) + f"\n... ({src.count(chr(10)) - lines} more lines not kept: trace truncated)"
        dropped["kernel sources cut"] = dropped.get("kernel sources cut", 0) + 1
    lines //= 2
  what = ", ".join(f"{what} ({n})" for what, n in dropped.items())
  d["truncated"] = {"limit_bytes": limit, "full_bytes": full, "dropped": dropped,
                    "note": f"Trace truncated: {full / 1e6:.1f} MB is more than the {limit / 1e6:.1f} MB an output keeps, so these were left "
                            f"out (first ones kept): {what}. The schedule, kernel list, timings and sources are complete"
                            + (" except the cut sources." if "kernel sources cut" in dropped else ".")}
  return d

trace.set_document(Trace)  # lazynb.trace.capture() yields one of these
