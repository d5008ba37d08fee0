/**
 * The ShapeTracker picture (data from lazynb/notebook/picture.py): a grid of logical cells, each showing the
 * memory index it reads (striped where a mask says it reads nothing), next to the memory as a row of cells
 * coloured like the cells that read them. Hovering a logical cell lights the memory cell it reads and shows
 * its index arithmetic view by view (for a stack of views, the intermediate index in each view); hovering a
 * memory cell lights every logical cell that reads it. Every number is the Python side's; this only draws.
 */
import { fmtTuple, h, setChildren, plural } from './dom';
import { arr, num, numOrNull, nums, obj, str } from './types';

const PALETTE = 10;

export interface IPicView {
  shape: number[];
  strides: number[];
  offset: number;
  mask: number[][] | null;
}

export interface IPicStep {
  view: number;
  idx: number[];
  out: number;
  valid: boolean;
}

export interface IPicCell {
  idx: number[];
  mem: number | null;
  steps: IPicStep[];
}

export interface IStPicture {
  title: string;
  shape: number[];
  dims: [number | null, number | null];
  at: number[];
  rows: number;
  cols: number;
  totalRows: number;
  totalCols: number;
  views: IPicView[];
  index: string;
  valid: string;
  memSize: number;
  memStart: number;
  memEnd: number;
  cells: IPicCell[][];
  movement: [string, string][];
}

/** Copy an untrusted picture; null if it is not one. */
export function readPicture(x: unknown): IStPicture | null {
  if (x === null || typeof x !== 'object' || Array.isArray(x)) {
    return null;
  }
  const p = obj(x);
  const dims = arr(p.dims);
  const cells = arr(p.cells).map(row =>
    arr(row).map(c => {
      const o = obj(c);
      return {
        idx: nums(o.idx),
        mem: numOrNull(o.mem),
        steps: arr(o.steps).map(s => {
          const q = obj(s);
          return {
            view: num(q.view),
            idx: nums(q.idx),
            out: num(q.out),
            valid: q.valid === true
          };
        })
      };
    })
  );
  const memStart = Math.max(0, num(p.mem_start));
  return {
    title: str(p.title),
    shape: nums(p.shape),
    dims: [numOrNull(dims[0]), numOrNull(dims[1])],
    at: nums(p.at),
    rows: cells.length,
    cols: cells.length ? cells[0].length : 0,
    totalRows: num(p.total_rows, cells.length),
    totalCols: num(p.total_cols),
    views: arr(p.views).map(v => {
      const o = obj(v);
      return {
        shape: nums(o.shape),
        strides: nums(o.strides),
        offset: num(o.offset),
        mask: Array.isArray(o.mask) ? arr(o.mask).map(nums) : null
      };
    }),
    index: str(p.index),
    valid: str(p.valid, 'True'),
    memSize: num(p.mem_size),
    memStart,
    // at most 256 memory cells, whatever the payload says
    memEnd: Math.min(Math.max(memStart, num(p.mem_end)), memStart + 256),
    cells,
    movement: arr(p.movement).map(
      m => [str(arr(m)[0]), str(arr(m)[1])] as [string, string]
    )
  };
}

/** One view's step for one index: "offset + i*stride + ... = out", or why its mask fails. */
export function arithmetic(view: IPicView | undefined, step: IPicStep): string {
  if (!view) {
    return `= ${step.out}`;
  }
  if (view.mask && !step.valid) {
    const bad = step.idx.findIndex(
      (i, d) =>
        view.mask![d] && !(view.mask![d][0] <= i && i < view.mask![d][1])
    );
    if (bad >= 0) {
      const [lo, hi] = view.mask[bad];
      return `index ${step.idx[bad]} of dim ${bad} is outside the mask [${lo}, ${hi}): padding, reads nothing`;
    }
    return 'outside the mask: padding, reads nothing';
  }
  const terms = [
    String(view.offset),
    ...step.idx.map((i, d) => `${i}*${view.strides[d] ?? 0}`)
  ];
  return `${terms.join(' + ')} = ${step.out}`;
}

/** How one cell's index goes through the views to memory, one line per step. */
export function cellStory(p: IStPicture, cell: IPicCell): string[] {
  const lines = [`index ${fmtTuple(cell.idx)}`];
  for (const [j, s] of cell.steps.entries()) {
    const v = p.views[s.view];
    if (j) {
      lines.push(
        `  unflatten into view ${s.view}'s shape ${fmtTuple(v ? v.shape : [])}: ${fmtTuple(s.idx)}`
      );
    }
    lines.push(`  view ${s.view}: ${arithmetic(v, s)}`);
    if (!s.valid) {
      break;
    }
  }
  lines.push(
    cell.mem !== null
      ? `  reads memory[${cell.mem}]`
      : '  reads nothing (valid = False): the value is 0'
  );
  return lines;
}

function gridNote(p: IStPicture): string {
  const [r, c] = p.dims;
  const parts: string[] = [];
  if (r !== null && p.rows < p.totalRows) {
    parts.push(`rows: first ${p.rows} of ${p.totalRows}`);
  }
  if (p.cols < p.totalCols) {
    parts.push(`cols: first ${p.cols} of ${p.totalCols}`);
  }
  const held = p.at
    .map((a, d) =>
      d !== r && d !== c && (p.shape[d] ?? 1) > 1 ? `dim ${d} = ${a}` : ''
    )
    .filter(Boolean);
  if (held.length) {
    parts.push(`holding ${held.join(', ')}`);
  }
  return parts.join('; ');
}

function colour(m: number): string {
  return `lz-stp-h${((m % PALETTE) + PALETTE) % PALETTE}`;
}

/** The picture as DOM, with hover. */
export function drawPicture(p: IStPicture): HTMLElement {
  const [r, c] = p.dims;
  const readout = h(
    'pre',
    { cls: 'lz-stp-readout' },
    'hover a cell: its index arithmetic, view by view'
  );
  const memCells = new Map<number, HTMLElement>();
  const readers = new Map<number, HTMLElement[]>();
  const lit: HTMLElement[] = [];
  const clear = () => {
    for (const e of lit.splice(0)) {
      e.classList.remove('lz-stp-on');
    }
  };
  const light = (...els: (HTMLElement | undefined)[]) => {
    for (const e of els) {
      if (e) {
        e.classList.add('lz-stp-on');
        lit.push(e);
      }
    }
  };
  const head = h(
    'tr',
    {},
    h('th', {}, ''),
    ...Array.from({ length: p.cols }, (_, x) => h('th', {}, String(x)))
  );
  const rows = p.cells.map((row, y) =>
    h(
      'tr',
      {},
      h('th', {}, r === null ? '' : String(y)),
      ...row.map(cell => {
        const td =
          cell.mem === null
            ? h(
                'td',
                {
                  cls: 'lz-stp-c lz-stp-masked',
                  data: { mem: '', idx: cell.idx.join(',') }
                },
                '\u00b7'
              )
            : h(
                'td',
                {
                  cls: `lz-stp-c ${colour(cell.mem)}`,
                  data: { mem: cell.mem, idx: cell.idx.join(',') }
                },
                String(cell.mem)
              );
        if (cell.mem !== null) {
          readers.set(cell.mem, [...(readers.get(cell.mem) ?? []), td]);
        }
        td.addEventListener('mouseenter', () => {
          clear();
          light(td, cell.mem === null ? undefined : memCells.get(cell.mem));
          readout.textContent = cellStory(p, cell).join('\n');
        });
        return td;
      })
    )
  );
  const mem: HTMLElement[] = [];
  for (let m = p.memStart; m < p.memEnd; m++) {
    const read = readers.has(m);
    const td = h(
      'td',
      {
        cls: `lz-stp-m ${read ? `${colour(m)} lz-stp-read` : 'lz-stp-unread'}`,
        data: { mem: m }
      },
      String(m)
    );
    td.addEventListener('mouseenter', () => {
      clear();
      const who = readers.get(m) ?? [];
      light(td, ...who);
      readout.textContent = who.length
        ? `memory[${m}] is read by ${who.length} cell${who.length === 1 ? '' : 's'} drawn: ${who.map(w => `(${w.dataset.idx})`).join(' ')}`
        : `memory[${m}] is read by none of the cells drawn`;
    });
    memCells.set(m, td);
    mem.push(td);
  }
  const full = p.memStart === 0 && p.memEnd === p.memSize;
  const note = gridNote(p);
  const axes = `${r !== null ? `rows: dim ${r}, ` : ''}columns: dim ${c}`;
  const node = h(
    'div',
    { cls: 'lz-stp' },
    h(
      'div',
      { cls: 'lz-stp-title' },
      `${p.title ? `${p.title} \u00b7 ` : ''}shape ${fmtTuple(p.shape)}`
    ),
    ...p.views.map((v, k) =>
      h(
        'div',
        { cls: 'lz-stp-view' },
        `view ${k}: shape ${fmtTuple(v.shape)} strides ${fmtTuple(v.strides)} offset ${v.offset}${v.mask ? ` mask (${v.mask.map(m => fmtTuple(m)).join(', ')})` : ''}`
      )
    ),
    p.movement.length
      ? h(
          'div',
          { cls: 'lz-stp-movement' },
          'movement: ',
          p.movement.map(([op, a]) => `${op}${a}`).join(' \u2192 ')
        )
      : null,
    h(
      'div',
      { cls: 'lz-stp-expr' },
      `index = ${p.index}`,
      p.valid !== 'True' ? ` \u00b7 valid = ${p.valid}` : ''
    ),
    h(
      'div',
      { cls: 'lz-dim lz-small' },
      `each cell: the memory index it reads (${axes}; striped = padding, reads nothing)${note ? `; ${note}` : ''}`
    ),
    h(
      'div',
      { cls: 'lz-stp-row' },
      h(
        'div',
        { cls: 'lz-stp-scroll' },
        h(
          'table',
          { cls: 'lz-stp-grid' },
          h('thead', {}, head),
          h('tbody', {}, ...rows)
        )
      ),
      readout
    ),
    h(
      'div',
      { cls: 'lz-dim lz-small' },
      full
        ? `memory: the buffer's ${plural(p.memSize, 'element')}`
        : `memory: elements ${p.memStart} to ${p.memEnd - 1} of ${p.memSize}`
    ),
    h(
      'div',
      { cls: 'lz-stp-scroll' },
      h('table', { cls: 'lz-stp-mem' }, h('tbody', {}, h('tr', {}, ...mem)))
    )
  );
  node.addEventListener('mouseleave', clear);
  return node;
}

/** show_st's document: its pictures, one after another. */
export function picturesView(pictures: unknown[]): HTMLElement {
  const node = h('div', { cls: 'lz-stp-list' });
  const ps = pictures
    .map(readPicture)
    .filter((p): p is IStPicture => p !== null);
  setChildren(
    node,
    ...(ps.length
      ? ps.map(drawPicture)
      : [
          h(
            'div',
            { cls: 'lz-empty' },
            'no ShapeTracker pictures in this output'
          )
        ])
  );
  return node;
}
