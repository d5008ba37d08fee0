/**
 * layoutClient's API with every layout on the main thread. The standalone bundle (webpack.standalone.js)
 * uses it in place of layoutClient: a page built from one inline script has no URL to start a worker from.
 * Large graphs yield once first, so the page paints the "laying out" state.
 */
import { ILayoutInput, layoutGraph } from './layout';
import type { IPlacedLayout } from './layoutClient';

export type { IPlacedLayout } from './layoutClient';

export const WORKER_THRESHOLD = Infinity;

export function warmUp(): void {}

export function layoutAsync(input: ILayoutInput): Promise<IPlacedLayout> {
  const started = performance.now();
  const run = (): IPlacedLayout => ({
    result: layoutGraph(input),
    where: 'main',
    ms: performance.now() - started
  });
  if (input.widths.length < 150) {
    return Promise.resolve(run());
  }
  return new Promise(resolve => setTimeout(() => resolve(run()), 0));
}
