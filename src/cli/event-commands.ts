import type { Command } from 'commander';
import { BadRequestError } from '../errors.js';
import { commaList } from '../events/event-filter.js';
import { type BoardEvent, EVENT_TYPES } from '../events/event-log.js';
import { type CommonOptions, withBoard, withCommonOptions } from './cli-context.js';
import { parseId } from './webhook-commands.js';

/** How often `baud events tail` reads the log. */
const TAIL_INTERVAL_MS = 500;

function describeEvent(event: BoardEvent): string {
  const { data } = event;
  const what = data.subject ?? data.fileName ?? data.username ?? data.lastReadMessageId ?? '';
  return `${event.id}\t${event.createdAt}\t${event.type}\t${event.areaTag ?? '-'}\t${String(what)}`;
}

/** `baud events tail`: follows the event log as it is written, whatever its ACS. */
export function registerEventCommands(program: Command): void {
  const events = program.command('events').description('look at the event log');
  withCommonOptions(
    events
      .command('tail')
      .description('print events as they are logged (Ctrl-C stops); one JSON object per line with --json')
      .option('--types <types>', `comma-separated: ${EVENT_TYPES.join(', ')}`)
      .option('--from <id>', 'start after this event id (default: the newest now)')
      .option('--count <n>', 'stop after this many events'),
  ).action(async (options: CommonOptions & { types?: string; from?: string; count?: string }) => {
    const types = commaList(options.types);
    const unknown = types.filter((type) => !(EVENT_TYPES as readonly string[]).includes(type));
    if (unknown.length > 0)
      throw new BadRequestError(
        'event.unknown-type',
        `unknown event types: ${unknown.join(', ')} (known: ${EVENT_TYPES.join(', ')})`,
      );
    const count = options.count === undefined ? Number.POSITIVE_INFINITY : parseId(options.count, 'count');
    await withBoard(options, async (board) => {
      let after = options.from === undefined ? await board.events.latestId() : Number(options.from);
      if (!Number.isSafeInteger(after) || after < 0)
        throw new BadRequestError('cli.invalid-argument', '--from must be an event id');
      let printed = 0;
      let isStopped = false;
      const stop = () => {
        isStopped = true;
      };
      process.once('SIGINT', stop);
      try {
        while (!isStopped && printed < count) {
          const batch = await board.events.readAfter(after);
          for (const event of batch) {
            after = event.id;
            if (types.length > 0 && !types.includes(event.type)) continue;
            process.stdout.write(`${options.json ? JSON.stringify(event) : describeEvent(event)}\n`);
            printed += 1;
            if (printed >= count) break;
          }
          if (batch.length === 0) await new Promise((resolve) => setTimeout(resolve, TAIL_INTERVAL_MS));
        }
      } finally {
        process.off('SIGINT', stop);
      }
    });
  });
}
