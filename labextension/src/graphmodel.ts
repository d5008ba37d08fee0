/**
 * From a trace graph to what the graph view draws: which nodes (collapsed, and capped for very
 * large graphs), their labels and box sizes, and the layout input. Pure: no DOM.
 */
import { filterGraph } from './graphfilter';
import { ILayoutInput } from './layout';
import { clip, fmtTuple } from './dom';
import { IGraph, IGraphNode } from './types';

/** Above this many nodes only the ones nearest the root are drawn (the rest are counted). */
export const MAX_DRAWN_NODES = 4000;

export interface IDrawNode {
  node: IGraphNode;
  label: string;
  sub: string;
  tooltip: string;
  w: number;
  h: number;
}

export interface IDrawModel {
  nodes: IDrawNode[];
  /** edges as indices into `nodes` */
  edges: [number, number][];
  removed: number;
  omitted: number;
  totalNodes: number;
  truncated: boolean;
}

const CHAR_W = 7.0;
const SUB_CHAR_W = 6.0;

export function nodeLabel(
  n: IGraphNode,
  hidden: number
): { label: string; sub: string; tooltip: string } {
  const label = hidden > 0 ? `${n.op} +${hidden}` : n.op;
  const sub = clip(n.arg || n.dtype, 26);
  const lines = [`${n.op}  ${n.dtype}`];
  if (n.arg) {
    lines.push(`arg: ${n.arg}`);
  }
  if (n.shape) {
    lines.push(`shape: ${fmtTuple(n.shape)}`);
  }
  if (hidden > 0) {
    lines.push(
      `${hidden} collapsed input${hidden === 1 ? '' : 's'} (index/const/loop)`
    );
  }
  return { label, sub, tooltip: lines.join('\n') };
}

export function nodeSize(label: string, sub: string): { w: number; h: number } {
  const w = Math.max(label.length * CHAR_W, sub.length * SUB_CHAR_W) + 16;
  return { w: Math.min(240, Math.max(44, Math.round(w))), h: sub ? 34 : 22 };
}

/** Keep at most `max` nodes: those nearest the root (breadth-first along inputs). */
export function nearestToRoot(
  nodes: IGraphNode[],
  edges: [number, number][],
  root: number | null,
  max: number
): Set<number> {
  const inputs = new Map<number, number[]>();
  const hasOut = new Set<number>();
  for (const [a, b] of edges) {
    (inputs.get(b) ?? inputs.set(b, []).get(b)!).push(a);
    hasOut.add(a);
  }
  const ids = new Set(nodes.map(n => n.id));
  const start =
    root !== null && ids.has(root)
      ? [root]
      : nodes.filter(n => !hasOut.has(n.id)).map(n => n.id);
  const keep = new Set<number>();
  const queue = start.slice();
  for (let qi = 0; qi < queue.length && keep.size < max; qi++) {
    const v = queue[qi];
    if (keep.has(v)) {
      continue;
    }
    keep.add(v);
    for (const p of inputs.get(v) ?? []) {
      if (!keep.has(p)) {
        queue.push(p);
      }
    }
  }
  for (const n of nodes) {
    if (keep.size >= max) {
      break;
    }
    keep.add(n.id);
  }
  return keep;
}

export function buildDrawModel(
  g: IGraph,
  collapse: boolean,
  maxNodes = MAX_DRAWN_NODES,
  keep: number | null = null
): IDrawModel {
  const f = filterGraph(g, collapse, keep);
  let nodes = f.nodes;
  let edges = f.edges;
  let omitted = 0;
  if (nodes.length > maxNodes) {
    const keep = nearestToRoot(nodes, edges, g.root, maxNodes);
    omitted = nodes.length - keep.size;
    nodes = nodes.filter(n => keep.has(n.id));
    edges = edges.filter(([a, b]) => keep.has(a) && keep.has(b));
  }
  const index = new Map(nodes.map((n, i) => [n.id, i] as [number, number]));
  const draw = nodes.map(n => {
    const t = nodeLabel(n, f.hidden.get(n.id) ?? 0);
    return { node: n, ...t, ...nodeSize(t.label, t.sub) };
  });
  return {
    nodes: draw,
    edges: edges.map(
      ([a, b]) => [index.get(a)!, index.get(b)!] as [number, number]
    ),
    removed: f.removed,
    omitted,
    totalNodes: g.totalNodes,
    truncated: g.truncated
  };
}

export function layoutInput(m: IDrawModel): ILayoutInput {
  return {
    widths: m.nodes.map(n => n.w),
    heights: m.nodes.map(n => n.h),
    edges: m.edges
  };
}

/** SVG path through route points with vertical tangents (a smooth top-to-bottom curve). */
export function edgePath(points: number[]): string {
  if (points.length < 4) {
    return '';
  }
  const f = (v: number) => (Math.round(v * 10) / 10).toString();
  let d = `M${f(points[0])},${f(points[1])}`;
  for (let i = 2; i + 1 < points.length; i += 2) {
    const x0 = points[i - 2];
    const y0 = points[i - 1];
    const x1 = points[i];
    const y1 = points[i + 1];
    const my = (y0 + y1) / 2;
    d += ` C${f(x0)},${f(my)} ${f(x1)},${f(my)} ${f(x1)},${f(y1)}`;
  }
  return d;
}
