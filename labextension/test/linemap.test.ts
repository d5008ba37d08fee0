import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildLineIndex,
  highlightForLine,
  highlightForUop,
  invertLineMap
} from '../src/linemap';
import { readLineMap } from '../src/types';

test('invertLineMap: uop -> lines, ascending, without duplicates', () => {
  const inv = invertLineMap([[], [3], [3, 4, 3], [5], [4]]);
  assert.deepEqual(inv.get(3), [1, 2]);
  assert.deepEqual(inv.get(4), [2, 4]);
  assert.deepEqual(inv.get(5), [3]);
  assert.equal(inv.get(0), undefined);
});

test('line index covers every source line, including unmapped ones', () => {
  const idx = buildLineIndex([[0], [2, 1, 2]], 4);
  assert.deepEqual(idx.uopsOfLine, [[0], [1, 2], [], []]);
  assert.deepEqual(highlightForLine(idx, 1), { lines: [1], uops: [1, 2] });
  assert.deepEqual(highlightForLine(idx, 3), { lines: [3], uops: [] });
  assert.deepEqual(highlightForUop(idx, 2), { lines: [1], uops: [2] });
  assert.deepEqual(highlightForUop(idx, 9), { lines: [], uops: [9] });
});

test('line_map as a list or as an object with string keys', () => {
  assert.deepEqual(readLineMap([[1, 2], [], [3]]), [[1, 2], [], [3]]);
  assert.deepEqual(readLineMap({ '2': [5], '0': [1], x: [9], '-1': [4] }), [
    [1],
    [],
    [5]
  ]);
  assert.deepEqual(readLineMap('nonsense'), []);
});
