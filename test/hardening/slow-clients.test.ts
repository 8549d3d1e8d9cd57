import { request } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseRawResponse, type RawResponse, rawClient, slowCrowd } from '../support/raw-http.js';
import { describeEachDialect } from '../support/test-board.js';
import { API_PREFIX, type BaudProcess, createHardeningBoard, type HardeningBoard } from './support/baud-process.js';

/**
 * Slow clients against a real `baud serve` with short timeouts: a client that never finishes
 * its headers, or its JSON body, is cut off with a 408 problem+json in about the configured
 * time, and a crowd of them does not slow down everybody else.
 */

const HEADERS_TIMEOUT_SECONDS = 2;
const BODY_TIMEOUT_SECONDS = 2;
/** Timing slack: a 2-core machine running other test files at the same time. */
const LATE_MS = 3500;
const EARLY_MS = 500;

const BOARD_CONFIG = {
  contentServers: {
    web: { headersTimeoutSeconds: HEADERS_TIMEOUT_SECONDS, bodyTimeoutSeconds: BODY_TIMEOUT_SECONDS },
  },
};

/** Request headers that never end: the final empty line never comes, one more byte at a time. */
const UNFINISHED_HEADERS = `GET ${API_PREFIX}/system/info HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: `;
/** A complete JSON POST head announcing 100 bytes, and the first 19 of them. */
const PARTIAL_JSON_POST =
  `POST ${API_PREFIX}/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
  'Content-Length: 100\r\n\r\n{"username":"slow",';

function expectProblem408(response: RawResponse | null): void {
  expect(response).not.toBeNull();
  expect(response?.status).toBe(408);
  expect(response?.headers['content-type']).toMatch(/^application\/problem\+json(;|$)/);
  const problem = JSON.parse(response?.body ?? 'null') as unknown;
  expect(problem).toEqual({
    type: expect.any(String),
    title: expect.any(String),
    status: 408,
    detail: expect.any(String),
    code: 'request.timeout',
  });
}

describeEachDialect('slow clients', (dialect) => {
  let board: HardeningBoard;
  let server: BaudProcess;
  let port: number;

  beforeAll(async () => {
    board = createHardeningBoard(dialect, BOARD_CONFIG);
    server = await board.start();
    port = Number(new URL(server.origin).port);
  }, 120_000);
  afterAll(async () => {
    await board?.destroy();
  });

  it(`cuts off a client that sends its headers one byte at a time after about ${HEADERS_TIMEOUT_SECONDS} s`, async () => {
    const outcome = await rawClient({
      port,
      prelude: UNFINISHED_HEADERS,
      trickle: 'abcdefghij',
      trickleEveryMs: 100,
      giveUpAfterMs: HEADERS_TIMEOUT_SECONDS * 1000 + LATE_MS + 2000,
    });
    const answer = parseRawResponse(outcome.received, true);
    console.log(
      `slow-clients [${dialect}]: header trickler (1 byte / 100 ms) ` +
        `${outcome.closedAfterMs === null ? 'NOT cut off' : `cut off after ${(outcome.closedAfterMs / 1000).toFixed(2)} s`} ` +
        `(headersTimeoutSeconds ${HEADERS_TIMEOUT_SECONDS}), ${outcome.bytesSent} bytes sent, answer: ` +
        `${outcome.received.length === 0 ? 'none' : `${answer?.status} ${answer?.headers['content-type']}`}`,
    );
    expect(outcome.closedAfterMs).not.toBeNull();
    expect(outcome.closedAfterMs ?? 0).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_SECONDS * 1000 - EARLY_MS);
    expect(outcome.closedAfterMs ?? Number.POSITIVE_INFINITY).toBeLessThanOrEqual(
      HEADERS_TIMEOUT_SECONDS * 1000 + LATE_MS,
    );
    // Closing without a word is allowed; anything written must be the 408 problem.
    if (outcome.received.length > 0) expectProblem408(answer);
  }, 20_000);

  it(`answers a JSON POST whose body stops short 408 problem+json after about ${BODY_TIMEOUT_SECONDS} s`, async () => {
    const outcome = await rawClient({
      port,
      prelude: PARTIAL_JSON_POST,
      giveUpAfterMs: BODY_TIMEOUT_SECONDS * 1000 + LATE_MS + 2000,
    });
    const answer = parseRawResponse(outcome.received, outcome.closedAfterMs !== null);
    console.log(
      `slow-clients [${dialect}]: JSON POST with 19 of 100 body bytes: ` +
        `${outcome.firstByteAfterMs === null ? 'no answer' : `answered ${answer?.status} after ${(outcome.firstByteAfterMs / 1000).toFixed(2)} s`}, ` +
        `${outcome.closedAfterMs === null ? 'connection left open' : `closed after ${(outcome.closedAfterMs / 1000).toFixed(2)} s`} ` +
        `(bodyTimeoutSeconds ${BODY_TIMEOUT_SECONDS})`,
    );
    expectProblem408(answer);
    expect(answer?.headers.connection?.toLowerCase()).toBe('close');
    expect(outcome.firstByteAfterMs ?? 0).toBeGreaterThanOrEqual(BODY_TIMEOUT_SECONDS * 1000 - EARLY_MS);
    expect(outcome.firstByteAfterMs ?? Number.POSITIVE_INFINITY).toBeLessThanOrEqual(
      BODY_TIMEOUT_SECONDS * 1000 + LATE_MS,
    );
    // The server hangs up after the answer.
    expect(outcome.closedAfterMs).not.toBeNull();
  }, 20_000);

  it('keeps answering other clients quickly while 50 slow clients hang on', async () => {
    // 25 header tricklers and 25 body tricklers; whenever the server cuts one off it comes back.
    const headerTricklers = slowCrowd(25, { port, prelude: UNFINISHED_HEADERS, trickle: 'x', trickleEveryMs: 200 });
    const bodyTricklers = slowCrowd(25, {
      port,
      prelude: PARTIAL_JSON_POST,
      trickle: ' ',
      trickleEveryMs: 200,
      maxTrickleBytes: 80, // never reaches the announced 100 bytes
    });
    try {
      const connected = performance.now();
      while (headerTricklers.open() + bodyTricklers.open() < 50 && performance.now() - connected < 10_000) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const openAtStart = headerTricklers.open() + bodyTricklers.open();
      expect(openAtStart).toBe(50);

      const latenciesMs: number[] = [];
      const statuses: number[] = [];
      // Paced over ~4 s, so the check spans at least one round of the crowd being cut off.
      const checkStarted = performance.now();
      for (let index = 0; index < 100; index++) {
        const started = performance.now();
        statuses.push(await getStatus(`${server.apiUrl}/system/info`));
        latenciesMs.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
      const checkSeconds = (performance.now() - checkStarted) / 1000;
      const openAtEnd = headerTricklers.open() + bodyTricklers.open();
      const cutOff = headerTricklers.cutOff() + bodyTricklers.cutOff();

      const sorted = [...latenciesMs].sort((a, b) => a - b);
      const percentile = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
      console.log(
        `slow-clients [${dialect}]: 100 GET /system/info (fresh connections, over ${checkSeconds.toFixed(1)} s) beside 50 slow clients ` +
          `(${openAtStart} open at start, ${openAtEnd} at end, ${cutOff} cut off and reconnected meanwhile): ` +
          `${statuses.filter((status) => status === 200).length} × 200, p50 ${percentile(0.5).toFixed(0)} ms, ` +
          `p95 ${percentile(0.95).toFixed(0)} ms, max ${percentile(1).toFixed(0)} ms`,
      );
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      // A liveness bound, not a benchmark.
      expect(Math.max(...latenciesMs)).toBeLessThan(1000);
      // The crowd was really there for the whole check.
      expect(openAtEnd).toBeGreaterThanOrEqual(40);
    } finally {
      headerTricklers.stop();
      bodyTricklers.stop();
    }
  }, 60_000);
});

function getStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const get = request(url, { agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    get.on('error', reject);
    get.setTimeout(10_000, () => get.destroy(new Error(`no answer from ${url} within 10 s`)));
    get.end();
  });
}
