/**
 * How many leading bytes of a file {@link detectArchiveType} needs: the tar magic sits
 * at offset 257 and is followed by a two-byte version, so 257 + 8.
 */
export const ARCHIVE_SNIFF_BYTES = 265;

type Signature = readonly [offset: number, bytes: readonly number[]];

/** Reads an ASCII magic as byte values so the table below stays readable. */
function ascii(text: string): number[] {
  return Array.from(text, (char) => char.charCodeAt(0));
}

// Multi-byte magics first; ARJ's two-byte magic is checked last and more strictly
// because two bytes alone match too many unrelated files.
const SIGNATURES: ReadonlyArray<readonly [mimeType: string, signatures: readonly Signature[]]> = [
  [
    'application/zip',
    [
      [0, [0x50, 0x4b, 0x03, 0x04]],
      // An empty archive is only its end-of-central-directory record.
      [0, [0x50, 0x4b, 0x05, 0x06]],
    ],
  ],
  ['application/x-7z-compressed', [[0, [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]]]],
  [
    'application/vnd.rar',
    [
      [0, [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07, 0x00]],
      [0, [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07, 0x01, 0x00]],
    ],
  ],
  ['application/x-xz', [[0, [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]]]],
  ['application/gzip', [[0, [0x1f, 0x8b, 0x08]]]],
  // POSIX writes "ustar\0", GNU tar "ustar  \0"; both share the first five bytes.
  ['application/x-tar', [[257, ascii('ustar')]]],
];

function matchesAt(head: Uint8Array, [offset, bytes]: Signature): boolean {
  if (head.length < offset + bytes.length) return false;
  return bytes.every((byte, i) => head[offset + i] === byte);
}

function isBzip2(head: Uint8Array): boolean {
  const level = head[3];
  return matchesAt(head, [0, ascii('BZh')]) && level !== undefined && level >= 0x31 && level <= 0x39;
}

/** LHA writes `-lh?-` (method letter varies), LArc `-lzs-`, `-lz4-`, `-lz5-`, after a size and checksum byte. */
function isLzh(head: Uint8Array): boolean {
  if (head.length < 7 || head[2] !== 0x2d || head[3] !== 0x6c || head[6] !== 0x2d) return false;
  const family = head[4];
  const method = head[5];
  if (family === 0x68) return method !== undefined && method > 0x20 && method < 0x7f;
  return family === 0x7a && (method === 0x73 || method === 0x34 || method === 0x35);
}

/** ARJ's magic is only 0x60 0xEA, so also require a plausible basic-header size (≤ 2600 per the format). */
function isArj(head: Uint8Array): boolean {
  if (head.length < 4 || head[0] !== 0x60 || head[1] !== 0xea) return false;
  const headerSize = (head[2] ?? 0) | ((head[3] ?? 0) << 8);
  return headerSize > 0 && headerSize <= 2600;
}

/**
 * Identifies an archive by its magic bytes and returns its MIME type, or null when the
 * bytes match none of the known formats (zip, 7z, rar, arj, lzh, gzip, tar, bzip2, xz).
 * Pass at least the first {@link ARCHIVE_SNIFF_BYTES} bytes of the file (fewer is fine
 * for short files; formats whose magic lies beyond the end are simply not matched).
 *
 * @example detectArchiveType(new Uint8Array([0x50, 0x4b, 0x03, 0x04])) // 'application/zip'
 */
export function detectArchiveType(head: Uint8Array): string | null {
  for (const [mimeType, signatures] of SIGNATURES) {
    if (signatures.some((signature) => matchesAt(head, signature))) return mimeType;
  }
  if (isBzip2(head)) return 'application/x-bzip2';
  if (isLzh(head)) return 'application/x-lzh-compressed';
  if (isArj(head)) return 'application/x-arj';
  return null;
}
