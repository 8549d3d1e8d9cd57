import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  decodeCp437,
  decodeDescriptionText,
  MAX_ARCHIVE_ENTRIES,
  MAX_DESCRIPTION_BYTES,
  readArchiveDescriptions,
} from '../../src/files/archive-descriptions.js';
import { buildZip, deflateRepeated, type ZipEntrySpec } from '../support/zip-builder.js';

let dir = '';
let fileCounter = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baud-archive-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

afterEach(() => {
  vi.restoreAllMocks();
});

async function writeTemp(bytes: Uint8Array): Promise<string> {
  fileCounter += 1;
  const path = join(dir, `upload-${fileCounter}.zip`);
  await writeFile(path, bytes);
  return path;
}

function writeZip(entries: readonly ZipEntrySpec[]): Promise<string> {
  return writeTemp(buildZip(entries));
}

/** Paths this process holds open, or null where /proc is unavailable. */
function openPaths(): string[] | null {
  if (!existsSync('/proc/self/fd')) return null;
  const paths: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      paths.push(readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      // The fd readdir itself used is gone by now.
    }
  }
  return paths;
}

/**
 * Resolves once `path` is no longer open. The close yauzl starts runs on libuv's thread pool,
 * which a busy test run can keep waiting for a while (a fixed count of ticks was not enough).
 */
async function expectClosed(path: string): Promise<void> {
  await vi.waitFor(() => expect(openPaths() ?? []).not.toContain(path), { timeout: 5000, interval: 5 });
}

describe('readArchiveDescriptions', () => {
  it('reads FILE_ID.DIZ from the root of the archive', async () => {
    const path = await writeZip([
      { name: 'DEMO.EXE', data: 'MZ binary' },
      { name: 'FILE_ID.DIZ', data: 'Cool demo (1995)\r\nby Group\r\n' },
    ]);
    expect(await readArchiveDescriptions(path)).toEqual({ diz: 'Cool demo (1995)\nby Group', longText: null });
    await expectClosed(path);
  });

  it('matches a lower-case file_id.diz and a stored (uncompressed) entry', async () => {
    const path = await writeZip([{ name: 'file_id.diz', data: 'lower case', method: 'store' }]);
    expect(await readArchiveDescriptions(path)).toEqual({ diz: 'lower case', longText: null });
  });

  it('prefers FILE_ID.DIZ over FILE_ID.ANS over DESC.SDI whatever their order', async () => {
    const all = await writeZip([
      { name: 'DESC.SDI', data: 'sdi' },
      { name: 'FILE_ID.ANS', data: 'ans' },
      { name: 'File_Id.Diz', data: 'diz' },
    ]);
    const ansAndSdi = await writeZip([
      { name: 'desc.sdi', data: 'sdi' },
      { name: 'file_id.ans', data: 'ans' },
    ]);
    const sdiOnly = await writeZip([{ name: 'Desc.Sdi', data: 'sdi' }]);
    expect((await readArchiveDescriptions(all)).diz).toBe('diz');
    expect((await readArchiveDescriptions(ansAndSdi)).diz).toBe('ans');
    expect((await readArchiveDescriptions(sdiOnly)).diz).toBe('sdi');
  });

  it('keeps the first of two entries with the same description name', async () => {
    const path = await writeZip([
      { name: 'FILE_ID.DIZ', data: 'first' },
      { name: 'file_id.diz', data: 'second' },
    ]);
    expect((await readArchiveDescriptions(path)).diz).toBe('first');
  });

  it('ignores description files inside folders, with / or \\ separators', async () => {
    const path = await writeZip([
      { name: 'extras/FILE_ID.DIZ', data: 'nested' },
      { name: 'extras\\FILE_ID.ANS', data: 'nested dos' },
      { name: 'docs/README.TXT', data: 'nested readme' },
      { name: 'DESC.SDI', data: 'root' },
    ]);
    expect(await readArchiveDescriptions(path)).toEqual({ diz: 'root', longText: null });
  });

  it('finds only nested descriptions → nulls', async () => {
    const path = await writeZip([{ name: 'a/FILE_ID.DIZ', data: 'nested' }]);
    expect(await readArchiveDescriptions(path)).toEqual({ diz: null, longText: null });
  });

  it('takes the first *.NFO or README* as the long text', async () => {
    const nfoFirst = await writeZip([
      { name: 'notes.txt', data: 'not this' },
      { name: 'group.nfo', data: 'the nfo' },
      { name: 'README.TXT', data: 'the readme' },
    ]);
    const readmeFirst = await writeZip([
      { name: 'ReadMe', data: 'the readme' },
      { name: 'GROUP.NFO', data: 'the nfo' },
    ]);
    expect((await readArchiveDescriptions(nfoFirst)).longText).toBe('the nfo');
    expect((await readArchiveDescriptions(readmeFirst)).longText).toBe('the readme');
  });

  it('does not take README.COM / README.EXE viewers as text', async () => {
    const path = await writeZip([
      { name: 'README.COM', data: 'binary viewer' },
      { name: 'README.EXE', data: 'binary viewer' },
      { name: 'README.1ST', data: 'real text' },
    ]);
    expect((await readArchiveDescriptions(path)).longText).toBe('real text');
  });

  it('returns both descriptions and a directory entry does not count', async () => {
    const path = await writeZip([
      { name: 'README/', data: '' },
      { name: 'FILE_ID.DIZ', data: 'short' },
      { name: 'INFO.NFO', data: 'long' },
    ]);
    expect(await readArchiveDescriptions(path)).toEqual({ diz: 'short', longText: 'long' });
  });

  it('decodes CP437 when the bytes are not UTF-8', async () => {
    const path = await writeZip([{ name: 'FILE_ID.DIZ', data: new Uint8Array([0xb0, 0xb1, 0xb2, 0x20, 0x81, 0xdb]) }]);
    expect((await readArchiveDescriptions(path)).diz).toBe('░▒▓ ü█');
  });

  it('keeps valid UTF-8 as UTF-8', async () => {
    const path = await writeZip([{ name: 'FILE_ID.DIZ', data: '\ufeffDémo — ░▒▓' }]);
    expect((await readArchiveDescriptions(path)).diz).toBe('Démo — ░▒▓');
  });

  it('drops the SUB mark and the SAUCE record after it, and trailing NULs and blanks', async () => {
    const sauce = `\x1aCOMNT${' '.repeat(64)}SAUCE00Title`;
    const path = await writeZip([{ name: 'FILE_ID.ANS', data: `\x1b[1;33mART\x1b[0m  \r\n\r\n\0\0${sauce}` }]);
    expect((await readArchiveDescriptions(path)).diz).toBe('\x1b[1;33mART\x1b[0m');
  });

  it('treats a description that is blank after cleaning as absent', async () => {
    const path = await writeZip([
      { name: 'FILE_ID.DIZ', data: ' \r\n\0\0\x1a' },
      { name: 'README', data: '' },
    ]);
    expect(await readArchiveDescriptions(path)).toEqual({ diz: null, longText: null });
  });

  it('skips entries it cannot decode (implode, encrypted) and falls back to the next name', async () => {
    const path = await writeZip([
      { name: 'FILE_ID.DIZ', data: 'imploded', method: 'store', compressionMethodOverride: 6 },
      { name: 'FILE_ID.ANS', data: 'secret', isEncrypted: true },
      { name: 'DESC.SDI', data: 'readable' },
    ]);
    expect((await readArchiveDescriptions(path)).diz).toBe('readable');
  });

  it('reads names yauzl would reject when decoding, like ../escape, without failing', async () => {
    const path = await writeZip([
      { name: '../escape.txt', data: 'x' },
      { name: '/absolute.txt', data: 'x' },
      { name: 'FILE_ID.DIZ', data: 'still found' },
    ]);
    expect((await readArchiveDescriptions(path)).diz).toBe('still found');
  });

  it('truncates a 50 MiB deflated DIZ to 64 KiB', async () => {
    const bomb = Buffer.alloc(50 * 1024 * 1024, 'A');
    const path = await writeZip([{ name: 'FILE_ID.DIZ', data: bomb }]);
    const started = performance.now();
    const { diz } = await readArchiveDescriptions(path);
    expect(diz).toBe('A'.repeat(MAX_DESCRIPTION_BYTES));
    expect(performance.now() - started).toBeLessThan(2000);
    await expectClosed(path);
  });

  it('stops inflating a 1 GiB entry with an honest size after about 64 KiB', async () => {
    const path = await writeZip([
      { name: 'FILE_ID.DIZ', data: 'small' },
      { name: 'README.TXT', rawDeflate: deflateRepeated(Buffer.alloc(1024 * 1024, 'B'), 1024) },
    ]);
    const inflaters: Transform[] = [];
    let inflatedBytes = 0;
    const createInflateRaw = zlib.createInflateRaw;
    vi.spyOn(zlib, 'createInflateRaw').mockImplementation((options) => {
      const inflater = createInflateRaw(options);
      inflater.on('data', (chunk: Buffer) => {
        inflatedBytes += chunk.length;
      });
      inflaters.push(inflater);
      return inflater;
    });

    const result = await readArchiveDescriptions(path);
    // Counted once the file is closed, so inflation left running in the background shows too.
    await expectClosed(path);

    expect(result).toEqual({ diz: 'small', longText: 'B'.repeat(MAX_DESCRIPTION_BYTES) });
    expect(inflaters).toHaveLength(2);
    const dizBytes = 'small'.length;
    // zlib inflates in 16 KiB chunks, so allow one chunk of read-ahead; the entry is 1 GiB.
    expect(inflatedBytes - dizBytes).toBeLessThanOrEqual(MAX_DESCRIPTION_BYTES + 16 * 1024);
  });

  it('returns nulls when an entry inflates to more than its declared size', async () => {
    const path = await writeZip([{ name: 'FILE_ID.DIZ', data: 'x'.repeat(5000), declaredUncompressedSize: 10 }]);
    expect(await readArchiveDescriptions(path)).toEqual({ diz: null, longText: null });
    await expectClosed(path);
  });

  it('returns nulls when an entry declares far more than it holds', async () => {
    const path = await writeZip([{ name: 'FILE_ID.DIZ', data: 'short', declaredUncompressedSize: 0x7fffffff }]);
    expect(await readArchiveDescriptions(path)).toEqual({ diz: null, longText: null });
    await expectClosed(path);
  });

  it('returns nulls for a stored entry whose sizes disagree', async () => {
    const path = await writeZip([
      { name: 'FILE_ID.DIZ', data: 'stored', method: 'store', declaredUncompressedSize: 3 },
    ]);
    expect(await readArchiveDescriptions(path)).toEqual({ diz: null, longText: null });
  });

  it('returns nulls for corrupt deflate data', async () => {
    const zip = buildZip([{ name: 'FILE_ID.DIZ', data: 'hello hello hello hello' }]);
    // The compressed data starts after the 30-byte local header and the 11-byte name.
    zip.fill(0xff, 41, 45);
    const path = await writeTemp(zip);
    expect(await readArchiveDescriptions(path)).toEqual({ diz: null, longText: null });
    await expectClosed(path);
  });

  it('returns nulls for a truncated zip', async () => {
    const zip = buildZip([{ name: 'FILE_ID.DIZ', data: 'hello' }]);
    const path = await writeTemp(zip.subarray(0, zip.length - 10));
    expect(await readArchiveDescriptions(path)).toEqual({ diz: null, longText: null });
    await expectClosed(path);
  });

  it('returns nulls when the central directory points past the end', async () => {
    const zip = buildZip([{ name: 'FILE_ID.DIZ', data: 'hello' }]);
    // Claim 200 entries where there is one: the walk runs into the end-of-directory record.
    zip.writeUInt16LE(200, zip.length - 22 + 8);
    zip.writeUInt16LE(200, zip.length - 22 + 10);
    const path = await writeTemp(zip);
    expect(await readArchiveDescriptions(path)).toEqual({ diz: null, longText: null });
    await expectClosed(path);
  });

  it('returns nulls for a file that is not a zip', async () => {
    const path = await writeTemp(Buffer.from('This is a plain text file, not an archive.\n'));
    expect(await readArchiveDescriptions(path)).toEqual({ diz: null, longText: null });
    await expectClosed(path);
  });

  it('returns nulls for an empty file and for a missing file', async () => {
    expect(await readArchiveDescriptions(await writeTemp(new Uint8Array()))).toEqual({ diz: null, longText: null });
    expect(await readArchiveDescriptions(join(dir, 'missing.zip'))).toEqual({ diz: null, longText: null });
  });

  it('returns nulls for an empty zip', async () => {
    const path = await writeTemp(buildZip([]));
    expect(await readArchiveDescriptions(path)).toEqual({ diz: null, longText: null });
    await expectClosed(path);
  });

  it(`walks at most ${MAX_ARCHIVE_ENTRIES} central-directory entries`, async () => {
    const filler: ZipEntrySpec[] = Array.from({ length: MAX_ARCHIVE_ENTRIES - 1 }, (_, i) => ({
      name: `f${i}`,
      method: 'store',
    }));
    const withinCap = await writeZip([...filler, { name: 'FILE_ID.DIZ', data: 'last walked' }]);
    const pastCap = await writeZip([
      ...filler,
      { name: 'x', method: 'store' },
      { name: 'FILE_ID.DIZ', data: 'beyond' },
    ]);
    expect((await readArchiveDescriptions(withinCap)).diz).toBe('last walked');
    expect((await readArchiveDescriptions(pastCap)).diz).toBeNull();
    await expectClosed(pastCap);
  });
});

describe('decodeDescriptionText', () => {
  it('maps every CP437 byte above 0x7F to one character', () => {
    const high = Uint8Array.from({ length: 128 }, (_, i) => 0x80 + i);
    const text = decodeCp437(high);
    expect(Array.from(text)).toHaveLength(128);
    expect(text.slice(0, 3)).toBe('Çüé');
    expect(text.slice(0x30, 0x33)).toBe('░▒▓');
    expect(text.slice(-2)).toBe('■\u00a0');
  });

  it('keeps ASCII control bytes as they are, so ANSI escapes survive', () => {
    expect(decodeCp437(new Uint8Array([0x1b, 0x5b, 0x6d, 0x09, 0x0a]))).toBe('\x1b[m\t\n');
  });

  it('falls back to CP437 for text that is almost UTF-8', () => {
    // 0xC9 0xCD is "╔═" in CP437 and an invalid UTF-8 sequence.
    expect(decodeDescriptionText(new Uint8Array([0xc9, 0xcd, 0xbb]))).toBe('╔═╗');
  });

  it('drops a UTF-8 sequence cut off by the 64 KiB limit instead of switching to CP437', () => {
    const bytes = Buffer.from('Démo ░', 'utf8');
    const cut = bytes.subarray(0, bytes.length - 1);
    expect(decodeDescriptionText(cut, true)).toBe('Démo');
    expect(decodeDescriptionText(cut, false)).toBe('D├⌐mo Γû');
  });

  it('normalises CRLF but keeps lone LFs and leading spaces', () => {
    expect(decodeDescriptionText(Buffer.from('  one\r\ntwo\nthree\r\n\r\n'))).toBe('  one\ntwo\nthree');
  });
});
