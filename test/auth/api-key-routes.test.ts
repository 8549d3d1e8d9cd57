import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';
import { API, bearer } from './auth-helpers.js';

describeEachDialect('API keys over HTTP', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  const keys: Record<string, string> = {};
  beforeAll(async () => {
    board = await createTestBoard(dialect, { clock });
    await board.board.credentials.createAccount({ username: 'botowner', password: 'correct horse battery' });
    for (const scope of ['read', 'write', 'read,write']) {
      keys[scope] = (await board.board.apiKeys.generate('botowner', `${scope} bot`, scope)).key;
    }
  });
  afterAll(() => board.close());

  const getProfile = (headers: Record<string, string>) =>
    board.app.inject({ method: 'GET', url: `${API}/users/me`, headers });
  const putProfile = (headers: Record<string, string>) =>
    board.app.inject({ method: 'PUT', url: `${API}/users/me`, headers, payload: { location: 'Bot Land' } });

  describe.each([
    ['read', 200, 403],
    ['write', 403, 200],
    ['read,write', 200, 200],
  ])('a %s key', (scope, getStatus, putStatus) => {
    for (const form of ['X-Baud-API-Key', 'Authorization: Bearer'] as const) {
      it(`via ${form}: GET → ${getStatus}, PUT → ${putStatus}`, async () => {
        const key = keys[scope] ?? '';
        const headers = form === 'X-Baud-API-Key' ? { 'x-baud-api-key': key } : bearer(key);
        const read = await getProfile(headers);
        expect(read.statusCode).toBe(getStatus);
        const write = await putProfile(headers);
        expect(write.statusCode).toBe(putStatus);
        for (const response of [read, write]) {
          if (response.statusCode === 403) {
            expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
            expect(response.json().status).toBe(403);
          } else {
            expect(response.json().username).toBe('botowner');
          }
        }
      });
    }
  });

  it('a key never grants a POST the read scope lacks, even on a public route', async () => {
    const response = await board.app.inject({
      method: 'POST',
      url: `${API}/messages/areas/general/messages`,
      headers: { 'x-baud-api-key': keys.read ?? '' },
      payload: { subject: 'hi', message: 'there' },
    });
    expect(response.statusCode).toBe(403);
  });

  it('refuses a revoked key with 401 and WWW-Authenticate', async () => {
    const generated = await board.board.apiKeys.generate('botowner', 'short-lived', 'read');
    expect((await getProfile({ 'x-baud-api-key': generated.key })).statusCode).toBe(200);
    await board.board.apiKeys.revoke(generated.id);
    for (const headers of [{ 'x-baud-api-key': generated.key }, bearer(generated.key)]) {
      const response = await getProfile(headers);
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer realm="baud", error="invalid_token"');
      expect(response.json().detail).toBe('The API key is unknown or revoked.');
    }
  });

  it('keeps the first revocation time when a key is revoked twice, and never lists the key or its hash', async () => {
    const generated = await board.board.apiKeys.generate('botowner', 'twice', 'write');
    const first = await board.board.apiKeys.revoke(generated.id);
    clock.advance(5000);
    const second = await board.board.apiKeys.revoke(generated.id);
    expect(second.revokedAt).toBe(first.revokedAt);
    const listed = await board.board.apiKeys.list('BOTOWNER');
    for (const key of listed) {
      expect(Object.keys(key).sort()).toEqual([
        'createdAt',
        'id',
        'label',
        'lastUsedAt',
        'revokedAt',
        'scope',
        'username',
      ]);
    }
  });

  it('refuses an unknown or malformed key with 401', async () => {
    const unknown = `baud_${'A'.repeat(43)}`;
    expect((await getProfile({ 'x-baud-api-key': unknown })).statusCode).toBe(401);
    expect((await getProfile(bearer('baud_short'))).statusCode).toBe(401);
  });

  it("refuses the key of a disabled owner, and records the key's last use", async () => {
    await board.board.credentials.createAccount({ username: 'sleepy', password: 'correct horse battery' });
    const generated = await board.board.apiKeys.generate('sleepy', 'nightly', 'read');
    expect((await getProfile({ 'x-baud-api-key': generated.key })).statusCode).toBe(200);
    const [listed] = await board.board.apiKeys.list('sleepy');
    expect(listed?.lastUsedAt).toBe(clock.now().toISOString());
    await board.board.users.setDisabled('sleepy', true);
    expect((await getProfile({ 'x-baud-api-key': generated.key })).statusCode).toBe(401);
  });

  it('does not count an API key call as a login (no last-caller entry)', async () => {
    await getProfile({ 'x-baud-api-key': keys.read ?? '' });
    const calls = await board.board.db.selectFrom('calls').selectAll().execute();
    expect(calls).toEqual([]);
  });
});
