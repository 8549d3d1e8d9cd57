import fc from 'fast-check';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { formatNetNodes, type NetNode } from '../../src/ftn/ftn-address.js';
import { chooseCharset, knownCharsets } from '../../src/ftn/ftn-charset.js';
import { FtnFormatError } from '../../src/ftn/ftn-format-error.js';
import {
  formatMsgId,
  type Kludge,
  kludgeValue,
  type MessageBody,
  parseMsgId,
  readMessageBody,
  writeMessageBody,
} from '../../src/ftn/message-body.js';
import { address, expectFtnError, ftnAddressArbitrary, ftnErrorOf, netNodeArbitrary } from './ftn-fixtures.js';

const latin1 = (text: string) => Buffer.from(text, 'latin1');

/** An echomail body as FTS-0004 and FTS-0009 lay it out, every line ending in CR. */
const ECHOMAIL_BODY = latin1(
  [
    'AREA:FSX_GEN',
    '\x01MSGID: 21:1/999 0badcafe',
    '\x01REPLY: 21:1/100 12345678',
    '\x01PID: baud 0.1.0',
    '\x01TZUTC: 0100',
    'Hello all.',
    '',
    'A second paragraph.',
    '--- baud',
    ' * Origin: The Board (21:1/999)',
    'SEEN-BY: 1/100 999 3/1',
    'SEEN-BY: 3/2',
    '\x01PATH: 1/999',
    '',
  ].join('\r'),
);

const ECHOMAIL_PARTS: MessageBody = {
  area: 'FSX_GEN',
  kludges: [
    { name: 'MSGID', value: '21:1/999 0badcafe' },
    { name: 'REPLY', value: '21:1/100 12345678' },
    { name: 'PID', value: 'baud 0.1.0' },
    { name: 'TZUTC', value: '0100' },
  ],
  text: 'Hello all.\n\nA second paragraph.',
  tearLine: 'baud',
  origin: { text: 'The Board', address: address(21, 1, 999) },
  seenBy: [
    { net: 1, node: 100 },
    { net: 1, node: 999 },
    { net: 3, node: 1 },
    { net: 3, node: 2 },
  ],
  path: [{ net: 1, node: 999 }],
};

describe('reading message bodies', () => {
  it('splits an echomail body into AREA, kludges, text, tear, origin, SEEN-BY and PATH', () => {
    expect(readMessageBody(ECHOMAIL_BODY)).toEqual({ ...ECHOMAIL_PARTS, charset: 'CP437' });
  });

  it('reads a netmail body with INTL, FMPT, TOPT and Via lines after the text', () => {
    const body = latin1(
      '\x01INTL 21:1/100 21:1/999\r\x01FMPT 2\r\x01TOPT 7\r\x01MSGID: 21:1/999.2 00000001\rHi there\r\x01Via 21:1/100 @20261127.100000 hub\r',
    );
    expect(readMessageBody(body)).toEqual({
      area: null,
      kludges: [
        { name: 'INTL', value: '21:1/100 21:1/999' },
        { name: 'FMPT', value: '2' },
        { name: 'TOPT', value: '7' },
        { name: 'MSGID', value: '21:1/999.2 00000001' },
        { name: 'Via', value: '21:1/100 @20261127.100000 hub' },
      ],
      text: 'Hi there',
      tearLine: null,
      origin: null,
      seenBy: [],
      path: [],
      charset: 'CP437',
    });
  });

  it('decodes by CHRS: CP437 by default, UTF-8, LATIN-1, CHARSET as an old name, any level', () => {
    expect(readMessageBody(Buffer.from([0x43, 0x61, 0x66, 0x82, 0x0d])).text).toBe('Café');
    const utf8 = Buffer.concat([latin1('\x01CHRS: UTF-8 4\r'), Buffer.from('Café ☺\r', 'utf8')]);
    expect(readMessageBody(utf8)).toMatchObject({ text: 'Café ☺', charset: 'UTF-8', kludges: [] });
    const latin = Buffer.concat([latin1('\x01CHRS: LATIN-1 2\r'), Buffer.from([0x43, 0x61, 0x66, 0xe9])]);
    expect(readMessageBody(latin)).toMatchObject({ text: 'Café', charset: 'LATIN-1' });
    const charset = Buffer.concat([latin1('\x01CHARSET: utf-8 2\r'), Buffer.from('ß', 'utf8')]);
    expect(readMessageBody(charset)).toMatchObject({ text: 'ß', charset: 'UTF-8' });
    const russian = Buffer.concat([latin1('\x01CHRS: CP866 2\r'), iconv.encode('Привет', 'cp866')]);
    expect(readMessageBody(russian)).toMatchObject({ text: 'Привет', charset: 'CP866' });
  });

  it('reads an unknown CHRS as CP437 and keeps it among the kludges', () => {
    const body = Buffer.concat([latin1('\x01CHRS: SWEDISH 1\r'), Buffer.from([0x82])]);
    expect(readMessageBody(body)).toMatchObject({
      text: 'é',
      charset: 'CP437',
      kludges: [{ name: 'CHRS', value: 'SWEDISH 1' }],
    });
  });

  it('decodes every charset it knows', () => {
    for (const charset of knownCharsets()) {
      const body = readMessageBody(latin1(`\x01CHRS: ${charset} 2\rHello\r`));
      expect(body).toMatchObject({ text: 'Hello', charset });
    }
  });

  it('ends lines at CR, CRLF or a lone LF, and keeps soft CRs (0x8D) as characters', () => {
    expect(readMessageBody(latin1('a\r\nb\nc\rd')).text).toBe('a\nb\nc\nd');
    expect(readMessageBody(Buffer.from([0x61, 0x8d, 0x62])).text).toBe('aìb');
  });

  it('takes ^A lines inside the text for kludges, and AREA only as the first line', () => {
    expect(readMessageBody(latin1('Hi\r\x01X-FOO: bar\rthere\rAREA:NOT_IT\r'))).toMatchObject({
      area: null,
      kludges: [{ name: 'X-FOO', value: 'bar' }],
      text: 'Hi\nthere\nAREA:NOT_IT',
    });
  });

  it('keeps an origin line without an address as text', () => {
    expect(readMessageBody(latin1('Hi\r * Origin: somewhere (not an address)\r')).origin).toEqual({
      text: 'somewhere (not an address)',
      address: null,
    });
    expect(readMessageBody(latin1('Hi\r * Origin: a (b) (21:1/100.1@fsxnet)\r')).origin).toEqual({
      text: 'a (b)',
      address: address(21, 1, 100, 1, 'fsxnet'),
    });
  });

  it('names the line of a SEEN-BY or PATH entry that is not net/node', () => {
    expectFtnError(
      () => readMessageBody(latin1('Hi\rSEEN-BY: 1/100 2:3/4\r')),
      'SEEN-BY line: SEEN-BY entry "2:3/4" is not net/node nor a node',
    );
    expectFtnError(
      () => readMessageBody(latin1('Hi\r\x01PATH: 100\r')),
      'PATH line: PATH entry "100" is a node with no net before it',
    );
    expectFtnError(() => readMessageBody(latin1('Hi\0there')), 'message body: holds a NUL byte');
  });
});

describe('writing message bodies', () => {
  it('writes the parts back in FTS-0004 order with CHRS, every line ending in CR', () => {
    const written = writeMessageBody(ECHOMAIL_PARTS, 'CP437');
    expect(written.toString('latin1')).toBe(
      [
        'AREA:FSX_GEN',
        '\x01MSGID: 21:1/999 0badcafe',
        '\x01REPLY: 21:1/100 12345678',
        '\x01PID: baud 0.1.0',
        '\x01TZUTC: 0100',
        '\x01CHRS: CP437 2',
        'Hello all.',
        '',
        'A second paragraph.',
        '--- baud',
        ' * Origin: The Board (21:1/999)',
        'SEEN-BY: 1/100 999 3/1 2',
        '\x01PATH: 1/999',
        '',
      ].join('\r'),
    );
  });

  it('writes INTL, FMPT, TOPT and Via without a colon, a bare tear line as ---', () => {
    const written = writeMessageBody(
      {
        area: null,
        kludges: [
          { name: 'INTL', value: '21:1/100 21:1/999' },
          { name: 'FMPT', value: '2' },
          { name: 'Via', value: 'x' },
        ],
        text: 'Hi',
        tearLine: '',
        origin: null,
        seenBy: [],
        path: [],
      },
      'UTF-8',
    );
    expect(written.toString('latin1')).toBe(
      '\x01INTL 21:1/100 21:1/999\r\x01FMPT 2\r\x01Via x\r\x01CHRS: UTF-8 4\rHi\r---\r',
    );
  });

  it('turns LF, CRLF and CR in the text into CR', () => {
    const written = writeMessageBody({ ...ECHOMAIL_PARTS, text: 'a\nb\r\nc\rd', kludges: [] }, 'CP437');
    expect(written.toString('latin1')).toContain('\x01CHRS: CP437 2\ra\rb\rc\rd\r--- baud\r');
  });

  it('encodes in the charset it is given', () => {
    const cp437 = writeMessageBody({ ...ECHOMAIL_PARTS, text: 'Café' }, 'CP437');
    const utf8 = writeMessageBody({ ...ECHOMAIL_PARTS, text: 'Café' }, 'UTF-8');
    expect(cp437.includes(Buffer.from([0x43, 0x61, 0x66, 0x82, 0x0d]))).toBe(true);
    expect(utf8.includes(Buffer.from('\x01CHRS: UTF-8 4\rCafé\r', 'utf8'))).toBe(true);
  });

  it('wraps SEEN-BY and PATH at 79 characters, each line starting with a full net/node', () => {
    const seenBy: NetNode[] = Array.from({ length: 60 }, (_, index) => ({
      net: 100 + Math.floor(index / 7),
      node: index,
    }));
    const path: NetNode[] = Array.from({ length: 30 }, (_, index) => ({ net: 5000 + index, node: 1 }));
    const written = writeMessageBody({ ...ECHOMAIL_PARTS, seenBy, path }, 'CP437').toString('latin1');
    const seenByLines = written.split('\r').filter((line) => line.startsWith('SEEN-BY:'));
    const pathLines = written.split('\r').filter((line) => line.startsWith('\x01PATH:'));
    expect(seenByLines.length).toBeGreaterThan(1);
    expect(pathLines.length).toBeGreaterThan(1);
    for (const line of [...seenByLines, ...pathLines]) {
      expect(line.length).toBeLessThanOrEqual(79);
      expect(line.startsWith('\x01') ? line.slice(1) : line).toMatch(/^(SEEN-BY:|PATH:) [0-9]+\/[0-9]+/);
    }
    expect(seenByLines.join(' ')).toContain(formatNetNodes(seenBy.slice(0, 7)));
    expect(readMessageBody(Buffer.from(written, 'latin1'))).toMatchObject({ seenBy, path });
  });

  it('cuts the origin text so the origin line keeps within 79 characters', () => {
    const written = writeMessageBody(
      { ...ECHOMAIL_PARTS, origin: { text: 'B'.repeat(100), address: address(21, 1, 999) } },
      'CP437',
    ).toString('latin1');
    const originLine = written.split('\r').find((line) => line.startsWith(' * Origin:'));
    expect(originLine).toBe(` * Origin: ${'B'.repeat(57)} (21:1/999)`);
    expect(originLine).toHaveLength(79);
  });

  it.each<[string, Partial<MessageBody>, string]>([
    [
      'a ^A line in the text',
      { text: 'hi\n\x01MSGID: x' },
      'a line of the text starts with ^A (0x01), which readers would hide as a kludge',
    ],
    ['a NUL in the text', { text: 'a\0b' }, 'the text holds a NUL'],
    [
      'PATH among the kludges',
      { kludges: [{ name: 'PATH', value: '1/1' }] },
      'a PATH kludge is written from path, not from kludges',
    ],
    [
      'CHRS among the kludges',
      { kludges: [{ name: 'CHRS', value: 'CP437 2' }] },
      'a CHRS kludge is written from the charset, not from kludges',
    ],
    [
      'a kludge name with a colon',
      { kludges: [{ name: 'A:B', value: '' }] },
      'the kludge name "A:B" is not printable ASCII without \':\'',
    ],
    [
      'a line end in a kludge',
      { kludges: [{ name: 'PID', value: 'a\rb' }] },
      "the PID kludge's value holds a line end or NUL",
    ],
    ['an area tag with a space', { area: 'FSX GEN' }, 'the area tag "FSX GEN" is not printable ASCII without spaces'],
    ['a line end in the tear line', { tearLine: 'a\nb' }, 'the tear line holds a line end or NUL'],
    [
      'a last line like a tear line, with no tear line',
      { text: 'hi\n--- me', tearLine: null },
      'the last line of the text would read back as the tear line: give the message a tear line',
    ],
    [
      'a last line like an origin line, with neither tear nor origin',
      { text: 'hi\n * Origin: x (1:2/3)', tearLine: null, origin: null },
      'the last line of the text would read back as an origin or SEEN-BY line: give the message a tear line',
    ],
    [
      'an origin without address that ends like one',
      { origin: { text: 'x (1:2/3)', address: null } },
      'an origin without an address may not end in "(address)": it would read back as its address',
    ],
  ])('refuses %s', (_, change, reason) => {
    expectFtnError(
      () => writeMessageBody({ ...ECHOMAIL_PARTS, ...change }, 'CP437'),
      `cannot write the message body: ${reason}`,
    );
  });

  it('reads back every body it writes, in the charset chosen for it, and writes it again byte for byte', () => {
    const pool = [...'abcXYZ 019-*:()/.', 'é', 'ß', '░', '☺', '€', 'Ж', '😀', '\t', '\x1b'];
    const text = (maxLength: number) => fc.string({ unit: fc.constantFrom(...pool), maxLength });
    const line = fc.oneof(
      { weight: 8, arbitrary: text(60) },
      { weight: 1, arbitrary: fc.constantFrom('---', '--- x', ' * Origin: x (1:2/3)', 'SEEN-BY: 1/2', 'AREA:X', '') },
    );
    const kludge: fc.Arbitrary<Kludge> = fc.record({
      name: fc.oneof(
        fc.constantFrom('MSGID', 'REPLY', 'PID', 'TID', 'TZUTC', 'INTL', 'FMPT', 'TOPT', 'Via'),
        fc
          .stringMatching(/^[A-Za-z][A-Za-z0-9_.-]{0,10}$/)
          .filter((name) => !['PATH', 'CHRS', 'CHARSET'].includes(name.toUpperCase())),
      ),
      value: text(40),
    });
    const body: fc.Arbitrary<MessageBody> = fc.record({
      area: fc.option(fc.stringMatching(/^[\x21-\x7e]{1,30}$/), { nil: null }),
      kludges: fc.array(kludge, { maxLength: 6 }),
      text: fc.array(line, { maxLength: 8 }).map((lines) => lines.join('\n')),
      tearLine: fc.option(text(30), { nil: null }),
      origin: fc.option(fc.record({ text: text(30), address: fc.option(ftnAddressArbitrary, { nil: null }) }), {
        nil: null,
      }),
      seenBy: fc.array(netNodeArbitrary, { maxLength: 40 }),
      path: fc.array(netNodeArbitrary, { maxLength: 20 }),
    });
    fc.assert(
      fc.property(body, (parts) => {
        const charset = chooseCharset([
          parts.text,
          parts.tearLine ?? '',
          parts.origin?.text ?? '',
          ...parts.kludges.map((k) => k.value),
        ]);
        let written: Buffer;
        try {
          written = writeMessageBody(parts, charset);
        } catch (error) {
          // The documented refusals: text that would read back as something else.
          expect(
            ftnErrorOf(() => {
              throw error;
            }).message,
          ).toMatch(/would read back/);
          return;
        }
        const read = readMessageBody(written);
        expect(read).toEqual({ ...parts, charset });
        expect(writeMessageBody(read, charset)).toEqual(written);
      }),
      { numRuns: 300 },
    );
  });
});

describe('MSGID', () => {
  it('writes the address and the serial as 8 lower-case hex digits', () => {
    expect(formatMsgId(address(21, 1, 999), 0xbadcafe)).toBe('21:1/999 0badcafe');
    expect(formatMsgId(address(21, 1, 999, 2, 'fsxnet'), 0xffffffff)).toBe('21:1/999.2@fsxnet ffffffff');
    expectFtnError(
      () => formatMsgId(address(21, 1, 999), 2 ** 32),
      'cannot write the MSGID serial 4294967296: not a whole number in 0–0xffffffff',
    );
  });

  it('reads plain and quoted origins, and nothing else', () => {
    expect(parseMsgId('21:1/999 0BADCAFE')).toEqual({ origin: '21:1/999', serial: '0badcafe' });
    expect(parseMsgId('"some ""net"" address" 12345678')).toEqual({ origin: 'some "net" address', serial: '12345678' });
    expect(parseMsgId('21:1/999@fsxnet 1234abcd')).toEqual({ origin: '21:1/999@fsxnet', serial: '1234abcd' });
    expect(parseMsgId('21:1/999 123')).toBeNull();
    expect(parseMsgId('0badcafe')).toBeNull();
    expect(parseMsgId('"unclosed 12345678')).toBeNull();
  });

  it('finds the first kludge of a name', () => {
    expect(kludgeValue(ECHOMAIL_PARTS.kludges, 'MSGID')).toBe('21:1/999 0badcafe');
    expect(kludgeValue(ECHOMAIL_PARTS.kludges, 'msgid')).toBeNull();
  });

  it('is one error class for all of it', () => {
    expect(ftnErrorOf(() => readMessageBody(latin1('\rSEEN-BY: x\r')))).toBeInstanceOf(FtnFormatError);
  });
});
