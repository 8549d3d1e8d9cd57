import type { Readable } from 'node:stream';
import type { AreaAccess } from '../access/area-access.js';
import { checkAreaGlobs, compileAreaGlobs } from '../access/area-glob.js';
import type { BoardAreas, FileAreaDef } from '../access/board-areas.js';
import type { Caller } from '../caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import { BadRequestError, NotFoundError } from '../errors.js';
import type { EventLog } from '../events/event-log.js';
import { mapPage, type Page, type PageRequest } from '../page.js';
import type { SearchBudget } from '../search/search-budget.js';
import { parseQueryParameter, type SearchOrder } from '../search/search-query.js';
import { searchSnippet } from '../search/snippet.js';
import { presentText, stripAnsi } from '../text/strip-ansi.js';
import { fileCreatedEventData } from './file-event.js';
import { type IngestDeps, importLocalFile, ingestReceivedFile } from './file-import.js';
import { type ByteRange, createFileStorage, type FileStorage, type ReceivedFile } from './file-storage.js';
import type { FileRecord, FileStore, FileTotals, StoredFile } from './file-store.js';

/** File area detail (spec 2.8) plus `fileCount` (decisions.md). */
export interface FileAreaSummary {
  readonly areaTag: string;
  readonly name: string;
  readonly desc: string;
  /** The first of the area's storage tags: where uploads go. */
  readonly storageTag: string;
  readonly fileCount: number;
}

/** One part of an upload body, already split by the HTTP layer; the service knows no multipart. */
export type UploadPart =
  | {
      readonly kind: 'file';
      readonly fieldName: string;
      readonly fileName: string;
      /** The file's bytes, unlimited: the storage cuts them off at `fileBase.maxUploadBytes`. */
      readonly stream: Readable;
    }
  | { readonly kind: 'field'; readonly fieldName: string; readonly value: string; readonly isTruncated: boolean };

/** Something with pino's `warn`; the service logs through the request's logger. */
export interface WarnLogger {
  warn(details: object, message: string): void;
}

/** The form fields an upload may carry besides the file. */
export const UPLOAD_FIELD_NAMES: ReadonlySet<string> = new Set(['desc', 'hashTags']);

/** The cursor list id of an area's file list: a cursor from another area's list is refused. */
export function areaFileListId(areaTag: string): string {
  return `files:${areaTag}`;
}

/** Where uploads to `area` go: its first storage tag (config guarantees there is one). */
function storageTagOf(area: FileAreaDef): string {
  const storageTag = area.storageTags[0];
  if (storageTag === undefined) throw new Error(`file area "${area.areaTag}" has no storage tag`);
  return storageTag;
}

/** A stored file as the API shows it: no storage tag, descriptions ANSI-stripped when `shouldStrip`. */
function presentRecord(record: StoredFile, shouldStrip: boolean): FileRecord {
  return {
    fileId: record.fileId,
    areaTag: record.areaTag,
    fileName: record.fileName,
    desc: presentText(record.desc, shouldStrip),
    descLong: presentText(record.descLong, shouldStrip),
    byteSize: record.byteSize,
    uploadTimestamp: record.uploadTimestamp,
    uploadByUsername: record.uploadByUsername,
    dlCount: record.dlCount,
    sha256: record.sha256,
    archiveType: record.archiveType,
    hashTags: record.hashTags,
    estReleaseYear: record.estReleaseYear,
  };
}

/**
 * Opens the file base of a board: storage directories are created and leftover temp files
 * of crashed uploads removed before the service is handed out.
 */
export async function openFileBase(deps: {
  store: FileStore;
  config: Config;
  clock: Clock;
  areas: BoardAreas;
  access: AreaAccess;
  events: EventLog;
  searchBudget: SearchBudget;
}): Promise<FileService> {
  const { requestTimeoutSeconds } = deps.config.contentServers.web;
  const storage = createFileStorage(deps.config.fileBase.storageTags, {
    clock: deps.clock,
    // A temp file younger than any upload could last may belong to another node on a shared mount.
    tempGraceMs: Math.max(3600, 2 * requestTimeoutSeconds) * 1000,
  });
  await storage.ensureDirectories();
  await storage.removeLeftoverTemps();
  return createFileService({ ...deps, storage });
}

/**
 * The file base's rules: who sees which area and file (via the board's area access),
 * uploads, downloads and operator import/remove. HTTP and CLI share it.
 *
 * `shouldStrip` is `?stripAnsi`, as for messages: descriptions come back ANSI-stripped when it
 * is true and exactly as stored when it is false or left out. Files are always stored unstripped.
 */
/** A file a search found: its record and ≤ 200 characters of its descriptions around the first hit. */
export interface FoundFile extends FileRecord {
  readonly snippet: string;
}

/** The cursor list id of a file search: a cursor of one search is refused by any other. */
export function fileSearchListId(search: FileSearchRequest): string {
  return `files-search:${JSON.stringify([search.q, search.areaTag, search.sort ?? 'newest'])}`;
}

/** The parameters of `GET /files/search` but the page. */
export interface FileSearchRequest {
  readonly q: string;
  /** A glob on area tags (`pub_*`). */
  readonly areaTag?: string | undefined;
  /** Newest first unless `relevance`. */
  readonly sort?: SearchOrder | undefined;
}

export interface FileService {
  /** File areas the caller may browse, in configuration order. */
  listAreas(caller: Caller, shouldStrip?: boolean): Promise<FileAreaSummary[]>;
  getArea(caller: Caller, areaTag: string, shouldStrip?: boolean): Promise<FileAreaSummary>;
  /**
   * Files that match a search over name, descriptions and hash tags, newest or most relevant
   * first, in the areas the caller may browse (narrowed by an area glob); a bad query is a 400.
   */
  searchFiles(
    caller: Caller,
    search: FileSearchRequest,
    page: PageRequest,
    shouldStrip?: boolean,
  ): Promise<Page<FoundFile>>;
  /** Files of an area, newest first (keyset on fileId). */
  listAreaFiles(caller: Caller, areaTag: string, page: PageRequest, shouldStrip?: boolean): Promise<Page<FileRecord>>;
  getFile(caller: Caller, fileId: number, shouldStrip?: boolean): Promise<FileRecord>;
  /** Throws 404/401/403 unless the caller may upload to `areaTag`; call before reading any body. */
  assertCanUpload(caller: Caller, areaTag: string): void;
  /**
   * Stores an upload: `file` (required, streamed to disk with SHA-256 and size, cut off at
   * `fileBase.maxUploadBytes` → 413), optional `desc` and `hashTags` fields. Any other part →
   * 400; same content already in the area → 409. Nothing is left on disk on failure. The
   * record comes back presented like `getFile`.
   */
  upload(caller: Caller, areaTag: string, parts: AsyncIterable<UploadPart>, shouldStrip?: boolean): Promise<FileRecord>;
  /** The file if the caller may download it (read + download ACS). */
  downloadableFile(caller: Caller, fileId: number): Promise<StoredFile>;
  /** A stream of the file's bytes; 404 (and a warning in the log) when they are missing on disk. */
  openContent(file: StoredFile, range: ByteRange | undefined, log: WarnLogger): Promise<Readable>;
  /** Counts a completed full download for the file and (if any) the downloading user. */
  recordDownload(caller: Caller, file: StoredFile): Promise<void>;
  /** Files and their bytes on the whole board (the board's statistics). */
  countFiles(): Promise<FileTotals>;
  /** Throws, naming the storage tag, when a storage directory cannot take new files (readiness). */
  checkStorageWritable(): Promise<void>;
  /** Operator import (`baud file import`): no ACS, same extraction and duplicate rules as uploads. */
  importFile(areaTag: string, filePath: string, options?: { desc?: string | null }): Promise<FileRecord>;
  /** Operator remove (`baud file remove`): the row and counters, then the bytes on disk. */
  removeFile(fileId: number): Promise<FileRecord>;
}

export function createFileService(deps: {
  store: FileStore;
  config: Config;
  clock: Clock;
  areas: BoardAreas;
  access: AreaAccess;
  storage: FileStorage;
  /** New and removed files are events, recorded in their own transactions. */
  events: EventLog;
  /** How many searches the node runs at once. */
  searchBudget: SearchBudget;
}): FileService {
  const { store, config, areas, access, storage, clock, events, searchBudget } = deps;
  const ingestDeps: IngestDeps = {
    store,
    storage,
    clock,
    onStored: async (trx, stored) => {
      await events.append(trx, {
        type: 'file.created',
        areaTag: stored.areaTag,
        userId: null,
        data: { ...fileCreatedEventData(presentRecord(stored, false)) },
      });
    },
  };
  const maxUploadBytes = config.fileBase.maxUploadBytes;

  function summarise(area: FileAreaDef, counts: ReadonlyMap<string, number>, shouldStrip: boolean): FileAreaSummary {
    return {
      areaTag: area.areaTag,
      name: area.name,
      desc: presentText(area.desc, shouldStrip),
      storageTag: storageTagOf(area),
      fileCount: counts.get(area.areaTag) ?? 0,
    };
  }

  /** The file if the caller may see its area; unknown files and files of unconfigured areas are 404. */
  async function visibleFile(caller: Caller, fileId: number, check: 'read' | 'download'): Promise<StoredFile> {
    const file = await store.findFile(fileId);
    if (!file || !areas.fileAreas.has(file.areaTag)) throw new NotFoundError('file.not-found', `No file ${fileId}.`);
    if (check === 'read') access.readableFileArea(caller, file.areaTag);
    else access.downloadableFileArea(caller, file.areaTag);
    return file;
  }

  return {
    async listAreas(caller, shouldStrip = false) {
      const counts = await store.fileCounts();
      return [...areas.fileAreas.values()]
        .filter((area) => access.canReadFileArea(caller, area))
        .map((area) => summarise(area, counts, shouldStrip));
    },

    async getArea(caller, areaTag, shouldStrip = false) {
      const area = access.readableFileArea(caller, areaTag);
      return summarise(area, await store.fileCounts(), shouldStrip);
    },

    async searchFiles(caller, search, page, shouldStrip = false) {
      const query = parseQueryParameter(search.q);
      let areaTags = [...areas.fileAreas.values()]
        .filter((area) => access.canReadFileArea(caller, area))
        .map((area) => area.areaTag);
      if (search.areaTag !== undefined) {
        const matches = compileAreaGlobs(checkAreaGlobs([search.areaTag], '/query/areaTag'));
        areaTags = areaTags.filter(matches);
      }
      // Nothing the caller may browse: the database is not asked, so hidden areas cannot show.
      if (areaTags.length === 0) return { items: [], nextKey: null };
      const files = await searchBudget.run(() => store.searchFiles(query, areaTags, search.sort ?? 'newest', page));
      return mapPage(files, (file) => ({
        ...presentRecord(file, shouldStrip),
        snippet: searchSnippet(stripAnsi(`${file.desc}\n${file.descLong}`), query),
      }));
    },

    async listAreaFiles(caller, areaTag, page, shouldStrip = false) {
      access.readableFileArea(caller, areaTag);
      const files = await store.listAreaFiles(areaTag, page);
      return mapPage(files, (file) => presentRecord(file, shouldStrip));
    },

    async getFile(caller, fileId, shouldStrip = false) {
      return presentRecord(await visibleFile(caller, fileId, 'read'), shouldStrip);
    },

    assertCanUpload(caller, areaTag) {
      access.writableFileArea(caller, areaTag);
    },

    async upload(caller, areaTag, parts, shouldStrip = false) {
      const area = access.writableFileArea(caller, areaTag);
      const uploaderId = caller.kind === 'user' ? caller.user.id : null;
      const fields = new Map<string, string>();
      let received: ReceivedFile | null = null;
      let clientFileName = '';
      try {
        for await (const part of parts) {
          if (part.kind === 'field') {
            if (!UPLOAD_FIELD_NAMES.has(part.fieldName)) {
              throw new BadRequestError('file.invalid-upload', `Unknown form field "${part.fieldName}".`, [
                { pointer: `/body/${part.fieldName}`, message: 'is not a known field' },
              ]);
            }
            if (part.isTruncated) {
              throw new BadRequestError('file.invalid-upload', `The form field "${part.fieldName}" is too long.`, [
                { pointer: `/body/${part.fieldName}`, message: 'is too long' },
              ]);
            }
            // As for messages: NUL is never text, and PostgreSQL cannot store it.
            if (part.value.includes('\u0000')) {
              throw new BadRequestError(
                'file.invalid-upload',
                `The form field "${part.fieldName}" contains a NUL character.`,
                [{ pointer: `/body/${part.fieldName}`, message: 'must not contain NUL characters' }],
              );
            }
            fields.set(part.fieldName, part.value);
            continue;
          }
          if (part.fieldName !== 'file' || received !== null) {
            part.stream.resume();
            throw new BadRequestError('file.invalid-upload', 'Send exactly one file, in the form field "file".', [
              { pointer: `/body/${part.fieldName}`, message: 'is not the file field' },
            ]);
          }
          clientFileName = part.fileName;
          received = await storage.receive(storageTagOf(area), part.stream, maxUploadBytes);
        }
        if (received === null) {
          throw new BadRequestError('file.invalid-upload', 'The form field "file" is required.', [
            { pointer: '/body/file', message: 'is required' },
          ]);
        }
        if (received.byteSize === 0) {
          throw new BadRequestError('file.invalid-upload', 'The file is empty.', [
            { pointer: '/body/file', message: 'is empty' },
          ]);
        }
        const ingesting = received;
        // ingestReceivedFile owns the temp file from here, success or failure.
        received = null;
        const stored = await ingestReceivedFile(ingestDeps, {
          areaTag: area.areaTag,
          received: ingesting,
          clientFileName,
          formDesc: fields.get('desc') ?? null,
          formHashTags: fields.get('hashTags') ?? null,
          uploadByUserId: uploaderId,
        });
        return presentRecord(stored, shouldStrip);
      } finally {
        if (received !== null) await storage.discard(received);
      }
    },

    downloadableFile(caller, fileId) {
      return visibleFile(caller, fileId, 'download');
    },

    async openContent(file, range, log) {
      const stream = await storage.open(file.storageTag, file.fileId, range);
      if (stream === null) {
        log.warn(
          { fileId: file.fileId, storageTag: file.storageTag, path: storage.pathOf(file.storageTag, file.fileId) },
          'file missing in storage',
        );
        throw new NotFoundError('file.content-missing', `The content of file ${file.fileId} is missing.`);
      }
      return stream;
    },

    async recordDownload(caller, file) {
      await store.recordDownload(file.fileId, caller.kind === 'user' ? caller.user.id : null, file.byteSize);
    },

    countFiles: () => store.countFiles(),
    checkStorageWritable: () => storage.checkWritable(),

    async importFile(areaTag, filePath, options = {}) {
      const area = areas.fileAreas.get(areaTag);
      if (!area) throw new NotFoundError('file.area-not-found', `No file area "${areaTag}".`);
      const stored = await importLocalFile(ingestDeps, {
        areaTag,
        storageTag: storageTagOf(area),
        filePath,
        desc: options.desc ?? null,
        maxBytes: maxUploadBytes,
      });
      return presentRecord(stored, false);
    },

    async removeFile(fileId) {
      const file = await store.deleteFile(fileId, async (trx, removed) => {
        const data = { fileId: removed.fileId, areaTag: removed.areaTag, fileName: removed.fileName };
        await events.append(trx, { type: 'file.deleted', areaTag: removed.areaTag, userId: null, data });
      });
      if (!file) throw new NotFoundError('file.not-found', `No file ${fileId}.`);
      await storage.remove(file.storageTag, file.fileId);
      return presentRecord(file, false);
    },
  };
}
