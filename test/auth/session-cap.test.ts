import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';
import { bearer, getMe, login, logout, PASSWORD, refresh } from './auth-helpers.js';

const MAX_SESSIONS = 3;

describeEachDialect('live sessions per user', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      clock,
      config: {
        contentServers: {
          web: { restApi: { maxSessionsPerUser: MAX_SESSIONS, loginThrottle: { maxFailures: 100 } } },
        },
      },
    });
    for (const username of ['alice', 'bob', 'carol', 'dave']) {
      await board.board.credentials.createAccount({ username, password: PASSWORD });
    }
  });
  afterAll(() => board.close());

  async function liveSessionCount(username: string): Promise<number> {
    const rows = await board.board.db
      .selectFrom('refreshFamilies')
      .innerJoin('users', 'users.id', 'refreshFamilies.userId')
      .select('refreshFamilies.id')
      .where('users.username', '=', username)
      .where('refreshFamilies.revokedAt', 'is', null)
      .execute();
    return rows.length;
  }

  it(`ends the oldest live sessions beyond ${MAX_SESSIONS} at a new login`, async () => {
    const sessions = [];
    for (let round = 0; round < 5; round += 1) {
      clock.advance(1000);
      sessions.push(await login(board, 'alice'));
    }
    const statuses = [];
    for (const session of sessions) statuses.push((await getMe(board, bearer(session.accessToken))).statusCode);
    expect(statuses).toEqual([401, 401, 200, 200, 200]);
    expect((await refresh(board, sessions[0]?.refreshToken)).statusCode).toBe(401);
    expect((await refresh(board, sessions[4]?.refreshToken)).statusCode).toBe(200);
    expect(await liveSessionCount('alice')).toBe(MAX_SESSIONS);
  });

  it('counts only live sessions: one that logged out makes room', async () => {
    const first = await login(board, 'bob');
    clock.advance(1000);
    await login(board, 'bob');
    clock.advance(1000);
    const third = await login(board, 'bob');
    await logout(board, third.refreshToken);
    clock.advance(1000);
    await login(board, 'bob');
    expect((await getMe(board, bearer(first.accessToken))).statusCode).toBe(200);
    expect(await liveSessionCount('bob')).toBe(MAX_SESSIONS);
  });

  it("never ends another user's sessions", async () => {
    const carols = await login(board, 'carol');
    for (let round = 0; round < 5; round += 1) await login(board, 'dave');
    expect((await getMe(board, bearer(carols.accessToken))).statusCode).toBe(200);
  });

  it('holds the cap under parallel logins', async () => {
    const logins = await Promise.all(Array.from({ length: 20 }, () => login(board, 'dave')));
    expect(logins.map((attempt) => attempt.response.statusCode)).toEqual(Array(20).fill(200));
    expect(await liveSessionCount('dave')).toBe(MAX_SESSIONS);
  });
});
