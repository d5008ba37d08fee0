/**
 * Graph layout off the main thread.
 *
 * Graphs above a few hundred nodes are laid out in a shared Web Worker; small ones synchronously (a
 * worker round trip costs more than they do). If the browser cannot start the worker, layout falls
 * back to the main thread after yielding once, so the page paints the "laying out" state first.
 */
import { ILayoutInput, ILayoutResult, layoutGraph } from './layout';

export const WORKER_THRESHOLD = 150;

export interface IPlacedLayout {
  result: ILayoutResult;
  where: 'main' | 'worker';
  ms: number;
}

type Pending = {
  input: ILayoutInput;
  resolve: (r: IPlacedLayout) => void;
  started: number;
};

let worker: Worker | null | undefined;
let nextId = 1;
const pending = new Map<number, Pending>();

function runOnMain(p: Pending): void {
  setTimeout(() => {
    const result = layoutGraph(p.input);
    p.resolve({ result, where: 'main', ms: performance.now() - p.started });
  }, 0);
}

function failWorker(): void {
  worker?.terminate();
  worker = null;
  for (const p of pending.values()) {
    runOnMain(p);
  }
  pending.clear();
}

function getWorker(): Worker | null {
  if (worker !== undefined) {
    return worker;
  }
  try {
    worker = new Worker(new URL('./layoutWorker.js', import.meta.url));
    worker.onmessage = (
      e: MessageEvent<{ id: number; result?: ILayoutResult; error?: string }>
    ) => {
      const p = pending.get(e.data.id);
      if (!p) {
        return;
      }
      pending.delete(e.data.id);
      if (e.data.result) {
        p.resolve({
          result: e.data.result,
          where: 'worker',
          ms: performance.now() - p.started
        });
      } else {
        runOnMain(p);
      }
    };
    worker.onerror = () => failWorker();
    worker.postMessage({
      id: 0,
      input: { widths: [], heights: [], edges: [] }
    }); // start it now
  } catch {
    worker = null;
  }
  return worker;
}

/** Start the worker ahead of the first large layout (it loads a chunk and starts a thread). */
export function warmUp(): void {
  getWorker();
}

/** Lay a graph out; large graphs in the worker. */
export function layoutAsync(input: ILayoutInput): Promise<IPlacedLayout> {
  const started = performance.now();
  if (input.widths.length < WORKER_THRESHOLD) {
    return Promise.resolve({
      result: layoutGraph(input),
      where: 'main',
      ms: performance.now() - started
    });
  }
  return new Promise(resolve => {
    const p: Pending = { input, resolve, started };
    const w = getWorker();
    if (!w) {
      runOnMain(p);
      return;
    }
    const id = nextId++;
    pending.set(id, p);
    w.postMessage({ id, input });
  });
}
