import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatFtnDateTime,
  formatTzutc,
  ftnDateTimeOf,
  instantOf,
  parseFtnDateTime,
  parseTzutc,
} from '../../src/ftn/ftn-date.js';
import { expectFtnError, ftnDateTimeArbitrary } from './ftn-fixtures.js';

const at = (year: number, month: number, day: number, hour = 0, minute = 0, second = 0) => ({
  year,
  month,
  day,
  hour,
  minute,
  second,
});

describe('packed message dates', () => {
  it('writes DD Mon YY, two spaces, HH:MM:SS', () => {
    expect(formatFtnDateTime(at(2026, 11, 7, 9, 5, 0))).toBe('07 Nov 26  09:05:00');
    expect(formatFtnDateTime(at(1986, 1, 1, 2, 34, 56))).toBe('01 Jan 86  02:34:56');
    expect(formatFtnDateTime(at(2000, 2, 29, 23, 59, 59))).toBe('29 Feb 00  23:59:59');
  });

  it('reads both formats FTS-0001 lists, and one space before the time', () => {
    expect(parseFtnDateTime('01 Jan 86  02:34:56')).toEqual(at(1986, 1, 1, 2, 34, 56));
    expect(parseFtnDateTime('1 Jan 86 02:34:56')).toEqual(at(1986, 1, 1, 2, 34, 56));
    expect(parseFtnDateTime('Mon  1 Jan 86 02:34')).toEqual(at(1986, 1, 1, 2, 34, 0));
    expect(parseFtnDateTime('27 nov 26  10:00:00')).toEqual(at(2026, 11, 27, 10, 0, 0));
  });

  it('puts two-digit years 80–99 in the 1900s and 00–79 in the 2000s', () => {
    expect(parseFtnDateTime('01 Jan 80  00:00:00')?.year).toBe(1980);
    expect(parseFtnDateTime('01 Jan 79  00:00:00')?.year).toBe(2079);
    expect(parseFtnDateTime('01 Jan 00  00:00:00')?.year).toBe(2000);
  });

  it.each([
    '',
    '31 Feb 26  10:00:00',
    '01 Foo 26  10:00:00',
    '01 Jan 26  24:00:00',
    '01 Jan 2026 10:00:00',
    'yesterday',
  ])('reads %j as no date', (text) => {
    expect(parseFtnDateTime(text)).toBeNull();
  });

  it('refuses to write a date that does not exist or that two digits cannot say', () => {
    expectFtnError(
      () => formatFtnDateTime(at(2026, 2, 30)),
      'cannot write the date {"year":2026,"month":2,"day":30,"hour":0,"minute":0,"second":0}: no such date in 1980–2079',
    );
    expectFtnError(
      () => formatFtnDateTime(at(2080, 1, 1)),
      'cannot write the date {"year":2080,"month":1,"day":1,"hour":0,"minute":0,"second":0}: no such date in 1980–2079',
    );
  });

  it('reads back every date it writes', () => {
    fc.assert(
      fc.property(ftnDateTimeArbitrary, (dateTime) => {
        expect(parseFtnDateTime(formatFtnDateTime(dateTime))).toEqual(dateTime);
      }),
    );
  });
});

describe('wall-clock times and instants', () => {
  it('gives the local time at an offset, and the instant back', () => {
    const instant = new Date('2026-11-27T23:30:00Z');
    expect(ftnDateTimeOf(instant, 60)).toEqual(at(2026, 11, 28, 0, 30, 0));
    expect(ftnDateTimeOf(instant, -300)).toEqual(at(2026, 11, 27, 18, 30, 0));
    expect(instantOf(at(2026, 11, 28, 0, 30, 0), 60)).toEqual(instant);
  });

  it('goes from instant to wall clock and back at any offset', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1980, 0, 2), max: Date.UTC(2079, 11, 30) }),
        fc.integer({ min: -(24 * 60 - 1), max: 24 * 60 - 1 }),
        (milliseconds, offset) => {
          const instant = new Date(Math.floor(milliseconds / 1000) * 1000);
          expect(instantOf(ftnDateTimeOf(instant, offset), offset)).toEqual(instant);
        },
      ),
    );
  });
});

describe('TZUTC', () => {
  it.each([
    [0, '0000'],
    [60, '0100'],
    [-210, '-0330'],
    [570, '0930'],
    [780, '1300'],
  ])('writes %i minutes as %s and reads it back', (minutes, text) => {
    expect(formatTzutc(minutes)).toBe(text);
    expect(parseTzutc(text)).toBe(minutes);
  });

  it('reads a leading + that FTS-4008 forbids, and -0000 as UTC', () => {
    expect(parseTzutc('+0200')).toBe(120);
    expect(parseTzutc(' -0000 ')).toBe(0);
  });

  it('refuses values that are not [-]hhmm', () => {
    expectFtnError(() => parseTzutc('1:00'), 'TZUTC "1:00" is not [-]hhmm');
    expectFtnError(() => parseTzutc('0160'), 'TZUTC "0160" is not [-]hhmm');
    expectFtnError(() => formatTzutc(1440), 'cannot write the UTC offset 1440: not whole minutes within a day');
  });
});
