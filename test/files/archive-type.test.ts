import { describe, expect, it } from 'vitest';
import { ARCHIVE_SNIFF_BYTES, detectArchiveType } from '../../src/files/archive-type.js';
import { buildZip } from '../support/zip-builder.js';

/** A sniff buffer starting with `prefix` (and zero padding up to ARCHIVE_SNIFF_BYTES). */
function head(prefix: readonly number[] | string, at = 0): Uint8Array {
  const bytes = new Uint8Array(ARCHIVE_SNIFF_BYTES);
  const values = typeof prefix === 'string' ? Array.from(Buffer.from(prefix, 'latin1')) : prefix;
  bytes.set(values, at);
  return bytes;
}

describe('detectArchiveType', () => {
  it('needs at least 265 bytes to see the tar magic', () => {
    expect(ARCHIVE_SNIFF_BYTES).toBeGreaterThanOrEqual(265);
  });

  it.each([
    ['zip local header', head([0x50, 0x4b, 0x03, 0x04]), 'application/zip'],
    ['empty zip', head([0x50, 0x4b, 0x05, 0x06]), 'application/zip'],
    ['7z', head([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c, 0x00, 0x04]), 'application/x-7z-compressed'],
    ['RAR4', head('Rar!\x1a\x07\x00'), 'application/vnd.rar'],
    ['RAR5', head('Rar!\x1a\x07\x01\x00'), 'application/vnd.rar'],
    ['ARJ', head([0x60, 0xea, 0x26, 0x00]), 'application/x-arj'],
    ['LHA -lh5-', head('\x24\x8c-lh5-'), 'application/x-lzh-compressed'],
    ['LHA -lh0-', head('\x24\x8c-lh0-'), 'application/x-lzh-compressed'],
    ['LHA -lhd- (directory)', head('\x24\x8c-lhd-'), 'application/x-lzh-compressed'],
    ['LArc -lzs-', head('\x24\x8c-lzs-'), 'application/x-lzh-compressed'],
    ['gzip', head([0x1f, 0x8b, 0x08, 0x00]), 'application/gzip'],
    ['POSIX tar', head('ustar\x0000', 257), 'application/x-tar'],
    ['GNU tar', head('ustar  \x00', 257), 'application/x-tar'],
    ['bzip2', head('BZh91AY&SY'), 'application/x-bzip2'],
    ['xz', head([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00]), 'application/x-xz'],
  ])('recognises %s', (_name, bytes, mimeType) => {
    expect(detectArchiveType(bytes)).toBe(mimeType);
  });

  it('recognises a zip built by the test zip writer', () => {
    expect(detectArchiveType(buildZip([{ name: 'FILE_ID.DIZ', data: 'hello' }]))).toBe('application/zip');
    expect(detectArchiveType(buildZip([]))).toBe('application/zip');
  });

  it.each([
    ['plain text', head('Hello, this is not an archive')],
    ['a PNG', head([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])],
    ['all zeros', new Uint8Array(ARCHIVE_SNIFF_BYTES)],
    ['ARJ magic with a zero header size', head([0x60, 0xea, 0x00, 0x00])],
    ['ARJ magic with an impossible header size', head([0x60, 0xea, 0xff, 0xff])],
    ['bzip2 magic with a bad block size', head('BZh0')],
    ['an LHA-like method outside printable ASCII', head('\x24\x8c-lh\x00-')],
    ['a truncated RAR signature', head('Rar!\x1a\x07\x02')],
  ])('returns null for %s', (_name, bytes) => {
    expect(detectArchiveType(bytes)).toBeNull();
  });

  it('copes with heads shorter than the sniff length', () => {
    expect(detectArchiveType(new Uint8Array())).toBeNull();
    expect(detectArchiveType(new Uint8Array([0x50, 0x4b]))).toBeNull();
    expect(detectArchiveType(new Uint8Array([0x50, 0x4b, 0x03, 0x04]))).toBe('application/zip');
    expect(detectArchiveType(new Uint8Array([0x1f, 0x8b, 0x08]))).toBe('application/gzip');
    expect(detectArchiveType(new Uint8Array(261).fill(0x20))).toBeNull();
  });
});
