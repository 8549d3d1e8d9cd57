import { afterAll, beforeAll, expect, it } from 'vitest';
import { CONSOLE } from '../../src/admin/desk-service.js';
import type { BaudApp } from '../../src/app.js';
import { CALLER_CACHE_MAX_AGE_MS } from '../../src/auth/caller-service.js';
import { createIdentityChanges } from '../../src/identity-changes.js';
import { createUserStore } from '../../src/users/user-store.js';
import {
  createTestBoard,
  describeEachDialect,
  fakeClock,
  type TestBoard,
  twoNodesOfOneBoard,
} from '../support/test-board.js';
import { API, bearer, getMe, login, PASSWORD, refresh } from './auth-helpers.js';

const NEW_PASSWORD = 'a longer horse battery staple';

describeEachDialect('your own account: password and login sessions', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  beforeAll(async () => {
    // Three attempts per window, so running out of them takes three requests.
    board = await createTestBoard(dialect, {
      clock,
      config: { contentServers: { web: { restApi: { loginThrottle: { maxFailures: 3, windowSeconds: 600 } } } } },
    });
    for (const username of ['alice', 'bob', 'carol', 'dave', 'erin', 'fred', 'gina']) {
      await board.board.credentials.createAccount({ username, password: PASSWORD });
    }
  });
  afterAll(() => board.close());

  /** A login from `address` (each test its own, so the address windows do not mix). */
  async function session(username: string, address = '192.0.2.1', password = PASSWORD) {
    const { response, accessToken, refreshToken } = await login(board, username, password, { remoteAddress: address });
    expect(response.statusCode, response.body).toBe(200);
    return { headers: bearer(accessToken), refreshToken };
  }

  const changePassword = (headers: Record<string, string>, payload: object, remoteAddress = '192.0.2.1') =>
    board.app.inject({ method: 'PUT', url: `${API}/users/me/password`, headers, payload, remoteAddress });
  const listSessions = (headers: Record<string, string>) =>
    board.app.inject({ method: 'GET', url: `${API}/users/me/sessions`, headers });
  const endSession = (headers: Record<string, string>, sessionId: string) =>
    board.app.inject({ method: 'DELETE', url: `${API}/users/me/sessions/${sessionId}`, headers });
  const auditOf = async (target: string) =>
    (await board.board.desk.listAudit(CONSOLE, { limit: 100, afterKey: null })).items
      .filter((entry) => entry.target === target)
      .map(({ actor, action, detail }) => ({ actor, action, detail }));

  it('changes the password, keeps the calling session and ends every other one, with the API keys', async () => {
    const calling = await session('alice');
    const other = await session('alice');
    const third = await session('alice');
    const key = await board.board.apiKeys.generate('alice', 'bot', 'read');
    const bobs = await session('bob');

    const changed = await changePassword(calling.headers, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
    expect(changed.statusCode, changed.body).toBe(204);
    expect(changed.body).toBe('');
    expect(changed.headers['ratelimit-limit']).toBe('3');
    expect(changed.headers['ratelimit-policy']).toBe('3;w=600');

    expect((await getMe(board, calling.headers)).statusCode).toBe(200);
    const rotated = await refresh(board, calling.refreshToken);
    expect(rotated.statusCode).toBe(200);
    for (const ended of [other, third]) {
      expect((await getMe(board, ended.headers)).statusCode).toBe(401);
      expect((await refresh(board, ended.refreshToken)).statusCode).toBe(401);
    }
    const withKey = await board.app.inject({
      method: 'GET',
      url: `${API}/users/me`,
      headers: { 'x-baud-api-key': key.key },
    });
    expect(withKey.statusCode).toBe(401);
    expect((await getMe(board, bobs.headers)).statusCode).toBe(200);

    expect((await login(board, 'alice', PASSWORD, { remoteAddress: '192.0.2.2' })).response.statusCode).toBe(401);
    expect((await login(board, 'alice', NEW_PASSWORD, { remoteAddress: '192.0.2.2' })).response.statusCode).toBe(200);
    expect(await auditOf('alice')).toEqual([
      {
        actor: 'alice',
        action: 'user.password-changed',
        detail: 'changed by the user; other login sessions ended, API keys revoked',
      },
      { actor: null, action: 'user.api-key-created', detail: `key ${key.id} "bot" (read) generated` },
    ]);
  });

  it('refuses a wrong current password with 403, counts it as a failed login, and answers 429 beyond the limit', async () => {
    const { headers } = await session('bob', '198.51.100.1');
    const wrong = { currentPassword: 'not my password', newPassword: NEW_PASSWORD };
    for (const remaining of ['2', '1', '0']) {
      const refused = await changePassword(headers, wrong, '198.51.100.1');
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toEqual({
        type: '/_baud/api/v1/errors/403',
        title: 'Forbidden',
        status: 403,
        detail: 'The password is incorrect.',
        code: 'auth.password-incorrect',
      });
      expect(refused.headers['ratelimit-remaining']).toBe(remaining);
    }
    // Over the limit even the right password is not checked; a login to the account neither.
    const throttled = await changePassword(
      headers,
      { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
      '198.51.100.1',
    );
    expect(throttled.statusCode).toBe(429);
    expect(throttled.headers['retry-after']).toBe('600');
    expect(throttled.json().code).toBe('rate-limit.exceeded');
    expect((await login(board, 'bob', PASSWORD, { remoteAddress: '198.51.100.2' })).response.statusCode).toBe(429);
    expect(await auditOf('bob')).toEqual([]);

    clock.advance(600_000);
    const allowed = await changePassword(
      headers,
      { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
      '198.51.100.1',
    );
    expect(allowed.statusCode).toBe(204);
  });

  it('refuses a new password that breaks the rules with 400, before spending an attempt', async () => {
    const { headers } = await session('carol', '203.0.113.1');
    for (let attempt = 0; attempt < 4; attempt += 1) {
      const refused = await changePassword(
        headers,
        { currentPassword: 'wrong too', newPassword: 'short' },
        '203.0.113.1',
      );
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toEqual({
        type: '/_baud/api/v1/errors/400',
        title: 'Bad Request',
        status: 400,
        detail: 'password must be at least 8 characters',
        code: 'user.password-too-short',
        errors: [{ pointer: '/newPassword', message: 'must be at least 8 characters' }],
      });
    }
    const schemaRefused = await changePassword(headers, { currentPassword: PASSWORD }, '203.0.113.1');
    expect(schemaRefused.statusCode).toBe(400);
    expect(schemaRefused.json().code).toBe('request.invalid-body');
    // None of those counted: the password is unchanged and the right one still gets through.
    expect((await login(board, 'carol', PASSWORD, { remoteAddress: '203.0.113.2' })).response.statusCode).toBe(200);
    const changed = await changePassword(
      headers,
      { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
      '203.0.113.1',
    );
    expect(changed.statusCode).toBe(204);
    expect(changed.headers['ratelimit-remaining']).toBe('3');
  });

  it('refuses an API key with 403 and anonymous callers with 401', async () => {
    const key = await board.board.apiKeys.generate('dave', 'bot', 'read,write');
    const refused = await changePassword(
      { 'x-baud-api-key': key.key },
      { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
    );
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({
      type: '/_baud/api/v1/errors/403',
      title: 'Forbidden',
      status: 403,
      detail: 'Only a login session may change the password, not an API key: log in and send its access token.',
      code: 'account.login-session-required',
    });
    expect((await changePassword({}, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD })).statusCode).toBe(401);
    // The key was not revoked: nothing changed.
    const stillThere = await board.app.inject({
      method: 'GET',
      url: `${API}/users/me`,
      headers: { 'x-baud-api-key': key.key },
    });
    expect(stillThere.statusCode).toBe(200);
  });

  it('lets exactly one of two racing changes win; the other finds its current password gone', async () => {
    const first = await session('erin', '192.0.2.50');
    const second = await session('erin', '192.0.2.50');
    const answers = await Promise.all([
      changePassword(first.headers, { currentPassword: PASSWORD, newPassword: 'first new password' }, '192.0.2.50'),
      changePassword(second.headers, { currentPassword: PASSWORD, newPassword: 'second new password' }, '192.0.2.50'),
    ]);
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([204, 403]);
    const winner = answers[0]?.statusCode === 204 ? 0 : 1;
    const [winnerSession, loserSession] = winner === 0 ? [first, second] : [second, first];
    const winningPassword = winner === 0 ? 'first new password' : 'second new password';
    const losingPassword = winner === 0 ? 'second new password' : 'first new password';
    expect((await getMe(board, winnerSession.headers)).statusCode).toBe(200);
    expect((await getMe(board, loserSession.headers)).statusCode).toBe(401);
    expect((await login(board, 'erin', losingPassword, { remoteAddress: '192.0.2.51' })).response.statusCode).toBe(401);
    expect((await login(board, 'erin', winningPassword, { remoteAddress: '192.0.2.51' })).response.statusCode).toBe(
      200,
    );
    expect((await auditOf('erin')).map((entry) => entry.action)).toEqual(['user.password-changed']);
  });

  it('keeps no login that raced a password change: one that checked the old password is not recorded after it', async () => {
    await board.board.credentials.createAccount({ username: 'hank', password: PASSWORD });
    const users = createUserStore(board.board.db, createIdentityChanges());
    const before = await users.findLoginCredentials('hank');
    const calling = await session('hank', '192.0.2.60');
    const answers = await Promise.all([
      changePassword(calling.headers, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }, '192.0.2.60'),
      // Two: the account's window of the login throttle holds three attempts here.
      ...Array.from({ length: 2 }, (_, index) =>
        login(board, 'hank', PASSWORD, { remoteAddress: `192.0.2.${61 + index}` }),
      ),
    ]);
    expect(answers[0]?.statusCode).toBe(204);
    // Whichever logins ran first, the change ended them or they were refused: only its own session is left.
    const listed = await listSessions(calling.headers);
    expect(listed.json().data.map((live: { current: boolean }) => live.current)).toEqual([true]);
    // The step that decides, without the timing: a login that verified the old hash counts nothing now.
    const at = clock.now().toISOString();
    const recorded = await users.transaction((trx) =>
      users.recordLogin(trx, before?.id ?? 0, at, before?.passwordHash ?? ''),
    );
    expect(recorded).toBe(false);
  });

  it('lists the live login sessions with the current one marked, oldest first', async () => {
    const older = await session('fred');
    clock.advance(1000);
    const newer = await session('fred');
    const listed = await listSessions(newer.headers);
    expect(listed.statusCode).toBe(200);
    const body = listed.json();
    expect(body.meta).toEqual({ count: 2, limit: 10, nextCursor: null });
    expect(body.pagination).toEqual({ next: null });
    const [first, second] = body.data;
    expect(first).toEqual({
      id: expect.any(String),
      createdAt: new Date(clock.now().getTime() - 1000).toISOString(),
      lastSeenAt: new Date(clock.now().getTime() - 1000).toISOString(),
      current: false,
      via: 'api',
    });
    expect(second).toMatchObject({ createdAt: clock.now().toISOString(), current: true, via: 'api' });
    expect((await listSessions(older.headers)).json().data.map((item: { current: boolean }) => item.current)).toEqual([
      true,
      false,
    ]);

    await endSession(older.headers, first.id);
    expect((await listSessions(newer.headers)).json().data).toEqual([second]);

    // A session the terminal began says so (the column is the terminal's to set).
    const { userId } = (await board.board.users.getUser('fred')) as { userId: number };
    const at = clock.now().toISOString();
    await board.board.db
      .insertInto('refreshFamilies')
      .values({
        id: 'terminal-session-of-fred',
        userId,
        createdAt: at,
        expiresAt: new Date(clock.now().getTime() + 86_400_000).toISOString(),
        lastActivityAt: at,
        lastAction: 'Logging in',
        isSecure: 1,
        clientAddress: '192.0.2.9',
        revokedAt: null,
        via: 'terminal',
      })
      .execute();
    expect((await listSessions(newer.headers)).json().data.map((item: { via: string }) => item.via)).toEqual([
      'api',
      'terminal',
    ]);
  });

  it('ends one of your sessions at once: its access token and refresh token are refused', async () => {
    const keep = await session('gina');
    const lose = await session('gina');
    const loseId = (await listSessions(lose.headers)).json().data.find((item: { current: boolean }) => item.current).id;
    expect((await getMe(board, lose.headers)).statusCode).toBe(200);
    const ended = await endSession(keep.headers, loseId);
    expect(ended.statusCode).toBe(204);
    expect(ended.body).toBe('');
    expect((await getMe(board, lose.headers)).statusCode).toBe(401);
    expect((await refresh(board, lose.refreshToken)).statusCode).toBe(401);
    expect((await getMe(board, keep.headers)).statusCode).toBe(200);
    // Ended already: it is no longer a live session of yours.
    expect((await endSession(keep.headers, loseId)).statusCode).toBe(404);

    // The session of the request itself may be ended too: a logout from here, cookie aside.
    const keepId = (await listSessions(keep.headers)).json().data[0].id;
    expect((await endSession(keep.headers, keepId)).statusCode).toBe(204);
    expect((await getMe(board, keep.headers)).statusCode).toBe(401);
    expect((await refresh(board, keep.refreshToken)).statusCode).toBe(401);
  });

  it("answers 404 alike for an unknown id and for someone else's session, and leaves theirs alone", async () => {
    const mine = await session('gina');
    const theirs = await session('bob', '192.0.2.77', NEW_PASSWORD);
    const theirId = (await listSessions(theirs.headers))
      .json()
      .data.find((item: { current: boolean }) => item.current).id;
    const expected = {
      type: '/_baud/api/v1/errors/404',
      title: 'Not Found',
      status: 404,
      detail: 'You have no live login session with this id.',
      code: 'account.session-not-found',
    };
    for (const id of [theirId, '00000000-0000-4000-8000-000000000000', 'not-a-session']) {
      const refused = await endSession(mine.headers, id);
      expect(refused.statusCode).toBe(404);
      expect(refused.json()).toEqual(expected);
    }
    expect((await getMe(board, theirs.headers)).statusCode).toBe(200);
    expect((await listSessions({})).statusCode).toBe(401);
  });
});

describeEachDialect('an ended session on another node', (dialect) => {
  const clock = fakeClock();
  const nodes = twoNodesOfOneBoard(dialect, clock);
  const statusOn = async (node: BaudApp, headers: Record<string, string>) =>
    (await node.inject({ method: 'GET', url: `${API}/users/me`, headers })).statusCode;

  it('is refused on this node at once and on the other within the caller cache bound', async () => {
    await nodes.nodeA.board.credentials.createAccount({ username: 'roamer', password: PASSWORD });
    const kept = bearer((await login(nodes.nodeA, 'roamer')).accessToken);
    const ended = bearer((await login(nodes.nodeA, 'roamer')).accessToken);
    const sessions = await nodes.nodeA.app.inject({ method: 'GET', url: `${API}/users/me/sessions`, headers: ended });
    const endedId = sessions.json().data.find((item: { current: boolean }) => item.current).id;
    // Both nodes have seen (and remember) the session's caller.
    expect(await statusOn(nodes.nodeA.app, ended)).toBe(200);
    expect(await statusOn(nodes.nodeB, ended)).toBe(200);

    const deleted = await nodes.nodeA.app.inject({
      method: 'DELETE',
      url: `${API}/users/me/sessions/${endedId}`,
      headers: kept,
    });
    expect(deleted.statusCode).toBe(204);
    expect(await statusOn(nodes.nodeA.app, ended)).toBe(401);
    clock.advance(CALLER_CACHE_MAX_AGE_MS - 1);
    expect(await statusOn(nodes.nodeB, ended)).toBe(200);
    clock.advance(1);
    expect(await statusOn(nodes.nodeB, ended)).toBe(401);
    expect(await statusOn(nodes.nodeB, kept)).toBe(200);
  });
});
