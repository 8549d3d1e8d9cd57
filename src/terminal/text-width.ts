// Combining marks (variation selectors among them) take no cell of their own.
const COMBINING_MARK = /^[\p{Mn}\p{Me}]$/u;
/** Zero-width spaces, joiners and direction marks: U+200B–U+200F and the word joiner U+2060. */
const isZeroWidthFormat = (code: number) => (code >= 0x200b && code <= 0x200f) || code === 0x2060;
// East Asian wide and fullwidth characters and emoji take two cells (a close approximation of
// wcwidth; a terminal that disagrees shifts the rest of one line, never more).
const DOUBLE_WIDTH =
  /^[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]$/u;

/** The terminal cells one character (one code point) takes: 0, 1 or 2. */
export function charColumns(char: string): number {
  if (COMBINING_MARK.test(char) || isZeroWidthFormat(char.codePointAt(0) ?? 0)) return 0;
  return DOUBLE_WIDTH.test(char) ? 2 : 1;
}

/** The terminal cells `text` takes. */
export function textColumns(text: string): number {
  let columns = 0;
  for (const char of text) columns += charColumns(char);
  return columns;
}

/** The longest start of `text` that fits in `columns` cells. */
export function cutToColumns(text: string, columns: number): string {
  let used = 0;
  let end = 0;
  for (const char of text) {
    const width = charColumns(char);
    if (used + width > columns) break;
    used += width;
    end += char.length;
  }
  return text.slice(0, end);
}

/** The longest end of `text` that fits in `columns` cells (what an input line shows of a long entry). */
export function tailToColumns(text: string, columns: number): string {
  const chars = [...text];
  let used = 0;
  let start = chars.length;
  while (start > 0) {
    const width = charColumns(chars[start - 1] as string);
    if (used + width > columns) break;
    used += width;
    start -= 1;
  }
  return chars.slice(start).join('');
}

/** `text` cut to `columns` cells with an ellipsis when it did not fit, or padded with spaces to exactly `columns`. */
export function fitColumns(text: string, columns: number): string {
  if (columns <= 0) return '';
  const width = textColumns(text);
  if (width <= columns) return text + ' '.repeat(columns - width);
  const cut = cutToColumns(text, columns - 1);
  return `${cut}…${' '.repeat(columns - 1 - textColumns(cut))}`;
}
