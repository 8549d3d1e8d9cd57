import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { configFromObject } from '../../src/config/load-config.js';
import { ForbiddenError } from '../../src/errors.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

const PROBLEM = 'application/problem+json; charset=utf-8';

describeEachDialect('one error path', (dialect) => {
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect);
  });
  afterAll(() => board.close());

  it('answers an unknown route with a 404 problem', async () => {
    const response = await board.app.inject({ method: 'GET', url: '/_baud/api/v1/nothing/here?x=1' });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toBe(PROBLEM);
    expect(response.json()).toEqual({
      type: '/_baud/api/v1/errors/404',
      title: 'Not Found',
      status: 404,
      detail: 'No resource at /_baud/api/v1/nothing/here.',
      code: 'route.not-found',
    });
  });

  it('answers a known path with the wrong method with 405 and Allow', async () => {
    const response = await board.app.inject({ method: 'DELETE', url: '/_baud/api/v1/system/info' });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
    expect(response.headers['content-type']).toBe(PROBLEM);
    expect(response.json()).toMatchObject({ status: 405, title: 'Method Not Allowed' });
  });

  it('answers 401 with WWW-Authenticate for a malformed credential', async () => {
    const response = await board.app.inject({
      method: 'GET',
      url: '/_baud/api/v1/system/info',
      headers: { authorization: 'Bearer not.a.jwt' },
    });
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer realm="baud", error="invalid_token"');
    expect(response.json()).toMatchObject({ type: '/_baud/api/v1/errors/401', title: 'Unauthorized' });
  });

  it('answers 401 for a non-Bearer Authorization scheme', async () => {
    const response = await board.app.inject({
      method: 'GET',
      url: '/_baud/api/v1/system/info',
      headers: { authorization: 'Basic dXNlcjpwYXNz' },
    });
    expect(response.statusCode).toBe(401);
  });

  it('refuses NUL characters in path, query and body with 400 pointers (PostgreSQL cannot store them)', async () => {
    const { auth } = await board.userWithToken('nul-tester');
    const inPath = await board.app.inject({ method: 'GET', url: '/_baud/api/v1/users/a%00b', headers: auth });
    expect(inPath.statusCode).toBe(400);
    expect(inPath.json().errors).toEqual([{ pointer: '/path/username', message: 'must not contain NUL characters' }]);
    const inBody = await board.app.inject({
      method: 'POST',
      url: '/_baud/api/v1/auth/login',
      payload: { username: 'a\u0000b', password: 'whatever it is' },
    });
    expect(inBody.statusCode).toBe(400);
    expect(inBody.headers['content-type']).toBe(PROBLEM);
    expect(inBody.json().errors).toEqual([{ pointer: '/body/username', message: 'must not contain NUL characters' }]);
    const inQuery = await board.app.inject({
      method: 'GET',
      url: '/_baud/api/v1/system/last-callers?x=%00',
    });
    expect(inQuery.statusCode).toBe(400);
  });

  it('sends a request id on every response', async () => {
    const response = await board.app.inject({ method: 'GET', url: '/_baud/api/v1/system/info' });
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('error mapping of framework and unexpected errors', () => {
  let app: FastifyInstance;
  const logged: string[] = [];
  beforeAll(async () => {
    const config = configFromObject({
      database: { url: 'sqlite::memory:' },
      contentServers: { web: { bodyLimitBytes: 1024 } },
    });
    app = await buildApp(config, {
      logger: {
        level: 'error',
        stream: { write: (line: string) => logged.push(line) },
      },
    });
    // Test-only routes, added under the API prefix the same way feature routes are.
    await app.register(
      async (api) => {
        const config = { access: 'public' as const };
        api.post(
          '/echo',
          {
            config,
            schema: {
              body: {
                type: 'object',
                required: ['subject'],
                additionalProperties: false,
                properties: { subject: { type: 'string', maxLength: 5 }, count: { type: 'integer' } },
              },
            },
          },
          async (request) => request.body,
        );
        api.get('/boom', { config }, async () => {
          throw new Error('SELECT secret FROM users -- internal detail');
        });
        api.get('/forbidden', { config }, async () => {
          throw new ForbiddenError('access.denied', 'No.');
        });
      },
      { prefix: '/_baud/api/v1/test' },
    );
    await app.ready();
  });
  afterAll(() => app.close());

  it('answers malformed JSON with 400', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/_baud/api/v1/test/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"subject": ',
    });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toBe(PROBLEM);
    expect(response.json()).toEqual({
      type: '/_baud/api/v1/errors/400',
      title: 'Bad Request',
      status: 400,
      detail: 'The body is not valid JSON.',
      code: 'request.invalid-json',
    });
  });

  it('answers schema violations with 400 and JSON pointers', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/_baud/api/v1/test/echo',
      payload: { subject: 'too long', count: 1.5, extra: true },
    });
    expect(response.statusCode).toBe(400);
    const body = response.json();
    expect(body.type).toBe('/_baud/api/v1/errors/400');
    expect(body.errors).toEqual(
      expect.arrayContaining([
        { pointer: '/body/extra', message: 'is not a known field' },
        { pointer: '/body/subject', message: 'must NOT have more than 5 characters' },
        { pointer: '/body/count', message: 'must be integer' },
      ]),
    );
  });

  it('reports a missing required field at its pointer', async () => {
    const response = await app.inject({ method: 'POST', url: '/_baud/api/v1/test/echo', payload: {} });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors).toEqual([{ pointer: '/body/subject', message: 'is required' }]);
  });

  it('answers a body over the limit with 413', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/_baud/api/v1/test/echo',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ subject: 'x'.repeat(2000) }),
    });
    expect(response.statusCode).toBe(413);
    expect(response.headers['content-type']).toBe(PROBLEM);
    expect(response.json()).toMatchObject({ status: 413, title: 'Payload Too Large' });
  });

  it('answers an unsupported content type with 415', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/_baud/api/v1/test/echo',
      headers: { 'content-type': 'application/xml' },
      payload: '<subject/>',
    });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toMatchObject({ status: 415, title: 'Unsupported Media Type' });
  });

  it('maps a thrown domain error to its status', async () => {
    const response = await app.inject({ method: 'GET', url: '/_baud/api/v1/test/forbidden' });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({
      type: '/_baud/api/v1/errors/403',
      title: 'Forbidden',
      status: 403,
      detail: 'No.',
      code: 'access.denied',
    });
  });

  it('answers an unexpected exception with a bare 500 carrying the request id, logged once', async () => {
    const response = await app.inject({ method: 'GET', url: '/_baud/api/v1/test/boom' });
    expect(response.statusCode).toBe(500);
    const body = response.json();
    expect(body).toEqual({
      type: '/_baud/api/v1/errors/500',
      title: 'Internal Server Error',
      status: 500,
      detail: 'An unexpected error occurred; the request id identifies it in the log.',
      code: 'server.internal-error',
      instance: response.headers['x-request-id'],
    });
    expect(response.body).not.toContain('SELECT');
    expect(response.body).not.toContain('at ');
    const errorLines = logged.filter((line) => line.includes(body.instance));
    expect(errorLines).toHaveLength(1);
    expect(errorLines[0]).toContain('SELECT secret');
  });
});

describe('restApi.enabled: false', () => {
  it('answers the whole API prefix with 404 problems', async () => {
    const config = configFromObject({
      database: { url: 'sqlite::memory:' },
      contentServers: { web: { restApi: { enabled: false } } },
    });
    const app = await buildApp(config, { logger: false });
    try {
      for (const url of ['/_baud/api/v1/system/info', '/_baud/api/v1/openapi.json', '/_baud/api/v1/docs']) {
        const response = await app.inject({ method: 'GET', url });
        expect(response.statusCode).toBe(404);
        expect(response.headers['content-type']).toBe(PROBLEM);
      }
    } finally {
      await app.close();
    }
  });
});
