import type { Command } from 'commander';
import { type AuditView, CONSOLE } from '../admin/desk-service.js';
import { BadRequestError } from '../errors.js';
import { type CommonOptions, printProgress, printResult, withBoard, withCommonOptions } from './cli-context.js';

/** Entries `baud audit` shows unless told otherwise: the newest page of the log. */
const AUDIT_LIMIT = 100;
/** The most one page may ask for; `--all` reads the whole log in pages this size. */
const MAX_AUDIT_LIMIT = 1000;

interface AuditOptions extends CommonOptions {
  readonly limit?: string;
  readonly before?: string;
  readonly all?: boolean;
}

function describeEntry(entry: AuditView): string {
  return `${entry.id}\t${entry.at}\t${entry.actor ?? '(console)'}\t${entry.action}\t${entry.target}\t${entry.detail}`;
}

function positiveInteger(text: string, option: string): number {
  if (!/^[1-9]\d{0,14}$/.test(text)) {
    throw new BadRequestError('cli.invalid-argument', `${option} takes a positive integer, not "${text}"`);
  }
  return Number(text);
}

/** The page size: `--limit`, else the default page, or for `--all` the largest. */
function limitFrom(options: AuditOptions): number {
  if (options.limit === undefined) return options.all ? MAX_AUDIT_LIMIT : AUDIT_LIMIT;
  const limit = positiveInteger(options.limit, '--limit');
  if (limit > MAX_AUDIT_LIMIT) {
    throw new BadRequestError(
      'cli.invalid-argument',
      `--limit is at most ${MAX_AUDIT_LIMIT}; use --all for everything`,
    );
  }
  return limit;
}

/**
 * `baud audit`: the changes to accounts, who made them and when, newest first. One page
 * (`--limit`, continued with `--before <id>` of its last entry), or with `--all` every entry,
 * read in pages of `--limit` and printed as each is read, so a log of any length goes out in
 * bounded memory.
 */
export function registerAuditCommands(program: Command): void {
  withCommonOptions(
    program
      .command('audit')
      .description(`changes to accounts, newest first (the newest ${AUDIT_LIMIT} unless told otherwise)`)
      .option('--limit <n>', `how many entries (1-${MAX_AUDIT_LIMIT}, default ${AUDIT_LIMIT})`)
      .option('--before <id>', 'only entries older than this id (the first column; where the last page ended)')
      .option(
        '--all',
        `every entry (older than --before, if given), read in pages of --limit (default ${MAX_AUDIT_LIMIT})`,
      ),
  ).action(async (options: AuditOptions) => {
    const limit = limitFrom(options);
    const before = options.before === undefined ? null : positiveInteger(options.before, '--before');
    await withBoard(options, async (board) => {
      if (!options.all) {
        const page = await board.desk.listAudit(CONSOLE, { limit, afterKey: before });
        printResult(options, page.items, page.items.length === 0 ? 'no changes' : page.items.map(describeEntry));
        if (page.nextKey !== null) printProgress(`more: baud audit --before ${page.nextKey}`);
        return;
      }
      // A JSON array written as it is read: still one document for --json, however long the log.
      let afterKey = before;
      let printed = 0;
      if (options.json) process.stdout.write('[');
      do {
        const page = await board.desk.listAudit(CONSOLE, { limit, afterKey });
        for (const entry of page.items) {
          if (options.json) process.stdout.write(`${printed === 0 ? '\n' : ',\n'}  ${JSON.stringify(entry)}`);
          else process.stdout.write(`${describeEntry(entry)}\n`);
          printed += 1;
        }
        afterKey = page.nextKey;
      } while (afterKey !== null);
      if (options.json) process.stdout.write(printed === 0 ? ']\n' : '\n]\n');
      else if (printed === 0) process.stdout.write('no changes\n');
    });
  });
}
