/** Longest file name in UTF-8 bytes: the common filesystem limit, also kept for names only shown, never stored. */
export const MAX_FILE_NAME_BYTES = 255;

/** Used when nothing of the client's name survives sanitising. */
const FALLBACK_FILE_NAME = 'file';

// Extensions longer than this are treated as part of the name when truncating, so a name
// like "a.<250 bytes>" cannot push everything else out.
const MAX_EXTENSION_BYTES = 32;

// Archives whose conventional extension has two parts; a suffix goes before both.
const DOUBLE_EXTENSIONS: readonly string[] = ['.tar.gz', '.tar.bz2', '.tar.xz'];

// C0, DEL, C1, plus the bidi controls that can make "evil\u202Etxt.exe" display as "evilexe.txt".
const CONTROL_CHARACTERS = /[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
const FORBIDDEN_CHARACTERS = /[<>:"|?*]/g;
const LEADING_DOTS_AND_SPACE = /^[\s.]+/u;
// Windows silently drops trailing dots and spaces, which would change the name on download.
const TRAILING_DOTS_AND_SPACE = /[\s.]+$/u;

const encoder = new TextEncoder();

function byteLength(text: string): number {
  return encoder.encode(text).length;
}

/** The longest prefix of `text` that fits in `maxBytes` UTF-8 bytes, cut between code points. */
function truncateToBytes(text: string, maxBytes: number): string {
  let bytes = 0;
  let result = '';
  for (const codePoint of text) {
    const size = byteLength(codePoint);
    if (bytes + size > maxBytes) break;
    bytes += size;
    result += codePoint;
  }
  return result;
}

/** Splits `name.ext` into ['name', '.ext']; a name without a usable extension gives ['name', '']. */
function splitExtension(fileName: string): [stem: string, extension: string] {
  const lower = fileName.toLowerCase();
  const double = DOUBLE_EXTENSIONS.find((ext) => lower.endsWith(ext) && lower.length > ext.length);
  if (double) return [fileName.slice(0, -double.length), fileName.slice(-double.length)];
  const dot = fileName.lastIndexOf('.');
  if (dot <= 0) return [fileName, ''];
  const extension = fileName.slice(dot);
  if (byteLength(extension) > MAX_EXTENSION_BYTES) return [fileName, ''];
  return [fileName.slice(0, dot), extension];
}

/** Joins stem + infix + extension, shortening the stem so the whole stays ≤ 255 bytes. */
function fitName(stem: string, infix: string, extension: string): string {
  const budget = MAX_FILE_NAME_BYTES - byteLength(infix) - byteLength(extension);
  const shortened = truncateToBytes(stem, budget).replace(TRAILING_DOTS_AND_SPACE, '');
  return `${shortened}${infix}${extension}`;
}

/**
 * Turns the file name a client sent into one safe to store and show: the base name only
 * (split on `/` and `\`), Unicode NFC, no control or bidi-control characters, no leading
 * dots, no surrounding whitespace or trailing dots, `<>:"|?*` replaced by `_`, at most
 * 255 UTF-8 bytes (cut between code points, keeping the extension). Never empty: a name
 * with nothing left becomes `file`.
 *
 * @example sanitizeFileName('../../etc/passwd') // 'passwd'
 */
export function sanitizeFileName(clientName: string): string {
  const baseName = clientName.split(/[/\\]/).pop() ?? '';
  const cleaned = baseName
    .normalize('NFC')
    .replace(CONTROL_CHARACTERS, '')
    .replace(FORBIDDEN_CHARACTERS, '_')
    .replace(LEADING_DOTS_AND_SPACE, '')
    .replace(TRAILING_DOTS_AND_SPACE, '');
  if (cleaned === '') return FALLBACK_FILE_NAME;
  if (byteLength(cleaned) <= MAX_FILE_NAME_BYTES) return cleaned;
  const [stem, extension] = splitExtension(cleaned);
  return fitName(stem, '', extension) || FALLBACK_FILE_NAME;
}

/**
 * The name to use for the `n`th file of the same name in an area: `name.zip` →
 * `name (2).zip`, `demo.tar.gz` → `demo (2).tar.gz`. The stem is shortened if needed so
 * the result stays ≤ 255 UTF-8 bytes. `n` must be an integer ≥ 2 (the first file keeps
 * its name); anything else throws a RangeError.
 */
export function withClashSuffix(fileName: string, n: number): string {
  if (!Number.isInteger(n) || n < 2) throw new RangeError(`clash suffix must be an integer >= 2, got ${n}`);
  const [stem, extension] = splitExtension(fileName);
  return fitName(stem, ` (${n})`, extension);
}

const CONTENT_TYPES: ReadonlyMap<string, string> = new Map([
  ['zip', 'application/zip'],
  ['7z', 'application/x-7z-compressed'],
  ['rar', 'application/vnd.rar'],
  ['arj', 'application/x-arj'],
  ['lzh', 'application/x-lzh-compressed'],
  ['lha', 'application/x-lzh-compressed'],
  ['gz', 'application/gzip'],
  ['tgz', 'application/gzip'],
  ['tar', 'application/x-tar'],
  ['bz2', 'application/x-bzip2'],
  ['xz', 'application/x-xz'],
  // No charset: BBS text is usually CP437, and a wrong charset is worse than none.
  ['txt', 'text/plain'],
  ['nfo', 'text/plain'],
  ['diz', 'text/plain'],
  ['ans', 'text/plain'],
  // On a BBS .asc is ASCII art far more often than a PGP signature.
  ['asc', 'text/plain'],
  ['md', 'text/markdown'],
  ['pdf', 'application/pdf'],
  ['png', 'image/png'],
  ['jpg', 'image/jpeg'],
  ['jpeg', 'image/jpeg'],
  ['gif', 'image/gif'],
  ['mp3', 'audio/mpeg'],
  ['mod', 'audio/x-mod'],
  ['xm', 'audio/x-xm'],
  ['s3m', 'audio/x-s3m'],
  ['it', 'audio/x-it'],
  ['exe', 'application/x-msdownload'],
  ['com', 'application/x-msdownload'],
  ['json', 'application/json'],
  ['html', 'text/html'],
]);

/**
 * The `Content-Type` for a download, chosen by the file name's extension
 * (case-insensitive); unknown or missing extensions give `application/octet-stream`.
 * Types like text/html are only safe because downloads are sent as attachments.
 */
export function contentTypeForFileName(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  if (dot === -1) return 'application/octet-stream';
  return CONTENT_TYPES.get(fileName.slice(dot + 1).toLowerCase()) ?? 'application/octet-stream';
}
