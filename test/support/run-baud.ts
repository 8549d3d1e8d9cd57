import { execFile } from 'node:child_process';
import { baudCommand } from './baud-command.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI as a separate process, as an operator would. */
export function runBaud(
  args: string[],
  options: { cwd: string; input?: string; env?: Record<string, string> },
): Promise<Run> {
  return new Promise((resolve) => {
    const [program, programArgs] = baudCommand(args);
    const child = execFile(
      program,
      programArgs,
      { cwd: options.cwd, env: { ...process.env, ...options.env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
    child.stdin?.end(options.input ?? '');
  });
}
