import zlib from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readBundle, writeBundle } from '../../src/ftn/bundle.js';
import { FtnFormatError } from '../../src/ftn/ftn-format-error.js';
import { unpackMessage } from '../../src/ftn/ftn-message.js';
import { readMessageBody } from '../../src/ftn/message-body.js';
import { encodePackedMessage, type PackedMessage, readPacket, writePacket } from '../../src/ftn/packet.js';
import { buildZip, deflateRepeated } from '../support/zip-builder.js';
import { address, expectFtnError, ftnErrorOf } from './ftn-fixtures.js';

/**
 * What a hub, a peer or a man in the middle could send: every bad input ends as an
 * FtnFormatError with a reason, never another exception, a crash or a hang.
 */

const HEADER = {
  origin: address(21, 1, 100),
  destination: address(21, 1, 999),
  createdAt: { year: 2026, month: 11, day: 27, hour: 10, minute: 0, second: 0 },
  password: 'pw',
};

const MESSAGE: PackedMessage = {
  origNode: 100,
  destNode: 999,
  origNet: 1,
  destNet: 1,
  attribute: 0,
  cost: 0,
  dateTime: '27 Nov 26  10:00:00',
  toName: Buffer.from('All'),
  fromName: Buffer.from('Hub'),
  subject: Buffer.from('Subject'),
  body: Buffer.from(
    'AREA:FSX_GEN\r\x01MSGID: 21:1/100 00000001\rHello\r--- x\r * Origin: Hub (21:1/100)\rSEEN-BY: 1/100\r',
  ),
};

const PACKET = writePacket(HEADER, [MESSAGE, { ...MESSAGE, subject: Buffer.from('Second') }]);
/** Where the first message starts and where the subject of the first message starts. */
const FIRST_MESSAGE = 58;
const FIRST_SUBJECT = FIRST_MESSAGE + 34 + 4 + 4;
const SECOND_MESSAGE = FIRST_MESSAGE + encodePackedMessage(MESSAGE).length;

/** Reads a packet to its end, tossing nothing, as a tosser does before it trusts any of it. */
function drain(packet: Uint8Array): void {
  for (const message of readPacket(packet).messages) unpackMessage(message);
}

/** Runs `action`; anything thrown must be an FtnFormatError. */
function isReadOrRefused(action: () => unknown): boolean {
  try {
    action();
    return true;
  } catch (error) {
    if (!(error instanceof FtnFormatError)) throw error;
    return false;
  }
}

function withBytes(base: Buffer, offset: number, bytes: ArrayLike<number>): Buffer {
  const copy = Buffer.from(base);
  copy.set(bytes, offset);
  return copy;
}

describe('hostile packets', () => {
  it('refuses the packet truncated at every offset, with a reason', () => {
    drain(PACKET);
    for (let length = 0; length < PACKET.length; length++) {
      expect(ftnErrorOf(() => drain(PACKET.subarray(0, length))).message).not.toBe('');
    }
    expectFtnError(
      () => drain(PACKET.subarray(0, 57)),
      'packet header: the packet is 57 bytes, shorter than its 58-byte header',
    );
    expectFtnError(
      () => drain(PACKET.subarray(0, 58)),
      'packet ends after its header without the terminating 0x0000 (truncated?)',
    );
    expectFtnError(
      () => drain(PACKET.subarray(0, FIRST_MESSAGE + 20)),
      "packet message 1 (byte 58): the packet ends inside the message's 34-byte header",
    );
    expectFtnError(
      () => drain(PACKET.subarray(0, FIRST_SUBJECT + 3)),
      'packet message 1 (byte 58): the packet ends inside the subject: no NUL before its end (truncated?)',
    );
    expectFtnError(
      () => drain(PACKET.subarray(0, PACKET.length - 1)),
      'packet ends after message 2 without the terminating 0x0000 (truncated?)',
    );
  });

  it('refuses strings without their NUL within their fields', () => {
    const noNul = (length: number) => Buffer.alloc(length, 0x41);
    expectFtnError(
      () => drain(withBytes(PACKET, FIRST_SUBJECT, noNul(72))),
      'packet message 1 (byte 58): the subject has no NUL within 72 bytes',
    );
    expectFtnError(
      () => drain(withBytes(PACKET, FIRST_MESSAGE + 34, noNul(36))),
      'packet message 1 (byte 58): the to name has no NUL within 36 bytes',
    );
    expectFtnError(
      () => drain(withBytes(PACKET, FIRST_MESSAGE + 14, noNul(20))),
      'packet message 1 (byte 58): the date has no NUL within 20 bytes',
    );
  });

  it('refuses a body over the limit without reading past it', () => {
    const packet = writePacket(HEADER, [{ ...MESSAGE, body: Buffer.alloc(65_537, 0x41) }], { maxBodyBytes: 70_000 });
    expectFtnError(
      () => drain(packet),
      'packet message 1 (byte 58): the body is longer than the 65536-byte limit (no NUL within it)',
    );
    expectFtnError(
      () => [...readPacket(PACKET, { maxBodyBytes: 10 }).messages],
      'packet message 1 (byte 58): the body is longer than the 10-byte limit (no NUL within it)',
    );
  });

  it('refuses a message that claims to run on past the end of the packet', () => {
    // The terminator and the second message's NULs gone: its body would run on forever.
    const packet = Buffer.from(PACKET.subarray(0, PACKET.length - 3));
    expectFtnError(
      () => drain(packet),
      `packet message 2 (byte ${SECOND_MESSAGE}): the packet ends inside the body: no NUL before its end (truncated?)`,
    );
  });

  it('refuses garbage after the terminator and a message type that is not 2', () => {
    expectFtnError(
      () => drain(Buffer.concat([PACKET, Buffer.from([0x1a, 0x1a, 0x1a])])),
      `packet has 3 bytes after its terminating 0x0000 at byte ${PACKET.length - 2}`,
    );
    expectFtnError(
      () => drain(withBytes(PACKET, FIRST_MESSAGE, [0x02, 0x01])),
      'packet message 1 (byte 58): message type 0x0102 is not 2 (a packed message): the packet is corrupt',
    );
  });

  it('refuses headers that are not type 2 packets or name impossible addresses', () => {
    const word = (value: number) => [value & 0xff, value >> 8];
    expectFtnError(() => drain(withBytes(PACKET, 18, word(3))), 'packet header: packet type 3 is not 2 (FTS-0001)');
    const type22 = withBytes(withBytes(PACKET, 44, word(0)), 16, word(2));
    expectFtnError(() => drain(type22), 'packet header: a type 2.2 packet (FSC-0045), which baud does not read');
    expectFtnError(
      () => drain(withBytes(PACKET, 20, word(0xffff))),
      'packet header: origin net is -1 (a point) but origin point is 0',
    );
    expectFtnError(
      () => drain(withBytes(withBytes(PACKET, 46, word(0)), 34, word(0))),
      'packet header: the origin has no zone (0)',
    );
    expectFtnError(
      () => drain(withBytes(PACKET, 2, word(40000))),
      'packet header: destination node 40000 is outside 0–32767',
    );
  });

  it('answers any bytes, and any packet with bytes changed, with messages or an FtnFormatError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), (bytes) => {
        isReadOrRefused(() => drain(bytes));
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: PACKET.length - 1 }), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 8,
        }),
        (changes) => {
          const packet = Buffer.from(PACKET);
          for (const [offset, byte] of changes) packet[offset] = byte;
          isReadOrRefused(() => drain(packet));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('answers any body bytes with parts or an FtnFormatError', () => {
    const pieces = [
      '\r',
      '\n',
      '\x01',
      'AREA:',
      'SEEN-BY: ',
      '\x01PATH: ',
      ' * Origin: ',
      '--- ',
      '1/2 ',
      '3 ',
      '(',
      ')',
      'a',
      '\x01CHRS: UTF-8 4\r',
      '\xff',
    ];
    const body = fc
      .array(fc.constantFrom(...pieces), { maxLength: 40 })
      .map((parts) => Buffer.from(parts.join(''), 'latin1'));
    fc.assert(
      fc.property(fc.oneof(body, fc.uint8Array({ maxLength: 300 })), (bytes) => {
        isReadOrRefused(() => readMessageBody(bytes));
      }),
      { numRuns: 1000 },
    );
  });
});

/** A zip entry's local header, as the zip format lays it out (stored, no extra field). */
function localEntry(name: string, data: Buffer): Buffer {
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(20, 4);
  header.writeUInt32LE(zlib.crc32(data), 14);
  header.writeUInt32LE(data.length, 18);
  header.writeUInt32LE(data.length, 22);
  header.writeUInt16LE(name.length, 26);
  return Buffer.concat([header, Buffer.from(name, 'latin1'), data]);
}

/** A central directory entry for a stored entry at `offset`, and the end record, for archives built by hand. */
function centralAndEnd(
  entries: readonly { name: string; data: Buffer; offset: number }[],
  directoryStart: number,
): Buffer {
  const central = entries.map(({ name, data, offset }) => {
    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(20, 6);
    header.writeUInt32LE(zlib.crc32(data), 16);
    header.writeUInt32LE(data.length, 20);
    header.writeUInt32LE(data.length, 24);
    header.writeUInt16LE(name.length, 28);
    header.writeUInt32LE(offset, 42);
    return Buffer.concat([header, Buffer.from(name, 'latin1')]);
  });
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(directoryStart, 16);
  return Buffer.concat([directory, end]);
}

const BUNDLE = writeBundle(
  [
    { name: '00000001.pkt', data: PACKET },
    { name: '00000002.pkt', data: PACKET },
  ],
  { modifiedAt: new Date('2026-11-27T10:00:00Z') },
);

describe('hostile bundles', () => {
  it('refuses the bundle truncated at every offset', () => {
    expect(readBundle(BUNDLE)).toHaveLength(2);
    for (let length = 0; length < BUNDLE.length; length++) ftnErrorOf(() => readBundle(BUNDLE.subarray(0, length)));
    expectFtnError(() => readBundle(Buffer.alloc(0)), 'bundle: 0 bytes are too few for a zip archive');
    expectFtnError(
      () => readBundle(Buffer.alloc(100)),
      'bundle: not a zip archive (no end-of-central-directory record)',
    );
  });

  it('refuses entry names that are not plain packet names before reading anything', () => {
    for (const name of [
      '../evil.pkt',
      '/etc/evil.pkt',
      'dir/evil.pkt',
      'dir\\evil.pkt',
      'C:evil.pkt',
      '..',
      'readme.txt',
      'evil.pkt\0.txt',
    ]) {
      expectFtnError(
        () =>
          readBundle(
            buildZip([
              { name: 'good.pkt', data: 'x' },
              { name, data: 'x' },
            ]),
          ),
        `bundle entry 2 ${JSON.stringify(name)}: not a plain packet name (*.pkt, no directory, no "..")`,
      );
    }
    expectFtnError(
      () =>
        readBundle(
          buildZip([
            { name: 'twice.pkt', data: 'x' },
            { name: 'TWICE.PKT', data: 'y' },
          ]),
        ),
      'bundle entry 2 "TWICE.PKT": the bundle holds this name twice',
    );
  });

  it('refuses sizes claimed at 4 GiB and over the limits, before inflating', () => {
    expectFtnError(
      () => readBundle(buildZip([{ name: 'a.pkt', data: 'x', declaredUncompressedSize: 0xffffffff }])),
      'bundle entry 1 "a.pkt": zip64 sizes, which baud does not read',
    );
    expectFtnError(
      () => readBundle(buildZip([{ name: 'a.pkt', data: 'x', declaredUncompressedSize: 0xfffffffe }])),
      'bundle entry 1 "a.pkt": declares 4294967294 bytes; at most 16777216 are read',
    );
    const entries = Array.from({ length: 5 }, (_, index) => ({
      name: `${index}.pkt`,
      data: 'x',
      declaredUncompressedSize: 15 * 1024 * 1024,
    }));
    expectFtnError(
      () => readBundle(buildZip(entries)),
      'bundle entry 5 "4.pkt": the entries so far declare 78643200 bytes; a bundle may hold at most 67108864',
    );
  });

  it('stops inflating a zip bomb at its declared size', () => {
    // 256 MiB of zeros in 256 KiB of deflate data. Inflating it whole would hold 256 MiB; the
    // reader stops once the output passes the 1000 bytes declared (a test worker would not
    // survive many of these if it did not).
    const bomb = deflateRepeated(Buffer.alloc(1024 * 1024), 256);
    expectFtnError(
      () => readBundle(buildZip([{ name: 'bomb.pkt', rawDeflate: bomb, declaredUncompressedSize: 1000 }])),
      'bundle entry 1 "bomb.pkt": inflates past its declared 1000 bytes',
    );
    expectFtnError(
      () => readBundle(buildZip([{ name: 'bomb.pkt', rawDeflate: bomb }])),
      'bundle entry 1 "bomb.pkt": declares 268435456 bytes; at most 16777216 are read',
    );
    const limits = { maxEntries: 10, maxEntryBytes: 1024, maxTotalBytes: 1024 };
    const honest = deflateRepeated(Buffer.alloc(1024), 2);
    expectFtnError(
      () => readBundle(buildZip([{ name: 'a.pkt', rawDeflate: honest }]), limits),
      'bundle entry 1 "a.pkt": declares 2048 bytes; at most 1024 are read',
    );
  });

  it('refuses data that inflates to less than declared, or whose CRC-32 is wrong', () => {
    expectFtnError(
      () => readBundle(buildZip([{ name: 'a.pkt', data: 'hello', declaredUncompressedSize: 10 }])),
      'bundle entry 1 "a.pkt": inflates to 5 bytes, not the 10 declared',
    );
    const zip = buildZip([{ name: 'a.pkt', data: 'hello' }]);
    const central = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    zip.writeUInt32LE(zip.readUInt32LE(central + 16) ^ 1, central + 16);
    expectFtnError(() => readBundle(zip), 'bundle entry 1 "a.pkt": its CRC-32 does not match its data');
    const garbage = buildZip([
      { name: 'a.pkt', rawDeflate: { data: Buffer.from([0xff, 0xff, 0xff]), uncompressedSize: 5, crc32: 0 } },
    ]);
    expectFtnError(() => readBundle(garbage), 'bundle entry 1 "a.pkt": its data is not valid deflate data');
  });

  it('refuses encryption, methods other than stored and deflated, and stored sizes that disagree', () => {
    expectFtnError(
      () => readBundle(buildZip([{ name: 'a.pkt', data: 'x', isEncrypted: true }])),
      'bundle entry 1 "a.pkt": encrypted',
    );
    expectFtnError(
      () => readBundle(buildZip([{ name: 'a.pkt', data: 'x', compressionMethodOverride: 6 }])),
      'bundle entry 1 "a.pkt": compression method 6; only stored (0) and deflated (8) are read',
    );
    expectFtnError(
      () => readBundle(buildZip([{ name: 'a.pkt', data: 'abc', method: 'store', declaredUncompressedSize: 2 }])),
      'bundle entry 1 "a.pkt": stored, yet 3 bytes stored for 2',
    );
  });

  it('refuses huge and lying entry counts', () => {
    const lying = buildZip([{ name: 'a.pkt', data: 'x' }]);
    lying.writeUInt16LE(65534, lying.length - 22 + 8);
    lying.writeUInt16LE(65534, lying.length - 22 + 10);
    expectFtnError(() => readBundle(lying), 'bundle: lists 65534 entries; at most 256 are read');
    lying.writeUInt16LE(3, lying.length - 22 + 8);
    lying.writeUInt16LE(3, lying.length - 22 + 10);
    expectFtnError(() => readBundle(lying), 'bundle entry 2: the central directory ends or breaks before it');
    const many = buildZip(Array.from({ length: 11 }, (_, index) => ({ name: `${index}.pkt`, data: 'x' })));
    expectFtnError(
      () => readBundle(many, { maxEntries: 10, maxEntryBytes: 100, maxTotalBytes: 1000 }),
      'bundle: lists 11 entries; at most 10 are read',
    );
  });

  it('refuses a central directory or entry data outside the archive', () => {
    const zip = buildZip([{ name: 'a.pkt', data: 'x' }]);
    zip.writeUInt32LE(0x7fffffff, zip.length - 22 + 16);
    expectFtnError(
      () => readBundle(zip),
      `bundle: its central directory (51 bytes at 2147483647) runs past the ${zip.length - 22} bytes before its end record`,
    );
    const local = buildZip([{ name: 'a.pkt', data: 'x' }]);
    const central = local.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    local.writeUInt32LE(1, central + 42);
    expectFtnError(() => readBundle(local), 'bundle entry 1 "a.pkt": no local header at byte 1');
  });

  it('refuses entries that overlap, and a local header that names another file', () => {
    const inner = localEntry('b.pkt', Buffer.from('inner'));
    const outer = localEntry('a.pkt', inner);
    const overlapping = Buffer.concat([
      outer,
      centralAndEnd(
        [
          { name: 'a.pkt', data: inner, offset: 0 },
          { name: 'b.pkt', data: Buffer.from('inner'), offset: 35 },
        ],
        outer.length,
      ),
    ]);
    expectFtnError(() => readBundle(overlapping), 'bundle entry 2 "b.pkt": overlaps another entry\'s data');

    const renamed = buildZip([{ name: 'a.pkt', data: 'x' }]);
    renamed.write('z', 30, 'latin1');
    expectFtnError(() => readBundle(renamed), 'bundle entry 1 "a.pkt": its local header names another file');
  });

  it('answers any bytes, and any bundle with bytes changed, with packets or an FtnFormatError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        isReadOrRefused(() => readBundle(bytes));
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: BUNDLE.length - 1 }), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 6,
        }),
        (changes) => {
          const bundle = Buffer.from(BUNDLE);
          for (const [offset, byte] of changes) bundle[offset] = byte;
          if (isReadOrRefused(() => readBundle(bundle))) {
            for (const entry of readBundle(bundle)) isReadOrRefused(() => drain(entry.data));
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
