import type { AnsiColour } from '../text/ansi-screen.js';
import { charColumns, textColumns } from './text-width.js';

/** How a piece of text is drawn: palette colours 0–15 or `#rrggbb`, as the ANSI screen reads them. */
export interface Style {
  readonly fg?: AnsiColour;
  readonly bg?: AnsiColour;
  /** Bold that is not a bright colour already (the ANSI screen's `isBold`). */
  readonly isBold?: boolean;
  readonly isUnderline?: boolean;
}

/** Text in one style. Any control character in `text` is dropped on output: only the writer sends controls. */
export interface Span {
  readonly text: string;
  readonly style?: Style;
}

/** One row of output, without its line end. */
export type Line = readonly Span[];

/** The cells a line takes. */
export function lineColumns(line: Line): number {
  let columns = 0;
  for (const span of line) columns += textColumns(span.text);
  return columns;
}

/**
 * `line` split into rows of at most `columns` cells (an empty line stays one empty row), the
 * styles kept: what a terminal would do with it, done here so a screen knows how many rows it fills.
 */
function wrapLine(line: Line, columns: number): Line[] {
  const rows: Span[][] = [];
  let row: Span[] = [];
  let used = 0;
  for (const span of line) {
    let text = '';
    for (const char of span.text) {
      const width = charColumns(char);
      if (used + width > columns && used > 0) {
        if (text !== '') row.push(spanOf(text, span.style));
        rows.push(row);
        row = [];
        used = 0;
        text = '';
      }
      text += char;
      used += width;
    }
    if (text !== '') row.push(spanOf(text, span.style));
  }
  rows.push(row);
  return rows;
}

function spanOf(text: string, style: Style | undefined): Span {
  return style === undefined ? { text } : { text, style };
}

/** Every line of `lines` wrapped to `columns` (see wrapLine). */
export function wrapLines(lines: readonly Line[], columns: number): Line[] {
  return lines.flatMap((line) => wrapLine(line, columns));
}
