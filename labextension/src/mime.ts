/**
 * The mime renderer extension for application/vnd.lazynb.trace+json.
 *
 * Rank 0 puts it ahead of the text/html fallback (rank 50) that the same output carries. It is marked
 * safe: it runs nothing from the payload and inserts only text, so it also renders in untrusted
 * notebooks (a saved notebook opened without running it).
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { warmUp } from './layoutClient';
import { playgroundExtension } from './optview';
import { TraceView } from './traceview';
import { MIME_TYPE } from './types';

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [MIME_TYPE],
  defaultRank: 0,
  createRenderer: options => {
    warmUp();
    return new TraceView(options);
  }
};

const extension: IRenderMime.IExtension = {
  id: 'lazynb:trace-renderer',
  description: 'Renders lazynb compiler traces: schedule, graphs, ShapeTracker views, source and rewrite passes.',
  rendererFactory,
  rank: 0,
  dataType: 'json'
};

export default [extension, playgroundExtension];
