import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REGISTRATION_WINDOW_SECONDS, REGISTRATIONS_PER_ADDRESS } from '../../src/auth/registration-service.js';
import { anonymousCaller, type UserCaller } from '../../src/caller.js';
import type { Dialect } from '../../src/db/database.js';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';
import { API, bearer, getMe, login, PASSWORD } from './auth-helpers.js';

let nextAddress = 1;
/** A client address of its own, so that the per-address limit of one test leaves the others alone. */
const freshAddress = () => `10.0.${Math.floor(nextAddress / 250)}.${(nextAddress++ % 250) + 1}`;

function register(board: TestBoard, payload: Record<string, unknown>, remoteAddress = freshAddress()) {
  return board.app.inject({ method: 'POST', url: `${API}/auth/register`, payload, remoteAddress });
}

async function boardWith(dialect: Dialect, users: Record<string, unknown>, general: Record<string, unknown> = {}) {
  return createTestBoard(dialect, { clock: fakeClock(), config: { users, general } });
}

describeEachDialect('registration', (dialect) => {
  describe('with users.registration: approval (the default)', () => {
    let board: TestBoard;
    beforeAll(async () => {
      board = await createTestBoard(dialect, { clock: fakeClock() });
    });
    afterAll(() => board.close());

    it('says so in /system/info', async () => {
      const info = await board.app.inject({ method: 'GET', url: `${API}/system/info` });
      expect(info.json()).toMatchObject({ closedSystem: false, registration: 'approval' });
    });

    it('answers 202 pending; the account joins no group and cannot log in yet', async () => {
      const response = await register(board, {
        username: 'Newcomer',
        password: PASSWORD,
        email: 'new@example.org',
        realName: ' New Comer ',
        note: 'Called the old board in 1994.',
      });
      expect(response.statusCode).toBe(202);
      expect(response.json()).toEqual({ username: 'Newcomer', status: 'pending' });
      expect(await board.board.users.getUser('newcomer')).toMatchObject({ status: 'pending', groups: [] });
      const row = await board.board.db
        .selectFrom('users')
        .selectAll()
        .where('usernameKey', '=', 'newcomer')
        .executeTakeFirst();
      expect(row).toMatchObject({
        realName: 'New Comer',
        emailAddress: 'new@example.org',
        registrationNote: 'Called the old board in 1994.',
      });
    });

    it('refuses a pending account with 403 only after the right password; a wrong one is the usual 401', async () => {
      const right = await login(board, 'newcomer');
      expect(right.response.statusCode).toBe(403);
      expect(right.response.json()).toEqual({
        type: '/_baud/api/v1/errors/403',
        title: 'Forbidden',
        status: 403,
        detail: 'This account awaits approval by the sysop.',
        code: 'auth.account-pending',
      });
      expect(right.refreshToken).toBeUndefined();
      const wrong = await login(board, 'newcomer', 'not the password');
      const unknown = await login(board, 'nobody-at-all', 'not the password');
      expect(wrong.response.statusCode).toBe(401);
      expect(wrong.response.json()).toEqual(unknown.response.json());
    });

    it('shows an application to sysops only: to members its name is unknown, and it is no member in /system/stats', async () => {
      const member = await board.userWithToken('member');
      const sysop = await board.userWithToken('profilesysop', { groups: ['sysops'] });
      const profile = (username: string, auth: Record<string, string>) =>
        board.app.inject({ method: 'GET', url: `${API}/users/${username}`, headers: auth });
      const applicant = await profile('newcomer', member.auth);
      const unknown = await profile('nobody-at-all', member.auth);
      expect(applicant.statusCode).toBe(404);
      expect(applicant.json()).toEqual({ ...unknown.json(), detail: 'No user named "newcomer".' });
      expect((await profile('newcomer', sysop.auth)).json()).toMatchObject({ username: 'Newcomer' });
      const stats = await board.app.inject({ method: 'GET', url: `${API}/system/stats`, headers: member.auth });
      const members = await board.board.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('usernameKey', '<>', 'newcomer')
        .executeTakeFirstOrThrow();
      expect(stats.json().totalUsers).toBe(Number(members.count));
    });

    it('refuses an API key made for a pending account', async () => {
      const key = await board.board.apiKeys.generate('newcomer', 'early bot', 'read');
      expect((await getMe(board, { 'x-baud-api-key': key.key })).statusCode).toBe(401);
    });

    it('tells sysops, and only sysops, with a user.registered event', async () => {
      const events = await board.board.events.readAfter(0, 1000);
      const registered = events.filter((event) => event.type === 'user.registered');
      expect(registered.map((event) => event.data)).toEqual([
        { username: 'Newcomer', status: 'pending', createdAt: expect.any(String) },
      ]);
      const [event] = registered;
      if (!event) throw new Error('no event');
      const callerNamed = async (username: string, groups: string[]): Promise<UserCaller> => {
        const user = await board.board.users.loadCallerUser((await board.userWithToken(username, { groups })).userId);
        if (!user) throw new Error(`no user ${username}`);
        return { kind: 'user', user, via: 'token', scopes: new Set(['read', 'write']), isSecure: false, session: null };
      };
      expect(board.board.mayCallerSee(await callerNamed('eventsysop', ['sysops']), event)).toBe(true);
      expect(board.board.mayCallerSee(await callerNamed('eventmember', []), event)).toBe(false);
      expect(board.board.mayCallerSee(anonymousCaller(false), event)).toBe(false);
    });

    it('records the registration in the audit log', async () => {
      const entries = await board.board.db
        .selectFrom('auditLog')
        .selectAll()
        .where('action', '=', 'user.registered')
        .execute();
      expect(entries).toEqual([
        expect.objectContaining({ actor: 'Newcomer', target: 'Newcomer', detail: expect.stringContaining('pending') }),
      ]);
    });

    it('answers 409 for a name taken in any case, and 400 with errors for bad fields', async () => {
      expect((await register(board, { username: 'NEWCOMER', password: PASSWORD })).statusCode).toBe(409);
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ username: '12345', password: PASSWORD }, '/username'],
        [{ username: ' spaced', password: PASSWORD }, '/username'],
        [{ username: 'x', password: PASSWORD }, '/username'],
        [{ username: 'shortpass', password: 'short' }, '/password'],
        [{ username: 'bademail', password: PASSWORD, email: 'not an address' }, '/body/email'],
        [{ username: 'longnote', password: PASSWORD, note: 'n'.repeat(501) }, '/body/note'],
        [{ username: 'longname', password: PASSWORD, realName: 'r'.repeat(65) }, '/body/realName'],
        [{ username: 'extra', password: PASSWORD, isSysop: true }, '/body/isSysop'],
        [{ password: PASSWORD }, '/body/username'],
      ];
      for (const [payload, pointer] of cases) {
        const response = await register(board, payload);
        expect(response.statusCode, JSON.stringify(payload)).toBe(400);
        expect(response.json().errors.map((error: { pointer: string }) => error.pointer)).toContain(pointer);
      }
      const names = (await board.board.users.listUsers()).map((user) => user.username);
      expect(names).not.toEqual(expect.arrayContaining(['shortpass', 'bademail', 'longnote', 'extra']));
    });

    it('gives one of several racing registrations of one name a 202 and the others 409', async () => {
      const responses = await Promise.all(
        ['racer', 'Racer', 'RACER', 'rAcEr'].map((username) => register(board, { username, password: PASSWORD })),
      );
      expect(responses.map((response) => response.statusCode).sort()).toEqual([202, 409, 409, 409]);
      expect(
        (await board.board.users.listUsers()).filter((user) => user.username.toLowerCase() === 'racer'),
      ).toHaveLength(1);
      const audited = await board.board.db
        .selectFrom('auditLog')
        .select('target')
        .where('action', '=', 'user.registered')
        .execute();
      expect(audited.filter((entry) => entry.target.toLowerCase() === 'racer')).toHaveLength(1);
    });
  });

  describe('the limit per address', () => {
    const clock = fakeClock();
    let board: TestBoard;
    beforeAll(async () => {
      board = await createTestBoard(dialect, { clock });
    });
    afterAll(() => board.close());

    it(`accepts ${REGISTRATIONS_PER_ADDRESS} an hour from one address, then 429 with Retry-After; refused ones do not count`, async () => {
      const address = '192.0.2.7';
      await board.board.credentials.createAccount({ username: 'taken', password: PASSWORD });
      expect((await register(board, { username: 'taken', password: PASSWORD }, address)).statusCode).toBe(409);
      expect((await register(board, { username: 'short', password: 'short' }, address)).statusCode).toBe(400);
      for (let i = 1; i <= REGISTRATIONS_PER_ADDRESS; i += 1) {
        expect((await register(board, { username: `joiner${i}`, password: PASSWORD }, address)).statusCode).toBe(202);
      }
      clock.advance(10 * 60_000);
      const refused = await register(board, { username: 'onetoomany', password: PASSWORD }, address);
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['retry-after']).toBe(String(REGISTRATION_WINDOW_SECONDS - 600));
      expect(
        await board.board.db
          .selectFrom('users')
          .select('id')
          .where('usernameKey', '=', 'onetoomany')
          .executeTakeFirst(),
      ).toBeUndefined();
      // Refused before its fields are looked at or its password hashed: over the limit, a bad request is a 429 too.
      expect((await register(board, { username: 'short', password: 'short' }, address)).statusCode).toBe(429);
      expect((await register(board, { username: 'elsewhere', password: PASSWORD }, '192.0.2.8')).statusCode).toBe(202);
      // A login prunes the login throttle's windows that are over (15 minutes), not this one.
      clock.advance(10 * 60_000);
      expect((await login(board, 'taken')).response.statusCode).toBe(200);
      expect((await register(board, { username: 'onetoomany', password: PASSWORD }, address)).statusCode).toBe(429);
      clock.advance((REGISTRATION_WINDOW_SECONDS - 1200) * 1000);
      expect((await register(board, { username: 'onetoomany', password: PASSWORD }, address)).statusCode).toBe(202);
    });

    it(`accepts exactly ${REGISTRATIONS_PER_ADDRESS} of more registrations racing from one address`, async () => {
      const address = '192.0.2.99';
      const racing = Array.from({ length: REGISTRATIONS_PER_ADDRESS + 4 }, (_, i) =>
        register(board, { username: `racer${i}`, password: PASSWORD }, address),
      );
      const statuses = (await Promise.all(racing)).map((response) => response.statusCode).sort();
      expect(statuses).toEqual([...Array(REGISTRATIONS_PER_ADDRESS).fill(202), 429, 429, 429, 429]);
      const { count } = await board.board.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('usernameKey', 'like', 'racer%')
        .executeTakeFirstOrThrow();
      expect(Number(count)).toBe(REGISTRATIONS_PER_ADDRESS);
    });
  });

  it('with users.registration: open, answers 201 with Location and the account logs in at once', async () => {
    const board = await boardWith(dialect, { registration: 'open' });
    try {
      const response = await register(board, { username: 'opendoor', password: PASSWORD });
      expect(response.statusCode).toBe(201);
      expect(response.headers.location).toBe(`${API}/users/opendoor`);
      expect(response.json()).toEqual({ username: 'opendoor', status: 'active' });
      const { accessToken } = await login(board, 'opendoor');
      expect((await getMe(board, bearer(accessToken))).json()).toMatchObject({ groups: ['users'] });
    } finally {
      await board.close();
    }
  });

  it('with users.registration: closed, or general.closedSystem, answers 403 and writes nothing', async () => {
    for (const [users, general] of [
      [{ registration: 'closed' }, {}],
      [{ registration: 'open' }, { closedSystem: true }],
    ] as const) {
      const board = await boardWith(dialect, users, general);
      try {
        const response = await register(board, { username: 'knocking', password: PASSWORD });
        expect(response.statusCode).toBe(403);
        expect(response.json().detail).toBe('This board takes no registrations; ask the sysop for an account.');
        expect((await board.app.inject({ method: 'GET', url: `${API}/system/info` })).json().registration).toBe(
          'closed',
        );
        expect(await board.board.users.countUsers()).toBe(0);
      } finally {
        await board.close();
      }
    }
  });
});
