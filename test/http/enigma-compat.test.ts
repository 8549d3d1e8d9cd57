import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertImportedApiKey } from '../auth/auth-helpers.js';
import { MESSAGE_TEST_CONFIG, seedMessages } from '../messages/message-fixture.js';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';

const BAUD = '/_baud/api/v1';
const ENIG = '/_enig/api/v1';
const PASSWORD = 'correct horse battery';
const ORIGIN = 'https://bot.example';
const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

/** Raw keys as ENiGMA½ issues them (64 hex digits, no `baud_` prefix), stored by the SHA-256 of the raw string. */
const ENIGMA_KEYS = {
  readWrite: 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90',
  read: 'f0e1d2c3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a5968778695a4b3c2d1e0f',
  revoked: '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
};

const COMPAT_CONFIG = {
  ...MESSAGE_TEST_CONFIG,
  contentServers: {
    web: {
      restApi: {
        ...MESSAGE_TEST_CONFIG.contentServers.web.restApi,
        enigmaCompat: true,
        corsAllowedOrigins: [ORIGIN],
      },
    },
  },
};

function setCookieHeaders(response: LightMyRequestResponse): string[] {
  return [response.headers['set-cookie'] ?? []].flat();
}

describeEachDialect('ENiGMA½ compatibility mode off (the default)', (dialect) => {
  let board: TestBoard;
  let baudKey: string;
  beforeAll(async () => {
    board = await createTestBoard(dialect);
    await board.board.credentials.createAccount({ username: 'alice', password: PASSWORD });
    baudKey = (await board.board.apiKeys.generate('alice', 'bot', 'read,write')).key;
  });
  afterAll(() => board.close());

  it('answers /_enig/api/v1 with the plain 404 problem of any unknown path', async () => {
    const response = await board.app.inject({ method: 'GET', url: `${ENIG}/system/info` });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
    expect(response.json()).toEqual({
      type: `${BAUD}/errors/404`,
      title: 'Not Found',
      status: 404,
      detail: `No resource at ${ENIG}/system/info.`,
      code: 'route.not-found',
    });
  });

  it('gives X-Enigma-API-Key no meaning', async () => {
    const response = await board.app.inject({
      method: 'GET',
      url: `${BAUD}/users/me`,
      headers: { 'x-enigma-api-key': baudKey },
    });
    expect(response.statusCode).toBe(401);
    expect(response.headers.vary).toBe('Authorization, X-Baud-API-Key');
  });
});

describeEachDialect('ENiGMA½ compatibility mode on', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  let aliceId: number;
  beforeAll(async () => {
    board = await createTestBoard(dialect, { config: COMPAT_CONFIG, clock });
    aliceId = (await board.board.credentials.createAccount({ username: 'alice', password: PASSWORD })).userId;
    await insertImportedApiKey(board, aliceId, ENIGMA_KEYS.readWrite, 'read,write');
    await insertImportedApiKey(board, aliceId, ENIGMA_KEYS.read, 'read');
    await insertImportedApiKey(board, aliceId, ENIGMA_KEYS.revoked, 'read,write', true);
    await seedMessages(board, 'general', 3);
  });
  afterAll(() => board.close());

  it('answers /_enig/api/v1/system/info exactly as /_baud/api/v1/system/info', async () => {
    const baud = await board.app.inject({ method: 'GET', url: `${BAUD}/system/info` });
    const enig = await board.app.inject({ method: 'GET', url: `${ENIG}/system/info` });
    expect(enig.statusCode).toBe(200);
    expect(enig.json()).toEqual(baud.json());
    expect(enig.headers.etag).toBe(baud.headers.etag);
    expect(enig.headers['cache-control']).toBe(baud.headers['cache-control']);
  });

  it('points Link and pagination.next of a page under the ENiGMA½ prefix, and following them works', async () => {
    const first = await board.app.inject({ method: 'GET', url: `${ENIG}/messages/areas/general/messages?limit=2` });
    expect(first.statusCode).toBe(200);
    const body = first.json();
    expect(body.data.map((message: { subject: string }) => message.subject)).toEqual(['Seed 1', 'Seed 2']);
    expect(body.pagination.next).toBe(body.meta.nextCursor);
    const next = `${ENIG}/messages/areas/general/messages?limit=2&cursor=${body.pagination.next}`;
    expect(first.headers.link).toBe(`<${next}>; rel="next"`);
    const second = await board.app.inject({ method: 'GET', url: next });
    expect(second.statusCode).toBe(200);
    expect(second.json().data.map((message: { subject: string }) => message.subject)).toEqual(['Seed 3']);
    expect(second.json().pagination.next).toBeNull();
    expect(second.headers.link).toBeUndefined();
  });

  it('pages newest first under the ENiGMA½ prefix too, its Link under that prefix', async () => {
    const first = await board.app.inject({
      method: 'GET',
      url: `${ENIG}/messages/areas/general/messages?order=newest&limit=2`,
    });
    expect(first.statusCode).toBe(200);
    const body = first.json();
    expect(body.data.map((message: { subject: string }) => message.subject)).toEqual(['Seed 3', 'Seed 2']);
    const next = `${ENIG}/messages/areas/general/messages?order=newest&limit=2&cursor=${body.pagination.next}`;
    expect(first.headers.link).toBe(`<${next}>; rel="next"`);
    const second = await board.app.inject({ method: 'GET', url: next });
    expect(second.json().data.map((message: { subject: string }) => message.subject)).toEqual(['Seed 1']);
    // A cursor is the same under either prefix: the baud prefix takes it, in its own order only.
    const underBaud = await board.app.inject({
      method: 'GET',
      url: `${BAUD}/messages/areas/general/messages?order=newest&limit=2&cursor=${body.pagination.next}`,
    });
    expect(underBaud.json().data).toEqual(second.json().data);
  });

  it('gives problems under the ENiGMA½ prefix a type under that prefix, and baud’s elsewhere', async () => {
    const unknownArea = await board.app.inject({ method: 'GET', url: `${ENIG}/messages/areas/nope/messages` });
    expect(unknownArea.statusCode).toBe(404);
    expect(unknownArea.headers['content-type']).toBe(PROBLEM_TYPE);
    expect(unknownArea.json().type).toBe(`${ENIG}/errors/404`);
    const unknownPath = await board.app.inject({ method: 'GET', url: `${ENIG}/no/such/thing` });
    expect(unknownPath.json()).toMatchObject({ type: `${ENIG}/errors/404`, status: 404 });
    const wrongMethod = await board.app.inject({ method: 'DELETE', url: `${ENIG}/system/info` });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers.allow).toBe('GET, HEAD');
    expect(wrongMethod.json().type).toBe(`${ENIG}/errors/405`);
    const badJson = await board.app.inject({
      method: 'POST',
      url: `${ENIG}/auth/login`,
      headers: { 'content-type': 'application/json' },
      payload: '{',
    });
    expect(badJson.statusCode).toBe(400);
    expect(badJson.json().type).toBe(`${ENIG}/errors/400`);
    // Refused by the router before any route or hook runs.
    const brokenEscape = await board.app.inject({ method: 'GET', url: `${ENIG}/messages/%zz` });
    expect(brokenEscape.statusCode).toBe(400);
    expect(brokenEscape.json().type).toBe(`${ENIG}/errors/400`);
    expect(brokenEscape.headers.vary).toBe('Authorization, X-Enigma-API-Key, X-Baud-API-Key');
    const baud = await board.app.inject({ method: 'GET', url: `${BAUD}/messages/areas/nope/messages` });
    expect(baud.json().type).toBe(`${BAUD}/errors/404`);
  });

  it('logs in with the enigma_refresh cookie on its own path, refreshes with it and clears it on logout', async () => {
    const login = await board.app.inject({
      method: 'POST',
      url: `${ENIG}/auth/login`,
      payload: { username: 'alice', password: PASSWORD },
    });
    expect(login.statusCode).toBe(200);
    expect(login.headers['cache-control']).toBe('no-store');
    expect(login.json()).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 900 });
    const [loginCookie, ...others] = setCookieHeaders(login);
    expect(others).toEqual([]);
    expect(loginCookie).toMatch(
      /^enigma_refresh=[A-Za-z0-9_-]{43}; Max-Age=2592000; Path=\/_enig\/api\/v1\/auth; HttpOnly; SameSite=Strict$/,
    );
    const firstToken = login.cookies.find((cookie) => cookie.name === 'enigma_refresh')?.value ?? '';

    // baud's cookie name means nothing under ENiGMA½'s prefix.
    const wrongName = await board.app.inject({
      method: 'POST',
      url: `${ENIG}/auth/refresh`,
      cookies: { baud_refresh: firstToken },
    });
    expect(wrongName.statusCode).toBe(401);
    expect(wrongName.json().type).toBe(`${ENIG}/errors/401`);

    const refreshed = await board.app.inject({
      method: 'POST',
      url: `${ENIG}/auth/refresh`,
      cookies: { enigma_refresh: firstToken },
    });
    expect(refreshed.statusCode).toBe(200);
    const secondToken = refreshed.cookies.find((cookie) => cookie.name === 'enigma_refresh')?.value ?? '';
    expect(secondToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(secondToken).not.toBe(firstToken);
    expect(setCookieHeaders(refreshed).some((header) => header.startsWith('baud_refresh='))).toBe(false);

    // The access token is the board's, whichever prefix issued it.
    const me = await board.app.inject({
      method: 'GET',
      url: `${BAUD}/users/me`,
      headers: { authorization: `Bearer ${refreshed.json().accessToken}` },
    });
    expect(me.statusCode).toBe(200);

    const logout = await board.app.inject({
      method: 'POST',
      url: `${ENIG}/auth/logout`,
      cookies: { enigma_refresh: secondToken },
    });
    expect(logout.statusCode).toBe(204);
    expect(setCookieHeaders(logout)).toEqual([
      'enigma_refresh=; Max-Age=0; Path=/_enig/api/v1/auth; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict',
    ]);
    const afterLogout = await board.app.inject({
      method: 'POST',
      url: `${ENIG}/auth/refresh`,
      cookies: { enigma_refresh: secondToken },
    });
    expect(afterLogout.statusCode).toBe(401);
  });

  it('keeps baud_refresh under baud’s own prefix', async () => {
    const login = await board.app.inject({
      method: 'POST',
      url: `${BAUD}/auth/login`,
      payload: { username: 'alice', password: PASSWORD },
    });
    expect(setCookieHeaders(login)).toEqual([expect.stringMatching(/^baud_refresh=.*; Path=\/_baud\/api\/v1\/auth;/)]);
  });

  it('takes a key ENiGMA½ issued in X-Enigma-API-Key, X-Baud-API-Key or as a Bearer value under its prefix', async () => {
    for (const headers of [
      { 'x-enigma-api-key': ENIGMA_KEYS.readWrite },
      { 'x-baud-api-key': ENIGMA_KEYS.readWrite },
      { authorization: `Bearer ${ENIGMA_KEYS.readWrite}` },
    ]) {
      const response = await board.app.inject({ method: 'GET', url: `${ENIG}/users/me`, headers });
      expect(response.statusCode).toBe(200);
      expect(response.json().username).toBe('alice');
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers.vary).toBe('Origin, Authorization, X-Enigma-API-Key, X-Baud-API-Key');
    }
    const write = await board.app.inject({
      method: 'PUT',
      url: `${ENIG}/users/me`,
      headers: { 'x-enigma-api-key': ENIGMA_KEYS.readWrite },
      payload: { location: 'Bot Land' },
    });
    expect(write.statusCode).toBe(200);
    expect(write.json().location).toBe('Bot Land');
  });

  it('gives X-Enigma-API-Key no meaning under baud’s own prefix', async () => {
    const response = await board.app.inject({
      method: 'GET',
      url: `${BAUD}/users/me`,
      headers: { 'x-enigma-api-key': ENIGMA_KEYS.readWrite },
    });
    expect(response.statusCode).toBe(401);
    expect(response.json().type).toBe(`${BAUD}/errors/401`);
  });

  it('refuses a revoked ENiGMA½ key with 401', async () => {
    for (const headers of [
      { 'x-enigma-api-key': ENIGMA_KEYS.revoked },
      { authorization: `Bearer ${ENIGMA_KEYS.revoked}` },
    ]) {
      const response = await board.app.inject({ method: 'GET', url: `${ENIG}/users/me`, headers });
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer realm="baud", error="invalid_token"');
      expect(response.json()).toMatchObject({
        type: `${ENIG}/errors/401`,
        detail: 'The API key is unknown or revoked.',
      });
    }
  });

  it('refuses keys of no issuer’s shape', async () => {
    for (const headers of [
      { 'x-enigma-api-key': ENIGMA_KEYS.readWrite.toUpperCase() },
      { 'x-enigma-api-key': `${ENIGMA_KEYS.readWrite}0` },
      { 'x-enigma-api-key': 'x'.repeat(8000) },
    ]) {
      const response = await board.app.inject({ method: 'GET', url: `${ENIG}/users/me`, headers });
      expect(response.statusCode).toBe(401);
      expect(response.json().type).toBe(`${ENIG}/errors/401`);
    }
  });

  it('applies the key’s scope: a read key may not post', async () => {
    const headers = { 'x-enigma-api-key': ENIGMA_KEYS.read };
    expect((await board.app.inject({ method: 'GET', url: `${ENIG}/users/me`, headers })).statusCode).toBe(200);
    const post = await board.app.inject({
      method: 'POST',
      url: `${ENIG}/messages/areas/general/messages`,
      headers,
      payload: { subject: 'Hello', message: 'from a bot' },
    });
    expect(post.statusCode).toBe(403);
    expect(post.json().type).toBe(`${ENIG}/errors/403`);
  });

  it('answers a post under the ENiGMA½ prefix with a Location under it', async () => {
    const post = await board.app.inject({
      method: 'POST',
      url: `${ENIG}/messages/areas/general/messages`,
      headers: { 'x-enigma-api-key': ENIGMA_KEYS.readWrite },
      payload: { subject: 'Hello', message: 'from a bot' },
    });
    expect(post.statusCode).toBe(201);
    expect(post.headers.location).toBe(`${ENIG}/messages/${post.json().uuid}`);
    const read = await board.app.inject({ method: 'GET', url: post.headers.location as string });
    expect(read.statusCode).toBe(200);
    expect(read.json().subject).toBe('Hello');
  });

  it('allows X-Enigma-API-Key in a preflight under the ENiGMA½ prefix', async () => {
    const preflight = (url: string) =>
      board.app.inject({
        method: 'OPTIONS',
        url,
        headers: {
          origin: ORIGIN,
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'x-enigma-api-key',
        },
      });
    const enig = await preflight(`${ENIG}/users/me`);
    expect(enig.statusCode).toBe(204);
    expect(enig.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(enig.headers['access-control-allow-headers']).toBe(
      'Authorization, Content-Type, X-Enigma-API-Key, X-Baud-API-Key, Range, If-None-Match',
    );
    const baud = await preflight(`${BAUD}/users/me`);
    expect(baud.headers['access-control-allow-headers']).toBe(
      'Authorization, Content-Type, X-Baud-API-Key, Range, If-None-Match',
    );
  });

  it('keeps the OpenAPI document and docs baud’s only', async () => {
    const document = await board.app.inject({ method: 'GET', url: `${BAUD}/openapi.json` });
    const paths = Object.keys(document.json().paths);
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.filter((path) => !path.startsWith(`${BAUD}/`))).toEqual([]);
    expect((await board.app.inject({ method: 'GET', url: `${ENIG}/openapi.json` })).statusCode).toBe(404);
  });
});

describe('ENiGMA½ compatibility mode with the API switched off', () => {
  it('answers nothing under /_enig/api/v1 either', async () => {
    const board = await createTestBoard('sqlite', {
      config: { contentServers: { web: { restApi: { enabled: false, enigmaCompat: true } } } },
    });
    try {
      const response = await board.app.inject({ method: 'GET', url: `${ENIG}/system/info` });
      expect(response.statusCode).toBe(404);
      expect(response.json().type).toBe(`${BAUD}/errors/404`);
    } finally {
      await board.close();
    }
  });
});
