import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { importMessages } from '../messages/message-import.js';
import { type CommonOptions, printProgress, printResult, withBoard, withCommonOptions } from './cli-context.js';

/** `baud message …`: operator tools for the message base. */
export function registerMessageCommands(program: Command): void {
  const message = program.command('message').description('manage the message base');

  withCommonOptions(
    message
      .command('import <areaTag> <file>')
      .description(
        'load messages from a JSON Lines file (one {from, to, subject, body, timestamp, replyTo?, ftn?} per line; ' +
          'replyTo is the line number of an earlier line) in batches; a bad line stops the import with its number',
      ),
  ).action(async (areaTag: string, file: string, options: CommonOptions) => {
    // Fail on a missing file before opening the board; a stream error mid-import still surfaces.
    await access(file).catch(() => {
      throw new Error(`cannot read ${file}`);
    });
    const result = await withBoard(options, (board) => {
      const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
      return importMessages(board, areaTag, lines, (imported) => printProgress(`imported ${imported} messages …`));
    });
    printResult(
      options,
      { areaTag, imported: result.imported },
      `imported ${result.imported} messages into ${areaTag}`,
    );
  });
}
