import { afterAll, beforeAll, expect, it } from 'vitest';
import { listenOnFreePort, PASSWORD, tallyStatuses } from '../auth/auth-helpers.js';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';

const MAX_FAILURES = 10;
const WINDOW_SECONDS = 900;
const PARALLEL = 300;

interface LoginAnswer {
  readonly status: number;
  readonly retryAfter: string | null;
}

/** A distinct client address per index, seen by the app through X-Forwarded-For (trustProxy). */
const addressOf = (index: number) => `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`;

describeEachDialect('login throttle against parallel guessing over HTTP', (dialect) => {
  // A frozen clock: every attempt falls in one window, and Retry-After is exact.
  const clock = fakeClock();
  let board: TestBoard;
  let baseUrl: string;
  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      clock,
      config: {
        database: { poolSize: 10 },
        contentServers: {
          web: {
            trustProxy: true,
            restApi: { loginThrottle: { maxFailures: MAX_FAILURES, windowSeconds: WINDOW_SECONDS } },
          },
        },
      },
    });
    for (const username of ['alice', 'bob'])
      await board.board.credentials.createAccount({ username, password: PASSWORD });
    baseUrl = await listenOnFreePort(board);
  });
  afterAll(() => board.close());

  async function postLogin(username: string, password: string, address: string): Promise<LoginAnswer> {
    const response = await fetch(`${baseUrl}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
      body: JSON.stringify({ username, password }),
    });
    await response.arrayBuffer();
    return { status: response.status, retryAfter: response.headers.get('retry-after') };
  }

  /** Fires every attempt at once (fetch opens a connection per request in flight). */
  function fireAtOnce(attempts: readonly { username: string; password: string; address: string }[]) {
    return Promise.all(attempts.map((attempt) => postLogin(attempt.username, attempt.password, attempt.address)));
  }

  it(`evaluates exactly ${MAX_FAILURES} of ${PARALLEL} parallel guesses at one username from many addresses`, async () => {
    const answers = await fireAtOnce(
      Array.from({ length: PARALLEL }, (_, index) => ({
        username: 'alice',
        password: `guess ${index}`,
        address: addressOf(index),
      })),
    );
    expect(tallyStatuses(answers.map((answer) => answer.status))).toEqual({
      401: MAX_FAILURES,
      429: PARALLEL - MAX_FAILURES,
    });
    const retryAfters = new Set(answers.filter((answer) => answer.status === 429).map((answer) => answer.retryAfter));
    expect([...retryAfters]).toEqual([String(WINDOW_SECONDS)]);
  });

  it(`evaluates exactly ${MAX_FAILURES} of ${PARALLEL} parallel guesses from one address at many usernames`, async () => {
    const answers = await fireAtOnce(
      Array.from({ length: PARALLEL }, (_, index) => ({
        username: `victim${index}`,
        password: PASSWORD,
        address: '192.0.2.66',
      })),
    );
    expect(tallyStatuses(answers.map((answer) => answer.status))).toEqual({
      401: MAX_FAILURES,
      429: PARALLEL - MAX_FAILURES,
    });
    expect(answers.find((answer) => answer.status === 429)?.retryAfter).toBe(String(WINDOW_SECONDS));
  });

  it('never lets the right password placed last among parallel guesses in once the limit is spent', async () => {
    const attempts = Array.from({ length: PARALLEL - 1 }, (_, index) => ({
      username: 'bob',
      password: `guess ${index}`,
      address: addressOf(100_000 + index),
    }));
    attempts.push({ username: 'bob', password: PASSWORD, address: addressOf(100_000 + PARALLEL) });
    const answers = await fireAtOnce(attempts);
    expect(tallyStatuses(answers.map((answer) => answer.status))).toEqual({
      401: MAX_FAILURES,
      429: PARALLEL - MAX_FAILURES,
    });
    expect(answers.at(-1)?.status).toBe(429);
  });
});
