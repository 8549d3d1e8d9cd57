import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

const API = '/_baud/api/v1';
const EXPOSED =
  'Link, Location, RateLimit-Limit, RateLimit-Policy, RateLimit-Remaining, RateLimit-Reset, Retry-After, WWW-Authenticate, X-Request-Id';
// The credential headers of every answer (response-headers.ts) follow CORS's Origin.
const VARY_WITH_ORIGIN = 'Origin, Authorization, X-Baud-API-Key';

function corsBoard(dialect: 'sqlite' | 'postgres', origins: string[]) {
  return createTestBoard(dialect, {
    config: { contentServers: { web: { restApi: { corsAllowedOrigins: origins } } } },
  });
}

function preflight(board: TestBoard, origin: string, url = `${API}/users/me`) {
  return board.app.inject({
    method: 'OPTIONS',
    url,
    headers: {
      origin,
      'access-control-request-method': 'PUT',
      'access-control-request-headers': 'authorization, content-type',
    },
  });
}

describeEachDialect('CORS', (dialect) => {
  describe('with an explicit origin list', () => {
    let board: TestBoard;
    beforeAll(async () => {
      board = await corsBoard(dialect, ['https://client.example', 'http://localhost:5173']);
    });
    afterAll(() => board.close());

    it('allows PATCH in a preflight, for PATCH /webhooks/{id}: the methods are those the API serves', async () => {
      const response = await board.app.inject({
        method: 'OPTIONS',
        url: `${API}/webhooks/7`,
        headers: { origin: 'https://client.example', 'access-control-request-method': 'PATCH' },
      });
      expect(response.statusCode).toBe(204);
      expect(response.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS');
    });

    it('answers a preflight from an allowed origin with 204 and credentials, never a 401', async () => {
      const response = await preflight(board, 'https://client.example');
      expect(response.statusCode).toBe(204);
      expect(response.body).toBe('');
      expect(response.headers).toMatchObject({
        'access-control-allow-origin': 'https://client.example',
        'access-control-allow-credentials': 'true',
        'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS',
        'access-control-allow-headers': 'Authorization, Content-Type, X-Baud-API-Key, Range, If-None-Match',
        'access-control-max-age': '600',
        vary: VARY_WITH_ORIGIN,
      });
    });

    it('answers a preflight for the auth routes too', async () => {
      const response = await preflight(board, 'http://localhost:5173', `${API}/auth/refresh`);
      expect(response.statusCode).toBe(204);
      expect(response.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    });

    it('gives a disallowed origin no CORS headers at all', async () => {
      const response = await preflight(board, 'https://evil.example');
      expect(response.statusCode).toBe(405);
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
      expect(response.headers['access-control-allow-credentials']).toBeUndefined();
      expect(response.headers['access-control-allow-methods']).toBeUndefined();
      expect(response.headers.vary).toBe(VARY_WITH_ORIGIN);
      const simple = await board.app.inject({
        method: 'GET',
        url: `${API}/system/info`,
        headers: { origin: 'https://evil.example' },
      });
      expect(simple.statusCode).toBe(200);
      expect(simple.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('echoes an allowed origin on actual requests, errors included, and exposes headers', async () => {
      const ok = await board.app.inject({
        method: 'GET',
        url: `${API}/system/info`,
        headers: { origin: 'https://client.example' },
      });
      expect(ok.statusCode).toBe(200);
      expect(ok.headers).toMatchObject({
        'access-control-allow-origin': 'https://client.example',
        'access-control-allow-credentials': 'true',
        'access-control-expose-headers': EXPOSED,
        vary: VARY_WITH_ORIGIN,
      });
      const denied = await board.app.inject({
        method: 'GET',
        url: `${API}/users/me`,
        headers: { origin: 'https://client.example' },
      });
      expect(denied.statusCode).toBe(401);
      expect(denied.headers['access-control-allow-origin']).toBe('https://client.example');
      expect(denied.headers['access-control-expose-headers']).toBe(EXPOSED);
    });

    it('leaves an OPTIONS without Access-Control-Request-Method to the normal routing', async () => {
      const response = await board.app.inject({
        method: 'OPTIONS',
        url: `${API}/system/info`,
        headers: { origin: 'https://client.example' },
      });
      expect(response.statusCode).toBe(405);
      expect(response.headers.allow).toBe('GET, HEAD');
    });

    it('does not turn unknown paths into 405s', async () => {
      const response = await board.app.inject({ method: 'GET', url: `${API}/no/such/thing` });
      expect(response.statusCode).toBe(404);
    });
  });

  describe('with "*"', () => {
    let board: TestBoard;
    beforeAll(async () => {
      board = await corsBoard(dialect, ['*']);
    });
    afterAll(() => board.close());

    it('allows any origin but never credentials', async () => {
      const response = await preflight(board, 'https://anyone.example');
      expect(response.statusCode).toBe(204);
      expect(response.headers['access-control-allow-origin']).toBe('*');
      expect(response.headers['access-control-allow-credentials']).toBeUndefined();
      const actual = await board.app.inject({
        method: 'GET',
        url: `${API}/system/info`,
        headers: { origin: 'https://anyone.example' },
      });
      expect(actual.headers['access-control-allow-origin']).toBe('*');
      expect(actual.headers['access-control-allow-credentials']).toBeUndefined();
      expect(actual.headers['access-control-expose-headers']).toBe(EXPOSED);
    });
  });

  describe('with no origins (the default)', () => {
    let board: TestBoard;
    beforeAll(async () => {
      board = await corsBoard(dialect, []);
    });
    afterAll(() => board.close());

    it('sends no CORS headers at all', async () => {
      const response = await preflight(board, 'https://client.example');
      expect(response.statusCode).toBe(405);
      const actual = await board.app.inject({
        method: 'GET',
        url: `${API}/system/info`,
        headers: { origin: 'https://client.example' },
      });
      for (const headers of [response.headers, actual.headers]) {
        expect(Object.keys(headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
        expect(headers.vary).toBe('Authorization, X-Baud-API-Key');
      }
    });
  });
});
