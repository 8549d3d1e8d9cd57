import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.js';
import type { Dialect } from '../../src/db/database.js';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';
import { login, PASSWORD } from './auth-helpers.js';

/** A board whose throttle allows 3 failures per 10 minutes, on a fake clock, with these users. */
async function throttledBoard(dialect: Dialect, clock: Clock, usernames: readonly string[]): Promise<TestBoard> {
  const board = await createTestBoard(dialect, {
    clock,
    config: { contentServers: { web: { restApi: { loginThrottle: { maxFailures: 3, windowSeconds: 600 } } } } },
  });
  for (const username of usernames) await board.board.credentials.createAccount({ username, password: PASSWORD });
  return board;
}

describeEachDialect('login throttling', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  beforeAll(async () => {
    board = await throttledBoard(dialect, clock, ['alice', 'bob', 'carol', 'dave', 'erin', 'gina', 'hank']);
  });
  afterAll(() => board.close());

  it('answers 429 with Retry-After once a username has too many failures, and recovers after the window', async () => {
    for (const address of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) {
      clock.advance(1000);
      expect((await login(board, 'alice', 'wrong password', { remoteAddress: address })).response.statusCode).toBe(401);
    }
    // Even the right password, from a fresh address, is refused while the account is throttled.
    const throttled = await login(board, 'Alice', PASSWORD, { remoteAddress: '10.0.0.9' });
    expect(throttled.response.statusCode).toBe(429);
    expect(throttled.response.headers['retry-after']).toBe('598');
    expect(throttled.response.json()).toEqual({
      type: '/_baud/api/v1/errors/429',
      title: 'Too Many Requests',
      status: 429,
      detail: 'Too many failed logins; try again later.',
      code: 'rate-limit.exceeded',
    });
    expect(throttled.response.headers['set-cookie']).toBeUndefined();

    clock.advance(597_000);
    expect((await login(board, 'alice', PASSWORD, { remoteAddress: '10.0.0.9' })).response.statusCode).toBe(429);
    clock.advance(1000);
    expect((await login(board, 'alice', PASSWORD, { remoteAddress: '10.0.0.9' })).response.statusCode).toBe(200);
  });

  it('throttles a client address that guesses across usernames', async () => {
    const address = '192.0.2.7';
    for (const username of ['bob', 'carol', 'nobody']) {
      expect((await login(board, username, 'wrong password', { remoteAddress: address })).response.statusCode).toBe(
        401,
      );
    }
    const throttled = await login(board, 'dave', PASSWORD, { remoteAddress: address });
    expect(throttled.response.statusCode).toBe(429);
    expect(throttled.response.headers['retry-after']).toBe('600');
    // Another address may still log in to those accounts.
    expect((await login(board, 'dave', PASSWORD, { remoteAddress: '192.0.2.8' })).response.statusCode).toBe(200);
    clock.advance(600_000);
    expect((await login(board, 'dave', PASSWORD, { remoteAddress: address })).response.statusCode).toBe(200);
  });

  it('counts unknown usernames like known ones', async () => {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const { response } = await login(board, 'ghost', 'whatever', { remoteAddress: `198.51.100.${attempt}` });
      expect(response.statusCode).toBe(401);
    }
    const { response } = await login(board, 'ghost', 'whatever', { remoteAddress: '198.51.100.99' });
    expect(response.statusCode).toBe(429);
  });

  it('forgives the account after a successful login', async () => {
    for (let attempt = 0; attempt < 2; attempt += 1) {
      await login(board, 'carol', 'wrong password', { remoteAddress: `203.0.113.${attempt}` });
    }
    expect((await login(board, 'carol', PASSWORD, { remoteAddress: '203.0.113.50' })).response.statusCode).toBe(200);
    for (let attempt = 0; attempt < 2; attempt += 1) {
      await login(board, 'carol', 'wrong password', { remoteAddress: `203.0.113.${10 + attempt}` });
    }
    expect((await login(board, 'carol', PASSWORD, { remoteAddress: '203.0.113.51' })).response.statusCode).toBe(200);
  });

  it("gives an address back the slot of each successful login, but never forgives the address's failures", async () => {
    const address = '192.0.2.30';
    for (const username of ['bob', 'nobody']) {
      expect((await login(board, username, 'wrong password', { remoteAddress: address })).response.statusCode).toBe(
        401,
      );
    }
    // Two failures of three: each success takes the last slot and gives it back.
    for (let round = 0; round < 4; round += 1) {
      expect((await login(board, 'erin', PASSWORD, { remoteAddress: address })).response.statusCode).toBe(200);
    }
    expect((await login(board, 'carol', 'wrong password', { remoteAddress: address })).response.statusCode).toBe(401);
    expect((await login(board, 'erin', PASSWORD, { remoteAddress: address })).response.statusCode).toBe(429);
  });

  it("does not use up an account's slots with attempts its address refuses", async () => {
    const address = '192.0.2.40';
    for (const username of ['nobody1', 'nobody2', 'nobody3']) {
      await login(board, username, 'wrong password', { remoteAddress: address });
    }
    for (let round = 0; round < 5; round += 1) {
      expect((await login(board, 'gina', 'wrong password', { remoteAddress: address })).response.statusCode).toBe(429);
    }
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const { response } = await login(board, 'gina', 'wrong password', { remoteAddress: `192.0.2.${41 + attempt}` });
      expect(response.statusCode).toBe(401);
    }
    expect((await login(board, 'gina', PASSWORD, { remoteAddress: '192.0.2.49' })).response.statusCode).toBe(429);
  });

  it('answers Retry-After for the later of the two windows when both are full', async () => {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await login(board, 'hank', 'wrong password', { remoteAddress: `192.0.2.${60 + attempt}` });
    }
    clock.advance(100_000);
    const address = '192.0.2.70';
    for (const username of ['nobody4', 'nobody5', 'nobody6']) {
      await login(board, username, 'wrong password', { remoteAddress: address });
    }
    const throttled = await login(board, 'hank', PASSWORD, { remoteAddress: address });
    expect(throttled.response.statusCode).toBe(429);
    expect(throttled.response.headers['retry-after']).toBe('600');
  });

  it('prunes windows that are over', async () => {
    clock.advance(11 * 60_000);
    expect((await login(board, 'dave', PASSWORD, { remoteAddress: '192.0.2.50' })).response.statusCode).toBe(200);
    const rows = await board.board.db.selectFrom('loginAttempts').select(['subject', 'attemptCount']).execute();
    expect(rows).toEqual([{ subject: 'ip:192.0.2.50', attemptCount: 0 }]);
  });
});

describeEachDialect('login throttle RateLimit headers', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  beforeAll(async () => {
    board = await throttledBoard(dialect, clock, ['alice', 'bob', 'carol', 'dave']);
  });
  afterAll(() => board.close());

  /** The status, the four RateLimit headers and Retry-After of a login answer. */
  async function loginAnswer(username: string, password: string, remoteAddress: string) {
    const { response } = await login(board, username, password, { remoteAddress });
    const { headers } = response;
    return {
      status: response.statusCode,
      rateLimit: [
        headers['ratelimit-limit'],
        headers['ratelimit-remaining'],
        headers['ratelimit-reset'],
        headers['ratelimit-policy'],
      ],
      retryAfter: headers['retry-after'],
    };
  }
  /** Limit, Remaining, Reset and Policy for `maxFailures: 3, windowSeconds: 600`. */
  const rateLimit = (remaining: number, resetSeconds: number) => [
    '3',
    String(remaining),
    String(resetSeconds),
    '3;w=600',
  ];

  it('tells on every 200, 401 and 429 what the address window leaves and when it ends, counting down with the clock', async () => {
    const address = '192.0.2.1';
    // Both windows open now and hold one attempt each.
    expect(await loginAnswer('alice', 'wrong password', address)).toEqual({
      status: 401,
      rateLimit: rateLimit(2, 600),
      retryAfter: undefined,
    });
    clock.advance(100_000);
    // The address's window holds two attempts now.
    expect(await loginAnswer('bob', 'wrong password', address)).toEqual({
      status: 401,
      rateLimit: rateLimit(1, 500),
      retryAfter: undefined,
    });
    clock.advance(50_000);
    // A success forgives alice and gives the address its slot back: it still holds two.
    expect(await loginAnswer('alice', PASSWORD, address)).toEqual({
      status: 200,
      rateLimit: rateLimit(1, 450),
      retryAfter: undefined,
    });
    expect(await loginAnswer('alice', 'wrong password', address)).toEqual({
      status: 401,
      rateLimit: rateLimit(0, 450),
      retryAfter: undefined,
    });
    expect(await loginAnswer('alice', PASSWORD, address)).toEqual({
      status: 429,
      rateLimit: rateLimit(0, 450),
      retryAfter: '450',
    });
    clock.advance(449_000);
    expect(await loginAnswer('alice', PASSWORD, address)).toEqual({
      status: 429,
      rateLimit: rateLimit(0, 1),
      retryAfter: '1',
    });
    clock.advance(1000);
    // The address's window is over: the success opens a new one and gives its slot straight back.
    expect(await loginAnswer('alice', PASSWORD, address)).toEqual({
      status: 200,
      rateLimit: rateLimit(3, 600),
      retryAfter: undefined,
    });
  });

  it("tells only the caller's own address window, never how often others failed at the username", async () => {
    expect((await loginAnswer('carol', 'wrong password', '198.51.100.1')).rateLimit).toEqual(rateLimit(2, 600));
    clock.advance(10_000);
    // carol's window now holds two failures; a prober elsewhere still sees only its own attempt.
    expect((await loginAnswer('carol', 'wrong password', '198.51.100.2')).rateLimit).toEqual(rateLimit(2, 600));
    // carol logs in (her window is forgiven): nothing in the prober's next answer shows it.
    expect((await loginAnswer('carol', PASSWORD, '198.51.100.1')).status).toBe(200);
    clock.advance(10_000);
    expect((await loginAnswer('carol', 'wrong password', '198.51.100.2')).rateLimit).toEqual(rateLimit(1, 590));
  });

  it('resets at Retry-After, the end of the later full window, when both windows are full', async () => {
    for (const address of ['198.51.100.3', '198.51.100.4', '198.51.100.5']) {
      await loginAnswer('dave', 'wrong password', address);
    }
    clock.advance(60_000);
    const address = '198.51.100.9';
    for (const username of ['nobody1', 'nobody2', 'nobody3']) {
      await loginAnswer(username, 'wrong password', address);
    }
    expect(await loginAnswer('dave', PASSWORD, address)).toEqual({
      status: 429,
      rateLimit: rateLimit(0, 600),
      retryAfter: '600',
    });
  });
});
