import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_BODY_BYTES,
  encodePackedMessage,
  formatPacketFileName,
  isPacketFileName,
  MAX_NAME_BYTES,
  MAX_SUBJECT_BYTES,
  type PackedMessage,
  type PacketHeaderDraft,
  readPacket,
  readPacketHeader,
  writePacket,
} from '../../src/ftn/packet.js';
import { address, expectFtnError, ftnAddressArbitrary, ftnDateTimeArbitrary } from './ftn-fixtures.js';

/** Little-endian 16-bit words, as the FTS-0001 layouts draw them. */
const words = (...values: number[]) => Buffer.from(values.flatMap((value) => [value & 0xff, value >> 8]));
const ascii = (text: string) => Buffer.from(text, 'latin1');
const nul = Buffer.alloc(1);

/**
 * A type 2+ header laid out field by field as FSC-0048 draws it, from 2:280/5555.3 to
 * 21:1/100: a point, so origNet is -1 and AuxNet holds 280.
 */
const FSC_0048_HEADER = Buffer.concat([
  words(5555, 100), //                      0 origNode, 2 destNode
  words(2026, 10, 27, 13, 45, 30), //       4 year, 6 month (0-11: November), 8 day, 10 hour, 12 minute, 14 second
  words(33600, 2), //                      16 baud, 18 packet type 2
  words(0xffff, 1), //                     20 origNet (-1: a point), 22 destNet
  Buffer.from([0x34, 0x01]), //            24 product code (low), 25 revision major
  ascii('SeCr3t!'),
  nul, //                                  26 password, 8 bytes NUL-padded
  words(2, 21), //                         34 origZone, 36 destZone (as in QMail)
  words(280), //                           38 AuxNet
  Buffer.from([0x00, 0x01]), //            40 CWvalidationCopy, byte-swapped (high, low)
  Buffer.from([0x12, 0x07]), //            42 product code (high), revision minor
  words(0x0001), //                        44 CapabilWord: type 2+
  words(2, 21), //                         46 origZone, 48 destZone
  words(3, 0), //                          50 origPoint, 52 destPoint
  Buffer.from([0x67, 0x75, 0x6c, 0x00]), // 54 product data
]);

/** A packed message as FTS-0001 draws it. */
const FTS_0001_MESSAGE = Buffer.concat([
  words(2, 5555, 100, 280, 1, 0x0001, 0), // type 2, origNode, destNode, origNet, destNet, attribute, cost
  ascii('27 Nov 26  13:45:30'),
  nul, //                                    DateTime, 20 bytes
  ascii('All'),
  nul,
  ascii('Jan'),
  nul,
  ascii('Hello'),
  nul,
  ascii('AREA:FSX_GEN\rHi\r'),
  nul,
]);

const KNOWN_PACKET = Buffer.concat([FSC_0048_HEADER, FTS_0001_MESSAGE, words(0)]);

const KNOWN_HEADER: PacketHeaderDraft = {
  origin: address(2, 280, 5555, 3),
  destination: address(21, 1, 100),
  createdAt: { year: 2026, month: 11, day: 27, hour: 13, minute: 45, second: 30 },
  password: 'SeCr3t!',
  baud: 33600,
  productCode: 0x1234,
  revisionMajor: 1,
  revisionMinor: 7,
  productData: 0x006c7567,
};

const KNOWN_MESSAGE: PackedMessage = {
  origNode: 5555,
  destNode: 100,
  origNet: 280,
  destNet: 1,
  attribute: 1,
  cost: 0,
  dateTime: '27 Nov 26  13:45:30',
  toName: ascii('All'),
  fromName: ascii('Jan'),
  subject: ascii('Hello'),
  body: ascii('AREA:FSX_GEN\rHi\r'),
};

describe('reading packets', () => {
  it('reads a type 2+ header as FSC-0048 lays it out, a point origin from AuxNet', () => {
    expect(readPacketHeader(KNOWN_PACKET)).toEqual({
      ...KNOWN_HEADER,
      format: 'type-2+',
      capabilityWord: 1,
    });
  });

  it('reads the packed messages as FTS-0001 lays them out', () => {
    expect([...readPacket(KNOWN_PACKET).messages]).toEqual([KNOWN_MESSAGE]);
  });

  it('reads a packet of no messages', () => {
    expect([...readPacket(Buffer.concat([FSC_0048_HEADER, words(0)])).messages]).toEqual([]);
  });

  it('reads a plain type 2 header when the capability word and its copy disagree', () => {
    const header = Buffer.from(FSC_0048_HEADER);
    header.writeUInt16LE(280, 20);
    header.writeUInt16LE(0x0001, 40); // not byte-swapped: no valid capability word
    expect(readPacketHeader(header)).toEqual({
      format: 'type-2',
      origin: address(2, 280, 5555),
      destination: address(21, 1, 100),
      createdAt: KNOWN_HEADER.createdAt,
      baud: 33600,
      productCode: 0x34,
      revisionMajor: 1,
      revisionMinor: 0,
      password: 'SeCr3t!',
      capabilityWord: 0,
      productData: 0,
    });
  });

  it('fills the zones from the FTS-0001 fields when the FSC-0039 ones are 0', () => {
    const header = Buffer.from(FSC_0048_HEADER);
    header.writeUInt16LE(0, 46);
    header.writeUInt16LE(0, 48);
    expect(readPacketHeader(header).origin.zone).toBe(2);
    expect(readPacketHeader(header).destination.zone).toBe(21);
  });

  it('reads an 8-character password that has no NUL', () => {
    const header = Buffer.from(FSC_0048_HEADER);
    header.write('ABCDEFGH', 26, 'latin1');
    expect(readPacketHeader(header).password).toBe('ABCDEFGH');
  });

  it('reads the messages again on each iteration, as views into the packet', () => {
    const packet = readPacket(KNOWN_PACKET);
    const [first] = [...packet.messages];
    expect([...packet.messages]).toHaveLength(1);
    expect(first?.body.buffer).toBe(KNOWN_PACKET.buffer);
  });

  it('reads a packet of a million messages one at a time', () => {
    const message = encodePackedMessage({ ...KNOWN_MESSAGE, toName: ascii(''), subject: ascii(''), body: ascii('') });
    const count = 1_000_000;
    const packet = Buffer.alloc(FSC_0048_HEADER.length + count * message.length + 2);
    FSC_0048_HEADER.copy(packet);
    for (let index = 0; index < count; index++) message.copy(packet, FSC_0048_HEADER.length + index * message.length);
    let read = 0;
    for (const _ of readPacket(packet).messages) read += 1;
    expect(read).toBe(count);

    // Lazy: the first message comes out although the packet's end is broken.
    packet.writeUInt16LE(0x0303, packet.length - 2);
    const iterator = readPacket(packet).messages[Symbol.iterator]();
    expect(iterator.next().value?.fromName.toString()).toBe('Jan');
  }, 120_000);
});

describe('writing packets', () => {
  it('writes the header and messages byte for byte as the standards lay them out', () => {
    expect(writePacket(KNOWN_HEADER, [KNOWN_MESSAGE])).toEqual(KNOWN_PACKET);
  });

  it('writes a node origin with its net and AuxNet 0, and defaults for what a draft leaves out', () => {
    const packet = writePacket(
      {
        origin: address(21, 1, 999),
        destination: address(21, 1, 100, 4),
        createdAt: KNOWN_HEADER.createdAt,
        password: '',
      },
      [],
    );
    expect(packet).toEqual(
      Buffer.concat([
        words(999, 100, 2026, 10, 27, 13, 45, 30, 0, 2, 1, 1),
        Buffer.from([0xfe, 0]),
        Buffer.alloc(8),
        words(21, 21, 0),
        Buffer.from([0x00, 0x01, 0x00, 0x00]),
        words(1, 21, 21, 0, 4),
        Buffer.alloc(4),
        words(0),
      ]),
    );
  });

  it('reads back every header and message it writes, and writes them again byte for byte', () => {
    const bytes = (max: number) =>
      fc.uint8Array({ maxLength: max }).map((array) => Buffer.from(array.map((b) => b || 1)));
    const word = fc.integer({ min: 0, max: 0xffff });
    const message: fc.Arbitrary<PackedMessage> = fc.record({
      origNode: word,
      destNode: word,
      origNet: word,
      destNet: word,
      attribute: word,
      cost: word,
      dateTime: fc.stringMatching(/^[\x20-\x7e]{0,19}$/),
      toName: bytes(MAX_NAME_BYTES),
      fromName: bytes(MAX_NAME_BYTES),
      subject: bytes(MAX_SUBJECT_BYTES),
      body: bytes(2000),
    });
    const header: fc.Arbitrary<PacketHeaderDraft> = fc.record({
      origin: ftnAddressArbitrary.map((a) => ({ ...a, domain: null })),
      destination: ftnAddressArbitrary.map((a) => ({ ...a, domain: null })),
      createdAt: ftnDateTimeArbitrary,
      password: fc.stringMatching(/^[\x20-\x7e]{0,8}$/),
      baud: word,
      productCode: word,
      revisionMajor: fc.integer({ min: 0, max: 255 }),
      revisionMinor: fc.integer({ min: 0, max: 255 }),
      productData: fc.integer({ min: 0, max: 0xffffffff }),
    });
    fc.assert(
      fc.property(header, fc.array(message, { maxLength: 5 }), (draft, messages) => {
        const written = writePacket(draft, messages);
        const packet = readPacket(written);
        const read = [...packet.messages];
        expect(packet.header).toEqual({ ...draft, password: draft.password, format: 'type-2+', capabilityWord: 1 });
        expect(read).toEqual(messages);
        expect(writePacket(packet.header, read)).toEqual(written);
      }),
    );
  });

  it('refuses fields that do not fit their places', () => {
    const write = (message: Partial<PackedMessage>) => () =>
      writePacket(KNOWN_HEADER, [KNOWN_MESSAGE, { ...KNOWN_MESSAGE, ...message }]);
    expectFtnError(
      write({ subject: Buffer.alloc(72, 0x41) }),
      'cannot write packet message 2: the subject is 72 bytes; at most 71 fit',
    );
    expectFtnError(
      write({ toName: Buffer.alloc(36, 0x41) }),
      'cannot write packet message 2: the to name is 36 bytes; at most 35 fit',
    );
    expectFtnError(
      write({ fromName: ascii('a\0b') }),
      'cannot write packet message 2: the from name holds a NUL byte, which would end it early',
    );
    expectFtnError(
      write({ body: Buffer.alloc(DEFAULT_MAX_BODY_BYTES + 1, 0x41) }),
      'cannot write packet message 2: the body is 65537 bytes; at most 65536 fit',
    );
    expectFtnError(
      write({ dateTime: '27 Nov 2026  13:45:30' }),
      'cannot write packet message 2: the date "27 Nov 2026  13:45:30" is not 0–19 printable ASCII characters',
    );
    expectFtnError(write({ cost: 65536 }), 'cannot write the cost 65536: not a whole number in 0–65535');
    expectFtnError(
      () => writePacket({ ...KNOWN_HEADER, password: 'nine char' }, []),
      'cannot write the packet password "nine char": 0–8 printable ASCII characters',
    );
    expectFtnError(
      () => writePacket({ ...KNOWN_HEADER, createdAt: { ...KNOWN_HEADER.createdAt, month: 13 } }, []),
      'cannot write the packet date {"year":2026,"month":13,"day":27,"hour":13,"minute":45,"second":30}: no such date',
    );
  });

  it('takes a larger body when the limit is raised, on both sides', () => {
    const body = Buffer.alloc(100_000, 0x41);
    const written = writePacket(KNOWN_HEADER, [{ ...KNOWN_MESSAGE, body }], { maxBodyBytes: 100_000 });
    expect([...readPacket(written, { maxBodyBytes: 100_000 }).messages][0]?.body).toEqual(body);
    expectFtnError(
      () => [...readPacket(written).messages],
      'packet message 1 (byte 58): the body is longer than the 65536-byte limit (no NUL within it)',
    );
  });
});

describe('packet file names', () => {
  it('names a packet by 8 hex digits and recognises plain packet names only', () => {
    expect(formatPacketFileName(0xbadcafe)).toBe('0badcafe.pkt');
    expect(isPacketFileName('0BADCAFE.PKT')).toBe(true);
    expect(isPacketFileName('x_1-2.pkt')).toBe(true);
    for (const name of ['../x.pkt', 'a/b.pkt', 'a\\b.pkt', '/x.pkt', 'x.pkt.exe', '.pkt', 'a.b.pkt', 'C:x.pkt']) {
      expect(isPacketFileName(name)).toBe(false);
    }
  });
});
