/**
 * Collapsing index and constant nodes out of a graph.
 *
 * Constants, loop ranges (kinds "const" and "loop") and INDEX nodes are most of a lowered kernel graph
 * but rarely what one wants to look at. Collapsing removes them; where a removed node sat between two
 * kept nodes (an INDEX between a DEFINE_GLOBAL and its LOAD) the kept nodes are joined directly, so the
 * data flow stays connected. Each kept node records how many inputs were hidden from it.
 */
import { IGraph, IGraphNode } from './types';

export interface IFilteredGraph {
  nodes: IGraphNode[];
  edges: [number, number][];
  /** node id -> number of its direct inputs that were hidden */
  hidden: Map<number, number>;
  /** how many nodes were removed */
  removed: number;
}

export function isCollapsible(n: IGraphNode): boolean {
  return n.kind === 'const' || n.kind === 'loop' || n.op === 'INDEX';
}

/** Edges whose ends are both nodes of the graph, without duplicates or self loops. */
export function validEdges(
  nodes: IGraphNode[],
  edges: [number, number][]
): [number, number][] {
  const ids = new Set(nodes.map(n => n.id));
  const seen = new Set<string>();
  const out: [number, number][] = [];
  for (const [a, b] of edges) {
    const key = `${a},${b}`;
    if (a !== b && ids.has(a) && ids.has(b) && !seen.has(key)) {
      seen.add(key);
      out.push([a, b]);
    }
  }
  return out;
}

/** `keep`: a node never collapsed (the one a learner's graph first differs at). */
export function filterGraph(
  g: IGraph,
  collapse: boolean,
  keep: number | null = null
): IFilteredGraph {
  const edges = validEdges(g.nodes, g.edges);
  if (!collapse) {
    return { nodes: g.nodes, edges, hidden: new Map(), removed: 0 };
  }
  const byId = new Map(g.nodes.map(n => [n.id, n] as [number, IGraphNode]));
  const drop = new Set(
    g.nodes
      .filter(n => isCollapsible(n) && n.id !== g.root && n.id !== keep)
      .map(n => n.id)
  );
  if (drop.size === 0) {
    return { nodes: g.nodes, edges, hidden: new Map(), removed: 0 };
  }
  const inputs = new Map<number, number[]>();
  for (const [a, b] of edges) {
    const list = inputs.get(b);
    if (list) {
      list.push(a);
    } else {
      inputs.set(b, [a]);
    }
  }
  // kept producers reachable from a dropped node through dropped nodes only (iterative, memoized)
  const keptFrom = new Map<number, Set<number>>();
  const producersOf = (start: number): Set<number> => {
    const stack: number[] = [start];
    const visiting = new Set<number>();
    while (stack.length) {
      const id = stack[stack.length - 1];
      if (keptFrom.has(id)) {
        stack.pop();
        continue;
      }
      visiting.add(id);
      const pending = (inputs.get(id) ?? []).filter(
        p => drop.has(p) && !keptFrom.has(p) && !visiting.has(p)
      );
      if (pending.length) {
        stack.push(...pending);
        continue;
      }
      const out = new Set<number>();
      for (const p of inputs.get(id) ?? []) {
        if (!drop.has(p)) {
          out.add(p);
        } else {
          for (const q of keptFrom.get(p) ?? []) {
            out.add(q);
          }
        }
      }
      keptFrom.set(id, out);
      stack.pop();
    }
    return keptFrom.get(start) ?? new Set();
  };
  const outEdges: [number, number][] = [];
  const seen = new Set<string>();
  const hidden = new Map<number, number>();
  const add = (a: number, b: number) => {
    const key = `${a},${b}`;
    if (a !== b && !seen.has(key)) {
      seen.add(key);
      outEdges.push([a, b]);
    }
  };
  for (const n of g.nodes) {
    if (drop.has(n.id)) {
      continue;
    }
    for (const p of inputs.get(n.id) ?? []) {
      if (!drop.has(p)) {
        add(p, n.id);
      } else {
        hidden.set(n.id, (hidden.get(n.id) ?? 0) + 1);
        for (const q of producersOf(p)) {
          add(q, n.id);
        }
      }
    }
  }
  const nodes = g.nodes.filter(n => !drop.has(n.id) && byId.has(n.id));
  return { nodes, edges: outEdges, hidden, removed: drop.size };
}
