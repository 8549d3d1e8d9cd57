import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { ConfigError } from '../config/config-error.js';

/** Whether a process with this id runs on this machine. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Holds a lock file (holding our process id) while `work` runs, so two runs of one long
 * command on one board cannot interleave. A lock left by a process that died (killed, crashed)
 * is taken over: only a live holder refuses.
 */
export async function withRunLock<T>(lockPath: string, what: string, work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
      const holder = Number(readFileSync(lockPath, 'utf8'));
      if (Number.isSafeInteger(holder) && holder > 0 && isRunning(holder)) {
        throw new ConfigError(
          'cli.already-running',
          `${what} is already running on this board (process ${holder}); wait for it to end`,
        );
      }
      rmSync(lockPath, { force: true });
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lockPath, { force: true });
  }
}
