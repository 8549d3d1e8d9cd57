import { type Insertable, sql } from 'kysely';
import type { Dialect, Executor } from '../db/database.js';
import type { MessagesTable } from '../db/schema.js';
import { ServiceUnavailableError } from '../errors.js';
import { addToLiveCounts } from './message-live-counts.js';
import type { MessageReadCache } from './message-read-cache.js';
import { MAX_MESSAGE_ID } from './message-rules.js';
import { insertIndexedMessages, unindexMessage } from './message-search-store.js';

/** A message to insert: its id reserved beforehand (`reserveMessageIds`), its thread place computed from it. */
export type NewMessageRow = Omit<Insertable<MessagesTable>, 'id' | 'deletedAt'> & { readonly id: number };

/**
 * The writes of the message base; several that belong together run in one transaction (see
 * MessageStore.transaction). Each keeps what hangs on the message rows in step with them: the
 * area's counters, its live counts (message-live-counts.ts) and the search index
 * (message-search-store.ts).
 */
export interface MessageWrites {
  /** Sets (or moves back) the user's pointer in an area. */
  setPointer(userId: number, areaTag: string, lastReadMessageId: number, updatedAt: string): Promise<void>;
  /**
   * Takes `count` new message ids, ascending. Called after the area's counter row is locked
   * (`addToAreaCounters`), so the ids of one area are taken in the order their transactions
   * commit; knowing them before the insert lets a message's thread place (which holds its own
   * id) go in with the row. Past MAX_MESSAGE_ID: ServiceUnavailableError.
   */
  reserveMessageIds(count: number): Promise<number[]>;
  /** Multi-row inserts of rows whose ids were reserved; their words go into the search index, they into the live counts. */
  insertMessages(rows: readonly NewMessageRow[]): Promise<void>;
  /**
   * Adds `added` messages to an area's count and moves `lastMessageAt` forward to
   * `newestTimestamp` if that is later. Creates the counter row on the area's first message.
   */
  addToAreaCounters(areaTag: string, added: number, newestTimestamp: string): Promise<void>;
  /** Marks a live message deleted and takes it out of the index; false when it was already gone (a concurrent delete won). */
  markDeleted(messageId: number, deletedAt: string): Promise<boolean>;
  /**
   * Takes a message marked deleted off its area's live counts. Called after
   * `removeFromAreaCounters`: writers lock the area's counters before its live counts (posts
   * do), so a deletion and a post never wait for each other in a cycle.
   */
  removeFromLiveCounts(areaTag: string, messageId: number): Promise<void>;
  /** Takes one deleted message off its area's counters. */
  removeFromAreaCounters(areaTag: string, deletedTimestamp: string): Promise<void>;
}

/**
 * Rows per INSERT statement: at 10 bound parameters a row this stays far below SQLite's 32,766
 * and PostgreSQL's 65,535 parameter limits. 100..2000 measured within noise of each other on
 * SQLite; most of the import's time is SQLite's own insert work.
 */
const ROWS_PER_INSERT = 500;

/**
 * The writes of the message base in `db` (the database, or a transaction); `stale` hears of
 * each (see MessageReadCache), so remembered reads go stale.
 */
export function messageWrites(
  db: Executor,
  dialect: Dialect,
  stale: Pick<MessageReadCache, 'written' | 'pointerMoved'>,
): MessageWrites {
  const { written } = stale;
  return {
    async setPointer(userId, areaTag, lastReadMessageId, updatedAt) {
      await db
        .insertInto('messagePointers')
        .values({ userId, areaTag, lastReadMessageId, updatedAt })
        .onConflict((conflict) => conflict.columns(['userId', 'areaTag']).doUpdateSet({ lastReadMessageId, updatedAt }))
        .execute();
      stale.pointerMoved();
    },

    async reserveMessageIds(count) {
      if (count === 0) return [];
      // Past MAX_MESSAGE_ID an id no longer fits PostgreSQL's column nor a thread path (and past
      // 2^53 JavaScript's arithmetic repeats ids): both dialects refuse alike, never with a 500.
      // Only the sysop can free ids, so clients are asked to come back in an hour, not at once.
      const idsUsedUp = () =>
        new ServiceUnavailableError(
          'message.ids-exhausted',
          `The board has used every message id (up to ${MAX_MESSAGE_ID}): no message can be posted.`,
          3600,
        );
      if (dialect === 'postgres') {
        try {
          const { rows } = await sql<{ id: number }>`
            SELECT nextval(pg_get_serial_sequence('messages', 'id'))::integer AS id
              FROM generate_series(1, ${count})`.execute(db);
          return rows.map((row) => Number(row.id)).sort((a, b) => a - b);
        } catch (error) {
          // 2200H: sequence_generator_limit_exceeded (the identity's maximum is the integer's).
          if ((error as { code?: unknown }).code === '2200H') throw idsUsedUp();
          throw error;
        }
      }
      // SQLite: AUTOINCREMENT's counter; this transaction holds the write lock since it locked the area's counters.
      const { rows } = await sql<{ seq: number }>`SELECT seq FROM sqlite_sequence WHERE name = 'messages'`.execute(db);
      const last = Number(rows[0]?.seq ?? 0);
      if (last > MAX_MESSAGE_ID - count) throw idsUsedUp();
      return Array.from({ length: count }, (_, index) => last + index + 1);
    },

    async insertMessages(rows) {
      await insertIndexedMessages(db, dialect, rows, async () => {
        for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
          await db
            .insertInto('messages')
            .values(rows.slice(start, start + ROWS_PER_INSERT))
            .execute();
        }
      });
      await addToLiveCounts(db, rows, 1);
      written();
    },

    async addToAreaCounters(areaTag, added, newestTimestamp) {
      await db
        .insertInto('messageAreas')
        .values({ areaTag, messageCount: added, lastMessageAt: newestTimestamp })
        .onConflict((conflict) =>
          conflict.column('areaTag').doUpdateSet((eb) => ({
            messageCount: eb('messageAreas.messageCount', '+', eb.ref('excluded.messageCount')),
            lastMessageAt: eb
              .case()
              .when(
                eb.or([
                  eb('messageAreas.lastMessageAt', 'is', null),
                  eb('excluded.lastMessageAt', '>', eb.ref('messageAreas.lastMessageAt')),
                ]),
              )
              .then(eb.ref('excluded.lastMessageAt'))
              .else(eb.ref('messageAreas.lastMessageAt'))
              .end(),
          })),
        )
        .execute();
      written();
    },

    async markDeleted(messageId, deletedAt) {
      const result = await db
        .updateTable('messages')
        .set({ deletedAt })
        .where('id', '=', messageId)
        .where('deletedAt', 'is', null)
        .executeTakeFirst();
      const wasLive = Number(result.numUpdatedRows) === 1;
      // A deleted message is never found again: its words leave the index with it.
      if (wasLive) await unindexMessage(db, dialect, messageId);
      written();
      return wasLive;
    },

    async removeFromLiveCounts(areaTag, messageId) {
      await addToLiveCounts(db, [{ areaTag, id: messageId }], -1);
      written();
    },

    // `lastMessageAt` is recomputed from the live messages only when the deleted one may have been
    // the newest: that is the one case that needs a scan of the area, so ordinary deletions stay
    // cheap in big areas.
    async removeFromAreaCounters(areaTag, deletedTimestamp) {
      const counters = await db
        .updateTable('messageAreas')
        .set((eb) => ({ messageCount: eb('messageCount', '-', 1) }))
        .where('areaTag', '=', areaTag)
        .returning('lastMessageAt')
        .executeTakeFirst();
      written();
      if (!counters || (counters.lastMessageAt !== null && counters.lastMessageAt > deletedTimestamp)) return;
      const newest = await db
        .selectFrom('messages')
        .select((eb) => eb.fn.max('timestamp').as('newest'))
        .where('areaTag', '=', areaTag)
        .where('deletedAt', 'is', null)
        .executeTakeFirst();
      await db
        .updateTable('messageAreas')
        .set({ lastMessageAt: newest?.newest ?? null })
        .where('areaTag', '=', areaTag)
        .execute();
      written();
    },
  };
}
