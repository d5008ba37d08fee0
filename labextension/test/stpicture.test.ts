import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><body></body>');
Object.assign(globalThis, { document: dom.window.document });

import { cellStory, drawPicture, readPicture } from '../src/stpicture';

// lazynb.notebook.picture of ShapeTracker.from_shape((2, 3)).pad(((0, 0), (1, 0))).permute((1, 0)), as Python's json.dumps
// writes it (so it can be pasted again when the picture changes)
// prettier-ignore
const PIC = {"shape": [4, 2], "dims": [0, 1], "at": [0, 0], "rows": 4, "cols": 2, "total_rows": 4, "total_cols": 2, "views": [{"shape": [4, 2], "strides": [1, 3], "offset": -1, "mask": [[1, 4], [0, 2]], "contiguous": false}], "index": "((idx0-1)+(idx1*3))", "valid": "(idx0>0)", "mem_size": 6, "mem_start": 0, "mem_end": 6, "cells": [[{"idx": [0, 0], "mem": null, "steps": [{"view": 0, "idx": [0, 0], "out": -1, "valid": false}]}, {"idx": [0, 1], "mem": null, "steps": [{"view": 0, "idx": [0, 1], "out": 2, "valid": false}]}], [{"idx": [1, 0], "mem": 0, "steps": [{"view": 0, "idx": [1, 0], "out": 0, "valid": true}]}, {"idx": [1, 1], "mem": 3, "steps": [{"view": 0, "idx": [1, 1], "out": 3, "valid": true}]}], [{"idx": [2, 0], "mem": 1, "steps": [{"view": 0, "idx": [2, 0], "out": 1, "valid": true}]}, {"idx": [2, 1], "mem": 4, "steps": [{"view": 0, "idx": [2, 1], "out": 4, "valid": true}]}], [{"idx": [3, 0], "mem": 2, "steps": [{"view": 0, "idx": [3, 0], "out": 2, "valid": true}]}, {"idx": [3, 1], "mem": 5, "steps": [{"view": 0, "idx": [3, 1], "out": 5, "valid": true}]}]]};

function hover(el: Element): void {
  el.dispatchEvent(new dom.window.MouseEvent('mouseenter'));
}

test('a picture draws one cell per logical index and one per memory element', () => {
  const p = readPicture(PIC)!;
  const node = drawPicture(p);
  assert.equal(node.querySelectorAll('.lz-stp-c').length, 8);
  assert.equal(
    node.querySelectorAll('.lz-stp-masked').length,
    2,
    'the padded column reads nothing'
  );
  assert.equal(node.querySelectorAll('.lz-stp-m').length, 6);
  const mems = [...node.querySelectorAll('.lz-stp-c')].map(
    td => td.textContent
  );
  assert.deepEqual(mems, ['\u00b7', '\u00b7', '0', '3', '1', '4', '2', '5']);
});

test('hovering a cell lights the memory cell it reads and shows its arithmetic', () => {
  const p = readPicture(PIC)!;
  const node = drawPicture(p);
  const cell = node.querySelector('.lz-stp-c[data-idx="2,1"]')!;
  hover(cell);
  const on = [...node.querySelectorAll('.lz-stp-on')];
  assert.equal(on.length, 2);
  assert.ok(
    on.some(
      e =>
        e.classList.contains('lz-stp-m') && e.getAttribute('data-mem') === '4'
    )
  );
  assert.match(
    node.querySelector('.lz-stp-readout')!.textContent!,
    /-1 \+ 2\*1 \+ 1\*3 = 4/
  );
  hover(node.querySelector('.lz-stp-c[data-idx="0,1"]')!);
  assert.equal(
    node.querySelectorAll('.lz-stp-on').length,
    1,
    'a padded cell lights no memory'
  );
  assert.match(
    node.querySelector('.lz-stp-readout')!.textContent!,
    /outside the mask \[1, 4\)/
  );
  hover(node.querySelector('.lz-stp-m[data-mem="5"]')!);
  assert.deepEqual(
    [...node.querySelectorAll('.lz-stp-c.lz-stp-on')].map(e =>
      e.getAttribute('data-idx')
    ),
    ['3,1']
  );
});

test('a stacked view tells the intermediate index; bad payloads give no picture', () => {
  const p = readPicture(PIC)!;
  const stacked = {
    ...p,
    views: [p.views[0], { shape: [8], strides: [1], offset: 0, mask: null }]
  };
  const cell = {
    idx: [5],
    mem: 4,
    steps: [
      { view: 1, idx: [5], out: 5, valid: true },
      { view: 0, idx: [2, 1], out: 4, valid: true }
    ]
  };
  assert.deepEqual(cellStory(stacked, cell), [
    'index (5,)',
    '  view 1: 0 + 5*1 = 5',
    "  unflatten into view 0's shape (4, 2): (2, 1)",
    '  view 0: -1 + 2*1 + 1*3 = 4',
    '  reads memory[4]'
  ]);
  assert.equal(readPicture('x'), null);
  assert.equal(readPicture([1]), null);
  const bad = readPicture({ cells: 'nope', mem_start: 0, mem_end: 1e9 })!;
  assert.equal(
    drawPicture(bad).querySelectorAll('.lz-stp-m').length,
    256,
    'memory row capped'
  );
});
