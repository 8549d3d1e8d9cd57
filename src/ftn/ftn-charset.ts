import iconv from 'iconv-lite';

/**
 * The charsets of FTN messages (FTS-5003). A message's CHRS kludge (`CHRS: CP437 2`, or its
 * old name CHARSET) names the charset of its body, to, from and subject alike; the level after
 * the name is ignored, as FTS-5003 advises (some software writes `UTF-8 2`).
 *
 * Reading: the identifiers below decode; a message without CHRS, or with one baud does not
 * know, decodes as CP437, the IBM PC charset nearly all of FidoNet wrote in (FTS-5003 lets
 * readers pick such a default).
 *
 * Writing: CP437 (`CHRS: CP437 2`) when every character of the message has a place in it, else
 * UTF-8 (`CHRS: UTF-8 4`). The BBS software on the other end is most often a terminal board
 * showing CP437, which reads CP437 right whatever it makes of CHRS; UTF-8 is kept for text that
 * CP437 would turn into question marks.
 */

/** FTS-5003 identifiers (upper case) baud decodes, to the iconv-lite encoding they name. */
const DECODINGS: ReadonlyMap<string, string> = new Map([
  ['CP437', 'cp437'],
  // Obsolete name for the IBM PC charset (FTS-5003 "obsolete identifiers").
  ['IBMPC', 'cp437'],
  // 7-bit text decodes the same in CP437; messages labelled ASCII that carry 8-bit bytes were
  // written on PCs, so CP437 reads them as their authors saw them.
  ['ASCII', 'cp437'],
  ['CP850', 'cp850'],
  ['CP852', 'cp852'],
  ['CP857', 'cp857'],
  ['CP858', 'cp858'],
  ['CP860', 'cp860'],
  ['CP861', 'cp861'],
  ['CP862', 'cp862'],
  ['CP863', 'cp863'],
  ['CP865', 'cp865'],
  ['CP866', 'cp866'],
  // Obsolete name of CP866, the "alternative" Russian DOS charset.
  ['ALT', 'cp866'],
  ['CP869', 'cp869'],
  ['CP1125', 'cp1125'],
  ['CP1250', 'cp1250'],
  ['CP1251', 'cp1251'],
  ['CP1252', 'cp1252'],
  ['CP1253', 'cp1253'],
  ['CP1254', 'cp1254'],
  ['CP1255', 'cp1255'],
  ['CP1256', 'cp1256'],
  ['CP1257', 'cp1257'],
  ['CP1258', 'cp1258'],
  ['LATIN-1', 'latin1'],
  ['LATIN-2', 'iso-8859-2'],
  ['LATIN-5', 'iso-8859-9'],
  ['LATIN-9', 'iso-8859-15'],
  ['KOI8-R', 'koi8-r'],
  ['KOI8-U', 'koi8-u'],
  ['MAC', 'macintosh'],
  ['UTF-8', 'utf8'],
]);

/** The charset a message without a CHRS kludge (or with an unknown one) is read in. */
export const DEFAULT_CHARSET = 'CP437';

/** The charsets baud writes messages in. */
export type OutgoingCharset = 'CP437' | 'UTF-8';

const CHRS_VALUES: Readonly<Record<OutgoingCharset, string>> = { CP437: 'CP437 2', 'UTF-8': 'UTF-8 4' };

/** The charsets `decodeFtnText` knows, by FTS-5003 identifier. */
export function knownCharsets(): readonly string[] {
  return [...DECODINGS.keys()];
}

/**
 * The charset a CHRS (or CHARSET) kludge's value names, upper case, when baud decodes it; null
 * otherwise. The level is ignored.
 *
 * @example charsetOfChrs('utf-8 2') // 'UTF-8'
 */
export function charsetOfChrs(value: string): string | null {
  const identifier = value.trim().split(' ')[0]?.toUpperCase() ?? '';
  return DECODINGS.has(identifier) ? identifier : null;
}

/** The CHRS kludge value baud writes for `charset`: `CP437 2` or `UTF-8 4`. */
export function chrsValueOf(charset: OutgoingCharset): string {
  return CHRS_VALUES[charset];
}

/**
 * Decodes bytes of a message in `charset` (an identifier `charsetOfChrs` returned; anything else
 * reads as CP437). Never throws: bytes that are not valid UTF-8 become U+FFFD.
 */
export function decodeFtnText(bytes: Uint8Array, charset: string): string {
  return iconv.decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), DECODINGS.get(charset) ?? 'cp437');
}

/** `text` in `charset`'s bytes; a character CP437 lacks would become `?`, so choose with `chooseCharset`. */
export function encodeFtnText(text: string, charset: OutgoingCharset): Buffer {
  return charset === 'UTF-8' ? Buffer.from(text, 'utf8') : iconv.encode(text, 'cp437');
}

/** Whether every character of `text` has a place in CP437 (and reads back as itself). */
export function fitsCp437(text: string): boolean {
  return iconv.decode(iconv.encode(text, 'cp437'), 'cp437') === text;
}

/** CP437 when every text fits it, else UTF-8: the charset a message of these texts is written in. */
export function chooseCharset(texts: Iterable<string>): OutgoingCharset {
  for (const text of texts) if (!fitsCp437(text)) return 'UTF-8';
  return 'CP437';
}

/**
 * `text` in `charset`, cut at a character boundary to at most `maxBytes` bytes: how a name or
 * subject longer than its packet field still goes out.
 */
export function encodeFtnTextCut(text: string, maxBytes: number, charset: OutgoingCharset): Buffer {
  const bytes = encodeFtnText(text, charset);
  if (bytes.length <= maxBytes) return bytes;
  if (charset === 'CP437') return bytes.subarray(0, maxBytes);
  let end = 0;
  for (const character of text) {
    const length = Buffer.byteLength(character, 'utf8');
    if (end + length > maxBytes) break;
    end += length;
  }
  return bytes.subarray(0, end);
}
