/**
 * One graph, drawn as SVG: a toolbar (collapse index/const, fit, zoom), the drawing with pan and
 * zoom, and a line describing the selected node. Layout runs through layoutClient (a Web Worker for
 * large graphs); a newer `show` call makes an older pending layout's result be dropped.
 */
import { h, s, setChildren, plural } from './dom';
import {
  buildDrawModel,
  edgePath,
  IDrawModel,
  layoutInput
} from './graphmodel';
import { layoutAsync } from './layoutClient';
import { ILayoutResult } from './layout';
import { fitView, focusView, IView, PanZoom, visibleRect } from './panzoom';
import { fmtTuple } from './dom';
import { IGraph } from './types';

let arrowIds = 0;

/** Below this zoom, labels are too small to read: they are hidden, which also makes big graphs paint fast. */
export const LABEL_MIN_SCALE = 0.45;
/** Graphs with more nodes than this are drawn without arrowheads (markers are slow to paint). */
export const ARROW_MAX_NODES = 400;
/**
 * A graph whose fit-all zoom is below this opens around its root at FOCUS_SCALE instead: node labels are 11 px at
 * zoom 1, so the first view a learner sees always has text of 9 px or more ('fit' or a double-click shows all).
 */
export const FOCUS_BELOW_SCALE = 0.85;
export const FOCUS_SCALE = 1;

export interface IGraphViewOptions {
  /** start with index/const nodes collapsed */
  collapse?: boolean;
  /** called after each drawing is in the page */
  onDrawn?: (info: { nodes: number; layoutMs: number; where: string }) => void;
}

export class GraphView {
  readonly node: HTMLDivElement;
  private svg: SVGSVGElement;
  private viewport: SVGGElement;
  private info: HTMLSpanElement;
  private detail: HTMLDivElement;
  private collapseBox: HTMLInputElement;
  private panzoom: PanZoom;
  private graph: IGraph | null = null;
  private generation = 0;
  private arrowId = `lz-arrow-${++arrowIds}`;
  private nodeEls: SVGGElement[] = [];
  private edgeEls: SVGPathElement[] = [];
  private model: IDrawModel | null = null;
  private labelled = new Uint8Array(0);
  private layout: ILayoutResult | null = null;
  private labelFrame = 0;
  private marked: number | null = null;

  constructor(
    title: string,
    private options: IGraphViewOptions = {}
  ) {
    this.collapseBox = h('input', { attrs: { type: 'checkbox' } });
    this.collapseBox.checked = options.collapse ?? true;
    this.collapseBox.addEventListener('change', () => this.redraw());
    const button = (label: string, tip: string, fn: () => void) => {
      const b = h(
        'button',
        { cls: 'lz-button', title: tip, attrs: { type: 'button' } },
        label
      );
      b.addEventListener('click', fn);
      return b;
    };
    this.info = h('span', { cls: 'lz-graph-info' });
    this.svg = s('svg', { cls: 'lz-graph-svg', attrs: { role: 'img' } });
    this.viewport = s('g', { cls: 'lz-viewport' });
    const marker = s(
      'marker',
      {
        attrs: {
          id: this.arrowId,
          viewBox: '0 0 10 10',
          refX: 10,
          refY: 5,
          markerWidth: 7,
          markerHeight: 7,
          orient: 'auto-start-reverse'
        }
      },
      s('path', { cls: 'lz-arrow', attrs: { d: 'M0,0 L10,5 L0,10 z' } })
    );
    this.svg.append(s('defs', {}, marker), this.viewport);
    this.panzoom = new PanZoom(this.svg, this.viewport, v => {
      this.svg.classList.toggle('lz-lod-low', v.scale < LABEL_MIN_SCALE);
      this.scheduleLabels();
    });
    this.detail = h(
      'div',
      { cls: 'lz-graph-detail' },
      'click a node for details \u00b7 wheel: zoom \u00b7 drag: pan \u00b7 double-click: fit'
    );
    this.node = h(
      'div',
      { cls: 'lz-graph' },
      h(
        'div',
        { cls: 'lz-toolbar' },
        h('span', { cls: 'lz-pane-title' }, title),
        h(
          'label',
          { cls: 'lz-check', title: 'hide CONST, RANGE/loop and INDEX nodes' },
          this.collapseBox,
          'collapse index/const'
        ),
        button('fit', 'fit the graph to the pane', () => this.panzoom.fit()),
        button('+', 'zoom in', () => this.panzoom.zoom(1.25)),
        button('\u2212', 'zoom out', () => this.panzoom.zoom(0.8)),
        this.info
      ),
      h('div', { cls: 'lz-graph-canvas' }, this.svg),
      this.detail
    );
  }

  setTitle(title: string): void {
    const t = this.node.querySelector('.lz-pane-title');
    if (t) {
      t.textContent = title;
    }
  }

  /** Mark graph node `id` (the first place a learner's graph differs from lazynb's) in the drawings to come. */
  mark(id: number | null): void {
    this.marked = id;
  }

  /** Show a graph (null: an empty pane with a note). Returns when it is drawn. */
  show(graph: IGraph | null, note = 'no graph'): Promise<void> {
    this.graph = graph;
    if (!graph) {
      this.generation++;
      setChildren(this.viewport);
      this.info.textContent = note;
      this.svg.removeAttribute('data-nodes');
      this.options.onDrawn?.({ nodes: 0, layoutMs: 0, where: 'none' });
      return Promise.resolve();
    }
    return this.redraw();
  }

  private async redraw(): Promise<void> {
    const graph = this.graph;
    if (!graph) {
      return;
    }
    const gen = ++this.generation;
    const model = buildDrawModel(
      graph,
      this.collapseBox.checked,
      undefined,
      this.marked
    );
    this.info.textContent = `laying out ${plural(model.nodes.length, 'node')}\u2026`;
    this.svg.setAttribute('data-state', 'layout');
    const placed = await layoutAsync(layoutInput(model));
    if (gen !== this.generation) {
      return;
    }
    const t0 = performance.now();
    this.draw(model, placed.result);
    this.svg.setAttribute('data-draw-ms', (performance.now() - t0).toFixed(1));
    const parts = [plural(model.nodes.length, 'node')];
    if (model.removed) {
      parts.push(`${model.removed} collapsed`);
    }
    if (model.omitted) {
      parts.push(`${model.omitted} not drawn`);
    }
    if (model.truncated) {
      parts.push(`graph truncated: ${model.totalNodes} in all`);
    }
    if (this.marked !== null) {
      const shown = model.nodes.some(n => n.node.id === this.marked);
      parts.push(
        shown
          ? `\u2260 first difference: node ${this.marked}`
          : `\u2260 node ${this.marked} (not drawn)`
      );
    }
    this.info.textContent = parts.join(' \u00b7 ');
    this.svg.setAttribute('data-state', 'drawn');
    this.svg.setAttribute('data-nodes', String(model.nodes.length));
    this.svg.setAttribute('data-layout', placed.where);
    this.svg.setAttribute('data-layout-ms', placed.ms.toFixed(1));
    this.options.onDrawn?.({
      nodes: model.nodes.length,
      layoutMs: placed.ms,
      where: placed.where
    });
  }

  private draw(model: IDrawModel, lay: ILayoutResult): void {
    this.model = model;
    const edges = s('g', { cls: 'lz-edges' });
    const nodes = s('g', { cls: 'lz-nodes' });
    // one listener per layer, not per node: the node is found from the event target
    const nodeIndex = (e: Event): number => {
      const g = (e.target as Element).closest?.('.lz-node');
      return g ? Number(g.getAttribute('data-i')) : -1;
    };
    nodes.addEventListener('click', e => {
      const i = nodeIndex(e);
      if (i >= 0 && !this.panzoom.dragged) {
        this.select(i);
      }
    });
    nodes.addEventListener('mouseover', e => {
      // tooltips are made on first hover: thousands of <title> elements slow the first paint
      const i = nodeIndex(e);
      const g = this.nodeEls[i];
      if (g && !g.querySelector('title')) {
        g.insertBefore(s('title', {}, model.nodes[i].tooltip), g.firstChild);
      }
    });
    const arrows = model.nodes.length <= ARROW_MAX_NODES;
    this.svg.classList.toggle('lz-big', !arrows);
    this.edgeEls = lay.routes.map(r => {
      const p = s('path', {
        cls: 'lz-edge',
        attrs: arrows
          ? { d: edgePath(r.points), 'marker-end': `url(#${this.arrowId})` }
          : { d: edgePath(r.points) }
      });
      edges.appendChild(p);
      return p;
    });
    this.nodeEls = model.nodes.map((n, i) => {
      const x = lay.x[i] - n.w / 2;
      const y = lay.y[i] - n.h / 2;
      const g = s(
        'g',
        {
          cls: `lz-node lz-kind-${n.node.kind.replace(/[^a-z]/g, '') || 'other'}${n.node.id === this.marked ? ' lz-diff' : ''}`,
          attrs: { transform: `translate(${x.toFixed(1)},${y.toFixed(1)})` },
          data: { i }
        },
        s('rect', { attrs: { width: n.w, height: n.h, rx: 4, ry: 4 } })
      );
      nodes.appendChild(g);
      return g;
    });
    this.labelled = new Uint8Array(model.nodes.length);
    this.layout = lay;
    // place the view while the pane is still empty (measuring the page is cheaper before thousands of nodes are in it)
    setChildren(this.viewport);
    this.panzoom.setContentSize(lay.width, lay.height);
    this.panzoom.set(this.initialView(model, lay));
    setChildren(this.viewport, edges, nodes);
    this.updateLabels();
  }

  /** All of the graph if that is readable; else the root's neighbourhood at a readable zoom (fit shows all). */
  private initialView(model: IDrawModel, lay: ILayoutResult): IView {
    const pane = this.panzoom.measure();
    const fit = fitView(lay.width, lay.height, pane.w, pane.h);
    if (fit.scale >= FOCUS_BELOW_SCALE || !model.nodes.length) {
      return fit;
    }
    let root = model.nodes.findIndex(n => n.node.id === this.graph?.root);
    if (root < 0) {
      root = lay.y.indexOf(Math.max(...lay.y));
    }
    const scale = Math.min(1, Math.max(FOCUS_SCALE, pane.w / lay.width));
    return focusView(
      lay.x[root],
      lay.y[root] + model.nodes[root].h / 2,
      pane.w / 2,
      pane.h - 16,
      scale
    );
  }

  /**
   * Labels are made only for nodes in (or near) view and only at readable zoom: a 2,000-node graph
   * paints boxes and lines, and gains text where one looks. Runs once per animation frame at most.
   */
  private updateLabels(): void {
    const model = this.model;
    const lay = this.layout;
    const v = this.panzoom.view;
    if (!model || !lay || v.scale < LABEL_MIN_SCALE) {
      return;
    }
    const pane = this.panzoom.pane;
    const [x0, y0, x1, y1] = visibleRect(v, pane.w || 1000, pane.h || 1000);
    const mx = (x1 - x0) / 2;
    const my = (y1 - y0) / 2;
    model.nodes.forEach((n, i) => {
      if (
        this.labelled[i] ||
        lay.x[i] + n.w / 2 < x0 - mx ||
        lay.x[i] - n.w / 2 > x1 + mx ||
        lay.y[i] + n.h / 2 < y0 - my ||
        lay.y[i] - n.h / 2 > y1 + my
      ) {
        return;
      }
      this.labelled[i] = 1;
      this.nodeEls[i]?.append(
        s(
          'text',
          { cls: 'lz-node-op', attrs: { x: n.w / 2, y: n.sub ? 14 : 15 } },
          n.label
        ),
        ...(n.sub
          ? [
              s(
                'text',
                { cls: 'lz-node-arg', attrs: { x: n.w / 2, y: 28 } },
                n.sub
              )
            ]
          : [])
      );
    });
  }

  private scheduleLabels(): void {
    if (!this.labelFrame) {
      this.labelFrame = requestAnimationFrame(() => {
        this.labelFrame = 0;
        this.updateLabels();
      });
    }
  }

  /** Select node `i` of the current drawing: highlight it and its edges, describe it. */
  select(i: number): void {
    const model = this.model;
    if (!model || !model.nodes[i]) {
      return;
    }
    this.nodeEls.forEach((el, j) =>
      el.classList.toggle('lz-selected', j === i)
    );
    const linked = new Set<number>();
    model.edges.forEach(([a, b], k) => {
      const on = a === i || b === i;
      this.edgeEls[k]?.classList.toggle('lz-edge-on', on);
      if (on) {
        linked.add(a === i ? b : a);
      }
    });
    this.nodeEls.forEach((el, j) =>
      el.classList.toggle('lz-linked', linked.has(j))
    );
    const n = model.nodes[i].node;
    setChildren(
      this.detail,
      h('b', {}, n.op),
      ` ${n.dtype}`,
      n.shape ? `  shape ${fmtTuple(n.shape)}` : '',
      n.arg ? h('code', { cls: 'lz-detail-arg' }, n.arg) : ''
    );
  }
}
