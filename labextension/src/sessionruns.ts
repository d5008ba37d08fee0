/**
 * Keeps the list of kernel runs of one notebook current: rescans the cells' outputs for trace
 * documents whenever cells are added or removed or an output changes (debounced).
 */
import { ICodeCellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { collectRuns, ICellOutputs, ICellRuns, totals } from './runs';

export class SessionRuns {
  panel: NotebookPanel | null = null;
  runs: ICellRuns[] = [];
  private watched = new Set<ICodeCellModel>();
  private timer = 0;

  constructor(private onChange: () => void) {}

  watch(panel: NotebookPanel | null): void {
    this.unwatchCells();
    this.panel?.model?.cells.changed.disconnect(this.cellsChanged, this);
    this.panel = panel;
    panel?.model?.cells.changed.connect(this.cellsChanged, this);
    if (panel && !panel.model) {
      void panel.context.ready.then(() => {
        if (this.panel === panel) {
          this.watch(panel);
        }
      });
    }
    this.cellsChanged();
  }

  totals(): { kernels: number; seconds: number } {
    return totals(this.runs);
  }

  private unwatchCells(): void {
    for (const m of this.watched) {
      // a deleted cell's model is disposed: its outputs are gone, and so are its connections
      if (!m.isDisposed) {
        m.outputs?.changed.disconnect(this.schedule, this);
      }
    }
    this.watched.clear();
  }

  private cellsChanged(): void {
    this.unwatchCells();
    const cells = this.panel?.model?.cells;
    if (cells) {
      for (let i = 0; i < cells.length; i++) {
        const m = cells.get(i);
        if (m.type === 'code') {
          const code = m as ICodeCellModel;
          code.outputs.changed.connect(this.schedule, this);
          this.watched.add(code);
        }
      }
    }
    this.schedule();
  }

  private schedule(): void {
    window.clearTimeout(this.timer);
    this.timer = window.setTimeout(() => this.scan(), 150);
  }

  private scan(): void {
    const cells = this.panel?.model?.cells;
    const input: ICellOutputs[] = [];
    if (cells) {
      for (let i = 0; i < cells.length; i++) {
        const m = cells.get(i);
        if (m.type !== 'code') {
          continue;
        }
        const code = m as ICodeCellModel;
        const outputs: Record<string, unknown>[] = [];
        for (let j = 0; j < code.outputs.length; j++) {
          outputs.push(code.outputs.get(j).data as Record<string, unknown>);
        }
        input.push({
          id: m.id,
          index: i,
          executionCount: code.executionCount,
          outputs
        });
      }
    }
    this.runs = collectRuns(input);
    this.onChange();
  }
}
