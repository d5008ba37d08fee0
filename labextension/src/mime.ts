/**
 * The mime renderer extension for application/vnd.lazynb.trace+json.
 *
 * Rank 0 puts it ahead of the text/html fallback (rank 50) that the same output carries. It is marked
 * safe: it runs nothing from the payload and inserts only text, so it also renders in untrusted
 * notebooks (a saved notebook opened without running it).
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';
import { warmUp } from './layoutClient';
import { playgroundExtension } from './optview';
import { TraceView } from './traceview';
import { MIME_TYPE, readTrace } from './types';

/** The Lumino widget JupyterLab asks for: a TraceView drawn into the widget's node. */
export class TraceRenderer extends Widget implements IRenderMime.IRenderer {
  private view = new TraceView(this.node);

  constructor(private options: IRenderMime.IRendererOptions) {
    super();
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this.view.render(readTrace(model.data[this.options.mimeType ?? MIME_TYPE]));
  }
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [MIME_TYPE],
  defaultRank: 0,
  createRenderer: options => {
    warmUp();
    return new TraceRenderer(options);
  }
};

const extension: IRenderMime.IExtension = {
  id: 'lazynb:trace-renderer',
  description:
    'Renders lazynb compiler traces: schedule, graphs, ShapeTracker views, source and rewrite passes.',
  rendererFactory,
  rank: 0,
  dataType: 'json'
};

export default [extension, playgroundExtension];
