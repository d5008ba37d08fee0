import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assignLayers, layoutGraph, packLayer, topoOrder } from '../src/layout';

/** a random layered DAG like a compiler graph: each node feeds one to three later nodes */
function randomDag(n: number, seed = 1): [number, number][] {
  let s = seed;
  const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  const edges: [number, number][] = [];
  for (let v = 0; v < n - 1; v++) {
    const k = 1 + Math.floor(rnd() * 3);
    for (let j = 0; j < k; j++) {
      const w = Math.min(n - 1, v + 1 + Math.floor(rnd() * 12));
      edges.push([v, w]);
    }
  }
  return edges;
}

function noOverlap(x: number[], y: number[], w: number[], gap: number) {
  const rows = new Map<number, number[]>();
  x.forEach((_, i) =>
    (rows.get(y[i]) ?? rows.set(y[i], []).get(y[i])!).push(i)
  );
  for (const row of rows.values()) {
    row.sort((a, b) => x[a] - x[b]);
    for (let k = 1; k < row.length; k++) {
      const a = row[k - 1];
      const b = row[k];
      assert.ok(
        x[b] - x[a] >= (w[a] + w[b]) / 2 + gap - 1e-6,
        `nodes ${a} and ${b} overlap`
      );
    }
  }
}

test('topoOrder puts producers first and keeps nodes on cycles', () => {
  const order = topoOrder(4, [
    [0, 1],
    [1, 2],
    [2, 1],
    [0, 3]
  ]);
  assert.equal(order.length, 4);
  assert.ok(order.indexOf(0) < order.indexOf(3));
  assert.deepEqual([...order].sort(), [0, 1, 2, 3]);
});

test('layers: every edge goes down, the sink is at the bottom, constants sit just above their user', () => {
  // 0 -> 2 -> 3 (sink), 1 (const) -> 3
  const edges: [number, number][] = [
    [0, 2],
    [2, 3],
    [1, 3]
  ];
  const layer = assignLayers(4, edges, topoOrder(4, edges));
  for (const [a, b] of edges) {
    assert.ok(layer[b] > layer[a]);
  }
  assert.equal(layer[3], Math.max(...layer));
  assert.equal(layer[1], layer[3] - 1);
});

test('layout: edges point down, no overlaps, routes start and end at the nodes', () => {
  const n = 60;
  const edges = randomDag(n, 7);
  const widths = Array.from({ length: n }, (_, i) => 40 + (i % 5) * 20);
  const heights = widths.map(() => 30);
  const r = layoutGraph({ widths, heights, edges, nodeGap: 10 });
  for (const e of r.routes) {
    assert.ok(r.y[e.to] > r.y[e.from], 'edge goes down');
    assert.equal(e.points[0], r.x[e.from]);
    assert.equal(e.points[e.points.length - 2], r.x[e.to]);
  }
  noOverlap(r.x, r.y, widths, 10);
  for (let i = 0; i < n; i++) {
    assert.ok(
      r.x[i] - widths[i] / 2 >= 0 && r.x[i] + widths[i] / 2 <= r.width + 1e-6,
      'inside the drawing'
    );
  }
  assert.ok(r.dummies > 0, 'long edges got dummy nodes');
});

test('layout: a cycle from a malformed payload does not hang or throw', () => {
  const r = layoutGraph({
    widths: [50, 50, 50],
    heights: [20, 20, 20],
    edges: [
      [0, 1],
      [1, 2],
      [2, 0],
      [5, 1],
      [1, 1]
    ]
  });
  assert.equal(r.x.length, 3);
  assert.ok(r.x.every(Number.isFinite) && r.y.every(Number.isFinite));
});

test('layout: empty graph', () => {
  const r = layoutGraph({ widths: [], heights: [], edges: [] });
  assert.equal(r.x.length, 0);
  assert.ok(r.width >= 0 && r.height >= 0);
});

test('layout: 2,000 nodes in well under a second', () => {
  const n = 2000;
  const edges = randomDag(n, 3);
  const t = performance.now();
  const r = layoutGraph({
    widths: new Array(n).fill(80),
    heights: new Array(n).fill(30),
    edges
  });
  const ms = performance.now() - t;
  assert.equal(r.x.length, n);
  noOverlap(r.x, r.y, new Array(n).fill(80), 18);
  assert.ok(ms < 1500, `took ${ms} ms`);
});

test('packLayer keeps order and spacing and stays near the wanted centres', () => {
  const x = packLayer([0, 0, 0], [20, 20, 20], 10);
  assert.ok(x[1] - x[0] >= 30 - 1e-9 && x[2] - x[1] >= 30 - 1e-9);
  assert.ok(Math.abs(x[1]) < 1e-9, 'centred on the wanted position');
  assert.deepEqual(packLayer([0, 100], [10, 10], 5), [0, 100]);
});
