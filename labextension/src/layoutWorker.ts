/**
 * Web Worker entry: lays out one graph per message, off the main thread.
 * Message in: {id, input: LayoutInput}; out: {id, result: LayoutResult} or {id, error}.
 */
import { ILayoutInput, layoutGraph } from './layout';

interface IWorkerScope {
  onmessage:
    ((e: MessageEvent<{ id: number; input: ILayoutInput }>) => void) | null;
  postMessage(message: unknown): void;
}

const scope = self as unknown as IWorkerScope;
scope.onmessage = e => {
  const { id, input } = e.data;
  try {
    scope.postMessage({ id, result: layoutGraph(input) });
  } catch (err) {
    scope.postMessage({ id, error: String(err) });
  }
};
