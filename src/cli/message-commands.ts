import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { importMessages } from '../messages/message-import.js';
import { SEARCH_ORDERS } from '../search/search-query.js';
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
    const result = await withBoard(
      options,
      (board) => {
        const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
        return importMessages(board, areaTag, lines, (imported) => printProgress(`imported ${imported} messages …`));
      },
      { forBulkWrites: true },
    );
    printResult(
      options,
      { areaTag, imported: result.imported },
      `imported ${result.imported} messages into ${areaTag}`,
    );
  });

  withCommonOptions(
    message
      .command('search <query>')
      .description(
        'search every configured message area, whatever its ACS (words, "a phrase", prefix*, -excluded, a OR b); ' +
          'newest first unless --sort relevance; put a query that starts with "-" after --',
      )
      .option('--area <glob>', 'only areas whose tag matches this glob (pub_*)')
      .option('--conf <confTag>', 'only this conference')
      .option('--from <username>', 'only messages from this author')
      .option('--sort <order>', 'newest or relevance', 'newest')
      .option('--limit <n>', 'at most this many results (1..100)', '25'),
  ).action(
    async (
      query: string,
      options: CommonOptions & { area?: string; conf?: string; from?: string; sort: string; limit: string },
    ) => {
      const limit = Number(options.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new Error('--limit must be 1..100');
      const sort = SEARCH_ORDERS.find((order) => order === options.sort);
      if (sort === undefined) throw new Error(`--sort must be one of: ${SEARCH_ORDERS.join(', ')}`);
      const page = await withBoard(options, (board) =>
        board.messages.searchAsOperator(
          { q: query, areaTag: options.area, confTag: options.conf, from: options.from, sort },
          { limit, afterKey: null },
        ),
      );
      printResult(
        options,
        page.items,
        page.items.length === 0
          ? 'no messages found'
          : page.items.flatMap((found) => [
              `#${found.messageId} ${found.areaTag} ${found.timestamp} ${found.fromUserName} → ${found.toUserName}: ${found.subject}`,
              `    ${found.snippet}`,
            ]),
      );
    },
  );

  withCommonOptions(
    message.command('reindex').description('rebuild the full-text search index from the live messages'),
  ).action(async (options: CommonOptions) => {
    const started = performance.now();
    const indexed = await withBoard(options, (board) =>
      board.messages.rebuildSearchIndex((done, total) => {
        const seconds = (performance.now() - started) / 1000;
        printProgress(
          `indexed ${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} messages (${Math.round(done / seconds).toLocaleString('en-US')}/s)`,
        );
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    printResult(
      options,
      { indexed, seconds },
      `reindexed ${indexed.toLocaleString('en-US')} messages in ${seconds.toFixed(1)} s`,
    );
  });
}
