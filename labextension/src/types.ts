/**
 * The trace document (application/vnd.lazynb.trace+json, see lazynb/notebook/tracedoc.py) as typed data.
 *
 * The payload is untrusted: `readTrace` copies it into these shapes, coercing every field to the
 * type the views expect (strings stay strings, numbers are finite numbers, lists are lists), so no
 * view ever has to guess what a field holds.
 */

export const MIME_TYPE = 'application/vnd.lazynb.trace+json';

/** A size: a number, or a symbolic size's expression as text ("i", "(i*4)"). */
export type Dim = number | string;

export interface IGraphNode {
  id: number;
  op: string;
  dtype: string;
  arg: string;
  shape: Dim[] | null;
  kind: string;
}

export interface IGraph {
  nodes: IGraphNode[];
  edges: [number, number][];
  root: number | null;
  totalNodes: number;
  truncated: boolean;
}

export interface IUOpRow {
  i: number;
  op: string;
  dtype: string;
  src: number[];
  arg: string;
}

/** Where a learner's result at one stage first differs from lazynb's own (lazynb.pipeline.use). */
export interface IStageDifference {
  stage: string;
  message: string;
  /** a source's line, from 1 */
  line: number | null;
  /** a UOp list's entry */
  index: number | null;
  /** a graph node's id */
  node: number | null;
}

/** lazynb's own results next to a learner's, from the first replaced code stage on (null: not computed). */
export interface IStageReference {
  stages: string[];
  opts: string[] | null;
  loweredGraph: string | null;
  uops: IUOpRow[] | null;
  source: string | null;
  differences: IStageDifference[];
}

export interface IViewPart {
  shape: number[];
  strides: number[];
  offset: number;
  mask: number[][] | null;
  contiguous: boolean | null;
}

export interface IBufferAccess {
  buf: number | null;
  access: string;
  index: string;
  valid: string;
  shape: number[];
  axisNames: string[];
  views: IViewPart[];
  astViews: IViewPart[];
  movement: [string, string][];
  /** the ShapeTracker picture's data (read by stpicture.ts), or null */
  picture: unknown | null;
}

export interface IKernel {
  id: number;
  name: string;
  displayName: string;
  nameParts: [string, string][];
  device: string;
  language: string;
  source: string;
  globalSize: Dim[];
  localSize: number[];
  opts: string[];
  fullShape: Dim[];
  axisTypes: string[];
  timeS: number;
  runs: number;
  compileS: number | null;
  gflops: number;
  gbs: number;
  uops: IUOpRow[];
  /** line index -> uop indices (line 0 is the signature) */
  lineMap: number[][];
  views: IBufferAccess[];
  graph: string | null;
  loweredGraph: string | null;
  timings: [string, number][];
  /** the kernel's int arguments (symbolic sizes) and each one's value in its last run */
  vars: string[];
  varVals: [string, number][];
  /** the code stages a learner's function ran for this kernel */
  replaced: string[];
  reference: IStageReference | null;
}

export interface IScheduleBuf {
  buf: number | null;
  role: string;
  size: number;
  dtype: string;
  device: string;
}

export interface IScheduleItem {
  index: number;
  kind: string;
  reason: string;
  kernel: number | null;
  bufs: IScheduleBuf[];
  graph: string | null;
}

export interface IRewriteStep {
  pattern: string;
  before: string;
  after: string;
}

export interface IRewritePass {
  name: string;
  /** pipeline stage: tensor graph, kernels, lowered, simplified, linearized (null: outside the compiler) */
  stage: string | null;
  steps: IRewriteStep[];
  totalSteps: number;
  beforeGraph: string | null;
  afterGraph: string | null;
  /** the learner's stage this pass ran inside (lazynb.pipeline.use), or null */
  replacedStage: string | null;
}

export interface ITraceDoc {
  version: number;
  settings: [string, string][];
  schedule: IScheduleItem[];
  kernels: IKernel[];
  graphs: Map<string, IGraph>;
  rewrites: IRewritePass[];
  tensorGraphs: string[];
  /** tensors that were constants after folding, so needed no kernel */
  foldedConstants: number;
  /** the stages a learner's function ran in place of lazynb's, in pipeline order */
  replacedStages: string[];
  timing: { totalS: number; compileS: number; runS: number };
  error: { type: string; message: string } | null;
  show: string[] | null;
  /** show_st's pictures (read by stpicture.ts) */
  pictures: unknown[];
  /** why parts were left out of an oversized trace (lazynb.notebook.tracedoc.bounded), or null */
  truncated: string | null;
}

// ---- coercion helpers: every read of the payload goes through one of these

type Obj = Record<string, unknown>;

export function obj(x: unknown): Obj {
  return x !== null && typeof x === 'object' && !Array.isArray(x)
    ? (x as Obj)
    : {};
}

export function arr(x: unknown): unknown[] {
  return Array.isArray(x) ? x : [];
}

export function str(x: unknown, fallback = ''): string {
  if (typeof x === 'string') {
    return x;
  }
  if (typeof x === 'number' || typeof x === 'boolean') {
    return String(x);
  }
  return fallback;
}

export function num(x: unknown, fallback = 0): number {
  return typeof x === 'number' && Number.isFinite(x) ? x : fallback;
}

export function numOrNull(x: unknown): number | null {
  return typeof x === 'number' && Number.isFinite(x) ? x : null;
}

export function nums(x: unknown): number[] {
  return arr(x).map(v => num(v));
}

/** Sizes: numbers stay numbers, symbolic sizes stay their expression text. */
export function dims(x: unknown): Dim[] {
  return arr(x).map(v => (typeof v === 'string' ? v : num(v)));
}

function strOrNull(x: unknown): string | null {
  return typeof x === 'string' ? x : null;
}

export function readGraph(x: unknown): IGraph {
  const g = obj(x);
  const nodes = arr(g.nodes).map((n, i) => {
    const o = obj(n);
    return {
      id: num(o.id, i),
      op: str(o.op, '?'),
      dtype: str(o.dtype),
      arg: str(o.arg),
      shape: Array.isArray(o.shape) ? dims(o.shape) : null,
      kind: str(o.kind, 'other')
    };
  });
  const edges = arr(g.edges)
    .filter(e => Array.isArray(e) && e.length >= 2)
    .map((e): [number, number] => [
      num((e as unknown[])[0], -1),
      num((e as unknown[])[1], -1)
    ]);
  return {
    nodes,
    edges,
    root: numOrNull(g.root),
    totalNodes: num(g.total_nodes, nodes.length),
    truncated: g.truncated === true
  };
}

function readViewPart(x: unknown): IViewPart {
  const v = obj(x);
  return {
    shape: nums(v.shape),
    strides: nums(v.strides),
    offset: num(v.offset),
    mask: Array.isArray(v.mask) ? arr(v.mask).map(nums) : null,
    contiguous: typeof v.contiguous === 'boolean' ? v.contiguous : null
  };
}

function readAccess(x: unknown): IBufferAccess {
  const a = obj(x);
  return {
    buf: numOrNull(a.buf),
    access: str(a.access),
    index: str(a.index),
    valid: str(a.valid),
    shape: nums(a.shape),
    axisNames: arr(a.axis_names).map(v => str(v)),
    views: arr(a.views).map(readViewPart),
    astViews: arr(a.ast_views).map(readViewPart),
    movement: arr(a.movement).map(
      m => [str(arr(m)[0]), str(arr(m)[1])] as [string, string]
    ),
    picture: a.picture ?? null
  };
}

/** line_map arrives as a list (line -> uops) or as an object with string keys; both become a list. */
export function readLineMap(x: unknown): number[][] {
  if (Array.isArray(x)) {
    return x.map(v => nums(v).filter(i => i >= 0));
  }
  const out: number[][] = [];
  for (const [k, v] of Object.entries(obj(x))) {
    const line = Number(k);
    if (Number.isInteger(line) && line >= 0 && line < 1e6) {
      while (out.length <= line) {
        out.push([]);
      }
      out[line] = nums(v).filter(i => i >= 0);
    }
  }
  return out;
}

function readUOpRow(x: unknown, j: number): IUOpRow {
  const o = obj(x);
  return {
    i: num(o.i, j),
    op: str(o.op, '?'),
    dtype: str(o.dtype),
    src: nums(o.src),
    arg: str(o.arg)
  };
}

function readStageDifference(x: unknown): IStageDifference {
  const d = obj(x);
  return {
    stage: str(d.stage),
    message: str(d.message),
    line: numOrNull(d.line),
    index: numOrNull(d.index),
    node: numOrNull(d.node)
  };
}

function readStageReference(x: unknown): IStageReference {
  const r = obj(x);
  return {
    stages: arr(r.stages).map(v => str(v)),
    opts: Array.isArray(r.opts) ? r.opts.map(v => str(v)) : null,
    loweredGraph: strOrNull(r.lowered_graph),
    uops: Array.isArray(r.uops) ? r.uops.map(readUOpRow) : null,
    source: strOrNull(r.source),
    differences: arr(r.differences).map(readStageDifference)
  };
}

function readKernel(x: unknown, i: number): IKernel {
  const k = obj(x);
  const name = str(k.name, `kernel ${i}`);
  return {
    id: num(k.id, i),
    name,
    displayName: str(k.display_name, name),
    nameParts: arr(k.name_parts).map(
      p => [str(arr(p)[0]), str(arr(p)[1])] as [string, string]
    ),
    device: str(k.device),
    language: str(k.language),
    source: str(k.source),
    globalSize: dims(k.global_size),
    localSize: nums(k.local_size),
    opts: arr(k.opts).map(v => str(v)),
    fullShape: dims(k.full_shape),
    axisTypes: arr(k.axis_types).map(v => str(v)),
    timeS: num(k.time_s),
    runs: num(k.runs),
    compileS: numOrNull(k.compile_s),
    gflops: num(k.gflops),
    gbs: num(k.gbs),
    uops: arr(k.uops).map(readUOpRow),
    lineMap: readLineMap(k.line_map),
    views: arr(k.views).map(readAccess),
    graph: strOrNull(k.graph),
    loweredGraph: strOrNull(k.lowered_graph),
    timings: Object.entries(obj(k.timings)).map(
      ([n, v]) => [n, num(v)] as [string, number]
    ),
    vars: arr(k.vars).map(v => str(v)),
    varVals: Object.entries(obj(k.var_vals)).map(
      ([n, v]) => [n, num(v)] as [string, number]
    ),
    replaced: arr(k.replaced).map(v => str(v)),
    reference:
      k.reference === null || k.reference === undefined
        ? null
        : readStageReference(k.reference)
  };
}

function readScheduleItem(x: unknown, i: number): IScheduleItem {
  const s = obj(x);
  return {
    index: num(s.index, i),
    kind: str(s.kind),
    reason: str(s.reason),
    kernel: numOrNull(s.kernel),
    bufs: arr(s.bufs).map(b => {
      const o = obj(b);
      return {
        buf: numOrNull(o.buf),
        role: str(o.role),
        size: num(o.size),
        dtype: str(o.dtype),
        device: str(o.device)
      };
    }),
    graph: strOrNull(s.graph)
  };
}

function readRewrite(x: unknown): IRewritePass {
  const r = obj(x);
  const steps = arr(r.steps).map(s => {
    const o = obj(s);
    return {
      pattern: str(o.pattern),
      before: str(o.before),
      after: str(o.after)
    };
  });
  return {
    name: str(r.name, 'rewrite'),
    stage: strOrNull(r.stage),
    steps,
    totalSteps: num(r.total_steps, steps.length),
    beforeGraph: strOrNull(r.before_graph),
    afterGraph: strOrNull(r.after_graph),
    replacedStage: strOrNull(r.replaced_stage)
  };
}

/** Copy an untrusted payload into a TraceDoc. Never throws. */
export function readTrace(data: unknown): ITraceDoc {
  const d = obj(data);
  const graphs = new Map<string, IGraph>();
  for (const [id, g] of Object.entries(obj(d.graphs))) {
    graphs.set(id, readGraph(g));
  }
  const timing = obj(d.timing);
  const err = d.error === null || d.error === undefined ? null : obj(d.error);
  return {
    version: num(d.version),
    settings: Object.entries(obj(d.settings)).map(
      ([k, v]) => [k, str(v)] as [string, string]
    ),
    schedule: arr(d.schedule).map(readScheduleItem),
    kernels: arr(d.kernels).map(readKernel),
    graphs,
    rewrites: arr(d.rewrites).map(readRewrite),
    tensorGraphs: arr(d.tensor_graphs).map(v => str(v)),
    foldedConstants: num(d.folded_constants),
    replacedStages: arr(d.replaced_stages).map(v => str(v)),
    timing: {
      totalS: num(timing.total_s),
      compileS: num(timing.compile_s),
      runS: num(timing.run_s)
    },
    error:
      err === null
        ? null
        : { type: str(err.type, 'Error'), message: str(err.message) },
    show: Array.isArray(d.show) ? d.show.map(v => str(v)) : null,
    pictures: arr(d.pictures),
    truncated:
      d.truncated === null || d.truncated === undefined
        ? null
        : str(obj(d.truncated).note, 'This trace was truncated.')
  };
}
