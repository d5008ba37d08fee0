/**
 * Source line <-> UOp mapping, both ways.
 *
 * A kernel's line_map says which UOps each line of generated source came from (line 0 is the
 * signature). Hovering a line highlights `uopsOfLine`; hovering a UOp highlights `linesOfUop`, the
 * inverse, built once per kernel.
 */

export interface ILineIndex {
  uopsOfLine: number[][];
  linesOfUop: Map<number, number[]>;
}

/** Invert line -> uops into uop -> lines (lines ascending, no duplicates). */
export function invertLineMap(lineMap: number[][]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  lineMap.forEach((uops, line) => {
    for (const u of new Set(uops)) {
      const lines = out.get(u);
      if (lines) {
        lines.push(line);
      } else {
        out.set(u, [line]);
      }
    }
  });
  return out;
}

export function buildLineIndex(
  lineMap: number[][],
  lineCount: number
): ILineIndex {
  const uopsOfLine: number[][] = [];
  for (let i = 0; i < lineCount; i++) {
    uopsOfLine.push(
      Array.from(new Set(lineMap[i] ?? [])).sort((a, b) => a - b)
    );
  }
  return { uopsOfLine, linesOfUop: invertLineMap(uopsOfLine) };
}

/** The UOps a line highlights, and the lines a UOp highlights. */
export function highlightForLine(
  index: ILineIndex,
  line: number
): { lines: number[]; uops: number[] } {
  return { lines: [line], uops: index.uopsOfLine[line] ?? [] };
}

export function highlightForUop(
  index: ILineIndex,
  uop: number
): { lines: number[]; uops: number[] } {
  return { lines: index.linesOfUop.get(uop) ?? [], uops: [uop] };
}
