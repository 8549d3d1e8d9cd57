import { type FtnAddress, formatZoneNetNode, type NetNode, parseFtnAddress } from './ftn-address.js';
import { chooseCharset, decodeFtnText, encodeFtnTextCut, type OutgoingCharset } from './ftn-charset.js';
import { type FtnDateTime, formatFtnDateTime, formatTzutc, parseFtnDateTime } from './ftn-date.js';
import { FtnFormatError, quoteForError } from './ftn-format-error.js';
import {
  formatMsgId,
  type Kludge,
  kludgeValue,
  type ReadMessageBody,
  readMessageBody,
  writeMessageBody,
} from './message-body.js';
import { MAX_NAME_BYTES, MAX_SUBJECT_BYTES, type PackedMessage, type PacketHeader } from './packet.js';

/**
 * Whole messages: what baud posts, packed as echomail or netmail (header fields, kludges and body
 * in one charset), and a packed message read back into text.
 */

/** FTS-0001 attribute bits baud sets: netmail to a person is private. */
export const ATTRIBUTE_PRIVATE = 0x0001;

/** What echomail and netmail drafts share. */
interface MessageDraft {
  readonly fromName: string;
  readonly toName: string;
  readonly subject: string;
  /** The text, lines ending in LF. */
  readonly text: string;
  /** When it was written, the board's wall-clock time (see `ftnDateTimeOf`). */
  readonly writtenAt: FtnDateTime;
  /** The board's offset from UTC then, written as TZUTC; null writes none. */
  readonly utcOffsetMinutes: number | null;
  /** The MSGID serial (the caller keeps the counter, unique per address for three years). */
  readonly msgIdSerial: number;
  /** The MSGID value of the message this one answers, written as REPLY; null when none. */
  readonly replyTo: string | null;
  /** The PID kludge (FSC-0046), `<program> <version>`; null writes none. */
  readonly pid: string | null;
  /** The tear line's text (`--- <tearLine>`): always written, it guards the text's last line. */
  readonly tearLine: string;
}

export interface EchomailDraft extends MessageDraft {
  /** The echo tag (`AREA:` line). */
  readonly area: string;
  /** This board's address: the packed message's origin, the MSGID's and the origin line's. */
  readonly origin: FtnAddress;
  /** The link the message is packed for (the packed message's destination). */
  readonly destination: FtnAddress;
  /** The origin line's text, usually the board's name; cut to keep the line within 79 characters. */
  readonly originLine: string;
  readonly seenBy: readonly NetNode[];
  readonly path: readonly NetNode[];
}

export interface NetmailDraft extends MessageDraft {
  /** The sender's full address (this board's). */
  readonly origin: FtnAddress;
  /** The recipient's full address: the packed message goes to its net/node, INTL and TOPT say the rest. */
  readonly destination: FtnAddress;
  /** An origin line's text; null writes none (netmail needs none). */
  readonly originLine: string | null;
}

/** A packed message read back: its header fields decoded in the body's charset, and its body. */
export interface UnpackedMessage {
  readonly fromName: string;
  readonly toName: string;
  readonly subject: string;
  /** The date field read (see `parseFtnDateTime`); null when it is in no format FTS-0001 lists. */
  readonly writtenAt: FtnDateTime | null;
  readonly body: ReadMessageBody;
}

function draftKludges(draft: MessageDraft, msgIdAddress: FtnAddress): Kludge[] {
  const kludges: Kludge[] = [
    { name: 'MSGID', value: formatMsgId({ ...msgIdAddress, domain: null }, draft.msgIdSerial) },
  ];
  if (draft.replyTo !== null) kludges.push({ name: 'REPLY', value: draft.replyTo });
  if (draft.pid !== null) kludges.push({ name: 'PID', value: draft.pid });
  if (draft.utcOffsetMinutes !== null) kludges.push({ name: 'TZUTC', value: formatTzutc(draft.utcOffsetMinutes) });
  return kludges;
}

function packDraft(
  draft: MessageDraft,
  fields: Pick<PackedMessage, 'origNode' | 'destNode' | 'origNet' | 'destNet' | 'attribute'>,
  body: (charset: OutgoingCharset) => Buffer,
  extraTexts: readonly string[],
): PackedMessage {
  const charset = chooseCharset([
    draft.fromName,
    draft.toName,
    draft.subject,
    draft.text,
    draft.tearLine,
    ...extraTexts,
  ]);
  return {
    ...fields,
    cost: 0,
    dateTime: formatFtnDateTime(draft.writtenAt),
    toName: encodeFtnTextCut(draft.toName, MAX_NAME_BYTES, charset),
    fromName: encodeFtnTextCut(draft.fromName, MAX_NAME_BYTES, charset),
    subject: encodeFtnTextCut(draft.subject, MAX_SUBJECT_BYTES, charset),
    body: body(charset),
  };
}

/**
 * Packs an echomail message: AREA line, MSGID (this board's 4D address and the serial), REPLY,
 * PID, TZUTC, CHRS, the text, tear line, origin line, SEEN-BY and PATH. All of it is in CP437 when
 * every character fits, else UTF-8; names and subject are cut at a character boundary to their
 * fields (35 and 71 bytes). Throws `FtnFormatError` for what cannot be written (see
 * `writeMessageBody`, `formatFtnDateTime`).
 */
export function packEchomail(draft: EchomailDraft): PackedMessage {
  const fields = {
    origNode: draft.origin.node,
    destNode: draft.destination.node,
    origNet: draft.origin.net,
    destNet: draft.destination.net,
    attribute: 0,
  };
  return packDraft(
    draft,
    fields,
    (charset) =>
      writeMessageBody(
        {
          area: draft.area,
          kludges: draftKludges(draft, draft.origin),
          text: draft.text,
          tearLine: draft.tearLine,
          origin: { text: draft.originLine, address: { ...draft.origin, domain: null } },
          seenBy: draft.seenBy,
          path: draft.path,
        },
        charset,
      ),
    [draft.originLine],
  );
}

/**
 * Packs a netmail message (FTS-4001): INTL with both 3D addresses (always, as FTS-4001
 * recommends), FMPT and TOPT for points, then MSGID, REPLY, PID, TZUTC and CHRS, the text, tear
 * line and an optional origin line. It is private. Charset and cutting as in `packEchomail`.
 */
export function packNetmail(draft: NetmailDraft): PackedMessage {
  const { origin, destination } = draft;
  const kludges: Kludge[] = [{ name: 'INTL', value: `${formatZoneNetNode(destination)} ${formatZoneNetNode(origin)}` }];
  if (origin.point !== 0) kludges.push({ name: 'FMPT', value: String(origin.point) });
  if (destination.point !== 0) kludges.push({ name: 'TOPT', value: String(destination.point) });
  kludges.push(...draftKludges(draft, origin));
  const fields = {
    origNode: origin.node,
    destNode: destination.node,
    origNet: origin.net,
    destNet: destination.net,
    attribute: ATTRIBUTE_PRIVATE,
  };
  return packDraft(
    draft,
    fields,
    (charset) =>
      writeMessageBody(
        {
          area: null,
          kludges,
          text: draft.text,
          tearLine: draft.tearLine,
          origin: draft.originLine === null ? null : { text: draft.originLine, address: { ...origin, domain: null } },
          seenBy: [],
          path: [],
        },
        charset,
      ),
    draft.originLine === null ? [] : [draft.originLine],
  );
}

/**
 * Reads a packed message's text: body parts (`readMessageBody`), and to, from and subject decoded
 * in the body's charset. Throws `FtnFormatError` as `readMessageBody` does.
 */
export function unpackMessage(message: PackedMessage): UnpackedMessage {
  const body = readMessageBody(message.body);
  return {
    fromName: decodeFtnText(message.fromName, body.charset),
    toName: decodeFtnText(message.toName, body.charset),
    subject: decodeFtnText(message.subject, body.charset),
    writtenAt: parseFtnDateTime(message.dateTime),
    body,
  };
}

function readPoint(value: string | null, name: string): number {
  if (value === null) return 0;
  const point = /^[0-9]{1,5}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!(point >= 0 && point <= 32767))
    throw new FtnFormatError(`netmail ${name} ${quoteForError(value)} is not a point number`);
  return point;
}

/**
 * A netmail's sender and recipient, in full: zones from its INTL kludge (`INTL <to> <from>`,
 * FTS-4001) or, without one, from the packet header; net/node from INTL or the packed message;
 * points from FMPT and TOPT. Throws `FtnFormatError` for an INTL or point that does not read.
 */
export function netmailAddressesOf(
  message: PackedMessage,
  body: Pick<ReadMessageBody, 'kludges'>,
  header: Pick<PacketHeader, 'origin' | 'destination'>,
): { readonly origin: FtnAddress; readonly destination: FtnAddress } {
  const intl = kludgeValue(body.kludges, 'INTL');
  let origin: FtnAddress = {
    zone: header.origin.zone,
    net: message.origNet,
    node: message.origNode,
    point: 0,
    domain: null,
  };
  let destination: FtnAddress = {
    zone: header.destination.zone,
    net: message.destNet,
    node: message.destNode,
    point: 0,
    domain: null,
  };
  if (intl !== null) {
    const parts = intl.trim().split(/ +/);
    if (parts.length !== 2) throw new FtnFormatError(`netmail INTL ${quoteForError(intl)} is not "<to> <from>"`);
    const [to = '', from = ''] = parts;
    if (to.includes('.') || to.includes('@') || from.includes('.') || from.includes('@')) {
      throw new FtnFormatError(`netmail INTL ${quoteForError(intl)} holds more than zone:net/node`);
    }
    destination = parseFtnAddress(to);
    origin = parseFtnAddress(from);
  }
  return {
    origin: { ...origin, point: readPoint(kludgeValue(body.kludges, 'FMPT'), 'FMPT') },
    destination: { ...destination, point: readPoint(kludgeValue(body.kludges, 'TOPT'), 'TOPT') },
  };
}
