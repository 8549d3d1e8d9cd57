import { afterAll, beforeAll, expect, it } from 'vitest';
import { base32Decode, TOTP_STEP_SECONDS, timeStepAt, totpCode } from '../../src/auth/totp.js';
import {
  createTestBoard,
  describeEachDialect,
  fakeClock,
  type TestBoard,
  twoNodesOfOneBoard,
} from '../support/test-board.js';
import { enrolTwoFactor } from '../support/totp-code.js';
import { API, getMe, PASSWORD } from './auth-helpers.js';

type Clock = ReturnType<typeof fakeClock>;
const STEP_MS = TOTP_STEP_SECONDS * 1000;

/** The code an authenticator app with `secret` shows at `clock`'s now, `stepOffset` steps away. */
function codeOf(secret: string, clock: Clock, stepOffset = 0): string {
  const key = base32Decode(secret);
  if (!key) throw new Error(`not base32: ${secret}`);
  return totpCode(key, timeStepAt(clock.now()) + stepOffset);
}

function loginWith(app: TestBoard['app'], body: Record<string, string>, remoteAddress = '127.0.0.1') {
  return app.inject({ method: 'POST', url: `${API}/auth/login`, payload: body, remoteAddress });
}

/** Enrols and confirms `username` (password PASSWORD); returns the secret and the recovery codes. */
async function turnOn(board: TestBoard, auth: Record<string, string>, clock: Clock) {
  const enrolled = await enrolTwoFactor(board.app, {
    apiPrefix: API,
    headers: auth,
    password: PASSWORD,
    codeFor: (secret) => codeOf(secret, clock),
  });
  // The confirming code is spent: the next code to work is the next step's.
  clock.advance(STEP_MS);
  return enrolled;
}

/** `DELETE /users/me/totp` on `board`. */
function disableOn(board: TestBoard, auth: Record<string, string>, payload: object) {
  return board.app.inject({ method: 'DELETE', url: `${API}/users/me/totp`, headers: auth, payload });
}

/** The audit entries about `target`, oldest first. */
async function auditOf(board: TestBoard, target: string) {
  const rows = await board.board.db
    .selectFrom('auditLog')
    .selectAll()
    .where('target', '=', target)
    .orderBy('id')
    .execute();
  return rows.map(({ actor, action, detail }) => ({ actor, action, detail }));
}

describeEachDialect('two-factor login (TOTP)', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      clock,
      config: {
        general: { boardName: 'Sector 7' },
        contentServers: { web: { restApi: { loginThrottle: { maxFailures: 1000, windowSeconds: 600 } } } },
      },
    });
  });
  afterAll(() => board.close());

  const post = (path: string, auth: Record<string, string>, payload: object) =>
    board.app.inject({ method: 'POST', url: `${API}${path}`, headers: auth, payload });

  it('enrols after the password, is not on until a code confirms it, and hands out 10 recovery codes once', async () => {
    const { auth } = await board.userWithToken('alice');
    const wrong = await post('/users/me/totp', auth, { password: 'not the password' });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json()).toMatchObject({ status: 403, code: 'auth.password-incorrect' });
    expect(wrong.headers['ratelimit-remaining']).toBeDefined();

    const enrolled = await post('/users/me/totp', auth, { password: PASSWORD });
    expect(enrolled.statusCode).toBe(200);
    expect(enrolled.headers['cache-control']).toBe('no-store');
    const { secret, otpauthUrl } = enrolled.json();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(otpauthUrl).toBe(`otpauth://totp/Sector%207:alice?secret=${secret}&issuer=Sector%207`);
    // Not on yet: login asks for the password alone, and the profile says so.
    expect((await loginWith(board.app, { username: 'alice', password: PASSWORD })).statusCode).toBe(200);
    expect((await getMe(board, auth)).json().totpEnabled).toBe(false);

    // Enrolling again replaces the unconfirmed secret: the first one's codes no longer confirm.
    const again = await post('/users/me/totp', auth, { password: PASSWORD });
    const secondSecret: string = again.json().secret;
    expect(secondSecret).not.toBe(secret);
    const stale = await post('/users/me/totp/confirm', auth, { code: codeOf(secret, clock) });
    expect(stale.statusCode).toBe(400);
    expect(stale.json()).toMatchObject({ status: 400, code: 'totp.invalid-code' });

    const confirmed = await post('/users/me/totp/confirm', auth, { code: codeOf(secondSecret, clock) });
    expect(confirmed.statusCode).toBe(200);
    expect(confirmed.headers['cache-control']).toBe('no-store');
    const { recoveryCodes } = confirmed.json();
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);
    expect((await getMe(board, auth)).json().totpEnabled).toBe(true);

    // Once on: neither a second confirmation nor a new enrolment.
    const reconfirm = await post('/users/me/totp/confirm', auth, { code: codeOf(secondSecret, clock, 1) });
    expect(reconfirm.statusCode).toBe(409);
    expect(reconfirm.json().code).toBe('totp.already-enabled');
    const reenrol = await post('/users/me/totp', auth, { password: PASSWORD });
    expect(reenrol.statusCode).toBe(409);
    expect(reenrol.json().code).toBe('totp.already-enabled');

    // Nothing of the secret or the codes is stored in the clear.
    const rows = await board.board.db.selectFrom('totpCredentials').selectAll().execute();
    const codeRows = await board.board.db.selectFrom('totpRecoveryCodes').selectAll().execute();
    const stored = JSON.stringify([rows, codeRows]);
    expect(stored).not.toContain(secondSecret);
    expect(stored).not.toContain(base32Decode(secondSecret)?.toString('hex'));
    for (const code of recoveryCodes) expect(stored).not.toContain(code);
    expect(await auditOf(board, 'alice')).toEqual([
      { actor: 'alice', action: 'user.totp-enrolled', detail: 'two-factor enrolment started (not on until confirmed)' },
      { actor: 'alice', action: 'user.totp-enrolled', detail: 'two-factor enrolment started (not on until confirmed)' },
      { actor: 'alice', action: 'user.totp-enabled', detail: 'two-factor login on; 10 recovery codes issued' },
    ]);
  });

  it('refuses to confirm without an enrolment, and tells anonymous callers to log in', async () => {
    const { auth } = await board.userWithToken('bob');
    const none = await post('/users/me/totp/confirm', auth, { code: '123456' });
    expect(none.statusCode).toBe(409);
    expect(none.json().code).toBe('totp.not-enrolled');
    expect((await post('/users/me/totp', {}, { password: PASSWORD })).statusCode).toBe(401);
    const off = await disableOn(board, auth, { password: PASSWORD, code: '123456' });
    expect(off.statusCode).toBe(409);
    expect(off.json().code).toBe('totp.not-enabled');
  });

  it('asks for the code only after the right password, and accepts each code once', async () => {
    const { auth } = await board.userWithToken('carol');
    const { secret } = await turnOn(board, auth, clock);

    const wrongPassword = await loginWith(board.app, {
      username: 'carol',
      password: 'wrong',
      otp: codeOf(secret, clock),
    });
    expect(wrongPassword.statusCode).toBe(401);
    expect(wrongPassword.json()).toEqual({
      type: '/_baud/api/v1/errors/401',
      title: 'Unauthorized',
      status: 401,
      detail: 'The username or password is incorrect.',
      code: 'auth.invalid-credentials',
    });

    const noCode = await loginWith(board.app, { username: 'carol', password: PASSWORD });
    expect(noCode.statusCode).toBe(401);
    expect(noCode.headers['www-authenticate']).toBe('Bearer realm="baud"');
    expect(noCode.headers['set-cookie']).toBeUndefined();
    expect(noCode.json()).toEqual({
      type: '/_baud/api/v1/errors/401',
      title: 'Unauthorized',
      status: 401,
      detail: 'Two-factor login is on for this account: send the code of its authenticator app as `otp`.',
      code: 'auth.otp-required',
      otpRequired: true,
    });

    const wrongCode = await loginWith(board.app, { username: 'carol', password: PASSWORD, otp: '000000' });
    expect(wrongCode.statusCode).toBe(401);
    expect(wrongCode.json()).toMatchObject({ code: 'auth.invalid-otp' });
    expect(wrongCode.json().otpRequired).toBeUndefined();

    const code = codeOf(secret, clock);
    const accepted = await loginWith(board.app, { username: 'carol', password: PASSWORD, otp: code });
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json().tokenType).toBe('Bearer');
    // The same code again, within its window: refused.
    const replay = await loginWith(board.app, { username: 'carol', password: PASSWORD, otp: code });
    expect(replay.statusCode).toBe(401);
    expect(replay.json().code).toBe('auth.invalid-otp');

    // One step of skew either way: the next step's code works now, and after it an older one never.
    const ahead = await loginWith(board.app, { username: 'carol', password: PASSWORD, otp: codeOf(secret, clock, 1) });
    expect(ahead.statusCode).toBe(200);
    clock.advance(STEP_MS);
    const behind = await loginWith(board.app, {
      username: 'carol',
      password: PASSWORD,
      otp: codeOf(secret, clock, -1),
    });
    expect(behind.statusCode).toBe(401);
    clock.advance(STEP_MS);
    const late = await loginWith(board.app, { username: 'carol', password: PASSWORD, otp: codeOf(secret, clock, -1) });
    expect(late.statusCode).toBe(401);
    const current = await loginWith(board.app, { username: 'carol', password: PASSWORD, otp: codeOf(secret, clock) });
    expect(current.statusCode).toBe(200);
    clock.advance(STEP_MS);
    const tooOld = await loginWith(board.app, {
      username: 'carol',
      password: PASSWORD,
      otp: codeOf(secret, clock, -2),
    });
    expect(tooOld.statusCode).toBe(401);
  });

  it('lets a recovery code in once, in any case and with or without dashes, and audits its use', async () => {
    const { auth } = await board.userWithToken('dave');
    const { recoveryCodes } = await turnOn(board, auth, clock);
    const [first = '', second = ''] = recoveryCodes;
    expect((await loginWith(board.app, { username: 'dave', password: PASSWORD, otp: first })).statusCode).toBe(200);
    const reused = await loginWith(board.app, { username: 'dave', password: PASSWORD, otp: first });
    expect(reused.statusCode).toBe(401);
    expect(reused.json().code).toBe('auth.invalid-otp');
    const typed = second.toUpperCase().replaceAll('-', ' ');
    expect((await loginWith(board.app, { username: 'dave', password: PASSWORD, otp: typed })).statusCode).toBe(200);
    expect((await auditOf(board, 'dave')).slice(-2)).toEqual([
      { actor: 'dave', action: 'user.totp-recovery-used', detail: 'a recovery code was used; 9 left' },
      { actor: 'dave', action: 'user.totp-recovery-used', detail: 'a recovery code was used; 8 left' },
    ]);
  });

  it('never asks an API key for a code', async () => {
    const { auth } = await board.userWithToken('hank');
    await turnOn(board, auth, clock);
    const { key } = await board.board.apiKeys.generate('hank', 'script', 'read');
    const me = await getMe(board, { 'x-baud-api-key': key });
    expect(me.statusCode).toBe(200);
    expect(me.json().totpEnabled).toBe(true);
  });

  it('gives a sysop the two-factor state of each account, and turns it off for a lost phone', async () => {
    const sysop = (await board.userWithToken('sysop', { groups: ['sysops'] })).auth;
    const { auth } = await board.userWithToken('ivan');
    const member = auth;
    await turnOn(board, auth, clock);
    const listed = await board.app.inject({ method: 'GET', url: `${API}/admin/users?q=ivan`, headers: sysop });
    expect(
      listed.json().data.map((row: { username: string; totpEnabled: boolean }) => [row.username, row.totpEnabled]),
    ).toEqual([['ivan', true]]);
    const reset = (username: string, headers: Record<string, string>) =>
      board.app.inject({ method: 'DELETE', url: `${API}/admin/users/${username}/totp`, headers });
    expect((await reset('ivan', {})).statusCode).toBe(401);
    expect((await reset('ivan', member)).statusCode).toBe(403);
    const readKey = await board.board.apiKeys.generate('sysop', 'reader', 'read');
    expect((await reset('ivan', { 'x-baud-api-key': readKey.key })).statusCode).toBe(403);
    const unknown = await reset('nobody-such', sysop);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('user.not-found');

    const done = await reset('IVAN', sysop);
    expect(done.statusCode).toBe(204);
    expect((await loginWith(board.app, { username: 'ivan', password: PASSWORD })).statusCode).toBe(200);
    // Already off: no change, nothing more in the log.
    expect((await reset('ivan', sysop)).statusCode).toBe(204);
    expect((await auditOf(board, 'ivan')).slice(-1)).toEqual([
      { actor: 'sysop', action: 'user.totp-reset', detail: 'two-factor login off; recovery codes deleted' },
    ]);
    const audit = await board.app.inject({ method: 'GET', url: `${API}/admin/audit?limit=1`, headers: sysop });
    expect(audit.json().data[0]).toMatchObject({ actor: 'sysop', action: 'user.totp-reset', target: 'ivan' });
  });

  it('lets one of two racing confirmations win, and the loser write nothing', async () => {
    const { auth } = await board.userWithToken('judy');
    const { secret } = (await post('/users/me/totp', auth, { password: PASSWORD })).json();
    const code = codeOf(secret, clock);
    const answers = await Promise.all([1, 2, 3].map(() => post('/users/me/totp/confirm', auth, { code })));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 409, 409]);
    expect(
      await board.board.db
        .selectFrom('totpRecoveryCodes')
        .selectAll()
        .where('userId', '=', (await board.board.users.getUser('judy')).userId)
        .execute(),
    ).toHaveLength(10);
    expect((await auditOf(board, 'judy')).map((entry) => entry.action)).toEqual([
      'user.totp-enrolled',
      'user.totp-enabled',
    ]);
  });

  it('lets one of racing logins with one code in, and one of racing logins with one recovery code', async () => {
    const { auth } = await board.userWithToken('kate');
    const { secret, recoveryCodes } = await turnOn(board, auth, clock);
    for (const otp of [codeOf(secret, clock), recoveryCodes[0] ?? '']) {
      const answers = await Promise.all(
        [1, 2, 3, 4].map((n) => loginWith(board.app, { username: 'kate', password: PASSWORD, otp }, `10.9.0.${n}`)),
      );
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 401, 401, 401]);
    }
  });
});

describeEachDialect('two-factor login and the login throttle', (dialect) => {
  const clock = fakeClock();
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      clock,
      config: { contentServers: { web: { restApi: { loginThrottle: { maxFailures: 4, windowSeconds: 600 } } } } },
    });
  });
  afterAll(() => board.close());

  it('counts wrong codes in the login throttle like wrong passwords, and a missing code not at all', async () => {
    const { auth } = await board.userWithToken('erin');
    const { secret } = await turnOn(board, auth, clock);
    const address = '198.51.100.20';
    // More password-only attempts than the window holds: none is a failure.
    for (let attempt = 0; attempt < 6; attempt += 1) {
      const answer = await loginWith(board.app, { username: 'erin', password: PASSWORD }, address);
      expect(answer.statusCode).toBe(401);
      expect(answer.json().code).toBe('auth.otp-required');
      expect(answer.headers['ratelimit-remaining']).toBe('4');
    }
    for (const remaining of ['3', '2', '1', '0']) {
      const answer = await loginWith(board.app, { username: 'erin', password: PASSWORD, otp: '999999' }, address);
      expect(answer.statusCode).toBe(401);
      expect(answer.headers['ratelimit-remaining']).toBe(remaining);
    }
    // The window is full: even the right code is refused until it ends.
    const throttled = await loginWith(board.app, { username: 'erin', password: PASSWORD, otp: codeOf(secret, clock) });
    expect(throttled.statusCode).toBe(429);
    expect(throttled.json().code).toBe('rate-limit.exceeded');
    clock.advance(600_000);
    const after = await loginWith(board.app, { username: 'erin', password: PASSWORD, otp: codeOf(secret, clock) });
    expect(after.statusCode).toBe(200);
  });

  it('turns off with password and code (or a recovery code); wrong ones refused and counted', async () => {
    const { auth } = await board.userWithToken('gina');
    const { secret } = await turnOn(board, auth, clock);
    const wrongPassword = await disableOn(board, auth, { password: 'wrong', code: codeOf(secret, clock) });
    expect(wrongPassword.statusCode).toBe(403);
    expect(wrongPassword.json().code).toBe('auth.password-incorrect');
    expect(wrongPassword.headers['ratelimit-remaining']).toBe('3');
    const wrongCode = await disableOn(board, auth, { password: PASSWORD, code: '000000' });
    expect(wrongCode.statusCode).toBe(400);
    expect(wrongCode.json().code).toBe('totp.invalid-code');
    const wrongRecovery = await disableOn(board, auth, { password: PASSWORD, code: 'aaaa-bbbb-cccc' });
    expect(wrongRecovery.statusCode).toBe(400);
    // The failures were counted against the account: one more and it is throttled.
    expect((await disableOn(board, auth, { password: 'wrong', code: '000000' })).statusCode).toBe(403);
    const throttled = await disableOn(board, auth, { password: PASSWORD, code: codeOf(secret, clock) });
    expect(throttled.statusCode).toBe(429);
    clock.advance(600_000);

    const off = await disableOn(board, auth, { password: PASSWORD, code: codeOf(secret, clock) });
    expect(off.statusCode).toBe(204);
    expect(off.body).toBe('');
    expect((await getMe(board, auth)).json().totpEnabled).toBe(false);
    expect((await loginWith(board.app, { username: 'gina', password: PASSWORD })).statusCode).toBe(200);
    expect(
      await board.board.db
        .selectFrom('totpRecoveryCodes')
        .selectAll()
        .where('userId', '=', (await board.board.users.getUser('gina')).userId)
        .execute(),
    ).toEqual([]);

    // On again, and off with a recovery code standing for the code.
    const again = await turnOn(board, auth, clock);
    expect((await disableOn(board, auth, { password: PASSWORD, code: again.recoveryCodes[3] ?? '' })).statusCode).toBe(
      204,
    );
    expect((await auditOf(board, 'gina')).map((entry) => entry.action)).toEqual([
      'user.totp-enrolled',
      'user.totp-enabled',
      'user.totp-disabled',
      'user.totp-enrolled',
      'user.totp-enabled',
      'user.totp-recovery-used',
      'user.totp-disabled',
    ]);
  });
});

describeEachDialect('two-factor login on two nodes', (dialect) => {
  const clock = fakeClock();
  const nodes = twoNodesOfOneBoard(dialect, clock);

  it('refuses on one node a code accepted on the other', async () => {
    const { nodeA, nodeB } = nodes;
    const { auth } = await nodeA.userWithToken('lena');
    const { secret } = await turnOn(nodeA, auth, clock);
    const otp = codeOf(secret, clock);
    expect((await loginWith(nodeA.app, { username: 'lena', password: PASSWORD, otp })).statusCode).toBe(200);
    const replay = await loginWith(nodeB, { username: 'lena', password: PASSWORD, otp });
    expect(replay.statusCode).toBe(401);
    expect(replay.json().code).toBe('auth.invalid-otp');
    // The other node opens the sealed secret with the same board key: its own next code works there.
    clock.advance(STEP_MS);
    expect(
      (await loginWith(nodeB, { username: 'lena', password: PASSWORD, otp: codeOf(secret, clock) })).statusCode,
    ).toBe(200);
  });
});
