/**
 * A layered (Sugiyama-style) layout for data-flow graphs, with no DOM and no imports, so it runs in a
 * Web Worker as well as in tests.
 *
 *   1. order the nodes topologically (edges that close a cycle are left out of the layering);
 *   2. layer: each node goes as low as it can, one layer above its highest consumer, so the root
 *      (the SINK) is at the bottom and constants sit just above what uses them;
 *   3. long edges get a chain of zero-width dummy nodes, one per layer crossed (up to a budget);
 *   4. crossing reduction: alternate down and up sweeps that sort each layer by the barycenter of
 *      its neighbours in the layer before;
 *   5. x: each node wants the mean x of its neighbours; a left-to-right and a right-to-left packing
 *      pass each give a placement without overlaps, and their mean keeps that property;
 *   6. edges are routed through their dummies.
 */

export interface ILayoutInput {
  /** node sizes, indexed 0..n-1 */
  widths: number[];
  heights: number[];
  /** [from, to] node indices: data flows from `from` into `to` */
  edges: [number, number][];
  nodeGap?: number;
  layerGap?: number;
  sweeps?: number;
  maxDummies?: number;
}

export interface IEdgeRoute {
  from: number;
  to: number;
  /** x0, y0, x1, y1, ... */
  points: number[];
}

export interface ILayoutResult {
  /** node centres */
  x: number[];
  y: number[];
  layer: number[];
  width: number;
  height: number;
  routes: IEdgeRoute[];
  dummies: number;
}

const MARGIN = 12;

/** Topological order (Kahn); nodes on cycles follow in index order. */
export function topoOrder(n: number, edges: [number, number][]): number[] {
  const indeg = new Array<number>(n).fill(0);
  const out: number[][] = Array.from({ length: n }, () => []);
  for (const [a, b] of edges) {
    out[a].push(b);
    indeg[b]++;
  }
  const order: number[] = [];
  const queue: number[] = [];
  for (let i = 0; i < n; i++) {
    if (indeg[i] === 0) {
      queue.push(i);
    }
  }
  const placed = new Array<boolean>(n).fill(false);
  for (let qi = 0; qi < queue.length; qi++) {
    const v = queue[qi];
    placed[v] = true;
    order.push(v);
    for (const w of out[v]) {
      if (--indeg[w] === 0) {
        queue.push(w);
      }
    }
  }
  for (let i = 0; i < n; i++) {
    if (!placed[i]) {
      order.push(i);
    }
  }
  return order;
}

/** Layer per node: 0 at the top; every forward edge goes down at least one layer. */
export function assignLayers(
  n: number,
  edges: [number, number][],
  order: number[]
): number[] {
  const pos = new Array<number>(n);
  order.forEach((v, i) => (pos[v] = i));
  const out: number[][] = Array.from({ length: n }, () => []);
  for (const [a, b] of edges) {
    if (pos[a] < pos[b]) {
      out[a].push(b);
    }
  }
  const height = new Array<number>(n).fill(0);
  for (let i = order.length - 1; i >= 0; i--) {
    const v = order[i];
    for (const w of out[v]) {
      height[v] = Math.max(height[v], height[w] + 1);
    }
  }
  const top = height.reduce((m, h) => Math.max(m, h), 0);
  return height.map(h => top - h);
}

/** Sort `layer` in place by key; nodes without a key keep their slot relative to the others. */
function sortByKey(layer: number[], key: (v: number) => number | null): void {
  const keyed = layer.map((v, i) => ({ v, k: key(v), i }));
  const fixed = keyed.map(e => (e.k === null ? e.i : e.k));
  const idx = keyed
    .map((_, i) => i)
    .sort((a, b) => fixed[a] - fixed[b] || a - b);
  const copy = idx.map(i => keyed[i].v);
  for (let i = 0; i < layer.length; i++) {
    layer[i] = copy[i];
  }
}

/** Place one layer along x: wanted centres, widths and gap -> centres without overlap. */
export function packLayer(
  want: number[],
  widths: number[],
  gap: number
): number[] {
  const n = want.length;
  const left = new Array<number>(n);
  const right = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    left[i] =
      i === 0
        ? want[i]
        : Math.max(
            want[i],
            left[i - 1] + (widths[i - 1] + widths[i]) / 2 + gap
          );
  }
  for (let i = n - 1; i >= 0; i--) {
    right[i] =
      i === n - 1
        ? want[i]
        : Math.min(
            want[i],
            right[i + 1] - (widths[i + 1] + widths[i]) / 2 - gap
          );
  }
  return left.map((l, i) => (l + right[i]) / 2);
}

export function layoutGraph(input: ILayoutInput): ILayoutResult {
  const n = input.widths.length;
  const gap = input.nodeGap ?? 18;
  const layerGap = input.layerGap ?? 42;
  const sweeps = input.sweeps ?? 4;
  // long edges (a constant used all over a deep graph) would need a dummy per layer: past the budget
  // they are drawn as one curve instead, which keeps layout time near-linear in the graph size
  let budget = input.maxDummies ?? Math.min(20000, 3 * n + 200);
  const edges = input.edges.filter(
    ([a, b]) => a >= 0 && b >= 0 && a < n && b < n && a !== b
  );
  const order = topoOrder(n, edges);
  const nodeLayer = assignLayers(n, edges, order);

  // the augmented graph: real nodes 0..n-1, then dummies
  const layerOf = nodeLayer.slice();
  const width = input.widths.slice();
  const height = input.heights.slice();
  const preds: number[][] = Array.from({ length: n }, () => []);
  const succs: number[][] = Array.from({ length: n }, () => []);
  const chains: number[][] = [];
  for (const [a, b] of edges) {
    const chain: number[] = [];
    const span = layerOf[b] - layerOf[a];
    if (span > 1 && span - 1 <= budget) {
      budget -= span - 1;
      let prev = a;
      for (let l = layerOf[a] + 1; l < layerOf[b]; l++) {
        const d = layerOf.length;
        layerOf.push(l);
        width.push(0);
        height.push(0);
        preds.push([prev]);
        succs.push([]);
        succs[prev].push(d);
        chain.push(d);
        prev = d;
      }
      succs[prev].push(b);
      preds[b].push(prev);
    } else if (span >= 1) {
      succs[a].push(b);
      preds[b].push(a);
    }
    chains.push(chain);
  }
  const total = layerOf.length;
  const layerCount = layerOf.reduce((m, l) => Math.max(m, l + 1), 0);
  const layers: number[][] = Array.from({ length: layerCount }, () => []);
  // initial order: real nodes in topological order, each dummy right after its chain's start
  const seen = new Array<boolean>(total).fill(false);
  const visit = (v: number) => {
    if (!seen[v]) {
      seen[v] = true;
      layers[layerOf[v]].push(v);
    }
  };
  for (const v of order) {
    visit(v);
  }
  for (let v = n; v < total; v++) {
    visit(v);
  }

  // crossing reduction
  const slot = new Array<number>(total).fill(0);
  const renumber = (l: number) => layers[l].forEach((v, i) => (slot[v] = i));
  layers.forEach((_, l) => renumber(l));
  const mean = (vs: number[]): number | null =>
    vs.length ? vs.reduce((s, v) => s + slot[v], 0) / vs.length : null;
  for (let it = 0; it < sweeps; it++) {
    for (let l = 1; l < layerCount; l++) {
      sortByKey(layers[l], v => mean(preds[v]));
      renumber(l);
    }
    for (let l = layerCount - 2; l >= 0; l--) {
      sortByKey(layers[l], v => mean(succs[v]));
      renumber(l);
    }
  }

  // x placement
  const x = new Array<number>(total).fill(0);
  for (const layer of layers) {
    let cur = 0;
    for (const v of layer) {
      x[v] = cur + width[v] / 2;
      cur += width[v] + gap;
    }
  }
  const meanX = (vs: number[]): number | null =>
    vs.length ? vs.reduce((s, v) => s + x[v], 0) / vs.length : null;
  const place = (l: number, neighbours: number[][]) => {
    const layer = layers[l];
    const want = layer.map(v => {
      const m = meanX(neighbours[v]);
      return m === null ? x[v] : m;
    });
    const placed = packLayer(
      want,
      layer.map(v => width[v]),
      gap
    );
    layer.forEach((v, i) => (x[v] = placed[i]));
  };
  for (let it = 0; it < 3; it++) {
    for (let l = 1; l < layerCount; l++) {
      place(l, preds);
    }
    for (let l = layerCount - 2; l >= 0; l--) {
      place(l, succs);
    }
  }

  // y placement: each layer as tall as its tallest node
  const layerY = new Array<number>(layerCount).fill(0);
  const layerH = layers.map(layer =>
    layer.reduce((m, v) => Math.max(m, height[v]), 0)
  );
  let cy = MARGIN;
  for (let l = 0; l < layerCount; l++) {
    layerY[l] = cy + layerH[l] / 2;
    cy += layerH[l] + layerGap;
  }
  let minX = Infinity;
  let maxX = -Infinity;
  for (let v = 0; v < total; v++) {
    minX = Math.min(minX, x[v] - width[v] / 2);
    maxX = Math.max(maxX, x[v] + width[v] / 2);
  }
  if (!Number.isFinite(minX)) {
    minX = 0;
    maxX = 0;
  }
  const shift = MARGIN - minX;
  const xs = x.map(v => v + shift);
  const ys = layerOf.map(l => layerY[l]);

  const routes: IEdgeRoute[] = edges.map(([a, b], i) => {
    const points = [xs[a], ys[a] + height[a] / 2];
    for (const d of chains[i]) {
      points.push(xs[d], ys[d]);
    }
    points.push(xs[b], ys[b] - height[b] / 2);
    return { from: a, to: b, points };
  });
  return {
    x: xs.slice(0, n),
    y: ys.slice(0, n),
    layer: nodeLayer,
    width: maxX - minX + 2 * MARGIN,
    height: Math.max(cy - layerGap + MARGIN, 2 * MARGIN),
    routes,
    dummies: total - n
  };
}
