import { execFile } from 'node:child_process';
import { Readable } from 'node:stream';
import { runCli } from '../../src/cli/run-cli.js';
import { baudCommand, baudEnvironment } from './baud-command.js';

export interface BaudRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface BaudRunOptions {
  readonly cwd: string;
  /** Standard input (`--password-stdin`); empty when not given. */
  readonly input?: string;
  /** Set over the test process's environment, whose BAUD_* variables the run does not see. */
  readonly env?: Record<string, string>;
}

/**
 * Runs `baud <args>` inside the test's process: the command line bin/baud.js runs (`runCli`),
 * with its output and exit code, working directory, input and environment its own for the run.
 * A separate process spent 1–2 s of CPU loading ~800 modules before doing anything, most of the
 * time of the CLI tests. Runs must not overlap: each takes the process's standard streams.
 */
export async function runBaud(args: readonly string[], options: BaudRunOptions): Promise<BaudRun> {
  const output = { stdout: '', stderr: '' };
  const { stdout, stderr } = process;
  const saved = {
    stdoutWrite: stdout.write,
    stderrWrite: stderr.write,
    stdin: Object.getOwnPropertyDescriptor(process, 'stdin'),
    exitCode: process.exitCode,
    cwd: process.cwd(),
    env: { ...process.env },
  };
  replaceEnvironment({ ...baudEnvironment(), ...options.env });
  stdout.write = capture((text) => {
    output.stdout += text;
  });
  stderr.write = capture((text) => {
    output.stderr += text;
  });
  Object.defineProperty(process, 'stdin', {
    value: Readable.from([Buffer.from(options.input ?? '')]),
    configurable: true,
  });
  process.exitCode = undefined;
  process.chdir(options.cwd);
  try {
    await runCli([process.execPath, 'baud', ...args]);
    return { code: Number(process.exitCode ?? 0), ...output };
  } finally {
    stdout.write = saved.stdoutWrite;
    stderr.write = saved.stderrWrite;
    if (saved.stdin) Object.defineProperty(process, 'stdin', saved.stdin);
    replaceEnvironment(saved.env);
    process.exitCode = saved.exitCode;
    process.chdir(saved.cwd);
  }
}

/** Makes `process.env` hold exactly `values` (it must stay the same object: modules hold it). */
function replaceEnvironment(values: NodeJS.ProcessEnv): void {
  for (const name of Object.keys(process.env)) if (!(name in values)) delete process.env[name];
  Object.assign(process.env, values);
}

/** A `write` for a standard stream that hands the text to `take` (and calls the callback, as a stream would). */
function capture(take: (text: string) => void): NodeJS.WriteStream['write'] {
  return ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    take(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const callback = rest.find((argument) => typeof argument === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  }) as NodeJS.WriteStream['write'];
}

/**
 * Runs the `baud` command as a separate process, as an operator does: for the tests that prove
 * the command itself (bin/baud.js over the compiled dist/), its exit code and its streams.
 */
export function runBaudProcess(args: readonly string[], options: BaudRunOptions): Promise<BaudRun> {
  return new Promise((resolve) => {
    const [program, programArgs] = baudCommand(args);
    const child = execFile(
      program,
      programArgs,
      { cwd: options.cwd, env: { ...baudEnvironment(), ...options.env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
    child.stdin?.end(options.input ?? '');
  });
}
