// Writes ../lazynb/labextension/source-hash.json after a build: a SHA-256 over the files the build reads, so that
// tests/test_labextension.py can tell, without node, whether the committed build is older than its sources.
// The digest: for each input in sorted order, "<path>\n<sha256 of its bytes, CRLF read as LF>\n", hashed once more.
// The Python side (tests/test_labextension.py, source_digest) computes the same thing; keep the two in step.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const DIRS = ['src', 'style'];
const FILES = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'webpack.standalone.js'
];

function walk(dir) {
  return readdirSync(dir).flatMap(name => {
    const p = `${dir}/${name}`;
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

const sha = (data, encoding = 'utf8') =>
  createHash('sha256').update(data, encoding).digest('hex');
const inputs = [...DIRS.flatMap(walk), ...FILES].sort((a, b) =>
  a < b ? -1 : a > b ? 1 : 0
);
const lines = inputs.map(
  p =>
    `${p}\n${sha(readFileSync(p, 'latin1').replace(/\r\n/g, '\n'), 'latin1')}\n`
);
const mode = process.argv[2] || 'production';
// the standalone view bundle (webpack.standalone.js) is part of the same build: its hash ties the file to this stamp
const standalone = sha(
  readFileSync(join('..', 'lazynb', 'static', 'lazynb-view.js'), 'latin1'),
  'latin1'
);
const out = { sha256: sha(lines.join('')), mode, inputs, standalone };
writeFileSync(
  join('..', 'lazynb', 'labextension', 'source-hash.json'),
  JSON.stringify(out, null, 1) + '\n'
);
console.log(
  `source-hash.json: ${out.sha256.slice(0, 16)}... over ${inputs.length} files (${mode})`
);
