import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';
import {
  API,
  bearer,
  getMe,
  login,
  logout,
  PASSWORD,
  refresh,
  refreshCookieOf,
  refreshSetCookieHeader,
} from './auth-helpers.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

describeEachDialect('auth routes', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect, { clock });
    await board.board.credentials.createAccount({ username: 'alice', password: PASSWORD });
    await board.board.credentials.createAccount({ username: 'bob', password: PASSWORD });
    await board.board.credentials.createAccount({ username: 'carol', password: PASSWORD });
  });
  afterAll(() => board.close());

  describe('POST /auth/login', () => {
    it('answers a token response and sets the refresh cookie', async () => {
      const { response, accessToken } = await login(board, 'alice');
      expect(response.statusCode).toBe(200);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.json()).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 900 });
      expect(refreshSetCookieHeader(response)).toMatch(
        /^baud_refresh=[A-Za-z0-9_-]{43}; Max-Age=2592000; Path=\/_baud\/api\/v1\/auth; HttpOnly; SameSite=Strict$/,
      );
      const me = await getMe(board, bearer(accessToken));
      expect(me.statusCode).toBe(200);
      expect(me.json()).toMatchObject({ username: 'alice', loginCount: 1, lastLogin: clock.now().toISOString() });
    });

    it('matches the username case-insensitively, records a call and bumps loginCount', async () => {
      const before = await board.board.db.selectFrom('calls').selectAll().execute();
      const { response, accessToken } = await login(board, 'ALICE');
      expect(response.statusCode).toBe(200);
      const calls = await board.board.db.selectFrom('calls').selectAll().execute();
      expect(calls).toHaveLength(before.length + 1);
      expect((await getMe(board, bearer(accessToken))).json().loginCount).toBe(2);
    });

    it('answers the same 401 for a wrong password and an unknown user', async () => {
      const wrong = await login(board, 'bob', 'not the password');
      const unknown = await login(board, 'nobody-here', 'not the password');
      for (const response of [wrong.response, unknown.response]) {
        expect(response.statusCode).toBe(401);
        expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
        expect(response.headers['www-authenticate']).toBe('Bearer realm="baud"');
        expect(response.headers['set-cookie']).toBeUndefined();
      }
      expect(wrong.response.json()).toEqual(unknown.response.json());
      expect(wrong.response.json()).toEqual({
        type: '/_baud/api/v1/errors/401',
        title: 'Unauthorized',
        status: 401,
        detail: 'The username or password is incorrect.',
        code: 'auth.invalid-credentials',
      });
    });

    it('refuses a disabled user with the same 401', async () => {
      await board.board.credentials.createAccount({ username: 'dora', password: PASSWORD });
      await board.board.users.setDisabled('dora', true);
      const { response } = await login(board, 'dora');
      expect(response.statusCode).toBe(401);
      expect(response.json().detail).toBe('The username or password is incorrect.');
    });

    it.each([
      ['a missing password', { username: 'alice' }, '/body/password'],
      ['an empty username', { username: '', password: PASSWORD }, '/body/username'],
      ['an unknown field', { username: 'alice', password: PASSWORD, remember: true }, '/body/remember'],
      ['an object as password', { username: 'alice', password: { value: 'x' } }, '/body/password'],
    ])('answers 400 for %s', async (_name, payload, pointer) => {
      const response = await board.app.inject({ method: 'POST', url: `${API}/auth/login`, payload });
      expect(response.statusCode).toBe(400);
      expect(response.json().errors).toContainEqual({ pointer, message: expect.any(String) });
    });

    it('answers 400 for malformed JSON and 415 for a form body', async () => {
      const malformed = await board.app.inject({
        method: 'POST',
        url: `${API}/auth/login`,
        headers: { 'content-type': 'application/json' },
        payload: '{"username":',
      });
      expect(malformed.statusCode).toBe(400);
      const form = await board.app.inject({
        method: 'POST',
        url: `${API}/auth/login`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'username=alice&password=x',
      });
      expect(form.statusCode).toBe(415);
    });
  });

  describe('access tokens', () => {
    it('expire after 15 minutes', async () => {
      const { accessToken } = await login(board, 'bob');
      clock.advance(15 * MINUTE - 1000);
      expect((await getMe(board, bearer(accessToken))).statusCode).toBe(200);
      clock.advance(2000);
      const expired = await getMe(board, bearer(accessToken));
      expect(expired.statusCode).toBe(401);
      expect(expired.headers['www-authenticate']).toBe('Bearer realm="baud", error="invalid_token"');
    });

    it('refuses a tampered token', async () => {
      const { accessToken = '' } = await login(board, 'bob');
      const [header, payload, signature] = accessToken.split('.');
      const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString());
      const forged = Buffer.from(JSON.stringify({ ...claims, sub: '1' })).toString('base64url');
      expect((await getMe(board, bearer(`${header}.${forged}.${signature}`))).statusCode).toBe(401);
      const flipped = `${signature?.slice(0, -2)}${signature?.endsWith('AA') ? 'BB' : 'AA'}`;
      expect((await getMe(board, bearer(`${header}.${payload}.${flipped}`))).statusCode).toBe(401);
    });

    it('refuses an alg:none token', async () => {
      const nowSeconds = Math.floor(clock.now().getTime() / 1000);
      const unsigned = new UnsecuredJWT({ sid: 'x' })
        .setSubject('1')
        .setIssuer('baud')
        .setIssuedAt(nowSeconds)
        .setExpirationTime(nowSeconds + 600)
        .setJti('j')
        .encode();
      const response = await getMe(board, bearer(unsigned));
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toContain('invalid_token');
    });

    it('refuses a token signed with another secret', async () => {
      const nowSeconds = Math.floor(clock.now().getTime() / 1000);
      const foreign = await new SignJWT({ sid: 'x' })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject('1')
        .setIssuer('baud')
        .setIssuedAt(nowSeconds)
        .setExpirationTime(nowSeconds + 600)
        .setJti('j')
        .sign(new TextEncoder().encode('another secret that is long enough!!'));
      expect((await getMe(board, bearer(foreign))).statusCode).toBe(401);
    });

    it('refuses the token of a user disabled after login', async () => {
      await board.board.credentials.createAccount({ username: 'erin', password: PASSWORD });
      const { accessToken, refreshToken } = await login(board, 'erin');
      await board.board.users.setDisabled('erin', true);
      expect((await getMe(board, bearer(accessToken))).statusCode).toBe(401);
      expect((await refresh(board, refreshToken)).statusCode).toBe(401);
      await board.board.users.setDisabled('erin', false);
      // Disabling ended the session for good; logging in again starts a new one.
      expect((await refresh(board, refreshToken)).statusCode).toBe(401);
      expect((await login(board, 'erin')).response.statusCode).toBe(200);
    });
  });

  describe('POST /auth/refresh', () => {
    it('rotates: new token response and cookie, the old refresh token dies at once', async () => {
      const first = await login(board, 'carol');
      const rotated = await refresh(board, first.refreshToken);
      expect(rotated.statusCode).toBe(200);
      expect(rotated.json()).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 900 });
      expect(refreshSetCookieHeader(rotated)).toMatch(/; Max-Age=2592000; Path=\/_baud\/api\/v1\/auth; HttpOnly/);
      const second = refreshCookieOf(rotated);
      expect(second).toBeDefined();
      expect(second).not.toBe(first.refreshToken);
      expect((await getMe(board, bearer(rotated.json().accessToken))).statusCode).toBe(200);
      const third = refreshCookieOf(await refresh(board, second));
      expect(third).toBeDefined();
    });

    it('ignores a stale access token sent along with the refresh cookie', async () => {
      const first = await login(board, 'carol');
      clock.advance(16 * MINUTE);
      const response = await board.app.inject({
        method: 'POST',
        url: `${API}/auth/refresh`,
        headers: bearer(first.accessToken),
        cookies: { baud_refresh: first.refreshToken ?? '' },
      });
      expect(response.statusCode).toBe(200);
      expect((await getMe(board, bearer(response.json().accessToken))).statusCode).toBe(200);
    });

    it('ends access tokens of every session when the password changes', async () => {
      const { accessToken } = await login(board, 'alice');
      clock.advance(1000);
      await board.board.credentials.setPassword('alice', PASSWORD);
      expect((await getMe(board, bearer(accessToken))).statusCode).toBe(401);
    });

    it('revokes the whole family when a rotated token is presented again after the grace window', async () => {
      const first = await login(board, 'carol');
      const second = refreshCookieOf(await refresh(board, first.refreshToken));
      clock.advance(10_000);
      const reuse = await refresh(board, first.refreshToken);
      expect(reuse.statusCode).toBe(401);
      expect(reuse.json().detail).toBe('The refresh token is invalid, expired or revoked.');
      // The legitimate holder's newer token died with the family.
      expect((await refresh(board, second)).statusCode).toBe(401);
    });

    it('answers 401 without a cookie or with garbage', async () => {
      expect((await refresh(board, undefined)).statusCode).toBe(401);
      expect((await refresh(board, 'not-a-token')).statusCode).toBe(401);
      expect((await refresh(board, 'A'.repeat(43))).statusCode).toBe(401);
    });

    it('refuses a refresh token older than 30 days', async () => {
      const { refreshToken } = await login(board, 'carol');
      clock.advance(30 * DAY + 1000);
      expect((await refresh(board, refreshToken)).statusCode).toBe(401);
    });

    it('ends a family at its absolute lifetime however often it is refreshed', async () => {
      let { refreshToken } = await login(board, 'carol');
      // 3 × 29 days stays under 90 days; each refresh is well inside a token's 30 days.
      for (let round = 0; round < 3; round += 1) {
        clock.advance(29 * DAY);
        const response = await refresh(board, refreshToken);
        expect(response.statusCode).toBe(200);
        refreshToken = refreshCookieOf(response);
      }
      clock.advance(4 * DAY);
      expect((await refresh(board, refreshToken)).statusCode).toBe(401);
    });

    it('ends every family when the password changes', async () => {
      const { refreshToken } = await login(board, 'carol');
      clock.advance(1000);
      await board.board.credentials.setPassword('carol', PASSWORD);
      expect((await refresh(board, refreshToken)).statusCode).toBe(401);
    });
  });

  describe('POST /auth/logout', () => {
    it('revokes the family, clears the cookie and answers 204', async () => {
      const { refreshToken } = await login(board, 'bob');
      const response = await logout(board, refreshToken);
      expect(response.statusCode).toBe(204);
      expect(response.body).toBe('');
      expect(refreshSetCookieHeader(response)).toBe(
        'baud_refresh=; Max-Age=0; Path=/_baud/api/v1/auth; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict',
      );
      expect((await refresh(board, refreshToken)).statusCode).toBe(401);
    });

    it("kills the session's access token at once, not when it expires", async () => {
      const { accessToken, refreshToken } = await login(board, 'bob');
      expect((await getMe(board, bearer(accessToken))).statusCode).toBe(200);
      await logout(board, refreshToken);
      const response = await getMe(board, bearer(accessToken));
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer realm="baud", error="invalid_token"');
    });

    it('is idempotent: no cookie, an unknown cookie or a second logout are all 204', async () => {
      const { refreshToken } = await login(board, 'bob');
      expect((await logout(board, refreshToken)).statusCode).toBe(204);
      expect((await logout(board, refreshToken)).statusCode).toBe(204);
      expect((await logout(board, undefined)).statusCode).toBe(204);
      expect((await logout(board, 'garbage')).statusCode).toBe(204);
    });
  });

  describe('pruning', () => {
    it('deletes expired tokens and dead families at a later login', async () => {
      await login(board, 'bob');
      clock.advance(91 * DAY);
      await login(board, 'bob');
      const nowIso = clock.now().toISOString();
      const deadFamilies = await board.board.db
        .selectFrom('refreshFamilies')
        .select('id')
        .where((eb) => eb.or([eb('expiresAt', '<=', nowIso), eb('revokedAt', 'is not', null)]))
        .execute();
      expect(deadFamilies).toEqual([]);
      const expiredTokens = await board.board.db
        .selectFrom('refreshTokens')
        .select('id')
        .where('expiresAt', '<=', nowIso)
        .execute();
      expect(expiredTokens).toEqual([]);
    });
  });
});

describeEachDialect('auth cookies', (dialect) => {
  it('marks the refresh cookie Secure when restApi.secureCookies is set', async () => {
    const board = await createTestBoard(dialect, {
      config: { contentServers: { web: { restApi: { secureCookies: true } } } },
    });
    try {
      await board.board.credentials.createAccount({ username: 'alice', password: PASSWORD });
      const { response } = await login(board, 'alice');
      expect(refreshSetCookieHeader(response)).toMatch(/; HttpOnly; Secure; SameSite=Strict$/);
      const out = await logout(board, refreshCookieOf(response));
      expect(refreshSetCookieHeader(out)).toMatch(/; Secure; SameSite=Strict$/);
    } finally {
      await board.close();
    }
  });
});
