import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * The installed `baud` command (bin/baud.js over the compiled dist/), which the test run
 * compiles once before any test starts (test/support/compile-once.ts). Spawning it costs a
 * third of what running src/ through tsx costs, and it is what operators run.
 */
export const BAUD_BIN = path.join(ROOT, 'bin/baud.js');

/** The program and arguments that run `baud <args>` in a child process. */
export function baudCommand(args: readonly string[]): [string, string[]] {
  return [process.execPath, [BAUD_BIN, ...args]];
}

/** The test process's environment without BAUD_* variables: only the configuration a test wrote counts. */
export function baudEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('BAUD_')));
}
