import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CONSOLE } from '../../src/admin/desk-service.js';
import type { SshKeyLoginInput } from '../../src/auth/auth-service.js';
import { base32Decode, TOTP_STEP_SECONDS, timeStepAt, totpCode } from '../../src/auth/totp.js';
import {
  createTestBoard,
  describeEachDialect,
  describeOnPostgres,
  fakeClock,
  type TestBoard,
} from '../support/test-board.js';
import { API, bearer, login, PASSWORD, refresh } from './auth-helpers.js';
import { newSshKey, type TestSshKey } from './ssh-key-fixtures.js';

const ED25519 = newSshKey('ed25519', 'alice@laptop');
const RSA_2048 = newSshKey('rsa-2048', 'alice@work');
const ECDSA_384 = newSshKey('ecdsa-384', 'bob@desk');
const UNREGISTERED = newSshKey('ed25519', 'nobody');

/**
 * The SSH server's side of keys (issue: terminal callers): the handshake's key query
 * (`SshKeyService.isRegistered`) and the login proven by a signature (`AuthService.loginWithSshKey`),
 * on a real board and database, as the SSH server calls them.
 */
describeEachDialect('logging in with an SSH key', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      clock,
      config: {
        contentServers: {
          web: { restApi: { maxSessionsPerUser: 2, loginThrottle: { maxFailures: 3, windowSeconds: 600 } } },
        },
      },
    });
    for (const username of ['alice', 'bob', 'carol', 'dave', 'erin', 'fred']) {
      await board.board.credentials.createAccount({ username, password: PASSWORD });
    }
  });
  afterAll(() => board.close());

  async function session(username: string) {
    const { response, accessToken } = await login(board, username, PASSWORD, { remoteAddress: '10.9.9.9' });
    expect(response.statusCode, response.body).toBe(200);
    return bearer(accessToken);
  }

  /** Registers each key for `username` through the API; answers the keys' ids. */
  async function register(username: string, ...keys: TestSshKey[]): Promise<number[]> {
    const headers = await session(username);
    const ids = [];
    for (const key of keys) {
      const response = await board.app.inject({
        method: 'POST',
        url: `${API}/users/me/ssh-keys`,
        headers,
        payload: { publicKey: key.line },
      });
      expect(response.statusCode, response.body).toBe(201);
      ids.push(response.json().id as number);
    }
    return ids;
  }

  const input = (username: string, key: TestSshKey, extra: Partial<SshKeyLoginInput> = {}): SshKeyLoginInput => ({
    username,
    algorithm: key.type,
    keyData: key.blob,
    // An address per user: one test's failures do not fill another's address window.
    clientAddress: `192.0.2.${username.toLowerCase().charCodeAt(0)}`,
    isSecure: true,
    ...extra,
  });

  const ownSessions = async (headers: Record<string, string>) =>
    (await board.app.inject({ method: 'GET', url: `${API}/users/me/sessions`, headers })).json().data as {
      via: string;
      current: boolean;
    }[];

  it("answers the handshake's key query: true only for a key the user registered, of its own type", async () => {
    const sshKeys = board.board.sshKeys;
    const [, rsaId] = await register('alice', ED25519, RSA_2048);
    await register('bob', ECDSA_384);

    expect(await sshKeys.isRegistered('alice', 'ssh-ed25519', ED25519.blob)).toBe(true);
    expect(await sshKeys.isRegistered('ALICE', 'ssh-ed25519', ED25519.blob)).toBe(true);
    // An RSA key signs with SHA-2 under these names (RFC 8332); it is the same key.
    for (const algorithm of ['ssh-rsa', 'rsa-sha2-256', 'rsa-sha2-512']) {
      expect(await sshKeys.isRegistered('alice', algorithm, RSA_2048.blob), algorithm).toBe(true);
    }
    expect(await sshKeys.isRegistered('alice', 'ssh-rsa', ED25519.blob)).toBe(false);
    expect(await sshKeys.isRegistered('alice', 'ssh-ed25519', UNREGISTERED.blob)).toBe(false);
    expect(await sshKeys.isRegistered('alice', ECDSA_384.type, ECDSA_384.blob)).toBe(false);
    expect(await sshKeys.isRegistered('bob', ECDSA_384.type, ECDSA_384.blob)).toBe(true);
    expect(await sshKeys.isRegistered('nobody', 'ssh-ed25519', ED25519.blob)).toBe(false);
    expect(await sshKeys.isRegistered('ali\u0000ce', 'ssh-ed25519', ED25519.blob)).toBe(false);

    const removed = await board.app.inject({
      method: 'DELETE',
      url: `${API}/users/me/ssh-keys/${rsaId}`,
      headers: await session('alice'),
    });
    expect(removed.statusCode).toBe(204);
    expect(await sshKeys.isRegistered('alice', 'rsa-sha2-256', RSA_2048.blob)).toBe(false);
  });

  it('logs in with a registered key: a terminal session, a call, a user.login event, tokens that work', async () => {
    const eventsBefore = await board.board.events.latestId();
    const result = await board.board.auth.loginWithSshKey(input('Alice', ED25519));
    expect(result.loginQuota).toMatchObject({ limit: 3, remaining: 3 });

    const headers = bearer(result.token.accessToken);
    const me = await board.app.inject({ method: 'GET', url: `${API}/users/me`, headers });
    expect(me.statusCode).toBe(200);
    expect(me.json().username).toBe('alice');
    expect(me.json().loginCount).toBe(3);
    expect(await ownSessions(headers)).toContainEqual(expect.objectContaining({ via: 'terminal', current: true }));
    expect((await refresh(board, result.refreshToken)).statusCode).toBe(200);

    expect((await board.board.system.listLastCallers(1))[0]).toMatchObject({
      username: 'alice',
      timestamp: clock.now().toISOString(),
    });
    const events = await board.board.events.readAfter(eventsBefore);
    expect(events.map((event) => [event.type, event.data.username])).toEqual([['user.login', 'alice']]);
  });

  it('refuses a key not registered to the user like a wrong password: 401, counted, then 429 for the right key too', async () => {
    const refused = { status: 401, code: 'auth.invalid-credentials', detail: 'The username or password is incorrect.' };
    const address = { clientAddress: '198.51.100.20' };
    const attempts = [
      input('carol', UNREGISTERED, address),
      input('carol', ED25519, address), // alice's key
      input('carol', UNREGISTERED, { ...address, algorithm: 'ssh-rsa' }),
    ];
    await register('carol', RSA_2048);
    for (const [index, attempt] of attempts.entries()) {
      const error = await board.board.auth.loginWithSshKey(attempt).catch((failure: unknown) => failure);
      expect(error).toMatchObject(refused);
      expect((error as { headers: Record<string, string> }).headers['ratelimit-remaining']).toBe(String(2 - index));
    }
    await expect(board.board.auth.loginWithSshKey(input('carol', RSA_2048, address))).rejects.toMatchObject({
      status: 429,
      code: 'rate-limit.exceeded',
    });
    // The same budget as a password login: the account's window is full there too.
    expect((await login(board, 'carol', PASSWORD, { remoteAddress: '198.51.100.21' })).response.statusCode).toBe(429);
    clock.advance(600_000);
    await expect(
      board.board.auth.loginWithSshKey(input('carol', RSA_2048, { ...address, algorithm: 'rsa-sha2-512' })),
    ).resolves.toMatchObject({ loginQuota: { limit: 3 } });
    // An unknown user is the same 401.
    await expect(board.board.auth.loginWithSshKey(input('nobody', ED25519))).rejects.toMatchObject(refused);
    await expect(board.board.auth.loginWithSshKey(input('no\u0000body', ED25519))).rejects.toMatchObject(refused);
  });

  it('refuses a locked account with 401 and a pending one with 403, as a password login does', async () => {
    await register('dave', ED25519);
    await board.board.desk.lock(CONSOLE, 'dave');
    await expect(board.board.auth.loginWithSshKey(input('dave', ED25519))).rejects.toMatchObject({
      status: 401,
      code: 'auth.invalid-credentials',
    });
    await board.board.desk.unlock(CONSOLE, 'dave');
    await expect(board.board.auth.loginWithSshKey(input('dave', ED25519))).resolves.toBeDefined();

    // An application cannot log in to add a key: the row stands for one kept from before.
    await board.board.credentials.createAccount({ username: 'newcomer', password: PASSWORD, isPending: true });
    const newcomer = await board.board.users.getUser('newcomer');
    await board.board.db
      .insertInto('sshKeys')
      .values({
        userId: newcomer.userId,
        algorithm: ED25519.type,
        keyData: ED25519.blob.toString('base64'),
        fingerprint: ED25519.fingerprint,
        label: '',
        createdAt: clock.now().toISOString(),
      })
      .execute();
    expect(await board.board.sshKeys.isRegistered('newcomer', ED25519.type, ED25519.blob)).toBe(true);
    await expect(board.board.auth.loginWithSshKey(input('newcomer', ED25519))).rejects.toMatchObject({
      status: 403,
      code: 'auth.account-pending',
    });
  });

  it('asks the one-time code of an account with two-factor login on, with the same 401s as a password login', async () => {
    await register('erin', ED25519);
    const headers = await session('erin');
    const enrolled = await board.app.inject({
      method: 'POST',
      url: `${API}/users/me/totp`,
      headers,
      payload: { password: PASSWORD },
    });
    const key = base32Decode((enrolled.json() as { secret: string }).secret);
    if (!key) throw new Error('the secret is not base32');
    const codeNow = () => totpCode(key, timeStepAt(clock.now()));
    const confirmed = await board.app.inject({
      method: 'POST',
      url: `${API}/users/me/totp/confirm`,
      headers,
      payload: { code: codeNow() },
    });
    expect(confirmed.statusCode).toBe(200);
    clock.advance(TOTP_STEP_SECONDS * 1000);

    const asked = await board.board.auth.loginWithSshKey(input('erin', ED25519)).catch((failure: unknown) => failure);
    expect(asked).toMatchObject({ status: 401, code: 'auth.otp-required', members: { otpRequired: true } });
    const wrong = String((Number(codeNow()) + 1) % 1_000_000).padStart(6, '0');
    await expect(board.board.auth.loginWithSshKey(input('erin', ED25519, { otp: wrong }))).rejects.toMatchObject({
      status: 401,
      code: 'auth.invalid-otp',
    });
    const code = codeNow();
    const result = await board.board.auth.loginWithSshKey(input('erin', ED25519, { otp: code }));
    expect(await ownSessions(bearer(result.token.accessToken))).toContainEqual(
      expect.objectContaining({ via: 'terminal', current: true }),
    );
    // The code is spent: presented again it is refused.
    await expect(board.board.auth.loginWithSshKey(input('erin', ED25519, { otp: code }))).rejects.toMatchObject({
      code: 'auth.invalid-otp',
    });
    // No code asked of a key that is not hers: the 401 is the plain one.
    await expect(board.board.auth.loginWithSshKey(input('erin', UNREGISTERED))).rejects.toMatchObject({
      code: 'auth.invalid-credentials',
    });
  });

  it('keeps to the session cap, and refuses a key a password change removed', async () => {
    await register('fred', ECDSA_384);
    const logins = [];
    for (let count = 0; count < 3; count += 1) {
      logins.push(await board.board.auth.loginWithSshKey(input('fred', ECDSA_384)));
      clock.advance(1000);
    }
    const newest = bearer(logins[2]?.token.accessToken);
    const live = await ownSessions(newest);
    expect(live.map((entry) => entry.via)).toEqual(['terminal', 'terminal']);
    expect((await refresh(board, logins[0]?.refreshToken)).statusCode).toBe(401);

    await board.board.credentials.setPassword('fred', 'a brand new password');
    expect(await board.board.sshKeys.isRegistered('fred', ECDSA_384.type, ECDSA_384.blob)).toBe(false);
    await expect(board.board.auth.loginWithSshKey(input('fred', ECDSA_384))).rejects.toMatchObject({
      status: 401,
      code: 'auth.invalid-credentials',
    });
  });
});

describeOnPostgres('an SSH key login racing the removal of its key', () => {
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard('postgres');
    await board.board.credentials.createAccount({ username: 'alice', password: PASSWORD });
  });
  afterAll(() => board.close());

  it("refuses the login when the key went while it waited for the user's row", async () => {
    const { accessToken } = await login(board, 'alice');
    const headers = bearer(accessToken);
    const added = await board.app.inject({
      method: 'POST',
      url: `${API}/users/me/ssh-keys`,
      headers,
      payload: { publicKey: ED25519.line },
    });
    expect(added.statusCode).toBe(201);
    const { db } = board.board;

    // Another transaction holds alice's row, as a password change or a login of hers would.
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holderPid = 0;
    let isHeld = () => {};
    const held = new Promise<void>((resolve) => {
      isHeld = resolve;
    });
    const holder = db.transaction().execute(async (trx) => {
      await trx.selectFrom('users').select('id').where('username', '=', 'alice').forUpdate().execute();
      holderPid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]?.pid ?? 0;
      isHeld();
      await released;
    });
    await held;

    // The key is registered when the login checks it, and then waits for the row.
    const loggingIn = board.board.auth
      .loginWithSshKey({
        username: 'alice',
        algorithm: ED25519.type,
        keyData: ED25519.blob,
        clientAddress: '203.0.113.5',
        isSecure: false,
      })
      .catch((failure: unknown) => failure);
    const waiting = async () =>
      Number(
        (
          await sql<{ count: number }>`select count(*)::int as count from pg_stat_activity
            where ${holderPid} = any(pg_blocking_pids(pid))`.execute(db)
        ).rows[0]?.count,
      );
    await expect.poll(waiting).toBe(1);

    const removed = await board.app.inject({
      method: 'DELETE',
      url: `${API}/users/me/ssh-keys/${added.json().id}`,
      headers,
    });
    expect(removed.statusCode).toBe(204);
    release();
    await holder;
    expect(await loggingIn).toMatchObject({ status: 401, code: 'auth.invalid-credentials' });
    const sessions = await board.app.inject({ method: 'GET', url: `${API}/users/me/sessions`, headers });
    expect((sessions.json().data as { via: string }[]).map((session) => session.via)).toEqual(['api']);
  });
});
