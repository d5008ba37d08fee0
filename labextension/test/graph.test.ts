import { test } from 'node:test';
import assert from 'node:assert/strict';
import { filterGraph, isCollapsible, validEdges } from '../src/graphfilter';
import {
  buildDrawModel,
  edgePath,
  nearestToRoot,
  nodeLabel
} from '../src/graphmodel';
import { IGraph, IGraphNode } from '../src/types';

const node = (id: number, op: string, kind: string, arg = ''): IGraphNode => ({
  id,
  op,
  dtype: 'float',
  arg,
  shape: null,
  kind
});

// DEFINE_GLOBAL(0) -> INDEX(2) <- RANGE(1); INDEX -> LOAD(3); CONST(4) -> ADD(5) <- LOAD; ADD -> STORE(6) -> SINK(7)
const g: IGraph = {
  nodes: [
    node(0, 'DEFINE_GLOBAL', 'buffer'),
    node(1, 'RANGE', 'loop'),
    node(2, 'INDEX', 'memory'),
    node(3, 'LOAD', 'memory'),
    node(4, 'CONST', 'const', '1.0'),
    node(5, 'ADD', 'alu'),
    node(6, 'STORE', 'memory'),
    node(7, 'SINK', 'sink')
  ],
  edges: [
    [0, 2],
    [1, 2],
    [2, 3],
    [3, 5],
    [4, 5],
    [5, 6],
    [0, 6],
    [6, 7]
  ],
  root: 7,
  totalNodes: 8,
  truncated: false
};

test('collapsible: const, loop and INDEX', () => {
  assert.deepEqual(
    g.nodes.filter(isCollapsible).map(n => n.op),
    ['RANGE', 'INDEX', 'CONST']
  );
});

test('collapsing keeps the node a learner\u2019s graph first differs at', () => {
  const f = filterGraph(g, true, 4);
  assert.deepEqual(
    f.nodes.map(n => n.op),
    ['DEFINE_GLOBAL', 'LOAD', 'CONST', 'ADD', 'STORE', 'SINK']
  );
  assert.ok(f.edges.some(([a, b]) => a === 4 && b === 5));
  assert.equal(f.removed, 2);
  const m = buildDrawModel(g, true, undefined, 4);
  assert.ok(m.nodes.some(n => n.node.id === 4));
});

test('filter without collapsing keeps everything', () => {
  const f = filterGraph(g, false);
  assert.equal(f.nodes.length, 8);
  assert.equal(f.edges.length, 8);
  assert.equal(f.removed, 0);
});

test('collapsing removes index/const/loop nodes and bridges through INDEX', () => {
  const f = filterGraph(g, true);
  assert.deepEqual(
    f.nodes.map(n => n.op),
    ['DEFINE_GLOBAL', 'LOAD', 'ADD', 'STORE', 'SINK']
  );
  assert.equal(f.removed, 3);
  const has = (a: number, b: number) =>
    f.edges.some(([x, y]) => x === a && y === b);
  assert.ok(has(0, 3), 'DEFINE_GLOBAL -> LOAD through the hidden INDEX');
  assert.ok(has(3, 5) && has(5, 6) && has(0, 6) && has(6, 7));
  assert.ok(
    !f.edges.some(([a, b]) => [1, 2, 4].includes(a) || [1, 2, 4].includes(b))
  );
  assert.equal(f.hidden.get(3), 1, 'LOAD lost its INDEX input');
  assert.equal(f.hidden.get(5), 1, 'ADD lost its CONST input');
});

test('collapsing never removes the root, and survives chains and cycles of hidden nodes', () => {
  const c: IGraph = {
    nodes: [
      node(0, 'CONST', 'const'),
      node(1, 'INDEX', 'memory'),
      node(2, 'INDEX', 'memory'),
      node(3, 'LOAD', 'memory'),
      node(4, 'CONST', 'const')
    ],
    edges: [
      [0, 1],
      [1, 2],
      [2, 1],
      [2, 3],
      [3, 4]
    ],
    root: 4,
    totalNodes: 5,
    truncated: false
  };
  const f = filterGraph(c, true);
  assert.deepEqual(
    f.nodes.map(n => n.id),
    [3, 4]
  );
});

test('validEdges drops dangling, duplicate and self edges', () => {
  assert.deepEqual(
    validEdges(
      [node(0, 'A', 'alu'), node(1, 'B', 'alu')],
      [
        [0, 1],
        [0, 1],
        [1, 1],
        [0, 9],
        [-1, 0]
      ]
    ),
    [[0, 1]]
  );
});

test('draw model: labels say what was hidden; big graphs keep the nodes nearest the root', () => {
  const m = buildDrawModel(g, true);
  const load = m.nodes.find(n => n.node.op === 'LOAD')!;
  assert.equal(load.label, 'LOAD +1');
  assert.match(load.tooltip, /1 collapsed input/);
  assert.ok(load.w >= 44 && load.h > 0);
  const capped = buildDrawModel(g, false, 3);
  assert.equal(capped.nodes.length, 3);
  assert.equal(capped.omitted, 5);
  assert.deepEqual(capped.nodes.map(n => n.node.op).sort(), [
    'ADD',
    'SINK',
    'STORE'
  ]);
  assert.ok(capped.edges.every(([a, b]) => a < 3 && b < 3));
});

test('nearestToRoot walks inputs breadth first', () => {
  const keep = nearestToRoot(g.nodes, g.edges, 7, 3);
  assert.deepEqual([...keep].sort(), [5, 6, 7]);
});

test('nodeLabel clips long args', () => {
  const t = nodeLabel(node(0, 'VIEW', 'movement', 'x'.repeat(100)), 0);
  assert.ok(t.sub.length <= 26);
  assert.match(t.tooltip, /x{100}/);
});

test('edgePath is a smooth curve through the route points', () => {
  assert.equal(edgePath([0, 0, 10, 20]), 'M0,0 C0,10 10,10 10,20');
  assert.equal(edgePath([0, 0]), '');
});
