import type { Command } from 'commander';
import { type Board, openBoard } from '../board.js';
import { type Config, loadConfig } from '../config/load-config.js';

/** Options every command accepts. */
export interface CommonOptions {
  readonly config?: string;
  readonly json?: boolean;
}

/** Adds `--config` and `--json` to a command. */
export function withCommonOptions(command: Command): Command {
  return command
    .option('-c, --config <path>', 'configuration file (default: $BAUD_CONFIG or ./data/config.hjson)')
    .option('--json', 'print machine-readable JSON');
}

/** Loads the configuration the way every command does (flag, then environment, then default). */
export function loadCliConfig(options: CommonOptions): Config {
  return loadConfig({ ...(options.config ? { configPath: options.config } : {}), env: process.env });
}

/** Runs `work` with an open (migrated) board and closes it afterwards, whatever happens. */
export async function withBoard<T>(
  options: CommonOptions,
  work: (board: Board) => Promise<T>,
  boardOptions: { readonly forBulkWrites?: boolean } = {},
): Promise<T> {
  const board = await openBoard(loadCliConfig(options), boardOptions);
  try {
    return await work(board);
  } finally {
    await board.close();
  }
}

/** Prints `data` as one JSON document with `--json`, otherwise the human-readable lines. */
export function printResult(options: CommonOptions, data: unknown, human: string | readonly string[]): void {
  if (options.json) process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
  else process.stdout.write(`${[human].flat().join('\n')}\n`);
}

/** Progress for long operations goes to stderr, so `--json` output on stdout stays parseable. */
export function printProgress(text: string): void {
  process.stderr.write(`${text}\n`);
}

/** Reads the whole of standard input (for `--password-stdin`), without the final newline. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}
