import { sql, type Transaction } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import type { Tables } from '../db/schema.js';
import type { Page, PageRequest } from '../page.js';
import type { SearchBudget } from '../search/search-budget.js';
import { createMessageReadCache, type MessageReadCache } from './message-read-cache.js';
import { type AreaPageRequest, type MessageReads, oldestPageStart, prepareMessageReads } from './message-reads.js';
import {
  createMessageSearchStore,
  type MessageSearch,
  type MessageSearchFilters,
  type SearchHit,
} from './message-search-store.js';
import { type MessageWrites, messageWrites } from './message-writes.js';

/** The reads and writes of the message base, run in the database or in one transaction. */
export interface MessageQueries extends MessageReads, MessageWrites {}

/**
 * The message base as its service sees it: reads (remembered, see below), searches, and the
 * writes — each on its own, or several in one transaction (`transaction`).
 */
export interface MessageStore extends MessageQueries {
  /**
   * One page of the live messages that match a search, in its order (see message-search-store.ts).
   * A page read from the database is read within `budget` (the node's search budget); one
   * remembered from a moment ago is answered without it.
   */
  searchMessages(
    search: MessageSearchFilters & Pick<MessageSearch, 'sort'>,
    request: PageRequest,
    budget: SearchBudget,
  ): Promise<Page<SearchHit>>;
  /** Bytes each read cache holds now (tests and metrics). */
  readCacheBytes(): ReturnType<MessageReadCache['bytes']>;
  /** Starts the upkeep of a bulk write (an import): see {@link BulkWrite}. */
  startBulkWrite(): BulkWrite;
  /** Empties the search index and fills it again from the live messages, in one transaction. */
  rebuildSearchIndex(onProgress: (indexed: number, total: number) => void): Promise<number>;
  /**
   * Runs `work` in one transaction with the queries bound to it; `trx` is for other domains'
   * stores that must write in the same transaction (the poster's postCount). Reads in it are
   * never remembered, and once it is over every remembered read is stale.
   */
  transaction<T>(work: (queries: MessageQueries, trx: Transaction<Tables>) => Promise<T>): Promise<T>;
}

/**
 * The upkeep of a bulk write under way: `batchCommitted` after each of its transactions commits
 * lets the search index merge what the batch left pending while the next batch is written
 * (PostgreSQL); `finish`, once it is over, merges the rest and brings the query planner's
 * statistics of the message tables up to date.
 */
export interface BulkWrite {
  batchCommitted(): void;
  finish(): Promise<void>;
}

/**
 * Every query of the message base, put together: the reads (message-reads.ts), the writes
 * (message-writes.ts), which change the counters in `message_areas` only next to the message
 * rows they count, and the searches (message-search-store.ts). Pages, messages, single-area
 * counters and search pages read outside a transaction are remembered (see
 * message-read-cache.ts): a busy area's first page is asked for far more often than it changes.
 */
export function createMessageStore(database: Pick<Database, 'db' | 'dialect'>, clock: Clock): MessageStore {
  const { db, dialect } = database;
  const readsIn = prepareMessageReads(db, dialect);
  const remembered = createMessageReadCache(clock);
  const reads = readsIn(db);
  const searches = createMessageSearchStore(database, clock);

  return {
    ...reads,
    ...messageWrites(db, dialect, remembered),
    listAreaMessages: (areaTag, request) =>
      remembered.page(areaPageCacheKey(areaTag, request), () => reads.listAreaMessages(areaTag, request)),
    findLiveMessage: (uuid) => remembered.message(uuid, () => reads.findLiveMessage(uuid)),
    areaCounters: (areaTags) =>
      areaTags.length === 1
        ? remembered.counters(areaTags[0] ?? '', () => reads.areaCounters(areaTags))
        : reads.areaCounters(areaTags),
    pointersWithUnread: (userId, areaTags) =>
      areaTags.length === 1
        ? remembered.unread(`${userId} ${areaTags[0]}`, () => reads.pointersWithUnread(userId, areaTags))
        : reads.pointersWithUnread(userId, areaTags),
    searchMessages: (search, request, budget) =>
      remembered.search(searchPageCacheKey(search, request), () =>
        budget.run(() => searches.searchMessages(search, request)),
      ),
    readCacheBytes: remembered.bytes,

    // On PostgreSQL a freshly imported million-message area otherwise pages with a bitmap scan
    // and a sort — 739 ms a page instead of 5 ms, measured — until autovacuum gets round to it.
    // SQLite's planner takes the (area_tag, id) index without statistics.
    startBulkWrite() {
      const merges = searches.mergePendingEntriesBeside();
      return {
        batchCommitted: () => merges.nudge(),
        async finish() {
          await merges.finish();
          if (dialect === 'postgres') await sql`ANALYZE messages, message_areas, message_search`.execute(db);
        },
      };
    },

    rebuildSearchIndex: searches.rebuild,

    async transaction(work) {
      try {
        return await db
          .transaction()
          .execute((trx) => work({ ...readsIn(trx), ...messageWrites(trx, dialect, remembered) }, trx));
      } finally {
        remembered.written();
      }
    },
  };
}

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

/**
 * The remembered page of `request`. The oldest order's bounds fold into one (what v1 asked
 * for), so an unread page and the page after the same cursor share their entry.
 */
function areaPageCacheKey(areaTag: string, request: AreaPageRequest): string {
  return request.order === 'oldest'
    ? `oldest ${areaTag} ${oldestPageStart(request)} ${request.limit}`
    : `newest ${areaTag} ${request.aboveId} ${request.afterKey} ${request.limit}`;
}
