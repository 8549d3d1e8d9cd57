/**
 * A terminal's screen as a web page, for pictures of what callers see: the text tmux captures of
 * a pane with its colours (`capture-pane -e -p`: SGR sequences, 16, 256 and 24-bit colours) drawn
 * as coloured text on a black screen. The sequences are read by src/text/ansi-screen.ts, the same
 * renderer that draws message art in the reader, so a screen's colours come out as they do there.
 */
import { type AnsiColour, type AnsiRun, renderAnsiScreen, SCREEN_COLUMNS } from '../src/text/ansi-screen.js';

/** The VGA palette, as the web reader draws message colours (web/src/text/ansi.css). */
const PALETTE = [
  '#000000',
  '#aa0000',
  '#00aa00',
  '#aa5500',
  '#0000aa',
  '#aa00aa',
  '#00aaaa',
  '#aaaaaa',
  '#555555',
  '#ff5555',
  '#55ff55',
  '#ffff55',
  '#5555ff',
  '#ff55ff',
  '#55ffff',
  '#ffffff',
] as const;

/** What the screen's cells show when nothing colours them: light grey on black, as a DOS screen. */
const DEFAULT_FG = 7;
const DEFAULT_BG = 0;

export interface TerminalScreenOptions {
  /** The pane's height: the screen is drawn this many rows high, blank rows included. */
  readonly rows: number;
  /** The line above the screen, as a terminal window's title bar shows it. */
  readonly title: string;
}

const cssColour = (colour: AnsiColour) => (typeof colour === 'number' ? (PALETTE[colour] ?? PALETTE[7]) : colour);

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function runHtml(run: AnsiRun): string {
  const styles = [
    ...(run.fg === DEFAULT_FG ? [] : [`color:${cssColour(run.fg)}`]),
    ...(run.bg === DEFAULT_BG ? [] : [`background-color:${cssColour(run.bg)}`]),
    ...(run.isBold ? ['font-weight:bold'] : []),
    ...(run.isUnderline ? ['text-decoration:underline'] : []),
  ];
  const text = escapeHtml(run.text);
  return styles.length === 0 ? text : `<span style="${styles.join(';')}">${text}</span>`;
}

/**
 * The page of one captured screen of an 80-column pane (the width src/text/ansi-screen.ts
 * draws): its rows as coloured text in a monospace font, in a dark window headed by `title`.
 *
 * @example terminalScreenHtml('\x1b[96mMain menu\n', { rows: 24, title: 'ssh demo@127.0.0.1' })
 */
export function terminalScreenHtml(capture: string, options: TerminalScreenOptions): string {
  const drawn = renderAnsiScreen(capture).slice(0, options.rows);
  const rows = [...drawn, ...Array.from({ length: options.rows - drawn.length }, () => [])];
  const screen = rows.map((row) => row.map(runHtml).join('')).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(options.title)}</title>
<style>
  body { margin: 0; padding: 24px; background: #1c1f26; display: inline-block; }
  .window { border: 1px solid #3a3f4b; border-radius: 8px; overflow: hidden; box-shadow: 0 8px 24px rgb(0 0 0 / 45%); }
  .title { padding: 6px 12px; background: #2b2f38; color: #b8bec9; font: 13px "DejaVu Sans", sans-serif; text-align: center; }
  pre {
    margin: 0;
    padding: 10px 12px;
    width: ${SCREEN_COLUMNS}ch;
    background: ${PALETTE[DEFAULT_BG]};
    color: ${PALETTE[DEFAULT_FG]};
    /* A font with box drawing and block glyphs at the cell width; rows touch, as on a screen. */
    font: 16px/1.15 "DejaVu Sans Mono", "Liberation Mono", monospace;
    font-kerning: none;
    font-variant-ligatures: none;
    white-space: pre;
  }
</style>
</head>
<body><div class="window"><div class="title">${escapeHtml(options.title)}</div><pre>${screen}</pre></div></body>
</html>
`;
}
