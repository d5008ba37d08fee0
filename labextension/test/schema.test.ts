/**
 * The reader types against the JSON schemas, checked by tsc: schema/*.d.ts is generated from lazynb/trace.schema.json
 * and lazynb/playground.schema.json by json-schema-to-typescript (schema-types.mjs), and each interface the views
 * read a payload into may only have fields the schema's object has (camelCased): a field the Python side never writes
 * would be read as a silent default. A wrong field is a compile error of this file, naming the field.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type * as S from '../schema/trace';
import type * as P from '../schema/playground';
import type * as T from '../src/types';
import type { IBeamRound, ICandidate } from '../src/optview';

type Camel<K extends string> = K extends `${infer H}_${infer R}`
  ? `${H}${Capitalize<Camel<R>>}`
  : K;
type Written<R> = {
  [K in keyof R]-?: K extends string ? Camel<K> : never;
}[keyof R];
/** The fields of interface I that the schema's object R lacks: never, when I reads only what is written. */
type Unwritten<I, R> = Exclude<keyof I, Written<R>>;
type None<T extends never> = T;

export type Checked = [
  None<Unwritten<T.ITraceDoc, S.TraceDocument>>,
  None<Unwritten<T.IGraphNode, S.GraphNode>>,
  None<Unwritten<T.IGraph, S.Graph>>,
  None<Unwritten<T.IUOpRow, S.UOpRow>>,
  None<Unwritten<T.IViewPart, S.ViewPart>>,
  None<Unwritten<T.IBufferAccess, S.BufferAccess>>,
  None<Unwritten<T.IKernel, S.Kernel>>,
  None<Unwritten<T.IScheduleBuf, S.ScheduleBuf>>,
  None<Unwritten<T.IScheduleItem, S.ScheduleItem>>,
  None<Unwritten<T.IRewriteStep, S.RewriteStep>>,
  None<Unwritten<T.IRewritePass, S.RewritePass>>,
  None<Unwritten<T.ITraceDoc['timing'], S.Timing>>,
  None<Unwritten<NonNullable<T.ITraceDoc['error']>, S.Error>>,
  None<Unwritten<T.IStageReference, S.StageReference>>,
  None<Unwritten<T.IStageDifference, S.StageDifference>>,
  None<Unwritten<ICandidate, P.Candidate>>,
  None<Unwritten<IBeamRound, P.Round>>
];

// the interfaces listed above, as the schema names them (x-ts-interface): a new one must be added there
const CHECKED = [
  'ITraceDoc',
  'IGraphNode',
  'IGraph',
  'IUOpRow',
  'IViewPart',
  'IBufferAccess',
  'IKernel',
  'IScheduleBuf',
  'IScheduleItem',
  'IRewriteStep',
  'IRewritePass',
  'ITraceDoc.timing',
  'ITraceDoc.error',
  'IStageReference',
  'IStageDifference'
];
const ROOT = path.resolve(__dirname, '..', '..');

test('every interface the trace schema names is checked above', () => {
  const schema = JSON.parse(
    fs.readFileSync(
      path.join(ROOT, '..', 'lazynb', 'trace.schema.json'),
      'utf8'
    )
  );
  const named = [
    schema['x-ts-interface'],
    ...Object.values(schema.$defs).map((d: any) => d['x-ts-interface'])
  ];
  assert.deepEqual(named.filter(n => n).sort(), [...CHECKED].sort());
});

test('schema/*.d.ts is what json-schema-to-typescript makes of the schemas now', () => {
  execFileSync(process.execPath, ['schema-types.mjs', '--check'], {
    cwd: ROOT,
    stdio: 'pipe'
  });
});
