/**
 * A kernel's name with its axis digits coloured by kind (global, local, reduce, upcast, ...), built
 * from name_parts, so no ANSI codes or markup from the payload reach the page.
 */
import { h } from './dom';
import { IKernel } from './types';

const KINDS = new Set([
  'global',
  'thread',
  'local',
  'group',
  'reduce',
  'unroll',
  'upcast'
]);

export function kernelName(k: IKernel): HTMLSpanElement {
  const parts = k.nameParts.length
    ? k.nameParts
    : [[k.displayName, ''] as [string, string]];
  return h(
    'span',
    { cls: 'lz-kname', title: k.name },
    ...parts.map(([text, kind]) =>
      KINDS.has(kind) ? h('span', { cls: `lz-axis-${kind}` }, text) : text
    )
  );
}
