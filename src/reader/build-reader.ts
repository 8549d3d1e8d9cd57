import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync, constants as zlibConstants } from 'node:zlib';

/** The package's root: this file is `src/reader/…` (tsx) or `dist/reader/…` (compiled) below it. */
const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where the reader's sources are, and where its built assets go. */
export const READER_SOURCE_DIR = path.join(PACKAGE_ROOT, 'web');
// Not dist/reader: tsc compiles src/reader there, and a build replaces its whole directory.
export const READER_OUTPUT_DIR = path.join(PACKAGE_ROOT, 'dist', 'web-reader');
export const MANIFEST_NAME = 'manifest.json';

/** What a build wrote: the page's hashed script and stylesheet, and every asset's name. */
export interface ReaderManifest {
  readonly builtAt: string;
  readonly script: string;
  readonly style: string;
  readonly assets: readonly string[];
}

/**
 * Builds the web reader: one minified ES module and one stylesheet with content-hashed names
 * (so they can be cached for a year), the page that loads them, and a gzip and a brotli copy of
 * each, so the server never compresses on the fly. Written to a fresh directory and renamed into
 * place, so a node starting meanwhile never sees half a build.
 */
export async function buildReader(outputDir = READER_OUTPUT_DIR): Promise<ReaderManifest> {
  const staging = `${outputDir}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  // Loaded only to build: a node that serves a built reader never needs esbuild in its memory.
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: { app: path.join(READER_SOURCE_DIR, 'src', 'main.tsx') },
    outdir: path.join(staging, 'assets'),
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    metafile: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
  const script = outputs.find((name) => name.endsWith('.js'));
  const style = outputs.find((name) => name.endsWith('.css'));
  if (!script || !style) throw new Error('the reader build wrote no script or no stylesheet');

  const icon = writeFavicon(path.join(staging, 'assets'));
  writeFileSync(path.join(staging, 'index.html'), readerPage({ script, style, icon }));
  const assets = [...outputs, icon];
  for (const name of [...assets.map((asset) => path.join('assets', asset)), 'index.html']) {
    precompress(path.join(staging, name));
  }
  const manifest: ReaderManifest = { builtAt: new Date().toISOString(), script, style, assets };
  writeFileSync(path.join(staging, MANIFEST_NAME), JSON.stringify(manifest, null, 2));
  rmSync(outputDir, { recursive: true, force: true });
  renameSync(staging, outputDir);
  return manifest;
}

/** The one HTML page: no inline script or style, so the Content-Security-Policy can forbid both. */
function readerPage({ script, style, icon }: { script: string; style: string; icon: string }): string {
  return `<!doctype html>
<html lang="en" data-theme="dark">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="dark light">
<title>baud</title>
<link rel="icon" href="/assets/${icon}" type="image/svg+xml">
<link rel="stylesheet" href="/assets/${style}">
<script type="module" src="/assets/${script}"></script>
</head>
<body>
<div id="app"><noscript>This board's reader needs JavaScript. The REST API is at /_baud/api/v1.</noscript></div>
</body>
</html>
`;
}

const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" fill="#000"/>' +
  '<rect x="3" y="3" width="6" height="10" fill="#55ff55"/></svg>';

/** A block cursor, the board's icon; named by its hash like every other asset. */
function writeFavicon(assetsDir: string): string {
  const name = `favicon-${createHash('sha256').update(FAVICON_SVG).digest('hex').slice(0, 8)}.svg`;
  writeFileSync(path.join(assetsDir, name), FAVICON_SVG);
  return name;
}

function precompress(file: string): void {
  const body = readFileSync(file);
  writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
  writeFileSync(
    `${file}.br`,
    brotliCompressSync(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: zlibConstants.BROTLI_MAX_QUALITY } }),
  );
}
