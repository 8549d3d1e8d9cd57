import { statSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { buildReader, READER_OUTPUT_DIR } from '../reader/build-reader.js';
import { printResult } from './cli-context.js';

/** `baud reader build`: (re)builds the web reader's assets (`npm install` does it once). */
export function registerReaderCommands(program: Command): void {
  const reader = program.command('reader').description('the web reader served at /');
  reader
    .command('build')
    .description('build the web reader’s script, stylesheet and page into dist/web-reader')
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
      const manifest = await buildReader();
      const sizes = manifest.assets.map((name) => {
        const file = path.join(READER_OUTPUT_DIR, 'assets', name);
        return { name, bytes: statSync(file).size, gzipBytes: statSync(`${file}.gz`).size };
      });
      printResult(options, { outputDir: READER_OUTPUT_DIR, assets: sizes }, [
        `web reader built in ${READER_OUTPUT_DIR}`,
        ...sizes.map((asset) => `  ${asset.name}  ${kib(asset.bytes)} (${kib(asset.gzipBytes)} gzipped)`),
      ]);
    });
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
