import type { ByteRange } from '../files/file-storage.js';

/** What a `Range` header asks of a representation of `size` bytes (RFC 9110 §14). */
export type RangeOutcome =
  | { readonly kind: 'full' }
  | { readonly kind: 'partial'; readonly range: ByteRange }
  | { readonly kind: 'unsatisfiable' };

const FULL: RangeOutcome = { kind: 'full' };
const UNSATISFIABLE: RangeOutcome = { kind: 'unsatisfiable' };
const SINGLE_BYTE_RANGE = /^bytes=(\d*)-(\d*)$/;

/**
 * Reads a `Range` header for a file of `size` bytes. Only single byte ranges are served as
 * 206; a multi-range request gets the full 200 (allowed by RFC 9110 and far simpler than
 * multipart/byteranges), and a syntactically invalid header (an end before the start
 * included, RFC 9110 §14.1.1) is ignored, as the RFC says. A valid range that starts at or
 * past the end, or an empty suffix (`bytes=-0`), is unsatisfiable (416).
 * `If-Range` with anything but the current strong ETag also means "send it all".
 */
export function rangeOutcome(
  rangeHeader: string | undefined,
  ifRangeHeader: string | undefined,
  etag: string,
  size: number,
): RangeOutcome {
  if (rangeHeader === undefined) return FULL;
  if (ifRangeHeader !== undefined && ifRangeHeader.trim() !== etag) return FULL;
  const match = SINGLE_BYTE_RANGE.exec(rangeHeader.trim().replace(/\s+/g, ''));
  if (!match) return FULL;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return FULL;
  // BigInt: positions of any length compare exactly (a 30-digit start is past the end, not
  // a float that equals its neighbours); every position served is at most `size`, so safe.
  const length = BigInt(size);
  if (first === '') {
    // Suffix range: the last N bytes.
    const suffixLength = BigInt(last);
    if (suffixLength === 0n || length === 0n) return UNSATISFIABLE;
    const start = suffixLength >= length ? 0n : length - suffixLength;
    return { kind: 'partial', range: { start: Number(start), end: size - 1 } };
  }
  const start = BigInt(first);
  // Checked before the end defaults to the last byte: `bytes=999999999-` is a valid range
  // past the end (416), not an end before its start (ignored).
  if (last !== '' && BigInt(last) < start) return FULL;
  if (start >= length) return UNSATISFIABLE;
  const end = last === '' || BigInt(last) >= length ? size - 1 : Number(last);
  return { kind: 'partial', range: { start: Number(start), end } };
}

/** Whether `If-None-Match` names `etag` (weak comparison, as RFC 9110 §13.1.2 requires) or is `*`. */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const wanted = etag.replace(/^W\//, '');
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === wanted);
}

// RFC 8187 attr-char: ALPHA / DIGIT / "!#$&+-.^_`|~"; everything else is percent-encoded.
const ATTR_CHAR = /[A-Za-z0-9!#$&+\-.^_`|~]/;

function encodeRfc8187(value: string): string {
  let encoded = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const char = String.fromCharCode(byte);
    encoded += byte < 0x80 && ATTR_CHAR.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/**
 * `Content-Disposition: attachment` for `fileName` (RFC 6266): `filename*` carries the exact
 * UTF-8 name, `filename` an ASCII fallback for old clients (non-ASCII, quotes, backslashes and
 * controls become `_`).
 */
export function attachmentDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeRfc8187(fileName)}`;
}
