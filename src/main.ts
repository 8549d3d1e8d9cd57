#!/usr/bin/env node
import { CommanderError } from 'commander';
import { createProgram } from './cli/program.js';
import { BaudError } from './errors.js';

/** Turns any failure into one clear line on stderr and exit code 1 (commander's own usage errors keep theirs). */
function reportFailure(error: unknown): number {
  if (error instanceof CommanderError) return error.exitCode;
  const message = error instanceof BaudError || error instanceof Error ? error.message : String(error);
  process.stderr.write(`baud: ${message.split('\n')[0]}\n`);
  return 1;
}

try {
  await createProgram().parseAsync(process.argv);
} catch (error) {
  process.exitCode = reportFailure(error);
}
