import type { ByteRange } from '../files/file-storage.js';

/** What a `Range` header asks of a representation of `size` bytes (RFC 9110 §14). */
export type RangeOutcome =
  | { readonly kind: 'full' }
  | { readonly kind: 'partial'; readonly range: ByteRange }
  | { readonly kind: 'unsatisfiable' };

const FULL: RangeOutcome = { kind: 'full' };
const SINGLE_BYTE_RANGE = /^bytes=(\d*)-(\d*)$/;

/**
 * Reads a `Range` header for a file of `size` bytes. Only single byte ranges are served as
 * 206; a multi-range request gets the full 200 (allowed by RFC 9110 and far simpler than
 * multipart/byteranges), and a syntactically invalid header is ignored, as the RFC says.
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
  if (first === '') {
    // Suffix range: the last N bytes.
    const length = Number(last);
    if (length === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', range: { start: Math.max(0, size - length), end: size - 1 } };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Number(last);
  if (end < start) return FULL;
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', range: { start, end: Math.min(end, size - 1) } };
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
