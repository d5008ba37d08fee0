/**
 * A learner's stages next to lazynb's (lazynb.pipeline.use): which side of a kernel a pane shows,
 * and where the learner's result first differs. Pure: no DOM.
 */
import { IKernel, IStageDifference, IStageReference, IUOpRow } from './types';

/** Which result a pane shows: the learner's (what ran) or lazynb's own on the same input. */
export type Side = 'yours' | 'lazynb';

/** "your stages: lower, render", or '' when no stage was replaced. */
export function yourStages(stages: string[]): string {
  return stages.length ? `your stages: ${stages.join(', ')}` : '';
}

/** The difference recorded at `stage`, or null (the same as lazynb's there, or not compared). */
export function differenceAt(
  ref: IStageReference | null,
  stage: string
): IStageDifference | null {
  return ref?.differences.find(d => d.stage === stage) ?? null;
}

/** The places the views mark, in a few words: "graph node 10, UOp %4, line 10" (those that differ). */
export function markedPlaces(ref: IStageReference): string[] {
  const node = differenceAt(ref, 'simplify')?.node ?? null;
  const uop = differenceAt(ref, 'linearize')?.index ?? null;
  const line = differenceAt(ref, 'render')?.line ?? null;
  return [
    node !== null ? `graph node ${node}` : '',
    uop !== null ? `UOp %${uop}` : '',
    line !== null ? `line ${line}` : ''
  ].filter(Boolean);
}

/** The kernel's line about the learner's stages: which ran, from which stage on its results leave lazynb's, and where. */
export function kernelStagesLine(k: IKernel): string {
  if (!k.replaced.length) {
    return '';
  }
  const ref = k.reference;
  const first = ref?.differences[0] ?? null;
  const places = ref ? markedPlaces(ref) : [];
  const verdict = !ref
    ? 'not compared with lazynb\u2019s'
    : first
      ? `differs from lazynb\u2019s from ${first.stage} on${places.length ? `: ${places.join(', ')}` : ''}`
      : 'same results as lazynb\u2019s';
  return `${yourStages(k.replaced)} \u00b7 ${verdict}`;
}

export interface ISideView {
  source: string;
  uops: IUOpRow[];
  /** line -> uops: lazynb's source has none recorded here */
  lineMap: number[][];
  /** index of the first differing source line (from 0), or null */
  diffLine: number | null;
  /** the first differing UOp's index, or null */
  diffUop: number | null;
}

/**
 * What the Source and UOps panes show for one side of a kernel. lazynb's side falls back to the
 * kernel's own UOps where lazynb's were not needed (only the renderer was replaced); the first
 * difference is marked at the same place on both sides.
 */
export function sideView(k: IKernel, side: Side): ISideView {
  const ref = k.reference;
  const theirs = side === 'lazynb' && ref !== null;
  const line = differenceAt(ref, 'render')?.line ?? null;
  return {
    source: theirs ? (ref.source ?? k.source) : k.source,
    uops: theirs ? (ref.uops ?? k.uops) : k.uops,
    lineMap: theirs ? [] : k.lineMap,
    diffLine: line !== null && line >= 1 ? line - 1 : null,
    diffUop: differenceAt(ref, 'linearize')?.index ?? null
  };
}

/** The lowered graph's node that first differs (after simplify), or null. */
export function loweredDiffNode(k: IKernel): number | null {
  return differenceAt(k.reference, 'simplify')?.node ?? null;
}
