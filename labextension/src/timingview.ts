/**
 * Time per kernel: runs, run time, compile time, GFLOPS, GB/s and opts, with the block's totals, and a bar chart of
 * run time (each bar relative to the slowest kernel; its tooltip gives the share of all kernels' time).
 */
import { fmtSeconds, h } from './dom';
import { kernelName } from './kernelname';
import { ITraceDoc } from './types';

export function timingTable(
  doc: ITraceDoc,
  onKernel: (id: number) => void
): HTMLElement {
  const head = h(
    'tr',
    {},
    ...[
      'kernel',
      'device',
      'runs',
      'time',
      'compile',
      'GFLOPS',
      'GB/s',
      'opts',
      'run time'
    ].map(t => h('th', {}, t))
  );
  const slowest = Math.max(0, ...doc.kernels.map(k => k.timeS || 0));
  const total = doc.kernels.reduce((a, k) => a + (k.timeS || 0), 0);
  const bar = (sec: number): HTMLElement => {
    const share = total > 0 ? (100 * sec) / total : 0;
    const b = h('div', {
      cls: 'lz-bar',
      title: `${fmtSeconds(sec)}: ${share.toFixed(1)} % of the kernels' run time`
    });
    b.style.width = `${slowest > 0 ? (100 * sec) / slowest : 0}%`; // a number: no markup reaches the page
    return h('td', { cls: 'lz-bar-cell' }, b);
  };
  const rows = doc.kernels.map(k => {
    const link = h(
      'button',
      { cls: 'lz-link', attrs: { type: 'button' }, title: 'open this kernel' },
      kernelName(k)
    );
    link.addEventListener('click', () => onKernel(k.id));
    return h(
      'tr',
      {},
      h('td', {}, link),
      h('td', {}, k.device),
      h('td', { cls: 'lz-num' }, String(k.runs)),
      h('td', { cls: 'lz-num' }, fmtSeconds(k.timeS)),
      h(
        'td',
        { cls: 'lz-num' },
        k.compileS === null ? '\u2014' : fmtSeconds(k.compileS)
      ),
      h('td', { cls: 'lz-num' }, k.gflops.toFixed(2)),
      h('td', { cls: 'lz-num' }, k.gbs.toFixed(2)),
      h('td', {}, h('code', {}, k.opts.join(', ') || '\u2014')),
      bar(k.timeS || 0)
    );
  });
  const t = doc.timing;
  return h(
    'div',
    { cls: 'lz-timing' },
    h(
      'div',
      { cls: 'lz-small' },
      `block ${fmtSeconds(t.totalS)} \u00b7 kernels ran ${fmtSeconds(t.runS)} \u00b7 compiling ${fmtSeconds(t.compileS)}`
    ),
    h(
      'table',
      { cls: 'lz-table' },
      h('thead', {}, head),
      h('tbody', {}, ...rows)
    )
  );
}
