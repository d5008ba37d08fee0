/**
 * The renderer for one trace output: a summary line, then tabs for the kernels (schedule list +
 * the selected kernel's graph, ShapeTracker views and source), the lazy tensor graphs, the rewrite
 * passes and the timing table. Tabs are built on first use. The document's optional `show` list
 * (from `%%tinygrad --show ...`) picks which tabs appear.
 */
import { fmtSeconds, h, setChildren } from './dom';
import { GraphView } from './graphview';
import { KernelView } from './kernelview';
import { RewriteView } from './rewriteview';
import { ScheduleView } from './scheduleview';
import { picturesView } from './stpicture';
import { timingTable } from './timingview';
import { yourStages } from './stagediff';
import { Tab, TAB_TITLES, tabsFor } from './tabs';
import { ITraceDoc } from './types';

/** Plain DOM, no JupyterLab or Lumino: mime.ts wraps it in a widget, standalone.ts mounts it in any page. */
export class TraceView {
  private doc: ITraceDoc | null = null;
  private started = 0;
  private firstDraw = true;
  private panels = new Map<Tab, HTMLElement>();
  private tabButtons = new Map<Tab, HTMLButtonElement>();
  private body: HTMLDivElement;
  private kernelView: KernelView | null = null;
  private schedule: ScheduleView | null = null;

  constructor(readonly node: HTMLElement) {
    node.classList.add('jp-RenderedLazynbTrace', 'lz-trace');
    this.body = h('div', { cls: 'lz-body' });
  }

  render(doc: ITraceDoc): void {
    this.started = performance.now();
    this.firstDraw = true;
    this.doc = doc;
    this.panels.clear();
    this.tabButtons.clear();
    this.kernelView = null;
    this.schedule = null;
    if (doc.show && doc.show.length === 1 && doc.show[0] === 'stpicture') {
      this.node.classList.add('lz-trace-pictures');
      setChildren(this.node, picturesView(doc.pictures)); // show_st's output: only ShapeTracker pictures
      this.markDrawn();
      return;
    }
    const tabs = tabsFor(doc.show);
    const tabBar = h('div', { cls: 'lz-tabs', attrs: { role: 'tablist' } });
    for (const t of tabs) {
      const b = h(
        'button',
        {
          cls: 'lz-tab',
          attrs: { type: 'button', role: 'tab' },
          data: { tab: t }
        },
        TAB_TITLES[t]
      );
      b.addEventListener('click', () => this.openTab(t));
      this.tabButtons.set(t, b);
      tabBar.appendChild(b);
    }
    setChildren(this.node, this.summary(doc), tabBar, this.body);
    setChildren(this.body);
    if (tabs.length) {
      this.openTab(tabs[0]);
    } else {
      this.markDrawn();
    }
    this.node.setAttribute(
      'data-build-ms',
      (performance.now() - this.started).toFixed(1)
    );
    this.node.setAttribute('data-render-start', this.started.toFixed(1));
  }

  private summary(doc: ITraceDoc): HTMLElement {
    const t = doc.timing;
    const order = ['DEBUG', 'NOOPT', 'BEAM', 'device'];
    const settings = doc.settings
      .filter(([k]) => order.includes(k))
      .sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0]));
    return h(
      'div',
      { cls: 'lz-summary' },
      h('b', {}, 'lazynb trace'),
      ` \u00b7 ${doc.schedule.length} schedule item${doc.schedule.length === 1 ? '' : 's'} \u00b7 ${doc.kernels.length} kernel${doc.kernels.length === 1 ? '' : 's'}`,
      ` \u00b7 ran ${fmtSeconds(t.runS)} \u00b7 compiled ${fmtSeconds(t.compileS)}`,
      ...settings.map(([k, v]) =>
        h('span', { cls: 'lz-chip', data: { setting: k } }, `${k}=${v}`)
      ),
      doc.replacedStages.length
        ? h(
            'span',
            {
              cls: 'lz-chip lz-yours',
              title:
                'these stages ran your functions in place of lazynb\u2019s (lazynb.pipeline.use)'
            },
            yourStages(doc.replacedStages)
          )
        : null,
      doc.version !== 1
        ? h(
            'span',
            { cls: 'lz-warn' },
            ` document version ${doc.version}: shown as version 1`
          )
        : null,
      doc.error
        ? h(
            'div',
            { cls: 'lz-error' },
            `${doc.error.type}: ${doc.error.message}`
          )
        : null,
      doc.truncated
        ? h('div', { cls: 'lz-warn lz-truncated' }, doc.truncated)
        : null
    );
  }

  private openTab(t: Tab): void {
    for (const [name, b] of this.tabButtons) {
      b.classList.toggle('lz-on', name === t);
      b.setAttribute('aria-selected', name === t ? 'true' : 'false');
    }
    let panel = this.panels.get(t);
    if (!panel) {
      panel = this.buildTab(t);
      this.panels.set(t, panel);
      this.body.appendChild(panel);
    }
    for (const [name, p] of this.panels) {
      p.hidden = name !== t;
    }
  }

  private buildTab(t: Tab): HTMLElement {
    const doc = this.doc!;
    if (t === 'kernels') {
      this.kernelView = new KernelView(() => this.markDrawn());
      this.schedule = new ScheduleView(i => this.openItem(i));
      this.schedule.show(doc);
      const panel = h(
        'div',
        { cls: 'lz-tab-kernels' },
        this.schedule.node,
        this.kernelView.node
      );
      const first = doc.schedule.findIndex(s => s.kernel !== null);
      this.openItem(
        first >= 0
          ? first
          : doc.schedule.length
            ? 0
            : doc.kernels.length
              ? -1 - doc.kernels[0].id
              : 0
      );
      return panel;
    }
    if (t === 'graph') {
      const view = new GraphView('Lazy graph', {
        collapse: false,
        onDrawn: () => this.markDrawn()
      });
      const select = h(
        'select',
        { cls: 'lz-select', attrs: { 'aria-label': 'tensor graph' } },
        ...doc.tensorGraphs.map((id, i) =>
          h(
            'option',
            { attrs: { value: id } },
            `schedule call ${i + 1} (${id})`
          )
        )
      );
      select.addEventListener(
        'change',
        () => void view.show(doc.graphs.get(select.value) ?? null)
      );
      const first = doc.tensorGraphs[0];
      void view.show(
        first ? (doc.graphs.get(first) ?? null) : null,
        'no tensor graph was scheduled'
      );
      return h(
        'div',
        { cls: 'lz-tab-graph' },
        doc.tensorGraphs.length > 1
          ? h('div', { cls: 'lz-toolbar' }, select)
          : null,
        view.node
      );
    }
    if (t === 'rewrites') {
      const view = new RewriteView();
      view.show(doc);
      return view.node;
    }
    return timingTable(doc, id => {
      this.openTab('kernels');
      const item = doc.schedule.findIndex(s => s.kernel === id);
      this.openItem(item >= 0 ? item : -1 - id);
    });
  }

  private openItem(i: number): void {
    if (!this.kernelView || !this.doc) {
      return;
    }
    this.schedule?.mark(i);
    void this.kernelView.show(this.doc, i);
  }

  /** After the first graph is in the page: record how long rendering took (read by the browser tests). */
  private markDrawn(): void {
    if (!this.firstDraw) {
      return;
    }
    this.firstDraw = false;
    const ms = performance.now() - this.started;
    this.node.setAttribute('data-render-ms', ms.toFixed(1));
  }
}
