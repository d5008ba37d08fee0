import { test } from 'node:test';
import assert from 'node:assert/strict';
import { magicLine, panelCode, parseState } from '../src/magiccode';
import { collectRuns, totals } from '../src/runs';
import { fitView, focusView, visibleRect, zoomAround } from '../src/panzoom';
import { tabsFor } from '../src/tabs';

test('magic line from the panel controls', () => {
  assert.equal(
    magicLine({ debug: 2, noopt: true, beam: 0, device: null }),
    '%tinygrad --debug 2 --noopt --beam 0'
  );
  assert.equal(
    magicLine({ debug: 9, noopt: false, beam: -3, device: 'CPU' }),
    '%tinygrad --debug 7 --opt --beam 0 --device CPU'
  );
  assert.throws(() =>
    magicLine({ debug: 0, noopt: false, beam: 0, device: 'CPU; import os' })
  );
  assert.throws(() =>
    magicLine({ debug: 0, noopt: false, beam: 0, device: 'CPU\n!rm -rf /' })
  );
  assert.equal(
    panelCode({ debug: 1, noopt: false, beam: 2, device: 'PYTHON' }),
    '%load_ext lazynb\n%tinygrad --debug 1 --opt --beam 2 --device PYTHON'
  );
});

test('kernel state from a user expression', () => {
  const json = {
    session: { debug: 3, noopt: true, beam: 2, device: 'CPU' },
    devices: [
      { name: 'CPU', ok: true, why: '' },
      { name: 'bad name!', ok: true }
    ],
    default_device: 'CPU'
  };
  const a = parseState({ status: 'ok', data: { 'application/json': json } })!;
  assert.deepEqual(a.session, {
    debug: 3,
    noopt: true,
    beam: 2,
    device: 'CPU'
  });
  assert.deepEqual(
    a.devices.map(d => d.name),
    ['CPU']
  );
  const b = parseState({
    status: 'ok',
    data: { 'text/plain': JSON.stringify(json) }
  })!;
  assert.deepEqual(b, a);
  assert.equal(
    parseState({ status: 'error', ename: 'ModuleNotFoundError' }),
    null
  );
  assert.equal(
    parseState({ status: 'ok', data: { 'text/plain': "{'not': json}" } }),
    null
  );
});

test('runs are collected per cell from trace outputs', () => {
  const trace = (names: string[], t: number) => ({
    'application/vnd.lazynb.trace+json': {
      kernels: names.map((name, id) => ({
        id,
        name,
        time_s: t,
        runs: 1,
        device: 'CPU'
      })),
      timing: { run_s: t * names.length }
    },
    'text/plain': 'x'
  });
  const runs = collectRuns([
    {
      id: 'a',
      index: 0,
      executionCount: 1,
      outputs: [{ 'text/plain': 'hello' }]
    },
    {
      id: 'b',
      index: 1,
      executionCount: 2,
      outputs: [
        { 'application/vnd.jupyter.widget-view+json': {} },
        trace(['E_4', 'r_8'], 1e-5)
      ]
    },
    { id: 'c', index: 3, executionCount: null, outputs: [trace(['E_2'], 2e-5)] }
  ]);
  assert.deepEqual(
    runs.map(r => [r.cellId, r.cellIndex, r.kernels.map(k => k.name)]),
    [
      ['b', 1, ['E_4', 'r_8']],
      ['c', 3, ['E_2']]
    ]
  );
  const t = totals(runs);
  assert.equal(t.kernels, 3);
  assert.ok(Math.abs(t.seconds - 4e-5) < 1e-12);
});

test('zooming keeps the point under the pointer fixed; fit shows everything', () => {
  const v = zoomAround({ scale: 1, tx: 10, ty: 20 }, 2, 100, 50);
  // content point under (100, 50) before: ((100-10)/1, (50-20)/1) = (90, 30); after: same
  assert.equal((100 - v.tx) / v.scale, 90);
  assert.equal((50 - v.ty) / v.scale, 30);
  assert.equal(zoomAround({ scale: 1, tx: 0, ty: 0 }, 1e9, 0, 0).scale, 8);
  const f = fitView(1000, 500, 500, 500, 0);
  assert.equal(f.scale, 0.5);
  assert.equal(fitView(10, 10, 500, 500).scale, 1, 'never enlarged');
  const fv = focusView(100, 200, 50, 80, 0.5);
  assert.deepEqual(
    visibleRect(fv, 100, 160).map(x => Math.round(x) + 0),
    [0, 40, 200, 360]
  );
  // the focused content point sits at the pane point asked for
  assert.equal(100 * fv.scale + fv.tx, 50);
  assert.equal(200 * fv.scale + fv.ty, 80);
});

test('the show list picks the tabs', () => {
  assert.deepEqual(tabsFor(null), ['kernels', 'graph', 'rewrites', 'timing']);
  assert.deepEqual(tabsFor(['timing']), ['timing']);
  assert.deepEqual(tabsFor(['kernels', 'rewrites']), ['kernels', 'rewrites']);
  assert.deepEqual(tabsFor(['schedule', 'graph']), ['kernels', 'graph']);
});
