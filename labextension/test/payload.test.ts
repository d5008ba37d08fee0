import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodePayload, documentOf, isStub, payloadOf } from '../src/payload';
import { collectRuns } from '../src/runs';

// lazynb.notebook.viz.pack({'version': 1, 'kernels': [{'id': 0, 'name': 'E_4', 'source': 'x<y && "q"'}], 'note': 'é'}) in Python
const PACKED_TEXT =
  'H4sIAAAAAAACA6tWKkstKs7Mz1OyMtRRyk4tykvNKVayiq5WykxRsjLQUcpLzE1VslJyjTdR0lEqzi8tSgZxK2wqFdTUFGKUCmOUlGpjgcryS0DiMaUGBqmWSrUAElnpzVcAAAA=';
const DOC = {
  version: 1,
  kernels: [{ id: 0, name: 'E_4', source: 'x<y && "q"' }],
  note: 'é'
};
const MIME = 'application/vnd.lazynb.trace+json';

test('a packed document decodes to what Python packed', async () => {
  assert.deepEqual(await decodePayload(PACKED_TEXT, 'gzip+base64'), DOC);
  assert.deepEqual(await decodePayload('{"a": [1]}', ''), { a: [1] });
  await assert.rejects(decodePayload(PACKED_TEXT, 'brotli'));
});

test('the document of an output: in its text/html when the MIME entry is a stub', async () => {
  const html =
    '<div class="lazynb-view"><div class="lazynb-static">x</div><script type="application/octet-stream" ' +
    `class="lazynb-trace" data-encoding="gzip+base64">${PACKED_TEXT}</script><script>0</script></div>`;
  const stub = { version: 1, payload: 'text/html', kernels: [] };
  assert.ok(isStub(stub) && !isStub(DOC) && !isStub(null));
  assert.equal(
    payloadOf([html.slice(0, 20), html.slice(20)])?.text,
    PACKED_TEXT
  ); // nbformat may split a string in lines
  assert.equal(payloadOf('<p>no trace</p>'), null);
  assert.deepEqual(
    await documentOf({ [MIME]: stub, 'text/html': html }, MIME),
    DOC
  );
  assert.deepEqual(await documentOf({ [MIME]: DOC }, MIME), DOC); // an older output: the whole document in the entry
  await assert.rejects(
    documentOf({ [MIME]: stub, 'text/html': '<p>gone</p>' }, MIME)
  );
});

test('the session panel lists a stub output its kernels and times', () => {
  const stub = {
    version: 1,
    payload: 'text/html',
    timing: { total_s: 0.1, compile_s: 0.05, run_s: 0.002 },
    error: null,
    kernels: [{ id: 0, name: 'E_4', device: 'CPU', time_s: 0.001, runs: 1 }]
  };
  const runs = collectRuns([
    { id: 'c', index: 0, executionCount: 1, outputs: [{ [MIME]: stub }] }
  ]);
  assert.equal(runs.length, 1);
  assert.equal(runs[0].kernels[0].name, 'E_4');
  assert.equal(runs[0].runS, 0.002);
});
