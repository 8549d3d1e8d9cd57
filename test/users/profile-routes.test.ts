import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API } from '../auth/auth-helpers.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

describeEachDialect('profile routes', (dialect) => {
  let board: TestBoard;
  let alice: { authorization: string };
  let sysop: { authorization: string };
  let bob: { authorization: string };
  let bobId: number;
  beforeAll(async () => {
    board = await createTestBoard(dialect);
    alice = (await board.userWithToken('alice')).auth;
    sysop = (await board.userWithToken('sysop', { groups: ['sysops'] })).auth;
    const created = await board.userWithToken('Bob');
    bob = created.auth;
    bobId = created.userId;
  });
  afterAll(() => board.close());

  const put = (headers: Record<string, string>, payload: unknown) =>
    board.app.inject({ method: 'PUT', url: `${API}/users/me`, headers, payload: payload as Record<string, unknown> });

  describe('GET /users/me', () => {
    it('returns every own-profile field', async () => {
      const response = await board.app.inject({ method: 'GET', url: `${API}/users/me`, headers: alice });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        userId: expect.any(Number),
        username: 'alice',
        groups: ['users'],
        realName: '',
        location: '',
        affiliations: '',
        emailAddress: '',
        webAddress: '',
        autoSignature: '',
        accountCreated: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        lastLogin: null,
        loginCount: 0,
        postCount: 0,
        uploadCount: 0,
        uploadBytes: 0,
        downloadCount: 0,
        downloadBytes: 0,
        achievementPoints: 0,
        minutesOnline: 0,
        totpEnabled: false,
        unreadMail: 0,
      });
    });

    it('answers 401 to an anonymous caller', async () => {
      const response = await board.app.inject({ method: 'GET', url: `${API}/users/me` });
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer realm="baud"');
    });
  });

  describe('PUT /users/me', () => {
    it('sets, trims and returns the fields', async () => {
      const response = await put(alice, {
        realName: '  Alice Liddell ',
        location: 'Oxford',
        affiliations: 'Wonderland',
        webAddress: 'https://example.org/alice',
        autoSignature: 'Down the rabbit hole\r\n-- alice',
      });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({
        realName: 'Alice Liddell',
        location: 'Oxford',
        affiliations: 'Wonderland',
        webAddress: 'https://example.org/alice',
        autoSignature: 'Down the rabbit hole\r\n-- alice',
      });
    });

    it('leaves fields that are not sent alone, and null or "" clears', async () => {
      await put(alice, { realName: 'Alice', location: 'Oxford' });
      const response = await put(alice, { realName: null, location: '' });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ realName: '', location: '', affiliations: 'Wonderland' });
      const row = await board.board.db
        .selectFrom('users')
        .selectAll()
        .where('username', '=', 'alice')
        .executeTakeFirstOrThrow();
      expect(row.realName).toBeNull();
      expect(row.location).toBeNull();
    });

    it('accepts an empty body as a no-op', async () => {
      const response = await put(alice, {});
      expect(response.statusCode).toBe(200);
      expect(response.json().affiliations).toBe('Wonderland');
    });

    it.each([
      ['realName', 64],
      ['location', 64],
      ['affiliations', 64],
      ['autoSignature', 512],
    ])('accepts %s of %i characters and refuses one more with 400', async (field, max) => {
      const ok = await put(bob, { [field]: 'é'.repeat(max) });
      expect(ok.statusCode).toBe(200);
      expect(ok.json()[field]).toBe('é'.repeat(max));
      const tooLong = await put(bob, { [field]: 'é'.repeat(max + 1) });
      expect(tooLong.statusCode).toBe(400);
      expect(tooLong.json()).toEqual({
        type: '/_baud/api/v1/errors/400',
        title: 'Bad Request',
        status: 400,
        detail: `body/${field} must be at most ${max} characters`,
        code: 'request.invalid-body',
        errors: [{ pointer: `/body/${field}`, message: `must be at most ${max} characters` }],
      });
      // Nothing half-applied: the previous value stays.
      const me = await board.app.inject({ method: 'GET', url: `${API}/users/me`, headers: bob });
      expect(me.json()[field]).toBe('é'.repeat(max));
    });

    it('accepts a webAddress of 256 characters and refuses 257', async () => {
      const base = 'https://example.org/';
      const ok = await put(bob, { webAddress: base + 'a'.repeat(256 - base.length) });
      expect(ok.statusCode).toBe(200);
      const tooLong = await put(bob, { webAddress: base + 'a'.repeat(257 - base.length) });
      expect(tooLong.statusCode).toBe(400);
      expect(tooLong.json().errors).toEqual([
        { pointer: '/body/webAddress', message: 'must be at most 256 characters' },
      ]);
    });

    it.each([
      'example.org',
      'ftp://example.org/',
      'javascript:alert(1)',
      'http://',
      'mailto:a@example.org',
    ])('refuses the webAddress %s with 400', async (webAddress) => {
      const response = await put(bob, { webAddress });
      expect(response.statusCode).toBe(400);
      expect(response.json().errors).toEqual([
        { pointer: '/body/webAddress', message: 'must be an http:// or https:// URL' },
      ]);
    });

    it('refuses control characters in single-line fields', async () => {
      const response = await put(bob, { realName: 'Bob\u0007' });
      expect(response.statusCode).toBe(400);
      expect(response.json().errors).toEqual([
        { pointer: '/body/realName', message: 'must not contain control characters' },
      ]);
    });

    it('refuses an unknown field with 400 and changes nothing', async () => {
      const response = await put(bob, { location: 'Elsewhere', emailAddress: 'bob@example.org' });
      expect(response.statusCode).toBe(400);
      expect(response.json().errors).toEqual([{ pointer: '/body/emailAddress', message: 'is not a known field' }]);
      const me = await board.app.inject({ method: 'GET', url: `${API}/users/me`, headers: bob });
      expect(me.json().location).toBe('é'.repeat(64));
    });

    it.each([
      // The app's ajv coerces scalars to strings (coerceTypes), so only non-coercible values are wrong types here.
      ['an object as a field', { realName: { first: 'x' } }],
      ['an array of two as a field', { realName: ['x', 'y'] }],
      ['a non-object body', ['realName']],
    ])('refuses %s with 400', async (_name, payload) => {
      expect((await put(bob, payload)).statusCode).toBe(400);
    });

    it('reports every bad field at once and applies none', async () => {
      const response = await put(bob, { realName: 'x'.repeat(65), webAddress: 'nope', location: 'Fine' });
      expect(response.statusCode).toBe(400);
      expect(response.json().errors.map((error: { pointer: string }) => error.pointer)).toEqual([
        '/body/realName',
        '/body/webAddress',
      ]);
      const me = await board.app.inject({ method: 'GET', url: `${API}/users/me`, headers: bob });
      expect(me.json().location).toBe('é'.repeat(64));
    });

    it('answers 401 to an anonymous caller', async () => {
      expect((await put({}, { realName: 'x' })).statusCode).toBe(401);
    });
  });

  describe('GET /users/:username', () => {
    beforeAll(async () => {
      await put(bob, { realName: 'Bob Builder', location: null, affiliations: '', webAddress: 'http://bob.example' });
    });

    it('shows the always fields and only the opt-in fields that are set, case-insensitively', async () => {
      const response = await board.app.inject({ method: 'GET', url: `${API}/users/BOB`, headers: alice });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        userId: bobId,
        username: 'Bob',
        accountCreated: expect.any(String),
        postCount: 0,
        achievementPoints: 0,
        realName: 'Bob Builder',
        webAddress: 'http://bob.example',
      });
    });

    it('adds the sysop-only fields for a sysop', async () => {
      const response = await board.app.inject({ method: 'GET', url: `${API}/users/bob`, headers: sysop });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        userId: bobId,
        username: 'Bob',
        accountCreated: expect.any(String),
        postCount: 0,
        achievementPoints: 0,
        realName: 'Bob Builder',
        webAddress: 'http://bob.example',
        groups: ['users'],
        emailAddress: '',
        lastLogin: null,
        loginCount: 0,
        uploadCount: 0,
        downloadCount: 0,
        minutesOnline: 0,
      });
    });

    it('answers 404 for an unknown user and 401 to an anonymous caller', async () => {
      const unknown = await board.app.inject({ method: 'GET', url: `${API}/users/nobody`, headers: alice });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().title).toBe('Not Found');
      const anonymous = await board.app.inject({ method: 'GET', url: `${API}/users/bob` });
      expect(anonymous.statusCode).toBe(401);
    });

    it('does not treat "me" specially for another method', async () => {
      const response = await board.app.inject({ method: 'DELETE', url: `${API}/users/me`, headers: alice });
      expect(response.statusCode).toBe(405);
    });
  });
});
