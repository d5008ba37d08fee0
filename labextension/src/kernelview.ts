/**
 * One schedule item opened: a line about the kernel, then its graph, its ShapeTracker views and its
 * source (with UOps) side by side. The graph pane switches between the kernel's AST and the lowered
 * graph, and, when a learner's stage made it (lazynb.pipeline.use), lazynb's own lowered graph.
 */
import { fmtSeconds, h, setChildren, plural } from './dom';
import { GraphView } from './graphview';
import { kernelName } from './kernelname';
import { SourceView } from './sourceview';
import { ShapeTrackerView } from './stview';
import { kernelStagesLine, loweredDiffNode } from './stagediff';
import { IKernel, IScheduleItem, ITraceDoc } from './types';

type GraphChoice = 'ast' | 'lowered' | 'reference';

export class KernelView {
  readonly node: HTMLDivElement;
  readonly graphView: GraphView;
  private header: HTMLDivElement;
  private stView = new ShapeTrackerView();
  private sourceView = new SourceView();
  private choice: GraphChoice = 'ast';
  private choiceButtons: Map<GraphChoice, HTMLButtonElement>;
  private doc: ITraceDoc | null = null;
  private kernel: IKernel | null = null;
  private item: IScheduleItem | null = null;

  constructor(
    onDrawn?: (info: { nodes: number; layoutMs: number; where: string }) => void
  ) {
    this.header = h('div', { cls: 'lz-kernel-head' });
    this.graphView = new GraphView('Graph', { collapse: true, onDrawn });
    const pick = (c: GraphChoice, label: string, tip: string) => {
      const b = h(
        'button',
        {
          cls: 'lz-seg',
          title: tip,
          attrs: { type: 'button' },
          data: { graph: c }
        },
        label
      );
      b.addEventListener('click', () => {
        this.choice = c;
        void this.drawGraph();
      });
      return b;
    };
    this.choiceButtons = new Map([
      ['ast', pick('ast', 'AST', 'the kernel as scheduled')],
      [
        'lowered',
        pick(
          'lowered',
          'lowered',
          'after lowering: indexing, ranges, loads and stores'
        )
      ],
      [
        'reference',
        pick(
          'reference',
          'lazynb\u2019s',
          'lazynb\u2019s own lowered graph, from the same input as your stages'
        )
      ]
    ]);
    const toolbar = this.graphView.node.querySelector('.lz-toolbar');
    toolbar?.insertBefore(
      h('span', { cls: 'lz-segs' }, ...this.choiceButtons.values()),
      toolbar.children[1] ?? null
    );
    this.node = h(
      'div',
      { cls: 'lz-kernel' },
      this.header,
      h(
        'div',
        { cls: 'lz-panes' },
        this.graphView.node,
        this.stView.node,
        this.sourceView.node
      )
    );
  }

  /** Open schedule item `index` of `doc` (a negative index -1-id opens kernel `id` directly). */
  show(doc: ITraceDoc, index: number): Promise<void> {
    this.doc = doc;
    this.item = index >= 0 ? (doc.schedule[index] ?? null) : null;
    const kid = index >= 0 ? (this.item?.kernel ?? null) : -1 - index;
    this.kernel =
      kid === null ? null : (doc.kernels.find(k => k.id === kid) ?? null);
    this.showHeader();
    if (
      (this.choice === 'lowered' && !this.kernel?.loweredGraph) ||
      (this.choice === 'reference' && !this.kernel?.reference?.loweredGraph)
    ) {
      this.choice = 'ast';
    }
    // start the graph first: its layout runs in the worker while the views and source are built here
    const drawn = this.drawGraph();
    this.stView.show(this.kernel);
    this.sourceView.show(this.kernel);
    return drawn;
  }

  private showHeader(): void {
    const k = this.kernel;
    const item = this.item;
    if (!k) {
      setChildren(
        this.header,
        h('b', {}, item ? `${item.kind} #${item.index}` : 'nothing selected'),
        item
          ? ` ${item.reason} \u00b7 ${item.bufs.map(b => `b${b.buf ?? '?'} ${b.dtype}[${b.size}] ${b.device}`).join(', ')}`
          : ''
      );
      return;
    }
    const stats = [
      k.device,
      k.language.replace(/Renderer$/, ''),
      `${fmtSeconds(k.timeS)}${k.runs > 1 ? ` over ${plural(k.runs, 'run')}` : ''}`,
      k.compileS !== null ? `compile ${fmtSeconds(k.compileS)}` : '',
      k.gflops ? `${k.gflops.toFixed(2)} GFLOPS` : '',
      k.gbs ? `${k.gbs.toFixed(2)} GB/s` : ''
    ].filter(Boolean);
    const stages = k.timings
      .map(([n, v]) => `${n} ${fmtSeconds(v)}`)
      .join(' \u00b7 ');
    const yours = kernelStagesLine(k);
    const ref = k.reference;
    const vals = new Map(k.varVals);
    const vars = k.vars
      .map(n => `${n}=${vals.has(n) ? vals.get(n) : '?'}`)
      .join(', ');
    setChildren(
      this.header,
      kernelName(k),
      h('span', { cls: 'lz-dim' }, `  ${stats.join(' \u00b7 ')}`),
      stages ? h('div', { cls: 'lz-small lz-dim' }, `stages: ${stages}`) : null,
      vars
        ? h(
            'div',
            { cls: 'lz-small lz-vars' },
            `variables: ${vars} (int arguments: one compiled kernel serves every value)`
          )
        : null,
      yours
        ? h(
            'div',
            {
              cls: 'lz-small lz-yours-line',
              title: ref?.differences.map(d => d.message).join('\n') ?? ''
            },
            yours
          )
        : null,
      ref?.opts
        ? h(
            'div',
            { cls: 'lz-small lz-dim' },
            `opts: yours [${k.opts.join(', ')}] \u00b7 lazynb\u2019s [${ref.opts.join(', ')}]`
          )
        : null
    );
  }

  private drawGraph(): Promise<void> {
    const doc = this.doc;
    if (!doc) {
      return Promise.resolve();
    }
    const k = this.kernel;
    this.choiceButtons.get('lowered')!.disabled = !k?.loweredGraph;
    this.choiceButtons.get('ast')!.disabled = !(k?.graph ?? this.item?.graph);
    // lazynb's lowered graph is offered only next to a learner's
    const theirs = this.choiceButtons.get('reference')!;
    theirs.hidden = !k?.reference?.loweredGraph;
    this.choiceButtons.get('lowered')!.textContent = theirs.hidden
      ? 'lowered'
      : 'your lowered';
    for (const [c, b] of this.choiceButtons) {
      b.classList.toggle('lz-on', c === this.choice);
    }
    const id =
      this.choice === 'lowered'
        ? k?.loweredGraph
        : this.choice === 'reference'
          ? k?.reference?.loweredGraph
          : (k?.graph ?? this.item?.graph);
    this.graphView.mark(k && this.choice !== 'ast' ? loweredDiffNode(k) : null);
    const graph = id ? (doc.graphs.get(id) ?? null) : null;
    return this.graphView.show(
      graph,
      id ? `graph ${id} is missing` : 'no graph recorded'
    );
  }
}
