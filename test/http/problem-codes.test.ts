import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/errors.js';
import { MESSAGE_TEST_CONFIG } from '../messages/message-fixture.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

const API = '/_baud/api/v1';
const PROBLEM = 'application/problem+json; charset=utf-8';

interface FailingRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly url: string;
  /** Whose credential goes with the request. */
  readonly as?: 'alice' | 'readKey';
  readonly headers?: Record<string, string>;
  readonly payload?: string | Record<string, unknown>;
}

/**
 * One failing request of each kind a client meets, and the code it answers with. The kinds that
 * need a slow or broken connection, a shutting node or a failing server (408, 431, 500, 503) and
 * a stored file (416) are asserted with their exact bodies in their own suites.
 */
const CASES: readonly (readonly [number, ErrorCode, FailingRequest])[] = [
  [400, 'request.invalid-body', { method: 'POST', url: '/auth/login', payload: { username: 'alice' } }],
  [400, 'request.invalid-query', { method: 'GET', url: '/messages/areas/general/messages?limit=0x1' }],
  [400, 'request.invalid-path', { method: 'GET', url: '/messages/not-a-uuid', as: 'alice' }],
  [
    400,
    'request.invalid-json',
    {
      method: 'POST',
      url: '/messages/areas/general/messages',
      as: 'alice',
      headers: { 'content-type': 'application/json' },
      payload: '{"subject": ',
    },
  ],
  [400, 'request.invalid-cursor', { method: 'GET', url: '/messages/areas/general/messages?cursor=nope' }],
  [400, 'search.prefix-too-short', { method: 'GET', url: '/messages/search?q=a*', as: 'alice' }],
  [401, 'auth.required', { method: 'GET', url: '/users/me' }],
  [401, 'auth.invalid-token', { method: 'GET', url: '/users/me', headers: { authorization: 'Bearer not.a.token' } }],
  [403, 'access.denied', { method: 'GET', url: '/messages/areas/secret/messages', as: 'alice' }],
  [403, 'auth.scope-insufficient', { method: 'PUT', url: '/users/me', as: 'readKey', payload: { location: 'Here' } }],
  [404, 'route.not-found', { method: 'GET', url: '/nothing/here' }],
  [404, 'message.area-not-found', { method: 'GET', url: '/messages/areas/nowhere', as: 'alice' }],
  [405, 'route.method-not-allowed', { method: 'DELETE', url: '/system/info' }],
  [
    409,
    'webhook.limit-reached',
    {
      method: 'POST',
      url: '/webhooks',
      as: 'alice',
      payload: { url: 'http://127.0.0.1:9/b', events: ['message.created'] },
    },
  ],
  [
    413,
    'request.body-too-large',
    {
      method: 'POST',
      url: '/messages/areas/general/messages',
      as: 'alice',
      payload: { subject: 'Big', message: 'x'.repeat(5000) },
    },
  ],
  [
    415,
    'request.unsupported-media-type',
    {
      method: 'POST',
      url: '/messages/areas/general/messages',
      as: 'alice',
      headers: { 'content-type': 'application/xml' },
      payload: '<subject/>',
    },
  ],
  // The throttle allows one failure per window: this second attempt is refused before its password is checked.
  [
    429,
    'rate-limit.exceeded',
    { method: 'POST', url: '/auth/login', payload: { username: 'carol', password: 'wrong' } },
  ],
];

describeEachDialect('problem codes of failing requests', (dialect) => {
  let board: TestBoard;
  const credentials: Record<'alice' | 'readKey', Record<string, string>> = { alice: {}, readKey: {} };

  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      config: {
        ...MESSAGE_TEST_CONFIG,
        webhooks: { allowPrivateTargets: true, maxPerUser: 1 },
        contentServers: {
          web: {
            bodyLimitBytes: 4096,
            restApi: {
              ...MESSAGE_TEST_CONFIG.contentServers.web.restApi,
              loginThrottle: { maxFailures: 1, windowSeconds: 600 },
            },
          },
        },
      },
    });
    credentials.alice = (await board.userWithToken('alice')).auth;
    credentials.readKey = { 'x-baud-api-key': (await board.board.apiKeys.generate('alice', 'reader', 'read')).key };
    const firstWebhook = await board.app.inject({
      method: 'POST',
      url: `${API}/webhooks`,
      headers: credentials.alice,
      payload: { url: 'http://127.0.0.1:9/a', events: ['message.created'] },
    });
    expect(firstWebhook.statusCode).toBe(201);
    await board.board.credentials.createAccount({ username: 'carol', password: 'correct horse battery' });
    const firstFailure = await board.app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: { username: 'carol', password: 'wrong' },
    });
    expect(firstFailure.statusCode).toBe(401);
  });
  afterAll(() => board.close());

  it.each(CASES)('answers %i %s', async (status, code, request) => {
    const response = await board.app.inject({
      method: request.method,
      url: `${API}${request.url}`,
      headers: { ...(request.as ? credentials[request.as] : {}), ...request.headers },
      ...(request.payload === undefined ? {} : { payload: request.payload }),
    });
    expect(response.headers['content-type']).toBe(PROBLEM);
    expect({ status: response.statusCode, code: response.json().code }).toEqual({ status, code });
    expect(response.json().status).toBe(status);
  });
});
