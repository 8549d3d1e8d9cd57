import { afterAll, beforeAll, expect, it } from 'vitest';
import { type BaudApp, buildApp, METRICS_COUNTED_ROUTES } from '../../src/app.js';
import { configFromObject } from '../../src/config/load-config.js';
import {
  type BoardMetrics,
  createBoardMetrics,
  listenForMetrics,
  type MetricsListener,
} from '../../src/metrics/board-metrics.js';
import { serveBoard } from '../../src/setup/serve-board.js';
import { PASSWORD } from '../auth/auth-helpers.js';
import { buildMultipart } from '../support/multipart.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

const API = '/_baud/api/v1';

/** The value of one sample line of the scrape, or undefined when the series is absent. */
function sample(scrape: string, series: string): number | undefined {
  const line = scrape.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * What Prometheus reads from a node: requests by route pattern and status with latency, logins
 * refused and throttled, uploads and their bytes, live sessions, the database pool and the
 * process — on a listener of its own, never on the public port.
 */
describeEachDialect('metrics', (dialect) => {
  let board: TestBoard;
  let app: BaudApp;
  let metrics: BoardMetrics;
  let listener: MetricsListener;
  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      config: {
        fileBase: {
          storageTags: { main: 'files/main' },
          areas: { uploads: { name: 'Uploads', storageTags: ['main'], acs: { write: 'GM[users]' } } },
        },
        contentServers: { web: { restApi: { loginThrottle: { maxFailures: 2, windowSeconds: 600 } } } },
        // Opens the database with query timing; the listener itself is started below.
        metrics: { enabled: true },
      },
    });
    metrics = createBoardMetrics({
      database: board.board.database,
      system: board.board.system,
      routes: METRICS_COUNTED_ROUTES,
    });
    app = await buildApp(board.config, { board: board.board, logger: false, metrics });
    listener = await listenForMetrics(metrics, { address: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await listener?.close();
    await app?.close();
    await board?.close();
  });

  const scrape = async () => {
    const response = await fetch(listener.url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return response.text();
  };

  it('counts requests by route pattern and status, with their latency', async () => {
    for (let index = 0; index < 3; index += 1) await app.inject({ method: 'GET', url: `${API}/system/info` });
    await app.inject({ method: 'GET', url: `${API}/messages/0190a5c4-0000-7000-8000-000000000000` });
    await app.inject({ method: 'GET', url: '/nowhere/at/all' });
    const text = await scrape();
    expect(sample(text, `baud_http_requests_total{method="GET",route="${API}/system/info",status="200"}`)).toBe(3);
    // The pattern, not the URL: one series for every message id.
    expect(sample(text, `baud_http_requests_total{method="GET",route="${API}/messages/:uuid",status="404"}`)).toBe(1);
    expect(sample(text, 'baud_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(
      sample(text, `baud_http_request_duration_seconds_count{method="GET",route="${API}/system/info",status="200"}`),
    ).toBe(3);
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });

  const loginStatus = async (password: string, remoteAddress: string) =>
    (
      await app.inject({
        method: 'POST',
        url: `${API}/auth/login`,
        payload: { username: 'metered', password },
        remoteAddress,
      })
    ).statusCode;

  it('counts refused and throttled logins, and live sessions', async () => {
    await board.board.credentials.createAccount({ username: 'metered', password: PASSWORD });
    const before = await scrape();
    const failuresBefore = sample(before, 'baud_login_failures_total') ?? 0;
    expect(await loginStatus(PASSWORD, '192.0.2.1')).toBe(200);
    expect(await loginStatus('wrong password', '192.0.2.2')).toBe(401);
    expect(await loginStatus('wrong password', '192.0.2.2')).toBe(401);
    expect(await loginStatus(PASSWORD, '192.0.2.3')).toBe(429);
    const text = await scrape();
    expect(sample(text, 'baud_login_failures_total')).toBe(failuresBefore + 2);
    expect(sample(text, 'baud_login_throttled_total')).toBe(1);
    expect(sample(text, 'baud_live_sessions')).toBe(1);
  });

  it('counts stored uploads and their request bytes, not refused ones', async () => {
    const uploader = await board.userWithToken('uploader');
    const upload = (fileName: string) => {
      const { body, contentType } = buildMultipart([{ name: 'file', fileName, value: 'metered bytes' }]);
      return app
        .inject({
          method: 'POST',
          url: `${API}/files/areas/uploads`,
          headers: { 'content-type': contentType, ...uploader.auth },
          payload: body,
        })
        .then((response) => ({ response, bytes: body.length }));
    };
    const stored = await upload('one.txt');
    expect(stored.response.statusCode).toBe(201);
    expect((await upload('two.txt')).response.statusCode).toBe(409); // same content
    const text = await scrape();
    expect(sample(text, 'baud_uploads_total')).toBe(1);
    expect(sample(text, 'baud_upload_request_bytes_total')).toBe(stored.bytes);
  });

  it('shows the PostgreSQL pool (SQLite has none)', async () => {
    const text = await scrape();
    const open = sample(text, 'baud_db_pool_connections');
    if (dialect === 'postgres') expect(open).toBeGreaterThanOrEqual(1);
    else expect(open ?? 0).toBe(0);
  });

  it('times database queries by statement and outcome', async () => {
    const count = (text: string, operation: string, outcome: string) =>
      sample(text, `baud_db_query_duration_seconds_count{operation="${operation}",outcome="${outcome}"}`) ?? 0;
    const before = await scrape();
    await board.board.db.selectFrom('users').select('id').execute();
    await expect(
      board.board.db
        .selectFrom('no_such_table' as 'users')
        .selectAll()
        .execute(),
    ).rejects.toThrow();
    const text = await scrape();
    expect(count(text, 'select', 'ok')).toBeGreaterThan(count(before, 'select', 'ok'));
    expect(count(text, 'select', 'error')).toBe(count(before, 'select', 'error') + 1);
    expect(text).toContain('# TYPE baud_db_query_duration_seconds histogram');
  });

  it('is never served on the public port, and answers only GET /metrics on its own', async () => {
    expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: `${API}/metrics` })).statusCode).toBe(404);
    const elsewhere = await fetch(listener.url.replace('/metrics', '/other'));
    expect(elsewhere.status).toBe(404);
  });
});

describeEachDialect('metrics listener of baud serve', (dialect) => {
  it('listens on its own port only when enabled, and closes with the board', async () => {
    const board = await createTestBoard(dialect);
    const configWith = (metricsConfig: Record<string, unknown>) =>
      configFromObject({
        paths: { dataDir: board.dir },
        database: { url: board.databaseUrl, poolSize: 2 },
        logging: { level: 'silent' },
        contentServers: { web: { port: 0 } },
        metrics: metricsConfig,
      });
    try {
      const off = await serveBoard(configWith({}));
      expect(off.metricsUrl).toBeNull();
      await off.stop();
      const on = await serveBoard(configWith({ enabled: true, port: 0 }));
      expect(on.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const scraped = await fetch(on.metricsUrl as string);
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('baud_http_requests_total');
      await on.stop();
      await expect(fetch(on.metricsUrl as string)).rejects.toThrow();
    } finally {
      await board.close();
    }
  });
});
