import type { CallerTerminal } from './caller-terminal.js';
import { type Line, wrapLines } from './styled-text.js';
import type { TerminalSize } from './terminal-connection.js';
import { themed } from './theme.js';

/** Content a pager shows: laid out again for the window's width whenever it changes. */
export type PagedContent = (columns: number) => readonly Line[];

/** Where a pager stands in its content for a window of `size`. */
export interface PagedPosition {
  /** The rows shown now. */
  readonly page: readonly Line[];
  /** The first row shown, clamped to the content. */
  readonly offset: number;
  /** Rows of a page: the window less `reservedRows` (the prompt's). */
  readonly pageRows: number;
  readonly totalRows: number;
  readonly hasMore: boolean;
}

/** The page of `content` that starts at row `offset` in a window of `size`, `reservedRows` left for prompts. */
export function pageAt(content: PagedContent, size: TerminalSize, offset: number, reservedRows = 1): PagedPosition {
  const rows = wrapLines(content(size.columns), size.columns);
  const pageRows = Math.max(1, size.rows - reservedRows);
  const start = Math.max(0, Math.min(offset, Math.max(0, rows.length - 1)));
  return {
    page: rows.slice(start, start + pageRows),
    offset: start,
    pageRows,
    totalRows: rows.length,
    hasMore: start + pageRows < rows.length,
  };
}

/**
 * Shows `content` a screen at a time, asking between pages whether to go on (Enter, Space or
 * any key but Q). Returns `end` once the last page is on screen — the caller's next prompt goes
 * below it — or `quit` when the caller stopped early. A resize lays the current page out again.
 */
export async function showPaged(term: CallerTerminal, content: PagedContent): Promise<'end' | 'quit'> {
  const { theme } = term;
  let offset = 0;
  for (;;) {
    const start = offset;
    term.show((size) => pageAt(content, size, start).page);
    const position = pageAt(content, term.size(), start);
    if (!position.hasMore) return 'end';
    const key = await term.readKey([themed(theme, 'prompt', '-- more (Q stops) --')]);
    if (key.kind === 'char' && key.char.toUpperCase() === 'Q') return 'quit';
    if (key.kind === 'interrupt' || key.kind === 'endOfInput') return 'quit';
    offset = position.offset + position.pageRows;
  }
}
