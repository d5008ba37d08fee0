/**
 * The front-end plugin: adds the "tinygrad" session panel to the left sidebar.
 * (The trace renderer itself is the mime extension in mime.ts.)
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { LabIcon } from '@jupyterlab/ui-components';
// eslint-disable-next-line jupyter/prefer-lazy-imports -- activate() puts the panel in the sidebar at start: it is needed at once
import { SessionPanel } from './sessionpanel';

const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16">' +
  '<g class="jp-icon3" fill="#616161"><rect x="1" y="2" width="6" height="3" rx="1"/><rect x="9" y="2" width="6" height="3" rx="1"/>' +
  '<rect x="5" y="11" width="6" height="3" rx="1"/><path d="M4 5h1v3h6V5h1v4H8.5v2h-1V9H4z"/></g></svg>';

export const tinygradIcon = new LabIcon({
  name: 'lazynb:tinygrad',
  svgstr: ICON_SVG
});

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'lazynb:session-panel',
  description:
    'A "tinygrad" side panel: session defaults for %%tinygrad cells and the kernels each cell ran.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker) => {
    const panel = new SessionPanel(tracker, (nb: NotebookPanel) =>
      app.shell.activateById(nb.id)
    );
    panel.title.icon = tinygradIcon;
    app.shell.add(panel, 'left', { rank: 650 });
  }
};

export default plugin;
