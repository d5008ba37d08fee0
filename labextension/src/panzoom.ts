/**
 * Pan and zoom for an SVG: wheel zooms around the pointer, dragging pans, double-click fits.
 * The transform math is in pure functions (tested); `PanZoom` wires them to pointer events.
 */

export interface IView {
  scale: number;
  tx: number;
  ty: number;
}

export const MIN_SCALE = 0.02;
export const MAX_SCALE = 8;

/** Zoom by `factor` keeping the content point under (px, py) where it is. */
export function zoomAround(
  v: IView,
  factor: number,
  px: number,
  py: number
): IView {
  const scale = Math.min(MAX_SCALE, Math.max(MIN_SCALE, v.scale * factor));
  const k = scale / v.scale;
  return { scale, tx: px - (px - v.tx) * k, ty: py - (py - v.ty) * k };
}

/** The view that shows all of a w x h drawing in a vw x vh box, never enlarged past 1:1. */
export function fitView(
  w: number,
  h: number,
  vw: number,
  vh: number,
  pad = 8
): IView {
  if (w <= 0 || h <= 0 || vw <= 0 || vh <= 0) {
    return { scale: 1, tx: 0, ty: 0 };
  }
  const scale = Math.max(
    MIN_SCALE,
    Math.min(1, (vw - 2 * pad) / w, (vh - 2 * pad) / h)
  );
  return {
    scale,
    tx: (vw - w * scale) / 2,
    ty: Math.max(pad, (vh - h * scale) / 2)
  };
}

/** The view that shows content point (fx, fy) at pane point (px, py) at `scale`. */
export function focusView(
  fx: number,
  fy: number,
  px: number,
  py: number,
  scale: number
): IView {
  return { scale, tx: px - fx * scale, ty: py - fy * scale };
}

/** The content rectangle visible in a vw x vh pane: [x0, y0, x1, y1]. */
export function visibleRect(
  v: IView,
  vw: number,
  vh: number
): [number, number, number, number] {
  return [
    -v.tx / v.scale,
    -v.ty / v.scale,
    (vw - v.tx) / v.scale,
    (vh - v.ty) / v.scale
  ];
}

export function transformOf(v: IView): string {
  return `translate(${v.tx.toFixed(2)},${v.ty.toFixed(2)}) scale(${v.scale.toFixed(4)})`;
}

export class PanZoom {
  view: IView = { scale: 1, tx: 0, ty: 0 };
  private size = { w: 0, h: 0 };
  /** the pane's size when last measured */
  pane = { w: 0, h: 0 };
  private drag: {
    x: number;
    y: number;
    tx: number;
    ty: number;
    moved: boolean;
  } | null = null;

  constructor(
    private svg: SVGSVGElement,
    private viewport: SVGGElement,
    private onChange?: (v: IView) => void
  ) {
    svg.addEventListener('wheel', this.onWheel, { passive: false });
    svg.addEventListener('pointerdown', this.onDown);
    svg.addEventListener('pointermove', this.onMove);
    svg.addEventListener('pointerup', this.onUp);
    svg.addEventListener('pointercancel', this.onUp);
    svg.addEventListener('dblclick', () => this.fit());
  }

  /** True while (or right after) a drag moved the drawing: clicks then are not selections. */
  get dragged(): boolean {
    return this.drag?.moved ?? false;
  }

  setContentSize(w: number, h: number): void {
    this.size = { w, h };
  }

  set(v: IView): void {
    this.view = v;
    this.viewport.setAttribute('transform', transformOf(v));
    this.onChange?.(v);
  }

  measure(): { w: number; h: number } {
    const r = this.svg.getBoundingClientRect();
    this.pane = { w: r.width, h: r.height };
    return this.pane;
  }

  fit(): void {
    const r = this.measure();
    this.set(fitView(this.size.w, this.size.h, r.w, r.h));
  }

  zoom(factor: number): void {
    const r = this.svg.getBoundingClientRect();
    this.pane = { w: r.width, h: r.height };
    this.set(zoomAround(this.view, factor, r.width / 2, r.height / 2));
  }

  private onWheel = (e: WheelEvent) => {
    e.preventDefault();
    const r = this.svg.getBoundingClientRect();
    this.pane = { w: r.width, h: r.height };
    const factor = Math.exp(-Math.max(-100, Math.min(100, e.deltaY)) * 0.002);
    this.set(
      zoomAround(this.view, factor, e.clientX - r.left, e.clientY - r.top)
    );
  };

  private onDown = (e: PointerEvent) => {
    if (e.button !== 0) {
      return;
    }
    this.drag = {
      x: e.clientX,
      y: e.clientY,
      tx: this.view.tx,
      ty: this.view.ty,
      moved: false
    };
  };

  private onMove = (e: PointerEvent) => {
    const d = this.drag;
    if (!d) {
      return;
    }
    const dx = e.clientX - d.x;
    const dy = e.clientY - d.y;
    if (!d.moved && Math.abs(dx) + Math.abs(dy) > 3) {
      d.moved = true;
      this.svg.setPointerCapture(e.pointerId);
      this.svg.classList.add('lz-panning');
    }
    if (d.moved) {
      this.set({ scale: this.view.scale, tx: d.tx + dx, ty: d.ty + dy });
    }
  };

  private onUp = (e: PointerEvent) => {
    if (this.drag?.moved && this.svg.hasPointerCapture(e.pointerId)) {
      this.svg.releasePointerCapture(e.pointerId);
    }
    this.svg.classList.remove('lz-panning');
    // keep `dragged` true through the click event that follows pointerup
    const d = this.drag;
    setTimeout(() => {
      if (this.drag === d) {
        this.drag = null;
      }
    }, 0);
  };
}
