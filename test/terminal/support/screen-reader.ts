import iconv from 'iconv-lite';

// biome-ignore lint/suspicious/noControlCharactersInRegex: reading escape sequences is the point
const SEQUENCE = /\u001b\[([0-9;?]*)([@-~])|\u001b[^[]/y;

/**
 * A small terminal for tests: it reads what a session wrote the way a screen shows it. It
 * knows what the session sends — text, CR, LF, backspace, `ESC[2J` (clear), `ESC[H` (home),
 * `ESC[K` (erase to the end of the line) and SGR colours (which it ignores) — and wraps at the
 * window's width, so `screen()` is the visible text. `transcript()` is every character ever
 * shown, in order, without escapes, lines kept: what scrolled past or was cleared included.
 */
export function readScreen(
  bytes: Buffer,
  options: { charset?: 'utf8' | 'cp437'; columns?: number } = {},
): { screen: string; transcript: string } {
  const text = options.charset === 'cp437' ? iconv.decode(bytes, 'cp437') : bytes.toString('utf8');
  const columns = options.columns ?? 80;
  let rows: string[][] = [[]];
  let row = 0;
  let column = 0;
  let transcript = '';
  const cells = () => {
    while (rows.length <= row) rows.push([]);
    return rows[row] as string[];
  };
  let index = 0;
  while (index < text.length) {
    SEQUENCE.lastIndex = index;
    const sequence = text.charAt(index) === '\u001b' ? SEQUENCE.exec(text) : null;
    if (sequence) {
      index = SEQUENCE.lastIndex;
      const [, params = '', final = ''] = sequence;
      if (final === 'J' && params === '2') {
        rows = [[]];
        row = 0;
        column = 0;
      } else if (final === 'H') {
        row = 0;
        column = 0;
      } else if (final === 'K') {
        cells().length = Math.min(cells().length, column);
      }
      continue;
    }
    const char = String.fromCodePoint(text.codePointAt(index) ?? 0);
    index += char.length;
    if (char === '\r') {
      column = 0;
    } else if (char === '\n') {
      row += 1;
      transcript += '\n';
    } else if (char === '\b') {
      column = Math.max(0, column - 1);
    } else if (char >= ' ') {
      if (column >= columns) {
        row += 1;
        column = 0;
      }
      const line = cells();
      while (line.length < column) line.push(' ');
      line[column] = char;
      column += 1;
      transcript += char;
    }
  }
  const screen = rows.map((cellsOfRow) => cellsOfRow.join('').replace(/\s+$/, ''));
  while (screen.length > 0 && screen[screen.length - 1] === '') screen.pop();
  return { screen: screen.join('\n'), transcript };
}
