import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CALLER_CACHE_MAX_AGE_MS } from '../../src/auth/caller-service.js';
import { runBaud } from '../support/run-baud.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';
import { API } from './auth-helpers.js';

describeEachDialect('baud rest api-key', (dialect) => {
  let board: TestBoard;
  let configPath: string;
  beforeAll(async () => {
    board = await createTestBoard(dialect);
    await board.board.credentials.createAccount({ username: 'robot', password: 'correct horse battery' });
    await board.board.credentials.createAccount({ username: 'other', password: 'correct horse battery' });
    configPath = path.join(board.dir, 'config.hjson');
    writeFileSync(
      configPath,
      JSON.stringify({
        paths: { dataDir: board.dir },
        database: { url: board.databaseUrl },
        logging: { level: 'silent' },
      }),
    );
  });
  afterAll(() => board.close());

  const baud = (...args: string[]) => runBaud([...args, '--config', configPath], { cwd: board.dir });
  /** The node may remember a key it let in for CALLER_CACHE_MAX_AGE_MS: asks until it refuses the key. */
  const expectRefusedSoon = (ask: () => Promise<{ statusCode: number }>) =>
    expect.poll(async () => (await ask()).statusCode, { timeout: CALLER_CACHE_MAX_AGE_MS + 1000 }).toBe(401);

  it('generates, lists and revokes a key end to end', async () => {
    const generated = await baud(
      'rest',
      'api-key',
      'generate',
      'Robot',
      '--label',
      'nightly sync',
      '--scope',
      'read',
      '--json',
    );
    expect(generated.code).toBe(0);
    const created = JSON.parse(generated.stdout);
    expect(created).toEqual({
      id: expect.any(Number),
      username: 'robot',
      label: 'nightly sync',
      scope: 'read',
      createdAt: expect.any(String),
      lastUsedAt: null,
      revokedAt: null,
      key: expect.stringMatching(/^baud_[A-Za-z0-9_-]{43}$/),
    });

    const used = await board.app.inject({
      method: 'GET',
      url: `${API}/users/me`,
      headers: { 'x-baud-api-key': created.key },
    });
    expect(used.statusCode).toBe(200);

    await baud('rest', 'api-key', 'generate', 'other', '--label', 'other bot', '--scope', 'read,write', '--json');
    const listedAll = JSON.parse((await baud('rest', 'api-key', 'list', '--json')).stdout);
    expect(listedAll.map((key: { username: string }) => key.username)).toEqual(['robot', 'other']);
    const listed = await baud('rest', 'api-key', 'list', 'robot', '--json');
    expect(listed.code).toBe(0);
    const [entry, ...rest] = JSON.parse(listed.stdout);
    expect(rest).toEqual([]);
    expect(entry).toEqual({ ...created, key: undefined, lastUsedAt: expect.any(String) });
    expect(listed.stdout).not.toContain(created.key);
    expect(Object.keys(entry)).not.toContain('key');

    const revoked = await baud('rest', 'api-key', 'revoke', String(created.id), '--json');
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ id: created.id, revokedAt: expect.any(String) });
    await expectRefusedSoon(() =>
      board.app.inject({ method: 'GET', url: `${API}/users/me`, headers: { 'x-baud-api-key': created.key } }),
    );
  });

  it("baud user passwd revokes the user's API keys", async () => {
    const created = JSON.parse(
      (await baud('rest', 'api-key', 'generate', 'other', '--label', 'passwd bot', '--scope', 'read', '--json')).stdout,
    );
    const withKey = () =>
      board.app.inject({ method: 'GET', url: `${API}/users/me`, headers: { 'x-baud-api-key': created.key } });
    expect((await withKey()).statusCode).toBe(200);
    const passwd = await baud('user', 'passwd', 'other', '--password', 'another long password');
    expect(passwd).toMatchObject({
      code: 0,
      stdout: 'password changed for other: login sessions ended, API keys revoked\n',
    });
    await expectRefusedSoon(withKey);
    const listed = JSON.parse((await baud('rest', 'api-key', 'list', 'other', '--json')).stdout);
    expect(listed.find((key: { id: number }) => key.id === created.id).revokedAt).toEqual(expect.any(String));
  });

  it('prints the key once in human form', async () => {
    const generated = await baud('rest', 'api-key', 'generate', 'robot', '--label', 'human', '--scope', 'write');
    expect(generated.code).toBe(0);
    expect(generated.stdout).toMatch(/^key: baud_[A-Za-z0-9_-]{43}$/m);
  });

  it.each([
    ['an unknown user', ['generate', 'nobody', '--label', 'x', '--scope', 'read'], 'No user named "nobody".'],
    [
      'a bad scope',
      ['generate', 'robot', '--label', 'x', '--scope', 'admin'],
      'scope "admin" is not valid; use one of read, write, read,write',
    ],
    ['an empty label', ['generate', 'robot', '--label', '  ', '--scope', 'read'], 'the label must not be empty'],
    ['an unknown id', ['revoke', '99999'], 'No API key with id 99999.'],
    ['a non-numeric id', ['revoke', 'abc'], '"abc" is not an API key id (a positive integer)'],
    ['an unknown user to list', ['list', 'nobody'], 'No user named "nobody".'],
  ])('fails with one line and a non-zero exit for %s', async (_name, args, message) => {
    const result = await baud('rest', 'api-key', ...args, '--json');
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`baud: ${message}\n`);
  });

  it('fails with a non-zero exit when --scope is missing', async () => {
    const result = await baud('rest', 'api-key', 'generate', 'robot', '--label', 'x');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("required option '--scope <scope>' not specified");
  });
});
