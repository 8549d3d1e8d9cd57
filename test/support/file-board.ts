import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { Dialect } from '../../src/db/database.js';
import { INCOMING_DIRECTORY } from '../../src/files/file-storage.js';
import { buildMultipart, type FormPart } from './multipart.js';
import { createTestBoard, deepMerge, type TestBoard, type TestBoardOptions } from './test-board.js';

export const API = '/_baud/api/v1';

/**
 * File areas for the file-base tests:
 * - `public_files`: on the anonymous allowlist; any user may upload.
 * - `members`: file-area defaults (read users, upload sysops).
 * - `nodl`: users may browse but only sysops download.
 * - `sysop_only`: only sysops see it at all.
 */
export const FILE_BASE_CONFIG = {
  fileBase: {
    storageTags: { main: 'files/main', other: 'files/other' },
    areas: {
      public_files: {
        name: 'Public files',
        desc: '\u001b[1;33mFree\u001b[0m stuff',
        storageTags: ['main'],
        acs: { write: 'GM[users]' },
      },
      members: { name: 'Members', desc: 'For members', storageTags: ['main', 'other'] },
      nodl: { name: 'No downloads', storageTags: ['other'], acs: { download: 'GM[sysops]' } },
      sysop_only: { name: 'Sysop only', storageTags: ['main'], acs: { read: 'GM[sysops]' } },
    },
  },
  contentServers: { web: { restApi: { files: { publicAccess: { include: ['public_*'] } } } } },
};

export async function createFileTestBoard(
  dialect: Dialect,
  options: TestBoardOptions & { fileBase?: Record<string, unknown> } = {},
): Promise<TestBoard> {
  const config = deepMerge(deepMerge(FILE_BASE_CONFIG, { fileBase: options.fileBase ?? {} }), options.config ?? {});
  return createTestBoard(dialect, { ...options, config });
}

export function storageDir(board: TestBoard, storageTag: string): string {
  const directory = board.config.fileBase.storageTags[storageTag];
  if (directory === undefined) throw new Error(`no storage tag ${storageTag}`);
  return directory;
}

/** Every file in a storage directory: committed files and uploads in progress alike. */
export function storageEntries(board: TestBoard, storageTag = 'main'): string[] {
  const directory = storageDir(board, storageTag);
  const stored = readdirSync(directory).filter((name) => name !== INCOMING_DIRECTORY);
  return [...stored, ...readdirSync(path.join(directory, INCOMING_DIRECTORY))].sort();
}

export function storedPath(board: TestBoard, storageTag: string, fileId: number): string {
  return path.join(storageDir(board, storageTag), String(fileId));
}

/** POSTs a multipart upload through `app.inject`. */
export function upload(
  board: TestBoard,
  areaTag: string,
  parts: readonly FormPart[],
  headers: Record<string, string> = {},
) {
  const { body, contentType } = buildMultipart(parts);
  return board.app.inject({
    method: 'POST',
    url: `${API}/files/areas/${areaTag}`,
    headers: { 'content-type': contentType, ...headers },
    payload: body,
  });
}

/** Upload parts for one file with an optional description. */
export function filePart(fileName: string, content: string | Uint8Array, extra: FormPart[] = []): FormPart[] {
  return [{ name: 'file', fileName, value: content }, ...extra];
}
