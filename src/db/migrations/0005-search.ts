import { CompiledQuery, type Kysely, type Migration, sql } from 'kysely';
import type { Dialect } from './dialect.js';
import { postgresDocument, sqliteDocument } from './frozen/0005-search-documents.js';

/** Boards this big say how the index build is going (on stderr: stdout may be a CLI's JSON). */
const PROGRESS_FROM_MESSAGES = 20_000;
/** Messages read at a time. */
const MESSAGES_PER_BATCH = 5000;
/** Index rows per INSERT: 2 parameters a row. */
const ROWS_PER_INSERT = 1000;

type FullTextIndex = 'message_search' | 'file_search';

/** PostgreSQL: the key column of each index and the table its documents live in. */
const POSTGRES_KEYS: Readonly<Record<FullTextIndex, { column: string; owner: string }>> = {
  message_search: { column: 'message_id', owner: 'messages' },
  file_search: { column: 'file_id', owner: 'files' },
};

interface Document {
  readonly id: number;
  readonly fields: readonly string[];
}

/**
 * Full-text search of messages and files: an FTS5 table on SQLite (contentless), a `tsvector`
 * with a GIN index on PostgreSQL, one row per document. An existing board's live messages and
 * its files are indexed here, with the tokens of frozen/0005-search-text.ts (our own folding, so
 * both databases index the same words); a big board prints its progress.
 *
 * Self-contained on purpose: it must build the same index on every upgrade, so it uses none of
 * the app's search code, which may change (see frozen/).
 */
export function searchMigration(dialect: Dialect): Migration {
  return {
    // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
    async up(db: Kysely<any>) {
      await createIndex(db, dialect, 'message_search');
      await createIndex(db, dialect, 'file_search');
      await indexMessages(db, dialect);
      await indexFiles(db, dialect);
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
async function createIndex(db: Kysely<any>, dialect: Dialect, index: FullTextIndex): Promise<void> {
  if (dialect === 'postgres') {
    const { column, owner } = POSTGRES_KEYS[index];
    await sql`CREATE TABLE ${sql.table(index)} (
      ${sql.ref(column)} integer PRIMARY KEY REFERENCES ${sql.table(owner)} (id) ON DELETE CASCADE,
      document tsvector NOT NULL)`.execute(db);
    await sql`CREATE INDEX ${sql.id(`${index}_document`)} ON ${sql.table(index)} USING gin (document)`.execute(db);
  } else {
    // Contentless (the text is in the owner's table), deletable by rowid = the document's id.
    await sql`CREATE VIRTUAL TABLE ${sql.table(index)} USING fts5(
      text, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 0')`.execute(db);
  }
}

/** Every live message's subject and body, in id order. Columns are read under one-word names, the same with or without a camel-casing plugin. */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
async function indexMessages(db: Kysely<any>, dialect: Dialect): Promise<void> {
  const { rows: counted } = await sql<{
    total: number | string;
  }>`SELECT count(*) AS total FROM messages WHERE deleted_at IS NULL`.execute(db);
  const total = Number(counted[0]?.total ?? 0);
  let indexed = 0;
  let lastShown = 0;
  let afterId = 0;
  for (;;) {
    const { rows } = await sql<{ id: number; subject: string; body: string }>`
      SELECT id, subject, body FROM messages WHERE deleted_at IS NULL AND id > ${afterId}
       ORDER BY id LIMIT ${MESSAGES_PER_BATCH}`.execute(db);
    const last = rows.at(-1);
    if (last === undefined) return;
    await addDocuments(
      db,
      dialect,
      'message_search',
      rows.map(({ id, subject, body }) => ({ id, fields: [subject, body] })),
    );
    indexed += rows.length;
    afterId = last.id;
    if (total >= PROGRESS_FROM_MESSAGES && (indexed - lastShown >= total / 20 || indexed >= total)) {
      lastShown = indexed;
      process.stderr.write(
        `building the search index: ${indexed.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} messages\n`,
      );
    }
  }
}

/** Every file's name, descriptions and hash tags (a JSON array, indexed as one field of words), in id order. */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
async function indexFiles(db: Kysely<any>, dialect: Dialect): Promise<void> {
  let afterId = 0;
  for (;;) {
    const { rows } = await sql<{ id: number; name: string; summary: string; details: string; tags: string }>`
      SELECT id, file_name AS name, "desc" AS summary, desc_long AS details, hash_tags AS tags FROM files
       WHERE id > ${afterId} ORDER BY id LIMIT ${ROWS_PER_INSERT}`.execute(db);
    const last = rows.at(-1);
    if (last === undefined) return;
    await addDocuments(
      db,
      dialect,
      'file_search',
      rows.map((row) => ({
        id: row.id,
        fields: [row.name, row.summary, row.details, (JSON.parse(row.tags) as string[]).join(' ')],
      })),
    );
    afterId = last.id;
  }
}

/**
 * Adds documents to an index, ROWS_PER_INSERT to a statement. The statement is written as text:
 * built through the query builder (one fragment per row) it cost more than encoding the documents.
 */
async function addDocuments(
  // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
  db: Kysely<any>,
  dialect: Dialect,
  index: FullTextIndex,
  documents: readonly Document[],
): Promise<void> {
  for (let start = 0; start < documents.length; start += ROWS_PER_INSERT) {
    const chunk = documents.slice(start, start + ROWS_PER_INSERT);
    const statement =
      dialect === 'postgres'
        ? `INSERT INTO "${index}" ("${POSTGRES_KEYS[index].column}", document) VALUES ${chunk
            .map((_, row) => `($${2 * row + 1}::integer, $${2 * row + 2}::tsvector)`)
            .join(', ')}`
        : `INSERT INTO "${index}" (rowid, text) VALUES ${chunk.map(() => '(?, ?)').join(', ')}`;
    const encode = dialect === 'postgres' ? postgresDocument : sqliteDocument;
    await db.executeQuery(
      CompiledQuery.raw(
        statement,
        chunk.flatMap(({ id, fields }) => [id, encode(fields)]),
      ),
    );
  }
}
