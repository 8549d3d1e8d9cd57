import zlib from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type BundleEntry,
  formatBundleName,
  isBundleName,
  nextBundleName,
  parseBundleName,
  readBundle,
  writeBundle,
} from '../../src/ftn/bundle.js';
import { buildZip } from '../support/zip-builder.js';
import { expectFtnError } from './ftn-fixtures.js';

const MODIFIED_AT = new Date('2026-11-27T10:30:06Z');

describe('writing and reading bundles', () => {
  it('reads back the packets it writes, names and bytes', () => {
    const entries: BundleEntry[] = [
      { name: '0badcafe.pkt', data: Buffer.from('first packet') },
      { name: '0BADCAFF.PKT', data: Buffer.alloc(100_000, 7) },
      { name: 'empty.pkt', data: Buffer.alloc(0) },
    ];
    expect(readBundle(writeBundle(entries, { modifiedAt: MODIFIED_AT }))).toEqual(entries);
  });

  it('writes a zip archive as the zip format lays it out: local header, data, central directory, end record', () => {
    const data = Buffer.from('packet bytes');
    const bundle = writeBundle([{ name: 'a.pkt', data }], { modifiedAt: MODIFIED_AT });
    const compressed = zlib.deflateRawSync(data);
    const dosTime = (10 << 11) | (30 << 5) | 3;
    const dosDate = ((2026 - 1980) << 9) | (11 << 5) | 27;
    expect(bundle.readUInt32LE(0)).toBe(0x04034b50);
    expect(bundle.readUInt16LE(8)).toBe(8);
    expect(bundle.readUInt16LE(10)).toBe(dosTime);
    expect(bundle.readUInt16LE(12)).toBe(dosDate);
    expect(bundle.readUInt32LE(14)).toBe(zlib.crc32(data));
    expect(bundle.readUInt32LE(18)).toBe(compressed.length);
    expect(bundle.readUInt32LE(22)).toBe(data.length);
    expect(bundle.subarray(30, 35).toString()).toBe('a.pkt');
    expect(bundle.subarray(35, 35 + compressed.length)).toEqual(compressed);
    const central = 35 + compressed.length;
    expect(bundle.readUInt32LE(central)).toBe(0x02014b50);
    expect(bundle.readUInt32LE(central + 42)).toBe(0);
    const end = central + 46 + 5;
    expect(bundle.readUInt32LE(end)).toBe(0x06054b50);
    expect(bundle.readUInt16LE(end + 10)).toBe(1);
    expect(bundle.readUInt32LE(end + 16)).toBe(central);
    expect(bundle.length).toBe(end + 22);
  });

  it('reads stored entries and archives other software built', () => {
    const zip = buildZip([
      { name: '00000001.pkt', data: 'stored', method: 'store' },
      { name: '00000002.PKT', data: 'deflated' },
    ]);
    expect(readBundle(zip).map((entry) => [entry.name, entry.data.toString()])).toEqual([
      ['00000001.pkt', 'stored'],
      ['00000002.PKT', 'deflated'],
    ]);
    expect(readBundle(buildZip([]))).toEqual([]);
  });

  it('reads back whatever packets it writes', () => {
    const entry = fc.record({
      name: fc.stringMatching(/^[0-9a-f]{8}$/).map((stem) => `${stem}.pkt`),
      data: fc.uint8Array({ maxLength: 5000 }).map((bytes) => Buffer.from(bytes)),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(entry, { maxLength: 6, selector: (e) => e.name }),
        fc.date({ noInvalidDate: true }),
        (entries, modifiedAt) => {
          expect(readBundle(writeBundle(entries, { modifiedAt }))).toEqual(entries);
        },
      ),
    );
  });

  it('refuses to write names that are not plain packet names, or twice', () => {
    expectFtnError(
      () => writeBundle([{ name: '../x.pkt', data: Buffer.alloc(0) }], { modifiedAt: MODIFIED_AT }),
      'cannot write bundle entry "../x.pkt": not a plain packet name',
    );
    expectFtnError(
      () =>
        writeBundle(
          [
            { name: 'a.pkt', data: Buffer.alloc(0) },
            { name: 'A.PKT', data: Buffer.alloc(0) },
          ],
          { modifiedAt: MODIFIED_AT },
        ),
      'cannot write bundle entry "A.PKT": the name is given twice',
    );
  });
});

describe('bundle names', () => {
  it('names a bundle by 8 hex digits, the weekday and a digit', () => {
    expect(formatBundleName(0xbadcafe, 1, 0)).toBe('0badcafe.mo0');
    expect(formatBundleName(0, 0, 9)).toBe('00000000.su9');
    expect(formatBundleName(0xffffffff, 6, 3)).toBe('ffffffff.sa3');
  });

  it('recognises bundle names in any case, with a digit or a letter after the day', () => {
    for (const name of [
      '0badcafe.mo0',
      '0BADCAFE.TU9',
      'abcdef01.WeA',
      '12345678.th1',
      '12345678.fr0',
      '12345678.sa0',
      '12345678.su0',
    ]) {
      expect(isBundleName(name)).toBe(true);
    }
    for (const name of [
      '0badcafe.pkt',
      '0badcafe.mo',
      '0badcafe.xx0',
      'badcafe.mo0',
      '0badcafg.mo0',
      '0badcafe.mo0.zip',
      '../0badcafe.mo0',
    ]) {
      expect(isBundleName(name)).toBe(false);
    }
    expect(parseBundleName('0BADCAFE.WeA')).toEqual({ stem: 0xbadcafe, weekday: 3, sequence: 'a' });
    expect(parseBundleName('nope')).toBeNull();
  });

  it('reads back every name it writes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 9 }),
        (stem, weekday, sequence) => {
          expect(parseBundleName(formatBundleName(stem, weekday, sequence))).toEqual({
            stem,
            weekday,
            sequence: String(sequence),
          });
        },
      ),
    );
  });

  it('picks the lowest digit not taken, whatever case the taken names have', () => {
    expect(nextBundleName(0xbadcafe, 1, [])).toBe('0badcafe.mo0');
    expect(nextBundleName(0xbadcafe, 1, ['0BADCAFE.MO0', '0badcafe.mo1', '0badcafe.tu2'])).toBe('0badcafe.mo2');
    const allTaken = Array.from({ length: 10 }, (_, digit) => `0badcafe.mo${digit}`);
    expect(nextBundleName(0xbadcafe, 1, allTaken)).toBeNull();
  });

  it('refuses a stem, weekday or digit a name cannot carry', () => {
    expectFtnError(() => formatBundleName(2 ** 32, 1, 0), 'cannot name a bundle with stem 4294967296 and weekday 1');
    expectFtnError(() => formatBundleName(1, 7, 0), 'cannot name a bundle with stem 1 and weekday 7');
    expectFtnError(() => formatBundleName(1, 1, 10), 'cannot name a bundle with sequence 10: a digit 0–9');
  });
});
