import { afterEach, expect, it } from 'vitest';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';
import { login, PASSWORD } from './auth-helpers.js';

const USERNAMES = ['amy', 'ben', 'cat', 'dan'];

/**
 * The client address the login throttle counts (and the request log shows) comes from
 * `X-Forwarded-For` only when `contentServers.web.trustProxy` says the peer is a proxy we
 * run; otherwise a client could name a new address with every guess and never be throttled.
 */
describeEachDialect('client addresses behind a proxy', (dialect) => {
  let board: TestBoard;
  afterEach(async () => {
    await board?.close();
  });

  async function boardTrusting(trustProxy: unknown) {
    board = await createTestBoard(dialect, {
      config: {
        contentServers: {
          web: { trustProxy, restApi: { loginThrottle: { maxFailures: 3, windowSeconds: 600 } } },
        },
      },
    });
    for (const username of USERNAMES) await board.board.credentials.createAccount({ username, password: PASSWORD });
  }

  /** Three wrong guesses at three usernames, each claiming another forwarded address. */
  async function guessWithSpoofedAddresses(remoteAddress: string) {
    for (const [index, username] of USERNAMES.slice(0, 3).entries()) {
      const forwardedFor = `203.0.113.${index + 1}`;
      const { response } = await login(board, username as string, 'wrong password', { remoteAddress, forwardedFor });
      expect(response.statusCode).toBe(401);
    }
  }

  it('ignores a spoofed X-Forwarded-For by default: the guesses count against the real address', async () => {
    await boardTrusting(false);
    await guessWithSpoofedAddresses('198.51.100.7');
    const next = await login(board, 'dan', PASSWORD, { remoteAddress: '198.51.100.7', forwardedFor: '203.0.113.99' });
    expect(next.response.statusCode).toBe(429);
  });

  it('counts the forwarded address when the peer is a trusted proxy', async () => {
    await boardTrusting(['198.51.100.7']);
    await guessWithSpoofedAddresses('198.51.100.7');
    // Each client behind the proxy has its own count: a fourth client logs in.
    const fresh = await login(board, 'dan', PASSWORD, { remoteAddress: '198.51.100.7', forwardedFor: '203.0.113.99' });
    expect(fresh.response.statusCode).toBe(200);
    // And one client behind the proxy is throttled whatever the proxy's own address says.
    for (const username of USERNAMES.slice(0, 3)) {
      await login(board, username, 'wrong password', { remoteAddress: '198.51.100.7', forwardedFor: '203.0.113.50' });
    }
    const throttled = await login(board, 'dan', PASSWORD, {
      remoteAddress: '198.51.100.7',
      forwardedFor: '203.0.113.50',
    });
    expect(throttled.response.statusCode).toBe(429);
  });

  it('does not believe X-Forwarded-For from a peer that is not the configured proxy', async () => {
    await boardTrusting(['198.51.100.7']);
    await guessWithSpoofedAddresses('192.0.2.44');
    const next = await login(board, 'dan', PASSWORD, { remoteAddress: '192.0.2.44', forwardedFor: '203.0.113.99' });
    expect(next.response.statusCode).toBe(429);
  });
});
