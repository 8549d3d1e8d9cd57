import { FtnFormatError, quoteForError } from './ftn-format-error.js';

/**
 * binkp frames (FTS-1026): a 2-byte big-endian header whose top bit marks a command and whose
 * other 15 bits give the length of what follows, so no frame carries more than 32767 bytes. A
 * command frame's first byte is the command, the rest its argument (text, no NUL needed); a data
 * frame's bytes belong to the file being received. Pure: no sockets, no files.
 */

/** The most a frame can carry: its length has 15 bits. */
export const BINKP_MAX_FRAME_BYTES = 0x7fff;
const COMMAND_BIT = 0x8000;

/** binkp's commands by number (FTS-1026 section 3). */
export const BinkpCommand = {
  M_NUL: 0,
  M_ADR: 1,
  M_PWD: 2,
  M_FILE: 3,
  M_OK: 4,
  M_EOB: 5,
  M_GOT: 6,
  M_ERR: 7,
  M_BSY: 8,
  M_GET: 9,
  M_SKIP: 10,
} as const;
export type BinkpCommand = (typeof BinkpCommand)[keyof typeof BinkpCommand];

const COMMAND_NAMES = Object.fromEntries(Object.entries(BinkpCommand).map(([name, id]) => [id, name])) as Record<
  number,
  string
>;

/** `M_FILE` for 3; `command 42` for a number binkp does not define. */
export function binkpCommandName(command: number): string {
  return COMMAND_NAMES[command] ?? `command ${command}`;
}

export type BinkpFrame =
  | { readonly kind: 'command'; readonly command: number; readonly argument: string }
  | { readonly kind: 'data'; readonly data: Buffer };

/**
 * What one session accepts, and how long it waits. Every number here bounds what a remote can
 * make us hold or wait for; a remote past one ends its session with an error.
 */
export interface BinkpLimits {
  /** Largest frame taken (binkp's own maximum, 32767, unless lower). */
  readonly maxFrameBytes: number;
  /** Largest file taken; a larger one is refused with M_SKIP (the sender keeps it). */
  readonly maxFileBytes: number;
  /** Most files taken in one session; the rest are refused with M_SKIP and come next time. */
  readonly maxFilesPerSession: number;
  /** Longest wait with no whole frame received and nothing written: a stalled or trickling remote is cut off. */
  readonly idleTimeoutSeconds: number;
  /** Longest wait from the connection to an accepted password. */
  readonly handshakeTimeoutSeconds: number;
  /** Longest session, whatever is moving. */
  readonly sessionTimeoutSeconds: number;
}

/**
 * 64 MiB is four times the largest bundle the bundle reader opens (src/ftn/bundle.ts reads at
 * most 64 MiB of packets, compressed far smaller); an hour moves that over a 20 KiB/s line.
 */
export const DEFAULT_BINKP_LIMITS: BinkpLimits = Object.freeze({
  maxFrameBytes: BINKP_MAX_FRAME_BYTES,
  maxFileBytes: 64 * 1024 * 1024,
  maxFilesPerSession: 1000,
  idleTimeoutSeconds: 60,
  handshakeTimeoutSeconds: 30,
  sessionTimeoutSeconds: 3600,
});

/** `DEFAULT_BINKP_LIMITS` with `overrides`; throws for a frame limit above binkp's 32767 or a non-positive number. */
export function resolveBinkpLimits(overrides: Partial<BinkpLimits> = {}): BinkpLimits {
  const limits = { ...DEFAULT_BINKP_LIMITS, ...overrides };
  for (const [key, value] of Object.entries(limits)) {
    if (!(typeof value === 'number' && value > 0 && Number.isFinite(value))) {
      throw new RangeError(`binkp limit ${key} must be a positive number, not ${value}`);
    }
  }
  if (!Number.isInteger(limits.maxFrameBytes) || limits.maxFrameBytes > BINKP_MAX_FRAME_BYTES) {
    throw new RangeError(`binkp limit maxFrameBytes must be a whole number up to ${BINKP_MAX_FRAME_BYTES}`);
  }
  return Object.freeze(limits);
}

/**
 * A command frame. A text argument is written as UTF-8 (the system, sysop and location names);
 * file commands pass the bytes they read (`latin1`), so a name goes back exactly as it came.
 */
export function encodeCommandFrame(command: BinkpCommand, argument: string | Buffer = ''): Buffer {
  const text = typeof argument === 'string' ? Buffer.from(argument, 'utf8') : argument;
  if (text.length + 1 > BINKP_MAX_FRAME_BYTES) {
    throw new FtnFormatError(`${binkpCommandName(command)} argument of ${text.length} bytes does not fit a frame`);
  }
  const frame = Buffer.allocUnsafe(3 + text.length);
  frame.writeUInt16BE(COMMAND_BIT | (text.length + 1), 0);
  frame[2] = command;
  text.copy(frame, 3);
  return frame;
}

/** The header of a data frame of `length` bytes (the bytes follow it on the wire). */
export function encodeDataHeader(length: number): Buffer {
  if (!Number.isInteger(length) || length < 1 || length > BINKP_MAX_FRAME_BYTES) {
    throw new FtnFormatError(`a data frame carries 1–${BINKP_MAX_FRAME_BYTES} bytes, not ${length}`);
  }
  const header = Buffer.allocUnsafe(2);
  header.writeUInt16BE(length, 0);
  return header;
}

/**
 * Reads frames out of a byte stream as it arrives, a chunk at a time: `push` returns every frame
 * the chunk completed. A frame over `maxFrameBytes` (seen from its header, before its bytes are
 * waited for) or an empty command frame breaks the stream: `push` returns the frames before it
 * and sets `error`, and reads nothing more.
 */
export class BinkpFrameDecoder {
  private pending: Buffer = Buffer.alloc(0);
  private broken: FtnFormatError | null = null;

  constructor(private readonly maxFrameBytes: number = BINKP_MAX_FRAME_BYTES) {}

  /** Why the stream is not framed any more; null while it is. */
  get error(): FtnFormatError | null {
    return this.broken;
  }

  /** Bytes of a frame begun but not whole: a remote that trickles them is caught by the idle timeout. */
  get bufferedBytes(): number {
    return this.pending.length;
  }

  push(chunk: Buffer): BinkpFrame[] {
    if (this.broken) return [];
    // Frames are at most 32 KiB, so joining the unread tail to the next chunk copies little.
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const frames: BinkpFrame[] = [];
    let offset = 0;
    while (this.pending.length - offset >= 2) {
      const header = this.pending.readUInt16BE(offset);
      const length = header & BINKP_MAX_FRAME_BYTES;
      const isCommand = (header & COMMAND_BIT) !== 0;
      if (length > this.maxFrameBytes) {
        this.broken = new FtnFormatError(`a frame of ${length} bytes is over the limit of ${this.maxFrameBytes}`);
      } else if (isCommand && length === 0) {
        this.broken = new FtnFormatError('a command frame with no command byte');
      }
      if (this.broken) {
        this.pending = Buffer.alloc(0);
        return frames;
      }
      if (this.pending.length - offset - 2 < length) break;
      const body = this.pending.subarray(offset + 2, offset + 2 + length);
      offset += 2 + length;
      if (!isCommand) {
        // An empty data frame is allowed and means nothing.
        if (length > 0) frames.push({ kind: 'data', data: Buffer.from(body) });
        continue;
      }
      // latin1 keeps every byte as one character, so a name escaped or not reads back exactly.
      frames.push({ kind: 'command', command: body[0] ?? 0, argument: readArgument(body.subarray(1)) });
    }
    this.pending = this.pending.subarray(offset);
    return frames;
  }
}

/** Some mailers end arguments with a NUL (FTS-1026 allows it): it is not part of the text. */
function readArgument(bytes: Buffer): string {
  const end = bytes.indexOf(0);
  return bytes.toString('latin1', 0, end === -1 ? bytes.length : end);
}

/** The file a M_FILE, M_GET, M_GOT or M_SKIP names: its name as sent (escaped), size and time. */
export interface BinkpFileId {
  /** The name as it travels: spaces, control characters and `\` written `\xHH`. */
  readonly netName: string;
  readonly size: number;
  /** Modification time, Unix seconds. */
  readonly unixTime: number;
}

/** M_FILE and M_GET also carry where the data starts: -1 in a M_FILE asks the receiver (FTS-1028). */
export interface BinkpFileOffer extends BinkpFileId {
  readonly offset: number;
}

const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;

function readDecimal(text: string | undefined, what: string, argument: string): number {
  const value = text !== undefined && DECIMAL.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value)) {
    throw new FtnFormatError(`${what} ${quoteForError(text ?? '')} in ${quoteForError(argument)} is not a number`);
  }
  return value;
}

/**
 * Reads `name size unixtime` (M_GOT, M_SKIP). Words past these (binkd's extensions) are ignored.
 * binkd writes times as unsigned numbers, so a time is any whole number from 0.
 */
export function parseBinkpFileId(argument: string): BinkpFileId {
  const words = argument.split(' ').filter((word) => word !== '');
  const [netName, size, unixTime] = words;
  if (netName === undefined || words.length < 3) {
    throw new FtnFormatError(`${quoteForError(argument)} is not "name size time"`);
  }
  return {
    netName,
    size: readDecimal(size, 'size', argument),
    unixTime: readDecimal(unixTime, 'time', argument),
  };
}

/** Reads `name size unixtime offset` (M_FILE, M_GET); an offset of -1 only where `allowRequest` (M_FILE). */
export function parseBinkpFileOffer(argument: string, allowRequest: boolean): BinkpFileOffer {
  const id = parseBinkpFileId(argument);
  const offsetText = argument.split(' ').filter((word) => word !== '')[3];
  if (offsetText === undefined) throw new FtnFormatError(`${quoteForError(argument)} has no offset`);
  const offset = allowRequest && offsetText === '-1' ? -1 : readDecimal(offsetText, 'offset', argument);
  if (offset > id.size) {
    throw new FtnFormatError(`offset ${offset} is past the end of ${id.size} bytes in ${quoteForError(argument)}`);
  }
  return { ...id, offset };
}

export function formatBinkpFileId(file: BinkpFileId): string {
  return `${file.netName} ${file.size} ${file.unixTime}`;
}

export function formatBinkpFileOffer(file: BinkpFileOffer): string {
  return `${formatBinkpFileId(file)} ${file.offset}`;
}

/** Whether two commands name the same file: name, size and time all agree. */
export function isSameBinkpFile(a: BinkpFileId, b: BinkpFileId): boolean {
  return a.netName === b.netName && a.size === b.size && a.unixTime === b.unixTime;
}

/**
 * A local name as it travels in M_FILE: a space, a control character, `\` or a byte past ASCII
 * becomes `\xHH`, the escaping binkd writes and reads (a name is one word of the argument, and
 * ASCII survives every mailer's idea of the argument's charset).
 */
export function escapeBinkpName(name: string): string {
  let escaped = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const isPlain = byte > 0x20 && byte < 0x7f && byte !== 0x5c;
    escaped += isPlain ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  return escaped;
}

/** The bytes a travelling name stands for: `\xHH` (and binkd's older `\HH`) read back. */
export function unescapeBinkpName(netName: string): Buffer {
  const bytes: number[] = [];
  for (let index = 0; index < netName.length; ) {
    const escaped = /^\\x?([0-9a-fA-F]{2})/.exec(netName.slice(index, index + 4));
    if (escaped) {
      bytes.push(Number.parseInt(escaped[1] ?? '', 16));
      index += escaped[0].length;
    } else {
      bytes.push(netName.charCodeAt(index) & 0xff);
      index += 1;
    }
  }
  return Buffer.from(bytes);
}

/** Longest name a received file is stored under; FTN names are 12 characters, attachments rarely 60. */
export const MAX_STORED_NAME_LENGTH = 100;

/**
 * The name a received file is kept under: the remote's name unescaped, every byte that is not a
 * letter, digit, `.`, `-` or `_` made `_`, a leading `.` made `_` (no hidden files, no `..`),
 * cut to 100 characters keeping the extension. Never empty, never a path: a hostile name
 * (`../../etc/passwd`, `a/b`, `\x00`) stays a plain name inside the spool.
 *
 * @example storedNameFor('..\\x2fetc\\x2fpasswd') // '_._etc_passwd'
 */
export function storedNameFor(netName: string): string {
  let name = '';
  for (const byte of unescapeBinkpName(netName)) {
    const char = String.fromCharCode(byte);
    name += /[A-Za-z0-9._-]/.test(char) ? char : '_';
  }
  name = name.replace(/^\./, '_');
  if (name.length > MAX_STORED_NAME_LENGTH) {
    const dot = name.lastIndexOf('.');
    const extension = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
    name = name.slice(0, MAX_STORED_NAME_LENGTH - extension.length) + extension;
  }
  return name === '' ? '_' : name;
}

/** What an M_NUL says, as far as a session cares: options and the remote's binkp version. */
export interface BinkpNulInfo {
  /** The words of `OPT ...` (`NR`, `CRAM-MD5-<hex>` …); empty for other M_NULs. */
  readonly options: readonly string[];
  /** From `VER <mailer> binkp/<major>.<minor>`: major × 100 + minor (binkp/1.1 → 101); null when not a VER. */
  readonly protocolVersion: number | null;
}

export function parseBinkpNul(argument: string): BinkpNulInfo {
  if (argument.startsWith('OPT ')) {
    return {
      options: argument
        .slice(4)
        .split(' ')
        .filter((word) => word !== ''),
      protocolVersion: null,
    };
  }
  const version = argument.startsWith('VER ') ? /binkp\/([0-9]{1,3})\.([0-9]{1,3})/.exec(argument) : null;
  return {
    options: [],
    protocolVersion: version ? Number(version[1]) * 100 + Number(version[2]) : null,
  };
}

/**
 * The `TIME` M_NUL's text, as binkd writes it (an RFC 822 date): baud keeps UTC.
 *
 * @example formatBinkpTime(new Date('2026-11-27T10:00:05Z')) // 'Fri, 27 Nov 2026 10:00:05 +0000'
 */
export function formatBinkpTime(date: Date): string {
  return date.toUTCString().replace('GMT', '+0000');
}
