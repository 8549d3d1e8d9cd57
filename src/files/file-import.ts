import { createReadStream } from 'node:fs';
import type { Clock } from '../clock.js';
import type { Executor } from '../db/database.js';
import { readArchiveDescriptions } from './archive-descriptions.js';
import { detectArchiveType } from './archive-type.js';
import { describeUpload } from './file-descriptions.js';
import { sanitizeFileName } from './file-name.js';
import type { FileStorage, ReceivedFile } from './file-storage.js';
import type { FileStore, StoredFile } from './file-store.js';

export interface IngestDeps {
  readonly store: FileStore;
  readonly storage: FileStorage;
  readonly clock: Clock;
  /** Records the new file's event, last in its transaction. */
  readonly onStored: (trx: Executor, stored: StoredFile) => Promise<void>;
}

/** What is known about a received file besides its bytes. */
export interface IngestInput {
  readonly areaTag: string;
  readonly received: ReceivedFile;
  /** The name the client (or the operator's path) gave; sanitised here. */
  readonly clientFileName: string;
  readonly formDesc?: string | null;
  readonly formHashTags?: string | null;
  readonly uploadByUserId: number | null;
}

/**
 * Turns a received temp file into a file record — the one path shared by HTTP upload and
 * `baud file import`, so both apply the same extraction, duplicate rule and clash naming:
 * archive type by magic bytes, FILE_ID.DIZ & co. from zip archives, descriptions per
 * decisions.md, then the row, counters and the rename to the fileId in one transaction.
 *
 * Takes ownership of `received`: on any failure the temp file (or the already renamed
 * file) is removed and the error rethrown (`ConflictError` for a duplicate).
 */
export async function ingestReceivedFile(deps: IngestDeps, input: IngestInput): Promise<StoredFile> {
  const { received } = input;
  let committedFileId: number | null = null;
  try {
    const fileName = sanitizeFileName(input.clientFileName);
    const archiveType = detectArchiveType(received.head);
    // Only zip archives are opened; readArchiveDescriptions never throws and is bomb-safe.
    const archive =
      archiveType === 'application/zip'
        ? await readArchiveDescriptions(received.tempPath)
        : { diz: null, longText: null };
    const now = deps.clock.now();
    const description = describeUpload({
      fileName,
      formDesc: input.formDesc ?? null,
      formHashTags: input.formHashTags ?? null,
      diz: archive.diz,
      longText: archive.longText,
      now,
    });
    return await deps.store.insertFile(
      {
        areaTag: input.areaTag,
        storageTag: received.storageTag,
        fileName,
        desc: description.desc,
        descLong: description.descLong,
        byteSize: received.byteSize,
        sha256: received.sha256,
        uploadTimestamp: now.toISOString(),
        uploadByUserId: input.uploadByUserId,
        archiveType,
        hashTags: description.hashTags,
        estReleaseYear: description.estReleaseYear,
      },
      async (fileId) => {
        await deps.storage.commit(received, fileId);
        committedFileId = fileId;
      },
      deps.onStored,
    );
  } catch (error) {
    if (committedFileId !== null) await deps.storage.remove(received.storageTag, committedFileId).catch(() => {});
    else await deps.storage.discard(received);
    throw error;
  }
}

/**
 * Copies a file from the local file system into `storageTag` and records it in `areaTag`
 * (operator import: no ACS, no uploader). Same rules as an upload, limit included.
 */
export async function importLocalFile(
  deps: IngestDeps,
  input: {
    readonly areaTag: string;
    readonly storageTag: string;
    readonly filePath: string;
    readonly desc?: string | null;
    readonly maxBytes: number;
  },
): Promise<StoredFile> {
  const received = await deps.storage.receive(input.storageTag, createReadStream(input.filePath), input.maxBytes);
  return ingestReceivedFile(deps, {
    areaTag: input.areaTag,
    received,
    clientFileName: input.filePath,
    formDesc: input.desc ?? null,
    uploadByUserId: null,
  });
}
