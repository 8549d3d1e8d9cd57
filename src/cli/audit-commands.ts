import type { Command } from 'commander';
import { type AuditView, CONSOLE } from '../admin/desk-service.js';
import { type CommonOptions, printResult, withBoard, withCommonOptions } from './cli-context.js';

/** Entries `baud audit` shows: the newest page of the log. */
const AUDIT_LIMIT = 100;

function describeEntry(entry: AuditView): string {
  return `${entry.at}\t${entry.actor ?? '(console)'}\t${entry.action}\t${entry.target}\t${entry.detail}`;
}

/** `baud audit`: the newest changes to accounts, who made them and when. */
export function registerAuditCommands(program: Command): void {
  withCommonOptions(
    program.command('audit').description(`the newest ${AUDIT_LIMIT} changes to accounts, newest first`),
  ).action(async (options: CommonOptions) => {
    const page = await withBoard(options, (board) =>
      board.desk.listAudit(CONSOLE, { limit: AUDIT_LIMIT, afterKey: null }),
    );
    printResult(options, page.items, page.items.length === 0 ? 'no changes yet' : page.items.map(describeEntry));
  });
}
