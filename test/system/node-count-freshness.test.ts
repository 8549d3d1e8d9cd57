import { afterAll, beforeAll, expect, it } from 'vitest';
import { ACTIVE_SESSION_COUNT_MAX_AGE_MS } from '../../src/auth/session-store.js';
import { type Board, openBoard } from '../../src/board.js';
import { API, login } from '../auth/auth-helpers.js';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';

/**
 * `nodeCount` is counted at most once per ACTIVE_SESSION_COUNT_MAX_AGE_MS on each node. Two
 * nodes share one database here: the node that logs a session in or out counts again at once;
 * the other shows the change within the bound, never later.
 */
describeEachDialect('nodeCount across nodes sharing a database', (dialect) => {
  const clock = fakeClock();
  let nodeA: TestBoard;
  let nodeB: Board;
  beforeAll(async () => {
    nodeA = await createTestBoard(dialect, { clock });
    nodeB = await openBoard(nodeA.config, { clock });
    await nodeA.board.credentials.createAccount({ username: 'alice', password: 'correct horse battery' });
  });
  afterAll(async () => {
    await nodeB?.close();
    await nodeA?.close();
  });

  const nodeCountOnA = async () =>
    (await nodeA.app.inject({ method: 'GET', url: `${API}/system/info` })).json().nodeCount as number;

  it('shows a login at once on its own node and within the bound on another', async () => {
    expect(await nodeCountOnA()).toBe(0);
    expect((await nodeB.system.getInfo()).nodeCount).toBe(0);

    const { refreshToken } = await login(nodeA, 'alice');
    expect(await nodeCountOnA()).toBe(1);
    // Node B counted 0 a moment ago and may keep saying so until the bound has passed …
    clock.advance(ACTIVE_SESSION_COUNT_MAX_AGE_MS - 1);
    expect((await nodeB.system.getInfo()).nodeCount).toBe(0);
    // … but not one millisecond longer.
    clock.advance(1);
    expect((await nodeB.system.getInfo()).nodeCount).toBe(1);

    await nodeA.app.inject({
      method: 'POST',
      url: `${API}/auth/logout`,
      cookies: { baud_refresh: refreshToken ?? '' },
    });
    expect(await nodeCountOnA()).toBe(0);
    clock.advance(ACTIVE_SESSION_COUNT_MAX_AGE_MS);
    expect((await nodeB.system.getInfo()).nodeCount).toBe(0);
  });

  it('answers the same bytes within a second and the new uptime after it', async () => {
    const first = await nodeA.app.inject({ method: 'GET', url: `${API}/system/info` });
    const again = await nodeA.app.inject({ method: 'GET', url: `${API}/system/info` });
    expect(again.body).toBe(first.body);
    expect(again.headers.etag).toBe(first.headers.etag);
    clock.advance(1000);
    const later = await nodeA.app.inject({ method: 'GET', url: `${API}/system/info` });
    expect(later.json().uptimeSeconds).toBe(first.json().uptimeSeconds + 1);
    expect(later.headers.etag).not.toBe(first.headers.etag);
  });
});
