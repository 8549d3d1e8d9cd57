import { sql } from 'kysely';
import type { Dialect, Executor } from '../db/database.js';
import { addToIndex, clearIndex, indexMatch, relevanceSortKey, removeFromIndex } from '../db/full-text-index.js';
import type { SearchOrder, SearchQuery } from '../search/search-query.js';
import type { MessageSummary } from './message-store.js';

/** What the message index holds of a message: its subject and body. */
export interface IndexedMessage {
  readonly id: number;
  readonly subject: string;
  readonly body: string;
}

/** Adds messages to the search index, in the transaction that stores them. */
export function indexMessages(db: Executor, dialect: Dialect, messages: readonly IndexedMessage[]) {
  return addToIndex(
    db,
    dialect,
    'message_search',
    messages.map(({ id, subject, body }) => ({ id, fields: [subject, body] })),
  );
}

/** Takes a deleted message out of the index. */
export function unindexMessage(db: Executor, dialect: Dialect, messageId: number) {
  return removeFromIndex(db, dialect, 'message_search', messageId);
}

/** Empties the index (before a rebuild). */
export function clearMessageIndex(db: Executor) {
  return clearIndex(db, 'message_search');
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
  readonly limit: number;
}

/** A message a search found: its summary, its body (for the snippet) and its key in the search's order. */
export interface FoundMessage extends MessageSummary {
  readonly body: string;
  readonly sortKey: number;
}

/**
 * Live messages of the given areas that match, newest or most relevant first. Newest first on
 * SQLite, the FTS5 index hands out its matches in descending id order, so a page stops after
 * `limit` rows that pass the filters; on PostgreSQL the GIN index finds the matches and the
 * newest `limit` are kept. By relevance every match that passes the filters is scored.
 */
export async function findMessages(db: Executor, dialect: Dialect, search: MessageSearch): Promise<FoundMessage[]> {
  const match = await indexMatch(db, dialect, 'message_search', search.query);
  if (match === null) return [];
  const searchId = match.id;
  const sortKey =
    search.sort === 'relevance'
      ? relevanceSortKey(dialect, search.query, searchId, [sql.ref('m.subject'), sql.ref('m.body')])
      : searchId;
  const filters = [
    ...searchFilters(search),
    ...(search.beforeKey === null ? [] : [sql`${sortKey} < ${search.beforeKey}`]),
  ];
  const { rows } = await sql<FoundMessage>`
    SELECT m.id AS message_id, m.uuid, m.area_tag, m.reply_to_message_id, m.to_user_name, m.from_user_name,
           m.subject, m.timestamp, m.body, ${sortKey} AS sort_key
      FROM message_search s JOIN messages m ON m.id = ${searchId}
     WHERE ${match.condition} AND ${sql.join(filters, sql` AND `)}
     ORDER BY sort_key DESC
     LIMIT ${search.limit}`.execute(db);
  // PostgreSQL answers a bigint key as text.
  return rows.map((row) => ({ ...row, sortKey: Number(row.sortKey) }));
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

export type MessageSearchFilters = Omit<MessageSearch, 'sort' | 'beforeKey' | 'limit'>;

/**
 * How many live messages the search matches, counting no further than `upTo`: the matches are
 * only counted, never scored, so this costs a fraction of ranking them.
 */
export async function countMessageMatches(
  db: Executor,
  dialect: Dialect,
  search: MessageSearchFilters,
  upTo: number,
): Promise<number> {
  const match = await indexMatch(db, dialect, 'message_search', search.query);
  if (match === null) return 0;
  const { rows } = await sql<{ count: number }>`
    SELECT count(*) AS count FROM (
      SELECT 1 FROM message_search s JOIN messages m ON m.id = ${match.id}
       WHERE ${match.condition} AND ${sql.join(searchFilters(search), sql` AND `)}
       LIMIT ${upTo}) AS matches`.execute(db);
  return Number(rows[0]?.count ?? 0);
}
