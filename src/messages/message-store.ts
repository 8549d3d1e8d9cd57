import { type ExpressionBuilder, type Insertable, sql, type Transaction } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database, Db, Dialect, Executor } from '../db/database.js';
import { pageFromRows, rowsToFetch } from '../db/keyset.js';
import { prepareQuery } from '../db/prepared-query.js';
import type { MessagesTable, Tables } from '../db/schema.js';
import { ServiceUnavailableError } from '../errors.js';
import type { Page, PageRequest } from '../page.js';
import { createWordShareReader, mergePendingEntries } from '../search/full-text-index.js';
import { addToLiveCounts, pointersWithUnreadQuery } from './message-live-counts.js';
import { createMessageReadCache } from './message-read-cache.js';
import { MAX_MESSAGE_ID, type MessageOrder } from './message-rules.js';
import {
  clearMessageIndex,
  findMessages,
  indexAllMessages,
  indexMessages,
  type MessageSearch,
  type MessageSearchFilters,
  unindexMessage,
} from './message-search-store.js';
import { depthOf, type ThreadPlace } from './message-thread.js';

/** A message to insert: its id reserved beforehand (`reserveMessageIds`), its thread place computed from it. */
export type NewMessageRow = Omit<Insertable<MessagesTable>, 'id' | 'deletedAt'> & { readonly id: number };

/** A message as lists show it; the columns are selected in exactly this shape (`id` as `messageId`). */
export interface MessageSummary {
  readonly messageId: number;
  readonly uuid: string;
  readonly areaTag: string;
  readonly replyToMessageId: number | null;
  readonly toUserName: string;
  readonly fromUserName: string;
  readonly subject: string;
  readonly timestamp: string;
}

export interface MessageDetailRow extends MessageSummary {
  readonly fromUserId: number | null;
  /** The first message of the thread; its own id for a root. */
  readonly threadRootId: number;
  readonly body: string;
  readonly network: string;
  /** Live messages that reply to this one. */
  readonly replyCount: number;
}

/** A message as a thread lists it: its summary, how deep it sits and how many live replies it has. */
export interface ThreadMessage extends MessageSummary {
  /** 0 for the thread's root. */
  readonly depth: number;
  readonly replyCount: number;
}

export interface AreaCounters {
  readonly messageCount: number;
  readonly lastMessageAt: string | null;
}

/** A message a search found: its summary, and its body for the snippet. */
export type SearchHit = MessageSummary & { readonly body: string };

/** A user's new-scan pointer in an area, and the live messages after it. */
export interface PointerWithUnread {
  readonly lastReadMessageId: number;
  readonly unreadCount: number;
}

const SUMMARY_COLUMNS = [
  'id as messageId',
  'uuid',
  'areaTag',
  'replyToMessageId',
  'toUserName',
  'fromUserName',
  'subject',
  'timestamp',
] as const;

/**
 * Rows per INSERT statement: at 10 bound parameters a row this stays far below SQLite's 32,766
 * and PostgreSQL's 65,535 parameter limits. 100..2000 measured within noise of each other on
 * SQLite; most of the import's time is SQLite's own insert work.
 */
const ROWS_PER_INSERT = 500;

/**
 * Every query of the message base; the counters in `message_areas` are only ever changed next
 * to the message rows they count. Pages, messages and single-area counters read outside a
 * transaction are remembered (see message-read-cache.ts): a busy area's first page is
 * asked for far more often than it changes.
 */
export function createMessageStore(database: Pick<Database, 'db' | 'dialect'>, clock: Clock) {
  const { db, dialect } = database;
  const prepared = prepareMessageQueries(db, dialect);
  const remembered = createMessageReadCache(clock);
  const { written } = remembered;
  const queries = messageQueries(db, dialect, prepared, written);
  const wordShares = createWordShareReader(db, dialect, 'message_search', clock);

  return {
    ...queries,

    /** One page of the live messages that match a search, in its order (see message-search-store.ts). */
    searchMessages: (search: MessageSearchFilters & Pick<MessageSearch, 'sort'>, request: PageRequest) =>
      remembered.search(searchPageCacheKey(search, request), async (): Promise<Page<SearchHit>> => {
        const found = await findMessages(
          db,
          dialect,
          { ...search, beforeKey: request.afterKey, bound: request.bound ?? null, limit: rowsToFetch(request) },
          await wordShares(),
        );
        const page = pageFromRows(
          found.rows,
          request,
          (row) => row.sortKey,
          ({ sortKey: _, ...row }) => row,
        );
        return found.bound === null ? page : { ...page, bound: found.bound };
      }),

    listAreaMessages: (areaTag: string, request: AreaPageRequest): Promise<Page<MessageSummary>> =>
      remembered.page(areaPageCacheKey(areaTag, request), () => queries.listAreaMessages(areaTag, request)),
    findLiveMessage: (uuid: string) => remembered.message(uuid, () => queries.findLiveMessage(uuid)),
    areaCounters: (areaTags: readonly string[]): Promise<Map<string, AreaCounters>> =>
      areaTags.length === 1
        ? remembered.counters(areaTags[0] ?? '', () => queries.areaCounters(areaTags))
        : queries.areaCounters(areaTags),
    readCacheBytes: remembered.bytes,
    /**
     * Brings the query planner's statistics of the message tables up to date after a bulk
     * write. On PostgreSQL a freshly imported million-message area otherwise pages with a
     * bitmap scan and a sort — 739 ms a page instead of 5 ms, measured — until autovacuum gets
     * round to it. SQLite's planner takes the (area_tag, id) index without statistics. The
     * search index's pending entries are merged too (see mergePendingEntries).
     */
    async refreshStatistics(): Promise<void> {
      await mergePendingEntries(db, dialect, 'message_search');
      if (dialect === 'postgres') await sql`ANALYZE messages, message_areas, message_search`.execute(db);
    },
    /** Empties the search index and fills it again from the live messages, in one transaction. */
    rebuildSearchIndex(onProgress: (indexed: number, total: number) => void): Promise<number> {
      return db.transaction().execute(async (trx) => {
        await clearMessageIndex(trx);
        return indexAllMessages(trx, dialect, onProgress);
      });
    },

    /**
     * Runs `work` in one transaction with the queries bound to it; `trx` is for other domains'
     * stores that must write in the same transaction (the poster's postCount). Reads in it are
     * never remembered, and once it is over every remembered read is stale.
     */
    async transaction<T>(work: (queries: MessageQueries, trx: Transaction<Tables>) => Promise<T>): Promise<T> {
      try {
        return await db.transaction().execute((trx) => work(messageQueries(trx, dialect, prepared, written), trx));
      } finally {
        written();
      }
    },
  };
}

export type MessageStore = ReturnType<typeof createMessageStore>;

/**
 * Message ids start at 1, so "after key 0" is the first page: one statement serves every page.
 */
const BEFORE_FIRST_MESSAGE = 0;

/** A page of an area's live messages, in either order. */
export interface AreaPageRequest extends PageRequest {
  /**
   * `oldest` (v1): ids ascending after `afterKey`. `newest`: ids descending below `afterKey`
   * (the last, so lowest, id of the previous page).
   */
  readonly order: MessageOrder;
  /** Only messages with a higher id: the new-scan pointer of `?unread=true`, else 0. */
  readonly aboveId: number;
}

/**
 * The remembered page of `request`. The oldest order's bounds fold into one (what v1 asked
 * for), so an unread page and the page after the same cursor share their entry.
 */
/** Everything that shapes a page of search hits: the search (its areas too: callers see different ones) and the page asked for. */
function searchPageCacheKey(search: MessageSearchFilters & Pick<MessageSearch, 'sort'>, request: PageRequest): string {
  const { sort, query, areaTags, from, to, since, until } = search;
  return JSON.stringify([
    sort,
    query,
    areaTags,
    from,
    to,
    since,
    until,
    request.afterKey,
    request.bound ?? null,
    request.limit,
  ]);
}

function areaPageCacheKey(areaTag: string, request: AreaPageRequest): string {
  return request.order === 'oldest'
    ? `oldest ${areaTag} ${Math.max(request.afterKey ?? BEFORE_FIRST_MESSAGE, request.aboveId)} ${request.limit}`
    : `newest ${areaTag} ${request.aboveId} ${request.afterKey} ${request.limit}`;
}

export interface AreaPageParams {
  readonly areaTag: string;
  readonly afterKey: number;
  readonly limit: number;
}

export interface NewestAreaPageParams {
  readonly areaTag: string;
  readonly aboveId: number;
  /** Inclusive: an exclusive bound above the highest id would not fit PostgreSQL's `integer`. */
  readonly atMostId: number;
  readonly limit: number;
}

/**
 * One page of an area's live messages: an index range scan however deep the page — of
 * `messages_area_live` (area_tag, id of live messages), or of the primary key when the page's
 * id range is the narrower one
 * (test/db/query-plans.test.ts checks the plans PostgreSQL picks).
 */
export function areaPageQuery(db: Db, p: AreaPageParams) {
  return db
    .selectFrom('messages')
    .select(SUMMARY_COLUMNS)
    .where('areaTag', '=', p.areaTag)
    .where('deletedAt', 'is', null)
    .where('id', '>', p.afterKey)
    .orderBy('id')
    .limit(p.limit);
}

/**
 * One page of an area's live messages newest first: the same index range scan as
 * `areaPageQuery`, walked backwards from `atMostId`, so the deepest page back in time costs
 * what the newest costs (test/db/query-plans.test.ts checks the plans).
 */
export function newestAreaPageQuery(db: Db, p: NewestAreaPageParams) {
  return db
    .selectFrom('messages')
    .select(SUMMARY_COLUMNS)
    .where('areaTag', '=', p.areaTag)
    .where('deletedAt', 'is', null)
    .where('id', '>', p.aboveId)
    .where('id', '<=', p.atMostId)
    .orderBy('id', 'desc')
    .limit(p.limit);
}

/**
 * One page of a thread in depth-first order, after message `afterId` (null: the first page):
 * a range scan of `messages_thread` (thread_root_id, thread_path) from that message's place,
 * each message's live replies counted in `messages_reply_live` — so any page of any thread
 * costs the same (test/db/query-plans.test.ts checks the plans).
 */
export function threadPageQuery(db: Db, p: { threadRootId: number; afterId: number | null; limit: number }) {
  const { threadRootId, afterId } = p;
  return db
    .selectFrom('messages as m')
    .select([...SUMMARY_COLUMNS.map((column) => `m.${column}` as const), 'm.threadPath'])
    .select(liveReplyCount)
    .where('m.threadRootId', '=', threadRootId)
    .where('m.deletedAt', 'is', null)
    .$if(afterId !== null, (query) =>
      query.where('m.threadPath', '>', (eb) =>
        eb
          .selectFrom('messages as last')
          .select('last.threadPath')
          .where('last.id', '=', afterId as number)
          .where('last.threadRootId', '=', threadRootId),
      ),
    )
    .orderBy('m.threadPath')
    .limit(p.limit);
}

/** The live replies of message `m`, counted by the reply index: a column of a query over `messages as m`. */
function liveReplyCount(eb: ExpressionBuilder<Tables & { m: MessagesTable }, 'm'>) {
  return eb
    .selectFrom('messages as reply')
    .select(eb.fn.countAll<number>().as('count'))
    .whereRef('reply.replyToMessageId', '=', 'm.id')
    .where('reply.deletedAt', 'is', null)
    .as('replyCount');
}

/** The queries of reading and posting, built once (see `prepareQuery`) and run in any executor. */
function prepareMessageQueries(db: Db, dialect: Dialect) {
  return {
    areaPage: prepareQuery(db, (p: AreaPageParams) => areaPageQuery(db, p)),
    newestAreaPage: prepareQuery(db, (p: NewestAreaPageParams) => newestAreaPageQuery(db, p)),
    liveMessage: prepareQuery(db, (p: { uuid: string }) =>
      db
        .selectFrom('messages as m')
        .select([
          ...SUMMARY_COLUMNS.map((column) => `m.${column}` as const),
          'm.fromUserId',
          'm.threadRootId',
          'm.body',
          'm.network',
        ])
        .select(liveReplyCount)
        .where('m.uuid', '=', p.uuid)
        .where('m.deletedAt', 'is', null),
    ),
    liveMessagePlace: prepareQuery(db, (p: { messageId: number }) =>
      db
        .selectFrom('messages')
        .select(['areaTag', 'threadRootId', 'threadPath'])
        .where('id', '=', p.messageId)
        .where('deletedAt', 'is', null),
    ),
    pointerWithUnread: prepareQuery(db, (p: { userId: number; areaTag: string }) =>
      pointersWithUnreadQuery(db, dialect, { userId: p.userId, areaTags: [p.areaTag] }),
    ),
    pointer: prepareQuery(db, (p: { userId: number; areaTag: string }) =>
      db
        .selectFrom('messagePointers')
        .select(['areaTag', 'lastReadMessageId'])
        .where('userId', '=', p.userId)
        .where('areaTag', '=', p.areaTag),
    ),
    areaCounters: prepareQuery(db, (p: { areaTag: string }) =>
      db
        .selectFrom('messageAreas')
        .select(['areaTag', 'messageCount', 'lastMessageAt'])
        .where('areaTag', '=', p.areaTag),
    ),
  };
}

type PreparedMessageQueries = ReturnType<typeof prepareMessageQueries>;

/** `written` is called after every write, so remembered reads go stale (see createMessageStore). */
/** Where the given messages sit in their threads, by id (the parents of replies about to be stored). */
export async function threadPlacesOf(
  db: Executor,
  messageIds: readonly number[],
): Promise<Map<number, ThreadPlace & { areaTag: string }>> {
  if (messageIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('messages')
    .select(['id', 'threadRootId', 'threadPath', 'areaTag'])
    .where('id', 'in', [...messageIds])
    .execute();
  return new Map(
    rows.map((row) => [row.id, { threadRootId: row.threadRootId, threadPath: row.threadPath, areaTag: row.areaTag }]),
  );
}

function messageQueries(db: Executor, dialect: Dialect, prepared: PreparedMessageQueries, written: () => void) {
  return {
    /** A page of an area's live messages in the request's order: a range scan of `messages_area_live`. */
    async listAreaMessages(areaTag: string, request: AreaPageRequest): Promise<Page<MessageSummary>> {
      const limit = rowsToFetch(request);
      const rows =
        request.order === 'oldest'
          ? await prepared.areaPage.all(
              { areaTag, afterKey: Math.max(request.afterKey ?? BEFORE_FIRST_MESSAGE, request.aboveId), limit },
              db,
            )
          : await prepared.newestAreaPage.all(
              {
                areaTag,
                aboveId: request.aboveId,
                atMostId: request.afterKey === null ? MAX_MESSAGE_ID : request.afterKey - 1,
                limit,
              },
              db,
            );
      return pageFromRows(
        rows,
        request,
        (row) => row.messageId,
        (row) => row,
      );
    },

    /**
     * A page of a thread's live messages in depth-first order (root first, replies oldest
     * first): a range scan of (thread_root_id, thread_path) after the path of the page's last
     * message, whose id is the key. Each message's live replies are counted by index.
     */
    async threadPage(threadRootId: number, request: PageRequest): Promise<Page<ThreadMessage>> {
      const rows = await threadPageQuery(db, {
        threadRootId,
        afterId: request.afterKey,
        limit: rowsToFetch(request),
      }).execute();
      return pageFromRows(
        rows,
        request,
        (row) => row.messageId,
        ({ threadPath, replyCount, ...summary }) => ({
          ...summary,
          depth: depthOf(threadPath),
          replyCount: Number(replyCount ?? 0),
        }),
      );
    },

    /** A live message with its live replies counted, in one query. */
    async findLiveMessage(uuid: string): Promise<MessageDetailRow | undefined> {
      const row = await prepared.liveMessage.first({ uuid }, db);
      return row && { ...row, replyCount: Number(row.replyCount ?? 0) };
    },

    /** The area and thread place of a live message, or undefined when there is none (or it was deleted). */
    async liveMessagePlace(messageId: number): Promise<(ThreadPlace & { areaTag: string }) | undefined> {
      return prepared.liveMessagePlace.first({ messageId }, db);
    },

    /** The caller's last-read message id per area, for the areas that have a pointer. */
    async pointersOf(userId: number, areaTags: readonly string[]): Promise<Map<string, number>> {
      if (areaTags.length === 0) return new Map();
      const [onlyArea] = areaTags;
      const rows = await (areaTags.length === 1 && onlyArea !== undefined
        ? prepared.pointer.all({ userId, areaTag: onlyArea }, db)
        : db
            .selectFrom('messagePointers')
            .select(['areaTag', 'lastReadMessageId'])
            .where('userId', '=', userId)
            .where('areaTag', 'in', [...areaTags])
            .execute());
      return new Map(rows.map((row) => [row.areaTag, row.lastReadMessageId]));
    },

    /**
     * The caller's pointer and the live messages after it, per area that has a pointer: one
     * statement, the same few lookups at any area size (see message-live-counts.ts).
     */
    async pointersWithUnread(userId: number, areaTags: readonly string[]): Promise<Map<string, PointerWithUnread>> {
      if (areaTags.length === 0) return new Map();
      const [onlyArea] = areaTags;
      const rows = await (areaTags.length === 1 && onlyArea !== undefined
        ? prepared.pointerWithUnread.all({ userId, areaTag: onlyArea }, db)
        : pointersWithUnreadQuery(db, dialect, { userId, areaTags }).execute());
      return new Map(
        rows.map((row) => [
          row.areaTag,
          {
            lastReadMessageId: row.lastReadMessageId,
            unreadCount: Number(row.counted ?? 0) + Number(row.inBlock ?? 0),
          },
        ]),
      );
    },

    /** The id of the area's newest live message (one step down `messages_area_live`); 0 for none. */
    async highestMessageId(areaTag: string): Promise<number> {
      const row = await db
        .selectFrom('messages')
        .select((eb) => eb.fn.max('id').as('highest'))
        .where('areaTag', '=', areaTag)
        .where('deletedAt', 'is', null)
        .executeTakeFirst();
      return Number(row?.highest ?? 0);
    },

    /** Sets (or moves back) the user's pointer in an area. */
    async setPointer(userId: number, areaTag: string, lastReadMessageId: number, updatedAt: string): Promise<void> {
      await db
        .insertInto('messagePointers')
        .values({ userId, areaTag, lastReadMessageId, updatedAt })
        .onConflict((conflict) => conflict.columns(['userId', 'areaTag']).doUpdateSet({ lastReadMessageId, updatedAt }))
        .execute();
    },

    /** Live messages on the whole board, from the per-area counters. */
    async countMessages(): Promise<number> {
      const row = await db
        .selectFrom('messageAreas')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('messageCount'), eb.lit(0)).as('total'))
        .executeTakeFirstOrThrow();
      return Number(row.total);
    },

    /** Counters of each area; areas never posted to have no row and are left out. */
    async areaCounters(areaTags: readonly string[]): Promise<Map<string, AreaCounters>> {
      if (areaTags.length === 0) return new Map();
      const [onlyArea] = areaTags;
      const rows = await (areaTags.length === 1 && onlyArea !== undefined
        ? prepared.areaCounters.all({ areaTag: onlyArea }, db)
        : db
            .selectFrom('messageAreas')
            .select(['areaTag', 'messageCount', 'lastMessageAt'])
            .where('areaTag', 'in', [...areaTags])
            .execute());
      return new Map(
        rows.map((row) => [row.areaTag, { messageCount: row.messageCount, lastMessageAt: row.lastMessageAt }]),
      );
    },

    /**
     * Takes `count` new message ids, ascending. Called inside the transaction that inserts them,
     * after the area's counter row is locked (see postMessage), so the ids of one area are
     * taken in the order their transactions commit. Knowing the ids before the insert lets a
     * message's thread place (which holds its own id) go in with the row.
     */
    async reserveMessageIds(count: number): Promise<number[]> {
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

    /** Multi-row inserts of rows whose ids were reserved, and their words into the search index. */
    async insertMessages(rows: readonly NewMessageRow[]): Promise<void> {
      for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
        await db
          .insertInto('messages')
          .values(rows.slice(start, start + ROWS_PER_INSERT))
          .execute();
      }
      await indexMessages(db, dialect, rows);
      await addToLiveCounts(db, rows, 1);
      written();
    },

    /** The thread places of the given messages (deleted ones included: their replies still hang there). */
    threadPlacesOf: (messageIds: readonly number[]) => threadPlacesOf(db, messageIds),

    /**
     * Adds `added` messages to an area's count and moves `lastMessageAt` forward to
     * `newestTimestamp` if that is later. Creates the counter row on the area's first message.
     */
    async addToAreaCounters(areaTag: string, added: number, newestTimestamp: string): Promise<void> {
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

    /** Marks a live message deleted; false when it was already gone (a concurrent delete won). */
    async markDeleted(messageId: number, deletedAt: string): Promise<boolean> {
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

    /**
     * Takes a message marked deleted off its area's live counts. Called after
     * `removeFromAreaCounters`: writers lock the area's counters before its live counts (posts
     * do), so a deletion and a post never wait for each other in a cycle.
     */
    async removeFromLiveCounts(areaTag: string, messageId: number): Promise<void> {
      await addToLiveCounts(db, [{ areaTag, id: messageId }], -1);
      written();
    },

    /**
     * Takes one deleted message off its area's counters. `lastMessageAt` is recomputed from the
     * live messages only when the deleted one may have been the newest: that is the one case
     * that needs a scan of the area, so ordinary deletions stay cheap in big areas.
     */
    async removeFromAreaCounters(areaTag: string, deletedTimestamp: string): Promise<void> {
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

export type MessageQueries = ReturnType<typeof messageQueries>;
