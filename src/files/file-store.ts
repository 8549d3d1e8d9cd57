import type { Database, Executor } from '../db/database.js';
import { pageFromRows, rowsToFetch } from '../db/keyset.js';
import { ConflictError } from '../errors.js';
import type { Page, PageRequest } from '../page.js';
import type { SearchOrder, SearchQuery } from '../search/search-query.js';
import type { UserStore } from '../users/user-store.js';
import { withClashSuffix } from './file-name.js';
import { findFiles, indexFiles, unindexFile } from './file-search-store.js';

/** A file record as the API shows it (decisions.md, "Element shapes"), before ANSI stripping. */
export interface FileRecord {
  readonly fileId: number;
  readonly areaTag: string;
  readonly fileName: string;
  readonly desc: string;
  readonly descLong: string;
  readonly byteSize: number;
  readonly uploadTimestamp: string;
  /** Null when the uploader's account is gone (or the file was imported by the operator). */
  readonly uploadByUsername: string | null;
  readonly dlCount: number;
  readonly sha256: string;
  readonly archiveType: string | null;
  readonly hashTags: string[];
  readonly estReleaseYear: number | null;
}

/** A file record plus where its bytes are. */
export interface StoredFile extends FileRecord {
  readonly storageTag: string;
}

export interface NewFile {
  readonly areaTag: string;
  readonly storageTag: string;
  /** The sanitised client name; a clash in the area gets a ` (2)` style suffix. */
  readonly fileName: string;
  readonly desc: string;
  readonly descLong: string;
  readonly byteSize: number;
  readonly sha256: string;
  readonly uploadTimestamp: string;
  readonly uploadByUserId: number | null;
  readonly archiveType: string | null;
  readonly hashTags: readonly string[];
  readonly estReleaseYear: number | null;
}

export interface FileTotals {
  readonly fileCount: number;
  readonly totalBytes: number;
}

export interface FileStore {
  findFile(fileId: number): Promise<StoredFile | null>;
  /** Files of an area, newest first (fileId descending), one keyset page. */
  listAreaFiles(areaTag: string, page: PageRequest): Promise<Page<StoredFile>>;
  /** The files of the given areas that match a search, in the search's order, one keyset page. */
  searchFiles(
    query: SearchQuery,
    areaTags: readonly string[],
    sort: SearchOrder,
    page: PageRequest,
  ): Promise<Page<StoredFile>>;
  /** Files and their bytes on the whole board, from the per-area counters. */
  countFiles(): Promise<FileTotals>;
  /** fileCount per area tag (areas without files are absent). */
  fileCounts(): Promise<Map<string, number>>;
  /**
   * Records a new file and its counters (area, uploader) in one transaction. Same area + same
   * sha256 → `ConflictError` naming the existing fileId; a name clash gets a ` (n)` suffix.
   * `afterInsert(fileId)` runs inside the transaction (it puts the bytes in place), so a
   * failure there leaves no row; then `onStored` (the `file.created` event), last.
   */
  insertFile(
    file: NewFile,
    afterInsert: (fileId: number) => Promise<void>,
    onStored: (trx: Executor, stored: StoredFile) => Promise<void>,
  ): Promise<StoredFile>;
  /** Counts one completed download: the file's dlCount and the user's download counters. */
  recordDownload(fileId: number, userId: number | null, byteSize: number): Promise<void>;
  /**
   * Deletes a file's row and lowers its area's counters, then `onDeleted` (the `file.deleted`
   * event) in the same transaction; returns the row, or null if unknown.
   */
  deleteFile(fileId: number, onDeleted: (trx: Executor, file: StoredFile) => Promise<void>): Promise<StoredFile | null>;
}

// Names tried before giving up on finding a free ` (n)` suffix.
const MAX_CLASH_SUFFIX = 10_000;

function selectFiles(db: Executor) {
  return db
    .selectFrom('files')
    .leftJoin('users', 'users.id', 'files.uploadByUserId')
    .select([
      'files.id',
      'files.areaTag',
      'files.storageTag',
      'files.fileName',
      'files.desc',
      'files.descLong',
      'files.byteSize',
      'files.sha256',
      'files.uploadTimestamp',
      'files.dlCount',
      'files.archiveType',
      'files.hashTags',
      'files.estReleaseYear',
      'users.username as uploadByUsername',
    ]);
}

type FileQueryRow = Awaited<ReturnType<ReturnType<typeof selectFiles>['executeTakeFirstOrThrow']>>;

function toStoredFile(row: FileQueryRow): StoredFile {
  return {
    fileId: row.id,
    areaTag: row.areaTag,
    storageTag: row.storageTag,
    fileName: row.fileName,
    desc: row.desc,
    descLong: row.descLong,
    byteSize: Number(row.byteSize),
    uploadTimestamp: row.uploadTimestamp,
    uploadByUsername: row.uploadByUsername ?? null,
    dlCount: Number(row.dlCount),
    sha256: row.sha256,
    archiveType: row.archiveType,
    hashTags: parseHashTags(row.hashTags),
    estReleaseYear: row.estReleaseYear,
  };
}

function parseHashTags(json: string): string[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value.filter((tag): tag is string => typeof tag === 'string') : [];
  } catch {
    return [];
  }
}

/** `fileName`, or the first ` (n)` variant of it no file of the area has (the upload and the ENiGMA½ import share it). */
export async function freeFileName(trx: Executor, areaTag: string, fileName: string): Promise<string> {
  for (let n = 1; n <= MAX_CLASH_SUFFIX; n += 1) {
    const candidate = n === 1 ? fileName : withClashSuffix(fileName, n);
    const taken = await trx
      .selectFrom('files')
      .select('id')
      .where('areaTag', '=', areaTag)
      .where('fileName', '=', candidate)
      .executeTakeFirst();
    if (!taken) return candidate;
  }
  throw new ConflictError('file.name-exhausted', `Too many files named "${fileName}" in file area "${areaTag}".`);
}

/**
 * The queries of the file base. Every write that touches counters is one transaction; the
 * uploader's and downloader's counters are the users domain's, written through `users` in it.
 */
export function createFileStore(database: Pick<Database, 'db' | 'dialect'>, users: UserStore): FileStore {
  const { db, dialect } = database;
  /** Adds one transfer to a user's counters; operator imports and anonymous downloads count for nobody. */
  async function countUserTransfer(
    trx: Executor,
    userId: number | null,
    direction: 'upload' | 'download',
    byteSize: number,
  ): Promise<void> {
    if (userId !== null) await users.countTransfer(trx, userId, direction, byteSize);
  }

  async function findFile(executor: Executor, fileId: number): Promise<StoredFile | null> {
    const row = await selectFiles(executor).where('files.id', '=', fileId).executeTakeFirst();
    return row ? toStoredFile(row) : null;
  }

  /**
   * Takes the area's row lock for the rest of `trx` by upserting its counters first: every
   * insert into one area waits here for the one before to commit, on any node sharing the
   * database, so the duplicate check and the free-name search below see every committed file
   * and never race. (A retry on unique violations was not enough: with 3 tries, 10 and 30
   * parallel same-name uploads on PostgreSQL still answered 500 several times each.) A row
   * lock, not `pg_advisory_xact_lock`: SQLite serialises writers anyway, so one statement
   * serves both dialects, and the counters are updated here regardless.
   */
  async function lockAreaAndCount(trx: Executor, areaTag: string, byteSize: number): Promise<void> {
    await trx
      .insertInto('fileAreas')
      .values({ areaTag, fileCount: 1, totalBytes: byteSize })
      .onConflict((conflict) =>
        conflict.column('areaTag').doUpdateSet((eb) => ({
          fileCount: eb('fileAreas.fileCount', '+', 1),
          totalBytes: eb('fileAreas.totalBytes', '+', byteSize),
        })),
      )
      .execute();
  }

  return {
    findFile: (fileId) => findFile(db, fileId),

    async listAreaFiles(areaTag, page) {
      let query = selectFiles(db).where('files.areaTag', '=', areaTag);
      if (page.afterKey !== null) query = query.where('files.id', '<', page.afterKey);
      const rows = await query.orderBy('files.id', 'desc').limit(rowsToFetch(page)).execute();
      return pageFromRows(rows, page, (row) => row.id, toStoredFile);
    },

    async searchFiles(query, areaTags, sort, page) {
      const found = await findFiles(db, dialect, {
        query,
        areaTags,
        sort,
        beforeKey: page.afterKey,
        bound: page.bound ?? null,
        limit: rowsToFetch(page),
      });
      const ids = pageFromRows(
        found.files,
        page,
        (file) => file.sortKey,
        (file) => file.id,
      );
      if (ids.items.length === 0) return { items: [], nextKey: null };
      const rows = await selectFiles(db)
        .where('files.id', 'in', [...ids.items])
        .execute();
      const byId = new Map(rows.map((row) => [row.id, toStoredFile(row)]));
      // A file removed between the two queries is left out of the page; the cursor stays right.
      const items = ids.items.flatMap((id) => byId.get(id) ?? []);
      return found.bound === null
        ? { items, nextKey: ids.nextKey }
        : { items, nextKey: ids.nextKey, bound: found.bound };
    },

    async countFiles() {
      const row = await db
        .selectFrom('fileAreas')
        .select((eb) => [
          eb.fn.coalesce(eb.fn.sum<number>('fileCount'), eb.lit(0)).as('count'),
          eb.fn.coalesce(eb.fn.sum<number>('totalBytes'), eb.lit(0)).as('bytes'),
        ])
        .executeTakeFirstOrThrow();
      return { fileCount: Number(row.count), totalBytes: Number(row.bytes) };
    },

    async fileCounts() {
      const rows = await db.selectFrom('fileAreas').select(['areaTag', 'fileCount']).execute();
      return new Map(rows.map((row) => [row.areaTag, Number(row.fileCount)]));
    },

    async insertFile(file, afterInsert, onStored) {
      return db.transaction().execute(async (trx) => {
        // First: the lock. A refused upload (409) rolls the counters back with everything else.
        await lockAreaAndCount(trx, file.areaTag, file.byteSize);
        const duplicate = await trx
          .selectFrom('files')
          .select('id')
          .where('areaTag', '=', file.areaTag)
          .where('sha256', '=', file.sha256)
          .executeTakeFirst();
        if (duplicate) {
          throw new ConflictError(
            'file.duplicate',
            `The same file is already in file area "${file.areaTag}" as fileId ${duplicate.id}.`,
          );
        }
        const fileName = await freeFileName(trx, file.areaTag, file.fileName);
        const { id } = await trx
          .insertInto('files')
          .values({
            areaTag: file.areaTag,
            storageTag: file.storageTag,
            fileName,
            desc: file.desc,
            descLong: file.descLong,
            byteSize: file.byteSize,
            sha256: file.sha256,
            uploadTimestamp: file.uploadTimestamp,
            uploadByUserId: file.uploadByUserId,
            archiveType: file.archiveType,
            hashTags: JSON.stringify(file.hashTags),
            estReleaseYear: file.estReleaseYear,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        await countUserTransfer(trx, file.uploadByUserId, 'upload', file.byteSize);
        await indexFiles(trx, dialect, [{ id, ...file, fileName }]);
        // Inside the transaction: if putting the bytes in place fails, the row never appears.
        await afterInsert(id);
        const stored = await findFile(trx, id);
        if (!stored) throw new Error(`file ${id} vanished inside its own transaction`);
        await onStored(trx, stored);
        return stored;
      });
    },

    async recordDownload(fileId, userId, byteSize) {
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('files')
          .set((eb) => ({ dlCount: eb('dlCount', '+', 1) }))
          .where('id', '=', fileId)
          .execute();
        await countUserTransfer(trx, userId, 'download', byteSize);
      });
    },

    async deleteFile(fileId, onDeleted) {
      return db.transaction().execute(async (trx) => {
        const file = await findFile(trx, fileId);
        if (!file) return null;
        await unindexFile(trx, dialect, fileId);
        await trx.deleteFrom('files').where('id', '=', fileId).execute();
        await trx
          .updateTable('fileAreas')
          .set((eb) => ({
            fileCount: eb('fileCount', '-', 1),
            totalBytes: eb('totalBytes', '-', file.byteSize),
          }))
          .where('areaTag', '=', file.areaTag)
          .execute();
        await onDeleted(trx, file);
        return file;
      });
    },
  };
}
