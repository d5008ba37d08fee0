/**
 * Generated source and the kernel's UOps, cross-highlighted the Compiler Explorer way: hovering a
 * source line lights the UOps it came from (line_map), hovering a UOp lights the lines it produced.
 * A click pins the highlight until the next click.
 */
import { clip, h, setChildren } from './dom';
import {
  buildLineIndex,
  highlightForLine,
  highlightForUop,
  ILineIndex
} from './linemap';
import { IKernel } from './types';

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

  constructor() {
    this.sourcePane = h('div', { cls: 'lz-source', attrs: { role: 'list' } });
    this.uopPane = h('div', { cls: 'lz-uops', attrs: { role: 'list' } });
    this.node = h(
      'div',
      { cls: 'lz-code' },
      h(
        'div',
        { cls: 'lz-toolbar' },
        h('span', { cls: 'lz-pane-title' }, 'Source'),
        h('span', { cls: 'lz-hint' }, 'hover a line or a UOp; click to pin')
      ),
      this.sourcePane,
      h(
        'div',
        { cls: 'lz-toolbar' },
        h('span', { cls: 'lz-pane-title' }, 'UOps')
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
    this.pinned = false;
    this.lit = [];
    this.uopEls.clear();
    const gen = ++this.generation;
    if (!k) {
      setChildren(
        this.sourcePane,
        h('div', { cls: 'lz-empty' }, 'no kernel selected')
      );
      setChildren(this.uopPane);
      this.lineEls = [];
      return;
    }
    const lines = k.source.split('\n').slice(0, MAX_LINES);
    this.index = buildLineIndex(k.lineMap, lines.length);
    const width = String(lines.length).length;
    this.lineEls = lines.map((text, i) => {
      const count = this.index.uopsOfLine[i].length;
      const el = h(
        'div',
        { cls: count ? 'lz-line lz-mapped' : 'lz-line', data: { line: i } },
        h('span', { cls: 'lz-lineno' }, String(i + 1).padStart(width, ' ')),
        h('span', { cls: 'lz-linetext' }, text || ' ')
      );
      return el;
    });
    appendInChunks(
      this.sourcePane,
      this.lineEls,
      () => gen === this.generation
    );
    const rows = k.uops.map(u => {
      const src = u.src.length
        ? ` \u2190 ${u.src.map(x => `%${x}`).join(', ')}`
        : '';
      const el = h(
        'div',
        {
          cls: this.index.linesOfUop.has(u.i) ? 'lz-uop lz-mapped' : 'lz-uop',
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
