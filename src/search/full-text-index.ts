import type BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, type RawBuilder, sql } from 'kysely';
import type { Clock } from '../clock.js';
import type { Dialect, Executor } from '../db/database.js';
import { stripAnsi } from '../text/strip-ansi.js';
import type { WordShares } from './match-share.js';
import { ID_SPAN, RELEVANCE_SCALE, relevanceScore } from './relevance.js';
import { positiveTerms, type SearchQuery, type SearchTerm, toFts5Match, toPostgresTsquery } from './search-query.js';
import { indexText, searchTokens, tokenisesAlikeInSqlite } from './search-text.js';

/**
 * The full-text indexes (messages, files): one row per document, keyed by its id. An FTS5
 * table on SQLite (contentless: it stores the index only, no second copy of the text), a
 * `tsvector` with a GIN index on PostgreSQL. Both are fed the same words — our tokens
 * (search-text.ts) — so the one query language answers alike on either database.
 */
export type FullTextIndex = 'message_search' | 'file_search';

/** PostgreSQL: the key column of each index, which holds its document's id. */
const POSTGRES_KEY_COLUMNS: Readonly<Record<FullTextIndex, string>> = {
  message_search: 'message_id',
  file_search: 'file_id',
};

export interface IndexedDocument {
  readonly id: number;
  /** Its searchable texts, in order (ANSI colour codes are stripped here: they are not words). */
  readonly fields: readonly string[];
}

/**
 * A document's words as SQLite's FTS5 takes them: our tokens joined by spaces, or plain ASCII
 * text as it is, which FTS5 splits and folds exactly as our tokenizer does (and faster).
 */
export function sqliteIndexText(fields: readonly string[]): string {
  const texts = fields.map(stripAnsi);
  return texts.every(tokenisesAlikeInSqlite) ? texts.join('\n') : indexText(...texts);
}

/** to_tsvector keeps a word's first 255 positions, and counts positions up to 16,383. */
const MAX_POSITIONS_PER_WORD = 255;
const MAX_POSITION = 16_383;

/**
 * A document's words as a `tsvector` in PostgreSQL's binary form (what `tsvectorsend` writes and
 * `tsvectorrecv` reads): exactly what `to_tsvector('simple', indexText(...fields))` makes. A Buffer
 * parameter travels in binary, so the server reads lengths and numbers instead of parsing text.
 * Measured over the 100,000 bench messages: PostgreSQL's text parser (to_tsvector) 3.8 s; a
 * `tsvector` text literal 2.8 s to build in Node and about 1 s for the server to read; this form
 * 1.3 s to build and about 0.2 s to read.
 *
 * The layout: the word count (int32), then per word its UTF-8 bytes and a NUL, its position count
 * (uint16) and its positions (uint16 each, weight bits 0 = D, strictly increasing). The server
 * sorts the words itself, so they go in the order they first appear.
 */
export function postgresTsvector(fields: readonly string[]): Buffer {
  // Each word's positions, in order.
  const words = new Map<string, number[]>();
  let position = 0;
  // An upper bound of the size: 3 UTF-8 bytes at most per UTF-16 unit, the NUL, the count, 2 bytes a position.
  let maxBytes = 4;
  for (const field of fields) {
    for (const word of searchTokens(stripAnsi(field))) {
      position = Math.min(position + 1, MAX_POSITION);
      const positions = words.get(word);
      if (positions === undefined) {
        words.set(word, [position]);
        maxBytes += word.length * 3 + 5;
      } else if (positions.length < MAX_POSITIONS_PER_WORD && positions[positions.length - 1] !== position) {
        positions.push(position);
        maxBytes += 2;
      }
    }
  }
  const out = Buffer.allocUnsafe(maxBytes);
  out.writeInt32BE(words.size, 0);
  let offset = 4;
  for (const [word, positions] of words) {
    offset = writeWord(out, word, offset);
    out[offset++] = 0;
    out[offset++] = positions.length >> 8;
    out[offset++] = positions.length & 0xff;
    for (const at of positions) {
      out[offset++] = at >> 8;
      out[offset++] = at & 0xff;
    }
  }
  return out.subarray(0, offset);
}

/**
 * Writes `word` in UTF-8 at `offset`; returns the offset after it. Most words are ASCII, copied
 * here byte by byte: a call into Buffer#write per word was a fifth of the encoding's time.
 */
function writeWord(out: Buffer, word: string, offset: number): number {
  let at = offset;
  for (let index = 0; index < word.length; index += 1) {
    const code = word.charCodeAt(index);
    if (code > 0x7f) return offset + out.write(word, offset, 'utf8');
    out[at++] = code;
  }
  return at;
}

/** Rows per INSERT into an index: 2 parameters a row. */
const ROWS_PER_INSERT = 1000;

/**
 * The statement that adds `rows` documents to an index, with its placeholders. Written once per
 * size and reused: building it through the query builder (2,000 parameters a statement, one
 * fragment per row) cost more than the index's own JavaScript work in a bulk import.
 */
const insertStatements = new Map<string, string>();
function insertStatement(dialect: Dialect, index: FullTextIndex, rows: number): string {
  const key = `${dialect} ${index} ${rows}`;
  let text = insertStatements.get(key);
  if (text === undefined) {
    const values = Array.from({ length: rows }, (_, row) =>
      dialect === 'postgres' ? `($${2 * row + 1}::integer, $${2 * row + 2}::tsvector)` : '(?, ?)',
    ).join(', ');
    text =
      dialect === 'postgres'
        ? `INSERT INTO "${index}" ("${POSTGRES_KEY_COLUMNS[index]}", document) VALUES ${values}`
        : `INSERT INTO "${index}" (rowid, text) VALUES ${values}`;
    insertStatements.set(key, text);
  }
  return text;
}

/** Documents from which an add is a bulk load (an import's batch, a rebuild), not a post. */
const BULK_DOCUMENTS = 100;

/**
 * A bulk load on PostgreSQL gives its transaction a bigger GIN pending list and more memory to
 * merge it with (32 MB each; both 4 MB by default): new entries wait in the list, and the
 * inserting backend merges the list into the index whenever it outgrows the limit, in runs of
 * work_mem. Fewer, bigger merges touch each word's posting tree fewer times: `baud message
 * import` of 120,000 messages of 60 words took 13.3 s instead of 16.0 s (three interleaved runs
 * each, one machine). Searches meanwhile read up to the larger list; the import merges what is
 * left when it ends (see mergePendingEntries). Set for the transaction only (set_config's
 * `is_local`): gone at its end.
 */
async function prepareBulkLoad(db: Executor): Promise<void> {
  await sql`SELECT set_config('gin_pending_list_limit', '32MB', true), set_config('work_mem', '32MB', true)`.execute(
    db,
  );
}

/**
 * Adds documents to an index, in the transaction that stores them.
 *
 * On PostgreSQL the documents of one INSERT are encoded while the server runs the one before:
 * encoding is most of the index's cost in Node, and the importing process otherwise waited for
 * the server half the time (SQLite runs each INSERT in this thread, so there is nothing to wait for).
 */
export async function addToIndex(
  db: Executor,
  dialect: Dialect,
  index: FullTextIndex,
  documents: readonly IndexedDocument[],
): Promise<void> {
  if (dialect === 'postgres' && documents.length >= BULK_DOCUMENTS) await prepareBulkLoad(db);
  const encode = dialect === 'postgres' ? postgresTsvector : sqliteIndexText;
  let inserting: Promise<unknown> = Promise.resolve();
  for (let start = 0; start < documents.length; start += ROWS_PER_INSERT) {
    const chunk = documents.slice(start, start + ROWS_PER_INSERT);
    const parameters = chunk.flatMap(({ id, fields }) => [id, encode(fields)]);
    await inserting;
    inserting = db.executeQuery(CompiledQuery.raw(insertStatement(dialect, index, chunk.length), parameters));
    if (dialect === 'postgres' && start + ROWS_PER_INSERT < documents.length) {
      // Awaited before the next INSERT; a failure meanwhile must not count as unhandled.
      inserting.catch(() => {});
      // One turn of the event loop: the INSERT is on its way to the server before the next encoding starts.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  await inserting;
}

/** Takes a document out of an index. */
export async function removeFromIndex(db: Executor, dialect: Dialect, index: FullTextIndex, id: number): Promise<void> {
  const key = dialect === 'postgres' ? sql.ref(POSTGRES_KEY_COLUMNS[index]) : sql.ref('rowid');
  await sql`DELETE FROM ${sql.table(index)} WHERE ${key} = ${id}`.execute(db);
}

/** Empties an index (before a rebuild). */
export async function clearIndex(db: Executor, index: FullTextIndex): Promise<void> {
  await sql`DELETE FROM ${sql.table(index)}`.execute(db);
}

/**
 * Merges what a bulk load left in an index's GIN pending list into the index itself
 * (PostgreSQL; nothing on SQLite). New entries wait in that list, which every search reads in
 * full, until VACUUM merges it — and autovacuum may not come for a long time: a rare word took
 * 2 ms instead of 0.04 ms after a 1,000,000-message import.
 */
export async function mergePendingEntries(db: Executor, dialect: Dialect, index: FullTextIndex): Promise<void> {
  if (dialect === 'postgres') await sql`SELECT gin_clean_pending_list(${`${index}_document`}::regclass)`.execute(db);
}

/**
 * Merges an index's GIN pending list while a bulk load goes on (PostgreSQL; nothing on SQLite):
 * `nudge` after each committed batch starts a merge on a pooled connection of its own, or asks
 * the running one to go round again; `finish` waits for the last and merges what is left.
 *
 * Why beside the load: merging the list was a quarter of PostgreSQL's work in an import, done by
 * the importing backend itself whenever the list outgrew its limit, with the import waiting. A
 * second backend can merge at the same time — PostgreSQL lets inserts append to the list while
 * one process merges it, and an insert that finds a merge under way leaves the list to it — so
 * the work moves onto a core the import was not using. Entries of a batch not yet committed may
 * be merged too: the index points at row versions, whose visibility every read checks anyway.
 */
export interface PendingEntryMerges {
  nudge(): void;
  /** Waits for the merge under way and merges the rest; a merge that failed meanwhile fails here. */
  finish(): Promise<void>;
}

export function mergePendingEntriesBeside(db: Executor, dialect: Dialect, index: FullTextIndex): PendingEntryMerges {
  if (dialect !== 'postgres') return { nudge() {}, finish: async () => {} };
  let running: Promise<void> | null = null;
  let isAskedAgain = false;
  let failure: { readonly error: unknown } | null = null;
  const mergeUntilCaughtUp = async () => {
    do {
      isAskedAgain = false;
      await mergePendingEntries(db, dialect, index);
    } while (isAskedAgain);
  };
  return {
    nudge() {
      if (failure !== null) return;
      if (running !== null) {
        isAskedAgain = true;
        return;
      }
      running = mergeUntilCaughtUp()
        .catch((error: unknown) => {
          failure = { error };
        })
        .finally(() => {
          running = null;
        });
    },
    async finish() {
      await running;
      if (failure !== null) throw failure.error;
      await mergePendingEntries(db, dialect, index);
    },
  };
}

/** How long a node keeps PostgreSQL's word statistics before reading them again: they change only when ANALYZE runs. */
const WORD_SHARES_MAX_AGE_MS = 60_000;

/**
 * The shares of documents an index's common words are found in, as PostgreSQL's ANALYZE keeps
 * them for the `tsvector` column (the lexemes of `pg_stats.most_common_elems`); read at most once
 * a minute. Empty on SQLite, and before the first ANALYZE: every word then counts as rare.
 */
export function createWordShareReader(
  db: Executor,
  dialect: Dialect,
  index: FullTextIndex,
  clock: Clock,
): () => Promise<WordShares> {
  let shares: WordShares = new Map();
  let readAt = Number.NEGATIVE_INFINITY;
  return async () => {
    const now = clock.now().getTime();
    if (dialect === 'sqlite' || now - readAt < WORD_SHARES_MAX_AGE_MS) return shares;
    readAt = now;
    const { rows } = await sql<{ words: string[] | null; shares: number[] | null }>`
      SELECT most_common_elems::text::text[] AS words, most_common_elem_freqs AS shares FROM pg_stats
       WHERE schemaname = current_schema() AND tablename = ${index} AND attname = 'document'`.execute(db);
    const [row] = rows;
    // most_common_elem_freqs holds one share per word, then three figures about the column.
    shares = new Map((row?.words ?? []).map((word, position) => [word, Number(row?.shares?.[position] ?? 0)]));
    return shares;
  };
}

/** Matches few enough to fetch them all from PostgreSQL's GIN index and sort them. */
const FEW_MATCHES = 5000;

/**
 * How a query over `index` (joined as `s`) selects documents: the condition, and the
 * document's id in the index (to join on, order by and page with). Null when nothing matches.
 *
 * PostgreSQL cannot walk a GIN index in id order: left to itself it walks the documents newest
 * first and tests each one, which is quick for a common word and reads the whole index for a
 * rare one. So the GIN index is asked first; when the matches are few, they are the candidates.
 */
export async function indexMatch(
  db: Executor,
  dialect: Dialect,
  index: FullTextIndex,
  query: SearchQuery,
): Promise<IndexMatch | null> {
  const match = documentMatch(dialect, index, query);
  if (dialect === 'sqlite') return match;
  const column = POSTGRES_KEY_COLUMNS[index];
  const tsquery = sql`to_tsquery('simple', ${toPostgresTsquery(query)})`;
  const { rows } = await sql<Record<string, number>>`
    SELECT ${sql.ref(column)} AS id FROM ${sql.table(index)} WHERE document @@ ${tsquery} LIMIT ${FEW_MATCHES + 1}`.execute(
    db,
  );
  if (rows.length === 0) return null;
  if (rows.length > FEW_MATCHES) return match;
  return { condition: sql`${match.id} = ANY(${rows.map((row) => Number(row.id))}::integer[])`, id: match.id };
}

/** How a query selects documents of an index joined as `s`: the condition and the document's id there. */
export interface IndexMatch {
  readonly condition: RawBuilder<unknown>;
  readonly id: RawBuilder<unknown>;
}

/**
 * Whether one document (the row of `s` joined by its id) matches: for a search driven by a short
 * list of candidates, each tested on its own (FTS5 takes the rowid with MATCH; PostgreSQL reads
 * the row by its key and tests its `tsvector`), never a walk of the index's matches.
 */
export function documentMatch(dialect: Dialect, index: FullTextIndex, query: SearchQuery): IndexMatch {
  if (dialect === 'sqlite') return { condition: sql`s.text MATCH ${toFts5Match(query)}`, id: sql.ref('s.rowid') };
  return {
    condition: sql`s.document @@ to_tsquery('simple', ${toPostgresTsquery(query)})`,
    id: sql.ref(`s.${POSTGRES_KEY_COLUMNS[index]}`),
  };
}

/** The SQLite function that scores a matched document (see relevanceSortKey). */
const SQLITE_RELEVANCE_FUNCTION = 'baud_relevance';

/**
 * Teaches a SQLite connection `baud_relevance(terms, field, …)`: the relevance score of the
 * fields' text for the query's terms (JSON), as `relevanceScore` computes it. FTS5's own bm25()
 * cannot serve: it weighs words by statistics of the whole index, which every post changes.
 */
export function registerRelevanceFunction(connection: BetterSqlite3.Database): void {
  let lastTermsJson = '';
  let lastTerms: readonly SearchTerm[] = [];
  connection.function(SQLITE_RELEVANCE_FUNCTION, { deterministic: true, varargs: true }, (termsJson, ...fields) => {
    if (termsJson !== lastTermsJson) {
      lastTerms = JSON.parse(String(termsJson)) as SearchTerm[];
      lastTermsJson = String(termsJson);
    }
    const tokens = fields.flatMap((field) => (typeof field === 'string' ? searchTokens(stripAnsi(field)) : []));
    return relevanceScore(tokens, lastTerms);
  });
}

/**
 * The sort key of `sort=relevance` for a document that matched `query`: its score × 2^32 + its
 * id, so one integer orders by score and then newest first, and pages by `key < cursor`. The
 * score depends on the document and the query alone — PostgreSQL's ts_rank (lowered for long
 * documents, scaled into [0, 1)), or relevanceScore on SQLite — so a document's key never changes between two pages.
 */
export function relevanceSortKey(
  dialect: Dialect,
  query: SearchQuery,
  id: RawBuilder<unknown>,
  fields: readonly RawBuilder<unknown>[],
): RawBuilder<number> {
  if (dialect === 'postgres') {
    // Normalisation 1 | 32: divided by 1 + log(document length), then scaled into [0, 1).
    const rank = sql`ts_rank(s.document, to_tsquery('simple', ${toPostgresTsquery(query)}), 33)`;
    return sql<number>`(floor(${rank} * ${RELEVANCE_SCALE})::bigint * ${ID_SPAN} + ${id})`;
  }
  const terms = JSON.stringify(positiveTerms(query));
  return sql<number>`(${sql.raw(SQLITE_RELEVANCE_FUNCTION)}(${terms}, ${sql.join(fields)}) * ${ID_SPAN} + ${id})`;
}
