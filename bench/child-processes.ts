import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import type { Cleanup } from './cleanup.js';

/**
 * Ends `child`: `signal` first, SIGKILL if it is still there after `graceMs`. Resolves once
 * it has exited (at once if it already had).
 */
export async function stopChild(child: ChildProcess, graceMs = 5_000, signal: NodeJS.Signals = 'SIGTERM') {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Forks one of the benchmark's own `*.process.ts` helpers (load driver, bare servers) as a
 * separate Node process with an IPC channel, registered with `cleanup`. The helpers exit by
 * themselves when the channel closes, so even a killed orchestrator leaves none behind.
 */
export function forkBenchProcess(file: string, cleanup: Cleanup): { child: ChildProcess; stop: () => Promise<void> } {
  const child = fork(path.join(import.meta.dirname, file), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const stop = cleanup.defer(`stop ${file} (pid ${child.pid})`, () => stopChild(child));
  return { child, stop };
}

/** Waits for the first IPC message of `child` that `accept` takes, failing if the child exits first. */
export function nextMessage<T>(child: ChildProcess, accept: (message: unknown) => T | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown) => {
      const taken = accept(message);
      if (taken === undefined) return;
      off();
      resolve(taken);
    };
    const onExit = (code: number | null, signal: string | null) => {
      off();
      reject(new Error(`helper process ${child.pid} exited (${signal ?? code}) before answering`));
    };
    const off = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}
