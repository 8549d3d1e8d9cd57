import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  buildReader,
  MANIFEST_NAME,
  READER_OUTPUT_DIR,
  READER_SOURCE_DIR,
  type ReaderManifest,
} from './build-reader.js';

/** One built file in its three encodings. */
export interface ReaderAsset {
  readonly contentType: string;
  readonly identity: Buffer;
  readonly gzip: Buffer;
  readonly brotli: Buffer;
}

/** The reader's page and its hashed assets, held in memory (about 100 KB in all). */
export interface ReaderAssets {
  readonly page: ReaderAsset;
  readonly assets: ReadonlyMap<string, ReaderAsset>;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

function readAsset(file: string): ReaderAsset {
  return {
    contentType: CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
    identity: readFileSync(file),
    gzip: readFileSync(`${file}.gz`),
    brotli: readFileSync(`${file}.br`),
  };
}

function readManifest(outputDir: string): ReaderManifest | null {
  const file = path.join(outputDir, MANIFEST_NAME);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as ReaderManifest) : null;
}

/** The newest modification time of the reader's sources (a checkout has them; a package may not). */
function newestSourceChange(dir: string): number {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * The built reader, building it first when there is no build yet (a checkout that skipped
 * `npm install`'s build) or its sources changed since (development). Loaded once per process.
 */
export async function loadReaderAssets(outputDir = READER_OUTPUT_DIR): Promise<ReaderAssets> {
  let manifest = readManifest(outputDir);
  const isStale = manifest !== null && newestSourceChange(READER_SOURCE_DIR) > Date.parse(manifest.builtAt);
  if (manifest === null || isStale) manifest = await buildReader(outputDir);
  for (let attempt = 1; ; attempt++) {
    try {
      return readBuild(outputDir, manifest);
    } catch (error) {
      // Another process starting at the same moment replaced the build between our reads:
      // read the build that is there now.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
      manifest = readManifest(outputDir) ?? manifest;
    }
  }
}

function readBuild(outputDir: string, manifest: ReaderManifest): ReaderAssets {
  const assets = new Map(
    manifest.assets.map((name) => [name, readAsset(path.join(outputDir, 'assets', name))] as const),
  );
  return { page: readAsset(path.join(outputDir, 'index.html')), assets };
}

let loaded: Promise<ReaderAssets> | null = null;

/** {@link loadReaderAssets} once per process: every app this process builds serves the same files. */
export function readerAssets(): Promise<ReaderAssets> {
  loaded ??= loadReaderAssets().catch((error: unknown) => {
    loaded = null;
    throw error;
  });
  return loaded;
}
