import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { rawExchange } from '../support/raw-http.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

const API = '/_baud/api/v1';
const PROBLEM = 'application/problem+json; charset=utf-8';

function problem(status: number, title: string, detail: string, code: string) {
  return { type: `${API}/errors/${status}`, title, status, detail, code };
}

/**
 * Answers written by layers below the routes — the router, Node's HTTP parser, the closing
 * server — are problem+json like every other answer, with the right status and title.
 */
describeEachDialect('errors raised below the routes', (dialect) => {
  let board: TestBoard;
  let port: number;
  beforeAll(async () => {
    board = await createTestBoard(dialect, { config: { contentServers: { web: { headersTimeoutSeconds: 1 } } } });
    await board.app.listen({ host: '127.0.0.1', port: 0 });
    port = (board.app.server.address() as AddressInfo).port;
  });
  afterAll(() => board.close());

  it('answers a 10,000-character area tag with a 404 problem, not a 414', async () => {
    const tag = 'a'.repeat(10_000);
    const response = await board.app.inject({ method: 'GET', url: `${API}/messages/areas/${tag}` });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toBe(PROBLEM);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.json()).toEqual(
      problem(404, 'Not Found', `No resource at ${`${API}/messages/areas/${tag}`.slice(0, 200)}….`, 'route.not-found'),
    );
  });

  it('answers a path with a broken percent escape with a 400 problem', async () => {
    const response = await board.app.inject({ method: 'GET', url: `${API}/messages/conferences/%zz` });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toBe(PROBLEM);
    expect(response.json()).toEqual(
      problem(
        400,
        'Bad Request',
        'The URL is not valid: a percent sign must start an escape such as %2F.',
        'request.invalid-url',
      ),
    );
  });

  it('answers headers over 16 KiB with a 431 problem and closes', async () => {
    const response = await rawExchange(
      port,
      `GET ${API}/system/info HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
    );
    expect(response.status).toBe(431);
    expect(response.headers['content-type']).toBe(PROBLEM);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers.connection).toBe('close');
    expect(JSON.parse(response.body)).toEqual(
      problem(
        431,
        'Request Header Fields Too Large',
        'The request headers are too large.',
        'request.headers-too-large',
      ),
    );
  });

  it('answers a malformed request line with a 400 problem', async () => {
    const response = await rawExchange(port, 'THIS IS NOT HTTP\r\n\r\n');
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toBe(PROBLEM);
    expect(JSON.parse(response.body)).toEqual(
      problem(400, 'Bad Request', 'The request is not valid HTTP.', 'request.invalid-http'),
    );
  });

  it('answers headers that never finish with a 408 problem after the headers timeout', async () => {
    const response = await rawExchange(port, `GET ${API}/system/info HTTP/1.1\r\nHost: x\r\nX-Slow: `);
    expect(response.status).toBe(408);
    expect(response.headers['content-type']).toBe(PROBLEM);
    expect(JSON.parse(response.body)).toEqual(
      problem(408, 'Request Timeout', 'The request did not arrive in time.', 'request.timeout'),
    );
    // headersTimeoutSeconds is 1; the server checks every second, so well under the old 30 s.
    expect(response.closedAfterMs).toBeLessThan(5_000);
  });

  it('answers 404, not 405, when a route of the right method finds nothing (docs static files)', async () => {
    const response = await board.app.inject({ method: 'GET', url: `${API}/docs/static/a%2fb` });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toBe(PROBLEM);
    expect(response.headers.allow).toBeUndefined();
  });

  it('answers requests that arrive while the node shuts down with a 503 problem and Retry-After', async () => {
    // A second app on the same board, so a hook can be added before it starts; the hook asks
    // over real HTTP while the app is closing (inject refuses a closing app).
    const app = await buildApp(board.config, { board: board.board, logger: false });
    let answer: { statusCode: number; headers: Record<string, string>; json: () => unknown } | undefined;
    app.addHook('preClose', async () => {
      const { port: closingPort } = app.server.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${closingPort}${API}/system/info`);
      const body: unknown = await response.json();
      answer = { statusCode: response.status, headers: Object.fromEntries(response.headers), json: () => body };
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    await app.close();
    expect(answer?.statusCode).toBe(503);
    expect(answer?.headers['content-type']).toBe(PROBLEM);
    expect(answer?.headers['retry-after']).toBe('5');
    expect(answer?.headers.connection).toBe('close');
    expect(answer?.json()).toEqual(
      problem(503, 'Service Unavailable', 'The board is shutting down; try again shortly.', 'server.shutting-down'),
    );
  });
});
