import { afterAll, beforeAll, expect, it } from 'vitest';
import { base32Decode, timeStepAt, totpCode } from '../../src/auth/totp.js';
import { createEnigmaCopies } from '../support/enigma-copies.js';
import { createTestBoard, describeEachDialect, fakeClock, type TestBoard } from '../support/test-board.js';

const API = '/_baud/api/v1';
/** The fixture's passwords (its README). */
const PASSWORDS = { alice: 'AlicePass123!', bob: 'BobPass123!', carol: 'CarolPass123!', erin: 'ErinPass123!' } as const;
/** googleAuth: base32, HMAC-SHA-1. */
const ALICE_SECRET = 'JBSWY3DPEHPK3PXP';
/** rfc6238_TOTP: 32 characters of base64 as ENiGMA½ makes them, used as ASCII bytes with HMAC-SHA-256. */
const BOB_SECRET = 'q1W2e3R4t5Y6u7I8o9P0a1S2d3F4g5H6';

/** Issue 32: an ENiGMA½ user's two-factor login comes over where baud can keep it, and the report says what did not. */
describeEachDialect('baud import enigma, two-factor login', (dialect) => {
  const clock = fakeClock();
  let copies: ReturnType<typeof createEnigmaCopies>;
  let board: TestBoard;
  let summary: Awaited<ReturnType<ReturnType<typeof createEnigmaCopies>['run']>>;
  beforeAll(async () => {
    copies = createEnigmaCopies(dialect, 'baud-enigma-2fa-');
    const source = copies.sourceCopy('two-factor', (db) => {
      const setProperty = db.user.prepare(
        'INSERT OR REPLACE INTO user_property (user_id, prop_name, prop_value) VALUES (?, ?, ?)',
      );
      // alice (2): Google Authenticator, two backup codes (one listed twice).
      setProperty.run(2, 'auth_factor2_otp', 'googleAuth');
      setProperty.run(2, 'auth_factor2_otp_secret', ALICE_SECRET);
      setProperty.run(2, 'auth_factor2_otp_backup_codes', '["bakad-sufor","zitug-hamov","bakad-sufor"]');
      // bob (3): RFC 6238 with SHA-256; backup codes ENiGMA½ could not read either.
      setProperty.run(3, 'auth_factor2_otp', 'rfc6238_TOTP');
      setProperty.run(3, 'auth_factor2_otp_secret', BOB_SECRET);
      setProperty.run(3, 'auth_factor2_otp_backup_codes', '{not json');
      // carol (4): HOTP, which counts logins: not carried over.
      setProperty.run(4, 'auth_factor2_otp', 'rfc4266_HOTP');
      setProperty.run(4, 'auth_factor2_otp_secret', 'hotp-secret-that-must-not-leak');
      setProperty.run(4, 'auth_factor2_otp_backup_codes', '["lopaz-kimut"]');
      // erin (6): a secret that is no base32.
      setProperty.run(6, 'auth_factor2_otp', 'googleAuth');
      setProperty.run(6, 'auth_factor2_otp_secret', 'not base32!');
    });
    board = await createTestBoard(dialect, { clock });
    summary = await copies.run(source, board.board.database, 'two-factor');
  });
  afterAll(async () => {
    await board?.close();
    await copies?.cleanUp();
  });

  const login = (username: keyof typeof PASSWORDS, otp?: string) =>
    board.app.inject({
      method: 'POST',
      url: `${API}/auth/login`,
      payload: { username, password: PASSWORDS[username], ...(otp === undefined ? {} : { otp }) },
    });
  const step = () => timeStepAt(clock.now());

  it('says in the report what carried over and what did not', () => {
    const users = summary.skipped.filter((entry) => entry.kind === 'users' && /two-factor/.test(entry.reason));
    expect(users.sort((a, b) => a.reason.localeCompare(b.reason))).toEqual([
      {
        kind: 'users',
        reason: 'two-factor backup codes unreadable: not carried over',
        count: 1,
      },
      {
        kind: 'users',
        reason: 'two-factor login (googleAuth) without a readable secret: imported without two-factor login',
        count: 1,
      },
      {
        kind: 'users',
        reason: 'two-factor login (TOTP, HMAC-SHA1) carried over: its authenticator app keeps working',
        count: 1,
      },
      {
        kind: 'users',
        reason: 'two-factor login (TOTP, HMAC-SHA256) carried over: its authenticator app keeps working',
        count: 1,
      },
      {
        kind: 'users',
        reason: 'two-factor login by HOTP (counter-based), which baud does not keep: imported without two-factor login',
        count: 1,
      },
    ]);
  });

  it('keeps a Google Authenticator login: the same app codes, and the backup codes once each', async () => {
    expect((await login('alice')).json()).toMatchObject({ status: 401, otpRequired: true });
    const key = base32Decode(ALICE_SECRET) ?? Buffer.alloc(0);
    expect((await login('alice', totpCode(key, step(), 'sha1'))).statusCode).toBe(200);
    expect((await login('alice', 'bakad-sufor')).statusCode).toBe(200);
    expect((await login('alice', 'bakad-sufor')).statusCode).toBe(401);
    expect((await login('alice', 'ZITUG-HAMOV')).statusCode).toBe(200);
  });

  it('keeps an RFC 6238 SHA-256 login with its ASCII secret', async () => {
    expect((await login('bob')).json().code).toBe('auth.otp-required');
    const code = totpCode(Buffer.from(BOB_SECRET, 'ascii'), step(), 'sha256');
    expect((await login('bob', code)).statusCode).toBe(200);
    expect((await login('bob', code)).statusCode).toBe(401);
  });

  it('imports an HOTP user, or one whose secret is unreadable, without two-factor login', async () => {
    expect((await login('carol')).statusCode).toBe(200);
    expect((await login('erin')).statusCode).toBe(200);
  });

  it('keeps no secret and no backup code in the clear', async () => {
    const users = await board.board.db.selectFrom('users').select(['username', 'properties']).execute();
    const credentials = await board.board.db.selectFrom('totpCredentials').selectAll().execute();
    const codes = await board.board.db.selectFrom('totpRecoveryCodes').selectAll().execute();
    const stored = JSON.stringify([users, credentials, codes]);
    for (const secret of [ALICE_SECRET, BOB_SECRET, 'hotp-secret-that-must-not-leak', 'lopaz-kimut', 'auth_factor2']) {
      expect(stored).not.toContain(secret);
    }
    expect(credentials.map((row) => [row.userId, row.algorithm, row.confirmedAt !== null]).sort()).toEqual([
      [2, 'sha1', true],
      [3, 'sha256', true],
    ]);
  });
});
