import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';
import { API, PASSWORD } from './auth-helpers.js';

describeEachDialect('password changes, disabling and API keys', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect, { clock });
    for (const username of ['alice', 'bob', 'carol', 'dora']) {
      await board.board.credentials.createAccount({ username, password: PASSWORD });
    }
  });
  afterAll(() => board.close());

  const statusWithKey = async (key: string) =>
    (await board.app.inject({ method: 'GET', url: `${API}/users/me`, headers: { 'x-baud-api-key': key } })).statusCode;

  it("revokes every API key of the user when the password changes, and nobody else's", async () => {
    const nightly = await board.board.apiKeys.generate('alice', 'nightly', 'read');
    const earlier = await board.board.apiKeys.generate('alice', 'old bot', 'read,write');
    const bobs = await board.board.apiKeys.generate('bob', 'bob bot', 'read');
    clock.advance(1000);
    const earlierRevokedAt = clock.now().toISOString();
    await board.board.apiKeys.revoke(earlier.id);
    expect(await statusWithKey(nightly.key)).toBe(200);

    clock.advance(1000);
    await board.board.credentials.setPassword('Alice', 'a brand new password');

    expect(await statusWithKey(nightly.key)).toBe(401);
    expect(await statusWithKey(bobs.key)).toBe(200);
    const revokedAt = (await board.board.apiKeys.list('alice')).map((key) => key.revokedAt);
    // A key revoked before keeps its first revocation time.
    expect(revokedAt).toEqual([clock.now().toISOString(), earlierRevokedAt]);
  });

  it('revokes nothing when the new password is refused', async () => {
    const key = await board.board.apiKeys.generate('carol', 'carol bot', 'read');
    await expect(board.board.credentials.setPassword('carol', 'short')).rejects.toThrow('at least 8 characters');
    expect(await statusWithKey(key.key)).toBe(200);
    expect((await board.board.apiKeys.list('carol')).map((record) => record.revokedAt)).toEqual([null]);
  });

  it("refuses a disabled user's API keys without revoking them; enabling lets them back in", async () => {
    const key = await board.board.apiKeys.generate('dora', 'dora bot', 'read,write');
    await board.board.users.setDisabled('dora', true);
    const refused = await board.app.inject({
      method: 'GET',
      url: `${API}/users/me`,
      headers: { 'x-baud-api-key': key.key },
    });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer realm="baud", error="invalid_token"');
    expect(refused.json()).toEqual({
      type: '/_baud/api/v1/errors/401',
      title: 'Unauthorized',
      status: 401,
      detail: 'The API key is unknown or revoked.',
      code: 'auth.invalid-api-key',
    });
    expect((await board.board.apiKeys.list('dora')).map((record) => record.revokedAt)).toEqual([null]);
    await board.board.users.setDisabled('dora', false);
    expect(await statusWithKey(key.key)).toBe(200);
  });
});
