import { randomBytes } from 'node:crypto';
import { createAccessTokens } from '../../../src/auth/access-tokens.js';
import type { Dialect } from '../../../src/db/database.js';
import { MESSAGE_TEST_CONFIG, seedMessages } from '../../messages/message-fixture.js';
import { FILE_BASE_CONFIG, filePart, upload } from '../../support/file-board.js';
import { createTestBoard, deepMerge, fakeClock, type TestBoard } from '../../support/test-board.js';
import { buildZip } from '../../support/zip-builder.js';
import type { FuzzPools, Identity } from './fuzz-pools.js';
import { type Operation, operationsOf } from './openapi-operations.js';

export const API = '/_baud/api/v1';
export const REFRESH_COOKIE = 'baud_refresh';
const PASSWORD = 'correct horse battery';

/** Small enough that the fuzzer crosses it cheaply, large enough for the fixture files. */
const UPLOAD_LIMIT_BYTES = 64 * 1024;

/**
 * The message conferences of the message tests and the file areas of the file tests on one
 * board, with the login throttle and session cap set so high that the fuzzer's thousands of
 * logins neither get 429 after the first few nor end the fixture users' own sessions.
 */
const FUZZ_CONFIG = deepMerge(deepMerge(MESSAGE_TEST_CONFIG, FILE_BASE_CONFIG), {
  contentServers: {
    web: { restApi: { loginThrottle: { maxFailures: 1_000_000 }, maxSessionsPerUser: 1000 } },
  },
  fileBase: { maxUploadBytes: UPLOAD_LIMIT_BYTES },
});

/** The docs UI: hidden from the document today, and not fuzzed should it ever appear there. */
const DOCS_UI_PREFIX = `${API}/docs`;

/**
 * The operations of the app's own OpenAPI document (`app.swagger()`), read from a throwaway
 * board, so that the suite can declare one test per operation before any fixture exists.
 */
export async function fuzzOperations(): Promise<Operation[]> {
  const board = await createTestBoard('sqlite', { config: FUZZ_CONFIG });
  try {
    return operationsOf(board.app.swagger(), API).filter(
      (operation) => !operation.pathTemplate.startsWith(DOCS_UI_PREFIX),
    );
  } finally {
    await board.close();
  }
}

function refreshCookieOf(response: { cookies: readonly { name: string; value: string }[] }): string {
  return response.cookies.find((cookie) => cookie.name === REFRESH_COOKIE)?.value ?? '';
}

export interface FuzzBoard {
  readonly board: TestBoard;
  readonly pools: FuzzPools;
}

const ZIP_WITH_DIZ = buildZip([
  { name: 'FILE_ID.DIZ', data: '\u001b[1;33mFuzz Tools\u001b[0m v1.0 (1994) #fuzz #tools' },
  { name: 'README.TXT', data: 'Read me first.\r\n' },
  { name: 'tool.exe', data: 'MZ\u0090\u0000' },
]);

function expect200(response: { statusCode: number; body: string }, what: string): void {
  if (response.statusCode >= 300) throw new Error(`fixture: ${what} answered ${response.statusCode}: ${response.body}`);
}

/**
 * A board with realistic content for the fuzzer: conferences and file areas of every access
 * kind, messages (ANSI, replies, in areas nobody may read), files (an archive with a
 * FILE_ID.DIZ), users, a sysop, API keys, a live refresh session — and credentials that must
 * fail (expired, of an ended session, forged, revoked). The clock stands still, so session
 * bookkeeping (written at most once a minute per session) never moves under the state check.
 */
export async function createFuzzBoard(dialect: Dialect): Promise<FuzzBoard> {
  const clock = fakeClock();
  const board = await createTestBoard(dialect, { config: FUZZ_CONFIG, clock });
  try {
    return { board, pools: await furnish(board, clock) };
  } catch (error) {
    await board.close();
    throw error;
  }
}

async function furnish(board: TestBoard, clock: ReturnType<typeof fakeClock>): Promise<FuzzPools> {
  const { app } = board;
  const alice = await board.userWithToken('alice', { groups: ['users'] });
  const bob = await board.userWithToken('bob', { groups: ['users'] });
  const sysop = await board.userWithToken('sysop', { groups: ['sysops', 'users'] });
  await board.board.credentials.createAccount({ username: 'carol', password: PASSWORD, groups: ['users'] });
  await board.board.credentials.createAccount({ username: 'dave', password: PASSWORD, groups: ['users'] });
  const readKey = await board.board.apiKeys.generate('alice', 'fuzz read', 'read');
  const writeKey = await board.board.apiKeys.generate('bob', 'fuzz read,write', 'read,write');
  const revokedKey = await board.board.apiKeys.generate('bob', 'fuzz revoked', 'read,write');
  await board.board.apiKeys.revoke(revokedKey.id);

  const identities: Identity[] = [
    { name: 'anonymous', headers: {}, isAuthenticated: false },
    { name: 'alice', headers: alice.auth, isAuthenticated: true },
    { name: 'bob', headers: bob.auth, isAuthenticated: true },
    { name: 'sysop', headers: sysop.auth, isAuthenticated: true },
    { name: "alice's read key", headers: { 'x-baud-api-key': readKey.key }, isAuthenticated: true },
    {
      name: "bob's read,write key as Bearer",
      headers: { authorization: `Bearer ${writeKey.key}` },
      isAuthenticated: true,
    },
    {
      name: 'sysop, lower-case "bearer"',
      headers: { authorization: `bearer   ${sysop.token} ` },
      isAuthenticated: true,
    },
  ];
  // First use sets an API key's lastUsedAt: done here, so it is not a "change" of a later rejected request.
  for (const identity of identities.filter((candidate) => candidate.isAuthenticated)) {
    expect200(await app.inject({ method: 'GET', url: `${API}/users/me`, headers: identity.headers }), identity.name);
  }

  // Live refresh sessions (carol, three logins) and an ended one (dave, logged out: its token and
  // cookie are dead).
  const login = async (username: string) => {
    const response = await app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: { username, password: PASSWORD },
    });
    expect200(response, `${username} logs in`);
    return response;
  };
  const carolCookies = [
    refreshCookieOf(await login('carol')),
    refreshCookieOf(await login('carol')),
    refreshCookieOf(await login('carol')),
  ];
  const daveLogin = await login('dave');
  const daveCookie = refreshCookieOf(daveLogin);
  expect200(
    await app.inject({ method: 'POST', url: `${API}/auth/logout`, cookies: { [REFRESH_COOKIE]: daveCookie } }),
    'dave logs out',
  );

  const sessionOf = async (userId: number) =>
    (
      await board.board.db
        .selectFrom('refreshFamilies')
        .select('id')
        .where('userId', '=', userId)
        .executeTakeFirstOrThrow()
    ).id;
  const aliceSession = await sessionOf(alice.userId);
  const bobSession = await sessionOf(bob.userId);
  const now = clock.now();
  clock.set(new Date(now.getTime() - 3_600_000));
  const expired = await board.board.accessTokens.issue({ userId: alice.userId, sessionId: aliceSession });
  clock.set(now);
  const forged = await createAccessTokens(randomBytes(32), clock).issue({
    userId: sysop.userId,
    sessionId: aliceSession,
  });
  const crossed = await board.board.accessTokens.issue({ userId: alice.userId, sessionId: bobSession });
  const ghost = await board.board.accessTokens.issue({ userId: 999_999, sessionId: aliceSession });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const deadCredentials: Identity[] = [
    { name: 'expired token', headers: bearer(expired.accessToken), isAuthenticated: false },
    {
      name: 'token of a logged-out session',
      headers: bearer(JSON.parse(daveLogin.body).accessToken),
      isAuthenticated: false,
    },
    { name: 'token signed with another secret', headers: bearer(forged.accessToken), isAuthenticated: false },
    { name: "token naming another user's session", headers: bearer(crossed.accessToken), isAuthenticated: false },
    { name: 'token of a user who does not exist', headers: bearer(ghost.accessToken), isAuthenticated: false },
    { name: 'revoked API key', headers: { 'x-baud-api-key': revokedKey.key }, isAuthenticated: false },
  ];

  // Messages: ANSI and pipe codes, a reply, in readable, members-only, secret and read-only areas.
  await seedMessages(board, 'general', [
    { subject: '\u001b[1;31mRed\u001b[0m |03hello', body: 'Colourful \u001b[5mblink\u001b[0m' },
    { subject: 'Plain', to: 'alice' },
    { subject: 'Unicode ✓ שלום 😀', body: 'e\u0301 \u202Eevil' },
  ]);
  await seedMessages(board, 'members', 3);
  await seedMessages(board, 'secret', 1);
  await seedMessages(board, 'readonly', 1);
  await seedMessages(board, 'chatter', 2);
  await seedMessages(board, 'vault', 1);
  for (const [who, subject] of [
    [alice, 'Posted by alice'],
    [alice, 'Alice again'],
    [bob, 'Posted by bob'],
  ] as const) {
    const posted = await app.inject({
      method: 'POST',
      url: `${API}/messages/areas/general/messages`,
      headers: who.auth,
      payload: { subject, message: `${subject}.` },
    });
    expect200(posted, `post "${subject}"`);
  }
  const messages = await board.board.db.selectFrom('messages').select(['id', 'uuid']).orderBy('id').execute();

  // Files: two public ones (so the list pages), an archive in a members area, and the rest.
  const files: { fileId: number; sha256: string }[] = [];
  for (const [areaTag, name, content] of [
    ['public_files', 'readme.txt', 'Hello from the file base.\n'],
    ['public_files', 'fuzz.zip', ZIP_WITH_DIZ],
    ['members', 'members.txt', 'For members.\n'],
    ['nodl', 'nodl.txt', 'No downloads.\n'],
    ['sysop_only', 'secret.txt', 'Sysop only.\n'],
  ] as const) {
    const uploaded = await upload(board, areaTag, filePart(name, content), sysop.auth);
    expect200(uploaded, `upload ${name}`);
    files.push(JSON.parse(uploaded.body));
  }

  const cursorOf = async (url: string) => {
    const response = await app.inject({ method: 'GET', url, headers: sysop.auth });
    expect200(response, url);
    return JSON.parse(response.body).meta.nextCursor as string;
  };
  const cursors = [
    await cursorOf(`${API}/messages/areas/general/messages?limit=1`),
    await cursorOf(`${API}/files/areas/public_files/files?limit=1`),
  ];

  const messageAreaTags = Object.values(MESSAGE_TEST_CONFIG.messageConferences).flatMap((conference) =>
    Object.keys(conference.areas),
  );
  return {
    knownValues: {
      'messages/areaTag': ['general', ...messageAreaTags.filter((tag) => tag !== 'general'), 'nonexistent'],
      'files/areaTag': [...Object.keys(FILE_BASE_CONFIG.fileBase.areas), 'nonexistent'],
      confTag: [...Object.keys(MESSAGE_TEST_CONFIG.messageConferences), 'nonexistent'],
      uuid: messages.map((message) => message.uuid),
      fileId: files.map((file) => file.fileId),
      replyToMessageId: messages.map((message) => message.id),
      username: ['carol', 'alice', 'bob', 'sysop', 'CAROL', 'dave', 'nobody'],
      password: [PASSWORD, 'wrong password'],
      'messages/cursor': cursors,
      'files/cursor': [...cursors].reverse(),
      toUserName: ['All', 'alice', 'sysop'],
      webAddress: ['https://example.com/', 'http://bbs.example/~alice', 'javascript:alert(1)', 'ftp://example.com'],
      realName: ['Alice Liddell', ''],
      hashTags: ['#demo,#fuzz', 'tools'],
    },
    identities,
    deadCredentials,
    refreshCookieName: REFRESH_COOKIE,
    refreshTokens: [...carolCookies, daveCookie],
    etags: files.map((file) => `"${file.sha256}"`),
    bodyLimitBytes: board.config.contentServers.web.bodyLimitBytes,
    uploadLimitBytes: board.config.fileBase.maxUploadBytes,
    uploadContents: [ZIP_WITH_DIZ, Buffer.from('Hello from the file base.\n'), Buffer.from('another text\n')],
  };
}
