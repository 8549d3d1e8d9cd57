import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCliBoard } from '../support/cli-board.js';
import { runBaud } from '../support/run-baud.js';

interface Entry {
  readonly id: number;
  readonly actor: string | null;
  readonly action: string;
  readonly target: string;
  readonly detail: string;
}

/** `baud user add|passwd|group` write the audit log as the console; `baud audit` reads all of it, page by page. */
describe('account changes at the console, and reading the whole audit log', () => {
  let dir: string;
  let config: string;
  const baud = (...args: string[]) => runBaud([...args, '--config', config], { cwd: dir });

  beforeAll(() => {
    ({ dir, config } = createCliBoard('baud-account-audit-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('records user add, passwd, group changes and API keys as the console, and nothing for a change that changes nothing', async () => {
    for (const args of [
      ['user', 'add', 'zoe', '--password', 'long enough pw', '--group', 'cosysops'],
      ['user', 'passwd', 'zoe', '--password', 'another long pw'],
      ['user', 'group', 'add', 'zoe', 'readers'],
      ['user', 'group', 'add', 'zoe', 'readers'],
      ['user', 'group', 'remove', 'zoe', 'cosysops'],
      ['user', 'group', 'remove', 'zoe', 'never-joined'],
      ['rest', 'api-key', 'generate', 'zoe', '--label', 'nightly', '--scope', 'read'],
      ['rest', 'api-key', 'revoke', '1'],
      ['rest', 'api-key', 'revoke', '1'],
    ]) {
      const run = await baud(...args);
      expect(run.code, run.stderr).toBe(0);
    }
    const audit = await baud('audit', '--json');
    expect(audit.code, audit.stderr).toBe(0);
    const entries = JSON.parse(audit.stdout) as Entry[];
    expect(entries.map(({ actor, action, target, detail }) => ({ actor, action, target, detail }))).toEqual([
      { actor: null, action: 'user.api-key-revoked', target: 'zoe', detail: 'key 1 "nightly" (read) revoked' },
      { actor: null, action: 'user.api-key-created', target: 'zoe', detail: 'key 1 "nightly" (read) generated' },
      { actor: null, action: 'user.groups-changed', target: 'zoe', detail: 'left cosysops' },
      { actor: null, action: 'user.groups-changed', target: 'zoe', detail: 'joined readers' },
      {
        actor: null,
        action: 'user.password-changed',
        target: 'zoe',
        detail: 'set at the console; login sessions ended, API keys revoked',
      },
      { actor: null, action: 'user.created', target: 'zoe', detail: 'account created; also joins cosysops' },
    ]);
    const [added] = JSON.parse((await baud('user', 'list', '--json')).stdout) as Array<{ groups: string[] }>;
    expect(added?.groups).toEqual(['readers', 'users']);
  });

  it('pages with --limit and --before, and reads everything with --all', async () => {
    for (let index = 0; index < 5; index += 1) {
      expect((await baud('user', 'add', `pager${index}`, '--password', 'long enough pw')).code).toBe(0);
    }
    const all = JSON.parse((await baud('audit', '--all', '--json')).stdout) as Entry[];
    expect(all).toHaveLength(11);
    // Read two at a time, printed as one document all the same.
    expect(JSON.parse((await baud('audit', '--all', '--limit', '2', '--json')).stdout)).toEqual(all);
    const ids = all.map((entry) => entry.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));

    const first = await baud('audit', '--limit', '3', '--json');
    expect((JSON.parse(first.stdout) as Entry[]).map((entry) => entry.id)).toEqual(ids.slice(0, 3));
    expect(first.stderr).toBe(`more: baud audit --before ${ids[2]}\n`);
    const second = await baud('audit', '--limit', '3', '--before', String(ids[2]));
    expect(
      second.stdout
        .split('\n')
        .slice(0, -1)
        .map((line) => Number(line.split('\t')[0])),
    ).toEqual(ids.slice(3, 6));
    const rest = await baud('audit', '--all', '--limit', '2', '--before', String(ids[5]));
    const restLines = rest.stdout.split('\n').slice(0, -1);
    expect(restLines.map((line) => Number(line.split('\t')[0]))).toEqual(ids.slice(6));
    expect(restLines).toHaveLength(5);
    expect(restLines.at(-1)).toMatch(
      /^\d+\t\S+Z\t\(console\)\tuser\.created\tzoe\taccount created; also joins cosysops$/,
    );
    expect(rest.stderr).toBe('');

    expect((await baud('audit', '--all', '--before', String(ids[10]), '--json')).stdout).toBe('[]\n');
    expect((await baud('audit', '--before', String(ids[10]))).stdout).toBe('no changes\n');
  });

  it('refuses a bad --limit or --before', async () => {
    expect((await baud('audit', '--limit', '0')).stderr).toBe('baud: --limit takes a positive integer, not "0"\n');
    expect((await baud('audit', '--limit', '1001')).stderr).toBe(
      'baud: --limit is at most 1000; use --all for everything\n',
    );
    const badBefore = await baud('audit', '--before', 'x');
    expect(badBefore.code).toBe(1);
    expect(badBefore.stderr).toBe('baud: --before takes a positive integer, not "x"\n');
  });
});
