import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE } from '../../src/admin/desk-service.js';
import { base32Decode, timeStepAt, totpCode } from '../../src/auth/totp.js';
import { openBoard } from '../../src/board.js';
import type { Caller } from '../../src/caller.js';
import { configFromObject } from '../../src/config/load-config.js';
import { createCliBoard } from '../support/cli-board.js';
import { runBaud } from '../support/run-baud.js';

/** `baud user approve|reject|lock|unlock` and `baud audit`, as an operator runs them. */
describe("the desk's commands", () => {
  let dir: string;
  let config: string;
  const baud = (...args: string[]) => runBaud([...args, '--config', config], { cwd: dir });

  beforeAll(async () => {
    const created = createCliBoard('baud-desk-cli-');
    ({ dir, config } = created);
    const board = await openBoard(configFromObject(created.settings));
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

  it("turns a user's two-factor login off, and says so in the audit log", async () => {
    const settings = configFromObject(JSON.parse(readFileSync(config, 'utf8')));
    const setUp = await openBoard(settings);
    try {
      // A member whose phone is lost: two-factor login on.
      const { userId } = await setUp.credentials.createAccount({ username: 'phoneless', password: 'long enough pw' });
      const user = await setUp.users.loadCallerUser(userId);
      if (!user) throw new Error('phoneless is not there');
      const caller: Caller = {
        kind: 'user',
        user,
        via: 'token',
        scopes: new Set(['read', 'write'] as const),
        isSecure: false,
        session: null,
      };
      const { secret } = await setUp.twoFactor.enrol(caller, {
        password: 'long enough pw',
        clientAddress: '192.0.2.1',
      });
      await setUp.twoFactor.confirm(caller, totpCode(base32Decode(secret) ?? Buffer.alloc(0), timeStepAt(new Date())));
      expect(await setUp.twoFactor.isEnabled(userId)).toBe(true);
    } finally {
      await setUp.close();
    }
    const reset = await baud('user', 'totp-reset', 'Phoneless');
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toBe('two-factor login is off for Phoneless\n');
    const unknown = await baud('user', 'totp-reset', 'nobody');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toBe('baud: No user named "nobody".\n');
    const board = await openBoard(settings);
    try {
      const { userId } = await board.users.getUser('phoneless');
      expect(await board.twoFactor.isEnabled(userId)).toBe(false);
      const audit = await board.desk.listAudit(CONSOLE, { limit: 1, afterKey: null });
      expect(audit.items.map(({ actor, action, target, detail }) => ({ actor, action, target, detail }))).toEqual([
        {
          actor: null,
          action: 'user.totp-reset',
          target: 'phoneless',
          detail: 'two-factor login off; recovery codes deleted',
        },
      ]);
    } finally {
      await board.close();
    }
  });
});
