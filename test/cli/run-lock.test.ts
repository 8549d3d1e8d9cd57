import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withRunLock } from '../../src/cli/run-lock.js';

describe('run lock of long commands', () => {
  let dir: string;
  let lock: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-lock-'));
    lock = path.join(dir, '.lock');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('holds the lock with its process id while the work runs, and removes it after, even on failure', async () => {
    const seen = await withRunLock(lock, 'an import', async () => readFileSync(lock, 'utf8'));
    expect(seen).toBe(String(process.pid));
    expect(existsSync(lock)).toBe(false);
    await expect(
      withRunLock(lock, 'an import', async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(existsSync(lock)).toBe(false);
  });

  it('refuses while a live process holds the lock, saying which', async () => {
    writeFileSync(lock, String(process.ppid));
    await expect(withRunLock(lock, 'an import', async () => 1)).rejects.toThrow(
      `an import is already running on this board (process ${process.ppid}); wait for it to end`,
    );
    expect(readFileSync(lock, 'utf8')).toBe(String(process.ppid));
  });

  it('takes over a lock left by a process that died', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    writeFileSync(lock, dead);
    await expect(withRunLock(lock, 'an import', async () => 'done')).resolves.toBe('done');
  });
});
