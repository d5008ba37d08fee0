import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><body></body>');
Object.assign(globalThis, { document: dom.window.document });

import {
  plural,
  clip,
  fmtSeconds,
  fmtTuple,
  h,
  isSafeAttr,
  s,
  setChildren,
  setSafeAttr
} from '../src/dom';
import { kernelName } from '../src/kernelname';
import { readTrace } from '../src/types';

const EVIL =
  '<img src=x onerror="globalThis.pwned=1"><script>globalThis.pwned=2</script>';

test('text children are inserted as text, never as markup', () => {
  const el = h('div', { cls: 'a' }, EVIL, h('span', {}, EVIL), 42);
  assert.equal(el.querySelectorAll('img, script').length, 0);
  assert.equal(el.childNodes[0].nodeType, dom.window.Node.TEXT_NODE);
  assert.equal(el.textContent, EVIL + EVIL + '42');
  const svg = s('text', { title: EVIL }, EVIL);
  assert.equal(svg.querySelectorAll('img, script').length, 0);
  assert.equal(svg.querySelector('title')!.textContent, EVIL);
  setChildren(el, EVIL);
  assert.equal(el.children.length, 0);
  assert.equal((globalThis as { pwned?: number }).pwned, undefined);
});

test('attributes: no event handlers, styles or script URLs', () => {
  assert.equal(
    isSafeAttr('class', EVIL),
    true,
    'plain attribute values are just strings'
  );
  assert.equal(isSafeAttr('onclick', 'x'), false);
  assert.equal(isSafeAttr('ONERROR', 'x'), false);
  assert.equal(isSafeAttr('style', 'x'), false);
  assert.equal(isSafeAttr('href', 'javascript:alert(1)'), false);
  assert.equal(isSafeAttr('href', ' data:text/html,x'), false);
  assert.equal(isSafeAttr('xlink:href', 'https://example.com/x.svg'), false);
  assert.equal(isSafeAttr('href', '#lz-arrow-1'), true);
  assert.equal(isSafeAttr('a b', 'x'), false);
  const el = h('div');
  assert.throws(() => setSafeAttr(el, 'onmouseover', 'x'));
  assert.throws(() => h('div', { attrs: { onload: 'x' } }));
  assert.throws(() => h('div', { data: { 'x onclick': 'y' } }));
  el.title = EVIL;
  assert.equal(el.getAttribute('title'), EVIL);
});

test('kernel names are coloured from name_parts without markup', () => {
  const doc = readTrace({
    kernels: [
      {
        name: 'r_2',
        name_parts: [
          ['r_', ''],
          ['2', 'global'],
          [EVIL, 'upcast'],
          ['x', '<b>']
        ]
      }
    ]
  });
  const el = kernelName(doc.kernels[0]);
  assert.equal(el.querySelectorAll('img, script, b').length, 0);
  assert.equal(el.querySelectorAll('.lz-axis-global').length, 1);
  assert.equal(el.textContent, `r_2${EVIL}x`);
});

test('readTrace coerces anything into the expected shapes', () => {
  for (const junk of [
    null,
    undefined,
    3,
    'x',
    [],
    { kernels: 'no', graphs: [1], schedule: [null, 5] }
  ]) {
    const d = readTrace(junk);
    assert.ok(
      Array.isArray(d.kernels) &&
        Array.isArray(d.schedule) &&
        d.graphs instanceof Map
    );
  }
  const d = readTrace({
    version: 1,
    kernels: [
      {
        name: { toString: 'x' },
        source: 7,
        uops: [{ op: ['x'], src: ['1', 2] }],
        line_map: { '0': [1], '2': [3, 'x'], bad: [1] },
        time_s: 'NaN'
      }
    ],
    graphs: { g0: { nodes: [{ id: 0, op: EVIL }], edges: [[0, 1], 'x', [1]] } },
    error: { type: 'ValueError', message: EVIL }
  });
  const k = d.kernels[0];
  assert.equal(k.name, 'kernel 0');
  assert.equal(k.source, '7');
  assert.equal(k.timeS, 0);
  assert.deepEqual(k.uops[0].src, [0, 2]);
  assert.deepEqual(k.lineMap, [[1], [], [3, 0]]);
  assert.equal(d.graphs.get('g0')!.nodes[0].op, EVIL);
  assert.deepEqual(d.graphs.get('g0')!.edges, [[0, 1]]);
  assert.equal(d.error!.message, EVIL);
});

test('symbolic sizes stay their expression text; anything else that is not a number becomes 0', () => {
  const d = readTrace({
    kernels: [
      {
        name: 'E_i_4',
        global_size: ['i', 1, 1],
        full_shape: ['(i*4)', 4, null]
      }
    ],
    graphs: { g0: { nodes: [{ id: 0, op: 'ADD', shape: ['i', 4] }] } },
    truncated: { note: 'Trace truncated: ...' }
  });
  assert.deepEqual(d.kernels[0].globalSize, ['i', 1, 1]);
  assert.deepEqual(d.kernels[0].fullShape, ['(i*4)', 4, 0]);
  assert.equal(fmtTuple(d.graphs.get('g0')!.nodes[0].shape!), '(i, 4)');
  assert.equal(d.truncated, 'Trace truncated: ...');
  assert.equal(readTrace({}).truncated, null);
});

test('formatting helpers', () => {
  assert.equal(fmtSeconds(12.34e-6), '12.3 \u00b5s');
  assert.equal(fmtSeconds(0.0045), '4.50 ms');
  assert.equal(fmtSeconds(2), '2.00 s');
  assert.equal(fmtSeconds(0), '0 s');
  assert.equal(fmtSeconds(NaN), '-');
  assert.equal(fmtTuple([2]), '(2,)');
  assert.equal(fmtTuple([2, 3]), '(2, 3)');
  assert.equal(clip('abcdef', 4), 'abc\u2026');
  assert.equal(clip('abc', 4), 'abc');
});

test('counts say their noun in the singular for one', () => {
  assert.equal(plural(1, 'kernel'), '1 kernel');
  assert.equal(plural(0, 'kernel'), '0 kernels');
  assert.equal(plural(2, 'step'), '2 steps');
  assert.equal(plural(1, 'copy', 'copies'), '1 copy');
  assert.equal(plural(3, 'copy', 'copies'), '3 copies');
});
