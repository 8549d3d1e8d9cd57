import { type RawBuilder, sql } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database, Dialect, Executor } from '../db/database.js';
import { pageFromRows, rowsToFetch } from '../db/keyset.js';
import type { Page, PageRequest } from '../page.js';
import {
  addToIndex,
  clearIndex,
  createWordShareReader,
  indexMatch,
  mergePendingEntriesBeside,
  type PendingEntryMerges,
  relevanceSortKey,
  removeFromIndex,
  type StoredFields,
} from '../search/full-text-index.js';
import { estimatedMatchShare, type WordShares } from '../search/match-share.js';
import { MAX_RANKED_MATCHES } from '../search/relevance.js';
import { type SearchOrder, type SearchQuery, toPostgresTsquery } from '../search/search-query.js';
import type { MessageSummary } from './message-reads.js';

// Every query of the message search index (`message_search`): keeping it in step with the live
// messages, in the transactions that change them, and finding messages in it.

/** What the message index holds of a message: its subject and body. */
export interface IndexedMessage {
  readonly id: number;
  readonly subject: string;
  readonly body: string;
}

/** Where a message's indexed fields are stored (so that SQLite may read them from its row). */
const MESSAGE_FIELDS: StoredFields = { table: 'messages', columns: ['subject', 'body'] };

/** Adds stored messages to the search index, in the transaction that stored them. */
export function indexMessages(db: Executor, dialect: Dialect, messages: readonly IndexedMessage[]) {
  return addToIndex(
    db,
    dialect,
    'message_search',
    messages.map(({ id, subject, body }) => ({ id, fields: [subject, body] })),
    MESSAGE_FIELDS,
  );
}

/**
 * Stores message rows (`insertRows`, in the transaction `db`) and adds them to the search index.
 * On SQLite the index reads most texts from the rows (see addToIndex), so the rows go first. On
 * PostgreSQL the two go at once: the transaction's connection runs one statement at a time, in
 * the order asked, so the index documents are encoded while the server inserts the rows instead
 * of after (in an import, encoding was the largest part of the index's cost left on its path);
 * both are settled before this returns or throws — nothing of either may reach the connection
 * after the transaction has ended.
 */
export async function insertIndexedMessages(
  db: Executor,
  dialect: Dialect,
  messages: readonly IndexedMessage[],
  insertRows: () => Promise<void>,
): Promise<void> {
  if (dialect === 'sqlite') {
    await insertRows();
    await indexMessages(db, dialect, messages);
    return;
  }
  const outcomes = await Promise.allSettled([insertRows(), indexMessages(db, dialect, messages)]);
  for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
}

/** Takes a deleted message out of the index. */
export function unindexMessage(db: Executor, dialect: Dialect, messageId: number) {
  return removeFromIndex(db, dialect, 'message_search', messageId);
}

/**
 * Indexes every live message, `batchSize` at a time in id order, each batch in its own
 * transaction on a database handed in by the caller; `onProgress` hears the running count.
 */
export async function indexAllMessages(
  db: Executor,
  dialect: Dialect,
  onProgress: (indexed: number, total: number) => void,
  batchSize = 5000,
): Promise<number> {
  const { rows: counted } = await sql<{
    total: number;
  }>`SELECT count(*) AS total FROM messages WHERE deleted_at IS NULL`.execute(db);
  const total = Number(counted[0]?.total ?? 0);
  let indexed = 0;
  let afterId = 0;
  for (;;) {
    const { rows } = await sql<IndexedMessage>`
      SELECT id, subject, body FROM messages WHERE deleted_at IS NULL AND id > ${afterId} ORDER BY id LIMIT ${batchSize}`.execute(
      db,
    );
    if (rows.length === 0) return indexed;
    await indexMessages(db, dialect, rows);
    indexed += rows.length;
    afterId = rows[rows.length - 1]?.id ?? afterId;
    onProgress(indexed, total);
  }
}

/** What to look for and where: every filter of `GET /messages/search` but the query text. */
export interface MessageSearch {
  readonly query: SearchQuery;
  /** Only these areas (never empty: the caller's readable areas, narrowed by the filters). */
  readonly areaTags: readonly string[];
  /** Exact user names, case-insensitive. */
  readonly from: string | null;
  readonly to: string | null;
  /** RFC 3339 UTC with milliseconds, as stored. */
  readonly since: string | null;
  readonly until: string | null;
  /** `newest`: by id; `relevance`: by relevanceSortKey (score, then id). Both descending. */
  readonly sort: SearchOrder;
  /** Only messages whose sort key is below this one (the cursor). */
  readonly beforeKey: number | null;
  /** `relevance`: the highest id its candidates were chosen under, from the first page; null on it. */
  readonly bound: number | null;
  readonly limit: number;
}

export type MessageSearchFilters = Omit<MessageSearch, 'sort' | 'beforeKey' | 'bound' | 'limit'>;

/** A message a search found: its summary, and its body for the snippet. */
export interface SearchHit extends MessageSummary {
  readonly body: string;
}

/** A message a search found, and its key in the search's order. */
export interface FoundMessage extends SearchHit {
  readonly sortKey: number;
}

/** Messages a search found, and for `relevance` the bound its candidates were chosen under (null when none matched). */
export interface FoundMessages {
  readonly rows: readonly FoundMessage[];
  readonly bound: number | null;
}

export interface MessageSearchStore {
  /** One page of the live messages that match a search, in its order (see findMessages). */
  searchMessages(
    search: Omit<MessageSearch, 'beforeKey' | 'bound' | 'limit'>,
    request: PageRequest,
  ): Promise<Page<SearchHit>>;
  /** Empties the index and fills it again from the live messages, in one transaction. */
  rebuild(onProgress: (indexed: number, total: number) => void): Promise<number>;
  /** Merges what a bulk write leaves pending into the index, beside the write (see mergePendingEntriesBeside). */
  mergePendingEntriesBeside(): PendingEntryMerges;
}

/**
 * The searches of the message base and the index's upkeep outside a write: a rebuild, and the
 * merge after a bulk load. (Writes keep the index themselves, through indexMessages and
 * unindexMessage, in their own transactions.) PostgreSQL's word statistics are read at most once
 * a minute (see createWordShareReader).
 */
export function createMessageSearchStore(database: Pick<Database, 'db' | 'dialect'>, clock: Clock): MessageSearchStore {
  const { db, dialect } = database;
  const wordShares = createWordShareReader(db, dialect, 'message_search', clock);
  return {
    async searchMessages(search, request) {
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
    },

    rebuild(onProgress) {
      return db.transaction().execute(async (trx) => {
        await clearIndex(trx, 'message_search');
        return indexAllMessages(trx, dialect, onProgress);
      });
    },

    mergePendingEntriesBeside: () => mergePendingEntriesBeside(db, dialect, 'message_search'),
  };
}

/**
 * Live messages of the given areas that match, newest or most relevant first. By relevance the
 * newest MAX_RANKED_MATCHES matches are the candidates, chosen on the first page below the
 * newest id then (the bound, which every later page is asked under): a score is computed on
 * every page, so ranking every match of a common word would cost a scan of the board each time,
 * and posts made between two pages must not push a candidate out (a skip) or in (a repeat).
 */
export async function findMessages(
  db: Executor,
  dialect: Dialect,
  search: MessageSearch,
  wordShares: WordShares,
): Promise<FoundMessages> {
  if (search.sort === 'newest') {
    const rows = await newestMatches<FoundMessage>(db, dialect, wordShares, {
      ...search,
      beforeId: search.beforeKey,
      select: sql`${SUMMARY_COLUMNS}, m.id AS sort_key`,
      wanted: search.limit,
    });
    return { rows, bound: null };
  }
  const candidates = await newestMatches<{ id: number }>(db, dialect, wordShares, {
    ...search,
    beforeId: null,
    select: sql`m.id`,
    wanted: MAX_RANKED_MATCHES,
  });
  const ids = candidates.map((candidate) => Number(candidate.id));
  const [newest] = ids;
  if (newest === undefined) return { rows: [], bound: null };
  const sortKey = relevanceSortKey(dialect, search.query, sql.ref('m.id'), [sql.ref('m.subject'), sql.ref('m.body')]);
  const document = dialect === 'postgres' ? sql`JOIN message_search s ON s.message_id = m.id` : sql``;
  const before = search.beforeKey === null ? sql`` : sql`AND ${sortKey} < ${search.beforeKey}`;
  const { rows } = await sql<FoundMessage>`
    SELECT ${SUMMARY_COLUMNS}, ${sortKey} AS sort_key FROM messages m ${document}
     WHERE m.id IN (${sql.join(ids)}) AND m.deleted_at IS NULL ${before}
     ORDER BY sort_key DESC
     LIMIT ${search.limit}`.execute(db);
  // PostgreSQL answers a bigint key as text.
  return { rows: rows.map((row) => ({ ...row, sortKey: Number(row.sortKey) })), bound: search.bound ?? newest };
}

/** What a search page shows of a message, from `messages m`. */
const SUMMARY_COLUMNS = sql`m.id AS message_id, m.uuid, m.area_tag, m.reply_to_message_id, m.to_user_name,
  m.from_user_name, m.subject, m.timestamp, m.body`;

/** A walk newest first reads at most this many messages before the index is asked instead. */
const MAX_WALKED_MESSAGES = 5000;

/**
 * The newest `wanted` matches (below `beforeId`, at most `bound`), newest first, as `select` of
 * `messages m`.
 *
 * PostgreSQL cannot walk its GIN index in id order: it hands out every match of a word, so the
 * newest 26 messages with "modem" cost a pass over every message that has it. When the word
 * statistics say a large share of the messages match, the newest messages are read instead,
 * newest first, each tested against its document, and the walk stops at the page: a window of
 * twice the messages the share needs to hold `wanted` matches. A window that holds fewer (the
 * estimate was wrong, or the filters are narrow) proves nothing about older messages, so the
 * index answers then. SQLite needs none of this: FTS5 hands out any query's matches newest first.
 */
async function newestMatches<Row>(
  db: Executor,
  dialect: Dialect,
  wordShares: WordShares,
  search: MessageSearchFilters & {
    readonly beforeId: number | null;
    readonly bound: number | null;
    readonly select: RawBuilder<unknown>;
    readonly wanted: number;
  },
): Promise<Row[]> {
  const ids = [
    ...(search.beforeId === null ? [] : [sql`m.id < ${search.beforeId}`]),
    ...(search.bound === null ? [] : [sql`m.id <= ${search.bound}`]),
  ];
  const window = Math.ceil((2 * search.wanted) / estimatedMatchShare(search.query, wordShares));
  if (dialect === 'postgres' && window <= MAX_WALKED_MESSAGES) {
    const { rows } = await sql<Row>`
      SELECT ${search.select}
        FROM (SELECT * FROM messages m ${ids.length === 0 ? sql`` : sql`WHERE ${sql.join(ids, sql` AND `)}`}
               ORDER BY m.id DESC LIMIT ${window}) AS m
        JOIN message_search s ON s.message_id = m.id
       WHERE s.document @@ to_tsquery('simple', ${toPostgresTsquery(search.query)})
         AND ${sql.join(searchFilters(search), sql` AND `)}
       ORDER BY m.id DESC
       LIMIT ${search.wanted}`.execute(db);
    if (rows.length === search.wanted) return rows;
  }
  const match = await indexMatch(db, dialect, 'message_search', search.query);
  if (match === null) return [];
  const { rows } = await sql<Row>`
    SELECT ${search.select} FROM message_search s JOIN messages m ON m.id = ${match.id}
     WHERE ${match.condition} AND ${sql.join([...searchFilters(search), ...ids], sql` AND `)}
     ORDER BY ${match.id} DESC
     LIMIT ${search.wanted}`.execute(db);
  return rows;
}

/** The filters of a search but the cursor, on `messages m`. */
function searchFilters(search: MessageSearchFilters) {
  return [
    sql`m.area_tag IN (${sql.join(search.areaTags.map((areaTag) => sql`${areaTag}`))})`,
    sql`m.deleted_at IS NULL`,
    ...(search.from === null ? [] : [sql`lower(m.from_user_name) = lower(${search.from})`]),
    ...(search.to === null ? [] : [sql`lower(m.to_user_name) = lower(${search.to})`]),
    ...(search.since === null ? [] : [sql`m.timestamp >= ${search.since}`]),
    ...(search.until === null ? [] : [sql`m.timestamp <= ${search.until}`]),
  ];
}
