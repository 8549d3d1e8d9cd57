import type { CSSProperties, JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import { type AnsiRow, type AnsiRun, renderAnsiScreen, screenToPlainText } from '../../../src/text/ansi-screen.js';
import { pipeCodesToAnsi } from '../../../src/text/pipe-codes.js';

export type AnsiTextMode = 'colour' | 'plain';

export interface AnsiTextProps {
  /** Message text as stored by the board: Unicode with ANSI sequences and pipe codes. */
  readonly text: string;
  /** `plain` shows the same characters and lines without colours. Default `colour`. */
  readonly mode?: AnsiTextMode;
}

// Enough for a message list plus the open message and a few neighbours; a body is at most
// 64 KiB, so the cache stays a few megabytes at worst.
const LAYOUT_CACHE_SIZE = 32;
const layoutCache = new Map<string, readonly AnsiRow[]>();

/**
 * Lays out BBS message text (pipe codes and ANSI) on the 80-column screen, memoised by text so
 * toggling the mode, re-rendering or re-opening a message does not redraw the grid.
 */
function layoutBbsText(text: string): readonly AnsiRow[] {
  const cached = layoutCache.get(text);
  if (cached !== undefined) {
    // Re-insert to mark it most recently used; a Map iterates in insertion order.
    layoutCache.delete(text);
    layoutCache.set(text, cached);
    return cached;
  }
  const rows = renderAnsiScreen(pipeCodesToAnsi(text));
  layoutCache.set(text, rows);
  if (layoutCache.size > LAYOUT_CACHE_SIZE) {
    const oldest = layoutCache.keys().next();
    if (oldest.done !== true) layoutCache.delete(oldest.value);
  }
  return rows;
}

/** The same text with every sequence and pipe code removed, one line per screen row. */
export function bbsTextToPlainText(text: string): string {
  return screenToPlainText(layoutBbsText(text));
}

/**
 * Shows BBS message text the way a DOS terminal would: `<pre class="ansi">` with one
 * `span.ansi-row` per screen row and one span per colour run. Built from elements and classes
 * only: the reader's Content-Security-Policy forbids inline style attributes from HTML strings.
 * In `plain` mode it is `<pre class="ansi ansi-plain">` holding just the text.
 * Needs `ansi.css` in the page's styles.
 */
export function AnsiText({ text, mode = 'colour' }: AnsiTextProps): JSX.Element {
  const rows = layoutBbsText(text);
  // Built again only when the text or mode changes, so Preact skips an unchanged message of
  // thousands of spans when its parent re-renders.
  const children = useMemo(() => (mode === 'plain' ? screenToPlainText(rows) : rows.map(renderRow)), [rows, mode]);
  return <pre class={mode === 'plain' ? 'ansi ansi-plain' : 'ansi'}>{children}</pre>;
}

function renderRow(row: AnsiRow, index: number, rows: readonly AnsiRow[]): JSX.Element {
  return (
    // Rows never move, so their index is a stable key.
    <span key={index} class="ansi-row">
      {row.map(renderRun)}
      {/* The newline, not CSS, breaks the rows: empty rows keep their height and copying keeps the lines. */}
      {index < rows.length - 1 ? '\n' : null}
    </span>
  );
}

// `.ansi` already draws light grey on black; leaving those classes off keeps uncoloured runs bare.
const DEFAULT_FG = 7;
const DEFAULT_BG = 0;

function renderRun(run: AnsiRun, index: number): JSX.Element {
  const classes: string[] = [];
  const style: CSSProperties = {};
  if (typeof run.fg === 'number') {
    if (run.fg !== DEFAULT_FG) classes.push(`fg${run.fg}`);
  } else {
    // 256-colour and truecolour have no class. Preact sets a style object through CSSOM, which
    // the CSP allows.
    style.color = run.fg;
  }
  if (typeof run.bg === 'number') {
    if (run.bg !== DEFAULT_BG) classes.push(`bg${run.bg}`);
  } else {
    style.backgroundColor = run.bg;
  }
  if (run.isBold) classes.push('b');
  if (run.isUnderline) classes.push('u');
  return (
    // Runs never move within a row, so their index is a stable key.
    <span
      key={index}
      class={classes.length > 0 ? classes.join(' ') : undefined}
      style={Object.keys(style).length > 0 ? style : undefined}
    >
      {run.text}
    </span>
  );
}
