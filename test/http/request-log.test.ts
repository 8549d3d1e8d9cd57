import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type BaudApp, buildApp } from '../../src/app.js';
import { API, createMessageTestBoard, type MessageTestBoard } from '../messages/message-fixture.js';
import { describeEachDialect } from '../support/test-board.js';

interface LogRecord {
  readonly level: number;
  readonly msg: string;
  readonly reqId?: string;
  readonly [field: string]: unknown;
}

const INFO = 30;
const ERROR = 50;
/** Fields pino adds to every record; the rest is what baud wrote. */
const PINO_FIELDS = { level: INFO, time: expect.any(Number), pid: process.pid, hostname: expect.any(String) };

/** A request log line: `responseTime` is a number of milliseconds with at most one decimal. */
const RESPONSE_TIME = expect.toSatisfy(
  (value: unknown) => typeof value === 'number' && value >= 0 && Math.round(value * 10) / 10 === value,
);

describeEachDialect('the request log', (dialect) => {
  let board: MessageTestBoard;
  let app: BaudApp;
  let apiKey: string;
  let records: LogRecord[] = [];
  /** Called whenever a record arrives, for tests that wait for one. */
  let onRecord: () => void = () => {};
  /** The slow test route: tells when it started, waits to be released, tells when it returned. */
  const slowRoute = { started: () => {}, release: () => {}, returned: () => {} };

  beforeAll(async () => {
    board = await createMessageTestBoard(dialect);
    apiKey = (await board.board.apiKeys.generate('alice', 'log test', 'read')).key;
    const stream = {
      write(text: string) {
        records.push(JSON.parse(text) as LogRecord);
        onRecord();
      },
    };
    app = await buildApp(board.config, { board: board.board, logger: { level: 'info', stream } });
    // Test-only routes, under the API prefix like feature routes.
    await app.register(
      async (api) => {
        api.get('/slow', { config: { access: 'public' } }, async () => {
          await new Promise<void>((resolve) => {
            slowRoute.release = resolve;
            slowRoute.started();
          });
          slowRoute.returned();
          return { done: true };
        });
        api.get('/boom', { config: { access: 'public' } }, async () => {
          throw new Error('internal detail of a failure');
        });
      },
      { prefix: `${API}/test` },
    );
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await board?.close();
  });

  /** The records written while `act` ran, and by the answers' `close` events it left pending. */
  async function logOf(act: () => Promise<unknown>): Promise<LogRecord[]> {
    records = [];
    await act();
    await new Promise(setImmediate);
    return records;
  }

  const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });

  it('writes exactly one line for an anonymous GET, with these fields and no others', async () => {
    let requestId = '';
    const lines = await logOf(async () => {
      const response = await get(`${API}/system/info`);
      expect(response.statusCode).toBe(200);
      requestId = String(response.headers['x-request-id']);
    });
    expect(lines).toEqual([
      {
        ...PINO_FIELDS,
        reqId: requestId,
        method: 'GET',
        url: `${API}/system/info`,
        statusCode: 200,
        responseTime: RESPONSE_TIME,
        remoteAddress: '127.0.0.1',
        msg: 'request completed',
      },
    ]);
  });

  it.each([
    ['an access token', () => board.alice.auth, () => board.alice.userId],
    ['an API key', () => ({ 'x-baud-api-key': apiKey }), () => board.alice.userId],
    ['the sysop token', () => board.sysop.auth, () => board.sysop.userId],
  ])("names the caller's user id for a request with %s", async (_name, headers, userId) => {
    const lines = await logOf(() => get(`${API}/users/me`, headers()));
    expect(lines).toEqual([
      {
        ...PINO_FIELDS,
        reqId: expect.any(String),
        method: 'GET',
        url: `${API}/users/me`,
        statusCode: 200,
        responseTime: RESPONSE_TIME,
        remoteAddress: '127.0.0.1',
        userId: userId(),
        msg: 'request completed',
      },
    ]);
  });

  it('logs path and query as sent (a cursor included), and the status of a refusal', async () => {
    const url = `${API}/messages/areas/general/messages?limit=2&cursor=not-a-cursor`;
    const lines = await logOf(() => get(url));
    expect(lines).toEqual([expect.objectContaining({ method: 'GET', url, statusCode: 400, msg: 'request completed' })]);
  });

  it.each([
    ['a refused credential', 'GET', `${API}/users/me`, { authorization: 'Bearer not-a-token' }, 401],
    ['an unknown path', 'GET', `${API}/no/such/thing`, { authorization: 'Bearer not-a-token' }, 404],
    ['a wrong method', 'DELETE', `${API}/system/info`, {}, 405],
    ['a broken percent escape, refused by the router', 'GET', `${API}/messages/areas/%zz`, {}, 400],
    ['a path outside the API', 'GET', '/index.html', {}, 404],
  ] as const)('writes one line without a user id for %s', async (_name, method, url, headers, status) => {
    const lines = await logOf(() => app.inject({ method, url, headers }));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toEqual({
      ...PINO_FIELDS,
      reqId: expect.any(String),
      method,
      url,
      statusCode: status,
      responseTime: RESPONSE_TIME,
      remoteAddress: '127.0.0.1',
      msg: 'request completed',
    });
  });

  it('writes one line per request, whatever the mix, each with its own request id', async () => {
    const requestIds: string[] = [];
    const lines = await logOf(async () => {
      for (const [method, url, headers] of [
        ['GET', `${API}/system/info`, {}],
        ['HEAD', `${API}/system/info`, {}],
        ['GET', `${API}/messages/conferences`, board.alice.auth],
        ['POST', `${API}/auth/login`, {}],
        ['GET', `${API}/nowhere`, {}],
        ['GET', `${API}/system/info`, { 'if-none-match': '*' }],
      ] as const) {
        const response = await app.inject({ method, url, headers });
        requestIds.push(String(response.headers['x-request-id']));
      }
    });
    expect(lines.map((line) => line.reqId)).toEqual(requestIds);
    expect(lines.map((line) => [line.method, line.statusCode])).toEqual([
      ['GET', 200],
      ['HEAD', 200],
      ['GET', 200],
      ['POST', 400],
      ['GET', 404],
      ['GET', 304],
    ]);
    expect(lines.filter((line) => line.msg === 'incoming request')).toEqual([]);
  });

  it('logs no credential: no header, cookie, token, API key or password', async () => {
    const password = 'correct horse battery';
    const secrets = [apiKey, password, board.alice.auth.authorization.slice('Bearer '.length)];
    const lines = await logOf(async () => {
      const login = await app.inject({
        method: 'POST',
        url: `${API}/auth/login`,
        payload: { username: 'alice', password },
      });
      expect(login.statusCode).toBe(200);
      const cookie = String(login.headers['set-cookie']).split(';')[0] ?? '';
      const token = (login.json() as { accessToken: string }).accessToken;
      secrets.push(token, cookie.slice(cookie.indexOf('=') + 1));
      await get(`${API}/users/me`, { authorization: `Bearer ${token}` });
      await get(`${API}/users/me`, { 'x-baud-api-key': apiKey });
      await get(`${API}/users/me`, board.alice.auth);
      await app.inject({ method: 'POST', url: `${API}/auth/refresh`, headers: { cookie } });
      await get(`${API}/users/me`, { authorization: `Basic ${Buffer.from(`alice:${password}`).toString('base64')}` });
    });
    secrets.push(Buffer.from(`alice:${password}`).toString('base64'));
    expect(lines).toHaveLength(6);
    const text = lines.map((line) => JSON.stringify(line)).join('\n');
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/authorization|cookie|x-baud-api-key|headers|password/i);
  });

  it('logs an unexpected error with its stack once, besides the request line with 500', async () => {
    const lines = await logOf(() => get(`${API}/test/boom`));
    expect(lines).toHaveLength(2);
    const [error, line] = lines;
    expect(error).toMatchObject({
      level: ERROR,
      msg: 'unexpected error',
      err: { stack: expect.stringContaining('internal detail of a failure') },
    });
    expect(line).toMatchObject({
      level: INFO,
      reqId: error?.reqId,
      url: `${API}/test/boom`,
      statusCode: 500,
      msg: 'request completed',
    });
  });

  it('writes one line with aborted: true and no status when the client goes away before the answer', async () => {
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    records = [];
    const started = new Promise<void>((resolve) => {
      slowRoute.started = resolve;
    });
    const socket = connect(Number(new URL(address).port), '127.0.0.1');
    socket.write(
      `GET ${API}/test/slow?x=1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${board.alice.auth.authorization}\r\n\r\n`,
    );
    await started;
    const logged = new Promise<void>((resolve) => {
      onRecord = resolve;
    });
    socket.destroy();
    await logged;
    onRecord = () => {};
    // The handler finishing later, for nobody, writes no second line.
    const returned = new Promise<void>((resolve) => {
      slowRoute.returned = resolve;
    });
    slowRoute.release();
    await returned;
    await new Promise(setImmediate);
    expect(records).toEqual([
      {
        ...PINO_FIELDS,
        reqId: expect.any(String),
        method: 'GET',
        url: `${API}/test/slow?x=1`,
        responseTime: RESPONSE_TIME,
        remoteAddress: '127.0.0.1',
        userId: board.alice.userId,
        aborted: true,
        msg: 'request aborted',
      },
    ]);
  });
});

describeEachDialect('the request log at level warn', (dialect) => {
  let board: MessageTestBoard;
  let app: BaudApp;
  const records: LogRecord[] = [];
  beforeAll(async () => {
    board = await createMessageTestBoard(dialect);
    const stream = { write: (text: string) => records.push(JSON.parse(text) as LogRecord) };
    app = await buildApp(board.config, { board: board.board, logger: { level: 'warn', stream } });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await board?.close();
  });

  it('writes nothing for requests that succeed or are refused', async () => {
    for (const url of [`${API}/system/info`, `${API}/users/me`, `${API}/nowhere`]) {
      await app.inject({ method: 'GET', url });
    }
    expect(records).toEqual([]);
  });
});
