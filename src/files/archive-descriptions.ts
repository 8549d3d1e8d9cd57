import type { Readable } from 'node:stream';
import type { Entry, ZipFile } from 'yauzl';

/** Descriptions found in an archive; null when the archive has none (or cannot be read). */
export interface ArchiveDescriptions {
  readonly diz: string | null;
  readonly longText: string | null;
}

/** Inflated bytes read from each chosen entry at most; the rest of the entry is never inflated. */
export const MAX_DESCRIPTION_BYTES = 64 * 1024;

/** Central-directory entries walked at most, so an archive of a million tiny entries costs little. */
export const MAX_ARCHIVE_ENTRIES = 10_000;

const NO_DESCRIPTIONS: ArchiveDescriptions = Object.freeze({ diz: null, longText: null });

// Index = priority: FILE_ID.DIZ beats FILE_ID.ANS beats DESC.SDI wherever they sit.
const DIZ_NAMES: readonly string[] = ['FILE_ID.DIZ', 'FILE_ID.ANS', 'DESC.SDI'];

// Demo-era archives often ship README.COM / README.EXE text viewers; they are programs, not text.
const EXECUTABLE_SUFFIXES: readonly string[] = ['.EXE', '.COM'];

/**
 * Reads the BBS descriptions of a zip archive: `diz` from the first of FILE_ID.DIZ,
 * FILE_ID.ANS, DESC.SDI and `longText` from the first `*.NFO` or `README*`, all matched
 * case-insensitively and only at the archive's root.
 *
 * Safe on hostile uploads: at most {@link MAX_ARCHIVE_ENTRIES} entries are walked, only
 * the chosen entries are inflated and only their first {@link MAX_DESCRIPTION_BYTES}
 * (plus zlib's one-chunk read-ahead), entries yauzl cannot decode (implode, encryption …)
 * are skipped, and any error — not a zip, truncated, sizes that lie — yields
 * `{ diz: null, longText: null }`. Never throws; the file is always closed.
 * Text is decoded by {@link decodeDescriptionText}; empty text counts as absent.
 */
export async function readArchiveDescriptions(zipPath: string): Promise<ArchiveDescriptions> {
  let zipfile: ZipFile | undefined;
  try {
    zipfile = await openZip(zipPath);
    const chosen = await chooseEntries(zipfile);
    const diz = chosen.diz ? await readEntryText(zipfile, chosen.diz) : null;
    const longText = chosen.longText ? await readEntryText(zipfile, chosen.longText) : null;
    return { diz, longText };
  } catch {
    return NO_DESCRIPTIONS;
  } finally {
    // Open read streams were ended or destroyed above; yauzl closes the fd once they unref it.
    zipfile?.close();
  }
}

async function openZip(zipPath: string): Promise<ZipFile> {
  // Loaded at the first archive, not at start-up: most requests never open one.
  const { default: yauzl } = await import('yauzl');
  return new Promise((resolve, reject) => {
    yauzl.open(
      zipPath,
      {
        lazyEntries: true,
        // The chosen entries are read after the walk has ended, which autoClose would
        // prevent; every path through readArchiveDescriptions closes the file instead.
        autoClose: false,
        // Raw names: yauzl rejects the whole archive on a name like "../x" when decoding,
        // and only ASCII names matter here.
        decodeStrings: false,
        validateEntrySizes: true,
      },
      (err, zipfile) => {
        if (err) return reject(err);
        // An error emitted after we stopped listening must not become an uncaught exception.
        zipfile.on('error', () => {});
        resolve(zipfile);
      },
    );
  });
}

interface ChosenEntries {
  diz: Entry | null;
  longText: Entry | null;
}

function chooseEntries(zipfile: ZipFile): Promise<ChosenEntries> {
  return new Promise((resolve, reject) => {
    const chosen: ChosenEntries = { diz: null, longText: null };
    let dizRank = DIZ_NAMES.length;
    let walked = 0;

    const stop = (err?: unknown) => {
      zipfile.off('entry', onEntry);
      zipfile.off('end', onEnd);
      zipfile.off('error', onError);
      if (err === undefined) resolve(chosen);
      else reject(err);
    };
    const onEnd = () => stop();
    const onError = (err: unknown) => stop(err);
    const onEntry = (entry: Entry) => {
      walked += 1;
      const name = rootEntryName(entry);
      if (name !== null && entry.canDecodeFileData()) {
        const rank = DIZ_NAMES.indexOf(name);
        if (rank !== -1 && rank < dizRank) {
          chosen.diz = entry;
          dizRank = rank;
        } else if (chosen.longText === null && isLongTextName(name)) {
          chosen.longText = entry;
        }
      }
      const isBestFound = dizRank === 0 && chosen.longText !== null;
      if (isBestFound || walked >= MAX_ARCHIVE_ENTRIES) stop();
      else zipfile.readEntry();
    };

    zipfile.on('entry', onEntry);
    zipfile.on('end', onEnd);
    zipfile.on('error', onError);
    zipfile.readEntry();
  });
}

/** The upper-cased name of an entry at the archive's root, or null for anything in a folder. */
function rootEntryName(entry: Entry): string | null {
  // decodeStrings is off, so the raw bytes are the name; latin1 keeps one char per byte.
  const name = entry.fileNameRaw.toString('latin1');
  // Old DOS zippers wrote '\' as the separator.
  if (name.includes('/') || name.includes('\\')) return null;
  return name.toUpperCase();
}

function isLongTextName(upperName: string): boolean {
  if (upperName.endsWith('.NFO')) return true;
  return upperName.startsWith('README') && !EXECUTABLE_SUFFIXES.some((suffix) => upperName.endsWith(suffix));
}

async function readEntryText(zipfile: ZipFile, entry: Entry): Promise<string | null> {
  const { bytes, isTruncated } = await readEntryPrefix(zipfile, entry);
  const text = decodeDescriptionText(bytes, isTruncated);
  return text === '' ? null : text;
}

function openReadStream(zipfile: ZipFile, entry: Entry): Promise<Readable> {
  return new Promise((resolve, reject) => {
    zipfile.openReadStream(entry, (err, stream) => (err ? reject(err) : resolve(stream)));
  });
}

async function readEntryPrefix(zipfile: ZipFile, entry: Entry): Promise<{ bytes: Buffer; isTruncated: boolean }> {
  const stream = await openReadStream(zipfile, entry);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    let isSettled = false;

    stream.on('data', (chunk: Buffer) => {
      if (isSettled) return;
      const room = MAX_DESCRIPTION_BYTES - length;
      if (chunk.length < room) {
        chunks.push(chunk);
        length += chunk.length;
        return;
      }
      chunks.push(chunk.subarray(0, room));
      isSettled = true;
      // yauzl's destroy stops the raw reader and unpipes the inflater: inflation ends here,
      // whatever size the entry declares.
      stream.destroy();
      resolve({ bytes: Buffer.concat(chunks, MAX_DESCRIPTION_BYTES), isTruncated: true });
    });
    stream.on('end', () => {
      if (isSettled) return;
      isSettled = true;
      resolve({ bytes: Buffer.concat(chunks, length), isTruncated: false });
    });
    // Stays attached after settling: a late error must not go unhandled.
    stream.on('error', (err) => {
      if (isSettled) return;
      isSettled = true;
      reject(err);
    });
  });
}

// Bytes 0x80–0xFF of code page 437; 0x00–0x7F are read as ASCII so that CR/LF, TAB and
// the ESC of ANSI sequences keep their meaning instead of turning into glyphs.
const CP437_HIGH =
  'ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0';

/** Decodes bytes as code page 437 (ASCII below 0x80). */
export function decodeCp437(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) {
    text += byte < 0x80 ? String.fromCharCode(byte) : CP437_HIGH.charAt(byte - 0x80);
  }
  return text;
}

const SUB = 0x1a;

/**
 * Turns the bytes of a DIZ/NFO-style file into text: UTF-8 when the bytes are valid
 * UTF-8 (a leading BOM is dropped), else CP437. Everything from the first SUB (0x1A, the
 * DOS end-of-file mark, after which SAUCE metadata follows) is dropped, CRLF becomes LF,
 * NULs are removed (padding in old DIZ files; PostgreSQL text cannot hold them) and so is
 * trailing whitespace.
 *
 * `isTruncated` says the bytes are a prefix of a longer file, so a UTF-8 sequence cut at
 * the end is dropped rather than taken as proof the text is not UTF-8.
 */
export function decodeDescriptionText(bytes: Uint8Array, isTruncated = false): string {
  const sub = bytes.indexOf(SUB);
  const content = sub === -1 ? bytes : bytes.subarray(0, sub);
  let text: string;
  try {
    const decoder = new TextDecoder('utf-8', { fatal: true });
    // With stream: true an incomplete final sequence is held back, not rejected.
    text = decoder.decode(content, { stream: isTruncated && sub === -1 });
  } catch {
    text = decodeCp437(content);
  }
  return text.replace(/\r\n/g, '\n').replaceAll('\u0000', '').trimEnd();
}
