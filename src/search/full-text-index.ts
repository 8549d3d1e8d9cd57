import type BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, type RawBuilder, sql } from 'kysely';
import type { Clock } from '../clock.js';
import type { Db, Dialect, Executor } from '../db/database.js';
import { stripAnsi } from '../text/strip-ansi.js';
import type { WordShares } from './match-share.js';
import { ID_SPAN, RELEVANCE_SCALE, relevanceScore } from './relevance.js';
import { positiveTerms, type SearchQuery, type SearchTerm, toFts5Match, toPostgresTsquery } from './search-query.js';
import { indexText, isAsciiWordCode, searchTokens, tokenisesAlikeInSqlite } from './search-text.js';

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

/**
 * Whether FTS5 may take a field as it is stored: nothing in it to strip, and tokenised by SQLite
 * as by us. Then the text `sqliteIndexText` would make is the stored fields joined by newlines.
 */
function isIndexableAsStored(text: string): boolean {
  return tokenisesAlikeInSqlite(text) && stripAnsi(text) === text;
}

/** Where an index's documents are stored: a table keyed by `id`, and the columns of their fields, in order. */
export interface StoredFields {
  readonly table: string;
  readonly columns: readonly string[];
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
  const words = documentWords;
  try {
    for (const field of fields) {
      const text = stripAnsi(field);
      if (tokenisesAlikeInSqlite(text)) words.addAsciiRuns(text);
      else for (const word of searchTokens(text)) words.addToken(word);
    }
    return words.encode();
  } finally {
    // Lets go of the document's texts, which would otherwise live until the next one.
    words.clear();
  }
}

/**
 * The words of one document with their positions, in the order they first appear: what
 * `postgresTsvector` writes. An import encodes every message, and making each word of plain
 * ASCII text a string of its own and looking it up in a Map was most of that work and of the
 * garbage it left: here a run of ASCII letters and digits is hashed and compared where it stands
 * in its text, and kept as (text, start, length). Other text comes as `searchTokens`'s strings,
 * kept as (token, 0, length); the two kinds find each other, as both are compared lowercased.
 * A word's positions are a chain through one array of all the document's positions. One table
 * serves every document in turn (encoding is synchronous), its arrays reused and grown as needed.
 */
class DocumentWords {
  /** Open addressing over a power of two of slots: each holds a word's number + 1, or 0. */
  private slots = new Int32Array(256);
  private readonly usedSlots: number[] = [];
  private readonly texts: string[] = [];
  private starts = new Int32Array(128);
  private lengths = new Int32Array(128);
  private hashes = new Int32Array(128);
  /** 1 where a word was kept as written in ASCII text (lowercased as it is written out). */
  private isRun = new Uint8Array(128);
  /** Each word's last kept position (as a place in `positions`) and how many it has. */
  private lastPlaces = new Int32Array(128);
  private positionCounts = new Int32Array(128);
  /** Every kept position, and the place of the same word's next one (−1: none yet). */
  private positions = new Int32Array(1024);
  private nextPlaces = new Int32Array(1024);
  private firstPlaces = new Int32Array(128);
  private words = 0;
  private places = 0;
  private position = 0;
  /** An upper bound of the encoding's size so far. */
  private maxBytes = 4;

  clear(): void {
    for (const slot of this.usedSlots) this.slots[slot] = 0;
    this.usedSlots.length = 0;
    this.texts.length = 0;
    this.words = 0;
    this.places = 0;
    this.position = 0;
    this.maxBytes = 4;
  }

  /** Adds the tokens of ASCII text that `tokenisesAlikeInSqlite` accepted: its runs of letters and digits. */
  addAsciiRuns(text: string): void {
    const end = text.length;
    let at = 0;
    while (at < end) {
      if (!isAsciiWordCode(text.charCodeAt(at))) {
        at += 1;
        continue;
      }
      const start = at;
      let hash = 0;
      do {
        hash = nextHash(hash, text.charCodeAt(at));
        at += 1;
      } while (at < end && isAsciiWordCode(text.charCodeAt(at)));
      this.add(text, start, at - start, hash, 1);
    }
  }

  /** Adds one token as `searchTokens` gives it (folded already). */
  addToken(token: string): void {
    let hash = 0;
    for (let at = 0; at < token.length; at += 1) hash = nextHash(hash, token.charCodeAt(at));
    this.add(token, 0, token.length, hash, 0);
  }

  private add(text: string, start: number, length: number, hash: number, isRun: number): void {
    const position = Math.min(this.position + 1, MAX_POSITION);
    this.position = position;
    const mask = this.slots.length - 1;
    let slot = firstSlot(hash, mask);
    for (let entry = this.slots[slot] as number; entry !== 0; entry = this.slots[slot] as number) {
      const word = entry - 1;
      if (this.hashes[word] === hash && this.isSameWord(word, text, start, length)) {
        const last = this.lastPlaces[word] as number;
        if ((this.positionCounts[word] as number) < MAX_POSITIONS_PER_WORD && this.positions[last] !== position) {
          const place = this.keepPosition(position);
          this.nextPlaces[last] = place;
          this.lastPlaces[word] = place;
          this.positionCounts[word] = (this.positionCounts[word] as number) + 1;
          this.maxBytes += 2;
        }
        return;
      }
      slot = (slot + 1) & mask;
    }
    if (this.words === this.starts.length) this.growWords();
    const word = this.words;
    this.words += 1;
    this.texts[word] = text;
    this.starts[word] = start;
    this.lengths[word] = length;
    this.hashes[word] = hash;
    this.isRun[word] = isRun;
    const place = this.keepPosition(position);
    this.firstPlaces[word] = place;
    this.lastPlaces[word] = place;
    this.positionCounts[word] = 1;
    // A run is ASCII, a byte a character; a token takes up to 3 UTF-8 bytes a UTF-16 unit. Then the NUL, the count, a position.
    this.maxBytes += (isRun === 1 ? length : length * 3) + 5;
    this.slots[slot] = word + 1;
    this.usedSlots.push(slot);
    if (this.words * 2 > this.slots.length) this.growSlots();
  }

  private keepPosition(position: number): number {
    if (this.places === this.positions.length) {
      this.positions = grownInt32Array(this.positions);
      this.nextPlaces = grownInt32Array(this.nextPlaces);
    }
    const place = this.places;
    this.places += 1;
    this.positions[place] = position;
    this.nextPlaces[place] = -1;
    return place;
  }

  private isSameWord(word: number, text: string, start: number, length: number): boolean {
    if (this.lengths[word] !== length) return false;
    const wordText = this.texts[word] as string;
    const wordStart = this.starts[word] as number;
    for (let at = 0; at < length; at += 1) {
      if (lowerCode(wordText.charCodeAt(wordStart + at)) !== lowerCode(text.charCodeAt(start + at))) return false;
    }
    return true;
  }

  private growWords(): void {
    this.starts = grownInt32Array(this.starts);
    this.lengths = grownInt32Array(this.lengths);
    this.hashes = grownInt32Array(this.hashes);
    this.lastPlaces = grownInt32Array(this.lastPlaces);
    this.firstPlaces = grownInt32Array(this.firstPlaces);
    this.positionCounts = grownInt32Array(this.positionCounts);
    const isRun = new Uint8Array(this.isRun.length * 2);
    isRun.set(this.isRun);
    this.isRun = isRun;
  }

  private growSlots(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    this.usedSlots.length = 0;
    for (let word = 0; word < this.words; word += 1) {
      const hash = this.hashes[word] as number;
      let slot = firstSlot(hash, mask);
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = word + 1;
      this.usedSlots.push(slot);
    }
    this.slots = slots;
  }

  encode(): Buffer {
    const out = Buffer.allocUnsafe(this.maxBytes);
    out.writeInt32BE(this.words, 0);
    let offset = 4;
    for (let word = 0; word < this.words; word += 1) {
      const text = this.texts[word] as string;
      if (this.isRun[word] === 1) {
        const start = this.starts[word] as number;
        const end = start + (this.lengths[word] as number);
        for (let at = start; at < end; at += 1) out[offset++] = lowerCode(text.charCodeAt(at));
      } else {
        offset = writeWord(out, text, offset);
      }
      const count = this.positionCounts[word] as number;
      out[offset++] = 0;
      out[offset++] = count >> 8;
      out[offset++] = count & 0xff;
      for (let place = this.firstPlaces[word] as number; place !== -1; place = this.nextPlaces[place] as number) {
        const at = this.positions[place] as number;
        out[offset++] = at >> 8;
        out[offset++] = at & 0xff;
      }
    }
    return out.subarray(0, offset);
  }
}

/** A copy of `array` twice as long. */
function grownInt32Array(array: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(array.length * 2);
  grown.set(array);
  return grown;
}

/**
 * The words' hash multiplier: odd, drawn once per process, so that no text can be written to make
 * its words collide in the table (which would make encoding it quadratic).
 */
const HASH_MULTIPLIER = (Math.floor(Math.random() * 0x3fffffff) << 1) | 1;

/** A word's hash with one more character (compared lowercased, so hashed lowercased). */
function nextHash(hash: number, code: number): number {
  return (Math.imul(hash, HASH_MULTIPLIER) + lowerCode(code)) | 0;
}

/** Where a hash's probe starts in a table of `mask + 1` slots (its high bits folded in). */
function firstSlot(hash: number, mask: number): number {
  return (hash ^ (hash >>> 15)) & mask;
}

const documentWords = new DocumentWords();

/** An ASCII capital's lowercase code; any other code as it is. */
function lowerCode(code: number): number {
  return code >= 65 && code <= 90 ? code + 32 : code;
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
 * On SQLite, documents stored in `storedIn` (written already, in this transaction) whose fields
 * FTS5 may take as they are (`isIndexableAsStored`: most text) are read by FTS5 from their rows,
 * in one `INSERT … SELECT`. A bulk import runs its statements on a worker thread, and the
 * copies this spares were the index's largest cost outside FTS5: each message's fields joined
 * into a new string in this thread (3.5 s per 1,000,000 messages, timed alone), that second copy
 * of every text (about 440 MiB) written for the worker and read back there, one INSERT of it
 * per 1,000 documents.
 *
 * On PostgreSQL the documents of one INSERT are encoded while the server runs the one before:
 * encoding is most of the index's cost in Node, and the importing process otherwise waited for
 * the server half the time.
 */
export async function addToIndex(
  db: Executor,
  dialect: Dialect,
  index: FullTextIndex,
  documents: readonly IndexedDocument[],
  storedIn?: StoredFields,
): Promise<void> {
  if (dialect === 'sqlite' && storedIn !== undefined) {
    const asStored: number[] = [];
    const rest: IndexedDocument[] = [];
    for (const document of documents) {
      if (document.fields.every(isIndexableAsStored)) asStored.push(document.id);
      else rest.push(document);
    }
    if (asStored.length > 0) await addStoredToIndex(db, index, storedIn, asStored);
    if (rest.length === 0) return;
    documents = rest;
  }
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

/**
 * SQLite: adds the documents of `ids` to an index from their stored rows, their fields joined by
 * newlines (what `sqliteIndexText` makes of fields `isIndexableAsStored` accepts). Every id must
 * be a row of the table already: one that is not would be left out of the index, so it throws.
 */
async function addStoredToIndex(
  db: Executor,
  index: FullTextIndex,
  storedIn: StoredFields,
  ids: readonly number[],
): Promise<void> {
  const text = sql.join(
    storedIn.columns.map((column) => sql.ref(column)),
    sql` || char(10) || `,
  );
  const { numAffectedRows } = await sql`
    INSERT INTO ${sql.table(index)} (rowid, text)
    SELECT id, ${text} FROM ${sql.table(storedIn.table)} WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`.execute(
    db,
  );
  if (numAffectedRows !== BigInt(ids.length))
    throw new Error(
      `${index}: ${ids.length} documents to index from ${storedIn.table}, ${numAffectedRows} found there`,
    );
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
 * `nudge` after each committed batch starts a merge on a pooled connection of its own (so `db` is
 * the database, never the load's transaction), or asks
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

export function mergePendingEntriesBeside(db: Db, dialect: Dialect, index: FullTextIndex): PendingEntryMerges {
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
