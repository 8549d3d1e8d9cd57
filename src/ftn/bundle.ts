import zlib from 'node:zlib';
import { FtnFormatError, quoteForError } from './ftn-format-error.js';
import { isPacketFileName } from './packet.js';

/**
 * ArcMail bundles: zip archives of packets, named `<8 hex digits>.<day><n>` (`0badcafe.mo0`),
 * the day of the week it was made and a digit counting bundles of that name made that day. Read
 * and written over Buffers with a small zip reader and writer of our own: reading a hub's bundle
 * is an attack surface, and every count and size is checked here before any byte is inflated.
 */

export interface BundleLimits {
  /** Most entries a bundle may list. */
  readonly maxEntries: number;
  /** Most bytes one entry may inflate to. */
  readonly maxEntryBytes: number;
  /** Most bytes all entries together may inflate to: what reading a bundle holds in memory at most. */
  readonly maxTotalBytes: number;
}

/**
 * A hub packs a few packets per bundle, each at most a few hundred KiB (hubs split packets well
 * before 1 MiB), so these leave room a hundredfold while keeping a hostile bundle's cost bounded.
 */
export const DEFAULT_BUNDLE_LIMITS: BundleLimits = Object.freeze({
  maxEntries: 256,
  maxEntryBytes: 16 * 1024 * 1024,
  maxTotalBytes: 64 * 1024 * 1024,
});

/** One packet of a bundle. */
export interface BundleEntry {
  /** A plain packet file name (see `isPacketFileName`). */
  readonly name: string;
  readonly data: Buffer;
}

const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const LOCAL_HEADER_BYTES = 30;
const CENTRAL_HEADER_BYTES = 46;
const END_BYTES = 22;
const MAX_COMMENT_BYTES = 0xffff;
const STORED = 0;
const DEFLATED = 8;
const FLAG_ENCRYPTED = 0x0001;
/** "Version needed to extract" and "made by": 2.0, MS-DOS, the plainest a zip reader accepts. */
const ZIP_VERSION = 20;
const ZIP64_MARK_16 = 0xffff;
const ZIP64_MARK_32 = 0xffffffff;

interface CentralEntry {
  readonly name: string;
  readonly nameBytes: Buffer;
  readonly method: number;
  readonly crc32: number;
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  readonly localOffset: number;
}

function findEndOfCentralDirectory(bytes: Buffer): number {
  const lowest = Math.max(0, bytes.length - END_BYTES - MAX_COMMENT_BYTES);
  for (let offset = bytes.length - END_BYTES; offset >= lowest; offset--) {
    // The record whose comment ends the file: a signature inside the comment does not count.
    if (
      bytes.readUInt32LE(offset) === END_OF_CENTRAL_DIRECTORY &&
      offset + END_BYTES + bytes.readUInt16LE(offset + 20) === bytes.length
    ) {
      return offset;
    }
  }
  throw new FtnFormatError('bundle: not a zip archive (no end-of-central-directory record)');
}

function entryLabel(number: number, name: string | null): string {
  return `bundle entry ${number}${name === null ? '' : ` ${quoteForError(name)}`}`;
}

function readCentralDirectory(bytes: Buffer, limits: BundleLimits): { entries: CentralEntry[]; start: number } {
  const end = findEndOfCentralDirectory(bytes);
  const diskNumber = bytes.readUInt16LE(end + 4);
  const directoryDisk = bytes.readUInt16LE(end + 6);
  const entriesOnDisk = bytes.readUInt16LE(end + 8);
  const entryCount = bytes.readUInt16LE(end + 10);
  const directorySize = bytes.readUInt32LE(end + 12);
  const directoryStart = bytes.readUInt32LE(end + 16);
  if (entryCount === ZIP64_MARK_16 || directorySize === ZIP64_MARK_32 || directoryStart === ZIP64_MARK_32) {
    throw new FtnFormatError('bundle: a zip64 archive, which bundles never need and baud does not read');
  }
  if (diskNumber !== 0 || directoryDisk !== 0 || entriesOnDisk !== entryCount) {
    throw new FtnFormatError('bundle: a zip archive split over several disks');
  }
  if (entryCount > limits.maxEntries) {
    throw new FtnFormatError(`bundle: lists ${entryCount} entries; at most ${limits.maxEntries} are read`);
  }
  if (directoryStart + directorySize > end) {
    throw new FtnFormatError(
      `bundle: its central directory (${directorySize} bytes at ${directoryStart}) runs past the ${end} bytes before its end record`,
    );
  }

  const entries: CentralEntry[] = [];
  const seenNames = new Set<string>();
  let totalBytes = 0;
  let offset = directoryStart;
  const directoryEnd = directoryStart + directorySize;
  for (let number = 1; number <= entryCount; number++) {
    if (offset + CENTRAL_HEADER_BYTES > directoryEnd || bytes.readUInt32LE(offset) !== CENTRAL_HEADER) {
      throw new FtnFormatError(`${entryLabel(number, null)}: the central directory ends or breaks before it`);
    }
    const nameLength = bytes.readUInt16LE(offset + 28);
    const recordEnd =
      offset + CENTRAL_HEADER_BYTES + nameLength + bytes.readUInt16LE(offset + 30) + bytes.readUInt16LE(offset + 32);
    if (recordEnd > directoryEnd) {
      throw new FtnFormatError(`${entryLabel(number, null)}: its record runs past the central directory`);
    }
    const nameBytes = bytes.subarray(offset + CENTRAL_HEADER_BYTES, offset + CENTRAL_HEADER_BYTES + nameLength);
    const name = nameBytes.toString('latin1');
    const label = entryLabel(number, name);
    if (!isPacketFileName(name)) {
      throw new FtnFormatError(`${label}: not a plain packet name (*.pkt, no directory, no "..")`);
    }
    const key = name.toLowerCase();
    if (seenNames.has(key)) throw new FtnFormatError(`${label}: the bundle holds this name twice`);
    seenNames.add(key);

    const flags = bytes.readUInt16LE(offset + 8);
    const method = bytes.readUInt16LE(offset + 10);
    const compressedSize = bytes.readUInt32LE(offset + 20);
    const uncompressedSize = bytes.readUInt32LE(offset + 24);
    if (flags & FLAG_ENCRYPTED) throw new FtnFormatError(`${label}: encrypted`);
    if (method !== STORED && method !== DEFLATED) {
      throw new FtnFormatError(`${label}: compression method ${method}; only stored (0) and deflated (8) are read`);
    }
    if (compressedSize === ZIP64_MARK_32 || uncompressedSize === ZIP64_MARK_32) {
      throw new FtnFormatError(`${label}: zip64 sizes, which baud does not read`);
    }
    if (method === STORED && compressedSize !== uncompressedSize) {
      throw new FtnFormatError(`${label}: stored, yet ${compressedSize} bytes stored for ${uncompressedSize}`);
    }
    if (uncompressedSize > limits.maxEntryBytes) {
      throw new FtnFormatError(
        `${label}: declares ${uncompressedSize} bytes; at most ${limits.maxEntryBytes} are read`,
      );
    }
    totalBytes += uncompressedSize;
    if (totalBytes > limits.maxTotalBytes) {
      throw new FtnFormatError(
        `${label}: the entries so far declare ${totalBytes} bytes; a bundle may hold at most ${limits.maxTotalBytes}`,
      );
    }
    entries.push({
      name,
      nameBytes,
      method,
      crc32: bytes.readUInt32LE(offset + 16),
      compressedSize,
      uncompressedSize,
      localOffset: bytes.readUInt32LE(offset + 42),
    });
    offset = recordEnd;
  }
  if (offset !== directoryEnd) {
    throw new FtnFormatError(`bundle: ${directoryEnd - offset} bytes of the central directory follow its last entry`);
  }
  return { entries, start: directoryStart };
}

/** Where each entry's compressed data lies, checked against the local headers; entries may not overlap. */
function locateData(bytes: Buffer, entries: readonly CentralEntry[], directoryStart: number): Buffer[] {
  const spans = entries.map((entry, index) => {
    const label = entryLabel(index + 1, entry.name);
    const at = entry.localOffset;
    if (at + LOCAL_HEADER_BYTES > directoryStart || bytes.readUInt32LE(at) !== LOCAL_HEADER) {
      throw new FtnFormatError(`${label}: no local header at byte ${at}`);
    }
    const nameLength = bytes.readUInt16LE(at + 26);
    const dataStart = at + LOCAL_HEADER_BYTES + nameLength + bytes.readUInt16LE(at + 28);
    const dataEnd = dataStart + entry.compressedSize;
    if (dataEnd > directoryStart) {
      throw new FtnFormatError(`${label}: its ${entry.compressedSize} bytes of data run into the central directory`);
    }
    // A name that differs between the two headers is how archives show one file to a checker and another to a reader.
    if (!bytes.subarray(at + LOCAL_HEADER_BYTES, at + LOCAL_HEADER_BYTES + nameLength).equals(entry.nameBytes)) {
      throw new FtnFormatError(`${label}: its local header names another file`);
    }
    return { label, start: at, end: dataEnd, data: bytes.subarray(dataStart, dataEnd) };
  });
  // Overlapping entries are the "better zip bomb": many entries inflating the same bytes.
  const byStart = [...spans].sort((a, b) => a.start - b.start);
  for (let index = 1; index < byStart.length; index++) {
    const previous = byStart[index - 1];
    const current = byStart[index];
    if (previous && current && current.start < previous.end) {
      throw new FtnFormatError(`${current.label}: overlaps another entry's data`);
    }
  }
  return spans.map((span) => span.data);
}

function inflateEntry(entry: CentralEntry, data: Buffer, label: string): Buffer {
  if (entry.method === STORED) return data;
  try {
    // maxOutputLength stops inflating as soon as the output passes the declared size, so a
    // bomb that lies about its size costs at most that size, never what it would inflate to.
    return zlib.inflateRawSync(data, { maxOutputLength: Math.max(1, entry.uncompressedSize) });
  } catch (error) {
    const isTooLarge = (error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError;
    throw new FtnFormatError(
      isTooLarge
        ? `${label}: inflates past its declared ${entry.uncompressedSize} bytes`
        : `${label}: its data is not valid deflate data`,
    );
  }
}

/**
 * Reads every packet of a bundle (a zip archive). Before inflating anything it checks the whole
 * central directory: the entry count, each entry's declared size and their total against
 * `limits`, every name a plain `*.pkt` name (no directory, absolute path, backslash or `..`)
 * listed once, only stored or deflated entries, no encryption, no zip64, every entry's data
 * inside the archive and overlapping no other. Inflating, it stops at each entry's declared size
 * and checks the size and CRC-32 it gets. A bundle is read whole or not at all: throws
 * `FtnFormatError`.
 */
export function readBundle(bundle: Uint8Array, limits: BundleLimits = DEFAULT_BUNDLE_LIMITS): BundleEntry[] {
  const bytes = Buffer.isBuffer(bundle) ? bundle : Buffer.from(bundle.buffer, bundle.byteOffset, bundle.byteLength);
  if (bytes.length < END_BYTES) throw new FtnFormatError(`bundle: ${bytes.length} bytes are too few for a zip archive`);
  const { entries, start } = readCentralDirectory(bytes, limits);
  const compressed = locateData(bytes, entries, start);
  return entries.map((entry, index) => {
    const label = entryLabel(index + 1, entry.name);
    const data = inflateEntry(entry, compressed[index] ?? Buffer.alloc(0), label);
    if (data.length !== entry.uncompressedSize) {
      throw new FtnFormatError(
        `${label}: inflates to ${data.length} bytes, not the ${entry.uncompressedSize} declared`,
      );
    }
    if (zlib.crc32(data) !== entry.crc32) throw new FtnFormatError(`${label}: its CRC-32 does not match its data`);
    return { name: entry.name, data };
  });
}

/** MS-DOS time and date words of `instant`'s UTC fields, kept within 1980–2107, what they can say. */
function dosDateTime(instant: Date): { time: number; date: number } {
  const year = instant.getUTCFullYear();
  if (year < 1980) return { time: 0, date: (1 << 5) | 1 };
  if (year > 2107) return { time: (23 << 11) | (59 << 5) | 29, date: (127 << 9) | (12 << 5) | 31 };
  return {
    time: (instant.getUTCHours() << 11) | (instant.getUTCMinutes() << 5) | (instant.getUTCSeconds() >> 1),
    date: ((year - 1980) << 9) | ((instant.getUTCMonth() + 1) << 5) | instant.getUTCDate(),
  };
}

/**
 * A bundle of `entries`: a zip archive of deflated entries, names as given, dated `modifiedAt`
 * (UTC). `readBundle` reads it back to the same names and bytes. Throws `FtnFormatError` for a
 * name that is not a plain packet name, a name given twice, or more than a zip without zip64
 * holds (65,535 entries, 4 GiB).
 */
export function writeBundle(entries: readonly BundleEntry[], options: { readonly modifiedAt: Date }): Buffer {
  if (entries.length >= ZIP64_MARK_16) {
    throw new FtnFormatError(`cannot write a bundle of ${entries.length} entries: at most ${ZIP64_MARK_16 - 1}`);
  }
  const { time, date } = dosDateTime(options.modifiedAt);
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  const names = new Set<string>();
  let offset = 0;
  for (const entry of entries) {
    if (!isPacketFileName(entry.name)) {
      throw new FtnFormatError(`cannot write bundle entry ${quoteForError(entry.name)}: not a plain packet name`);
    }
    if (names.has(entry.name.toLowerCase())) {
      throw new FtnFormatError(`cannot write bundle entry ${quoteForError(entry.name)}: the name is given twice`);
    }
    names.add(entry.name.toLowerCase());
    const name = Buffer.from(entry.name, 'latin1');
    const compressed = zlib.deflateRawSync(entry.data);
    const crc32 = zlib.crc32(entry.data);
    if (entry.data.length >= ZIP64_MARK_32 || offset + compressed.length >= ZIP64_MARK_32) {
      throw new FtnFormatError('cannot write the bundle: it would pass 4 GiB, which needs zip64');
    }
    const local = Buffer.alloc(LOCAL_HEADER_BYTES);
    local.writeUInt32LE(LOCAL_HEADER, 0);
    local.writeUInt16LE(ZIP_VERSION, 4);
    local.writeUInt16LE(DEFLATED, 8);
    local.writeUInt16LE(time, 10);
    local.writeUInt16LE(date, 12);
    local.writeUInt32LE(crc32, 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(entry.data.length, 22);
    local.writeUInt16LE(name.length, 26);

    const header = Buffer.alloc(CENTRAL_HEADER_BYTES);
    header.writeUInt32LE(CENTRAL_HEADER, 0);
    header.writeUInt16LE(ZIP_VERSION, 4);
    header.writeUInt16LE(ZIP_VERSION, 6);
    header.writeUInt16LE(DEFLATED, 10);
    header.writeUInt16LE(time, 12);
    header.writeUInt16LE(date, 14);
    header.writeUInt32LE(crc32, 16);
    header.writeUInt32LE(compressed.length, 20);
    header.writeUInt32LE(entry.data.length, 24);
    header.writeUInt16LE(name.length, 28);
    header.writeUInt32LE(offset, 42);

    parts.push(local, name, compressed);
    central.push(header, name);
    offset += LOCAL_HEADER_BYTES + name.length + compressed.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(END_BYTES);
  end.writeUInt32LE(END_OF_CENTRAL_DIRECTORY, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, directory, end]);
}

const DAYS = ['su', 'mo', 'tu', 'we', 'th', 'fr', 'sa'] as const;
/**
 * `<8 hex>.<day><n>`, any case. `n` is a digit when baud writes it; reading accepts a letter too,
 * as mailers and tossers past the tenth bundle of a day go on with letters.
 */
const BUNDLE_NAME = /^([0-9a-f]{8})\.(su|mo|tu|we|th|fr|sa)([0-9a-z])$/i;

export interface BundleName {
  /** The 8 hex digits, as a number. */
  readonly stem: number;
  /** Day of the week it was made, 0 = Sunday (as `Date.getUTCDay`). */
  readonly weekday: number;
  /** The character after the day: `0`–`9`, or a letter (lower case). */
  readonly sequence: string;
}

/** Whether `name` is an ArcMail bundle's name (`0badcafe.mo0`, any case). */
export function isBundleName(name: string): boolean {
  return BUNDLE_NAME.test(name);
}

/** The parts of an ArcMail bundle name; null when `name` is not one. */
export function parseBundleName(name: string): BundleName | null {
  const match = BUNDLE_NAME.exec(name);
  if (!match) return null;
  const [, stem = '', day = '', sequence = ''] = match;
  return {
    stem: Number.parseInt(stem, 16),
    weekday: DAYS.indexOf(day.toLowerCase() as (typeof DAYS)[number]),
    sequence: sequence.toLowerCase(),
  };
}

/**
 * An ArcMail bundle name: `stem` as 8 lower-case hex digits, the day of the week (0 = Sunday),
 * the digit `sequence` (0–9).
 *
 * @example formatBundleName(0xbadcafe, 1, 0) // '0badcafe.mo0'
 */
export function formatBundleName(stem: number, weekday: number, sequence: number): string {
  const day = DAYS[weekday];
  if (!Number.isInteger(stem) || stem < 0 || stem > 0xffffffff || day === undefined) {
    throw new FtnFormatError(`cannot name a bundle with stem ${stem} and weekday ${weekday}`);
  }
  if (!Number.isInteger(sequence) || sequence < 0 || sequence > 9) {
    throw new FtnFormatError(`cannot name a bundle with sequence ${sequence}: a digit 0–9`);
  }
  return `${stem.toString(16).padStart(8, '0')}.${day}${sequence}`;
}

/**
 * The first name of `stem` and `weekday` with the lowest digit that no name in `taken` has (any
 * case): how an outbound picks the next bundle of the day. Null when all ten are taken.
 */
export function nextBundleName(stem: number, weekday: number, taken: Iterable<string>): string | null {
  const takenNames = new Set(Array.from(taken, (name) => name.toLowerCase()));
  for (let sequence = 0; sequence <= 9; sequence++) {
    const name = formatBundleName(stem, weekday, sequence);
    if (!takenNames.has(name)) return name;
  }
  return null;
}
