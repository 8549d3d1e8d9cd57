import { type AnsiRun, renderAnsiScreen, screenToPlainText } from '../text/ansi-screen.js';
import { pipeCodesToAnsi } from '../text/pipe-codes.js';
import { stripAnsi } from '../text/strip-ansi.js';
import type { Line, Style } from './styled-text.js';

const DEFAULT_FG = 7;
const DEFAULT_BG = 0;

function styleOf(run: AnsiRun): Style | undefined {
  const style: { -readonly [K in keyof Style]: Style[K] } = {};
  if (run.fg !== DEFAULT_FG) style.fg = run.fg;
  if (run.bg !== DEFAULT_BG) style.bg = run.bg;
  if (run.isBold) style.isBold = true;
  if (run.isUnderline) style.isUnderline = true;
  return Object.keys(style).length === 0 ? undefined : style;
}

/**
 * Stored text (a message body, a file's long description) as lines for the terminal, drawn the
 * way the web reader draws it: pipe codes and ANSI colour (SGR) kept as colours, cursor moves
 * of ANSI art applied on an 80-column screen, and nothing else. The lines hold characters and
 * styles only, so no sequence of the stored text — a title, a cursor move, a bell, a mode
 * change — ever reaches the caller's terminal: the writer sends its own colour codes.
 */
export function storedTextLines(text: string): Line[] {
  return renderAnsiScreen(pipeCodesToAnsi(text)).map((row) =>
    row.map((run) => {
      const style = styleOf(run);
      return style === undefined ? { text: run.text } : { text: run.text, style };
    }),
  );
}

/** Stored text (a subject, a name, a description) for one line of a list: no sequences, no line breaks. */
export function singleLine(text: string): string {
  return stripAnsi(text)
    .replace(/[\t\r\n]+/g, ' ')
    .trim();
}

/** Stored text as the plain lines a reply quotes: what the screen shows of it, without colours. */
export function plainTextLines(text: string): string[] {
  const plain = screenToPlainText(renderAnsiScreen(pipeCodesToAnsi(text)));
  return plain === '' ? [] : plain.split('\n');
}

/** `count` and the noun, singular for one: `1 reply`, `2 replies`. */
export function counted(count: number, singular: string, plural: string): string {
  return `${count} ${count === 1 ? singular : plural}`;
}
