import { afterAll, beforeAll, expect, it } from 'vitest';
import { base32Decode, timeStepAt, totpCode } from '../../src/auth/totp.js';
import { API, listenOnFreePort, PASSWORD, tallyStatuses } from '../auth/auth-helpers.js';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';

const MAX_FAILURES = 10;
const PARALLEL = 300;

/** A distinct client address per index, seen by the app through X-Forwarded-For (trustProxy). */
const addressOf = (index: number) => `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`;

/** Two-factor login under parallel load over real HTTP: a code lets one login in, guessed codes are throttled. */
describeEachDialect('two-factor login against parallel replays and guesses over HTTP', (dialect) => {
  // A frozen clock: every attempt falls in one time step and one throttle window.
  const clock = fakeClock();
  let board: TestBoard;
  let baseUrl: string;
  const keys = new Map<string, Buffer>();
  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      clock,
      config: {
        database: { poolSize: 10 },
        contentServers: {
          web: { trustProxy: true, restApi: { loginThrottle: { maxFailures: MAX_FAILURES, windowSeconds: 900 } } },
        },
      },
    });
    for (const username of ['replayed', 'guessed']) {
      const { auth } = await board.userWithToken(username, { password: PASSWORD });
      const enrolled = await board.app.inject({
        method: 'POST',
        url: `${API}/users/me/totp`,
        headers: auth,
        payload: { password: PASSWORD },
      });
      const key = base32Decode(enrolled.json().secret) ?? Buffer.alloc(0);
      // Confirmed with the previous step's code: the current step's is still unused.
      const confirmed = await board.app.inject({
        method: 'POST',
        url: `${API}/users/me/totp/confirm`,
        headers: auth,
        payload: { code: totpCode(key, timeStepAt(clock.now()) - 1) },
      });
      expect(confirmed.statusCode).toBe(200);
      keys.set(username, key);
    }
    baseUrl = await listenOnFreePort(board);
  });
  afterAll(() => board.close());

  const codeOf = (username: string, stepOffset = 0) =>
    totpCode(keys.get(username) ?? Buffer.alloc(0), timeStepAt(clock.now()) + stepOffset);

  async function postLogin(username: string, otp: string, address: string) {
    const response = await fetch(`${baseUrl}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
      body: JSON.stringify({ username, password: PASSWORD, otp }),
    });
    const body = (await response.json()) as { code?: string };
    return { status: response.status, code: body.code };
  }

  it(`lets exactly one of ${PARALLEL} parallel logins with one code in`, async () => {
    const otp = codeOf('replayed');
    const answers = await Promise.all(
      Array.from({ length: PARALLEL }, (_, index) => postLogin('replayed', otp, addressOf(index))),
    );
    const tally = tallyStatuses(answers.map((answer) => answer.status));
    expect(tally[200]).toBe(1);
    // The others were refused as a used code, or throttled: the success ends the account's
    // window, so how many of them had their code checked depends on when it committed.
    expect((tally[401] ?? 0) + (tally[429] ?? 0)).toBe(PARALLEL - 1);
    expect(new Set(answers.filter((answer) => answer.status === 401).map((answer) => answer.code))).toEqual(
      new Set(['auth.invalid-otp']),
    );
  });

  it(`checks exactly ${MAX_FAILURES} of ${PARALLEL} parallel guessed codes, and then refuses the right one`, async () => {
    const valid = new Set([-1, 0, 1].map((offset) => codeOf('guessed', offset)));
    const guesses: string[] = [];
    for (let guess = 0; guesses.length < PARALLEL; guess += 7919) {
      const code = String(guess % 1_000_000).padStart(6, '0');
      if (!valid.has(code)) guesses.push(code);
    }
    const answers = await Promise.all(
      guesses.map((otp, index) => postLogin('guessed', otp, addressOf(100_000 + index))),
    );
    expect(tallyStatuses(answers.map((answer) => answer.status))).toEqual({
      401: MAX_FAILURES,
      429: PARALLEL - MAX_FAILURES,
    });
    expect((await postLogin('guessed', codeOf('guessed'), addressOf(200_000))).status).toBe(429);
  });
});
