/**
 * The schedule as a list: one row per schedule item (kernel or copy), with why it is its own kernel,
 * its buffers and its time. Clicking a row selects it.
 */
import { fmtSeconds, h, setChildren } from './dom';
import { kernelName } from './kernelname';
import { yourStages } from './stagediff';
import { ITraceDoc } from './types';

export const REASONS: Record<string, string> = {
  realize:
    'a tensor you realized (or marked .contiguous()): its value is stored to a buffer',
  reduce: 'a reduce that cannot fuse into the kernel using it',
  copy: 'the data moves to another device, which is a copy of its own',
  pad: 'a padded view cannot pass through an op where f(0) != 0, so the value is stored first'
};

export class ScheduleView {
  readonly node: HTMLDivElement;
  private rows: HTMLElement[] = [];

  constructor(private onSelect: (item: number) => void) {
    this.node = h('div', {
      cls: 'lz-schedule',
      attrs: { role: 'listbox', 'aria-label': 'schedule' }
    });
  }

  show(doc: ITraceDoc): void {
    this.rows = doc.schedule.map((item, i) => {
      const k =
        item.kernel !== null
          ? doc.kernels.find(x => x.id === item.kernel)
          : undefined;
      const reason = item.reason.replace(/[^a-z]/gi, '').toLowerCase();
      const bufs = item.bufs
        .map(
          b =>
            `${b.role === 'out' ? '\u2192' : ''}${b.buf === null ? '?' : `b${b.buf}`}`
        )
        .join(' ');
      const row = h(
        'div',
        {
          cls: 'lz-sched-row',
          attrs: { role: 'option', tabindex: 0 },
          data: { item: i, kernel: item.kernel ?? -1 }
        },
        h(
          'div',
          { cls: 'lz-sched-head' },
          h('span', { cls: 'lz-dim' }, `#${item.index}`),
          ' ',
          k
            ? kernelName(k)
            : h('span', { cls: 'lz-kname' }, item.kind || 'item')
        ),
        h(
          'div',
          { cls: 'lz-sched-meta' },
          h(
            'span',
            {
              cls: `lz-reason lz-reason-${reason || 'none'}`,
              title: REASONS[reason] ?? item.reason
            },
            item.reason || item.kind
          ),
          k
            ? ` ${k.device} \u00b7 ${fmtSeconds(k.timeS)}${k.runs > 1 ? ` \u00d7${k.runs}` : ''}`
            : '',
          k?.replaced.length
            ? h(
                'span',
                { cls: 'lz-yours-badge', title: yourStages(k.replaced) },
                ' yours'
              )
            : null,
          h(
            'span',
            { cls: 'lz-dim', title: 'buffers: \u2192 marks the output' },
            ` ${bufs}`
          )
        )
      );
      row.addEventListener('click', () => this.onSelect(i));
      row.addEventListener('keydown', e => {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          this.onSelect(i);
        }
      });
      return row;
    });
    // kernels that ran outside any recorded schedule (e.g. from a JIT replay) are listed too
    const scheduled = new Set(doc.schedule.map(s => s.kernel));
    const extra = doc.kernels
      .filter(k => !scheduled.has(k.id))
      .map(k => {
        const row = h(
          'div',
          {
            cls: 'lz-sched-row',
            attrs: { role: 'option', tabindex: 0 },
            data: { item: -1, kernel: k.id }
          },
          h(
            'div',
            { cls: 'lz-sched-head' },
            h('span', { cls: 'lz-dim' }, 'k'),
            ' ',
            kernelName(k)
          ),
          h(
            'div',
            { cls: 'lz-sched-meta' },
            `${k.device} \u00b7 ${fmtSeconds(k.timeS)}`
          )
        );
        row.addEventListener('click', () => this.onSelect(-1 - k.id));
        return row;
      });
    this.rows.push(...extra);
    const folded =
      doc.foldedConstants > 0
        ? [
            h(
              'div',
              { cls: 'lz-empty lz-folded' },
              `${doc.foldedConstants} tensor${doc.foldedConstants === 1 ? ' was a constant' : 's were constants'} after folding: no kernel (fold constants)`
            )
          ]
        : [];
    setChildren(
      this.node,
      ...(this.rows.length || folded.length
        ? [...this.rows, ...folded]
        : [h('div', { cls: 'lz-empty' }, 'nothing was scheduled')])
    );
  }

  /** Mark the row for schedule item `item` (or kernel -1-id) as selected. */
  mark(item: number): void {
    for (const r of this.rows) {
      const it = Number(r.dataset.item);
      const kid = Number(r.dataset.kernel);
      const on = item >= 0 ? it === item : it === -1 && kid === -1 - item;
      r.classList.toggle('lz-selected', on);
      r.setAttribute('aria-selected', on ? 'true' : 'false');
    }
  }
}
