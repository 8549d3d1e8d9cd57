import { expect, it } from 'vitest';
import { CONSOLE } from '../../src/admin/desk-service.js';
import type { BaudApp } from '../../src/app.js';
import { CALLER_CACHE_MAX_AGE_MS } from '../../src/auth/caller-service.js';
import { describeEachDialect, fakeClock, twoNodesOfOneBoard } from '../support/test-board.js';
import { API, login } from './auth-helpers.js';

/**
 * Each node remembers who a credential stands for for at most CALLER_CACHE_MAX_AGE_MS. Two
 * nodes share one database here. Whatever ends a credential takes effect at once on the node
 * where it happened, and on the other node within the bound — never later.
 */
describeEachDialect('caller cache bound across nodes', (dialect) => {
  const clock = fakeClock();
  const nodes = twoNodesOfOneBoard(dialect, clock);

  const profileStatus = async (node: BaudApp, headers: Record<string, string>) =>
    (await node.inject({ method: 'GET', url: `${API}/users/me`, headers })).statusCode;

  /** Both nodes accept `headers` now (so both remember the caller), then `end` runs on node A. */
  async function expectBoundedEnd(headers: Record<string, string>, end: () => Promise<unknown>) {
    expect(await profileStatus(nodes.nodeA.app, headers)).toBe(200);
    expect(await profileStatus(nodes.nodeB, headers)).toBe(200);
    await end();
    expect(await profileStatus(nodes.nodeA.app, headers)).toBe(401);
    clock.advance(CALLER_CACHE_MAX_AGE_MS - 1);
    expect(await profileStatus(nodes.nodeB, headers)).toBe(200);
    clock.advance(1);
    expect(await profileStatus(nodes.nodeB, headers)).toBe(401);
  }

  it('ends a logged-out session on the other node within the bound', async () => {
    await nodes.nodeA.board.credentials.createAccount({ username: 'logsout', password: 'correct horse battery' });
    const { accessToken, refreshToken } = await login(nodes.nodeA, 'logsout');
    await expectBoundedEnd({ authorization: `Bearer ${accessToken}` }, () =>
      nodes.nodeA.app.inject({
        method: 'POST',
        url: `${API}/auth/logout`,
        cookies: { baud_refresh: refreshToken ?? '' },
      }),
    );
  });

  it('refuses a revoked API key on the other node within the bound', async () => {
    const user = await nodes.nodeA.board.credentials.createAccount({
      username: 'keyholder',
      password: 'correct horse battery',
    });
    const key = await nodes.nodeA.board.apiKeys.generate(user.username, 'bot', 'read');
    await expectBoundedEnd({ 'x-baud-api-key': key.key }, () => nodes.nodeA.board.apiKeys.revoke(key.id));
  });

  it('refuses a disabled user on the other node within the bound', async () => {
    await nodes.nodeA.board.credentials.createAccount({ username: 'disabled', password: 'correct horse battery' });
    const { accessToken } = await login(nodes.nodeA, 'disabled');
    await expectBoundedEnd({ authorization: `Bearer ${accessToken}` }, () =>
      nodes.nodeA.board.desk.lock(CONSOLE, 'disabled'),
    );
  });

  it('ends every session of a changed password on the other node within the bound', async () => {
    await nodes.nodeA.board.credentials.createAccount({ username: 'rotates', password: 'correct horse battery' });
    const { accessToken } = await login(nodes.nodeA, 'rotates');
    // A password change ends the sessions that began before it, not one begun the same millisecond.
    clock.advance(1);
    await expectBoundedEnd({ authorization: `Bearer ${accessToken}` }, () =>
      nodes.nodeA.board.credentials.setPassword('rotates', 'another horse battery'),
    );
  });
});
