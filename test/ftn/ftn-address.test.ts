import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkFtnAddress,
  compareFtnAddresses,
  compareNetNodes,
  formatFtnAddress,
  formatNetNodes,
  formatZoneNetNode,
  isSameFtnAddress,
  parseFtnAddress,
  parseNetNodes,
} from '../../src/ftn/ftn-address.js';
import { FtnFormatError } from '../../src/ftn/ftn-format-error.js';
import { address, expectFtnError, ftnAddressArbitrary, netNodeArbitrary } from './ftn-fixtures.js';

describe('parseFtnAddress', () => {
  it.each([
    ['21:1/100', address(21, 1, 100)],
    ['21:1/100.2', address(21, 1, 100, 2)],
    ['21:1/100.0', address(21, 1, 100)],
    ['21:1/100@fsxnet', address(21, 1, 100, 0, 'fsxnet')],
    ['21:1/100.2@fsxNet', address(21, 1, 100, 2, 'fsxnet')],
    ['1:0/0', address(1, 0, 0)],
    ['32767:32767/32767.32767@a-b_c123', address(32767, 32767, 32767, 32767, 'a-b_c123')],
  ])('reads %s', (text, expected) => {
    expect(parseFtnAddress(text)).toEqual(expected);
  });

  it.each([
    ['21:1', '"21:1" is not an FTN address (zone:net/node[.point][@domain])'],
    ['21:1/100.', '"21:1/100." is not an FTN address (zone:net/node[.point][@domain])'],
    [' 21:1/100', '" 21:1/100" is not an FTN address (zone:net/node[.point][@domain])'],
    ['21:1/100 ', '"21:1/100 " is not an FTN address (zone:net/node[.point][@domain])'],
    ['21:-1/100', '"21:-1/100" is not an FTN address (zone:net/node[.point][@domain])'],
    ['0:1/100', '"0:1/100": the zone 0 is outside 1–32767'],
    ['21:01/100', '"21:01/100": the net 01 has a leading zero'],
    ['21:1/32768', '"21:1/32768": the node 32768 is outside 0–32767'],
    ['21:1/100.99999999999', '"21:1/100.99999999999": the point 999999… is outside 0–32767'],
    ['21:1/100@', '"21:1/100@": the domain "" is not 1–8 letters, digits, - or _'],
    ['21:1/100@fsxnet.org', '"21:1/100@fsxnet.org": the domain "fsxnet.org" is not 1–8 letters, digits, - or _'],
    ['21:1/100@toolongname', '"21:1/100@toolongname": the domain "toolongname" is not 1–8 letters, digits, - or _'],
  ])('refuses %j: %s', (text, reason) => {
    expectFtnError(() => parseFtnAddress(text), reason);
  });

  it('reads back every address it formats', () => {
    fc.assert(
      fc.property(ftnAddressArbitrary, (original) => {
        expect(parseFtnAddress(formatFtnAddress(original))).toEqual(original);
      }),
    );
  });

  it('answers every string with an address or an FtnFormatError', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'0123456789:/.@ab-_ ') }), (text) => {
        try {
          checkFtnAddress(parseFtnAddress(text));
        } catch (error) {
          expect(error).toBeInstanceOf(FtnFormatError);
        }
      }),
    );
  });
});

describe('formatFtnAddress', () => {
  it('writes the point only when it is not 0, and the domain when there is one', () => {
    expect(formatFtnAddress(address(21, 1, 100))).toBe('21:1/100');
    expect(formatFtnAddress(address(21, 1, 100, 7))).toBe('21:1/100.7');
    expect(formatFtnAddress(address(21, 1, 100, 0, 'fsxnet'))).toBe('21:1/100@fsxnet');
    expect(formatZoneNetNode(address(21, 1, 100, 7, 'fsxnet'))).toBe('21:1/100');
  });

  it('refuses to write a number or domain it would not read', () => {
    expectFtnError(
      () => formatFtnAddress(address(0, 1, 100)),
      'cannot write the zone 0: it is not a whole number in 1–32767',
    );
    expectFtnError(
      () => formatFtnAddress(address(21, 1.5, 100)),
      'cannot write the net 1.5: it is not a whole number in 0–32767',
    );
    expectFtnError(
      () => formatFtnAddress(address(21, 1, 100, 0, 'FSX')),
      'cannot write the domain "FSX": it is not 1–8 of a-z, 0-9, - or _',
    );
  });
});

describe('comparing addresses', () => {
  it('orders by zone, net, node, point, then domain with none first', () => {
    const sorted = [
      address(21, 1, 100, 1),
      address(2, 5, 1),
      address(21, 1, 100, 0, 'fsxnet'),
      address(21, 1, 100),
      address(21, 1, 99),
      address(21, 1, 100, 0, 'araknet'),
    ].sort(compareFtnAddresses);
    expect(sorted.map(formatFtnAddress)).toEqual([
      '2:5/1',
      '21:1/99',
      '21:1/100',
      '21:1/100@araknet',
      '21:1/100@fsxnet',
      '21:1/100.1',
    ]);
  });

  it('takes a missing domain as any domain, and different domains as different systems', () => {
    expect(isSameFtnAddress(address(21, 1, 100), address(21, 1, 100, 0, 'fsxnet'))).toBe(true);
    expect(isSameFtnAddress(address(21, 1, 100, 0, 'fsxnet'), address(21, 1, 100, 0, 'fsxnet'))).toBe(true);
    expect(isSameFtnAddress(address(21, 1, 100, 0, 'fsxnet'), address(21, 1, 100, 0, 'araknet'))).toBe(false);
    expect(isSameFtnAddress(address(21, 1, 100), address(21, 1, 100, 1))).toBe(false);
  });
});

describe('SEEN-BY and PATH lists', () => {
  it('carries the net over to entries of a node alone', () => {
    expect(parseNetNodes('1/100 200 2/5 6')).toEqual([
      { net: 1, node: 100 },
      { net: 1, node: 200 },
      { net: 2, node: 5 },
      { net: 2, node: 6 },
    ]);
    expect(parseNetNodes('  1/100   200 ')).toEqual([
      { net: 1, node: 100 },
      { net: 1, node: 200 },
    ]);
    expect(parseNetNodes('')).toEqual([]);
  });

  it('writes the short form: a node alone while the net stays the same', () => {
    expect(
      formatNetNodes([
        { net: 1, node: 100 },
        { net: 1, node: 200 },
        { net: 2, node: 5 },
        { net: 1, node: 3 },
      ]),
    ).toBe('1/100 200 2/5 1/3');
    expect(formatNetNodes([])).toBe('');
  });

  it.each([
    ['100 1/200', 'SEEN-BY entry "100" is a node with no net before it'],
    ['1/100 1/100.1', 'SEEN-BY entry "1/100.1" is not net/node nor a node'],
    ['21:1/100', 'SEEN-BY entry "21:1/100" is not net/node nor a node'],
    ['1/100 x', 'SEEN-BY entry "x" is not net/node nor a node'],
    ['1/40000', '"1/40000": the node 40000 is outside 0–32767'],
  ])('refuses %j', (text, reason) => {
    expectFtnError(() => parseNetNodes(text, 'SEEN-BY'), reason);
  });

  it('reads back every list it writes', () => {
    fc.assert(
      fc.property(fc.array(netNodeArbitrary, { maxLength: 40 }), (entries) => {
        expect(parseNetNodes(formatNetNodes(entries))).toEqual(entries);
      }),
    );
  });

  it('orders net/node pairs by net, then node', () => {
    expect(compareNetNodes({ net: 1, node: 200 }, { net: 2, node: 1 })).toBeLessThan(0);
    expect(compareNetNodes({ net: 2, node: 1 }, { net: 2, node: 1 })).toBe(0);
  });
});
