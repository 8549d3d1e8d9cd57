import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.js';
import { configFromObject } from '../../src/config/load-config.js';
import { API, createMessageTestBoard, type MessageTestBoard, seedMessages } from '../messages/message-fixture.js';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';

const GENERAL_MESSAGES = `${API}/messages/areas/general/messages`;
const SYSTEM_INFO = `${API}/system/info`;
const VARY = 'Authorization, X-Baud-API-Key';
// SHA-1 of the body in base64, quoted: a strong tag.
const STRONG_TAG = /^"[A-Za-z0-9+/]{27}="$/;

describeEachDialect('ETag, 304 and Cache-Control', (dialect) => {
  let board: MessageTestBoard;
  let apiKey: string;
  let messageUrl: string;
  beforeAll(async () => {
    // A clock that stands still: /system/info carries the uptime in seconds, so two requests a
    // second apart on a busy machine had different tags.
    board = await createMessageTestBoard(dialect, fakeClock());
    await seedMessages(board, 'general', 3);
    apiKey = (await board.board.apiKeys.generate('alice', 'cache test', 'read')).key;
    const list = await board.app.inject({ method: 'GET', url: GENERAL_MESSAGES });
    messageUrl = `${API}/messages/${(list.json() as { data: { uuid: string }[] }).data[0]?.uuid}`;
  });
  afterAll(() => board.close());

  const get = (url: string, headers: Record<string, string> = {}) => board.app.inject({ method: 'GET', url, headers });

  describe('ETag', () => {
    it.each([
      ['a list', () => GENERAL_MESSAGES],
      ['a detail', () => messageUrl],
      ['/system/info', () => SYSTEM_INFO],
      ['the conference list', () => `${API}/messages/conferences`],
    ])('tags the 200 answer to GET %s with a strong ETag, anonymous or not', async (_name, url) => {
      for (const headers of [{}, board.alice.auth, { 'x-baud-api-key': apiKey }] as Record<string, string>[]) {
        const response = await get(url(), headers);
        expect(response.statusCode).toBe(200);
        expect(response.headers.etag).toMatch(STRONG_TAG);
      }
    });

    it('gives HEAD the same ETag as GET and no body', async () => {
      const full = await get(GENERAL_MESSAGES);
      const head = await board.app.inject({ method: 'HEAD', url: GENERAL_MESSAGES });
      expect(head.statusCode).toBe(200);
      expect(head.headers.etag).toBe(full.headers.etag);
      expect(head.body).toBe('');
    });

    it('derives the ETag from the body alone: the SHA-1 of its bytes', async () => {
      const first = await get(messageUrl);
      const again = await get(messageUrl);
      expect(first.headers.etag).toBe(`"${createHash('sha1').update(first.rawPayload).digest('base64')}"`);
      expect(again.headers.etag).toBe(first.headers.etag);
    });

    it('changes the ETag of a list after a post to its area, and answers the old tag with the new body', async () => {
      const before = await get(GENERAL_MESSAGES);
      const posted = await board.app.inject({
        method: 'POST',
        url: GENERAL_MESSAGES,
        headers: board.alice.auth,
        payload: { subject: 'Fresh', message: 'A new message changes the page.' },
      });
      expect(posted.statusCode).toBe(201);
      expect(posted.headers.etag).toBeUndefined();
      const after = await get(GENERAL_MESSAGES, { 'if-none-match': String(before.headers.etag) });
      expect(after.statusCode).toBe(200);
      expect(after.headers.etag).toMatch(STRONG_TAG);
      expect(after.headers.etag).not.toBe(before.headers.etag);
      expect((after.json() as { data: { subject: string }[] }).data.map((message) => message.subject)).toContain(
        'Fresh',
      );
    });

    it('sends no ETag with the login answers, whose bodies are tokens and which set a cookie', async () => {
      const loggedIn = await board.app.inject({
        method: 'POST',
        url: `${API}/auth/login`,
        payload: { username: 'alice', password: 'correct horse battery' },
      });
      expect(loggedIn.statusCode).toBe(200);
      expect(loggedIn.headers['set-cookie']).toBeDefined();
      expect(loggedIn.headers.etag).toBeUndefined();
      const refused = await board.app.inject({
        method: 'POST',
        url: `${API}/auth/login`,
        payload: { username: 'alice', password: 'wrong password entirely' },
      });
      expect(refused.statusCode).toBe(401);
      expect(refused.headers.etag).toBeUndefined();
    });

    it.each([
      [401, `${API}/messages/areas/members/messages`, {}],
      [403, `${API}/messages/areas/secret/messages`, 'alice'],
      [404, `${API}/messages/areas/nowhere/messages`, {}],
      [404, `${API}/messages/00000000-0000-4000-8000-000000000000`, {}],
      [400, `${GENERAL_MESSAGES}?limit=0`, {}],
      [404, `${API}/no/such/thing`, {}],
    ] as const)('sends no ETag with a %i error to GET %s', async (status, url, who) => {
      const response = await get(url, who === 'alice' ? board.alice.auth : who);
      expect(response.statusCode).toBe(status);
      expect(response.headers.etag).toBeUndefined();
      // Asked again with `*`, an error stays an error.
      const conditional = await get(url, { ...(who === 'alice' ? board.alice.auth : who), 'if-none-match': '*' });
      expect(conditional.statusCode).toBe(status);
    });
  });

  describe('If-None-Match', () => {
    it.each([
      ['the exact tag', (tag: string) => tag],
      ['a list that holds it', (tag: string) => `"not-this-one", ${tag} , "nor-this"`],
      ['*', () => '*'],
      ['its W/ form', (tag: string) => `W/${tag}`],
    ])('answers %s with 304, no body, and the headers of the 200', async (_name, ifNoneMatch) => {
      for (const url of [GENERAL_MESSAGES, messageUrl, SYSTEM_INFO]) {
        const full = await get(url);
        const tag = String(full.headers.etag);
        const response = await get(url, { 'if-none-match': ifNoneMatch(tag) });
        expect(response.statusCode).toBe(304);
        expect(response.body).toBe('');
        expect(response.headers.etag).toBe(tag);
        expect(response.headers['cache-control']).toBe('public, max-age=10');
        expect(response.headers.vary).toBe(VARY);
        expect(response.headers['content-type']).toBeUndefined();
        expect(response.headers['content-length']).toBeUndefined();
      }
    });

    it('answers a HEAD whose tag matches with 304', async () => {
      const tag = String((await get(SYSTEM_INFO)).headers.etag);
      const response = await board.app.inject({ method: 'HEAD', url: SYSTEM_INFO, headers: { 'if-none-match': tag } });
      expect(response.statusCode).toBe(304);
      expect(response.headers.etag).toBe(tag);
      expect(response.body).toBe('');
    });

    it('answers an authenticated caller with 304 and no-store', async () => {
      const full = await get(`${API}/users/me`, board.alice.auth);
      const tag = String(full.headers.etag);
      expect(tag).toMatch(STRONG_TAG);
      const response = await get(`${API}/users/me`, { ...board.alice.auth, 'if-none-match': tag });
      expect(response.statusCode).toBe(304);
      expect(response.headers.etag).toBe(tag);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers.vary).toBe(VARY);
    });

    it('answers a tag that does not match with 200 and the whole body', async () => {
      const full = await get(GENERAL_MESSAGES);
      for (const ifNoneMatch of ['"something-else"', `${String(full.headers.etag).slice(0, -2)}"`, '""']) {
        const response = await get(GENERAL_MESSAGES, { 'if-none-match': ifNoneMatch });
        expect(response.statusCode).toBe(200);
        expect(response.headers.etag).toBe(full.headers.etag);
        expect(response.body).toBe(full.body);
      }
    });
  });

  describe('Cache-Control and Vary', () => {
    it('lets shared caches keep an allowlisted answer to an anonymous caller for 10 s', async () => {
      for (const url of [GENERAL_MESSAGES, messageUrl, SYSTEM_INFO, `${API}/messages/conferences`]) {
        const response = await get(url);
        expect(response.statusCode).toBe(200);
        expect(response.headers['cache-control']).toBe('public, max-age=10');
        expect(response.headers.vary).toBe(VARY);
      }
    });

    it.each([
      ['an access token', () => board.alice.auth],
      ['an API key in X-Baud-API-Key', () => ({ 'x-baud-api-key': apiKey })],
      ['an API key as Bearer', () => ({ authorization: `Bearer ${apiKey}` })],
    ])('sends no-store on the same URLs to a caller with %s', async (_name, headers) => {
      for (const url of [GENERAL_MESSAGES, messageUrl, SYSTEM_INFO]) {
        const response = await get(url, headers());
        expect(response.statusCode).toBe(200);
        expect(response.headers['cache-control']).toBe('no-store');
        expect(response.headers.vary).toBe(VARY);
      }
    });

    it.each([
      [401, `${API}/messages/areas/members/messages`],
      [401, `${API}/users/me`],
      [401, `${API}/system/nodes`],
      [404, `${API}/messages/areas/nowhere/messages`],
      [400, `${GENERAL_MESSAGES}?cursor=nonsense`],
    ] as const)('makes no %i answer to an anonymous caller public (GET %s)', async (status, url) => {
      const response = await get(url);
      expect(response.statusCode).toBe(status);
      expect(response.headers['cache-control']).toBeUndefined();
      expect(response.headers.vary).toBe(VARY);
    });

    it('makes no anonymous answer to a POST public', async () => {
      const response = await board.app.inject({
        method: 'POST',
        url: GENERAL_MESSAGES,
        payload: { subject: 'x', message: 'y' },
      });
      expect(response.statusCode).toBe(401);
      expect(response.headers['cache-control']).toBeUndefined();
      expect(response.headers.vary).toBe(VARY);
    });

    it('sends Vary on answers outside the routes too (unknown path, OpenAPI document)', async () => {
      for (const url of [`${API}/no/such/thing`, `${API}/openapi.json`]) {
        expect((await get(url)).headers.vary).toBe(VARY);
      }
    });
  });
});

describeEachDialect('publicCacheSeconds', (dialect) => {
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      clock: fakeClock(), // the uptime in /system/info stands still (see above)
      config: { contentServers: { web: { publicCacheSeconds: 0 } } },
    });
  });
  afterAll(() => board.close());

  it('at 0 makes public answers "public, no-cache": stored, but revalidated with the ETag every time', async () => {
    const response = await board.app.inject({ method: 'GET', url: SYSTEM_INFO });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('public, no-cache');
    const revalidated = await board.app.inject({
      method: 'GET',
      url: SYSTEM_INFO,
      headers: { 'if-none-match': String(response.headers.etag) },
    });
    expect(revalidated.statusCode).toBe(304);
    expect(revalidated.headers['cache-control']).toBe('public, no-cache');
  });
});

describe('contentServers.web.publicCacheSeconds', () => {
  it('defaults to 10 and takes 0 to 86400', () => {
    expect(configFromObject({}).contentServers.web.publicCacheSeconds).toBe(10);
    for (const seconds of [0, 86400]) {
      const config = configFromObject({ contentServers: { web: { publicCacheSeconds: seconds } } });
      expect(config.contentServers.web.publicCacheSeconds).toBe(seconds);
    }
  });

  it.each([
    [-1, 'configuration: contentServers.web.publicCacheSeconds: must be >= 0'],
    [86401, 'configuration: contentServers.web.publicCacheSeconds: must be <= 86400'],
    [1.5, 'configuration: contentServers.web.publicCacheSeconds: must be integer'],
  ])('rejects %j naming the key', (seconds, message) => {
    expect(() => configFromObject({ contentServers: { web: { publicCacheSeconds: seconds } } })).toThrow(
      new ConfigError('config.invalid', message),
    );
  });
});
