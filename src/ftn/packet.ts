import { checkFtnAddress, type FtnAddress, MAX_ADDRESS_NUMBER } from './ftn-address.js';
import { type FtnDateTime, isValidFtnDateTime } from './ftn-date.js';
import { FtnFormatError, quoteForError } from './ftn-format-error.js';

/**
 * FTS-0001 packets with the FSC-0048 "type 2+" header: read (type 2+ and plain type 2) and
 * written (type 2+), pure, over Buffers. A packet is its 58-byte header, packed messages, and
 * two zero bytes. Every number is a little-endian 16-bit word unless said otherwise.
 */

export const PACKET_HEADER_BYTES = 58;
/** A packed message's fixed part: type, four addresses, attribute and cost (14), date (20). */
const PACKED_MESSAGE_FIXED_BYTES = 34;
/** The date field: 19 characters and a NUL, always 20 bytes (FTS-0001). */
export const DATE_FIELD_BYTES = 20;
/** To and from names are at most 36 bytes with their NUL. */
export const MAX_NAME_BYTES = 35;
/** A subject is at most 72 bytes with its NUL. */
export const MAX_SUBJECT_BYTES = 71;
/**
 * The default longest body read or written, NUL not counted. Echomail bodies are a few KiB,
 * SEEN-BY lines of a big echo included; 64 KiB is what message bases of the era held at most,
 * so what other systems send fits, and a packet of garbage cannot make one message cost more.
 * `maxBodyBytes` raises or lowers it.
 */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
/** The product code FTSC reserves for software without one of its own. */
export const NO_PRODUCT_CODE = 0xfe;

const PACKET_TYPE = 2;
const PACKED_MESSAGE_TYPE = 2;
/** Bit 0 of the capability word: the sender writes and reads type 2+ (FSC-0048). */
const CAPABILITY_TYPE_2_PLUS = 0x0001;
/** FSC-0048: a point's packet says net -1 and puts its real net in AuxNet. */
const POINT_NET = 0xffff;

/** Which header the packet has: FSC-0048's type 2+, or FTS-0001's plain ("stone-age") type 2. */
export type PacketFormat = 'type-2+' | 'type-2';

export interface PacketHeader {
  readonly format: PacketFormat;
  /** The systems the packet goes between (not the messages' authors); no domain. */
  readonly origin: FtnAddress;
  readonly destination: FtnAddress;
  /** When the packet was made, as written (month 1–12 here, 0–11 in the packet), not checked. */
  readonly createdAt: FtnDateTime;
  readonly baud: number;
  /** 16 bits in type 2+ (low byte at 24, high byte at 42); 8 bits in type 2. */
  readonly productCode: number;
  readonly revisionMajor: number;
  readonly revisionMinor: number;
  /** The packet password, '' when none; at most 8 characters. */
  readonly password: string;
  /** The sender's capability word (0 for type 2). */
  readonly capabilityWord: number;
  /** The 4 product-specific bytes at 54, as an unsigned little-endian number (0 for type 2). */
  readonly productData: number;
}

/** What `writePacket` needs for a header; the rest has defaults (baud 0, product code 0xFE …). */
export interface PacketHeaderDraft {
  readonly origin: FtnAddress;
  readonly destination: FtnAddress;
  readonly createdAt: FtnDateTime;
  readonly password: string;
  readonly baud?: number;
  readonly productCode?: number;
  readonly revisionMajor?: number;
  readonly revisionMinor?: number;
  readonly productData?: number;
}

/**
 * A packed message as the packet holds it. The net/node pairs are the message's (for echomail,
 * the system that packed it and the one it goes to). Names, subject and body are bytes in the
 * message's charset, which its body's CHRS kludge names (see ftn-message.ts); read ones are
 * views into the packet's Buffer, never copies. `body` is the text without its NUL.
 */
export interface PackedMessage {
  readonly origNode: number;
  readonly destNode: number;
  readonly origNet: number;
  readonly destNet: number;
  readonly attribute: number;
  readonly cost: number;
  /** `DD Mon YY  HH:MM:SS` as written (see ftn-date.ts); at most 19 characters. */
  readonly dateTime: string;
  readonly toName: Buffer;
  readonly fromName: Buffer;
  readonly subject: Buffer;
  readonly body: Buffer;
}

export interface PacketLimits {
  /** Longest body read or written, NUL not counted; `DEFAULT_MAX_BODY_BYTES` when not given. */
  readonly maxBodyBytes?: number;
}

export interface Packet {
  readonly header: PacketHeader;
  /**
   * The packed messages, read as they are iterated: a packet of a million messages never holds
   * them all. A bad message, a missing terminator or bytes after it throw `FtnFormatError`
   * while iterating, so a caller must iterate to the end before it trusts what it read.
   * Iterating again reads the packet again from its first message.
   */
  readonly messages: Iterable<PackedMessage>;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Reads a packet's header and returns it with its messages as a lazy iterable (see `Packet`).
 * The header is checked now: length, packet type 2, the capability word against its
 * byte-swapped copy (FSC-0048; if they differ the header is read as plain type 2), zones and
 * nets in range. Throws `FtnFormatError`.
 */
export function readPacket(packet: Uint8Array, limits: PacketLimits = {}): Packet {
  const bytes = asBuffer(packet);
  const header = readPacketHeader(bytes);
  const maxBodyBytes = limits.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return { header, messages: { [Symbol.iterator]: () => readPackedMessages(bytes, maxBodyBytes) } };
}

/** Reads and checks the 58-byte header (see `readPacket`). */
export function readPacketHeader(packet: Uint8Array): PacketHeader {
  const bytes = asBuffer(packet);
  if (bytes.length < PACKET_HEADER_BYTES) {
    throw new FtnFormatError(
      `packet header: the packet is ${bytes.length} bytes, shorter than its ${PACKET_HEADER_BYTES}-byte header`,
    );
  }
  const word = (offset: number) => bytes.readUInt16LE(offset);
  const packetType = word(18);
  if (packetType !== PACKET_TYPE) {
    throw new FtnFormatError(`packet header: packet type ${packetType} is not ${PACKET_TYPE} (FTS-0001)`);
  }
  const capabilityWord = word(44);
  const validationCopy = word(40);
  const swappedCopy = ((validationCopy & 0xff) << 8) | (validationCopy >> 8);
  const isType2Plus = capabilityWord === swappedCopy && (capabilityWord & CAPABILITY_TYPE_2_PLUS) !== 0;
  // FSC-0045 ("type 2.2") keeps 2 at 18 and marks itself with sub-version 2 where type 2 keeps the baud rate.
  if (!isType2Plus && word(16) === 2) {
    throw new FtnFormatError('packet header: a type 2.2 packet (FSC-0045), which baud does not read');
  }
  const createdAt: FtnDateTime = {
    year: word(4),
    month: word(6) + 1,
    day: word(8),
    hour: word(10),
    minute: word(12),
    second: word(14),
  };
  const password = readPassword(bytes.subarray(26, 34));

  if (!isType2Plus) {
    return {
      format: 'type-2',
      origin: headerAddress('origin', word(34), word(20), word(0), 0),
      destination: headerAddress('destination', word(36), word(22), word(2), 0),
      createdAt,
      baud: word(16),
      productCode: bytes[24] ?? 0,
      revisionMajor: bytes[25] ?? 0,
      revisionMinor: 0,
      password,
      capabilityWord: 0,
      productData: 0,
    };
  }
  const origPoint = word(50);
  let origNet = word(20);
  if (origNet === POINT_NET) {
    if (origPoint === 0) throw new FtnFormatError('packet header: origin net is -1 (a point) but origin point is 0');
    origNet = word(38);
  }
  return {
    format: 'type-2+',
    // Zones are at 46/48 (FSC-0039/0048) and at 34/36 (FTS-0001 rev. 12): the former win, the latter fill in.
    origin: headerAddress('origin', word(46) || word(34), origNet, word(0), origPoint),
    destination: headerAddress('destination', word(48) || word(36), word(22), word(2), word(52)),
    createdAt,
    baud: word(16),
    productCode: (bytes.readUInt8(42) << 8) | bytes.readUInt8(24),
    revisionMajor: bytes.readUInt8(25),
    revisionMinor: bytes.readUInt8(43),
    password,
    capabilityWord,
    productData: bytes.readUInt32LE(54),
  };
}

function readPassword(field: Buffer): string {
  const nul = field.indexOf(0);
  return field.subarray(0, nul === -1 ? field.length : nul).toString('latin1');
}

function headerAddress(which: string, zone: number, net: number, node: number, point: number): FtnAddress {
  if (zone === 0) throw new FtnFormatError(`packet header: the ${which} has no zone (0)`);
  for (const [what, value] of [
    ['zone', zone],
    ['net', net],
    ['node', node],
    ['point', point],
  ] as const) {
    if (value > MAX_ADDRESS_NUMBER) {
      throw new FtnFormatError(`packet header: ${which} ${what} ${value} is outside 0–${MAX_ADDRESS_NUMBER}`);
    }
  }
  return { zone, net, node, point, domain: null };
}

function* readPackedMessages(bytes: Buffer, maxBodyBytes: number): Generator<PackedMessage, void, undefined> {
  let offset = PACKET_HEADER_BYTES;
  for (let number = 1; ; number++) {
    if (offset + 2 > bytes.length) {
      const after = number === 1 ? 'its header' : `message ${number - 1}`;
      throw new FtnFormatError(`packet ends after ${after} without the terminating 0x0000 (truncated?)`);
    }
    const type = bytes.readUInt16LE(offset);
    if (type === 0) {
      const extraBytes = bytes.length - offset - 2;
      if (extraBytes > 0) {
        throw new FtnFormatError(`packet has ${extraBytes} bytes after its terminating 0x0000 at byte ${offset}`);
      }
      return;
    }
    const where = `packet message ${number} (byte ${offset})`;
    if (type !== PACKED_MESSAGE_TYPE) {
      throw new FtnFormatError(
        `${where}: message type 0x${type.toString(16).padStart(4, '0')} is not 2 (a packed message): the packet is corrupt`,
      );
    }
    if (offset + PACKED_MESSAGE_FIXED_BYTES > bytes.length) {
      throw new FtnFormatError(
        `${where}: the packet ends inside the message's ${PACKED_MESSAGE_FIXED_BYTES}-byte header`,
      );
    }
    const dateField = bytes.subarray(offset + 14, offset + 14 + DATE_FIELD_BYTES);
    const dateEnd = dateField.indexOf(0);
    if (dateEnd === -1) throw new FtnFormatError(`${where}: the date has no NUL within ${DATE_FIELD_BYTES} bytes`);
    const origNode = bytes.readUInt16LE(offset + 2);
    const destNode = bytes.readUInt16LE(offset + 4);
    const origNet = bytes.readUInt16LE(offset + 6);
    const destNet = bytes.readUInt16LE(offset + 8);
    const attribute = bytes.readUInt16LE(offset + 10);
    const cost = bytes.readUInt16LE(offset + 12);
    offset += PACKED_MESSAGE_FIXED_BYTES;

    const toName = readField(bytes, offset, MAX_NAME_BYTES, 'to name', where);
    offset += toName.length + 1;
    const fromName = readField(bytes, offset, MAX_NAME_BYTES, 'from name', where);
    offset += fromName.length + 1;
    const subject = readField(bytes, offset, MAX_SUBJECT_BYTES, 'subject', where);
    offset += subject.length + 1;
    const body = readField(bytes, offset, maxBodyBytes, 'body', where);
    offset += body.length + 1;
    yield {
      origNode,
      destNode,
      origNet,
      destNet,
      attribute,
      cost,
      dateTime: dateField.subarray(0, dateEnd).toString('latin1'),
      toName,
      fromName,
      subject,
      body,
    };
  }
}

/** The NUL-terminated field at `start` of at most `maxBytes` (NUL not counted), without its NUL. */
function readField(bytes: Buffer, start: number, maxBytes: number, what: string, where: string): Buffer {
  const window = bytes.subarray(start, start + maxBytes + 1);
  const nul = window.indexOf(0);
  if (nul !== -1) return window.subarray(0, nul);
  if (start + maxBytes + 1 > bytes.length) {
    throw new FtnFormatError(`${where}: the packet ends inside the ${what}: no NUL before its end (truncated?)`);
  }
  if (what === 'body') {
    throw new FtnFormatError(`${where}: the body is longer than the ${maxBytes}-byte limit (no NUL within it)`);
  }
  throw new FtnFormatError(`${where}: the ${what} has no NUL within ${maxBytes + 1} bytes`);
}

function checkUnsigned(value: number, bits: 8 | 16 | 32, what: string): number {
  const max = 2 ** bits - 1;
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new FtnFormatError(`cannot write the ${what} ${value}: not a whole number in 0–${max}`);
  }
  return value;
}

/** Printable ASCII: what a password shared with a hub's sysop is made of. */
const PASSWORD = /^[\x20-\x7e]{0,8}$/;
/** The date field's characters: printable ASCII. */
const DATE_TEXT = /^[\x20-\x7e]{0,19}$/;

/**
 * The 58-byte type 2+ header (FSC-0048): the capability word 0x0001 and its byte-swapped copy,
 * zones at 34/36 and 46/48, points at 50/52, and for a point origin net -1 with the real net in
 * AuxNet. Throws `FtnFormatError` for a number out of range, a date that does not exist, or a
 * password longer than 8 or not printable ASCII.
 */
export function encodePacketHeader(draft: PacketHeaderDraft): Buffer {
  const { origin, destination, createdAt, password } = draft;
  checkFtnAddress(origin);
  checkFtnAddress(destination);
  if (!isValidFtnDateTime(createdAt)) {
    throw new FtnFormatError(`cannot write the packet date ${JSON.stringify(createdAt)}: no such date`);
  }
  if (!PASSWORD.test(password)) {
    throw new FtnFormatError(
      `cannot write the packet password ${quoteForError(password)}: 0–8 printable ASCII characters`,
    );
  }
  const productCode = checkUnsigned(draft.productCode ?? NO_PRODUCT_CODE, 16, 'product code');
  const header = Buffer.alloc(PACKET_HEADER_BYTES);
  const words: readonly (readonly [number, number])[] = [
    [0, origin.node],
    [2, destination.node],
    [4, checkUnsigned(createdAt.year, 16, 'packet year')],
    [6, createdAt.month - 1],
    [8, createdAt.day],
    [10, createdAt.hour],
    [12, createdAt.minute],
    [14, createdAt.second],
    [16, checkUnsigned(draft.baud ?? 0, 16, 'baud rate')],
    [18, PACKET_TYPE],
    [20, origin.point === 0 ? origin.net : POINT_NET],
    [22, destination.net],
    [34, origin.zone],
    [36, destination.zone],
    [38, origin.point === 0 ? 0 : origin.net],
    [40, CAPABILITY_TYPE_2_PLUS << 8],
    [44, CAPABILITY_TYPE_2_PLUS],
    [46, origin.zone],
    [48, destination.zone],
    [50, origin.point],
    [52, destination.point],
  ];
  for (const [offset, value] of words) header.writeUInt16LE(value, offset);
  header.writeUInt8(productCode & 0xff, 24);
  header.writeUInt8(checkUnsigned(draft.revisionMajor ?? 0, 8, 'major revision'), 25);
  header.write(password, 26, 'latin1');
  header.writeUInt8(productCode >> 8, 42);
  header.writeUInt8(checkUnsigned(draft.revisionMinor ?? 0, 8, 'minor revision'), 43);
  header.writeUInt32LE(checkUnsigned(draft.productData ?? 0, 32, 'product data'), 54);
  return header;
}

/**
 * One packed message's bytes: the fixed part, the date padded with NULs to 20 bytes, then the
 * names, subject and body, each with its NUL. Throws `FtnFormatError` for a field too long for
 * its place, a NUL inside one, a body over `maxBodyBytes`, or a number out of range; `where`
 * names the message in that error.
 */
export function encodePackedMessage(
  message: PackedMessage,
  limits: PacketLimits = {},
  where = 'the packed message',
): Buffer {
  const fail = (reason: string) => new FtnFormatError(`cannot write ${where}: ${reason}`);
  if (!DATE_TEXT.test(message.dateTime)) {
    throw fail(`the date ${quoteForError(message.dateTime)} is not 0–19 printable ASCII characters`);
  }
  const maxBodyBytes = limits.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const strings = [
    [message.toName, MAX_NAME_BYTES, 'to name'],
    [message.fromName, MAX_NAME_BYTES, 'from name'],
    [message.subject, MAX_SUBJECT_BYTES, 'subject'],
    [message.body, maxBodyBytes, 'body'],
  ] as const;
  for (const [bytes, maxBytes, what] of strings) {
    if (bytes.length > maxBytes) throw fail(`the ${what} is ${bytes.length} bytes; at most ${maxBytes} fit`);
    if (bytes.includes(0)) throw fail(`the ${what} holds a NUL byte, which would end it early`);
  }
  const fixed = Buffer.alloc(PACKED_MESSAGE_FIXED_BYTES);
  const words = [
    PACKED_MESSAGE_TYPE,
    checkUnsigned(message.origNode, 16, 'origin node'),
    checkUnsigned(message.destNode, 16, 'destination node'),
    checkUnsigned(message.origNet, 16, 'origin net'),
    checkUnsigned(message.destNet, 16, 'destination net'),
    checkUnsigned(message.attribute, 16, 'attribute word'),
    checkUnsigned(message.cost, 16, 'cost'),
  ];
  words.forEach((value, index) => {
    fixed.writeUInt16LE(value, index * 2);
  });
  fixed.write(message.dateTime, 14, 'latin1');
  const nul = Buffer.alloc(1);
  return Buffer.concat([fixed, ...strings.flatMap(([bytes]) => [bytes, nul])]);
}

/** The two zero bytes that end a packet, for a writer that streams header and messages itself. */
export function packetTerminator(): Buffer {
  return Buffer.alloc(2);
}

/**
 * A whole type 2+ packet: header, messages, terminator. What it writes, `readPacket` reads back
 * to the same header fields and messages, byte for byte.
 */
export function writePacket(
  header: PacketHeaderDraft,
  messages: Iterable<PackedMessage>,
  limits: PacketLimits = {},
): Buffer {
  const parts = [encodePacketHeader(header)];
  let number = 0;
  for (const message of messages) {
    number += 1;
    parts.push(encodePackedMessage(message, limits, `packet message ${number}`));
  }
  parts.push(packetTerminator());
  return Buffer.concat(parts);
}

/** Packet file names in bundles and inbounds: a plain name (no directory, no dots) and `.pkt`. */
const PACKET_FILE_NAME = /^[A-Za-z0-9_-]{1,64}\.pkt$/i;

/** Whether `name` is a plain packet file name (`0badcafe.pkt`, any case): no path, no `..`. */
export function isPacketFileName(name: string): boolean {
  return PACKET_FILE_NAME.test(name);
}

/**
 * The name a packet baud writes goes by: `serial` as 8 hex digits, and `.pkt`.
 *
 * @example formatPacketFileName(0xbadcafe) // '0badcafe.pkt'
 */
export function formatPacketFileName(serial: number): string {
  return `${checkUnsigned(serial, 32, 'packet serial').toString(16).padStart(8, '0')}.pkt`;
}
