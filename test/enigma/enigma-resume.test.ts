import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baudCommand } from '../support/baud-command.js';
import { buildSyntheticEnigmaBoard } from '../support/enigma-synthetic.js';
import { runBaud } from '../support/run-baud.js';

/**
 * Enough that the import is still running when the first batch (5,000) is in and it is killed:
 * about a second of work at the ~48,000 messages/s of docs/PERFORMANCE.md, against the few
 * milliseconds between seeing that batch and the kill.
 */
const MESSAGES = 50_000;

/** Issue 21: an import killed halfway finishes when run again, with nothing twice and nothing lost. */
describe('baud import enigma after a crash', () => {
  let dir: string;
  let source: string;
  let configPath: string;
  let databasePath: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-enigma-resume-'));
    source = path.join(dir, 'enigma');
    buildSyntheticEnigmaBoard(source, MESSAGES);
    configPath = path.join(dir, 'board', 'config.hjson');
    databasePath = path.join(dir, 'board', 'baud.db');
    mkdirSync(path.dirname(configPath), { recursive: true });
    writeFileSync(configPath, `${JSON.stringify({ logging: { level: 'silent' } })}\n`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Messages the board holds, read beside the running import (WAL lets a reader in). */
  function storedMessages(): number {
    try {
      const db = new Database(databasePath, { readonly: true, fileMustExist: true });
      try {
        return (db.prepare('SELECT COUNT(*) AS n FROM messages').get() as { n: number }).n;
      } finally {
        db.close();
      }
    } catch {
      return 0;
    }
  }

  it('finishes an import killed with SIGKILL in the middle of the messages', async () => {
    const [program, programArgs] = baudCommand(['import', 'enigma', source, '--config', configPath, '--json']);
    const child = spawn(program, programArgs, {
      stdio: 'ignore',
      detached: true,
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await expect.poll(storedMessages, { interval: 20, timeout: 60_000 }).toBeGreaterThan(0);
    process.kill(-(child.pid ?? 0), 'SIGKILL');
    await exited;
    const afterKill = storedMessages();
    expect(afterKill).toBeGreaterThan(0);
    expect(afterKill, 'the import must still be running when it is killed').toBeLessThan(MESSAGES);

    const resumed = await runBaud(['import', 'enigma', source, '--config', configPath, '--json'], { cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    const summary = JSON.parse(resumed.stdout) as {
      counts: Record<string, { found: number; imported: number; alreadyThere: number }>;
    };
    expect(summary.counts.messages).toMatchObject({
      found: MESSAGES,
      imported: MESSAGES - afterKill,
      alreadyThere: afterKill,
    });
    expect(summary.counts.files).toMatchObject({ found: 31, imported: 30 });

    const db = new Database(databasePath, { readonly: true });
    try {
      const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
      expect(count('SELECT COUNT(*) AS n FROM messages')).toBe(MESSAGES);
      expect(count('SELECT COUNT(DISTINCT uuid) AS n FROM messages')).toBe(MESSAGES);
      // Each message is in the search index once: a batch and its index entries commit together.
      expect(count('SELECT COUNT(*) AS n FROM message_search')).toBe(MESSAGES);
      // Counters hold the served areas only: private mail stays out of the board's statistics.
      expect(count('SELECT SUM(message_count) AS n FROM message_areas')).toBe(
        count("SELECT COUNT(*) AS n FROM messages WHERE area_tag <> 'private_mail'"),
      );
      expect(count("SELECT COUNT(*) AS n FROM message_areas WHERE area_tag = 'private_mail'")).toBe(0);
    } finally {
      db.close();
    }
  });
});
