import iconv from 'iconv-lite';
import type { AnsiColour } from '../text/ansi-screen.js';
import { toAscii } from './ascii-text.js';
import type { Line, Style } from './styled-text.js';
import type { TerminalConnection } from './terminal-connection.js';
import type { TerminalProfile } from './terminal-profile.js';

const ESC = '\u001b';
const CRLF = '\r\n';
const RESET = `${ESC}[0m`;

// Every C0 and C1 control and DEL. Text to show never carries one: the line ends, colours and
// erasing are the writer's own, so stored text can neither move the cursor, nor set a title,
// nor ring a bell (U+009B is a one-character CSI to some terminals, so C1 goes too).
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

/** The VGA palette, in ANSI order: what a 24-bit colour is brought back to on a BBS terminal. */
const VGA_PALETTE: readonly (readonly [number, number, number])[] = [
  [0x00, 0x00, 0x00],
  [0xaa, 0x00, 0x00],
  [0x00, 0xaa, 0x00],
  [0xaa, 0x55, 0x00],
  [0x00, 0x00, 0xaa],
  [0xaa, 0x00, 0xaa],
  [0x00, 0xaa, 0xaa],
  [0xaa, 0xaa, 0xaa],
  [0x55, 0x55, 0x55],
  [0xff, 0x55, 0x55],
  [0x55, 0xff, 0x55],
  [0xff, 0xff, 0x55],
  [0x55, 0x55, 0xff],
  [0xff, 0x55, 0xff],
  [0x55, 0xff, 0xff],
  [0xff, 0xff, 0xff],
];

function rgbOf(hex: string): [number, number, number] {
  const value = Number.parseInt(hex.slice(1), 16);
  return [(value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff];
}

function nearestPaletteColour(hex: string): number {
  const [red, green, blue] = rgbOf(hex);
  let best = 0;
  let bestDistance = Number.POSITIVE_INFINITY;
  VGA_PALETTE.forEach(([r, g, b], index) => {
    const distance = (r - red) ** 2 + (g - green) ** 2 + (b - blue) ** 2;
    if (distance < bestDistance) {
      best = index;
      bestDistance = distance;
    }
  });
  return best;
}

/**
 * SGR parameters for a colour. UTF-8 terminals get aixterm's bright colours (90–97, 100–107)
 * and 24-bit colour; a BBS terminal knows ANSI.SYS's eight colours only (bright foregrounds
 * are bold, see `sgrOf`) and gets the palette colour nearest to a 24-bit one (its bright
 * backgrounds would blink, so they are drawn dark).
 */
function colourParams(colour: AnsiColour, isBackground: boolean, profile: TerminalProfile): string[] {
  const base = isBackground ? 40 : 30;
  if (profile.charset === 'cp437') return [String(base + (paletteIndexOf(colour) % 8))];
  if (typeof colour === 'string') return [isBackground ? '48' : '38', '2', ...rgbOf(colour).map(String)];
  return [String(colour < 8 ? base + colour : base + 60 + colour - 8)];
}

const paletteIndexOf = (colour: AnsiColour) => (typeof colour === 'number' ? colour : nearestPaletteColour(colour));

/** The SGR sequence that draws `style` from scratch (it starts with a reset). */
function sgrOf(style: Style | undefined, profile: TerminalProfile): string {
  const params = ['0'];
  const isBrightOnBbs = profile.charset === 'cp437' && style?.fg !== undefined && paletteIndexOf(style.fg) >= 8;
  if (style?.isBold || isBrightOnBbs) params.push('1');
  if (style?.isUnderline) params.push('4');
  if (style?.fg !== undefined) params.push(...colourParams(style.fg, false, profile));
  if (style?.bg !== undefined) params.push(...colourParams(style.bg, true, profile));
  return `${ESC}[${params.join(';')}m`;
}

const sameStyle = (a: Style | undefined, b: Style | undefined) =>
  a?.fg === b?.fg &&
  a?.bg === b?.bg &&
  Boolean(a?.isBold) === Boolean(b?.isBold) &&
  !a?.isUnderline === !b?.isUnderline;

/**
 * A line as the terminal gets it, before encoding: its text without control characters, and
 * (where the terminal takes escapes) an SGR sequence where the style changes and a reset at
 * the end; for an ASCII terminal, the text transliterated to ASCII.
 */
export function renderLine(line: Line, profile: TerminalProfile): string {
  let out = '';
  let current: Style | undefined;
  for (const span of line) {
    const text = span.text.replace(CONTROL_CHARACTERS, '');
    if (text === '') continue;
    if (!profile.hasEscapes) {
      out += toAscii(text);
      continue;
    }
    if (!sameStyle(current, span.style)) {
      out += span.style === undefined ? RESET : sgrOf(span.style, profile);
      current = span.style;
    }
    out += text;
  }
  return current === undefined ? out : out + RESET;
}

/** Every character code page 437 has, from its 256 bytes. */
const CP437_CHARACTERS: ReadonlySet<string> = new Set(
  iconv.decode(Buffer.from(Array.from({ length: 256 }, (_, byte) => byte)), 'cp437'),
);

/** `text` with what CP437 lacks given its ASCII stand-in (typographic quotes, dashes, `…`). */
function toCp437Repertoire(text: string): string {
  let out = '';
  for (const char of text) out += CP437_CHARACTERS.has(char) ? char : toAscii(char);
  return out;
}

/** `text` (already rendered) as the terminal's bytes: UTF-8, CP437 (what it lacks as in ASCII), or ASCII. */
export function encodeForTerminal(text: string, profile: TerminalProfile): Buffer {
  if (profile.charset === 'cp437') return iconv.encode(toCp437Repertoire(text), 'cp437');
  if (profile.charset === 'ascii') return Buffer.from(toAscii(text), 'latin1');
  return Buffer.from(text, 'utf8');
}

/**
 * Writes to one caller's terminal. Everything written in one turn of the event loop goes out
 * as one write, so echoing a pasted line costs one packet, not one per character.
 */
export interface TerminalWriter {
  readonly profile: TerminalProfile;
  /** The line and a line end. */
  line(line: Line): void;
  /** The line without a line end (a prompt, an echo). */
  spans(line: Line): void;
  newLine(): void;
  /** Clears the screen and homes the cursor; on an ASCII terminal, a blank line sets the new screen apart. */
  clearScreen(): void;
  /** Back to the start of the cursor's row, erased; on an ASCII terminal (no erasing), a new line. */
  restartLine(): void;
  /** Rubs out the character before the cursor. */
  rubOut(): void;
  /** Sends what is buffered now (the writer also does so by itself at the end of the turn). */
  flush(): void;
}

export function createTerminalWriter(connection: TerminalConnection, profile: TerminalProfile): TerminalWriter {
  let pending = '';
  let isScheduled = false;
  let isClosed = false;
  connection.onClose(() => {
    isClosed = true;
    pending = '';
  });

  function flush(): void {
    isScheduled = false;
    if (isClosed || pending === '') return;
    const text = pending;
    pending = '';
    connection.write(encodeForTerminal(text, profile));
  }

  function write(text: string): void {
    if (isClosed) return;
    pending += text;
    if (!isScheduled) {
      isScheduled = true;
      queueMicrotask(flush);
    }
  }

  return {
    profile,
    line(line) {
      write(renderLine(line, profile) + CRLF);
    },
    spans(line) {
      write(renderLine(line, profile));
    },
    newLine() {
      write(CRLF);
    },
    clearScreen() {
      write(profile.hasEscapes ? `${RESET}${ESC}[2J${ESC}[H` : CRLF);
    },
    restartLine() {
      write(profile.hasEscapes ? `\r${ESC}[K` : CRLF);
    },
    rubOut() {
      write('\b \b');
    },
    flush,
  };
}
