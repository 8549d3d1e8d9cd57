import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitsCp437 } from '../../src/ftn/ftn-charset.js';
import {
  ATTRIBUTE_PRIVATE,
  type EchomailDraft,
  type NetmailDraft,
  netmailAddressesOf,
  packEchomail,
  packNetmail,
  unpackMessage,
} from '../../src/ftn/ftn-message.js';
import { readMessageBody } from '../../src/ftn/message-body.js';
import { readPacket, writePacket } from '../../src/ftn/packet.js';
import { address, expectFtnError, ftnDateTimeArbitrary, netNodeArbitrary } from './ftn-fixtures.js';

const WRITTEN_AT = { year: 2026, month: 11, day: 27, hour: 10, minute: 30, second: 5 };

const ECHOMAIL: EchomailDraft = {
  area: 'FSX_GEN',
  origin: address(21, 1, 999, 0, 'fsxnet'),
  destination: address(21, 1, 100),
  fromName: 'Sysop',
  toName: 'All',
  subject: 'Hello',
  text: 'First line\nSecond line',
  writtenAt: WRITTEN_AT,
  utcOffsetMinutes: 60,
  msgIdSerial: 0xbadcafe,
  replyTo: '21:1/100 12345678',
  pid: 'baud 0.1.0',
  tearLine: 'baud',
  originLine: 'The Board',
  seenBy: [
    { net: 1, node: 100 },
    { net: 1, node: 999 },
  ],
  path: [{ net: 1, node: 999 }],
};

const NETMAIL: NetmailDraft = {
  origin: address(21, 1, 999, 2),
  destination: address(21, 3, 40, 7),
  fromName: 'Ann',
  toName: 'Bob',
  subject: 'Hi Bob',
  text: 'Private words',
  writtenAt: WRITTEN_AT,
  utcOffsetMinutes: null,
  msgIdSerial: 1,
  replyTo: null,
  pid: null,
  tearLine: 'baud',
  originLine: null,
};

describe('packing echomail', () => {
  it('packs header fields and an FTS-0004 body in CP437 when every character fits', () => {
    const packed = packEchomail({ ...ECHOMAIL, text: 'Café ░' });
    expect({ ...packed, body: packed.body.toString('latin1') }).toEqual({
      origNode: 999,
      destNode: 100,
      origNet: 1,
      destNet: 1,
      attribute: 0,
      cost: 0,
      dateTime: '27 Nov 26  10:30:05',
      toName: Buffer.from('All'),
      fromName: Buffer.from('Sysop'),
      subject: Buffer.from('Hello'),
      body: [
        'AREA:FSX_GEN',
        '\x01MSGID: 21:1/999 0badcafe',
        '\x01REPLY: 21:1/100 12345678',
        '\x01PID: baud 0.1.0',
        '\x01TZUTC: 0100',
        '\x01CHRS: CP437 2',
        'Caf\x82 \xb0',
        '--- baud',
        ' * Origin: The Board (21:1/999)',
        'SEEN-BY: 1/100 999',
        '\x01PATH: 1/999',
        '',
      ].join('\r'),
    });
  });

  it('packs everything in UTF-8 when one character of names, subject or text lacks a place in CP437', () => {
    for (const change of [
      { text: 'Smile ☺' },
      { fromName: 'Zoë ✓' },
      { subject: '€ prices' },
      { originLine: 'Bοard' },
    ]) {
      const packed = packEchomail({ ...ECHOMAIL, ...change });
      const unpacked = unpackMessage(packed);
      expect(unpacked.body.charset).toBe('UTF-8');
      expect(unpacked).toMatchObject({
        fromName: change.fromName ?? 'Sysop',
        subject: change.subject ?? 'Hello',
        body: { text: change.text ?? ECHOMAIL.text },
      });
    }
  });

  it('cuts names and subject at a character boundary to fit their fields', () => {
    const packed = packEchomail({ ...ECHOMAIL, fromName: 'ä'.repeat(40), subject: `${'a'.repeat(70)}€€` });
    expect(packed.fromName).toEqual(Buffer.from('ä'.repeat(17), 'utf8'));
    expect(packed.subject).toEqual(Buffer.from(`${'a'.repeat(70)}`, 'utf8'));
    const cp437 = packEchomail({ ...ECHOMAIL, toName: 'x'.repeat(50) });
    expect(cp437.toName).toEqual(Buffer.from('x'.repeat(35)));
  });

  it('refuses what it cannot write, naming it', () => {
    expectFtnError(
      () => packEchomail({ ...ECHOMAIL, text: 'a\n\x01b' }),
      'cannot write the message body: a line of the text starts with ^A (0x01), which readers would hide as a kludge',
    );
    expectFtnError(
      () => packEchomail({ ...ECHOMAIL, writtenAt: { ...WRITTEN_AT, year: 2090 } }),
      'cannot write the date {"year":2090,"month":11,"day":27,"hour":10,"minute":30,"second":5}: no such date in 1980–2079',
    );
  });
});

describe('packing netmail', () => {
  it('writes INTL, FMPT and TOPT for points, the message private, no origin line unless asked', () => {
    const packed = packNetmail(NETMAIL);
    expect(packed).toMatchObject({ origNode: 999, origNet: 1, destNode: 40, destNet: 3, attribute: ATTRIBUTE_PRIVATE });
    expect(packed.body.toString('latin1')).toBe(
      [
        '\x01INTL 21:3/40 21:1/999',
        '\x01FMPT 2',
        '\x01TOPT 7',
        '\x01MSGID: 21:1/999.2 00000001',
        '\x01CHRS: CP437 2',
        'Private words',
        '--- baud',
        '',
      ].join('\r'),
    );
    const withOrigin = packNetmail({ ...NETMAIL, originLine: 'The Board', destination: address(21, 3, 40) });
    expect(withOrigin.body.toString('latin1')).toBe(
      [
        '\x01INTL 21:3/40 21:1/999',
        '\x01FMPT 2',
        '\x01MSGID: 21:1/999.2 00000001',
        '\x01CHRS: CP437 2',
        'Private words',
        '--- baud',
        ' * Origin: The Board (21:1/999.2)',
        '',
      ].join('\r'),
    );
  });

  it('finds both full addresses again from INTL, FMPT and TOPT', () => {
    const packed = packNetmail(NETMAIL);
    const header = { origin: address(21, 1, 999), destination: address(21, 1, 100) };
    expect(netmailAddressesOf(packed, readMessageBody(packed.body), header)).toEqual({
      origin: address(21, 1, 999, 2),
      destination: address(21, 3, 40, 7),
    });
  });

  it('takes the zones from the packet header when there is no INTL', () => {
    const packed = { ...packNetmail(NETMAIL), body: Buffer.from('\x01TOPT 3\rhi\r', 'latin1') };
    const header = { origin: address(2, 5, 6), destination: address(3, 7, 8) };
    expect(netmailAddressesOf(packed, readMessageBody(packed.body), header)).toEqual({
      origin: address(2, 1, 999),
      destination: address(3, 3, 40, 3),
    });
  });

  it.each([
    ['\x01INTL 21:3/40\r', 'netmail INTL "21:3/40" is not "<to> <from>"'],
    ['\x01INTL 21:3/40.1 21:1/999\r', 'netmail INTL "21:3/40.1 21:1/999" holds more than zone:net/node'],
    ['\x01INTL 21:3/x 21:1/999\r', '"21:3/x" is not an FTN address (zone:net/node[.point][@domain])'],
    ['\x01FMPT two\r', 'netmail FMPT "two" is not a point number'],
    ['\x01TOPT 99999\r', 'netmail TOPT "99999" is not a point number'],
  ])('refuses the addressing kludges %j', (kludges, reason) => {
    const packed = { ...packNetmail(NETMAIL), body: Buffer.from(`${kludges}hi\r`, 'latin1') };
    const header = { origin: address(21, 1, 999), destination: address(21, 1, 100) };
    expectFtnError(() => netmailAddressesOf(packed, readMessageBody(packed.body), header), reason);
  });
});

describe('unpacking', () => {
  it('decodes names and subject in the charset of a CP437 body without CHRS', () => {
    const unpacked = unpackMessage({
      ...packEchomail(ECHOMAIL),
      fromName: Buffer.from([0x4a, 0x81, 0x72, 0x67, 0x65, 0x6e]),
      body: Buffer.from('Hi\r', 'latin1'),
      dateTime: 'garbage',
    });
    expect(unpacked).toMatchObject({ fromName: 'Jürgen', writtenAt: null, body: { charset: 'CP437', text: 'Hi' } });
  });

  it('reads back, through a packet, every echomail it packs', () => {
    const pool = [...'abc XYZ 09-*:.', 'é', 'ß', '░', '☺', '€', 'Ж', '😀'];
    const text = (minLength: number, maxLength: number) =>
      fc.string({ unit: fc.constantFrom(...pool), minLength, maxLength });
    const draft: fc.Arbitrary<EchomailDraft> = fc.record({
      area: fc.stringMatching(/^[A-Z0-9_.-]{1,20}$/),
      origin: fc.constant(address(21, 1, 999)),
      destination: fc.constant(address(21, 1, 100)),
      fromName: text(0, 8), // 8 characters of at most 4 UTF-8 bytes fit 35 bytes: never cut
      toName: text(0, 8),
      subject: text(0, 17),
      text: fc.array(text(0, 80), { maxLength: 6 }).map((lines) => lines.join('\n')),
      writtenAt: ftnDateTimeArbitrary,
      utcOffsetMinutes: fc.option(fc.integer({ min: -1439, max: 1439 }), { nil: null }),
      msgIdSerial: fc.integer({ min: 0, max: 0xffffffff }),
      replyTo: fc.option(fc.constant('21:1/100 0000abcd'), { nil: null }),
      pid: fc.option(fc.constant('baud 0.1.0'), { nil: null }),
      tearLine: text(0, 20),
      originLine: text(0, 30),
      seenBy: fc.array(netNodeArbitrary, { maxLength: 30 }),
      path: fc.array(netNodeArbitrary, { maxLength: 10 }),
    });
    fc.assert(
      fc.property(draft, (echomail) => {
        const packet = writePacket(
          { origin: echomail.origin, destination: echomail.destination, createdAt: WRITTEN_AT, password: 'pw' },
          [packEchomail(echomail)],
        );
        const [message] = [...readPacket(packet).messages];
        if (!message) throw new Error('the packet lost its message');
        const unpacked = unpackMessage(message);
        const isCp437 = [
          echomail.fromName,
          echomail.toName,
          echomail.subject,
          echomail.text,
          echomail.tearLine,
          echomail.originLine,
        ].every(fitsCp437);
        expect(unpacked).toEqual({
          fromName: echomail.fromName,
          toName: echomail.toName,
          subject: echomail.subject,
          writtenAt: echomail.writtenAt,
          body: {
            area: echomail.area,
            kludges: expect.arrayContaining([
              { name: 'MSGID', value: `21:1/999 ${echomail.msgIdSerial.toString(16).padStart(8, '0')}` },
            ]),
            text: echomail.text,
            tearLine: echomail.tearLine,
            origin: { text: echomail.originLine, address: address(21, 1, 999) },
            seenBy: echomail.seenBy,
            path: echomail.path,
            charset: isCp437 ? 'CP437' : 'UTF-8',
          },
        });
      }),
      { numRuns: 200 },
    );
  });
});
