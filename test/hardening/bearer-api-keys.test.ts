import { afterAll, beforeAll, expect, it } from 'vitest';
import { insertImportedApiKey } from '../auth/auth-helpers.js';
import { MESSAGE_TEST_CONFIG } from '../messages/message-fixture.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

const BAUD = '/_baud/api/v1';
const ENIG = '/_enig/api/v1';
const PREFIXES = [BAUD, ENIG] as const;
const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

/** Keys as ENiGMA½ issued them (64 hex digits), carried over by `baud import enigma` as their hash. */
const IMPORTED_KEYS = {
  read: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  readWrite: '2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae',
};
/** The same shape, but no key of this board. */
const UNKNOWN_HEX_KEY = 'fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9';

const CONFIG = {
  ...MESSAGE_TEST_CONFIG,
  contentServers: {
    web: { restApi: { ...MESSAGE_TEST_CONFIG.contentServers.web.restApi, enigmaCompat: true } },
  },
};

/**
 * Spec 5.3 lets a bot send its API key as `Authorization: Bearer <key>`. Keys imported from
 * ENiGMA½ (64 hex digits, no `baud_` prefix) must work that way under both prefixes, or a bot
 * that followed the spec breaks after the move; values of no key's shape still never reach the
 * key store, and access tokens keep working.
 */
describeEachDialect('API keys sent as Authorization: Bearer', (dialect) => {
  let board: TestBoard;
  let baudReadKey: string;
  let aliceToken: string;
  beforeAll(async () => {
    board = await createTestBoard(dialect, { config: CONFIG });
    const alice = await board.userWithToken('alice');
    aliceToken = alice.token;
    await insertImportedApiKey(board, alice.userId, IMPORTED_KEYS.read, 'read');
    await insertImportedApiKey(board, alice.userId, IMPORTED_KEYS.readWrite, 'read,write');
    baudReadKey = (await board.board.apiKeys.generate('alice', 'bot', 'read')).key;
  });
  afterAll(() => board.close());

  const getMe = (prefix: string, credential: string) =>
    board.app.inject({ method: 'GET', url: `${prefix}/users/me`, headers: { authorization: `Bearer ${credential}` } });
  const putLocation = (prefix: string, credential: string, location: string) =>
    board.app.inject({
      method: 'PUT',
      url: `${prefix}/users/me`,
      headers: { authorization: `Bearer ${credential}` },
      payload: { location },
    });

  it.each(PREFIXES)('takes an imported read key as Bearer under %s, with its read scope', async (prefix) => {
    const me = await getMe(prefix, IMPORTED_KEYS.read);
    expect(me.statusCode).toBe(200);
    expect(me.json().username).toBe('alice');
    const write = await putLocation(prefix, IMPORTED_KEYS.read, 'nowhere');
    expect(write.statusCode).toBe(403);
    expect(write.headers['content-type']).toBe(PROBLEM_TYPE);
    expect(write.json()).toEqual({
      type: `${prefix}/errors/403`,
      title: 'Forbidden',
      status: 403,
      detail: "This API key's scope does not allow PUT requests.",
      code: 'auth.scope-insufficient',
    });
  });

  it.each(PREFIXES)('takes an imported read,write key as Bearer under %s, and it may write', async (prefix) => {
    const write = await putLocation(prefix, IMPORTED_KEYS.readWrite, `via ${prefix}`);
    expect(write.statusCode).toBe(200);
    expect(write.json()).toMatchObject({ username: 'alice', location: `via ${prefix}` });
  });

  it.each(PREFIXES)('takes a baud key as Bearer under %s, with its read scope', async (prefix) => {
    const me = await getMe(prefix, baudReadKey);
    expect(me.statusCode).toBe(200);
    expect(me.json().username).toBe('alice');
    expect((await putLocation(prefix, baudReadKey, 'nowhere')).statusCode).toBe(403);
  });

  it.each(PREFIXES)('refuses a 64-hex Bearer value that is no key of this board with 401 under %s', async (prefix) => {
    const response = await getMe(prefix, UNKNOWN_HEX_KEY);
    expect(response.statusCode).toBe(401);
    expect(response.headers['content-type']).toBe(PROBLEM_TYPE);
    expect(response.headers['www-authenticate']).toBe('Bearer realm="baud", error="invalid_token"');
    expect(response.json()).toEqual({
      type: `${prefix}/errors/401`,
      title: 'Unauthorized',
      status: 401,
      detail: 'The API key is unknown or revoked.',
      code: 'auth.invalid-api-key',
    });
  });

  it.each(PREFIXES)('reads Bearer values of no key’s shape as access tokens under %s', async (prefix) => {
    // Upper-case hex, one digit too many, and a key with its prefix cut off are no issuer's keys:
    // they are refused as tokens, without a key lookup.
    for (const value of [
      IMPORTED_KEYS.read.toUpperCase(),
      `${IMPORTED_KEYS.read}0`,
      IMPORTED_KEYS.read.slice(1),
      baudReadKey.slice(5),
    ]) {
      const response = await getMe(prefix, value);
      expect(response.statusCode, value).toBe(401);
      expect(response.json()).toMatchObject({
        type: `${prefix}/errors/401`,
        detail: 'The access token is invalid or expired.',
      });
    }
  });

  it.each(PREFIXES)('still takes an access token as Bearer under %s', async (prefix) => {
    const me = await getMe(prefix, aliceToken);
    expect(me.statusCode).toBe(200);
    expect(me.json().username).toBe('alice');
    expect((await putLocation(prefix, aliceToken, 'home')).statusCode).toBe(200);
  });
});
