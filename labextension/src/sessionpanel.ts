/**
 * The "tinygrad" side panel: DEBUG / NOOPT / BEAM / device controls that become the defaults for
 * later `%%tinygrad` cells in the active notebook's kernel (sent silently as `%tinygrad ...`), and
 * every kernel that ran in that notebook, each linking to the cell that ran it.
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';
import { fmtSeconds, h, setChildren, plural } from './dom';
import { kernelName } from './kernelname';
import {
  IKernelState,
  ISessionSettings,
  panelCode,
  parseState,
  STATE_EXPRESSION
} from './magiccode';
import { SessionRuns } from './sessionruns';

export class SessionPanel extends Widget {
  private debug = h('input', {
    cls: 'lz-range',
    attrs: {
      type: 'range',
      min: 0,
      max: 7,
      step: 1,
      value: 0,
      'aria-label': 'DEBUG'
    }
  });
  private debugOut = h('output', { cls: 'lz-range-value' }, '0');
  private noopt = h('input', {
    attrs: { type: 'checkbox', 'aria-label': 'NOOPT' }
  });
  private beam = h('input', {
    cls: 'lz-range',
    attrs: {
      type: 'range',
      min: 0,
      max: 8,
      step: 1,
      value: 0,
      'aria-label': 'BEAM'
    }
  });
  private beamOut = h('output', { cls: 'lz-range-value' }, '0');
  private device = h('select', {
    cls: 'lz-select',
    attrs: { 'aria-label': 'device' }
  });
  private status = h('div', {
    cls: 'lz-panel-status',
    attrs: { 'aria-live': 'polite' }
  });
  private target = h('div', { cls: 'lz-panel-target' });
  private runList = h('div', { cls: 'lz-runs' });
  private runs: SessionRuns;
  private applyTimer = 0;
  /** Counts the learner's edits: a kernel reply asked for before the latest edit must not reset the controls. */
  private edits = 0;
  private syncing = false;
  private watchedSession: ISessionContext | null = null;

  constructor(
    private tracker: INotebookTracker,
    private openNotebook: (panel: NotebookPanel) => void
  ) {
    super();
    this.id = 'lazynb-session-panel';
    this.addClass('lz-panel');
    this.title.caption = 'tinygrad';
    setChildren(
      this.device,
      h('option', { attrs: { value: '' } }, '(kernel default)')
    );
    const row = (label: string, tip: string, ...controls: HTMLElement[]) =>
      h(
        'label',
        { cls: 'lz-panel-row', title: tip },
        h('span', { cls: 'lz-panel-label' }, label),
        ...controls
      );
    const form = h(
      'div',
      { cls: 'lz-panel-form' },
      row(
        'DEBUG',
        'DEBUG level 0-7: what the compiler prints',
        this.debug,
        this.debugOut
      ),
      row('NOOPT', 'no kernel optimizations', this.noopt),
      row('BEAM', 'BEAM search width 0-8 (0: off)', this.beam, this.beamOut),
      row('device', 'device that later %%tinygrad cells run on', this.device)
    );
    for (const el of [this.debug, this.noopt, this.beam, this.device]) {
      el.addEventListener('input', () => this.changed());
      el.addEventListener('change', () => this.changed());
    }
    setChildren(
      this.node,
      h('h2', { cls: 'lz-panel-title' }, 'tinygrad'),
      this.target,
      h(
        'div',
        { cls: 'lz-panel-note' },
        'Defaults for later %%tinygrad cells in this notebook\u2019s kernel.'
      ),
      form,
      this.status,
      h('h3', { cls: 'lz-panel-sub' }, 'Kernel runs'),
      this.runList
    );
    this.runs = new SessionRuns(() => this.showRuns());
    tracker.currentChanged.connect(() => this.notebookChanged());
    this.notebookChanged();
  }

  /** The values in the controls. */
  settings(): ISessionSettings {
    return {
      debug: Number(this.debug.value),
      noopt: this.noopt.checked,
      beam: Number(this.beam.value),
      device: this.device.value || null
    };
  }

  protected onAfterShow(): void {
    void this.readState();
  }

  private notebookChanged(): void {
    const panel = this.tracker.currentWidget;
    this.target.textContent = panel
      ? `notebook: ${panel.context.path}`
      : 'no notebook open';
    this.runs.watch(panel);
    this.watchedSession?.kernelChanged.disconnect(this.onKernelChanged, this);
    this.watchedSession = panel?.sessionContext ?? null;
    this.watchedSession?.kernelChanged.connect(this.onKernelChanged, this);
    if (this.isVisible) {
      void this.readState();
    }
  }

  private onKernelChanged(): void {
    void this.readState();
  }

  private changed(): void {
    this.debugOut.textContent = this.debug.value;
    this.beamOut.textContent = this.beam.value;
    if (this.syncing) {
      return;
    }
    this.edits++;
    window.clearTimeout(this.applyTimer);
    this.applyTimer = window.setTimeout(() => void this.apply(), 250);
  }

  private kernel() {
    return this.tracker.currentWidget?.sessionContext.session?.kernel ?? null;
  }

  /** Send the controls' values to the kernel as `%tinygrad ...`, silently. */
  async apply(): Promise<void> {
    const kernel = this.kernel();
    if (!kernel) {
      this.setStatus('no running kernel: start one to set defaults', 'warn');
      return;
    }
    const edits = this.edits;
    let code: string;
    try {
      code = panelCode(this.settings());
    } catch (e) {
      this.setStatus(String(e), 'error');
      return;
    }
    this.setStatus('applying\u2026', '');
    const future = kernel.requestExecute({
      code,
      silent: true,
      store_history: false,
      user_expressions: { lazynb: STATE_EXPRESSION }
    });
    const reply = await future.done;
    if (this.edits !== edits) {
      return; // edited since: the apply that follows sends and reports the newer values
    }
    const content = reply.content as {
      status: string;
      ename?: string;
      evalue?: string;
      user_expressions?: Record<string, unknown>;
    };
    if (content.status !== 'ok') {
      this.setStatus(
        `${content.ename ?? 'error'}: ${content.evalue ?? ''}`,
        'error'
      );
      return;
    }
    const state = parseState(content.user_expressions?.lazynb);
    if (state) {
      this.showState(state);
    }
    this.setStatus(`applied: ${code.split('\n').pop()}`, 'ok');
  }

  /** Read the kernel's current defaults and devices into the controls. */
  async readState(): Promise<void> {
    const kernel = this.kernel();
    if (!kernel) {
      return;
    }
    const edits = this.edits;
    try {
      const future = kernel.requestExecute({
        code: '',
        silent: true,
        store_history: false,
        user_expressions: { lazynb: STATE_EXPRESSION }
      });
      const reply = await future.done;
      if (this.edits !== edits) {
        return; // the learner's edit is newer than this answer; their apply will follow
      }
      const content = reply.content as {
        status: string;
        user_expressions?: Record<string, unknown>;
      };
      const state =
        content.status === 'ok'
          ? parseState(content.user_expressions?.lazynb)
          : null;
      if (state) {
        this.showState(state);
        this.setStatus(
          `kernel defaults: DEBUG=${state.session.debug} NOOPT=${state.session.noopt ? 1 : 0} BEAM=${state.session.beam}`,
          'ok'
        );
      } else {
        this.setStatus('lazynb is not importable in this kernel', 'warn');
      }
    } catch (e) {
      this.setStatus(`could not ask the kernel: ${String(e)}`, 'warn');
    }
  }

  private showState(state: IKernelState): void {
    this.syncing = true;
    try {
      this.debug.value = String(state.session.debug);
      this.noopt.checked = state.session.noopt;
      this.beam.value = String(state.session.beam);
      const keep = state.session.device ?? '';
      setChildren(
        this.device,
        h(
          'option',
          { attrs: { value: '' } },
          `(kernel default${state.defaultDevice ? `: ${state.defaultDevice}` : ''})`
        ),
        ...state.devices.map(d => {
          const o = h(
            'option',
            { attrs: { value: d.name }, title: d.why },
            d.ok ? d.name : `${d.name} (unavailable)`
          );
          o.disabled = !d.ok && d.name !== keep;
          return o;
        })
      );
      this.device.value = keep;
      this.debugOut.textContent = this.debug.value;
      this.beamOut.textContent = this.beam.value;
    } finally {
      this.syncing = false;
    }
  }

  private setStatus(text: string, kind: string): void {
    this.status.textContent = text;
    this.status.className = `lz-panel-status${kind ? ` lz-status-${kind}` : ''}`;
  }

  private showRuns(): void {
    const runs = this.runs.runs;
    if (!runs.length) {
      setChildren(
        this.runList,
        h(
          'div',
          { cls: 'lz-empty' },
          'no %%tinygrad output in this notebook yet'
        )
      );
      return;
    }
    const t = this.runs.totals();
    const groups = runs.map(r => {
      const go = () => this.goTo(r.cellId);
      const head = h(
        'button',
        {
          cls: 'lz-run-cell lz-link',
          attrs: { type: 'button' },
          title: 'go to the cell',
          data: { cell: r.cellIndex }
        },
        `[${r.executionCount ?? ' '}] cell ${r.cellIndex + 1}`,
        h(
          'span',
          { cls: 'lz-dim' },
          ` \u00b7 ${r.kernels.length} kernel${r.kernels.length === 1 ? '' : 's'} \u00b7 ${fmtSeconds(r.runS)}`
        )
      );
      head.addEventListener('click', go);
      const rows = r.kernels.map(k => {
        const row = h(
          'button',
          {
            cls: 'lz-run-kernel lz-link',
            attrs: { type: 'button' },
            title: `${k.name}: go to the cell`,
            data: { cell: r.cellIndex }
          },
          kernelName(k),
          h(
            'span',
            { cls: 'lz-dim' },
            ` ${k.device} ${fmtSeconds(k.timeS)}${k.runs > 1 ? ` \u00d7${k.runs}` : ''}`
          )
        );
        row.addEventListener('click', go);
        return row;
      });
      return h(
        'div',
        { cls: 'lz-run' },
        head,
        ...rows,
        r.error ? h('div', { cls: 'lz-error lz-small' }, r.error) : null
      );
    });
    setChildren(
      this.runList,
      h(
        'div',
        { cls: 'lz-small lz-dim' },
        `${plural(t.kernels, 'kernel')} \u00b7 ${fmtSeconds(t.seconds)} in all`
      ),
      ...groups
    );
  }

  /** Activate the notebook and scroll to (and select) the cell with model id `cellId`. */
  private goTo(cellId: string): void {
    const panel = this.runs.panel;
    if (!panel) {
      return;
    }
    const nb = panel.content;
    const index = nb.widgets.findIndex(c => c.model.id === cellId);
    if (index < 0) {
      return;
    }
    this.openNotebook(panel);
    nb.activeCellIndex = index;
    nb.deselectAll();
    void nb.scrollToCell(nb.widgets[index]);
  }
}
