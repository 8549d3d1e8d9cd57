import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, bearer, login, PASSWORD } from '../auth/auth-helpers.js';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';

const MINUTE = 60_000;

describeEachDialect('nodes and last callers', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect, { clock });
    for (const username of ['alice', 'bob', 'carol']) {
      await board.board.credentials.createAccount({ username, password: PASSWORD });
    }
    await board.board.db
      .updateTable('users')
      .set({ location: 'Oxford', affiliations: 'Wonderland' })
      .where('username', '=', 'alice')
      .execute();
  });
  afterAll(() => board.close());

  const get = (url: string, headers: Record<string, string> = {}) =>
    board.app.inject({ method: 'GET', url: `${API}${url}`, headers });

  describe('GET /system/last-callers', () => {
    it('is empty before anyone logs in', async () => {
      const response = await get('/system/last-callers');
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        data: [],
        meta: { count: 0, limit: 50, nextCursor: null },
        pagination: { next: null },
      });
    });

    it('lists one entry per login, newest first, publicly by default', async () => {
      const start = clock.now();
      await login(board, 'alice');
      clock.advance(MINUTE);
      await login(board, 'bob');
      clock.advance(MINUTE);
      await login(board, 'alice');
      const response = await get('/system/last-callers');
      expect(response.statusCode).toBe(200);
      const { data, meta } = response.json();
      expect(meta).toEqual({ count: 3, limit: 50, nextCursor: null });
      expect(data).toEqual([
        {
          userId: 1,
          username: 'alice',
          location: 'Oxford',
          affiliations: 'Wonderland',
          timestamp: new Date(start.getTime() + 2 * MINUTE).toISOString(),
        },
        {
          userId: 2,
          username: 'bob',
          location: '',
          affiliations: '',
          timestamp: new Date(start.getTime() + MINUTE).toISOString(),
        },
        {
          userId: 1,
          username: 'alice',
          location: 'Oxford',
          affiliations: 'Wonderland',
          timestamp: start.toISOString(),
        },
      ]);
    });

    it('holds at most 50 entries and honours limit', async () => {
      for (let round = 0; round < 50; round += 1) await login(board, 'carol');
      const all = (await get('/system/last-callers')).json();
      expect(all.data).toHaveLength(50);
      expect(all.data[0].username).toBe('carol');
      const two = (await get('/system/last-callers?limit=2')).json();
      expect(two.meta).toEqual({ count: 2, limit: 2, nextCursor: null });
      expect((await get('/system/last-callers?limit=50')).statusCode).toBe(200);
    });

    it.each(['51', '0', 'abc', '2.5'])('refuses limit=%s with 400', async (limit) => {
      const response = await get(`/system/last-callers?limit=${limit}`);
      expect(response.statusCode).toBe(400);
      expect(response.json().errors[0].pointer).toBe('/query/limit');
    });
  });

  describe('GET /system/nodes', () => {
    it('requires authentication by default', async () => {
      const response = await get('/system/nodes');
      expect(response.statusCode).toBe(401);
    });

    it('lists active sessions with their last action, and drops them after 15 idle minutes', async () => {
      clock.advance(60 * MINUTE); // every earlier session is now idle
      const connectedAt = clock.now().toISOString();
      const { accessToken } = await login(board, 'alice');
      clock.advance(2 * MINUTE);
      await get('/users/me', bearer(accessToken));
      await get('/system/nodes', bearer(accessToken));
      const response = await get('/system/nodes', bearer(accessToken));
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        data: [
          {
            node: 1,
            authenticated: true,
            action: 'Viewing profiles',
            isSecure: false,
            userId: 1,
            username: 'alice',
            location: 'Oxford',
            affiliations: 'Wonderland',
            timeOnMinutes: 2,
            connectedAt,
            lastActivityAt: clock.now().toISOString(),
          },
        ],
        meta: { count: 1, limit: 100, nextCursor: null },
        pagination: { next: null },
      });
      expect((await get('/system/info')).json().nodeCount).toBe(1);

      clock.advance(15 * MINUTE + 1000);
      const { accessToken: bobToken } = await login(board, 'bob');
      const later = (await get('/system/nodes', bearer(bobToken))).json();
      expect(later.data.map((node: { username: string }) => node.username)).toEqual(['bob']);
      expect(later.data[0].action).toBe('Logging in');
    });

    it('drops a session at logout, and its access token dies with it', async () => {
      const { accessToken, refreshToken } = await login(board, 'carol');
      expect((await get('/system/info')).json().nodeCount).toBe(2);
      await board.app.inject({
        method: 'POST',
        url: `${API}/auth/logout`,
        cookies: { baud_refresh: refreshToken ?? '' },
      });
      expect((await get('/system/nodes', bearer(accessToken))).statusCode).toBe(401);
      const { accessToken: bobToken } = await login(board, 'bob');
      const nodes = (await get('/system/nodes', bearer(bobToken))).json();
      expect(nodes.data.map((node: { username: string }) => node.username)).toEqual(['bob', 'bob']);
    });

    it('drops the sessions of a user at once when they are disabled', async () => {
      await login(board, 'carol');
      const { accessToken: bobToken } = await login(board, 'bob');
      const before = (await get('/system/nodes', bearer(bobToken))).json();
      expect(before.data.map((node: { username: string }) => node.username)).toContain('carol');
      await board.board.users.setDisabled('carol', true);
      const after = (await get('/system/nodes', bearer(bobToken))).json();
      expect(after.data.map((node: { username: string }) => node.username)).not.toContain('carol');
      await board.board.users.setDisabled('carol', false);
    });
  });
});

describeEachDialect('node list bound', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  const sessions: { accessToken: string | undefined; connectedAt: string }[] = [];
  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      clock,
      config: {
        contentServers: { web: { restApi: { maxSessionsPerUser: 1000, system: { public: { nodes: true } } } } },
      },
    });
    await board.board.credentials.createAccount({ username: 'alice', password: PASSWORD });
    for (let index = 0; index < 105; index += 1) {
      clock.advance(1000);
      const connectedAt = clock.now().toISOString();
      sessions.push({ accessToken: (await login(board, 'alice')).accessToken, connectedAt });
    }
    // The oldest session is used again: it is now the most recently active one.
    clock.advance(MINUTE);
    await board.app.inject({ method: 'GET', url: `${API}/users/me`, headers: bearer(sessions[0]?.accessToken) });
  });
  afterAll(() => board.close());

  const connectedAtOf = (...indexes: number[]) => indexes.map((index) => sessions[index]?.connectedAt);
  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, offset) => from + offset);

  it('lists at most 100 nodes: the most recently active, numbered in login order', async () => {
    const response = await board.app.inject({ method: 'GET', url: `${API}/system/nodes` });
    expect(response.statusCode).toBe(200);
    const { data, meta, pagination } = response.json();
    expect(meta).toEqual({ count: 100, limit: 100, nextCursor: null });
    expect(pagination).toEqual({ next: null });
    expect(data.map((node: { node: number }) => node.node)).toEqual(range(1, 101));
    expect(data.map((node: { connectedAt: string }) => node.connectedAt)).toEqual(connectedAtOf(0, ...range(6, 105)));
    expect((await board.app.inject({ method: 'GET', url: `${API}/system/info` })).json().nodeCount).toBe(105);
  });

  it('honours ?limit= and reports it in meta.limit', async () => {
    const response = await board.app.inject({ method: 'GET', url: `${API}/system/nodes?limit=3` });
    expect(response.statusCode).toBe(200);
    const { data, meta } = response.json();
    expect(meta).toEqual({ count: 3, limit: 3, nextCursor: null });
    expect(data.map((node: { connectedAt: string }) => node.connectedAt)).toEqual(connectedAtOf(0, 103, 104));
    expect(data.map((node: { node: number }) => node.node)).toEqual([1, 2, 3]);
  });

  it.each(['101', '0', 'abc', '2.5'])('refuses limit=%s with 400', async (limit) => {
    const response = await board.app.inject({ method: 'GET', url: `${API}/system/nodes?limit=${limit}` });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors[0].pointer).toBe('/query/limit');
  });
});

describeEachDialect('system public toggles', (dialect) => {
  it('makes nodes public and last callers private when configured', async () => {
    const board = await createTestBoard(dialect, {
      config: { contentServers: { web: { restApi: { system: { public: { nodes: true, 'last-callers': false } } } } } },
    });
    try {
      const nodes = await board.app.inject({ method: 'GET', url: `${API}/system/nodes` });
      expect(nodes.statusCode).toBe(200);
      expect(nodes.json().data).toEqual([]);
      const callers = await board.app.inject({ method: 'GET', url: `${API}/system/last-callers` });
      expect(callers.statusCode).toBe(401);
      const { auth } = await board.userWithToken('alice');
      const authenticated = await board.app.inject({ method: 'GET', url: `${API}/system/last-callers`, headers: auth });
      expect(authenticated.statusCode).toBe(200);
    } finally {
      await board.close();
    }
  });
});
