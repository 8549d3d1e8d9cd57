import {
  type FtnAddress,
  formatFtnAddress,
  formatNetNodes,
  type NetNode,
  parseFtnAddress,
  parseNetNodes,
} from './ftn-address.js';
import {
  charsetOfChrs,
  chrsValueOf,
  DEFAULT_CHARSET,
  decodeFtnText,
  encodeFtnText,
  type OutgoingCharset,
} from './ftn-charset.js';
import { FtnFormatError, quoteForError } from './ftn-format-error.js';

/**
 * The text of a packed message and its control lines (FTS-0001, FTS-0004, FTS-0009, FTS-4001,
 * FTS-5003), read into parts and written back:
 *
 * ```
 * AREA:FSX_GEN                         echomail only, the first line
 * ^AMSGID: 21:1/999 0badcafe           kludges: ^A lines, hidden from readers
 * ^ACHRS: CP437 2
 * Hello all.                           the text
 * --- baud 0.1.0                       tear line
 *  * Origin: My board (21:1/999)       origin line, with the address in parentheses
 * SEEN-BY: 1/100 999                   systems that have the message
 * ^APATH: 1/999                        systems it went through
 * ```
 *
 * Lines end in CR in a packet and in LF in baud: a read body's text has LF line ends (CR, CRLF
 * and a lone LF all end a line; FTS-0001 calls LFs noise, but software on Unix writes LF alone)
 * and a written one has CR. Soft CRs (0x8D) are left alone: in CP866 that byte is a letter, and
 * in UTF-8 part of one.
 */

/** A control line: `^ANAME: value`, or `^ANAME value` for INTL, FMPT, TOPT and Via. */
export interface Kludge {
  readonly name: string;
  readonly value: string;
}

/** The origin line's parts: ` * Origin: <text> (<address>)`. */
export interface Origin {
  readonly text: string;
  /** The address in the trailing parentheses; null when they are missing or hold no address. */
  readonly address: FtnAddress | null;
}

export interface MessageBody {
  /** The echo's tag from the AREA line; null for netmail. */
  readonly area: string | null;
  /**
   * Every ^A line but PATH (and but a CHRS or CHARSET baud understood, which `charset` reports),
   * in the order they came. Written at the top of the body.
   */
  readonly kludges: readonly Kludge[];
  /** What people read, lines ending in LF, without a line end after the last line. */
  readonly text: string;
  /** The tear line's text after `--- ` ('' for a bare `---`); null when there is none. */
  readonly tearLine: string | null;
  readonly origin: Origin | null;
  readonly seenBy: readonly NetNode[];
  readonly path: readonly NetNode[];
}

export interface ReadMessageBody extends MessageBody {
  /** The FTS-5003 charset the body was decoded with (`CP437` when it names none baud knows). */
  readonly charset: string;
}

const CR = 0x0d;
const LF = 0x0a;
const SOH = '\u0001';
const AREA_PREFIX = 'AREA:';
const ORIGIN_PREFIX = ' * Origin: ';
const SEEN_BY_PREFIX = 'SEEN-BY:';
const PATH_NAME = 'PATH';
/** Kludges FTS-4001 and FTS-4009 write without a colon after the name. */
const NAMES_WITHOUT_COLON: ReadonlySet<string> = new Set(['INTL', 'FMPT', 'TOPT', 'Via']);
const CHARSET_KLUDGES: ReadonlySet<string> = new Set(['CHRS', 'CHARSET']);
/**
 * SEEN-BY and PATH lines wrap to stay within 79 characters, so an 80-column screen shows each
 * on one line; each line starts again with a full net/node.
 */
const MAX_CONTROL_LINE = 79;
/** The origin line keeps within 79 characters too, for the same screens. */
const MAX_ORIGIN_LINE = 79;
/** An area tag: printable ASCII without spaces. */
const AREA_TAG = /^[\x21-\x7e]+$/;
const KLUDGE_NAME = /^[\x21-\x39\x3b-\x7e]+$/;
const KLUDGE = /^([^ :]+)(?:: ?| |$)(.*)$/s;
const LINE_BREAK = /\r\n|\r|\n/;

/** Splits raw body bytes into lines at CR, CRLF or LF; a line end after the last line adds no empty line. */
function splitLines(bytes: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index];
    if (byte !== CR && byte !== LF) continue;
    lines.push(bytes.subarray(start, index));
    if (byte === CR && bytes[index + 1] === LF) index += 1;
    start = index + 1;
  }
  if (start < bytes.length) lines.push(bytes.subarray(start));
  return lines;
}

/** The charset a body's first CHRS (or CHARSET) kludge names, read from the raw ASCII lines. */
function findCharset(lines: readonly Buffer[]): string {
  for (const line of lines) {
    if (line[0] !== 1) continue;
    const kludge = readKludge(line.toString('latin1').slice(1));
    if (CHARSET_KLUDGES.has(kludge.name.toUpperCase())) return charsetOfChrs(kludge.value) ?? DEFAULT_CHARSET;
  }
  return DEFAULT_CHARSET;
}

function readKludge(line: string): Kludge {
  const match = KLUDGE.exec(line);
  return match ? { name: match[1] ?? '', value: match[2] ?? '' } : { name: line, value: '' };
}

/**
 * Pushes `items` one by one: `push(...items)` passes them as arguments, and a SEEN-BY line of a
 * body over a raised limit can hold more entries than a call takes arguments.
 */
function appendAll<T>(target: T[], items: readonly T[]): void {
  for (const item of items) target.push(item);
}

const isTearLine = (line: string) => line === '---' || line.startsWith('--- ');
const isTailLine = (line: string) => line.startsWith(SOH) || line.startsWith(SEEN_BY_PREFIX);

function readOrigin(text: string): Origin {
  const match = /^(.*) \(([^()]*)\)\s*$/s.exec(text);
  if (match) {
    try {
      return { text: match[1] ?? '', address: parseFtnAddress((match[2] ?? '').trim()) };
    } catch (error) {
      if (!(error instanceof FtnFormatError)) throw error;
    }
  }
  return { text, address: null };
}

function readNetNodeLine(line: string, prefixLength: number, what: string): NetNode[] {
  try {
    return parseNetNodes(line.slice(prefixLength), what);
  } catch (error) {
    if (error instanceof FtnFormatError) throw new FtnFormatError(`${what} line: ${error.message}`);
    throw error;
  }
}

/**
 * Reads a packed message's body (without its NUL) into its parts (see `MessageBody`), decoded in
 * the charset its CHRS kludge names. The AREA line is recognised only as the first line; the
 * origin line as the last line before the SEEN-BY, PATH and other trailing ^A lines; the tear
 * line right before the origin line (or last, when there is no origin). Throws `FtnFormatError`
 * for a NUL in the body or a SEEN-BY or PATH entry that is not net/node.
 */
export function readMessageBody(body: Uint8Array): ReadMessageBody {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (bytes.includes(0)) throw new FtnFormatError('message body: holds a NUL byte');
  const rawLines = splitLines(bytes);
  const charset = findCharset(rawLines);
  const lines = rawLines.map((line) => decodeFtnText(line, charset));

  let first = 0;
  let area: string | null = null;
  if (lines[0]?.startsWith(AREA_PREFIX)) {
    area = lines[0].slice(AREA_PREFIX.length).trim();
    first = 1;
  }
  let textStart = first;
  while (textStart < lines.length && lines[textStart]?.startsWith(SOH)) textStart += 1;
  let textEnd = lines.length;
  while (textEnd > textStart && isTailLine(lines[textEnd - 1] ?? '')) textEnd -= 1;

  let origin: Origin | null = null;
  const lastTextLine = lines[textEnd - 1];
  if (textEnd > textStart && lastTextLine?.startsWith(ORIGIN_PREFIX)) {
    origin = readOrigin(lastTextLine.slice(ORIGIN_PREFIX.length));
    textEnd -= 1;
  }
  let tearLine: string | null = null;
  const tearCandidate = lines[textEnd - 1];
  if (textEnd > textStart && tearCandidate !== undefined && isTearLine(tearCandidate)) {
    tearLine = tearCandidate.slice(4);
    textEnd -= 1;
  }

  const kludges: Kludge[] = [];
  const textLines: string[] = [];
  const seenBy: NetNode[] = [];
  const path: NetNode[] = [];
  lines.slice(first).forEach((line, offset) => {
    const index = first + offset;
    const isText = index >= textStart && index < textEnd;
    if (line.startsWith(SOH)) {
      const kludge = readKludge(line.slice(1));
      if (kludge.name === PATH_NAME) appendAll(path, readNetNodeLine(kludge.value, 0, 'PATH'));
      else if (!(CHARSET_KLUDGES.has(kludge.name.toUpperCase()) && charsetOfChrs(kludge.value) !== null)) {
        kludges.push(kludge);
      }
    } else if (isText) {
      textLines.push(line);
    } else if (index >= textEnd && line.startsWith(SEEN_BY_PREFIX)) {
      appendAll(seenBy, readNetNodeLine(line, SEEN_BY_PREFIX.length, 'SEEN-BY'));
    }
  });
  return { area, kludges, text: textLines.join('\n'), tearLine, origin, seenBy, path, charset };
}

function formatKludge({ name, value }: Kludge): string {
  return `${SOH}${name}${NAMES_WITHOUT_COLON.has(name) ? ' ' : ': '}${value}`;
}

/** `prefix` lines listing `entries`, each at most 79 characters and starting with a full net/node. */
function netNodeLines(prefix: string, entries: readonly NetNode[]): string[] {
  const lines: string[] = [];
  let chunk: NetNode[] = [];
  for (const entry of entries) {
    const candidate = [...chunk, entry];
    if (chunk.length > 0 && prefix.length + 1 + formatNetNodes(candidate).length > MAX_CONTROL_LINE) {
      lines.push(`${prefix} ${formatNetNodes(chunk)}`);
      chunk = [entry];
    } else {
      chunk = candidate;
    }
  }
  if (chunk.length > 0) lines.push(`${prefix} ${formatNetNodes(chunk)}`);
  return lines;
}

function originLine(origin: Origin): string {
  if (origin.address === null) return `${ORIGIN_PREFIX}${origin.text}`;
  const address = ` (${formatFtnAddress(origin.address)})`;
  const room = MAX_ORIGIN_LINE - ORIGIN_PREFIX.length - address.length;
  const text = Array.from(origin.text);
  return `${ORIGIN_PREFIX}${text.length > room ? text.slice(0, Math.max(0, room)).join('') : origin.text}${address}`;
}

function checkBody(body: MessageBody): string[] {
  const fail = (reason: string) => new FtnFormatError(`cannot write the message body: ${reason}`);
  if (body.area !== null && !AREA_TAG.test(body.area)) {
    throw fail(`the area tag ${quoteForError(body.area)} is not printable ASCII without spaces`);
  }
  for (const { name, value } of body.kludges) {
    if (!KLUDGE_NAME.test(name))
      throw fail(`the kludge name ${quoteForError(name)} is not printable ASCII without ':'`);
    if (name === PATH_NAME || CHARSET_KLUDGES.has(name.toUpperCase())) {
      throw fail(`a ${name} kludge is written from ${name === PATH_NAME ? 'path' : 'the charset'}, not from kludges`);
    }
    if (/[\r\n\0]/.test(value)) throw fail(`the ${name} kludge's value holds a line end or NUL`);
  }
  for (const [what, text] of [
    ['tear line', body.tearLine],
    ['origin', body.origin?.text ?? null],
  ] as const) {
    if (text !== null && /[\r\n\0]/.test(text)) throw fail(`the ${what} holds a line end or NUL`);
  }
  if (body.text.includes('\0')) throw fail('the text holds a NUL');
  const textLines = body.text === '' ? [] : body.text.split(LINE_BREAK);
  if (textLines.some((line) => line.startsWith(SOH))) {
    throw fail('a line of the text starts with ^A (0x01), which readers would hide as a kludge');
  }
  // The text never starts the body (CHRS comes first), so only its last line can be mistaken:
  // the reader takes the tear, origin and SEEN-BY lines from the end.
  const lastLine = textLines.at(-1) ?? '';
  if (body.tearLine === null && isTearLine(lastLine)) {
    throw fail('the last line of the text would read back as the tear line: give the message a tear line');
  }
  const isGuarded = body.tearLine !== null || body.origin !== null;
  if (!isGuarded && (lastLine.startsWith(ORIGIN_PREFIX) || lastLine.startsWith(SEEN_BY_PREFIX))) {
    throw fail('the last line of the text would read back as an origin or SEEN-BY line: give the message a tear line');
  }
  if (body.origin?.address === null && readOrigin(body.origin.text).address !== null) {
    throw fail('an origin without an address may not end in "(address)": it would read back as its address');
  }
  return textLines;
}

/**
 * Writes a body in `charset`: the AREA line, the kludges, `CHRS` for the charset, the text (LF,
 * CRLF or CR line ends become CR), tear line, origin line (its text cut so the line keeps within
 * 79 characters), SEEN-BY and PATH lines wrapped at 79; every line ends in CR. `readMessageBody`
 * reads what it writes back to the same parts.
 *
 * Throws `FtnFormatError` for what would not read back the same: a NUL, a text line starting with
 * ^A, PATH or CHRS among the kludges, or, with neither tear nor origin line, a last text line
 * that looks like one.
 */
export function writeMessageBody(body: MessageBody, charset: OutgoingCharset): Buffer {
  const textLines = checkBody(body);
  const lines = [
    ...(body.area === null ? [] : [`${AREA_PREFIX}${body.area}`]),
    ...body.kludges.map(formatKludge),
    formatKludge({ name: 'CHRS', value: chrsValueOf(charset) }),
    ...textLines,
    ...(body.tearLine === null ? [] : [body.tearLine === '' ? '---' : `--- ${body.tearLine}`]),
    ...(body.origin === null ? [] : [originLine(body.origin)]),
    ...netNodeLines(SEEN_BY_PREFIX, body.seenBy),
    ...netNodeLines(`${SOH}${PATH_NAME}:`, body.path),
  ];
  return encodeFtnText(lines.map((line) => `${line}\r`).join(''), charset);
}

/** The value of the first kludge named `name` (case-sensitive, as FTN names are), or null. */
export function kludgeValue(kludges: readonly Kludge[], name: string): string | null {
  return kludges.find((kludge) => kludge.name === name)?.value ?? null;
}

/** A MSGID or REPLY value's parts (FTS-0009): the originating address (unquoted) and the serial. */
export interface MsgId {
  readonly origin: string;
  readonly serial: string;
}

const SERIAL = /^[0-9a-fA-F]{8}$/;

/**
 * A MSGID value, `<address> <serial>` (FTS-0009): `serial` as 8 lower-case hex digits. The caller
 * keeps the counter: serials of one address must not repeat within three years.
 *
 * @example formatMsgId({ zone: 21, net: 1, node: 999, point: 0, domain: null }, 0xbadcafe) // '21:1/999 0badcafe'
 */
export function formatMsgId(address: FtnAddress, serial: number): string {
  if (!Number.isInteger(serial) || serial < 0 || serial > 0xffffffff) {
    throw new FtnFormatError(`cannot write the MSGID serial ${serial}: not a whole number in 0–0xffffffff`);
  }
  return `${formatFtnAddress(address)} ${serial.toString(16).padStart(8, '0')}`;
}

/**
 * Reads a MSGID or REPLY value: the origin (any text, since FTS-0009 lets non-FTN networks use
 * their own; in double quotes when it holds spaces, `""` standing for a quote) and the serial of
 * 8 hex digits. Null when it is not of that shape: a tosser then compares the whole value.
 */
export function parseMsgId(value: string): MsgId | null {
  const trimmed = value.trim();
  let origin: string;
  let rest: string;
  if (trimmed.startsWith('"')) {
    const match = /^"((?:[^"]|"")*)" +(.*)$/s.exec(trimmed);
    if (!match) return null;
    origin = (match[1] ?? '').replaceAll('""', '"');
    rest = match[2] ?? '';
  } else {
    const space = trimmed.lastIndexOf(' ');
    if (space === -1) return null;
    origin = trimmed.slice(0, space).trim();
    rest = trimmed.slice(space + 1);
  }
  return origin !== '' && SERIAL.test(rest) ? { origin, serial: rest.toLowerCase() } : null;
}
