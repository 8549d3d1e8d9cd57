import { createHash, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import type { Clock } from '../clock.js';
import { BaudError, PayloadTooLargeError } from '../errors.js';
import { ARCHIVE_SNIFF_BYTES } from './archive-type.js';
import { pipeIntoNewFile } from './new-file.js';

/** An upload that reached disk as a temp file and has not been committed (or discarded) yet. */
export interface ReceivedFile {
  readonly storageTag: string;
  /** Absolute path of the temp file (`.upload-<uuid>.part` in the storage directory). */
  readonly tempPath: string;
  readonly byteSize: number;
  /** Lower-case hex. */
  readonly sha256: string;
  /** The first {@link ARCHIVE_SNIFF_BYTES} bytes (fewer for a shorter file), for archive detection. */
  readonly head: Buffer;
}

/** A byte range, both ends inclusive (as in HTTP `Range`). */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/**
 * Where file bytes live: one directory per storage tag (`fileBase.storageTags`), every file
 * named by its fileId. Small on purpose (receive, commit, open, remove) so an object-store
 * backend could implement the same interface.
 */
export interface FileStorage {
  /** Creates missing storage directories. */
  ensureDirectories(): Promise<void>;
  /** Removes temp files a crashed process left behind; returns how many. */
  removeLeftoverTemps(): Promise<number>;
  /** Throws, naming the storage tag, when a storage directory cannot take new files. */
  checkWritable(): Promise<void>;
  /**
   * Streams `source` into a temp file of `storageTag`, hashing as it goes, with back-pressure
   * (memory does not grow with the file). More than `maxBytes` bytes → `PayloadTooLargeError`.
   * On any failure (limit, client abort, disk error) the temp file is removed and the error rethrown.
   */
  receive(storageTag: string, source: Readable, maxBytes: number): Promise<ReceivedFile>;
  /** Atomically renames the temp file to its final name, the fileId. */
  commit(received: ReceivedFile, fileId: number): Promise<void>;
  /** Removes an uncommitted temp file; never throws. */
  discard(received: ReceivedFile): Promise<void>;
  /** A read stream over the file (or `range` of it); null when the file is not on disk. */
  open(storageTag: string, fileId: number, range?: ByteRange): Promise<Readable | null>;
  /** Removes a stored file; a file already gone is not an error. */
  remove(storageTag: string, fileId: number): Promise<void>;
  /** Absolute path of a stored file (the CLI and archive reading need a path). */
  pathOf(storageTag: string, fileId: number): string;
}

/** A storage directory cannot take new files; the message names the tag and the errno, never the path. */
export class StorageUnwritableError extends BaudError<'storage.unwritable'> {
  override readonly name = 'StorageUnwritableError';
  constructor(storageTag: string, errno: string) {
    super('storage.unwritable', `storage "${storageTag}" is not writable (${errno})`);
  }
}

/**
 * Uploads in progress live in this subdirectory of each storage directory: the same file
 * system (so the final rename is atomic), and the start-up sweep reads only it, never the
 * directory holding every stored file.
 */
export const INCOMING_DIRECTORY = '.incoming';
const TEMP_PREFIX = '.upload-';
const TEMP_SUFFIX = '.part';

function isTempName(name: string): boolean {
  return name.startsWith(TEMP_PREFIX) && name.endsWith(TEMP_SUFFIX);
}

/** Counts and hashes bytes on their way to disk; fails the pipeline once past `maxBytes`. */
class HashingLimiter extends Transform {
  readonly hash = createHash('sha256');
  byteSize = 0;
  private readonly headChunks: Buffer[] = [];
  private headLength = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  get head(): Buffer {
    return Buffer.concat(this.headChunks, this.headLength);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.byteSize += chunk.length;
    if (this.byteSize > this.maxBytes) {
      callback(
        new PayloadTooLargeError('file.too-large', `The file is larger than the limit of ${this.maxBytes} bytes.`),
      );
      return;
    }
    if (this.headLength < ARCHIVE_SNIFF_BYTES) {
      const part = chunk.subarray(0, ARCHIVE_SNIFF_BYTES - this.headLength);
      // Copy: the chunk's memory may belong to a larger pooled buffer.
      this.headChunks.push(Buffer.from(part));
      this.headLength += part.length;
    }
    this.hash.update(chunk);
    callback(null, chunk);
  }
}

/**
 * A storage whose directories are `directories[storageTag]`. `tempGraceMs`: temp files younger
 * than this are left alone by `removeLeftoverTemps`, because on a shared mount another node
 * may be receiving them right now.
 */
export function createFileStorage(
  directories: Readonly<Record<string, string>>,
  options: { clock: Clock; tempGraceMs: number },
): FileStorage {
  const directoryOf = (storageTag: string): string => {
    const directory = directories[storageTag];
    if (directory === undefined) throw new Error(`unknown storage tag "${storageTag}"`);
    return directory;
  };
  const incomingOf = (storageTag: string): string => path.join(directoryOf(storageTag), INCOMING_DIRECTORY);
  const pathOf = (storageTag: string, fileId: number): string => {
    if (!Number.isSafeInteger(fileId) || fileId < 1) throw new Error(`invalid fileId ${fileId}`);
    return path.join(directoryOf(storageTag), String(fileId));
  };

  return {
    pathOf,

    async ensureDirectories() {
      for (const directory of Object.values(directories)) {
        await mkdir(path.join(directory, INCOMING_DIRECTORY), { recursive: true });
      }
    },

    async checkWritable() {
      for (const storageTag of Object.keys(directories)) {
        // Uploads are written here first; a read-only mount fails access() with EROFS.
        await access(incomingOf(storageTag), constants.W_OK).catch((error: NodeJS.ErrnoException) => {
          throw new StorageUnwritableError(storageTag, error.code ?? 'unknown error');
        });
      }
    },

    async removeLeftoverTemps() {
      const oldest = options.clock.now().getTime() - options.tempGraceMs;
      let removed = 0;
      for (const storageTag of Object.keys(directories)) {
        const directory = incomingOf(storageTag);
        for (const name of await readdir(directory).catch(() => [])) {
          if (!isTempName(name)) continue;
          const tempPath = path.join(directory, name);
          const info = await stat(tempPath).catch(() => null);
          if (info === null || info.mtimeMs > oldest) continue;
          await rm(tempPath, { force: true });
          removed += 1;
        }
      }
      return removed;
    },

    async receive(storageTag, source, maxBytes) {
      // No await before the pipeline: `source` may already be flowing (or failing) and needs
      // its consumer attached at once. The incoming directory exists since start-up.
      const tempPath = path.join(incomingOf(storageTag), `${TEMP_PREFIX}${randomUUID()}${TEMP_SUFFIX}`);
      const limiter = new HashingLimiter(maxBytes);
      await pipeIntoNewFile(tempPath, source, limiter);
      return {
        storageTag,
        tempPath,
        byteSize: limiter.byteSize,
        sha256: limiter.hash.digest('hex'),
        head: limiter.head,
      };
    },

    async commit(received, fileId) {
      await rename(received.tempPath, pathOf(received.storageTag, fileId));
    },

    async discard(received) {
      await rm(received.tempPath, { force: true }).catch(() => {});
    },

    async open(storageTag, fileId, range) {
      let handle: Awaited<ReturnType<typeof open>>;
      try {
        handle = await open(pathOf(storageTag, fileId), 'r');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
      // The stream owns the handle from here and closes it on end, error or destroy.
      return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
    },

    async remove(storageTag, fileId) {
      await rm(pathOf(storageTag, fileId), { force: true });
    },
  };
}
