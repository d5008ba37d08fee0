/**
 * The kernel runs of a notebook, read from its cells' outputs: every output carrying a trace
 * document gives one run per kernel, tied to the cell that produced it. Pure: the session panel feeds
 * it plain cell data.
 */
import { IKernel, MIME_TYPE, readTrace } from './types';

export interface ICellOutputs {
  /** the cell's model id (stable while the notebook is open) */
  id: string;
  index: number;
  executionCount: number | null;
  /** each output's MIME data */
  outputs: Record<string, unknown>[];
}

export interface ICellRuns {
  cellId: string;
  cellIndex: number;
  executionCount: number | null;
  kernels: IKernel[];
  runS: number;
  error: string | null;
}

export function collectRuns(cells: ICellOutputs[]): ICellRuns[] {
  const out: ICellRuns[] = [];
  for (const cell of cells) {
    for (const data of cell.outputs) {
      if (!(MIME_TYPE in data)) {
        continue;
      }
      const doc = readTrace(data[MIME_TYPE]);
      out.push({
        cellId: cell.id,
        cellIndex: cell.index,
        executionCount: cell.executionCount,
        kernels: doc.kernels,
        runS: doc.timing.runS,
        error: doc.error ? `${doc.error.type}: ${doc.error.message}` : null
      });
    }
  }
  return out;
}

/** Total kernel count and run time over all runs. */
export function totals(runs: ICellRuns[]): {
  kernels: number;
  seconds: number;
} {
  let kernels = 0;
  let seconds = 0;
  for (const r of runs) {
    kernels += r.kernels.length;
    seconds += r.kernels.reduce((s, k) => s + k.timeS, 0);
  }
  return { kernels, seconds };
}
