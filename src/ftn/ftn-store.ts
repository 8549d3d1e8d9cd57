import type { Db, Executor } from '../db/database.js';
import type { FtnTossJournalTable } from '../db/schema.js';
import type { Kludge } from './message-body.js';

/** What the board knows of one MSGID of a network. */
export interface KnownMsgId {
  readonly msgId: string;
  readonly messageId: number;
  /** The link a tossed message came from; null for a message posted here. */
  readonly sourceLink: string | null;
  /** The ^A lines a tossed message carried beyond MSGID and REPLY (empty for ours). */
  readonly kludges: readonly Kludge[];
}

export interface NewMsgId extends KnownMsgId {
  readonly network: string;
}

/** Netmail waiting for the scanner. */
export interface QueuedNetmail {
  readonly messageId: number;
  readonly network: string;
  /** `zone:net/node[.point]` */
  readonly toAddress: string;
  readonly toName: string;
}

export type TossOutcome = FtnTossJournalTable['outcome'];

export interface TossJournalEntry {
  readonly network: string;
  readonly fileName: string;
  readonly tossedAt: string;
  readonly outcome: TossOutcome;
  readonly imported: number;
  readonly duplicates: number;
  readonly skipped: number;
  readonly detail: string;
}

/**
 * The tosser's and scanner's rows (see migration 0017-ftn-echomail): MSGIDs seen per network,
 * the serial counter that is also the network's lock, export cursors per area, the netmail queue
 * and the toss journal. Methods that take an executor run in the caller's transaction.
 */
export interface FtnStore {
  /**
   * Makes the network's counter row when it has none, starting at `firstSerial`. Outside any
   * transaction, so the row exists before a transaction takes its lock.
   */
  ensureNetwork(network: string, firstSerial: number): Promise<void>;
  /**
   * Takes the network's lock in `trx` and returns its next MSGID serial. A write, and the first
   * statement of the transaction: on SQLite it takes the write lock before anything is read (a
   * read first could meet a newer commit and fail with SQLITE_BUSY instead of waiting); on
   * PostgreSQL it holds the row until commit, so tosses and exports of one network, on any node,
   * run one after the other.
   */
  lockNetwork(trx: Executor, network: string): Promise<number>;
  /** The network's next MSGID serial, read without its lock. */
  nextSerial(network: string): Promise<number>;
  setNextSerial(trx: Executor, network: string, nextSerial: number): Promise<void>;
  /** The rows of the given MSGIDs the network has seen, by MSGID. */
  findMsgIds(network: string, msgIds: readonly string[], executor?: Executor): Promise<Map<string, KnownMsgId>>;
  /** The MSGID rows of the given messages, by message id. */
  msgIdsOfMessages(network: string, messageIds: readonly number[]): Promise<Map<number, KnownMsgId>>;
  recordMsgIds(trx: Executor, rows: readonly NewMsgId[], createdAt: string): Promise<void>;
  /** The export cursor of each area of the network that has one. */
  exportCursors(network: string, executor?: Executor): Promise<Map<string, number>>;
  /** Gives an area its first export cursor; one it has already stays. */
  startExportCursor(network: string, areaTag: string, lastMessageId: number, at: string): Promise<void>;
  setExportCursor(trx: Executor, network: string, areaTag: string, lastMessageId: number, at: string): Promise<void>;
  queueNetmail(trx: Executor, netmail: QueuedNetmail): Promise<void>;
  /** The oldest `limit` queued netmails of the network. */
  queuedNetmail(network: string, limit: number): Promise<QueuedNetmail[]>;
  /** Queued netmails per network. */
  countQueuedNetmail(): Promise<Map<string, number>>;
  dequeueNetmail(trx: Executor, messageIds: readonly number[]): Promise<void>;
  /** Writes a journal entry, in `executor` (a toss's transaction) or on its own. */
  journalToss(entry: TossJournalEntry, executor?: Executor): Promise<void>;
  /** The newest journal entries of the network, newest first. */
  recentTosses(network: string, limit: number): Promise<TossJournalEntry[]>;
}

/** Keys per `IN (…)` list: far below SQLite's and PostgreSQL's parameter limits. */
const KEYS_PER_QUERY = 500;
/** Rows per INSERT: 6 parameters a row. */
const ROWS_PER_INSERT = 500;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < items.length; start += size) result.push(items.slice(start, start + size));
  return result;
}

function readKludges(json: string): Kludge[] {
  try {
    const parsed: unknown = JSON.parse(json);
    if (!Array.isArray(parsed)) return [];
    return parsed.flatMap((item: unknown) => {
      const { name, value } = (item ?? {}) as { name?: unknown; value?: unknown };
      return typeof name === 'string' && typeof value === 'string' ? [{ name, value }] : [];
    });
  } catch {
    return [];
  }
}

function knownOf(row: { msgId: string; messageId: number; sourceLink: string | null; kludges: string }): KnownMsgId {
  return {
    msgId: row.msgId,
    messageId: Number(row.messageId),
    sourceLink: row.sourceLink,
    kludges: readKludges(row.kludges),
  };
}

export function createFtnStore(db: Db): FtnStore {
  return {
    async ensureNetwork(network, firstSerial) {
      await db
        .insertInto('ftnSerials')
        .values({ network, nextSerial: firstSerial })
        .onConflict((conflict) => conflict.column('network').doNothing())
        .execute();
    },

    async lockNetwork(trx, network) {
      const row = await trx
        .updateTable('ftnSerials')
        .set({ network })
        .where('network', '=', network)
        .returning('nextSerial')
        .executeTakeFirst();
      if (!row) throw new Error(`the FTN network "${network}" has no counter row (ensureNetwork first)`);
      return Number(row.nextSerial);
    },

    async nextSerial(network) {
      const row = await db
        .selectFrom('ftnSerials')
        .select('nextSerial')
        .where('network', '=', network)
        .executeTakeFirst();
      if (!row) throw new Error(`the FTN network "${network}" has no counter row (ensureNetwork first)`);
      return Number(row.nextSerial);
    },

    async setNextSerial(trx, network, nextSerial) {
      await trx.updateTable('ftnSerials').set({ nextSerial }).where('network', '=', network).execute();
    },

    async findMsgIds(network, msgIds, executor = db) {
      const found = new Map<string, KnownMsgId>();
      for (const keys of chunks([...new Set(msgIds)], KEYS_PER_QUERY)) {
        const rows = await executor
          .selectFrom('ftnMessageIds')
          .select(['msgId', 'messageId', 'sourceLink', 'kludges'])
          .where('network', '=', network)
          .where('msgId', 'in', keys)
          .execute();
        for (const row of rows) found.set(row.msgId, knownOf(row));
      }
      return found;
    },

    async msgIdsOfMessages(network, messageIds) {
      const found = new Map<number, KnownMsgId>();
      for (const ids of chunks([...new Set(messageIds)], KEYS_PER_QUERY)) {
        const rows = await db
          .selectFrom('ftnMessageIds')
          .select(['msgId', 'messageId', 'sourceLink', 'kludges'])
          .where('messageId', 'in', ids)
          .where('network', '=', network)
          .execute();
        for (const row of rows) found.set(Number(row.messageId), knownOf(row));
      }
      return found;
    },

    async recordMsgIds(trx, rows, createdAt) {
      for (const chunk of chunks(rows, ROWS_PER_INSERT)) {
        await trx
          .insertInto('ftnMessageIds')
          .values(
            chunk.map((row) => ({
              network: row.network,
              msgId: row.msgId,
              messageId: row.messageId,
              sourceLink: row.sourceLink,
              kludges: JSON.stringify(row.kludges),
              createdAt,
            })),
          )
          .execute();
      }
    },

    async exportCursors(network, executor = db) {
      const rows = await executor
        .selectFrom('ftnExportCursors')
        .select(['areaTag', 'lastMessageId'])
        .where('network', '=', network)
        .execute();
      return new Map(rows.map((row) => [row.areaTag, Number(row.lastMessageId)]));
    },

    async startExportCursor(network, areaTag, lastMessageId, at) {
      await db
        .insertInto('ftnExportCursors')
        .values({ network, areaTag, lastMessageId, updatedAt: at })
        .onConflict((conflict) => conflict.columns(['network', 'areaTag']).doNothing())
        .execute();
    },

    async setExportCursor(trx, network, areaTag, lastMessageId, at) {
      await trx
        .insertInto('ftnExportCursors')
        .values({ network, areaTag, lastMessageId, updatedAt: at })
        .onConflict((conflict) =>
          conflict.columns(['network', 'areaTag']).doUpdateSet({ lastMessageId, updatedAt: at }),
        )
        .execute();
    },

    async queueNetmail(trx, netmail) {
      await trx.insertInto('ftnNetmailQueue').values(netmail).execute();
    },

    queuedNetmail: (network, limit) =>
      db
        .selectFrom('ftnNetmailQueue')
        .select(['messageId', 'network', 'toAddress', 'toName'])
        .where('network', '=', network)
        .orderBy('messageId')
        .limit(limit)
        .execute(),

    async countQueuedNetmail() {
      const rows = await db
        .selectFrom('ftnNetmailQueue')
        .select((eb) => ['network', eb.fn.countAll<number>().as('count')])
        .groupBy('network')
        .execute();
      return new Map(rows.map((row) => [row.network, Number(row.count)]));
    },

    async dequeueNetmail(trx, messageIds) {
      for (const ids of chunks(messageIds, KEYS_PER_QUERY)) {
        await trx.deleteFrom('ftnNetmailQueue').where('messageId', 'in', ids).execute();
      }
    },

    async journalToss(entry, executor = db) {
      await executor.insertInto('ftnTossJournal').values(entry).execute();
    },

    async recentTosses(network, limit) {
      const rows = await db
        .selectFrom('ftnTossJournal')
        .select(['network', 'fileName', 'tossedAt', 'outcome', 'imported', 'duplicates', 'skipped', 'detail'])
        .where('network', '=', network)
        .orderBy('network')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map((row) => ({
        ...row,
        imported: Number(row.imported),
        duplicates: Number(row.duplicates),
        skipped: Number(row.skipped),
      }));
    },
  };
}
