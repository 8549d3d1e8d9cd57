import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BoardAreas } from '../access/board-areas.js';
import type { Clock } from '../clock.js';
import type { EventLog } from '../events/event-log.js';
import type { DeliveredMail, MailDelivery, MailRecipient } from '../mail/mail-delivery.js';
import { MAIL_AREA_TAG } from '../mail/mail-store.js';
import type { MessageStore } from '../messages/message-store.js';
import { type ThreadPlace, threadPlaceOf } from '../messages/message-thread.js';
import { messageUuid } from '../messages/message-uuid.js';
import type { NewMessageRow } from '../messages/message-writes.js';
import { isBundleName, readBundle } from './bundle.js';
import { type FtnAddress, formatFtnAddress, isSameFtnAddress } from './ftn-address.js';
import { ftnDateTimeOf, instantOf, isValidFtnDateTime, parseTzutc } from './ftn-date.js';
import { FtnFormatError, quoteForError } from './ftn-format-error.js';
import { netmailAddressesOf, type UnpackedMessage, unpackMessage } from './ftn-message.js';
import { networkOfTossed } from './ftn-metadata.js';
import type { FtnLink, FtnNetwork } from './ftn-networks.js';
import { type FtnObserver, NO_FTN_OBSERVER } from './ftn-observer.js';
import type { FtnStore, KnownMsgId } from './ftn-store.js';
import { kludgeValue } from './message-body.js';
import { isPacketFileName, type PackedMessage, type PacketHeader, readPacket, writePacket } from './packet.js';

/** What one toss of a network's inbound did. */
export interface TossReport {
  readonly network: string;
  /** Files taken from the inbound (tossed or moved to bad). */
  readonly files: number;
  /** Packets tossed (a bundle's each count). */
  readonly packets: number;
  /** Echomail messages imported into their areas. */
  readonly echomail: number;
  /** Netmail delivered into inboxes. */
  readonly netmail: number;
  /** Messages refused as duplicates (their MSGID was seen before). */
  readonly duplicates: number;
  /** Messages of good packets that had nowhere to go (unknown echo or recipient), kept in bad. */
  readonly skipped: number;
  /** Files (or bundle entries) moved to bad whole. */
  readonly bad: number;
}

export interface FtnTosser {
  /**
   * Tosses every file of the network's inbound, oldest first: packets (`*.pkt`) and bundles.
   * Each packet is read whole and checked (its link, its password, every message) before
   * anything is written, then imported in one transaction — echomail into its area, netmail into
   * its recipient's inbox, the MSGIDs beside them — and deleted. A packet that does not read or
   * does not come from a link with the right password goes to `bad/` whole with a
   * `<name>.reason.txt`; messages of a good packet with nowhere to go (an echo this board does not
   * carry, netmail to nobody here) go to `bad/` as a packet of their own, the rest are imported.
   */
  tossInbound(network: FtnNetwork): Promise<TossReport>;
}

/** A packet or bundle larger than this is not read (readBundle's own limit on what a bundle inflates to). */
const MAX_INBOUND_FILE_BYTES = 64 * 1024 * 1024;

/** A packet refused whole: the reason goes beside it in bad/. */
class RefusedPacket extends Error {}

type Destination =
  | { readonly kind: 'echomail'; readonly areaTag: string }
  | { readonly kind: 'netmail'; readonly recipient: MailRecipient; readonly origin: FtnAddress };

interface Candidate {
  /** 1-based place in the packet, for reports. */
  readonly number: number;
  readonly packed: PackedMessage;
  readonly message: UnpackedMessage;
  /** The MSGID, or a digest of the text for a message without one: the duplicate key. */
  readonly key: string;
  /** The REPLY value, or null. */
  readonly replyKey: string | null;
  readonly timestamp: string;
}

interface Placed extends Candidate {
  readonly destination: Destination;
}

interface Skipped {
  readonly number: number;
  readonly packed: PackedMessage;
  readonly message: UnpackedMessage;
  readonly reason: string;
}

interface PacketOutcome {
  readonly echomail: number;
  readonly netmail: number;
  readonly duplicates: number;
  readonly skipped: number;
}

interface Counts {
  files: number;
  packets: number;
  echomail: number;
  netmail: number;
  duplicates: number;
  skipped: number;
  bad: number;
}

/** Kludges kept in `network` metadata or written from it, so not among the kludges a forward repeats. */
const KLUDGES_KEPT_ELSEWHERE: ReadonlySet<string> = new Set(['MSGID', 'REPLY', 'INTL', 'FMPT', 'TOPT']);

/**
 * The key a message without MSGID is known by: a digest of what makes it that message. FTS-0009
 * leaves such messages to the tosser's judgement; the same text from the same author at the same
 * time in the same echo is the same message.
 */
function digestKey(packed: PackedMessage, message: UnpackedMessage): string {
  const hash = createHash('sha256');
  for (const part of [
    message.body.area?.toUpperCase() ?? '',
    message.fromName,
    message.toName,
    message.subject,
    packed.dateTime,
    message.body.text,
  ]) {
    hash.update(part).update('\0');
  }
  return `no-MSGID ${hash.digest('hex').slice(0, 32)}`;
}

/**
 * When a message was written: its date at the offset its TZUTC kludge gives (UTC without one,
 * which is what most software writing no TZUTC meant), or the time it arrived when its date does
 * not read.
 */
function timestampOf(message: UnpackedMessage, arrivedAt: Date): string {
  if (message.writtenAt === null) return arrivedAt.toISOString();
  const tzutc = kludgeValue(message.body.kludges, 'TZUTC') ?? kludgeValue(message.body.kludges, 'TZUTCINFO');
  let offsetMinutes = 0;
  if (tzutc !== null) {
    try {
      offsetMinutes = parseTzutc(tzutc);
    } catch (error) {
      if (!(error instanceof FtnFormatError)) throw error;
    }
  }
  return instantOf(message.writtenAt, offsetMinutes).toISOString();
}

function describeMessage(skipped: Pick<Skipped, 'number' | 'message'>): string {
  const { message } = skipped;
  return `message ${skipped.number} (from ${quoteForError(message.fromName)} to ${quoteForError(message.toName)}, subject ${quoteForError(message.subject)})`;
}

/** `name` in `directory`, or with `-1`, `-2` … before its extension when that is taken. */
function freeName(directory: string, name: string): string {
  const { name: stem, ext } = path.parse(name);
  for (let number = 0; ; number++) {
    const candidate = number === 0 ? name : `${stem}-${number}${ext}`;
    if (!existsSync(path.join(directory, candidate)) && !existsSync(path.join(directory, `${candidate}.reason.txt`))) {
      return candidate;
    }
  }
}

function isMissing(error: unknown): boolean {
  return (error as { code?: unknown }).code === 'ENOENT';
}

/**
 * Messages one packet may hold. A packet is read whole before anything is written (so a bad one
 * is never half-imported), which holds its messages in memory: 600,000 tiny ones took 2.3 GiB.
 * Mailers cut packets at a few hundred KiB — hundreds of messages — so this is far above any real
 * packet and keeps a hostile one's toss to about 80 MiB; past it the packet goes to bad/ unread.
 */
export const MAX_MESSAGES_PER_PACKET = 20_000;

/** The packet password check (see docs/operator-guide.md "Joining a network"): case-insensitive, as tossers compare. */
function checkPacketPassword(header: PacketHeader, link: FtnLink): void {
  const expected = link.packetPassword;
  if (header.password.toUpperCase() === expected.toUpperCase()) return;
  if (expected === '') {
    throw new RefusedPacket(
      `the packet carries a password, but ${link.name}'s session password is too long for a packet, so none is expected`,
    );
  }
  throw new RefusedPacket(
    header.password === ''
      ? `the packet from ${link.name} carries no password (its link's password is expected)`
      : `the packet from ${link.name} carries the wrong password`,
  );
}

export function createFtnTosser(deps: {
  store: FtnStore;
  messages: MessageStore;
  mail: MailDelivery;
  events: EventLog;
  areas: BoardAreas;
  clock: Clock;
  observer?: FtnObserver;
}): FtnTosser {
  const { store, messages, mail, events, areas, clock } = deps;
  const observer = deps.observer ?? NO_FTN_OBSERVER;

  /**
   * Reads and checks a whole packet: header (from a link of this network, to us, with the link's
   * password) and every message, before anything is written. Throws RefusedPacket or
   * FtnFormatError.
   */
  function readWholePacket(
    network: FtnNetwork,
    bytes: Buffer,
  ): { header: PacketHeader; link: FtnLink; candidates: Candidate[] } {
    const packet = readPacket(bytes);
    const { header } = packet;
    const link = network.linkAt(header.origin);
    if (link === null) {
      throw new RefusedPacket(
        `the packet comes from ${formatFtnAddress(header.origin)}, which is not a link of ${network.name}`,
      );
    }
    if (!isSameFtnAddress(header.destination, network.address)) {
      throw new RefusedPacket(
        `the packet is addressed to ${formatFtnAddress(header.destination)}, not to this board (${formatFtnAddress(network.address)})`,
      );
    }
    checkPacketPassword(header, link);
    const arrivedAt = clock.now();
    const candidates: Candidate[] = [];
    let number = 0;
    for (const packed of packet.messages) {
      number += 1;
      if (number > MAX_MESSAGES_PER_PACKET) {
        throw new RefusedPacket(
          `the packet holds more than ${MAX_MESSAGES_PER_PACKET.toLocaleString('en-US')} messages (a hub's hold hundreds): refused unread, as tossing it would hold them all in memory`,
        );
      }
      let message: UnpackedMessage;
      try {
        message = unpackMessage(packed);
      } catch (error) {
        if (error instanceof FtnFormatError) throw new FtnFormatError(`packet message ${number}: ${error.message}`);
        throw error;
      }
      const msgId = kludgeValue(message.body.kludges, 'MSGID')?.trim();
      candidates.push({
        number,
        packed,
        message,
        key: msgId ? msgId : digestKey(packed, message),
        replyKey: kludgeValue(message.body.kludges, 'REPLY')?.trim() || null,
        timestamp: timestampOf(message, arrivedAt),
      });
    }
    return { header, link, candidates };
  }

  /** Where each message goes, or why it has nowhere to go. */
  async function placeMessages(
    network: FtnNetwork,
    header: PacketHeader,
    candidates: readonly Candidate[],
  ): Promise<{ placed: Placed[]; skipped: Skipped[] }> {
    const placed: Placed[] = [];
    const skipped: Skipped[] = [];
    for (const candidate of candidates) {
      const { body } = candidate.message;
      const skip = (reason: string) => skipped.push({ ...candidate, reason });
      if (body.area !== null) {
        const areaTag = network.areaByEcho.get(body.area.toUpperCase());
        if (areaTag === undefined || !areas.messageAreas.has(areaTag)) {
          skip(`echo ${quoteForError(body.area)} is not carried by this board (ftn.areas)`);
        } else {
          placed.push({ ...candidate, destination: { kind: 'echomail', areaTag } });
        }
        continue;
      }
      let addresses: { origin: FtnAddress; destination: FtnAddress };
      try {
        addresses = netmailAddressesOf(candidate.packed, body, header);
      } catch (error) {
        if (!(error instanceof FtnFormatError)) throw error;
        skip(`netmail with unreadable addresses: ${error.message}`);
        continue;
      }
      if (!isSameFtnAddress(addresses.destination, network.address)) {
        skip(`netmail for ${formatFtnAddress(addresses.destination)}: baud routes no netmail in transit`);
        continue;
      }
      const recipient = await mail.recipientNamed(candidate.message.toName);
      if (recipient === null) {
        skip(`netmail to ${quoteForError(candidate.message.toName)}: nobody here receives mail under that name`);
        continue;
      }
      placed.push({ ...candidate, destination: { kind: 'netmail', recipient, origin: addresses.origin } });
    }
    return { placed, skipped };
  }

  /**
   * Imports the placed messages of one packet in one transaction: the network's lock first (a
   * toss of the same file on another node waits, then finds the file gone or every message a
   * duplicate), duplicates left out, area counters and inboxes locked in a fixed order before the
   * ids are taken, messages, inbox entries, MSGIDs, the journal entry and the events. Null when
   * the file went meanwhile (another node tossed it).
   */
  async function importPacket(
    network: FtnNetwork,
    link: FtnLink,
    fileName: string,
    placed: readonly Placed[],
    skippedCount: number,
    isStillThere: () => boolean,
  ): Promise<PacketOutcome | null> {
    const now = clock.now();
    return messages.transaction(async (queries, trx) => {
      await store.lockNetwork(trx, network.name);
      if (!isStillThere()) return null;
      const replyKeys = placed.flatMap((message) => (message.replyKey === null ? [] : [message.replyKey]));
      const known = await store.findMsgIds(network.name, [...placed.map((message) => message.key), ...replyKeys], trx);
      const accepted: Placed[] = [];
      const seen = new Set<string>();
      for (const message of placed) {
        if (!known.has(message.key) && !seen.has(message.key)) accepted.push(message);
        seen.add(message.key);
      }
      const duplicates = placed.length - accepted.length;
      const echomail = accepted.filter((message) => message.destination.kind === 'echomail');
      const netmail = accepted.length - echomail.length;
      const journal = (detail: string) =>
        store.journalToss(
          {
            network: network.name,
            fileName,
            tossedAt: now.toISOString(),
            outcome: 'tossed',
            imported: accepted.length,
            duplicates,
            skipped: skippedCount,
            detail,
          },
          trx,
        );
      if (accepted.length === 0) {
        await journal(skippedCount > 0 ? `${skippedCount} messages kept in bad` : '');
        return { echomail: 0, netmail: 0, duplicates, skipped: skippedCount };
      }

      // The areas' counter rows first, in tag order (a post locks one; another toss the same ones
      // in the same order), then the inboxes: nobody waits for anybody in a cycle.
      const newestByArea = new Map<string, { count: number; newest: string }>();
      const mailsPerRecipient = new Map<number, number>();
      for (const message of accepted) {
        const { destination } = message;
        if (destination.kind === 'echomail') {
          const entry = newestByArea.get(destination.areaTag) ?? { count: 0, newest: '' };
          newestByArea.set(destination.areaTag, {
            count: entry.count + 1,
            newest: message.timestamp > entry.newest ? message.timestamp : entry.newest,
          });
        } else {
          const userId = destination.recipient.userId;
          mailsPerRecipient.set(userId, (mailsPerRecipient.get(userId) ?? 0) + 1);
        }
      }
      for (const areaTag of [...newestByArea.keys()].sort()) {
        const entry = newestByArea.get(areaTag);
        if (entry) await queries.addToAreaCounters(areaTag, entry.count, entry.newest);
      }
      await mail.reserveInboxes(trx, mailsPerRecipient);
      const ids = await queries.reserveMessageIds(accepted.length);

      // REPLY links: to a message stored earlier (by its MSGID), or to one earlier in this packet.
      const storedParentIds = replyKeys.flatMap((key) => {
        const parent = known.get(key);
        return parent ? [parent.messageId] : [];
      });
      const storedPlaces = await queries.threadPlacesOf(storedParentIds);
      const storedUuids = new Map(
        (await queries.messagesByIds(storedParentIds)).map((row) => [row.messageId, row.uuid]),
      );
      type Parent = ThreadPlace & {
        readonly messageId: number;
        readonly areaTag: string;
        readonly uuid: string | null;
      };
      const packetParents = new Map<string, Parent>();
      const parentOf = (key: string | null): Parent | null => {
        if (key === null) return null;
        const inPacket = packetParents.get(key);
        if (inPacket) return inPacket;
        const stored: KnownMsgId | undefined = known.get(key);
        const place = stored ? storedPlaces.get(stored.messageId) : undefined;
        return stored && place
          ? { ...place, messageId: stored.messageId, uuid: storedUuids.get(stored.messageId) ?? null }
          : null;
      };

      const sourceLink = link.name;
      const rows: NewMessageRow[] = [];
      const delivered: DeliveredMail[] = [];
      const created: { row: NewMessageRow; areaTag: string }[] = [];
      accepted.forEach((message, index) => {
        const id = ids[index] as number;
        const { destination } = message;
        const areaTag = destination.kind === 'echomail' ? destination.areaTag : MAIL_AREA_TAG;
        const candidateParent = parentOf(message.replyKey);
        const parent = candidateParent?.areaTag === areaTag ? candidateParent : null;
        const place = threadPlaceOf(id, parent);
        const uuid = messageUuid(now.getTime());
        const fallbackOrigin: FtnAddress = {
          zone: network.address.zone,
          net: message.packed.origNet,
          node: message.packed.origNode,
          point: 0,
          domain: null,
        };
        const from =
          destination.kind === 'echomail'
            ? message.message.fromName
            : `${message.message.fromName}@${formatFtnAddress(destination.origin)}`;
        const row: NewMessageRow = {
          id,
          ...place,
          uuid,
          areaTag,
          replyToMessageId: parent?.messageId ?? null,
          fromUserId: null,
          fromUserName: from,
          toUserName: destination.kind === 'echomail' ? message.message.toName : destination.recipient.username,
          subject: message.message.subject,
          body: message.message.body.text,
          timestamp: message.timestamp,
          network: JSON.stringify(networkOfTossed(message.message.body, fallbackOrigin)),
        };
        rows.push(row);
        packetParents.set(message.key, { ...place, messageId: id, areaTag, uuid });
        if (destination.kind === 'echomail') {
          created.push({ row, areaTag });
        } else {
          delivered.push({
            recipient: destination.recipient,
            messageId: id,
            uuid,
            from,
            subject: row.subject,
            timestamp: row.timestamp,
            replyToUuid: parent?.uuid ?? null,
          });
        }
      });
      await queries.insertMessages(rows);
      await store.recordMsgIds(
        trx,
        accepted.map((message, index) => ({
          network: network.name,
          msgId: message.key,
          messageId: ids[index] as number,
          sourceLink,
          kludges: message.message.body.kludges.filter((kludge) => !KLUDGES_KEPT_ELSEWHERE.has(kludge.name)),
        })),
        now.toISOString(),
      );
      await journal(skippedCount > 0 ? `${skippedCount} messages kept in bad` : '');
      // Events last: the event log's order lock is held from the first append to the commit.
      await events.appendMany(
        trx,
        created.map(({ row, areaTag }) => ({
          type: 'message.created',
          areaTag,
          userId: null,
          data: {
            messageId: row.id,
            uuid: row.uuid,
            areaTag,
            replyToMessageId: row.replyToMessageId ?? null,
            toUserName: row.toUserName,
            fromUserName: row.fromUserName,
            subject: row.subject,
            timestamp: row.timestamp,
            confTag: areas.messageAreas.get(areaTag)?.confTag ?? '',
          },
        })),
      );
      await mail.deliver(trx, delivered);
      return { echomail: echomail.length, netmail, duplicates, skipped: skippedCount };
    });
  }

  /** Moves `file` into bad/ (under a free name) with its reason beside it; false when it was gone. */
  async function moveToBad(network: FtnNetwork, file: string, name: string, reason: string): Promise<boolean> {
    const { bad } = network.spool();
    const badName = freeName(bad, name);
    try {
      await rename(file, path.join(bad, badName));
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
    await writeFile(path.join(bad, `${badName}.reason.txt`), `${reason}\n`);
    return true;
  }

  async function writeToBad(network: FtnNetwork, name: string, bytes: Buffer, reason: string): Promise<void> {
    const { bad } = network.spool();
    const badName = freeName(bad, name);
    await writeFile(path.join(bad, badName), bytes);
    await writeFile(path.join(bad, `${badName}.reason.txt`), `${reason}\n`);
  }

  /** Messages of a good packet that had nowhere to go, as a packet of their own in bad/ (tossable again). */
  async function keepSkipped(
    network: FtnNetwork,
    packetName: string,
    header: PacketHeader,
    original: Buffer,
    skipped: readonly Skipped[],
  ): Promise<void> {
    let bytes: Buffer;
    try {
      bytes = writePacket(
        {
          origin: header.origin,
          destination: header.destination,
          createdAt: isValidFtnDateTime(header.createdAt) ? header.createdAt : ftnDateTimeOf(clock.now(), 0),
          password: header.password,
        },
        skipped.map((message) => message.packed),
      );
    } catch (error) {
      if (!(error instanceof FtnFormatError)) throw error;
      // A header or message that cannot be written again as it came: keep the packet as it came
      // (tossing it again refuses what was imported as duplicates).
      bytes = original;
    }
    const reasons = skipped.map((message) => `${describeMessage(message)}: ${message.reason}`);
    await writeToBad(network, `${path.parse(packetName).name}-skipped.pkt`, bytes, reasons.join('\n'));
  }

  /**
   * Tosses one packet's bytes. Returns the reason when it is refused whole (nothing written), or
   * what it did; null when the file went meanwhile.
   */
  async function tossPacket(
    network: FtnNetwork,
    label: string,
    packetName: string,
    bytes: Buffer,
    isStillThere: () => boolean,
  ): Promise<{ refused: string } | { outcome: PacketOutcome | null }> {
    let read: ReturnType<typeof readWholePacket>;
    try {
      read = readWholePacket(network, bytes);
    } catch (error) {
      if (error instanceof FtnFormatError || error instanceof RefusedPacket) return { refused: error.message };
      throw error;
    }
    const { placed, skipped } = await placeMessages(network, read.header, read.candidates);
    const outcome = await importPacket(network, read.link, label, placed, skipped.length, isStillThere);
    if (outcome !== null && skipped.length > 0) await keepSkipped(network, packetName, read.header, bytes, skipped);
    return { outcome };
  }

  return {
    async tossInbound(network) {
      const counts: Counts = { files: 0, packets: 0, echomail: 0, netmail: 0, duplicates: 0, skipped: 0, bad: 0 };
      const { inbound } = network.spool();
      const names = await oldestFirst(inbound);
      const journalBad = async (fileName: string, reason: string) => {
        counts.bad += 1;
        observer.packets('bad', 1);
        await store.journalToss({
          network: network.name,
          fileName,
          tossedAt: clock.now().toISOString(),
          outcome: 'bad',
          imported: 0,
          duplicates: 0,
          skipped: 0,
          detail: reason,
        });
      };
      const count = (outcome: PacketOutcome | null) => {
        if (outcome === null) return;
        counts.packets += 1;
        counts.echomail += outcome.echomail;
        counts.netmail += outcome.netmail;
        counts.duplicates += outcome.duplicates;
        counts.skipped += outcome.skipped;
        observer.packets('in', 1);
        observer.messages('imported', outcome.echomail + outcome.netmail);
        observer.messages('duplicate', outcome.duplicates);
        observer.messages('skipped', outcome.skipped);
      };

      for (const name of names) {
        const file = path.join(inbound, name);
        const isStillThere = () => existsSync(file);
        let bytes: Buffer;
        try {
          const info = await stat(file);
          if (!info.isFile()) continue;
          if (info.size > MAX_INBOUND_FILE_BYTES) {
            const reason = `${info.size} bytes: larger than the ${MAX_INBOUND_FILE_BYTES} bytes a packet or bundle is read up to`;
            if (await moveToBad(network, file, name, reason)) {
              counts.files += 1;
              await journalBad(name, reason);
            }
            continue;
          }
          bytes = await readFile(file);
        } catch (error) {
          if (isMissing(error)) continue;
          throw error;
        }
        counts.files += 1;
        if (isPacketFileName(name)) {
          const result = await tossPacket(network, name, name, bytes, isStillThere);
          if ('refused' in result) {
            if (await moveToBad(network, file, name, result.refused)) await journalBad(name, result.refused);
            continue;
          }
          count(result.outcome);
        } else if (isBundleName(name)) {
          let entries: ReturnType<typeof readBundle>;
          try {
            entries = readBundle(bytes);
          } catch (error) {
            if (!(error instanceof FtnFormatError)) throw error;
            if (await moveToBad(network, file, name, error.message)) await journalBad(name, error.message);
            continue;
          }
          for (const entry of entries) {
            const label = `${name}/${entry.name}`;
            const result = await tossPacket(network, label, entry.name, entry.data, isStillThere);
            if ('refused' in result) {
              if (!isStillThere()) break;
              await writeToBad(network, `${path.parse(name).name}-${entry.name}`, entry.data, result.refused);
              await journalBad(label, result.refused);
              continue;
            }
            if (result.outcome === null) break;
            count(result.outcome);
          }
        } else {
          const reason = 'neither a packet (*.pkt) nor a bundle (*.su0 … *.sa9): baud tosses mail only';
          if (await moveToBad(network, file, name, reason)) await journalBad(name, reason);
          continue;
        }
        try {
          await unlink(file);
        } catch (error) {
          if (!isMissing(error)) throw error;
        }
      }
      return { network: network.name, ...counts };
    },
  };
}

/** The inbound's files, oldest first (then by name): replies come after what they answer. */
async function oldestFirst(directory: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(directory);
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
  const dated: { name: string; modifiedMs: number }[] = [];
  for (const name of names) {
    // Dot files are files being written (the mailer's and ours): never read half a file.
    if (name.startsWith('.')) continue;
    try {
      dated.push({ name, modifiedMs: (await stat(path.join(directory, name))).mtimeMs });
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
  }
  return dated
    .sort((a, b) => a.modifiedMs - b.modifiedMs || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((entry) => entry.name);
}
