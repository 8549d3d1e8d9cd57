import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { isNestedDeeperThan, MAX_JSON_DEPTH } from '../../src/http/json-body.js';
import { createMessageTestBoard, type MessageTestBoard, seedMessages } from '../messages/message-fixture.js';
import { rawExchange } from '../support/raw-http.js';
import { describeEachDialect } from '../support/test-board.js';

const API = '/_baud/api/v1';
const PROBLEM = 'application/problem+json; charset=utf-8';

describe('isNestedDeeperThan', () => {
  it('counts arrays and objects, not brackets inside strings', () => {
    expect(isNestedDeeperThan('[[1]]', 2)).toBe(false);
    expect(isNestedDeeperThan('[[[1]]]', 2)).toBe(true);
    expect(isNestedDeeperThan('{"a":{"b":1}}', 2)).toBe(false);
    expect(isNestedDeeperThan('{"a":"[[[[[[","b":"\\"[[[["}', 1)).toBe(false);
  });

  it('walks a million levels without recursion', () => {
    expect(isNestedDeeperThan('['.repeat(1_000_000) + ']'.repeat(1_000_000), MAX_JSON_DEPTH)).toBe(true);
  });
});

describeEachDialect('request parsing', (dialect) => {
  let board: MessageTestBoard;
  let fileId: number;
  beforeAll(async () => {
    board = await createMessageTestBoard(dialect);
    await seedMessages(board, 'general', 3);
    const file = await board.board.db
      .insertInto('files')
      .values({
        areaTag: 'nowhere',
        storageTag: 'main',
        fileName: 'one.txt',
        desc: '',
        descLong: '',
        byteSize: 1,
        sha256: '0'.repeat(64),
        uploadTimestamp: '2020-01-01T00:00:00.000Z',
        uploadByUserId: null,
        archiveType: null,
        hashTags: '[]',
        estReleaseYear: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    fileId = file.id;
  });
  afterAll(() => board.close());

  const post = (payload: string | object, headers: Record<string, string> = board.alice.auth) =>
    board.app.inject({
      method: 'POST',
      url: `${API}/messages/areas/general/messages`,
      headers: { ...headers, 'content-type': 'application/json' },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });

  const messageCount = async () =>
    (await board.app.inject({ method: 'GET', url: `${API}/messages/areas/general` })).json().messageCount;

  describe('deeply nested JSON', () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;

    it.each([
      ['POST', '/auth/login', true],
      ['POST', '/messages/areas/general/messages', true],
      ['PUT', '/users/me', false],
    ] as const)('answers %s %s with 400 (anonymous too: %s)', async (method, url, isOpenToAnonymous) => {
      for (const headers of isOpenToAnonymous ? [{}, board.alice.auth] : [board.alice.auth]) {
        const response = await board.app.inject({
          method,
          url: `${API}${url}`,
          headers: { ...headers, 'content-type': 'application/json' },
          payload: deep,
        });
        expect(response.statusCode).toBe(400);
        expect(response.headers['content-type']).toBe(PROBLEM);
        expect(response.json()).toEqual({
          type: `${API}/errors/400`,
          title: 'Bad Request',
          status: 400,
          detail: `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`,
          code: 'request.json-too-deep',
        });
      }
    });

    it('refuses a deep value inside an otherwise valid body, and logs no error', async () => {
      const lines: string[] = [];
      const stream = new Writable({
        write(chunk, _encoding, callback) {
          lines.push(String(chunk));
          callback();
        },
      });
      const app = await buildApp(board.config, { board: board.board, logger: { level: 'trace', stream } });
      try {
        const response = await app.inject({
          method: 'POST',
          url: `${API}/auth/login`,
          headers: { 'content-type': 'application/json' },
          payload: `{"username":"alice","password":${'['.repeat(5000)}${']'.repeat(5000)}}`,
        });
        expect(response.statusCode).toBe(400);
        expect(lines.length).toBeGreaterThan(0);
        const levels = lines.map((line) => (JSON.parse(line) as { level: number }).level);
        expect(levels.filter((level) => level >= 50)).toEqual([]);
        expect(lines.join('')).not.toMatch(/RangeError|Maximum call stack/);
      } finally {
        await app.close();
      }
    });
  });

  describe('JSON bodies are typed JSON', () => {
    it.each([
      [{ subject: 42, message: 'x' }, '/body/subject'],
      [{ subject: true, message: 'x' }, '/body/subject'],
      [{ subject: 'ok', message: ['x'] }, '/body/message'],
      [{ subject: 'ok', message: 'x', toUserName: 7 }, '/body/toUserName'],
      [{ subject: 'ok', message: 'x', replyToMessageId: '1' }, '/body/replyToMessageId'],
    ])('refuses %j with 400 pointing at %s and stores nothing', async (payload, pointer) => {
      const before = await messageCount();
      const response = await post(payload);
      expect(response.statusCode).toBe(400);
      expect(response.headers['content-type']).toBe(PROBLEM);
      expect(response.json().errors).toContainEqual({ pointer, message: expect.stringMatching(/^must be /) });
      expect(await messageCount()).toBe(before);
    });

    it.each([
      [{ realName: 12345 }, '/body/realName'],
      [{ realName: ['a'] }, '/body/realName'],
      [{ location: 1e21 }, '/body/location'],
      [{ affiliations: false }, '/body/affiliations'],
    ])('refuses the profile %j with 400 pointing at %s and changes nothing', async (payload, pointer) => {
      const before = await board.app.inject({ method: 'GET', url: `${API}/users/me`, headers: board.alice.auth });
      const response = await board.app.inject({
        method: 'PUT',
        url: `${API}/users/me`,
        headers: board.alice.auth,
        payload,
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().errors).toEqual([{ pointer, message: 'must be string or null' }]);
      const after = await board.app.inject({ method: 'GET', url: `${API}/users/me`, headers: board.alice.auth });
      expect(after.json()).toEqual(before.json());
    });

    it('refuses __proto__ and constructor.prototype keys with 400', async () => {
      for (const payload of [
        '{"subject":"s","message":"m","__proto__":{"isSysop":true}}',
        '{"subject":"s","message":"m","constructor":{"prototype":{"isSysop":true}}}',
      ]) {
        const response = await post(payload);
        expect(response.statusCode).toBe(400);
        expect(response.headers['content-type']).toBe(PROBLEM);
      }
    });

    it('answers a text/plain body with 415', async () => {
      const response = await board.app.inject({
        method: 'POST',
        url: `${API}/messages/areas/general/messages`,
        headers: { ...board.alice.auth, 'content-type': 'text/plain' },
        payload: 'hello',
      });
      expect(response.statusCode).toBe(415);
      expect(response.headers['content-type']).toBe(PROBLEM);
      expect(response.json().detail).toBe('This content type is not accepted here.');
    });

    it('accepts an empty JSON body where the route takes none (refresh, logout, delete)', async () => {
      for (const [method, url] of [
        ['POST', '/auth/logout'],
        ['POST', '/auth/refresh'],
        ['DELETE', '/messages/00000000-0000-4000-8000-0000000000ff'],
      ] as const) {
        const response = await board.app.inject({
          method,
          url: `${API}${url}`,
          headers: { ...board.alice.auth, 'content-type': 'application/json' },
          payload: '',
        });
        expect(response.statusCode, url).toBe({ POST: url.endsWith('logout') ? 204 : 401, DELETE: 404 }[method]);
      }
    });

    it('answers a wrong method 405 whatever its JSON body holds', async () => {
      const response = await board.app.inject({
        method: 'DELETE',
        url: `${API}/users/me`,
        headers: { ...board.alice.auth, 'content-type': 'application/json' },
        payload: '{"a":"\u0000"',
      });
      expect(response.statusCode).toBe(405);
    });

    it('still accepts a well-typed body', async () => {
      const response = await post({ subject: 'Typed', message: 'right' });
      expect(response.statusCode).toBe(201);
    });
  });

  describe('integer path and query parameters', () => {
    const NOT_CANONICAL = ['Infinity', '-Infinity', '1e400', '0x1', '1e0', '1.0', '1%20', '%201', '+1', '01', '1_0'];

    it.each([
      '/messages/areas/general/messages?limit=',
      '/files/areas/public/files?limit=',
      '/system/last-callers?limit=',
    ])('refuses non-decimal limits on %s with a 400 at /query/limit', async (url) => {
      for (const value of [...NOT_CANONICAL, '9007199254740993']) {
        const response = await board.app.inject({
          method: 'GET',
          url: `${API}${url}${value}`,
          headers: board.sysop.auth,
        });
        expect(response.statusCode, value).toBe(400);
        expect(response.headers['content-type']).toBe(PROBLEM);
        expect(response.json().errors, value).toEqual([{ pointer: '/query/limit', message: expect.any(String) }]);
      }
    });

    it('refuses file ids that are not canonical decimals instead of resolving them to file 1', async () => {
      expect(fileId).toBe(1);
      for (const value of NOT_CANONICAL) {
        for (const suffix of ['', '/download']) {
          const response = await board.app.inject({
            method: 'GET',
            url: `${API}/files/${value}${suffix}`,
            headers: board.sysop.auth,
          });
          expect(response.statusCode, value + suffix).toBe(400);
          expect(response.headers['content-type']).toBe(PROBLEM);
          expect(response.json().errors).toEqual([{ pointer: '/path/fileId', message: 'must be a decimal integer' }]);
        }
      }
    });

    it('still coerces canonical query values', async () => {
      const response = await board.app.inject({ method: 'GET', url: `${API}/messages/areas/general/messages?limit=2` });
      expect(response.statusCode).toBe(200);
      expect(response.json().meta).toMatchObject({ count: 2, limit: 2 });
    });
  });

  describe('bodies that never arrive', () => {
    it('answers 408 and closes once bodyTimeoutSeconds passes without the whole body', async () => {
      const app = await buildApp(
        {
          ...board.config,
          contentServers: {
            ...board.config.contentServers,
            web: { ...board.config.contentServers.web, bodyTimeoutSeconds: 1 },
          },
        },
        { board: board.board, logger: false },
      );
      await app.listen({ host: '127.0.0.1', port: 0 });
      try {
        const { port } = app.server.address() as AddressInfo;
        const response = await rawExchange(
          port,
          `POST ${API}/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"username":`,
        );
        expect(response.status).toBe(408);
        expect(response.headers['content-type']).toBe(PROBLEM);
        expect(response.headers.connection).toBe('close');
        expect(JSON.parse(response.body)).toEqual({
          type: `${API}/errors/408`,
          title: 'Request Timeout',
          status: 408,
          detail: 'The request body did not arrive within 1s.',
          code: 'request.timeout',
        });
        expect(response.closedAfterMs).toBeGreaterThanOrEqual(900);
        expect(response.closedAfterMs).toBeLessThan(5_000);
      } finally {
        await app.close();
      }
    });
  });
});
