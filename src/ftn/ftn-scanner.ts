import { createHash } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../clock.js';
import type { MessageNetwork } from '../messages/message-network.js';
import { parseStoredNetwork } from '../messages/message-network.js';
import type { StoredMessage } from '../messages/message-reads.js';
import type { MessageStore } from '../messages/message-store.js';
import { formatBundleName, writeBundle } from './bundle.js';
import { compareNetNodes, type FtnAddress, type NetNode, parseFtnAddress } from './ftn-address.js';
import { chooseCharset, encodeFtnTextCut } from './ftn-charset.js';
import { formatFtnDateTime, ftnDateTimeOf, parseTzutc } from './ftn-date.js';
import { FtnFormatError } from './ftn-format-error.js';
import { packEchomail, packNetmail } from './ftn-message.js';
import { originOf, pathOf, seenByOf, tearLineOf } from './ftn-metadata.js';
import type { FtnLink, FtnNetwork } from './ftn-networks.js';
import { type FtnObserver, NO_FTN_OBSERVER } from './ftn-observer.js';
import type { FtnStore, KnownMsgId, NewMsgId, QueuedNetmail } from './ftn-store.js';
import { formatMsgId, type Kludge, kludgeValue, writeMessageBody } from './message-body.js';
import { MAX_NAME_BYTES, MAX_SUBJECT_BYTES, type PackedMessage, writePacket } from './packet.js';

/** What one scan of a network put into its outbounds. */
export interface ScanReport {
  readonly network: string;
  /** Echomail messages packed (each counted once, however many links it went to). */
  readonly echomail: number;
  readonly netmail: number;
  /** Packet files written into the links' outbounds. */
  readonly packets: number;
  /** Messages that could not be packed (a date FTN cannot write, a body over 64 KiB …), and why; they are passed over. */
  readonly failed: readonly { readonly messageId: number; readonly reason: string }[];
}

export interface FtnScanner {
  /**
   * Packs what was posted in the network's echomail areas since the last scan, echomail tossed
   * from one link for the others, and the netmail queued by `POST /mail`, into one packet per link
   * in the links' outbounds; then moves the export cursors. Runs on any node: the network's lock
   * makes each message go out once.
   */
  scanNetwork(network: FtnNetwork): Promise<ScanReport>;
  /**
   * Gives every echomail area of the network that has no export cursor one at its newest message:
   * what was posted before an area joined a network stays here.
   */
  startCursors(network: FtnNetwork): Promise<void>;
}

/** Messages read per area and queued netmails per pass: a packet of a few hundred KiB at most. */
const BATCH = 200;
/** Passes lost to another node's export before this scan leaves the rest to the next. */
const MAX_LOST_PASSES = 5;
/** MSGID serials are 32 bits. */
const SERIAL_RANGE = 0x1_0000_0000;
const NO_MSGID_PREFIX = 'no-MSGID ';
/** Kludges written from the message itself, never repeated from a tossed message's own. */
const KLUDGES_NOT_FORWARDED: ReadonlySet<string> = new Set(['MSGID', 'REPLY', 'CHRS', 'CHARSET', 'PATH']);

/** Another node moved the network's serial or cursors between this pass's reads and its lock. */
class LostPass extends Error {}

/**
 * What a link's mail goes out as: an ArcMail bundle (a zip named `<8 hex>.<day><n>`, compressed,
 * as hubs expect) holding one packet, both named from the network, the link and the smallest
 * message id in it.
 *
 * A crash can come after the bundle was renamed into the outbound and before the transaction that
 * moves the cursors commits. The next pass then packs the same messages again, from the same
 * cursor, for the same link, with the same MSGIDs (the serial counter rolled back with the
 * cursors) — and so the same smallest id: on the same day the bundle gets the same name, and its
 * rename replaces the first copy instead of queueing a second. A pass on another day names it for
 * that day; had the mailer already sent the first copy, the hub refuses the second as duplicates,
 * by MSGID. Outside a crash no two bundles of a link share their smallest id, so no name repeats.
 */
function bundleOf(network: string, link: FtnLink, smallestMessageId: number, now: Date, packet: Buffer) {
  const digest = createHash('sha256').update(`${network}\0${link.name}\0${smallestMessageId}`).digest('hex');
  const stem = digest.slice(0, 8);
  return {
    name: formatBundleName(Number.parseInt(stem, 16), now.getUTCDay(), 0),
    bytes: writeBundle([{ name: `${stem}.pkt`, data: packet }], { modifiedAt: now }),
  };
}

/**
 * The first MSGID serial of a network: the Unix time in seconds, so a board that starts again from
 * an empty database does not repeat the serials it used before (FTS-0009 asks serials not to repeat
 * for three years); it fits 32 bits until 2106.
 */
function firstSerial(now: Date): number {
  return Math.floor(now.getTime() / 1000) % SERIAL_RANGE;
}

/** A text line starting with ^A would read as a kludge at the other end: it goes out as `@`, as readers show ^A. */
function withoutKludgeLines(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ^A is the character replaced
  return text.replace(/^\u0001/gm, '@');
}

function utcOffsetOf(kludges: readonly Kludge[]): number {
  const tzutc = kludgeValue(kludges, 'TZUTC');
  if (tzutc === null) return 0;
  try {
    return parseTzutc(tzutc);
  } catch (error) {
    if (error instanceof FtnFormatError) return 0;
    throw error;
  }
}

function sortedNetNodes(entries: readonly NetNode[]): NetNode[] {
  const unique = new Map(entries.map((entry) => [`${entry.net}/${entry.node}`, entry]));
  return [...unique.values()].sort(compareNetNodes);
}

const netNodeOf = (address: FtnAddress): NetNode => ({ net: address.net, node: address.node });
const hasNetNode = (entries: readonly NetNode[], address: FtnAddress) =>
  entries.some((entry) => entry.net === address.net && entry.node === address.node);

/** One message bound for some of the links, and the MSGID row it makes (ours) if it is ours. */
interface Outgoing {
  readonly messageId: number;
  readonly kind: 'echomail' | 'netmail';
  readonly perLink: Map<FtnLink, PackedMessage>;
  readonly newMsgId: NewMsgId | null;
}

/** What a pass read before taking the lock, to check under it that nobody exported meanwhile. */
interface Snapshot {
  readonly nextSerial: number;
  readonly cursors: ReadonlyMap<string, number>;
}

function sameCursors(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): boolean {
  return a.size === b.size && [...a].every(([areaTag, id]) => b.get(areaTag) === id);
}

export function createFtnScanner(deps: {
  store: FtnStore;
  messages: MessageStore;
  clock: Clock;
  /** The tear line's text (`baud 0.1.0`). */
  tearLine: string;
  observer?: FtnObserver;
}): FtnScanner {
  const { store, messages, clock, tearLine } = deps;
  const observer = deps.observer ?? NO_FTN_OBSERVER;

  async function startCursors(network: FtnNetwork): Promise<void> {
    await store.ensureNetwork(network.name, firstSerial(clock.now()));
    const cursors = await store.exportCursors(network.name);
    for (const areaTag of network.echoByArea.keys()) {
      if (cursors.has(areaTag)) continue;
      const newest = await messages.highestMessageId(areaTag);
      await store.startExportCursor(network.name, areaTag, newest, clock.now().toISOString());
    }
  }

  /** The MSGID each replied-to message went by (ours, tossed, or imported with FTN metadata). */
  async function replyIdsOf(network: FtnNetwork, rows: readonly StoredMessage[]): Promise<Map<number, string>> {
    const parentIds = rows.flatMap((row) => (row.replyToMessageId === null ? [] : [row.replyToMessageId]));
    const known = await store.msgIdsOfMessages(network.name, parentIds);
    const replyIds = new Map<number, string>();
    for (const [messageId, row] of known) {
      if (!row.msgId.startsWith(NO_MSGID_PREFIX)) replyIds.set(messageId, row.msgId);
    }
    const others = parentIds.filter((id) => !known.has(id));
    for (const parent of await messages.messagesByIds(others)) {
      const msgId = parseStoredNetwork(parent.network).ftnMsgId;
      if (msgId) replyIds.set(parent.messageId, msgId);
    }
    return replyIds;
  }

  /** SEEN-BY and PATH of a message we send to `targets` (FTS-0004): ours and theirs added; a point adds none. */
  function controlLines(
    network: FtnNetwork,
    targets: readonly FtnLink[],
    seenBy: readonly NetNode[],
    pathSoFar: readonly NetNode[],
  ): { seenBy: NetNode[]; path: NetNode[] } {
    const ours = network.address;
    const isNode = ours.point === 0;
    const added = [
      ...(isNode ? [netNodeOf(ours)] : []),
      ...targets
        .filter((link) => link.address.point === 0 && link.address.zone === ours.zone)
        .map((link) => netNodeOf(link.address)),
    ];
    const last = pathSoFar.at(-1);
    const isLastOnPath = last !== undefined && last.net === ours.net && last.node === ours.node;
    return {
      seenBy: sortedNetNodes([...seenBy, ...added]),
      path: isNode && !isLastOnPath ? [...pathSoFar, netNodeOf(ours)] : [...pathSoFar],
    };
  }

  /** A tossed echomail packed again for the links that have not seen it, its own MSGID and kludges kept. */
  function packForward(
    network: FtnNetwork,
    row: StoredMessage,
    meta: MessageNetwork,
    known: KnownMsgId,
    echoTag: string,
    link: FtnLink,
    lines: { seenBy: NetNode[]; path: NetNode[] },
  ): PackedMessage {
    const kludges: Kludge[] = [];
    if (!known.msgId.startsWith(NO_MSGID_PREFIX)) kludges.push({ name: 'MSGID', value: known.msgId });
    if (meta.ftnReplyId) kludges.push({ name: 'REPLY', value: meta.ftnReplyId });
    kludges.push(...known.kludges.filter((kludge) => !KLUDGES_NOT_FORWARDED.has(kludge.name.toUpperCase())));
    const origin = originOf(meta);
    const tear = tearLineOf(meta);
    const charset = chooseCharset([
      row.fromUserName,
      row.toUserName,
      row.subject,
      row.body,
      ...(tear === null ? [] : [tear]),
      ...(origin === null ? [] : [origin.text]),
    ]);
    const body = writeMessageBody(
      { area: echoTag, kludges, text: row.body, tearLine: tear, origin, seenBy: lines.seenBy, path: lines.path },
      charset,
    );
    return {
      origNode: network.address.node,
      origNet: network.address.net,
      destNode: link.address.node,
      destNet: link.address.net,
      attribute: 0,
      cost: 0,
      dateTime: formatFtnDateTime(ftnDateTimeOf(new Date(row.timestamp), utcOffsetOf(known.kludges))),
      toName: encodeFtnTextCut(row.toUserName, MAX_NAME_BYTES, charset),
      fromName: encodeFtnTextCut(row.fromUserName, MAX_NAME_BYTES, charset),
      subject: encodeFtnTextCut(row.subject, MAX_SUBJECT_BYTES, charset),
      body,
    };
  }

  /** One pass: read, pack and write under temporary names, then move cursors and serial under the lock. */
  async function pass(
    network: FtnNetwork,
  ): Promise<{ echomail: number; netmail: number; packets: number; failed: ScanReport['failed']; isLast: boolean }> {
    const snapshot: Snapshot = {
      nextSerial: await store.nextSerial(network.name),
      cursors: await store.exportCursors(network.name),
    };
    const newCursors = new Map<string, number>();
    const echomailRows: { row: StoredMessage; echoTag: string }[] = [];
    let isLast = true;
    for (const [areaTag, echoTag] of network.echoByArea) {
      const after = snapshot.cursors.get(areaTag);
      // startCursors gives every area one; an area without is one that joined since: it starts now.
      if (after === undefined) continue;
      const rows = await messages.messagesAfter(areaTag, after, BATCH);
      if (rows.length === BATCH) isLast = false;
      const last = rows.at(-1);
      if (last) newCursors.set(areaTag, last.messageId);
      for (const row of rows) echomailRows.push({ row, echoTag });
    }
    const queued = await store.queuedNetmail(network.name, BATCH);
    if (queued.length === BATCH) isLast = false;
    if (echomailRows.length === 0 && queued.length === 0)
      return { echomail: 0, netmail: 0, packets: 0, failed: [], isLast: true };

    const netmailRows = new Map(
      (await messages.messagesByIds(queued.map((entry) => entry.messageId))).map((row) => [row.messageId, row]),
    );
    const allRows = [...echomailRows.map(({ row }) => row), ...netmailRows.values()];
    const known = await store.msgIdsOfMessages(
      network.name,
      allRows.map((row) => row.messageId),
    );
    const replyIds = await replyIdsOf(network, allRows);
    const now = clock.now();
    let serial = snapshot.nextSerial;
    const takeSerial = () => {
      const taken = serial;
      serial = (serial + 1) % SERIAL_RANGE;
      return taken;
    };
    const failed: { messageId: number; reason: string }[] = [];
    const outgoing: Outgoing[] = [];
    const ours = network.address;

    /** What a message written on this board says of itself, netmail or echomail, in UTC. */
    const writtenHere = (row: StoredMessage, msgIdSerial: number) => ({
      fromName: row.fromUserName,
      subject: row.subject,
      text: withoutKludgeLines(row.body),
      writtenAt: ftnDateTimeOf(new Date(row.timestamp), 0),
      utcOffsetMinutes: 0,
      msgIdSerial,
      replyTo: row.replyToMessageId === null ? null : (replyIds.get(row.replyToMessageId) ?? null),
      pid: null,
      tearLine,
      origin: ours,
    });

    // In id order, so serials follow the order messages were posted in (and repeat after a crash).
    const ordered: (
      | { kind: 'echomail'; row: StoredMessage; echoTag: string }
      | { kind: 'netmail'; row: StoredMessage; entry: QueuedNetmail }
    )[] = [
      ...echomailRows.map(({ row, echoTag }) => ({ kind: 'echomail' as const, row, echoTag })),
      ...queued.flatMap((entry) => {
        const row = netmailRows.get(entry.messageId);
        return row ? [{ kind: 'netmail' as const, row, entry }] : [];
      }),
    ].sort((a, b) => a.row.messageId - b.row.messageId);

    for (const item of ordered) {
      const { row } = item;
      const perLink = new Map<FtnLink, PackedMessage>();
      const serialBefore = serial;
      try {
        const stored = known.get(row.messageId);
        if (item.kind === 'netmail') {
          const destination = parseFtnAddress(item.entry.toAddress);
          const msgIdSerial = takeSerial();
          perLink.set(
            network.routeFor(destination),
            packNetmail({
              ...writtenHere(row, msgIdSerial),
              toName: item.entry.toName,
              destination,
              originLine: null,
            }),
          );
          outgoing.push({
            messageId: row.messageId,
            kind: 'netmail',
            perLink,
            newMsgId: ourMsgId(network, row, msgIdSerial),
          });
        } else if (stored === undefined || stored.sourceLink === null) {
          // Posted here: to every link, with a MSGID of ours.
          const msgIdSerial = takeSerial();
          const lines = controlLines(network, network.links, [], []);
          for (const link of network.links) {
            perLink.set(
              link,
              packEchomail({
                ...writtenHere(row, msgIdSerial),
                area: item.echoTag,
                toName: row.toUserName,
                destination: link.address,
                originLine: network.originLine,
                seenBy: lines.seenBy,
                path: lines.path,
              }),
            );
          }
          outgoing.push({
            messageId: row.messageId,
            kind: 'echomail',
            perLink,
            newMsgId: stored === undefined ? ourMsgId(network, row, msgIdSerial) : null,
          });
        } else {
          // Tossed from one link: on to the others that have not seen it (we are their hub).
          const meta = parseStoredNetwork(row.network);
          const seenBy = seenByOf(meta);
          const targets = network.links.filter(
            (link) =>
              link.name !== stored.sourceLink && !(link.address.point === 0 && hasNetNode(seenBy, link.address)),
          );
          const lines = controlLines(network, targets, seenBy, pathOf(meta));
          for (const link of targets)
            perLink.set(link, packForward(network, row, meta, stored, item.echoTag, link, lines));
          outgoing.push({ messageId: row.messageId, kind: 'echomail', perLink, newMsgId: null });
        }
      } catch (error) {
        if (!(error instanceof FtnFormatError)) throw error;
        serial = serialBefore;
        failed.push({ messageId: row.messageId, reason: error.message });
      }
    }

    // One bundle per link, written under a dot name (the mailer skips those) and synced.
    const byLink = new Map<FtnLink, { messageIds: number[]; packed: PackedMessage[] }>();
    for (const message of outgoing) {
      for (const [link, packed] of message.perLink) {
        const entry = byLink.get(link) ?? { messageIds: [], packed: [] };
        entry.messageIds.push(message.messageId);
        entry.packed.push(packed);
        byLink.set(link, entry);
      }
    }
    const written: { temporary: string; final: string; directory: string }[] = [];
    try {
      for (const [link, { messageIds, packed }] of byLink) {
        const directory = network.spool().outboundFor(link.address);
        const packet = writePacket(
          { origin: ours, destination: link.address, createdAt: ftnDateTimeOf(now, 0), password: link.packetPassword },
          packed,
        );
        const { name, bytes } = bundleOf(network.name, link, Math.min(...messageIds), now, packet);
        const temporary = path.join(directory, `.${name}.tmp`);
        const handle = await open(temporary, 'w');
        try {
          await handle.writeFile(bytes);
          await handle.sync();
        } finally {
          await handle.close();
        }
        written.push({ temporary, final: path.join(directory, name), directory });
      }

      await messages.transaction(async (_queries, trx) => {
        const lockedSerial = await store.lockNetwork(trx, network.name);
        const cursorsNow = await store.exportCursors(network.name, trx);
        if (lockedSerial !== snapshot.nextSerial || !sameCursors(cursorsNow, snapshot.cursors)) throw new LostPass();
        for (const file of written) await rename(file.temporary, file.final);
        await store.recordMsgIds(
          trx,
          outgoing.flatMap((message) => (message.newMsgId === null ? [] : [message.newMsgId])),
          now.toISOString(),
        );
        for (const [areaTag, lastMessageId] of newCursors) {
          await store.setExportCursor(trx, network.name, areaTag, lastMessageId, now.toISOString());
        }
        await store.dequeueNetmail(
          trx,
          queued.map((entry) => entry.messageId),
        );
        await store.setNextSerial(trx, network.name, serial);
      });
    } catch (error) {
      await Promise.all(written.map((file) => unlink(file.temporary).catch(() => {})));
      throw error;
    }
    await syncDirectories(new Set(written.map((file) => file.directory)));
    const echomail = outgoing.filter((message) => message.kind === 'echomail' && message.perLink.size > 0).length;
    const netmail = outgoing.filter((message) => message.kind === 'netmail').length;
    observer.packets('out', written.length);
    observer.messages('exported', echomail + netmail);
    return { echomail, netmail, packets: written.length, failed, isLast };
  }

  return {
    startCursors,

    async scanNetwork(network) {
      await startCursors(network);
      const report = { echomail: 0, netmail: 0, packets: 0, failed: [] as { messageId: number; reason: string }[] };
      let lostPasses = 0;
      for (;;) {
        let result: Awaited<ReturnType<typeof pass>>;
        try {
          result = await pass(network);
        } catch (error) {
          if (!(error instanceof LostPass)) throw error;
          // Another node exported meanwhile: read again from where it left off.
          lostPasses += 1;
          if (lostPasses >= MAX_LOST_PASSES) break;
          continue;
        }
        report.echomail += result.echomail;
        report.netmail += result.netmail;
        report.packets += result.packets;
        report.failed.push(...result.failed);
        if (result.isLast) break;
      }
      return { network: network.name, ...report };
    },
  };
}

function ourMsgId(network: FtnNetwork, row: StoredMessage, serial: number): NewMsgId {
  return {
    network: network.name,
    msgId: formatMsgId(network.address, serial),
    messageId: row.messageId,
    sourceLink: null,
    kludges: [],
  };
}

/** Makes the renames into the outbounds durable: a rename lives in its directory's entry. */
async function syncDirectories(directories: ReadonlySet<string>): Promise<void> {
  for (const directory of directories) {
    const handle = await open(directory, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}
