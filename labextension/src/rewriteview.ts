/**
 * Rewrite passes, stepped through: pick a pass, walk its steps (the matched pattern and the node
 * before and after each rewrite), and compare the pass's graph before and after, side by side.
 */
import { h, setChildren, plural } from './dom';
import { GraphView } from './graphview';
import { ITraceDoc } from './types';

export class RewriteView {
  readonly node: HTMLDivElement;
  private select: HTMLSelectElement;
  private stepLabel: HTMLSpanElement;
  private stepBody: HTMLDivElement;
  private stepList: HTMLOListElement;
  private before = new GraphView('Before', { collapse: false });
  private after = new GraphView('After', { collapse: false });
  private doc: ITraceDoc | null = null;
  private pass = 0;
  private step = 0;

  constructor() {
    this.select = h('select', {
      cls: 'lz-select',
      attrs: { 'aria-label': 'rewrite pass' }
    });
    this.select.addEventListener('change', () =>
      this.showPass(Number(this.select.value))
    );
    const button = (label: string, tip: string, delta: number) => {
      const b = h(
        'button',
        {
          cls: 'lz-button',
          title: tip,
          attrs: { type: 'button' },
          data: { step: delta }
        },
        label
      );
      b.addEventListener('click', () => this.showStep(this.step + delta));
      return b;
    };
    this.stepLabel = h('span', { cls: 'lz-step-label' });
    this.stepBody = h('div', { cls: 'lz-step' });
    this.stepList = h('ol', { cls: 'lz-steps', attrs: { start: 1 } });
    this.node = h(
      'div',
      { cls: 'lz-rewrites' },
      h(
        'div',
        { cls: 'lz-toolbar' },
        h('span', { cls: 'lz-pane-title' }, 'Pass'),
        this.select,
        button('\u25c0', 'previous step', -1),
        this.stepLabel,
        button('\u25b6', 'next step', 1)
      ),
      this.stepBody,
      h(
        'div',
        { cls: 'lz-rewrite-panes' },
        h('div', { cls: 'lz-step-list' }, this.stepList),
        this.before.node,
        this.after.node
      )
    );
  }

  show(doc: ITraceDoc): void {
    this.doc = doc;
    setChildren(
      this.select,
      ...doc.rewrites.map((r, i) =>
        h(
          'option',
          { attrs: { value: i } },
          `${i + 1}. [${r.stage ?? 'other'}] ${r.name} (${plural(r.totalSteps, 'step')})${r.replacedStage ? ` \u00b7 in your ${r.replacedStage}` : ''}`
        )
      )
    );
    if (!doc.rewrites.length) {
      setChildren(
        this.stepBody,
        h('div', { cls: 'lz-empty' }, 'no rewrite passes were recorded')
      );
      return;
    }
    // open on the first pass that changed something (the tensor graph's first pass often folds nothing)
    this.showPass(
      Math.max(
        0,
        doc.rewrites.findIndex(r => r.totalSteps > 0)
      )
    );
  }

  showPass(i: number): void {
    const r = this.doc?.rewrites[i];
    if (!this.doc || !r) {
      return;
    }
    this.pass = i;
    this.select.value = String(i);
    const rows = r.steps.map((st, j) => {
      const li = h(
        'li',
        { cls: 'lz-step-row', data: { step: j }, title: st.pattern },
        st.before,
        ' \u2192 ',
        st.after
      );
      li.addEventListener('click', () => this.showStep(j));
      return li;
    });
    setChildren(this.stepList, ...rows);
    if (r.totalSteps > r.steps.length) {
      this.stepList.appendChild(
        h(
          'li',
          { cls: 'lz-dim' },
          `\u2026 ${plural(r.totalSteps - r.steps.length, 'more step')} not recorded`
        )
      );
    }
    const get = (id: string | null) =>
      id ? (this.doc!.graphs.get(id) ?? null) : null;
    void this.before.show(get(r.beforeGraph));
    void this.after.show(get(r.afterGraph));
    this.showStep(0);
  }

  showStep(j: number): void {
    const r = this.doc?.rewrites[this.pass];
    if (!r) {
      return;
    }
    const n = r.steps.length;
    this.step = n ? Math.max(0, Math.min(n - 1, j)) : 0;
    this.stepLabel.textContent = n
      ? `step ${this.step + 1} / ${n}`
      : 'no steps';
    const st = r.steps[this.step];
    setChildren(
      this.stepBody,
      st
        ? h(
            'div',
            {},
            h(
              'div',
              {},
              h('span', { cls: 'lz-dim' }, 'matched '),
              h('code', { cls: 'lz-pattern' }, st.pattern)
            ),
            h(
              'div',
              {},
              h('span', { cls: 'lz-dim' }, 'rewrote '),
              h('code', { cls: 'lz-before' }, st.before),
              ' \u2192 ',
              h('code', { cls: 'lz-after' }, st.after)
            )
          )
        : h('div', { cls: 'lz-empty' }, 'this pass changed nothing')
    );
    Array.from(this.stepList.children).forEach((li, k) =>
      li.classList.toggle('lz-selected', k === this.step)
    );
  }
}
