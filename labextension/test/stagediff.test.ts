import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><body></body>');
Object.assign(globalThis, { document: dom.window.document });

import {
  kernelStagesLine,
  loweredDiffNode,
  markedPlaces,
  sideView,
  yourStages
} from '../src/stagediff';
import { SourceView } from '../src/sourceview';
import { IKernel, readTrace } from '../src/types';

const YOURS = 'void E_3(float* data0) {\n  a;\n  /* mine */\n  b;\n}';
const THEIRS = 'void E_3(float* data0) {\n  a;\n  b;\n}';
const UOP = (i: number, op: string) => ({
  i,
  op,
  dtype: 'float',
  src: [],
  arg: ''
});

/** A document as tracedoc writes it for a kernel made under use("render", ...) and one made by lazynb alone. */
function doc(): unknown {
  return {
    version: 1,
    replaced_stages: ['lower', 'render'],
    kernels: [
      {
        id: 0,
        name: 'E_3',
        source: YOURS,
        uops: [UOP(0, 'DEFINE_GLOBAL'), UOP(1, 'LOAD')],
        line_map: [[0], [1]],
        replaced: ['lower', 'render'],
        reference: {
          stages: ['lower', 'simplify', 'linearize', 'render'],
          opts: null,
          lowered_graph: 'g3',
          uops: [UOP(0, 'DEFINE_GLOBAL'), UOP(1, 'CONST')],
          source: THEIRS,
          differences: [
            {
              stage: 'simplify',
              message: 'node 4',
              line: null,
              index: null,
              node: 4
            },
            {
              stage: 'linearize',
              message: 'entry 1',
              line: null,
              index: 1,
              node: null
            },
            {
              stage: 'render',
              message: 'line 3 differs',
              line: 3,
              index: null,
              node: null
            }
          ]
        }
      },
      { id: 1, name: 'E_4', source: 'x', replaced: [], reference: null }
    ],
    rewrites: [{ name: 'lower', replaced_stage: 'lower' }, { name: 'other' }]
  };
}

test('the reader keeps which stages were the learner\u2019s and lazynb\u2019s results', () => {
  const d = readTrace(doc());
  assert.deepEqual(d.replacedStages, ['lower', 'render']);
  const [k, plain] = d.kernels;
  assert.deepEqual(k.replaced, ['lower', 'render']);
  assert.equal(k.reference?.source, THEIRS);
  assert.equal(k.reference?.loweredGraph, 'g3');
  assert.equal(k.reference?.opts, null);
  assert.deepEqual(
    k.reference?.differences.map(x => [x.stage, x.line, x.index, x.node]),
    [
      ['simplify', null, null, 4],
      ['linearize', null, 1, null],
      ['render', 3, null, null]
    ]
  );
  assert.deepEqual(plain.replaced, []);
  assert.equal(plain.reference, null);
  assert.deepEqual(
    d.rewrites.map(r => r.replacedStage),
    ['lower', null]
  );
  // an old document (before these fields) reads as "nothing replaced"
  const old = readTrace({ kernels: [{ name: 'k' }] });
  assert.deepEqual(old.replacedStages, []);
  assert.deepEqual(old.kernels[0].replaced, []);
  assert.equal(old.kernels[0].reference, null);
  // junk in the payload is coerced, not trusted
  const junk = readTrace({
    kernels: [{ reference: { source: 5, uops: 'x', differences: [7] } }]
  });
  const ref = junk.kernels[0].reference!;
  assert.equal(ref.source, null);
  assert.equal(ref.uops, null);
  assert.deepEqual(ref.differences[0], {
    stage: '',
    message: '',
    line: null,
    index: null,
    node: null
  });
});

test('each side of a kernel, with the first difference at the same place', () => {
  const k = readTrace(doc()).kernels[0];
  const yours = sideView(k, 'yours');
  const theirs = sideView(k, 'lazynb');
  assert.equal(yours.source, YOURS);
  assert.equal(theirs.source, THEIRS);
  assert.deepEqual(yours.lineMap, [[0], [1]]);
  assert.deepEqual(
    theirs.lineMap,
    [],
    'lazynb\u2019s source has no line map here'
  );
  assert.equal(yours.diffLine, 2);
  assert.equal(theirs.diffLine, 2);
  assert.equal(yours.diffUop, 1);
  assert.equal(theirs.uops[1].op, 'CONST');
  assert.equal(loweredDiffNode(k), 4);
  // only the renderer replaced: lazynb's UOps are the kernel's own
  const renderOnly: IKernel = {
    ...k,
    reference: { ...k.reference!, uops: null, differences: [] }
  };
  assert.equal(sideView(renderOnly, 'lazynb').uops, k.uops);
  assert.equal(sideView(renderOnly, 'lazynb').diffLine, null);
  const plain = readTrace(doc()).kernels[1];
  assert.equal(sideView(plain, 'lazynb').source, 'x', 'no reference: yours');
});

test('the words for replaced stages and differences', () => {
  const k = readTrace(doc()).kernels[0];
  assert.equal(yourStages([]), '');
  assert.equal(yourStages(['lower', 'render']), 'your stages: lower, render');
  assert.equal(
    kernelStagesLine(k),
    'your stages: lower, render \u00b7 differs from lazynb\u2019s from simplify on: graph node 4, UOp %1, line 3'
  );
  const onlyLine = {
    ...k.reference!,
    differences: k.reference!.differences.slice(2)
  };
  assert.deepEqual(markedPlaces(onlyLine), ['line 3']);
  const same: IKernel = {
    ...k,
    reference: { ...k.reference!, differences: [] }
  };
  assert.match(kernelStagesLine(same), /same results as lazynb/);
  assert.match(kernelStagesLine({ ...k, reference: null }), /not compared/);
  assert.equal(kernelStagesLine(readTrace(doc()).kernels[1]), '');
});

test('the Source pane toggles yours / lazynb\u2019s and marks the first differing line', () => {
  const [k, plain] = readTrace(doc()).kernels;
  const view = new SourceView();
  view.show(k);
  const q = (sel: string) => view.node.querySelector(sel) as HTMLElement;
  const lines = () =>
    Array.from(view.node.querySelectorAll('.lz-line .lz-linetext')).map(
      e => e.textContent
    );
  assert.equal(q('.lz-segs').hidden, false);
  assert.equal(q('.lz-source').getAttribute('data-side'), 'yours');
  assert.equal(view.node.querySelectorAll('.lz-line.lz-diff').length, 1);
  assert.equal(q('.lz-line.lz-diff').getAttribute('data-line'), '2');
  assert.equal(q('.lz-line.lz-diff .lz-linetext').textContent, '  /* mine */');
  assert.equal(q('.lz-uop.lz-diff').getAttribute('data-uop'), '1');
  assert.equal(q('.lz-diff-note').textContent, '\u2260 line 3');
  assert.equal(lines().length, 5);
  (q('.lz-seg[data-side="lazynb"]') as HTMLButtonElement).click();
  assert.equal(q('.lz-source').getAttribute('data-side'), 'lazynb');
  assert.deepEqual(lines(), THEIRS.split('\n'));
  assert.equal(q('.lz-line.lz-diff .lz-linetext').textContent, '  b;');
  assert.equal(q('.lz-uop.lz-diff .lz-uop-op').textContent, 'CONST');
  // the side is kept for the next kernel with a reference, and dropped for one without
  view.show(plain);
  assert.equal(q('.lz-segs').hidden, true);
  assert.equal(q('.lz-diff-note').hidden, true);
  assert.equal(view.node.querySelectorAll('.lz-diff').length, 0);
  assert.deepEqual(lines(), ['x']);
  view.show(k);
  assert.equal(q('.lz-source').getAttribute('data-side'), 'yours');
});
