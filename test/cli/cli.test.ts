import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBaud, runBaudProcess } from '../support/run-baud.js';

describe('baud CLI', () => {
  let dir: string;
  let config: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-cli-'));
    config = path.join(dir, 'board', 'config.hjson');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // As separate processes: the installed command itself, its streams and its exit code.
  it('init creates the board and a sysop with a random password, once', async () => {
    const run = await runBaudProcess(['init', '--config', config, '--json'], { cwd: dir });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result.configPath).toBe(config);
    expect(result.credentials).toEqual([
      { username: 'sysop', password: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/), role: 'sysop' },
    ]);
    const again = await runBaudProcess(['init', '--config', config], { cwd: dir });
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`baud: ${config} already exists; this board is initialised already\n`);
  });

  it('user add / list / group / disable / enable / passwd work end to end', async () => {
    const add = await runBaud(
      [
        'user',
        'add',
        'Alice',
        '--password-stdin',
        '--group',
        'cooks',
        '--email',
        'a@example.org',
        '--config',
        config,
        '--json',
      ],
      { cwd: dir, input: 'a long enough password\n' },
    );
    expect(add.code).toBe(0);
    expect(JSON.parse(add.stdout)).toMatchObject({ username: 'Alice', groups: ['cooks', 'users'], disabled: false });

    const group = await runBaud(['user', 'group', 'remove', 'alice', 'cooks', '--config', config, '--json'], {
      cwd: dir,
    });
    expect(JSON.parse(group.stdout).groups).toEqual(['users']);

    const disable = await runBaud(['user', 'disable', 'ALICE', '--config', config, '--json'], { cwd: dir });
    expect(JSON.parse(disable.stdout).disabled).toBe(true);
    const enable = await runBaud(['user', 'enable', 'alice', '--config', config, '--json'], { cwd: dir });
    expect(JSON.parse(enable.stdout).disabled).toBe(false);

    const passwd = await runBaud(['user', 'passwd', 'alice', '--password', 'another long one', '--config', config], {
      cwd: dir,
    });
    expect(passwd).toMatchObject({
      code: 0,
      stdout: 'password changed for alice: login sessions ended, API keys revoked\n',
    });

    const list = await runBaud(['user', 'list', '--config', config, '--json'], { cwd: dir });
    expect(JSON.parse(list.stdout).map((user: { username: string }) => user.username)).toEqual(['sysop', 'Alice']);
  });

  it.each([
    [['user', 'add', 'bob', '--password', 'short'], 'baud: password must be at least 8 characters\n'],
    [['user', 'add', 'bob'], 'baud: a password is required: --password <pw> or --password-stdin\n'],
    [['user', 'add', '12345', '--password', 'long enough pw'], 'baud: username must not be all digits\n'],
    [['user', 'add', 'alice', '--password', 'long enough pw'], 'baud: The username "alice" is taken.\n'],
    [['user', 'disable', 'nobody'], 'baud: No user named "nobody".\n'],
    [
      ['user', 'group', 'add', 'alice', 'bad group!'],
      'baud: group "bad group!" is not valid (1-32 of A-Z a-z 0-9 _ . -)\n',
    ],
  ])('%j fails with one clear line and exit 1', async (args, stderr) => {
    const run = await runBaud([...args, '--config', config], { cwd: dir });
    expect(run).toMatchObject({ code: 1, stderr, stdout: '' });
  });

  it('refuses an invalid configuration naming the key, exit 1', async () => {
    const bad = path.join(dir, 'bad.hjson');
    writeFileSync(bad, '{ contentServers: { web: { port: 99999 } } }');
    const run = await runBaud(['user', 'list', '--config', bad], { cwd: dir });
    expect(run).toMatchObject({ code: 1, stderr: 'baud: configuration: contentServers.web.port: must be <= 65535\n' });
  });

  it('db migrate reports an up-to-date database', async () => {
    const run = await runBaud(['db', 'migrate', '--config', config, '--json'], { cwd: dir });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ applied: [] });
  });
});
