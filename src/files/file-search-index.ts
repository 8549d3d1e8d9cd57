import { sql } from 'kysely';
import type { Dialect, Executor } from '../db/database.js';
import { addToIndex, indexMatch, relevanceSortKey, removeFromIndex } from '../db/full-text-index.js';
import type { SearchOrder, SearchQuery } from '../search/search-query.js';

/** What the file index holds of a file: its name, descriptions and hash tags. */
export interface IndexedFile {
  readonly id: number;
  readonly fileName: string;
  readonly desc: string;
  readonly descLong: string;
  readonly hashTags: readonly string[];
}

const fieldsOf = (file: IndexedFile) => [file.fileName, file.desc, file.descLong, file.hashTags.join(' ')];

/** Adds files to the search index, in the transaction that stores them. */
export function indexFiles(db: Executor, dialect: Dialect, files: readonly IndexedFile[]) {
  return addToIndex(
    db,
    dialect,
    'file_search',
    files.map((file) => ({ id: file.id, fields: fieldsOf(file) })),
  );
}

/** Takes a removed file out of the index. */
export function unindexFile(db: Executor, dialect: Dialect, fileId: number) {
  return removeFromIndex(db, dialect, 'file_search', fileId);
}

/** Indexes every file already stored (the migration that adds file search). */
export async function indexAllFiles(db: Executor, dialect: Dialect): Promise<number> {
  let indexed = 0;
  let afterId = 0;
  for (;;) {
    const { rows } = await sql<{ id: number; fileName: string; desc: string; descLong: string; hashTags: string }>`
      SELECT id, file_name, "desc", desc_long, hash_tags FROM files WHERE id > ${afterId} ORDER BY id LIMIT 1000`.execute(
      db,
    );
    if (rows.length === 0) return indexed;
    await indexFiles(
      db,
      dialect,
      rows.map((row) => ({ ...row, hashTags: JSON.parse(row.hashTags) as string[] })),
    );
    indexed += rows.length;
    afterId = rows[rows.length - 1]?.id ?? afterId;
  }
}

/** A file a search found, and its key in the search's order. */
export interface FoundFile {
  readonly id: number;
  readonly sortKey: number;
}

/**
 * The files of the given areas that match, newest (highest fileId) or most relevant first,
 * below `beforeKey` in that order when paging; `limit` of them at most.
 */
export async function findFiles(
  db: Executor,
  dialect: Dialect,
  search: {
    readonly query: SearchQuery;
    readonly areaTags: readonly string[];
    readonly sort: SearchOrder;
    readonly beforeKey: number | null;
    readonly limit: number;
  },
): Promise<FoundFile[]> {
  const match = await indexMatch(db, dialect, 'file_search', search.query);
  if (match === null) return [];
  const sortKey =
    search.sort === 'relevance'
      ? relevanceSortKey(
          dialect,
          search.query,
          match.id,
          ['f.file_name', 'f.desc', 'f.desc_long', 'f.hash_tags'].map((column) => sql.ref(column)),
        )
      : match.id;
  const before = search.beforeKey === null ? sql`` : sql`AND ${sortKey} < ${search.beforeKey}`;
  const { rows } = await sql<FoundFile>`
    SELECT f.id, ${sortKey} AS sort_key FROM file_search s JOIN files f ON f.id = ${match.id}
     WHERE ${match.condition}
       AND f.area_tag IN (${sql.join(search.areaTags.map((areaTag) => sql`${areaTag}`))}) ${before}
     ORDER BY sort_key DESC
     LIMIT ${search.limit}`.execute(db);
  return rows.map((row) => ({ id: Number(row.id), sortKey: Number(row.sortKey) }));
}

/** How many files of the given areas match, counting no further than `upTo` (counted, never scored). */
export async function countFileMatches(
  db: Executor,
  dialect: Dialect,
  search: { readonly query: SearchQuery; readonly areaTags: readonly string[] },
  upTo: number,
): Promise<number> {
  const match = await indexMatch(db, dialect, 'file_search', search.query);
  if (match === null) return 0;
  const { rows } = await sql<{ count: number }>`
    SELECT count(*) AS count FROM (
      SELECT 1 FROM file_search s JOIN files f ON f.id = ${match.id}
       WHERE ${match.condition} AND f.area_tag IN (${sql.join(search.areaTags.map((areaTag) => sql`${areaTag}`))})
       LIMIT ${upTo}) AS matches`.execute(db);
  return Number(rows[0]?.count ?? 0);
}
