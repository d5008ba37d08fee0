/**
 * lazynb's JupyterLab extension: the trace renderer (mime.ts) and the session panel (plugin.ts).
 */
export { default as mimeExtension } from './mime';
export { default as plugin } from './plugin';
export { readTrace, MIME_TYPE } from './types';
