/**
 * A kernel's shape and its ShapeTracker views: the axes (coloured by kind), launch sizes, opts, and
 * for every buffer access the index and validity expressions, the views (shape, strides, offset,
 * mask) and the movement ops that made them.
 */
import { fmtTuple, h, setChildren } from './dom';
import { drawPicture, readPicture } from './stpicture';
import { IBufferAccess, IKernel, IViewPart } from './types';

const AXIS_CLASS: Record<string, string> = {
  GLOBAL: 'global',
  THREAD: 'thread',
  LOCAL: 'local',
  GROUP: 'group',
  GROUP_REDUCE: 'group',
  REDUCE: 'reduce',
  UNROLL: 'unroll',
  UPCAST: 'upcast'
};

export function axisClass(axisType: string): string {
  return `lz-axis-${AXIS_CLASS[axisType.toUpperCase()] ?? 'other'}`;
}

function viewTable(views: IViewPart[], axisNames: string[]): HTMLTableElement {
  const head = h(
    'tr',
    {},
    h('th', {}, ''),
    ...views.map((_, i) => h('th', {}, `view ${i}`))
  );
  const rows: [string, (v: IViewPart) => string][] = [
    ['shape', v => fmtTuple(v.shape)],
    ['strides', v => fmtTuple(v.strides)],
    ['offset', v => String(v.offset)],
    [
      'mask',
      v => (v.mask ? `(${v.mask.map(m => fmtTuple(m)).join(', ')})` : '\u2014')
    ]
  ];
  const body = rows.map(([name, f]) =>
    h('tr', {}, h('th', {}, name), ...views.map(v => h('td', {}, f(v))))
  );
  if (views.some(v => v.contiguous !== null)) {
    body.push(
      h(
        'tr',
        {},
        h('th', {}, 'contiguous'),
        ...views.map(v => h('td', {}, v.contiguous ? 'yes' : 'no'))
      )
    );
  }
  const table = h(
    'table',
    { cls: 'lz-table lz-view-table' },
    h('thead', {}, head),
    h('tbody', {}, ...body)
  );
  if (axisNames.length) {
    table.title = `axes: ${axisNames.join(', ')}`;
  }
  return table;
}

function pictureDetails(a: IBufferAccess): HTMLElement | null {
  const p = readPicture(a.picture);
  if (!p) {
    return null;
  }
  const details = h(
    'details',
    { cls: 'lz-stp-details' },
    h('summary', {}, 'picture: the cells and the memory they read')
  );
  details.addEventListener('toggle', () => {
    if (details.open && details.children.length === 1) {
      details.appendChild(drawPicture(p));
    }
  });
  return details;
}

function accessCard(a: IBufferAccess): HTMLElement {
  const title =
    `${a.access.toUpperCase()} ${a.buf === null ? '' : `data${a.buf}`}`.trim();
  return h(
    'div',
    { cls: `lz-access lz-access-${a.access.replace(/[^a-z]/g, '')}` },
    h(
      'div',
      { cls: 'lz-access-title' },
      title,
      h('span', { cls: 'lz-dim' }, ` shape ${fmtTuple(a.shape)}`)
    ),
    h(
      'div',
      { cls: 'lz-expr' },
      h('span', { cls: 'lz-dim' }, 'index '),
      h('code', {}, a.index || '\u2014')
    ),
    a.valid && a.valid !== 'True'
      ? h(
          'div',
          { cls: 'lz-expr' },
          h('span', { cls: 'lz-dim' }, 'valid '),
          h('code', {}, a.valid)
        )
      : null,
    a.views.length ? viewTable(a.views, a.axisNames) : null,
    a.astViews.length
      ? h(
          'div',
          { cls: 'lz-dim lz-small' },
          'before opts: ',
          a.astViews
            .map(v => `${fmtTuple(v.shape)} strides ${fmtTuple(v.strides)}`)
            .join(' | ')
        )
      : null,
    a.movement.length
      ? h(
          'div',
          { cls: 'lz-movement' },
          h('span', { cls: 'lz-dim' }, 'movement '),
          a.movement.map(([op, arg]) => `${op}${arg}`).join(' \u2192 ')
        )
      : null,
    pictureDetails(a)
  );
}

export class ShapeTrackerView {
  readonly node: HTMLDivElement;
  private body: HTMLDivElement;

  constructor() {
    this.body = h('div', { cls: 'lz-st-body' });
    this.node = h(
      'div',
      { cls: 'lz-st' },
      h(
        'div',
        { cls: 'lz-toolbar' },
        h('span', { cls: 'lz-pane-title' }, 'ShapeTracker views')
      ),
      this.body
    );
  }

  show(k: IKernel | null): void {
    if (!k) {
      setChildren(
        this.body,
        h('div', { cls: 'lz-empty' }, 'no kernel selected')
      );
      return;
    }
    const axes = h(
      'div',
      { cls: 'lz-axes' },
      h('span', { cls: 'lz-dim' }, 'full shape '),
      ...k.fullShape.map((n, i) =>
        h(
          'span',
          {
            cls: `lz-axis ${axisClass(k.axisTypes[i] ?? '')}`,
            title: k.axisTypes[i] ?? ''
          },
          String(n)
        )
      )
    );
    const info = h(
      'div',
      { cls: 'lz-small' },
      `global ${fmtTuple(k.globalSize)} \u00b7 local ${fmtTuple(k.localSize)} \u00b7 opts `,
      h('code', {}, k.opts.length ? k.opts.join(', ') : 'none')
    );
    const cards = k.views.length
      ? k.views.map(accessCard)
      : [h('div', { cls: 'lz-empty' }, 'no buffer accesses recorded')];
    setChildren(this.body, axes, info, ...cards);
  }
}
