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
import { documentOf } from './payload';
import { TraceView } from './traceview';
import { MIME_TYPE, readTrace } from './types';

/** The Lumino widget JupyterLab asks for: a TraceView drawn into the widget's node. */
export class TraceRenderer extends Widget implements IRenderMime.IRenderer {
  private view = new TraceView(this.node);

  constructor(private options: IRenderMime.IRendererOptions) {
    super();
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    // a %%tinygrad output keeps the document once, in its text/html; this entry then only points there
    const data = await documentOf(
      model.data as Record<string, unknown>,
      this.options.mimeType ?? MIME_TYPE
    );
    this.view.render(readTrace(data));
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
