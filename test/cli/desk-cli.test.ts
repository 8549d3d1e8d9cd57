import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBoard } from '../../src/board.js';
import { configFromObject } from '../../src/config/load-config.js';
import { runBaud } from '../support/run-baud.js';

/** `baud user approve|reject|lock|unlock` and `baud audit`, as an operator runs them. */
describe("the desk's commands", () => {
  let dir: string;
  let config: string;
  const baud = (...args: string[]) => runBaud([...args, '--config', config], { cwd: dir });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-desk-cli-'));
    config = path.join(dir, 'config.hjson');
    const settings = {
      paths: { dataDir: dir },
      database: { url: `sqlite:${path.join(dir, 'baud.db')}` },
      logging: { level: 'silent' },
    };
    writeFileSync(config, JSON.stringify(settings));
    const board = await openBoard(configFromObject(settings));
    try {
      for (const username of ['applicant', 'spammer']) {
        await board.registration.register({ username, password: 'long enough pw' }, '192.0.2.1');
      }
    } finally {
      await board.close();
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('approves and rejects applications, locks and unlocks, and shows it all in the audit log', async () => {
    const approved = await baud('user', 'approve', 'APPLICANT', '--json');
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({ username: 'applicant', status: 'active', groups: ['users'] });
    expect((await baud('user', 'approve', 'applicant')).stderr).toBe(
      'baud: "applicant" is not an application to approve.\n',
    );

    const rejected = await baud('user', 'reject', 'spammer');
    expect(rejected.stdout).toBe('rejected spammer: the application is deleted\n');
    const locked = await baud('user', 'lock', 'applicant');
    expect(locked.stdout).toMatch(/^\d+\tapplicant \(disabled\)\tgroups: users\n$/);
    expect(JSON.parse((await baud('user', 'unlock', 'applicant', '--json')).stdout).status).toBe('active');

    const audit = await baud('audit', '--json');
    expect(audit.code, audit.stderr).toBe(0);
    const entries = JSON.parse(audit.stdout) as Array<{ actor: string | null; action: string; target: string }>;
    expect(entries.map(({ actor, action, target }) => [actor, action, target])).toEqual([
      [null, 'user.unlocked', 'applicant'],
      [null, 'user.locked', 'applicant'],
      [null, 'user.rejected', 'spammer'],
      [null, 'user.approved', 'applicant'],
      ['spammer', 'user.registered', 'spammer'],
      ['applicant', 'user.registered', 'applicant'],
    ]);
    const readable = await baud('audit');
    expect(readable.stdout.split('\n')[0]).toMatch(/^\d+\t\S+Z\t\(console\)\tuser\.unlocked\tapplicant\tunlocked$/);
  });
});
