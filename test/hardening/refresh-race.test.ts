import { afterAll, beforeAll, expect, it } from 'vitest';
import { listenOnFreePort, PASSWORD, tallyStatuses } from '../auth/auth-helpers.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

interface TokenAnswer {
  readonly status: number;
  readonly accessToken: string | null;
  /** The `baud_refresh` value the response sets, if any. */
  readonly refreshToken: string | null;
}

describeEachDialect('parallel refreshes over HTTP', (dialect) => {
  let board: TestBoard;
  let baseUrl: string;
  beforeAll(async () => {
    board = await createTestBoard(dialect, { config: { database: { poolSize: 10 } } });
    await board.board.credentials.createAccount({ username: 'alice', password: PASSWORD });
    baseUrl = await listenOnFreePort(board);
  });
  afterAll(() => board.close());

  async function post(path: string, init: { body?: unknown; refreshToken?: string }): Promise<TokenAnswer> {
    const response = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: {
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(init.refreshToken === undefined ? {} : { cookie: `baud_refresh=${init.refreshToken}` }),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    const body = (await response.json()) as { accessToken?: string };
    const cookie = response.headers.getSetCookie().find((value) => value.startsWith('baud_refresh='));
    return {
      status: response.status,
      accessToken: body.accessToken ?? null,
      refreshToken: cookie?.slice('baud_refresh='.length).split(';')[0] ?? null,
    };
  }

  const refreshWith = (refreshToken: string) => post('/auth/refresh', { refreshToken });

  it.each([
    5, 20,
  ])('answers %i parallel refreshes with one cookie all with 200 and the same new cookie', async (parallel) => {
    const loggedIn = await post('/auth/login', { body: { username: 'alice', password: PASSWORD } });
    expect(loggedIn.status).toBe(200);
    const first = loggedIn.refreshToken ?? '';
    const answers = await Promise.all(Array.from({ length: parallel }, () => refreshWith(first)));
    expect(tallyStatuses(answers.map((answer) => answer.status))).toEqual({ 200: parallel });
    const successors = new Set(answers.map((answer) => answer.refreshToken));
    expect(successors.size).toBe(1);
    const [successor] = successors;
    expect(successor).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(successor).not.toBe(first);

    // The session still works: every access token is honoured, and the successor refreshes.
    for (const answer of answers) {
      const me = await fetch(`${baseUrl}/users/me`, { headers: { authorization: `Bearer ${answer.accessToken}` } });
      expect(me.status).toBe(200);
      await me.arrayBuffer();
    }
    const next = await refreshWith(successor ?? '');
    expect(next.status).toBe(200);
    expect(next.refreshToken).not.toBe(successor);
  });
});
