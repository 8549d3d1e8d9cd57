import { CommanderError } from 'commander';
import { BaudError } from '../errors.js';
import { createProgram } from './program.js';

/** Turns any failure into one clear line on stderr and exit code 1 (commander's own usage errors keep theirs). */
function reportFailure(error: unknown): number {
  if (error instanceof CommanderError) return error.exitCode;
  const message = error instanceof BaudError || error instanceof Error ? error.message : String(error);
  process.stderr.write(`baud: ${message.split('\n')[0]}\n`);
  return 1;
}

/**
 * Runs the `baud` command line on `argv` (shaped as `process.argv`: node, script, arguments),
 * writing to the process's standard streams and setting `process.exitCode` on failure. The
 * `baud` command runs it once; the tests run it many times in one process, since a new process
 * spends a second or two of CPU loading its modules.
 */
export async function runCli(argv: readonly string[]): Promise<void> {
  try {
    await createProgram().parseAsync([...argv]);
  } catch (error) {
    process.exitCode = reportFailure(error);
  }
}
