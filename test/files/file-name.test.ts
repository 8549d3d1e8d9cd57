import { describe, expect, it } from 'vitest';
import {
  contentTypeForFileName,
  MAX_FILE_NAME_BYTES,
  sanitizeFileName,
  withClashSuffix,
} from '../../src/files/file-name.js';

function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** True when UTF-8 round-trips, i.e. no code point was cut in half. */
function isWholeUtf8(text: string): boolean {
  return Buffer.from(text, 'utf8').toString('utf8') === text && !text.includes('\ufffd');
}

describe('sanitizeFileName', () => {
  it.each([
    ['../../etc/passwd', 'passwd'],
    ['..\\..\\win.ini', 'win.ini'],
    ['C:\\Users\\sysop\\DEMO.ZIP', 'DEMO.ZIP'],
    ['/abs/path/to/file.txt', 'file.txt'],
    ['mixed/sep\\name.arj', 'name.arj'],
  ])('keeps only the base name of %j', (input, expected) => {
    expect(sanitizeFileName(input)).toBe(expected);
  });

  it('removes C0, DEL and C1 control characters', () => {
    expect(sanitizeFileName('de\u0000m\u001bo\u007f\u0085\u009f.zip')).toBe('demo.zip');
    expect(sanitizeFileName('line\r\nbreak.txt')).toBe('linebreak.txt');
  });

  it('removes bidi controls that could disguise the extension', () => {
    expect(sanitizeFileName('invoice\u202eexe.txt')).toBe('invoiceexe.txt');
    expect(sanitizeFileName('a\u2066b\u2069c\u200f.zip')).toBe('abc.zip');
  });

  it('removes leading dots and surrounding whitespace', () => {
    expect(sanitizeFileName('.hidden')).toBe('hidden');
    expect(sanitizeFileName('  ..  .profile.txt  ')).toBe('profile.txt');
    expect(sanitizeFileName('\tdemo.zip \n')).toBe('demo.zip');
  });

  it('removes trailing dots, which Windows would drop on download', () => {
    expect(sanitizeFileName('name.')).toBe('name');
    expect(sanitizeFileName('name. . ')).toBe('name');
  });

  it('replaces characters forbidden on common filesystems with _', () => {
    expect(sanitizeFileName('a<b>c:d"e|f?g*h.txt')).toBe('a_b_c_d_e_f_g_h.txt');
  });

  it('keeps ordinary Unicode and normalises it to NFC', () => {
    expect(sanitizeFileName('Ärger über Öl (1995) [final].zip')).toBe('Ärger über Öl (1995) [final].zip');
    expect(sanitizeFileName('cafe\u0301.txt')).toBe('caf\u00e9.txt');
  });

  it.each(['', '   ', '...', '/', 'folder/', '..\\', '\u0000\u0001', '. . .'])('turns %j into "file"', (input) => {
    expect(sanitizeFileName(input)).toBe('file');
  });

  it('truncates a 300-byte name of 2-byte characters to ≤ 255 bytes, keeping the extension', () => {
    const name = sanitizeFileName(`${'é'.repeat(148)}.zip`);
    expect(bytes(`${'é'.repeat(148)}.zip`)).toBe(300);
    expect(name).toBe(`${'é'.repeat(125)}.zip`);
    expect(bytes(name)).toBe(254);
  });

  it('cuts 4-byte characters whole, filling exactly 255 bytes when they fit', () => {
    const name = sanitizeFileName(`${'😀'.repeat(80)}.7z`);
    expect(name).toBe(`${'😀'.repeat(63)}.7z`);
    expect(bytes(name)).toBe(MAX_FILE_NAME_BYTES);
    expect(isWholeUtf8(name)).toBe(true);
  });

  it('cuts 3-byte characters whole in a name without an extension', () => {
    const name = sanitizeFileName('語'.repeat(100));
    expect(name).toBe('語'.repeat(85));
    expect(bytes(name)).toBe(255);
  });

  it('keeps a double extension like .tar.gz when truncating', () => {
    const name = sanitizeFileName(`${'a'.repeat(300)}.tar.gz`);
    expect(name).toBe(`${'a'.repeat(248)}.tar.gz`);
  });

  it('treats an absurdly long "extension" as part of the name', () => {
    const name = sanitizeFileName(`a.${'b'.repeat(300)}`);
    expect(name).toBe(`a.${'b'.repeat(253)}`);
  });

  it('leaves a name of exactly 255 bytes alone', () => {
    const name = `${'x'.repeat(251)}.zip`;
    expect(sanitizeFileName(name)).toBe(name);
  });
});

describe('withClashSuffix', () => {
  it.each([
    ['name.zip', 2, 'name (2).zip'],
    ['name.zip', 10, 'name (10).zip'],
    ['README', 3, 'README (3)'],
    ['demo.tar.gz', 2, 'demo (2).tar.gz'],
    ['DEMO.TAR.BZ2', 4, 'DEMO (4).TAR.BZ2'],
    ['v1.2.3.zip', 2, 'v1.2.3 (2).zip'],
  ])('turns %j with n=%i into %j', (input, n, expected) => {
    expect(withClashSuffix(input, n)).toBe(expected);
  });

  it('shortens the stem so the result stays ≤ 255 bytes', () => {
    const name = withClashSuffix(`${'é'.repeat(125)}.zip`, 12);
    expect(name).toBe(`${'é'.repeat(123)} (12).zip`);
    expect(bytes(name)).toBeLessThanOrEqual(MAX_FILE_NAME_BYTES);
    expect(isWholeUtf8(name)).toBe(true);
  });

  it.each([1, 0, -2, 2.5, Number.NaN])('rejects n=%d with a RangeError', (n) => {
    expect(() => withClashSuffix('name.zip', n)).toThrow(RangeError);
  });
});

describe('contentTypeForFileName', () => {
  it.each([
    ['demo.zip', 'application/zip'],
    ['demo.7z', 'application/x-7z-compressed'],
    ['demo.rar', 'application/vnd.rar'],
    ['demo.arj', 'application/x-arj'],
    ['demo.lzh', 'application/x-lzh-compressed'],
    ['demo.lha', 'application/x-lzh-compressed'],
    ['demo.gz', 'application/gzip'],
    ['demo.tgz', 'application/gzip'],
    ['demo.tar', 'application/x-tar'],
    ['demo.tar.bz2', 'application/x-bzip2'],
    ['demo.xz', 'application/x-xz'],
    ['read.txt', 'text/plain'],
    ['group.nfo', 'text/plain'],
    ['FILE_ID.DIZ', 'text/plain'],
    ['art.ans', 'text/plain'],
    ['art.asc', 'text/plain'],
    ['notes.md', 'text/markdown'],
    ['manual.pdf', 'application/pdf'],
    ['pic.png', 'image/png'],
    ['pic.jpg', 'image/jpeg'],
    ['pic.JPEG', 'image/jpeg'],
    ['pic.gif', 'image/gif'],
    ['song.mp3', 'audio/mpeg'],
    ['song.mod', 'audio/x-mod'],
    ['song.xm', 'audio/x-xm'],
    ['song.s3m', 'audio/x-s3m'],
    ['song.it', 'audio/x-it'],
    ['GAME.EXE', 'application/x-msdownload'],
    ['TOOL.COM', 'application/x-msdownload'],
    ['data.json', 'application/json'],
    ['page.html', 'text/html'],
  ])('maps %j to %s', (fileName, contentType) => {
    expect(contentTypeForFileName(fileName)).toBe(contentType);
  });

  it.each([
    'README',
    'file.unknown',
    'file.',
    'file.constructor',
    'file.__proto__',
  ])('falls back to application/octet-stream for %j', (fileName) => {
    expect(contentTypeForFileName(fileName)).toBe('application/octet-stream');
  });
});
