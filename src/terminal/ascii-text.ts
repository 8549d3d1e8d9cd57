// Box drawing (U+2500–U+257F) by shape: straight lines keep their direction, everything that
// joins lines (corners, tees, crosses) is a `+`, as ASCII-art tables draw them.
const HORIZONTAL_LINES = new Set([
  0x2500, 0x2501, 0x2504, 0x2505, 0x2508, 0x2509, 0x254c, 0x254d, 0x2550, 0x2574, 0x2576, 0x2578, 0x257a, 0x257c,
  0x257e,
]);
const VERTICAL_LINES = new Set([
  0x2502, 0x2503, 0x2506, 0x2507, 0x250a, 0x250b, 0x254e, 0x254f, 0x2551, 0x2575, 0x2577, 0x2579, 0x257b, 0x257d,
  0x257f,
]);
const DIAGONALS: Readonly<Record<number, string>> = { 9585: '/', 9586: '\\', 9587: 'X' };

/** Typographic characters with an obvious ASCII stand-in of one cell. */
const PUNCTUATION: Readonly<Record<string, string>> = {
  '\u00a0': ' ',
  '\u2018': "'",
  '\u2019': "'",
  '\u201a': ',',
  '\u201c': '"',
  '\u201d': '"',
  '\u201e': '"',
  '\u2013': '-',
  '\u2014': '-',
  '\u2022': '*',
  '\u00b7': '.',
  '\u2219': '.',
  '\u2026': '.',
  '\u00ab': '<',
  '\u00bb': '>',
  '\u2190': '<',
  '\u2192': '>',
  '\u2191': '^',
  '\u2193': 'v',
  '\u25a0': '#',
  '\u00b0': 'o',
  '\u00d7': 'x',
};

function asciiOf(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  if (code >= 0x20 && code < 0x7f) return char;
  if (code >= 0x2500 && code <= 0x257f) {
    if (HORIZONTAL_LINES.has(code)) return '-';
    if (VERTICAL_LINES.has(code)) return '|';
    return DIAGONALS[code] ?? '+';
  }
  // Block elements and shades: the solid parts of ANSI art.
  if (code >= 0x2580 && code <= 0x259f) return '#';
  const punctuation = PUNCTUATION[char];
  if (punctuation !== undefined) return punctuation;
  // Letters with accents lose them (é → e); what has no ASCII letter under it is a `?`.
  const base = char.normalize('NFD').replace(/\p{M}/gu, '');
  if (base.length === 1 && base >= ' ' && base < '\u007f') return base;
  return /\p{M}/u.test(char) ? '' : '?';
}

/**
 * `text` in printable ASCII only, for a terminal that shows nothing else (`dumb`): box and
 * line characters become `+`, `-`, `|`, accents are dropped, typographic quotes and dashes get
 * their ASCII look-alikes, anything else is a `?`. Control characters are the writer's to drop.
 */
export function toAscii(text: string): string {
  // Plain ASCII is the common case: no per-character work for it.
  if (/^[\u0020-\u007e]*$/.test(text)) return text;
  let ascii = '';
  for (const char of text) ascii += asciiOf(char);
  return ascii;
}
