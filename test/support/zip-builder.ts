import zlib from 'node:zlib';

/** Pre-compressed raw deflate data, for entries too large to build with `deflateRawSync`. */
export interface RawDeflate {
  readonly data: Uint8Array;
  readonly uncompressedSize: number;
  readonly crc32: number;
}

/** One entry of a test archive; everything but `name` has a sensible default. */
export interface ZipEntrySpec {
  readonly name: string;
  /** Uncompressed content (strings are UTF-8). Ignored when `rawDeflate` is given. */
  readonly data?: Uint8Array | string;
  /** Defaults to 'deflate'. */
  readonly method?: 'store' | 'deflate';
  readonly rawDeflate?: RawDeflate;
  /** Written into both headers instead of the real size, to build archives that lie. */
  readonly declaredUncompressedSize?: number;
  /** Written instead of 0/8, to build entries the reader cannot decode (e.g. 6 = implode). */
  readonly compressionMethodOverride?: number;
  readonly isEncrypted?: boolean;
}

interface PreparedEntry {
  readonly name: Buffer;
  readonly flags: number;
  readonly method: number;
  readonly crc32: number;
  readonly compressed: Uint8Array;
  readonly uncompressedSize: number;
}

const DOS_TIME = (12 << 11) | (30 << 5); // 12:30:00
const DOS_DATE = ((1995 - 1980) << 9) | (6 << 5) | 15; // 1995-06-15
const UTF8_NAME_FLAG = 0x800;

function prepare(spec: ZipEntrySpec): PreparedEntry {
  const name = Buffer.from(spec.name, 'utf8');
  const isAscii = name.every((byte) => byte < 0x80);
  let flags = isAscii ? 0 : UTF8_NAME_FLAG;
  if (spec.isEncrypted) flags |= 0x1;

  let compressed: Uint8Array;
  let crc32: number;
  let uncompressedSize: number;
  let method: number;
  if (spec.rawDeflate) {
    ({ data: compressed, crc32, uncompressedSize } = spec.rawDeflate);
    method = 8;
  } else {
    const data = typeof spec.data === 'string' ? Buffer.from(spec.data, 'utf8') : (spec.data ?? new Uint8Array());
    crc32 = zlib.crc32(data);
    uncompressedSize = data.length;
    method = spec.method === 'store' ? 0 : 8;
    compressed = method === 0 ? data : zlib.deflateRawSync(data);
  }
  return {
    name,
    flags,
    method: spec.compressionMethodOverride ?? method,
    crc32,
    compressed,
    uncompressedSize: spec.declaredUncompressedSize ?? uncompressedSize,
  };
}

/**
 * Builds a zip archive in memory (no zip64, no data descriptors), enough to exercise a
 * zip reader with honest and dishonest archives.
 */
export function buildZip(entries: readonly ZipEntrySpec[], comment = ''): Buffer {
  const parts: Uint8Array[] = [];
  const central: Buffer[] = [];
  let offset = 0;

  for (const entry of entries.map(prepare)) {
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(entry.flags, 6);
    local.writeUInt16LE(entry.method, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(entry.crc32, 14);
    local.writeUInt32LE(entry.compressed.length, 18);
    local.writeUInt32LE(entry.uncompressedSize, 22);
    local.writeUInt16LE(entry.name.length, 26);
    local.writeUInt16LE(0, 28);

    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(20, 6);
    header.writeUInt16LE(entry.flags, 8);
    header.writeUInt16LE(entry.method, 10);
    header.writeUInt16LE(DOS_TIME, 12);
    header.writeUInt16LE(DOS_DATE, 14);
    header.writeUInt32LE(entry.crc32, 16);
    header.writeUInt32LE(entry.compressed.length, 20);
    header.writeUInt32LE(entry.uncompressedSize, 24);
    header.writeUInt16LE(entry.name.length, 28);
    header.writeUInt32LE(offset, 42);
    central.push(header, entry.name);

    parts.push(local, entry.name, entry.compressed);
    offset += local.length + entry.name.length + entry.compressed.length;
  }

  const centralDirectory = Buffer.concat(central);
  const commentBytes = Buffer.from(comment, 'latin1');
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralDirectory.length, 12);
  end.writeUInt32LE(offset, 16);
  end.writeUInt16LE(commentBytes.length, 20);

  return Buffer.concat([...parts, centralDirectory, end, commentBytes]);
}

/**
 * Raw deflate data for `chunk` repeated `times` times, made by compressing the chunk once
 * with a full flush (byte-aligned, dictionary reset) and repeating that segment, so a
 * gigabyte "zip bomb" costs a millisecond to build instead of seconds of deflating.
 */
export function deflateRepeated(chunk: Uint8Array, times: number): RawDeflate {
  const segment = zlib.deflateRawSync(chunk, { finishFlush: zlib.constants.Z_FULL_FLUSH });
  const finalEmptyBlock = zlib.deflateRawSync(new Uint8Array());
  let crc32 = 0;
  for (let i = 0; i < times; i++) crc32 = zlib.crc32(chunk, crc32);
  return {
    data: Buffer.concat([...Array.from({ length: times }, () => segment), finalEmptyBlock]),
    uncompressedSize: chunk.length * times,
    crc32,
  };
}
