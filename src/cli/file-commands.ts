import type { Command } from 'commander';
import type { FileRecord } from '../files/file-store.js';
import { type CommonOptions, printProgress, printResult, withBoard, withCommonOptions } from './cli-context.js';

interface ImportOptions extends CommonOptions {
  readonly desc?: string;
}

interface ImportFailure {
  readonly path: string;
  readonly error: string;
}

function describeFile(file: FileRecord): string {
  return `${file.fileId}\t${file.areaTag}\t${file.fileName}\t${file.byteSize} bytes\t${file.desc.split('\n')[0]}`;
}

/** `baud file …`: operator tools for the file base (same rules as uploads, no ACS). */
export function registerFileCommands(program: Command): void {
  const file = program.command('file').description('manage the file base');

  withCommonOptions(
    file
      .command('import <areaTag> <path...>')
      .description(
        'add files from disk to a file area (same description extraction and duplicate rule as uploads); ' +
          'a duplicate or unreadable file is reported and skipped, and the exit code is then 1',
      )
      .option('--desc <text>', 'short description for every imported file (overrides FILE_ID.DIZ)'),
  ).action(async (areaTag: string, paths: string[], options: ImportOptions) => {
    const imported: FileRecord[] = [];
    const failed: ImportFailure[] = [];
    await withBoard(options, async (board) => {
      if (!board.areas.fileAreas.has(areaTag)) throw new Error(`no file area "${areaTag}"`);
      for (const [index, filePath] of paths.entries()) {
        const step = `[${index + 1}/${paths.length}]`;
        try {
          const record = await board.files.importFile(areaTag, filePath, { desc: options.desc ?? null });
          imported.push(record);
          if (paths.length > 1) printProgress(`${step} ${filePath} → fileId ${record.fileId}`);
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          failed.push({ path: filePath, error: message });
          printProgress(`${step} skipped ${filePath}: ${message}`);
        }
      }
    });
    printResult(options, { areaTag, imported, failed }, [
      ...imported.map((record) => `imported ${describeFile(record)}`),
      `${imported.length} imported, ${failed.length} skipped`,
    ]);
    if (failed.length > 0) process.exitCode = 1;
  });

  withCommonOptions(
    file.command('remove <fileId>').description('remove a file: its record, area counters and the bytes on disk'),
  ).action(async (fileIdText: string, options: CommonOptions) => {
    const fileId = Number(fileIdText);
    if (!Number.isSafeInteger(fileId) || fileId < 1) throw new Error(`"${fileIdText}" is not a fileId`);
    const removed = await withBoard(options, (board) => board.files.removeFile(fileId));
    printResult(options, removed, `removed ${describeFile(removed)}`);
  });
}
