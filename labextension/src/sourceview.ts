/**
 * Generated source and the kernel's UOps, cross-highlighted the Compiler Explorer way: hovering a
 * source line lights the UOps it came from (line_map), hovering a UOp lights the lines it produced.
 * A click pins the highlight until the next click. When a learner's stage made the kernel
 * (lazynb.pipeline.use), a toggle shows theirs or lazynb's, with the first difference marked.
 */
import { clip, h, setChildren } from './dom';
import {
  buildLineIndex,
  highlightForLine,
  highlightForUop,
  ILineIndex
} from './linemap';
import { IKernel } from './types';
import { differenceAt, Side, sideView } from './stagediff';

const MAX_LINES = 20000;

export class SourceView {
  readonly node: HTMLDivElement;
  private sourcePane: HTMLDivElement;
  private uopPane: HTMLDivElement;
  private lineEls: HTMLDivElement[] = [];
  private uopEls = new Map<number, HTMLDivElement>();
  private index: ILineIndex = { uopsOfLine: [], linesOfUop: new Map() };
  private lit: HTMLElement[] = [];
  private pinned = false;
  private generation = 0;
  private kernel: IKernel | null = null;
  private side: Side = 'yours';
  private sides: HTMLSpanElement;
  private sideButtons: Map<Side, HTMLButtonElement>;
  private lineDiff: HTMLButtonElement;
  private uopDiff: HTMLButtonElement;
  private diffLineEl: HTMLDivElement | null = null;
  private diffUopEl: HTMLDivElement | null = null;

  constructor() {
    this.sourcePane = h('div', { cls: 'lz-source', attrs: { role: 'list' } });
    this.uopPane = h('div', { cls: 'lz-uops', attrs: { role: 'list' } });
    const pick = (side: Side, label: string, tip: string) => {
      const b = h(
        'button',
        {
          cls: 'lz-seg',
          title: tip,
          attrs: { type: 'button' },
          data: { side }
        },
        label
      );
      b.addEventListener('click', () => {
        this.side = side;
        this.render();
      });
      return b;
    };
    this.sideButtons = new Map([
      ['yours', pick('yours', 'yours', 'what your stages made (it ran)')],
      [
        'lazynb',
        pick(
          'lazynb',
          'lazynb\u2019s',
          'what lazynb\u2019s own stages make from the same input'
        )
      ]
    ]);
    this.sides = h('span', { cls: 'lz-segs' }, ...this.sideButtons.values());
    const jump = (which: 'line' | 'uop') => {
      const b = h('button', {
        cls: 'lz-link lz-diff-note',
        attrs: { type: 'button' }
      });
      b.addEventListener('click', () => {
        const el = which === 'line' ? this.diffLineEl : this.diffUopEl;
        if (el) {
          scrollWithin(which === 'line' ? this.sourcePane : this.uopPane, el);
        }
      });
      return b;
    };
    this.lineDiff = jump('line');
    this.uopDiff = jump('uop');
    this.node = h(
      'div',
      { cls: 'lz-code' },
      h(
        'div',
        { cls: 'lz-toolbar' },
        h('span', { cls: 'lz-pane-title' }, 'Source'),
        this.sides,
        this.lineDiff,
        h('span', { cls: 'lz-hint' }, 'hover a line or a UOp; click to pin')
      ),
      this.sourcePane,
      h(
        'div',
        { cls: 'lz-toolbar' },
        h('span', { cls: 'lz-pane-title' }, 'UOps'),
        this.uopDiff
      ),
      this.uopPane
    );
    // one listener per pane (kernels can have thousands of lines and UOps)
    const at = (e: Event, sel: string, attr: string): number | null => {
      const el = (e.target as Element).closest?.(sel);
      return el ? Number(el.getAttribute(attr)) : null;
    };
    this.sourcePane.addEventListener('mouseover', e => {
      const i = at(e, '.lz-line', 'data-line');
      if (i !== null) {
        this.hover(highlightForLine(this.index, i));
      }
    });
    this.sourcePane.addEventListener('click', e => {
      const i = at(e, '.lz-line', 'data-line');
      if (i !== null) {
        this.pin(highlightForLine(this.index, i));
      }
    });
    this.uopPane.addEventListener('mouseover', e => {
      const u = at(e, '.lz-uop', 'data-uop');
      if (u !== null) {
        this.hover(highlightForUop(this.index, u));
      }
    });
    this.uopPane.addEventListener('click', e => {
      const u = at(e, '.lz-uop', 'data-uop');
      if (u !== null) {
        this.pin(highlightForUop(this.index, u));
      }
    });
    this.node.addEventListener('mouseleave', () => {
      if (!this.pinned) {
        this.clear();
      }
    });
  }

  show(k: IKernel | null): void {
    this.kernel = k;
    if (!k?.reference) {
      this.side = 'yours';
    }
    this.render();
  }

  /** The kernel's source and UOps, from the side chosen, with the first difference from lazynb's marked. */
  private render(): void {
    const k = this.kernel;
    this.pinned = false;
    this.lit = [];
    this.uopEls.clear();
    this.diffLineEl = null;
    this.diffUopEl = null;
    const gen = ++this.generation;
    this.sides.hidden = !k?.reference;
    for (const [side, b] of this.sideButtons) {
      b.classList.toggle('lz-on', side === this.side);
      b.setAttribute('aria-pressed', side === this.side ? 'true' : 'false');
    }
    this.sourcePane.setAttribute('data-side', this.side);
    this.noteDiff(k);
    if (!k) {
      setChildren(
        this.sourcePane,
        h('div', { cls: 'lz-empty' }, 'no kernel selected')
      );
      setChildren(this.uopPane);
      this.lineEls = [];
      return;
    }
    const view = sideView(k, this.side);
    const lines = view.source.split('\n').slice(0, MAX_LINES);
    this.index = buildLineIndex(view.lineMap, lines.length);
    const width = String(lines.length).length;
    const lineMsg = differenceAt(k.reference, 'render')?.message ?? '';
    this.lineEls = lines.map((text, i) => {
      const count = this.index.uopsOfLine[i].length;
      const diff = i === view.diffLine;
      const el = h(
        'div',
        {
          cls: `lz-line${count ? ' lz-mapped' : ''}${diff ? ' lz-diff' : ''}`,
          data: { line: i },
          title: diff ? lineMsg : undefined
        },
        h('span', { cls: 'lz-lineno' }, String(i + 1).padStart(width, ' ')),
        h('span', { cls: 'lz-linetext' }, text || ' ')
      );
      if (diff) {
        this.diffLineEl = el;
      }
      return el;
    });
    appendInChunks(
      this.sourcePane,
      this.lineEls,
      () => gen === this.generation
    );
    const rows = view.uops.map(u => {
      const src = u.src.length
        ? ` \u2190 ${u.src.map(x => `%${x}`).join(', ')}`
        : '';
      const diff = u.i === view.diffUop;
      const el = h(
        'div',
        {
          cls: `lz-uop${this.index.linesOfUop.has(u.i) ? ' lz-mapped' : ''}${diff ? ' lz-diff' : ''}`,
          data: { uop: u.i },
          title: `${u.op} ${u.dtype} ${u.arg}`
        },
        h('span', { cls: 'lz-uop-id' }, `%${u.i}`),
        h('span', { cls: 'lz-uop-op' }, u.op),
        h('span', { cls: 'lz-uop-dtype' }, u.dtype),
        h('span', { cls: 'lz-uop-arg' }, clip(u.arg, 60)),
        h('span', { cls: 'lz-uop-src' }, src)
      );
      this.uopEls.set(u.i, el);
      if (diff) {
        this.diffUopEl = el;
      }
      return el;
    });
    if (rows.length) {
      appendInChunks(this.uopPane, rows, () => gen === this.generation);
    } else {
      setChildren(
        this.uopPane,
        h('div', { cls: 'lz-empty' }, 'no UOps recorded')
      );
    }
    // the first difference in view (when it is among the lines already in the page)
    for (const [pane, el] of [
      [this.sourcePane, this.diffLineEl],
      [this.uopPane, this.diffUopEl]
    ] as [HTMLElement, HTMLElement | null][]) {
      if (el?.isConnected) {
        scrollWithin(pane, el);
      }
    }
  }

  /** The toolbars' notes: where yours first differs from lazynb's (a click scrolls there). */
  private noteDiff(k: IKernel | null): void {
    const ref = k?.reference ?? null;
    const line = differenceAt(ref, 'render');
    const uop = differenceAt(ref, 'linearize');
    this.lineDiff.hidden = !ref;
    this.lineDiff.textContent = line
      ? `\u2260 line ${line.line ?? '?'}`
      : 'same as lazynb\u2019s';
    this.lineDiff.title = line?.message ?? '';
    this.lineDiff.classList.toggle('lz-differs', !!line);
    this.uopDiff.hidden = !ref || ref.uops === null;
    this.uopDiff.textContent = uop
      ? `\u2260 %${uop.index ?? '?'}`
      : 'same as lazynb\u2019s';
    this.uopDiff.title = uop?.message ?? '';
    this.uopDiff.classList.toggle('lz-differs', !!uop);
  }

  private clear(): void {
    for (const el of this.lit) {
      el.classList.remove('lz-lit', 'lz-lit-origin');
    }
    this.lit = [];
  }

  private hover(hl: { lines: number[]; uops: number[] }): void {
    if (!this.pinned) {
      this.apply(hl, true);
    }
  }

  private pin(hl: { lines: number[]; uops: number[] }): void {
    this.pinned = !this.pinned;
    this.apply(hl, true);
  }

  /** Light the lines and uops of `hl`; scroll the other pane so the first lit item shows. */
  private apply(
    hl: { lines: number[]; uops: number[] },
    scroll: boolean
  ): void {
    this.clear();
    const lines = hl.lines.map(i => this.lineEls[i]).filter(Boolean);
    const uops = hl.uops
      .map(i => this.uopEls.get(i))
      .filter((el): el is HTMLDivElement => !!el);
    for (const el of [...lines, ...uops]) {
      el.classList.add('lz-lit');
      this.lit.push(el);
    }
    if (scroll) {
      const fromLine = hl.lines.length === 1 && hl.uops.length !== 1;
      const target = fromLine ? uops[0] : lines[0];
      const pane = fromLine ? this.uopPane : this.sourcePane;
      if (target) {
        scrollWithin(pane, target);
      }
    }
  }
}

const FIRST_CHUNK = 300;
const CHUNK = 1500;

/** Fill `pane` with `els`: the first screenfuls now, the rest in later tasks, so a huge kernel never blocks the page. */
function appendInChunks(
  pane: HTMLElement,
  els: HTMLElement[],
  current: () => boolean
): void {
  setChildren(pane, ...els.slice(0, FIRST_CHUNK));
  let at = FIRST_CHUNK;
  const more = () => {
    if (!current() || at >= els.length) {
      return;
    }
    const frag = document.createDocumentFragment();
    frag.append(...els.slice(at, at + CHUNK));
    pane.appendChild(frag);
    at += CHUNK;
    setTimeout(more, 0);
  };
  setTimeout(more, 0);
}

/** Scroll `pane` (not the page) so `el` is visible; the pane is el's offsetParent (position: relative). */
function scrollWithin(pane: HTMLElement, el: HTMLElement): void {
  const top = el.offsetTop;
  if (
    top < pane.scrollTop ||
    top + el.offsetHeight > pane.scrollTop + pane.clientHeight
  ) {
    pane.scrollTop = Math.max(0, top - pane.clientHeight / 3);
  }
}
