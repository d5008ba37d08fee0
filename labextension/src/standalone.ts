/**
 * The trace view outside JupyterLab: the same TraceView the mime renderer uses, mounted into any page
 * (Notebook 7 without the extension, VS Code, Colab, nbconvert HTML, the VIZ=1 file). Built by
 * webpack.standalone.js into one self-contained script, lazynb/static/lazynb-view.js, which
 * sets `window.lazynbView`. No JupyterLab or Lumino code is on this path.
 *
 * The page (see lazynb/notebook/viz.py, embed) holds, inside one host element: the static HTML view (the
 * no-JavaScript fallback), the trace JSON in a <script type="application/json" class="lazynb-trace">,
 * and a script that calls `lazynbView.mount(host)`. Mounting replaces the static view.
 *
 * The view lives in a shadow root with its own copy of the stylesheet: the host page's rules (nbconvert's and Notebook
 * 7's `.jp-RenderedHTMLCommon svg {height: auto}`, table and pre styles, ...) do not reach it, so it is laid out as
 * in JupyterLab. CSS variables still inherit through, so a JupyterLab-based page's theme applies.
 */
import css from '../style/base.css';
import { TraceView } from './traceview';
import { decodePayload } from './payload';
import { readTrace } from './types';

/** JupyterLab's light theme values for the variables base.css uses, for pages that have no JupyterLab theme. */
const LIGHT = `--jp-layout-color0:#fff;--jp-layout-color1:#fff;--jp-layout-color2:#eee;--jp-layout-color3:#bdbdbd;
--jp-border-color1:#bdbdbd;--jp-border-color2:#e0e0e0;--jp-border-color3:#eee;--jp-border-width:1px;
--jp-ui-font-color0:rgba(0,0,0,1);--jp-ui-font-color1:rgba(0,0,0,.87);--jp-ui-font-color2:rgba(0,0,0,.54);
--jp-ui-font-color3:rgba(0,0,0,.38);--jp-ui-inverse-font-color0:#fff;--jp-brand-color1:#1976d2;--jp-error-color1:#d32f2f;
--jp-warn-color1:#f57c00;--jp-success-color1:#388e3c;--jp-cell-editor-background:#f5f5f5;
--jp-mirror-editor-keyword-color:#008000;--jp-mirror-editor-variable-2-color:#05a;
--jp-ui-font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;--jp-ui-font-size0:.83333em;
--jp-ui-font-size1:13px;--jp-ui-font-size2:1.2em;--jp-ui-font-size3:1.44em;
--jp-code-font-family:Menlo,Consolas,'DejaVu Sans Mono',monospace;--jp-code-font-size:13px;`;
/** ... and its dark theme's, for VS Code's dark themes. */
const DARK = `--jp-layout-color0:#111;--jp-layout-color1:#212121;--jp-layout-color2:#424242;--jp-layout-color3:#616161;
--jp-border-color1:#616161;--jp-border-color2:#424242;--jp-border-color3:#212121;--jp-ui-font-color0:#fff;
--jp-ui-font-color1:rgba(255,255,255,.87);--jp-ui-font-color2:rgba(255,255,255,.54);--jp-ui-font-color3:rgba(255,255,255,.38);
--jp-ui-inverse-font-color0:#000;--jp-brand-color1:#42a5f5;--jp-cell-editor-background:#212121;
--jp-mirror-editor-keyword-color:#6c6;--jp-mirror-editor-variable-2-color:#8af;`;

const THEME_CSS = `.lz-standalone{${LIGHT}}
.lz-standalone.lz-dark{${DARK}}
:host{display:block;margin:2px 0}
.lz-trace{height:var(--lazynb-view-height,580px)}`;

/** VS Code marks its dark and high-contrast themes on the body. */
function darkPage(doc: Document): boolean {
  const c = doc.body?.classList;
  return (
    !!c &&
    (c.contains('vscode-dark') ||
      (c.contains('vscode-high-contrast') &&
        !c.contains('vscode-high-contrast-light')))
  );
}

/** Draw `data` (a trace document, as parsed JSON) into a new shadow-rooted element at the end of `host`. */
export function render(host: HTMLElement, data: unknown): TraceView {
  const doc = host.ownerDocument;
  const shell = doc.createElement('div');
  shell.className = 'lazynb-view-root';
  host.appendChild(shell);
  const root: ShadowRoot | HTMLElement =
    typeof shell.attachShadow === 'function'
      ? shell.attachShadow({ mode: 'open' })
      : shell;
  const style = doc.createElement('style');
  style.textContent = css + '\n' + THEME_CSS;
  const node = doc.createElement('div');
  root.append(style, node);
  // in a JupyterLab-based page (Notebook 7, nbconvert's lab template) the theme's own variables apply; elsewhere JupyterLab's
  if (
    getComputedStyle(host).getPropertyValue('--jp-layout-color0').trim() === ''
  ) {
    node.classList.add('lz-standalone');
    node.classList.toggle('lz-dark', darkPage(doc));
  }
  const view = new TraceView(node);
  view.render(readTrace(data));
  return view;
}

/**
 * Replace the static view in `host` with the interactive one. The trace comes from the host's
 * <script class="lazynb-trace"> (JSON, or packed: see payload.ts). Returns false (the static view stays) if
 * the host has no trace or was mounted already; a packed trace is drawn once it is unpacked, and if that fails the
 * static view stays and the host's data-lazynb-error says why.
 */
export function mount(host: HTMLElement | null): boolean {
  if (!host || host.getAttribute('data-lazynb-mounted') === 'true') {
    return false;
  }
  const script = host.querySelector('script.lazynb-trace');
  if (!script) {
    return false;
  }
  host.setAttribute('data-lazynb-mounted', 'true');
  const show = (data: unknown): void => {
    render(host, data);
    for (const el of Array.from(
      host.querySelectorAll(':scope > .lazynb-static')
    )) {
      el.remove();
    }
  };
  const encoding = script.getAttribute('data-encoding') ?? '';
  const text = script.textContent ?? 'null';
  if (encoding === '') {
    show(JSON.parse(text));
  } else {
    decodePayload(text, encoding).then(show, (e: unknown) =>
      host.setAttribute('data-lazynb-error', String(e))
    );
  }
  return true;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/naming-convention -- adds to the DOM's own Window, whose name is fixed
  interface Window {
    lazynbView?: { build?: string; mount: typeof mount; render: typeof render };
    /** outputs whose loader ran before any output's script: mounted when the script runs */
    lazynbQueue?: (HTMLElement | null)[];
  }
}

window.lazynbView = { mount, render };
const queued = window.lazynbQueue ?? [];
window.lazynbQueue = [];
for (const host of queued) {
  mount(host);
}
