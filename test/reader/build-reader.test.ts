import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { READER_OUTPUT_DIR } from '../../src/reader/build-reader.js';

const REPO = path.resolve(import.meta.dirname, '../..');

/**
 * The reader's build replaces its whole output directory. Under dist/ it must never be a
 * directory tsc writes compiled modules into (dist/<dir of src>): it once was dist/reader, and
 * `npm install` then deleted the compiled src/reader, so the installed `baud` command could not start.
 */
describe('where the web reader is built', () => {
  it('is a directory of its own under dist/, apart from every compiled source directory', () => {
    const buildConfig = JSON.parse(readFileSync(path.join(REPO, 'tsconfig.build.json'), 'utf8')) as {
      compilerOptions: { outDir: string; rootDir: string };
    };
    const outDir = path.resolve(REPO, buildConfig.compilerOptions.outDir);
    const rootDir = path.resolve(REPO, buildConfig.compilerOptions.rootDir);
    expect(path.dirname(READER_OUTPUT_DIR)).toBe(outDir);
    expect(existsSync(path.join(rootDir, path.basename(READER_OUTPUT_DIR)))).toBe(false);
    expect(existsSync(path.join(rootDir, `${path.basename(READER_OUTPUT_DIR)}.ts`))).toBe(false);
  });
});
