import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';
import { login, PASSWORD } from './auth-helpers.js';

describeEachDialect('login throttling', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      clock,
      config: { contentServers: { web: { restApi: { loginThrottle: { maxFailures: 3, windowSeconds: 600 } } } } },
    });
    for (const username of ['alice', 'bob', 'carol', 'dave', 'erin', 'gina', 'hank']) {
      await board.board.users.createUser({ username, password: PASSWORD });
    }
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
