/**
 * The tabs of a trace view and which of them a document's `show` list (from
 * `%%tinygrad --show schedule,graph,...`) asks for. Pure.
 */

export type Tab = 'kernels' | 'graph' | 'rewrites' | 'timing';

export const TAB_TITLES: Record<Tab, string> = {
  kernels: 'Kernels',
  graph: 'Tensor graph',
  rewrites: 'Rewrites',
  timing: 'Timing'
};

const ALL: Tab[] = ['kernels', 'graph', 'rewrites', 'timing'];

/** The kernels tab holds the schedule, the kernels' graphs, ShapeTracker views and source. */
const KERNEL_VIEWS = ['schedule', 'kernels', 'shapetracker'];

export function tabsFor(show: string[] | null): Tab[] {
  if (!show || !show.length) {
    return ALL;
  }
  const want = new Set(show);
  return ALL.filter(t =>
    t === 'kernels' ? KERNEL_VIEWS.some(v => want.has(v)) : want.has(t)
  );
}
