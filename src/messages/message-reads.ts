import type { ExpressionBuilder } from 'kysely';
import type { Db, Dialect, Executor } from '../db/database.js';
import { pageFromRows, rowsToFetch } from '../db/keyset.js';
import { prepareQuery } from '../db/prepared-query.js';
import type { MessagesTable, Tables } from '../db/schema.js';
import type { Page, PageRequest } from '../page.js';
import { pointersWithUnreadQuery } from './message-live-counts.js';
import { MAX_MESSAGE_ID, type MessageOrder } from './message-rules.js';
import { depthOf, type ThreadPlace } from './message-thread.js';

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

/** A message with its text and FTN metadata: what the FTN scanner packs (src/ftn/ftn-scanner.ts). */
export interface StoredMessage extends MessageSummary {
  readonly fromUserId: number | null;
  readonly body: string;
  /** The `network` JSON as stored. */
  readonly network: string;
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

/** A user's new-scan pointer in an area, and the live messages after it. */
export interface PointerWithUnread {
  readonly lastReadMessageId: number;
  readonly unreadCount: number;
}

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

/** The reads of the message base, run in the database or in one transaction (see MessageStore.transaction). */
export interface MessageReads {
  /** A page of an area's live messages in the request's order: a range scan of `messages_area_live`. */
  listAreaMessages(areaTag: string, request: AreaPageRequest): Promise<Page<MessageSummary>>;
  /**
   * A page of a thread's live messages in depth-first order (root first, replies oldest
   * first), keyed by message id. Each message's live replies are counted by index.
   */
  threadPage(threadRootId: number, request: PageRequest): Promise<Page<ThreadMessage>>;
  /** A live message with its live replies counted, in one query. */
  findLiveMessage(uuid: string): Promise<MessageDetailRow | undefined>;
  /** The area and thread place of a live message, or undefined when there is none (or it was deleted). */
  liveMessagePlace(messageId: number): Promise<(ThreadPlace & { areaTag: string }) | undefined>;
  /** The thread places of the given messages (deleted ones included: their replies still hang there). */
  threadPlacesOf(messageIds: readonly number[]): Promise<Map<number, ThreadPlace & { areaTag: string }>>;
  /** The caller's last-read message id per area, for the areas that have a pointer. */
  pointersOf(userId: number, areaTags: readonly string[]): Promise<Map<string, number>>;
  /**
   * The caller's pointer and the live messages after it, per area that has a pointer: one
   * statement, the same few lookups at any area size (see message-live-counts.ts).
   */
  pointersWithUnread(userId: number, areaTags: readonly string[]): Promise<Map<string, PointerWithUnread>>;
  /**
   * Up to `limit` live messages of an area after message `afterId`, oldest first, with their text:
   * a range scan of `messages_area_live`, however big the area.
   */
  messagesAfter(areaTag: string, afterId: number, limit: number): Promise<StoredMessage[]>;
  /** The live messages among `messageIds`, with their text, by primary key; deleted ones are left out. */
  messagesByIds(messageIds: readonly number[]): Promise<StoredMessage[]>;
  /** The id of the area's newest live message (one step down `messages_area_live`); 0 for none. */
  highestMessageId(areaTag: string): Promise<number>;
  /** Live messages on the whole board, from the per-area counters. */
  countMessages(): Promise<number>;
  /** Counters of each area; areas never posted to have no row and are left out. */
  areaCounters(areaTags: readonly string[]): Promise<Map<string, AreaCounters>>;
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

const STORED_COLUMNS = [...SUMMARY_COLUMNS, 'fromUserId', 'body', 'network'] as const;

/**
 * Message ids start at 1, so "after key 0" is the first page: one statement serves every page.
 */
const BEFORE_FIRST_MESSAGE = 0;

/**
 * The id an oldest-first page of an area starts after: the cursor's or the new-scan pointer's,
 * whichever is higher. (So an unread page and the page after the same cursor are one page.)
 */
export function oldestPageStart(request: AreaPageRequest): number {
  return Math.max(request.afterKey ?? BEFORE_FIRST_MESSAGE, request.aboveId);
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

/** The hot reads, built once (see `prepareQuery`) and run in any executor. */
function preparedReads(db: Db, dialect: Dialect) {
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

/**
 * The reads of the message base, their hot statements prepared once on `database`; the function it
 * returns runs them in an executor (the database, or a transaction).
 */
export function prepareMessageReads(database: Db, dialect: Dialect): (db: Executor) => MessageReads {
  const prepared = preparedReads(database, dialect);
  return (db) => ({
    async listAreaMessages(areaTag, request) {
      const limit = rowsToFetch(request);
      const rows =
        request.order === 'oldest'
          ? await prepared.areaPage.all({ areaTag, afterKey: oldestPageStart(request), limit }, db)
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

    // A range scan of (thread_root_id, thread_path) after the path of the page's last message.
    async threadPage(threadRootId, request) {
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

    async findLiveMessage(uuid) {
      const row = await prepared.liveMessage.first({ uuid }, db);
      return row && { ...row, replyCount: Number(row.replyCount ?? 0) };
    },

    liveMessagePlace: (messageId) => prepared.liveMessagePlace.first({ messageId }, db),

    threadPlacesOf: (messageIds) => threadPlacesOf(db, messageIds),

    async pointersOf(userId, areaTags) {
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

    async pointersWithUnread(userId, areaTags) {
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

    messagesAfter: (areaTag, afterId, limit) =>
      db
        .selectFrom('messages')
        .select(STORED_COLUMNS)
        .where('areaTag', '=', areaTag)
        .where('deletedAt', 'is', null)
        .where('id', '>', afterId)
        .orderBy('areaTag')
        .orderBy('id')
        .limit(limit)
        .execute(),

    async messagesByIds(messageIds) {
      if (messageIds.length === 0) return [];
      return db
        .selectFrom('messages')
        .select(STORED_COLUMNS)
        .where('id', 'in', [...messageIds])
        .where('deletedAt', 'is', null)
        .orderBy('id')
        .execute();
    },

    async highestMessageId(areaTag) {
      const row = await db
        .selectFrom('messages')
        .select((eb) => eb.fn.max('id').as('highest'))
        .where('areaTag', '=', areaTag)
        .where('deletedAt', 'is', null)
        .executeTakeFirst();
      return Number(row?.highest ?? 0);
    },

    async countMessages() {
      const row = await db
        .selectFrom('messageAreas')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('messageCount'), eb.lit(0)).as('total'))
        .executeTakeFirstOrThrow();
      return Number(row.total);
    },

    async areaCounters(areaTags) {
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
  });
}
