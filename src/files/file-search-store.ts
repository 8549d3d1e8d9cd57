import { sql } from 'kysely';
import type { Dialect, Executor } from '../db/database.js';
import { addToIndex, indexMatch, relevanceSortKey, removeFromIndex } from '../search/full-text-index.js';
import { MAX_RANKED_MATCHES } from '../search/relevance.js';
import type { SearchOrder, SearchQuery } from '../search/search-query.js';

// Every query of the file search index (`file_search`): keeping it in step with the files, in the
// transactions that change them, and finding files in it.

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

/** A file a search found, and its key in the search's order. */
export interface FoundFile {
  readonly id: number;
  readonly sortKey: number;
}

/** What to look for, where, and which page. */
export interface FileSearch {
  readonly query: SearchQuery;
  readonly areaTags: readonly string[];
  readonly sort: SearchOrder;
  readonly beforeKey: number | null;
  /** `relevance`: the highest id its candidates were chosen under, from the first page; null on it. */
  readonly bound: number | null;
  readonly limit: number;
}

/**
 * The files of the given areas that match, newest (highest fileId) or most relevant first,
 * below `beforeKey` in that order when paging; `limit` of them at most. By relevance the newest
 * MAX_RANKED_MATCHES matches below `bound` are ranked, as message search does (findMessages).
 */
export async function findFiles(
  db: Executor,
  dialect: Dialect,
  search: FileSearch,
): Promise<{ readonly files: readonly FoundFile[]; readonly bound: number | null }> {
  const match = await indexMatch(db, dialect, 'file_search', search.query);
  if (match === null) return { files: [], bound: null };
  const newest = (limit: number, beforeId: number | null) => sql<FoundFile>`
    SELECT f.id, f.id AS sort_key FROM file_search s JOIN files f ON f.id = ${match.id}
     WHERE ${match.condition}
       AND f.area_tag IN (${sql.join(search.areaTags.map((areaTag) => sql`${areaTag}`))})
       ${beforeId === null ? sql`` : sql`AND f.id < ${beforeId}`}
       ${search.bound === null ? sql`` : sql`AND f.id <= ${search.bound}`}
     ORDER BY f.id DESC
     LIMIT ${limit}`;
  if (search.sort === 'newest') {
    const { rows } = await newest(search.limit, search.beforeKey).execute(db);
    return { files: rows.map((row) => ({ id: Number(row.id), sortKey: Number(row.sortKey) })), bound: null };
  }
  const { rows: candidates } = await newest(MAX_RANKED_MATCHES, null).execute(db);
  const ids = candidates.map((candidate) => Number(candidate.id));
  const [newestId] = ids;
  if (newestId === undefined) return { files: [], bound: null };
  const sortKey = relevanceSortKey(
    dialect,
    search.query,
    sql.ref('f.id'),
    ['f.file_name', 'f.desc', 'f.desc_long', 'f.hash_tags'].map((column) => sql.ref(column)),
  );
  const document = dialect === 'postgres' ? sql`JOIN file_search s ON s.file_id = f.id` : sql``;
  const before = search.beforeKey === null ? sql`` : sql`AND ${sortKey} < ${search.beforeKey}`;
  const { rows } = await sql<FoundFile>`
    SELECT f.id, ${sortKey} AS sort_key FROM files f ${document}
     WHERE f.id IN (${sql.join(ids)}) ${before}
     ORDER BY sort_key DESC
     LIMIT ${search.limit}`.execute(db);
  // PostgreSQL answers a bigint key as text.
  const files = rows.map((row) => ({ id: Number(row.id), sortKey: Number(row.sortKey) }));
  return { files, bound: search.bound ?? newestId };
}
