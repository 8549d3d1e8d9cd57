import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';
import { bearer, getMe, login, PASSWORD, refresh, refreshCookieOf } from './auth-helpers.js';

const GRACE_MS = 10_000;

describeEachDialect('refresh grace window', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect, { clock });
    await board.board.credentials.createAccount({ username: 'alice', password: PASSWORD });
  });
  afterAll(() => board.close());

  /** Logs in and rotates once: the first refresh token and its successor. */
  async function rotatedOnce() {
    const { refreshToken: first } = await login(board, 'alice');
    const rotated = await refresh(board, first);
    expect(rotated.statusCode).toBe(200);
    return { first, successor: refreshCookieOf(rotated) };
  }

  it('answers the just-rotated token with the same new refresh token and a fresh access token', async () => {
    const { first, successor } = await rotatedOnce();
    clock.advance(GRACE_MS - 1);
    const replay = await refresh(board, first);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['cache-control']).toBe('no-store');
    expect(replay.json()).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 900 });
    expect(refreshCookieOf(replay)).toBe(successor);
    expect((await getMe(board, bearer(replay.json().accessToken))).statusCode).toBe(200);
    // The session goes on from the successor as usual.
    const next = await refresh(board, successor);
    expect(next.statusCode).toBe(200);
    expect(refreshCookieOf(next)).not.toBe(successor);
  });

  it('answers every one of several parallel refreshes with one cookie with the same new pair', async () => {
    const { refreshToken } = await login(board, 'alice');
    const responses = await Promise.all(Array.from({ length: 5 }, () => refresh(board, refreshToken)));
    expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 200, 200, 200]);
    const cookies = new Set(responses.map(refreshCookieOf));
    expect(cookies.size).toBe(1);
    const [successor] = cookies;
    expect(successor).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await refresh(board, successor)).statusCode).toBe(200);
  });

  it('treats the rotated token as reuse once the grace window is over: 401, and the family is revoked', async () => {
    const { first, successor } = await rotatedOnce();
    const { accessToken } = (await refresh(board, successor)).json();
    clock.advance(GRACE_MS);
    const reuse = await refresh(board, first);
    expect(reuse.statusCode).toBe(401);
    expect(reuse.json().detail).toBe('The refresh token is invalid, expired or revoked.');
    expect((await getMe(board, bearer(accessToken))).statusCode).toBe(401);
  });

  it('treats the rotated token as reuse within the window once its successor has been rotated too', async () => {
    const { first, successor } = await rotatedOnce();
    const latest = refreshCookieOf(await refresh(board, successor));
    clock.advance(1000);
    expect((await refresh(board, first)).statusCode).toBe(401);
    expect((await refresh(board, latest)).statusCode).toBe(401);
  });

  it('gives no grace to a session that has ended', async () => {
    const { first } = await rotatedOnce();
    clock.advance(1000);
    await board.board.credentials.setPassword('alice', PASSWORD);
    expect((await refresh(board, first)).statusCode).toBe(401);
  });
});

describeEachDialect('refresh without a grace window', (dialect) => {
  it('treats any replay of a rotated token as reuse when refreshGraceSeconds is 0', async () => {
    const board = await createTestBoard(dialect, {
      clock: fakeClock(),
      config: { contentServers: { web: { restApi: { refreshGraceSeconds: 0 } } } },
    });
    try {
      await board.board.credentials.createAccount({ username: 'alice', password: PASSWORD });
      const { refreshToken } = await login(board, 'alice');
      const successor = refreshCookieOf(await refresh(board, refreshToken));
      expect((await refresh(board, refreshToken)).statusCode).toBe(401);
      expect((await refresh(board, successor)).statusCode).toBe(401);
    } finally {
      await board.close();
    }
  });
});
