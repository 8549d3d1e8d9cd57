/**
 * A small virtual 80-column terminal for BBS message text: ANSI art and coloured text are
 * written onto a grid of cells the way a DOS terminal would draw them, and read back as rows of
 * colour runs (plain data). Shared by the web reader (web/src/text/AnsiText.tsx draws the runs
 * as DOM) and the terminal (src/terminal/message-text.ts writes them as the caller's terminal
 * can show them), so a message looks the same in both and neither lets stored text drive the
 * screen it is shown on.
 *
 * Why not anser for parsing: it splits on `ESC[` and hands back only the SGR state with the text
 * in between, so cursor movement (the backbone of ANSI art) is lost, and its colours come back
 * as class names or "r, g, b" strings we would have to map back to palette numbers. Tokenising
 * escape sequences and keeping SGR state is a few dozen lines here, and one parser sees both.
 */

export const SCREEN_COLUMNS = 80;

/**
 * Most rows one text may fill. The 64 KiB body limit allows a few thousand short lines; beyond
 * this the rest of the text is not shown, so hostile input cannot build a huge grid.
 */
export const MAX_SCREEN_ROWS = 5000;

/** A palette colour 0–15 (drawn with a `fgN`/`bgN` class) or a `#rrggbb` colour (256-colour and truecolour). */
export type AnsiColour = number | string;

/** Consecutive cells of one row drawn alike. */
export interface AnsiRun {
  readonly text: string;
  readonly fg: AnsiColour;
  readonly bg: AnsiColour;
  /** Bold that could not be shown by brightening the colour (see `appearanceOf`): draw it heavier. */
  readonly isBold: boolean;
  readonly isUnderline: boolean;
}

export type AnsiRow = readonly AnsiRun[];

type CellStyle = Omit<AnsiRun, 'text'>;

interface Cell {
  readonly char: string;
  readonly style: CellStyle;
}

/** The SGR state as set by the text, before it is turned into colours. */
interface Pen {
  readonly fg: AnsiColour;
  readonly bg: AnsiColour;
  readonly isBold: boolean;
  readonly isBlink: boolean;
  readonly isUnderline: boolean;
  readonly isReverse: boolean;
  readonly isConcealed: boolean;
}

const DEFAULT_FG = 7;
const DEFAULT_BG = 0;
const TAB_COLUMNS = 8;
const LAST_COLUMN = SCREEN_COLUMNS - 1;

const DEFAULT_PEN: Pen = Object.freeze({
  fg: DEFAULT_FG,
  bg: DEFAULT_BG,
  isBold: false,
  isBlink: false,
  isUnderline: false,
  isReverse: false,
  isConcealed: false,
});

const DEFAULT_STYLE: CellStyle = Object.freeze({ fg: DEFAULT_FG, bg: DEFAULT_BG, isBold: false, isUnderline: false });

/**
 * Draws `text` (ANSI escape sequences, CP437 already decoded to Unicode) on an 80-column screen
 * and returns its rows, each as runs of equally styled cells. Pipe codes are not read here:
 * translate them first with `pipeCodesToAnsi`.
 *
 * - `\n` starts a new line (stored text uses it alone as a newline); `\r` returns to column 1.
 * - A character written past column 80 wraps to the next row. The wrap waits for the next
 *   character (as on a VT100), so a full 80-character line followed by CRLF leaves no blank row.
 * - Colours: 16 colours, bold as bright foreground and blink as bright background (iCE colours,
 *   no blinking), 256-colour and truecolour, reverse, underline, conceal.
 * - Cursor: `ESC[nA/B/C/D/E/F/G/d`, `ESC[row;colH`/`f`, `ESC[s`/`ESC[u` and `ESC 7`/`ESC 8`,
 *   `ESC[J` (2J clears and homes, as ANSI.SYS does), `ESC[K`.
 * - Other sequences and control characters are dropped; text from the first `\x1a` (DOS EOF,
 *   which precedes a SAUCE record) on is not shown.
 * - Trailing blanks (spaces on the default background) and trailing empty rows are trimmed.
 *
 * @example renderAnsiScreen('\x1b[1;31mHi') → [[{ text: 'Hi', fg: 9, bg: 0, isBold: false, isUnderline: false }]]
 */
export function renderAnsiScreen(text: string): AnsiRow[] {
  const visible = cutAtEndOfFile(text);
  // A row is reached by at least one character of input (a newline, a character that wraps, a
  // cursor sequence), so the text length bounds the rows honest text can use; `ESC[99999H`
  // cannot jump further than that.
  const screen = new VirtualScreen(Math.min(MAX_SCREEN_ROWS, Math.max(1, visible.length)));
  for (const token of tokenizeAnsi(visible)) {
    screen.apply(token);
    if (screen.isFull) break;
  }
  return screen.toRows();
}

/**
 * The characters of `rows` without colours, one line per row: the "plain text" view. Spaces
 * kept only for their background colour are invisible here, so they are trimmed too.
 */
export function screenToPlainText(rows: readonly AnsiRow[]): string {
  const lines = rows.map((row) =>
    row
      .map((run) => run.text)
      .join('')
      .replace(/ +$/, ''),
  );
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n');
}

// SAUCE (the art metadata record) sits after a ^Z, which DOS `type` also stopped at. Some files
// carry the 128-character record without the ^Z.
const SAUCE_RECORD_LENGTH = 128;

function cutAtEndOfFile(text: string): string {
  const endOfFile = text.indexOf('\u001a');
  if (endOfFile >= 0) return text.slice(0, endOfFile);
  const sauceStart = text.length - SAUCE_RECORD_LENGTH;
  if (sauceStart >= 0 && text.startsWith('SAUCE00', sauceStart)) return text.slice(0, sauceStart);
  return text;
}

type AnsiToken =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'control'; readonly char: string }
  | { readonly kind: 'csi'; readonly params: string; readonly final: string }
  | { readonly kind: 'escape'; readonly final: string };

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters separate the text
const PRINTABLE_RUN = /[^\u0000-\u001f\u007f-\u009f]+/y;
// ECMA-48: ESC [ parameter bytes 0x30–0x3F, intermediate bytes 0x20–0x2F, one final byte 0x40–0x7E.
// The final is optional so a sequence cut short still matches and can be dropped whole.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching ESC is the point
const CONTROL_SEQUENCE = /\u001b\[([0-?]*)([ -/]*)([@-~]?)/y;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching ESC is the point
const ESCAPE_SEQUENCE = /\u001b([ -/]*)([0-~])/y;
// OSC, DCS, SOS, PM, APC: a string ended by BEL or ST (ESC \).
const STRING_INTRODUCERS = new Set([']', 'P', 'X', '^', '_']);

/**
 * Splits text into printable runs, single control characters and escape sequences. Malformed
 * sequences yield nothing: an unfinished CSI loses its introducer and parameters, an unended
 * OSC-style string loses only its two-character introducer (so a stray `ESC]` cannot hide the
 * rest of a message), a lone ESC is dropped. Every step consumes input, so this is linear.
 */
function* tokenizeAnsi(text: string): Generator<AnsiToken> {
  let index = 0;
  while (index < text.length) {
    PRINTABLE_RUN.lastIndex = index;
    const printable = PRINTABLE_RUN.exec(text);
    if (printable) {
      yield { kind: 'text', text: printable[0] };
      index = PRINTABLE_RUN.lastIndex;
      continue;
    }
    const char = text.charAt(index);
    if (char !== '\u001b') {
      yield { kind: 'control', char };
      index += 1;
      continue;
    }
    CONTROL_SEQUENCE.lastIndex = index;
    const csi = CONTROL_SEQUENCE.exec(text);
    if (csi) {
      const [, params = '', intermediates = '', final = ''] = csi;
      if (final !== '' && intermediates === '') yield { kind: 'csi', params, final };
      index = CONTROL_SEQUENCE.lastIndex;
      continue;
    }
    if (STRING_INTRODUCERS.has(text.charAt(index + 1))) {
      index = endOfControlString(text, index + 2) ?? index + 2;
      continue;
    }
    ESCAPE_SEQUENCE.lastIndex = index;
    const escapeSequence = ESCAPE_SEQUENCE.exec(text);
    if (escapeSequence) {
      const [, intermediates = '', final = ''] = escapeSequence;
      if (intermediates === '') yield { kind: 'escape', final };
      index = ESCAPE_SEQUENCE.lastIndex;
      continue;
    }
    index += 1;
  }
}

/** Index just after the BEL or ST that ends a control string starting at `from`, if any. */
function endOfControlString(text: string, from: number): number | undefined {
  const bell = text.indexOf('\u0007', from);
  const stringTerminator = text.indexOf('\u001b\\', from);
  if (bell < 0 && stringTerminator < 0) return undefined;
  if (stringTerminator < 0 || (bell >= 0 && bell < stringTerminator)) return bell + 1;
  return stringTerminator + 2;
}

// Only digits and `;` are meaningful for cursor sequences; anything else (private markers such
// as `ESC[?7h`, colons) makes the sequence one we do not know.
const NUMERIC_PARAMS = /^[\d;]*$/;
const SGR_PARAMS = /^[\d;:]*$/;

/** Numeric parameters; empty ones are `undefined` so each sequence can apply its own default. */
function parseParams(params: string): (number | undefined)[] {
  return params.split(';').map((param) => (param === '' ? undefined : Number(param)));
}

/** A count parameter: missing or 0 means 1; huge values are harmless because callers clamp. */
function countParam(value: number | undefined): number {
  return value === undefined || value < 1 ? 1 : value;
}

class VirtualScreen {
  /** Rows of cells; `undefined` is a cell never written (a space in the default colours). */
  private readonly rows: (Cell | undefined)[][] = [];
  private readonly rowLimit: number;
  private row = 0;
  private column = 0;
  private savedRow = 0;
  private savedColumn = 0;
  /** Set after writing in the last column: the next character wraps first (VT100 behaviour). */
  private isWrapPending = false;
  private pen: Pen = DEFAULT_PEN;
  private style: CellStyle = DEFAULT_STYLE;
  /** The row limit was reached by moving down: nothing further is drawn. */
  isFull = false;

  constructor(rowLimit: number) {
    this.rowLimit = rowLimit;
  }

  apply(token: AnsiToken): void {
    switch (token.kind) {
      case 'text':
        for (const char of token.text) {
          this.print(char);
          if (this.isFull) return;
        }
        return;
      case 'control':
        this.control(token.char);
        return;
      case 'csi':
        this.controlSequence(token.params, token.final);
        return;
      case 'escape':
        if (token.final === '7') this.saveCursor();
        else if (token.final === '8') this.restoreCursor();
        return;
    }
  }

  private print(char: string): void {
    if (this.isWrapPending) {
      this.newLine();
      if (this.isFull) return;
    }
    this.rowCells(this.row)[this.column] = { char, style: this.style };
    if (this.column === LAST_COLUMN) this.isWrapPending = true;
    else this.column += 1;
  }

  private control(char: string): void {
    switch (char) {
      case '\n':
        this.newLine();
        return;
      case '\r':
        this.moveTo(this.row, 0);
        return;
      case '\t':
        this.moveTo(this.row, (Math.floor(this.column / TAB_COLUMNS) + 1) * TAB_COLUMNS);
        return;
      case '\b':
        this.moveTo(this.row, this.column - 1);
        return;
    }
  }

  /** Stored text ends lines with `\n` alone, so it is a carriage return and a line feed. */
  private newLine(): void {
    if (this.row + 1 >= this.rowLimit) {
      this.isFull = true;
      return;
    }
    this.moveTo(this.row + 1, 0);
  }

  private controlSequence(params: string, final: string): void {
    if (final === 'm') {
      if (SGR_PARAMS.test(params)) this.setPen(applySgr(this.pen, params));
      return;
    }
    if (!NUMERIC_PARAMS.test(params)) return;
    const values = parseParams(params);
    const [first, second] = values;
    switch (final) {
      case 'A':
        this.moveTo(this.row - countParam(first), this.column);
        return;
      case 'B':
        this.moveTo(this.row + countParam(first), this.column);
        return;
      case 'C':
        this.moveTo(this.row, this.column + countParam(first));
        return;
      case 'D':
        this.moveTo(this.row, this.column - countParam(first));
        return;
      case 'E':
        this.moveTo(this.row + countParam(first), 0);
        return;
      case 'F':
        this.moveTo(this.row - countParam(first), 0);
        return;
      case 'G':
        this.moveTo(this.row, countParam(first) - 1);
        return;
      case 'd':
        this.moveTo(countParam(first) - 1, this.column);
        return;
      case 'H':
      case 'f':
        this.moveTo(countParam(first) - 1, countParam(second) - 1);
        return;
      case 'J':
        this.eraseInDisplay(first ?? 0);
        return;
      case 'K':
        this.eraseInLine(first ?? 0);
        return;
      case 's':
        this.saveCursor();
        return;
      case 'u':
        this.restoreCursor();
        return;
      case 't':
        // PabloDraw's truecolour: ESC[0;r;g;bt sets the background, ESC[1;r;g;bt the foreground.
        if (values.length === 4 && (first === 0 || first === 1)) {
          const colour = rgbColour(values[1], values[2], values[3]);
          if (colour !== undefined)
            this.setPen(first === 1 ? { ...this.pen, fg: colour } : { ...this.pen, bg: colour });
        }
        return;
    }
  }

  /** Moves the cursor, clamped to the screen: column 1–80, rows within the limit. */
  private moveTo(row: number, column: number): void {
    this.row = Math.max(0, Math.min(this.rowLimit - 1, row));
    this.column = Math.max(0, Math.min(LAST_COLUMN, column));
    this.isWrapPending = false;
  }

  private saveCursor(): void {
    this.savedRow = this.row;
    this.savedColumn = this.column;
  }

  private restoreCursor(): void {
    this.moveTo(this.savedRow, this.savedColumn);
  }

  private setPen(pen: Pen): void {
    this.pen = pen;
    this.style = appearanceOf(pen);
  }

  /** ESC[0K from the cursor to the end of line, 1K from the start to the cursor, 2K the whole line. */
  private eraseInLine(mode: number): void {
    if (mode === 0) this.fillBlank(this.row, this.column, LAST_COLUMN);
    else if (mode === 1) this.fillBlank(this.row, 0, this.column);
    else if (mode === 2) this.fillBlank(this.row, 0, LAST_COLUMN);
  }

  /**
   * ESC[0J erases below the cursor, 1J above it, 2J (and 3J) everything and homes the cursor, as
   * ANSI.SYS does and art made for it expects. Whole rows are cleared to the default colours,
   * not the current background: the screen has no fixed height to paint.
   */
  private eraseInDisplay(mode: number): void {
    if (mode === 0) {
      this.eraseInLine(0);
      this.rows.length = Math.min(this.rows.length, this.row + 1);
    } else if (mode === 1) {
      for (let row = 0; row < Math.min(this.row, this.rows.length); row += 1) this.rows[row] = [];
      this.eraseInLine(1);
    } else if (mode === 2 || mode === 3) {
      this.rows.length = 0;
      this.moveTo(0, 0);
    }
  }

  /** Erased cells take the current background, like a terminal's; an erase does not move the cursor. */
  private fillBlank(row: number, fromColumn: number, toColumn: number): void {
    const cells = this.rowCells(row);
    const blank: Cell = { char: ' ', style: { fg: DEFAULT_FG, bg: this.style.bg, isBold: false, isUnderline: false } };
    for (let column = fromColumn; column <= toColumn; column += 1) cells[column] = blank;
  }

  private rowCells(row: number): (Cell | undefined)[] {
    while (this.rows.length <= row) this.rows.push([]);
    // `row` is within `rows` after the loop above.
    return this.rows[row] as (Cell | undefined)[];
  }

  toRows(): AnsiRow[] {
    const rows = this.rows.map(cellsToRuns);
    while (rows.length > 0 && rows[rows.length - 1]?.length === 0) rows.pop();
    return rows;
  }
}

function isBlank(cell: Cell | undefined): boolean {
  return cell === undefined || (cell.char === ' ' && cell.style.bg === DEFAULT_BG && !cell.style.isUnderline);
}

function isSameStyle(a: CellStyle, b: CellStyle): boolean {
  return a.fg === b.fg && a.bg === b.bg && a.isBold === b.isBold && a.isUnderline === b.isUnderline;
}

/** Merges a row's cells into runs, leaving out the trailing blanks nobody can see. */
function cellsToRuns(cells: readonly (Cell | undefined)[]): AnsiRow {
  let end = cells.length;
  while (end > 0 && isBlank(cells[end - 1])) end -= 1;
  const runs: AnsiRun[] = [];
  let text = '';
  let style: CellStyle | undefined;
  for (let column = 0; column < end; column += 1) {
    const cell = cells[column];
    const cellStyle = cell?.style ?? DEFAULT_STYLE;
    if (style !== undefined && !isSameStyle(style, cellStyle)) {
      runs.push({ text, ...style });
      text = '';
    }
    style = cellStyle;
    text += cell?.char ?? ' ';
  }
  if (style !== undefined) runs.push({ text, ...style });
  return runs;
}

/**
 * The colours a pen draws with. As on a DOS screen, bold brightens foreground 0–7 and blink
 * brightens background 0–7 (iCE colours: art uses blink for the 8 extra backgrounds, and a
 * blinking web page helps nobody). Bold that cannot brighten (an already bright, 256-colour or
 * truecolour foreground) stays as `isBold` so it can be drawn heavier.
 */
function appearanceOf(pen: Pen): CellStyle {
  const brightFg = pen.isBold && typeof pen.fg === 'number' && pen.fg < 8 ? pen.fg + 8 : undefined;
  let fg: AnsiColour = brightFg ?? pen.fg;
  let bg: AnsiColour = pen.isBlink && typeof pen.bg === 'number' && pen.bg < 8 ? pen.bg + 8 : pen.bg;
  if (pen.isReverse) [fg, bg] = [bg, fg];
  if (pen.isConcealed) fg = bg;
  return { fg, bg, isBold: pen.isBold && brightFg === undefined, isUnderline: pen.isUnderline };
}

type MutablePen = { -readonly [K in keyof Pen]: Pen[K] };

/**
 * Applies one SGR parameter string (`1;31`, `38;5;208`, `38:2::255:0:0`) to a pen. Unknown
 * codes are ignored; an extended colour missing its values ends the sequence, as in xterm.
 */
function applySgr(current: Pen, params: string): Pen {
  const pen: MutablePen = { ...current };
  const list = params.split(';');
  let index = 0;
  while (index < list.length) {
    const param = list[index] ?? '';
    index += 1;
    if (param.includes(':')) {
      // ITU T.416 form: the extended colour's values are sub-parameters of one parameter.
      const [code, ...values] = param.split(':');
      if (code === '38' || code === '48') {
        const colour = extendedColour(values.length >= 5 && values[0] === '2' ? ['2', ...values.slice(2)] : values);
        if (colour !== undefined) pen[code === '38' ? 'fg' : 'bg'] = colour.value;
      }
      continue;
    }
    const code = param === '' ? 0 : Number(param);
    if (code === 38 || code === 48) {
      const colour = extendedColour(list.slice(index));
      if (colour === undefined) break;
      index += colour.length;
      pen[code === 38 ? 'fg' : 'bg'] = colour.value;
      continue;
    }
    applySgrCode(pen, code);
  }
  return pen;
}

function applySgrCode(pen: MutablePen, code: number): void {
  if (code >= 30 && code <= 37) pen.fg = code - 30;
  else if (code >= 40 && code <= 47) pen.bg = code - 40;
  else if (code >= 90 && code <= 97) pen.fg = code - 90 + 8;
  else if (code >= 100 && code <= 107) pen.bg = code - 100 + 8;
  else if (code === 0) Object.assign(pen, DEFAULT_PEN);
  else if (code === 1) pen.isBold = true;
  else if (code === 22) pen.isBold = false;
  else if (code === 4) pen.isUnderline = true;
  else if (code === 24) pen.isUnderline = false;
  else if (code === 5 || code === 6) pen.isBlink = true;
  else if (code === 25) pen.isBlink = false;
  else if (code === 7) pen.isReverse = true;
  else if (code === 27) pen.isReverse = false;
  else if (code === 8) pen.isConcealed = true;
  else if (code === 28) pen.isConcealed = false;
  else if (code === 39) pen.fg = DEFAULT_FG;
  else if (code === 49) pen.bg = DEFAULT_BG;
}

/**
 * Reads `5;n` (256 colours) or `2;r;g;b` (truecolour) following a 38/48; `length` is how many
 * parameters that took. Palette entries 0–15 stay palette numbers so they get the VGA classes.
 */
function extendedColour(values: readonly string[]): { value: AnsiColour; length: number } | undefined {
  const [mode, ...rest] = values;
  // An empty part is a missing value here, not the 0 `Number('')` would make of it.
  const numbers = rest.map((part) => (part === '' ? Number.NaN : Number(part)));
  if (mode === '5') {
    const index = numbers[0] ?? Number.NaN;
    if (!Number.isInteger(index) || index < 0 || index > 255) return undefined;
    return { value: index < 16 ? index : xtermPaletteColour(index), length: 2 };
  }
  if (mode === '2') {
    const value = rgbColour(...numbers.slice(0, 3));
    return value === undefined ? undefined : { value, length: 4 };
  }
  return undefined;
}

/** xterm's 256-colour palette above the first 16: a 6×6×6 cube, then 24 greys. */
function xtermPaletteColour(index: number): string {
  if (index >= 232) {
    const grey = 8 + (index - 232) * 10;
    return hexColour(grey, grey, grey);
  }
  const cube = index - 16;
  const level = (step: number): number => (step === 0 ? 0 : 55 + step * 40);
  return hexColour(level(Math.floor(cube / 36)), level(Math.floor(cube / 6) % 6), level(cube % 6));
}

function rgbColour(...channels: (number | undefined)[]): string | undefined {
  const [red, green, blue] = channels;
  const isChannel = (value: number | undefined): value is number =>
    value !== undefined && Number.isInteger(value) && value >= 0 && value <= 255;
  if (channels.length !== 3 || !isChannel(red) || !isChannel(green) || !isChannel(blue)) return undefined;
  return hexColour(red, green, blue);
}

function hexColour(red: number, green: number, blue: number): string {
  return `#${[red, green, blue].map((channel) => channel.toString(16).padStart(2, '0')).join('')}`;
}
