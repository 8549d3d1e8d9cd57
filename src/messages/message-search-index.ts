import { sql } from 'kysely';
import type { Dialect, Executor } from '../db/database.js';
import { type SearchQuery, toFts5Match, toPostgresTsquery } from '../search/search-query.js';
import { indexText, searchTokens, tokenisesAlikeInSqlite } from '../search/search-text.js';
import { stripAnsi } from '../text/strip-ansi.js';
import type { MessageSummary } from './message-store.js';

/**
 * The full-text index of the message base, one row per live message, keyed by its id: an FTS5
 * table on SQLite (contentless: it stores the index only, no second copy of the text), a
 * `tsvector` with a GIN index on PostgreSQL. Both are fed the same pre-tokenised text
 * (`indexText`: folded words separated by spaces), so both split it the same way and the one
 * query language gives the same answers on either database.
 */
export interface IndexedMessage {
  readonly id: number;
  readonly subject: string;
  readonly body: string;
}

/**
 * Subject and body as SQLite's FTS5 index takes them (ANSI colour codes are not words): our
 * tokens joined by spaces, or plain ASCII text as it is, which FTS5 splits the same way.
 */
export function messageIndexText(message: Pick<IndexedMessage, 'subject' | 'body'>): string {
  const subject = stripAnsi(message.subject);
  const body = stripAnsi(message.body);
  if (tokenisesAlikeInSqlite(subject) && tokenisesAlikeInSqlite(body)) return `${subject}\n${body}`;
  return indexText(subject, body);
}

/** to_tsvector keeps a word's first 255 positions, and counts positions up to 16,383. */
const MAX_POSITIONS_PER_WORD = 255;
const MAX_POSITION = 16_383;

/**
 * The message's words as a `tsvector` literal (`'modem':3,9 'sings':4`): exactly what
 * `to_tsvector('simple', indexText(subject, body))` makes, built here because PostgreSQL's
 * text parser costs more than the rest of an import together (3.8 s for 100,000 messages,
 * against 0.9 s to read the literal).
 */
export function messageTsvector(message: Pick<IndexedMessage, 'subject' | 'body'>): string {
  const positions = new Map<string, number[]>();
  const words = [...searchTokens(stripAnsi(message.subject)), ...searchTokens(stripAnsi(message.body))];
  words.forEach((word, index) => {
    const list = positions.get(word);
    const position = Math.min(index + 1, MAX_POSITION);
    if (list === undefined) positions.set(word, [position]);
    else if (list.length < MAX_POSITIONS_PER_WORD && list[list.length - 1] !== position) list.push(position);
  });
  // Words are letters and digits only: nothing in them needs quoting.
  return Array.from(positions, ([word, list]) => `'${word}':${list.join(',')}`).join(' ');
}

/** Rows per INSERT into the index: 2 parameters a row. */
const ROWS_PER_INSERT = 1000;

/** Adds messages to the index, in the transaction that stores them. */
export async function indexMessages(db: Executor, dialect: Dialect, messages: readonly IndexedMessage[]) {
  for (let start = 0; start < messages.length; start += ROWS_PER_INSERT) {
    const chunk = messages.slice(start, start + ROWS_PER_INSERT);
    const values = sql.join(
      chunk.map((message) =>
        dialect === 'postgres'
          ? sql`(${message.id}, ${messageTsvector(message)}::tsvector)`
          : sql`(${message.id}, ${messageIndexText(message)})`,
      ),
    );
    if (dialect === 'postgres')
      await sql`INSERT INTO message_search (message_id, document) VALUES ${values}`.execute(db);
    else await sql`INSERT INTO message_search (rowid, text) VALUES ${values}`.execute(db);
  }
}

/** Takes a deleted message out of the index. */
export async function unindexMessage(db: Executor, dialect: Dialect, messageId: number) {
  if (dialect === 'postgres') await sql`DELETE FROM message_search WHERE message_id = ${messageId}`.execute(db);
  else await sql`DELETE FROM message_search WHERE rowid = ${messageId}`.execute(db);
}

/** Empties the index (before a rebuild). */
export async function clearMessageIndex(db: Executor) {
  await sql`DELETE FROM message_search`.execute(db);
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
  /** Newest first: only messages below this id (the cursor). */
  readonly beforeId: number | null;
  readonly limit: number;
}

/** A message a search found: its summary and its body (for the snippet). */
export interface FoundMessage extends MessageSummary {
  readonly body: string;
}

/** Matches few enough to fetch them all from PostgreSQL's GIN index and sort them (see findMessages). */
const FEW_MATCHES = 5000;

/**
 * Live messages of the given areas that match, newest first. On SQLite the FTS5 index hands
 * out its matches in descending id order, so a page stops after `limit` rows that pass the
 * filters; on PostgreSQL the GIN index finds the matches and the newest `limit` are kept.
 */
export async function findMessages(db: Executor, dialect: Dialect, search: MessageSearch): Promise<FoundMessage[]> {
  const searchId = dialect === 'postgres' ? sql.ref('s.message_id') : sql.ref('s.rowid');
  let matches = sql`s.text MATCH ${toFts5Match(search.query)}`;
  if (dialect === 'postgres') {
    const tsquery = sql`to_tsquery('simple', ${toPostgresTsquery(search.query)})`;
    matches = sql`s.document @@ ${tsquery}`;
    // PostgreSQL cannot walk the GIN index newest first: left to itself it walks the messages
    // newest first and tests each one, which is quick for a common word and reads the whole
    // index for a rare one. So ask the GIN index first; when the matches are few, they are
    // the candidates.
    const { rows } = await sql<{ messageId: number }>`
      SELECT message_id FROM message_search WHERE document @@ ${tsquery} LIMIT ${FEW_MATCHES + 1}`.execute(db);
    if (rows.length <= FEW_MATCHES) {
      if (rows.length === 0) return [];
      matches = sql`${searchId} = ANY(${rows.map((row) => row.messageId)}::integer[])`;
    }
  }
  const filters = [
    sql`m.area_tag IN (${sql.join(search.areaTags.map((areaTag) => sql`${areaTag}`))})`,
    sql`m.deleted_at IS NULL`,
    ...(search.from === null ? [] : [sql`lower(m.from_user_name) = lower(${search.from})`]),
    ...(search.to === null ? [] : [sql`lower(m.to_user_name) = lower(${search.to})`]),
    ...(search.since === null ? [] : [sql`m.timestamp >= ${search.since}`]),
    ...(search.until === null ? [] : [sql`m.timestamp <= ${search.until}`]),
    ...(search.beforeId === null ? [] : [sql`${searchId} < ${search.beforeId}`]),
  ];
  const { rows } = await sql<FoundMessage>`
    SELECT m.id AS message_id, m.uuid, m.area_tag, m.reply_to_message_id, m.to_user_name, m.from_user_name,
           m.subject, m.timestamp, m.body
      FROM message_search s JOIN messages m ON m.id = ${searchId}
     WHERE ${matches} AND ${sql.join(filters, sql` AND `)}
     ORDER BY ${searchId} DESC
     LIMIT ${search.limit}`.execute(db);
  return rows;
}
