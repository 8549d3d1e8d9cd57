import { afterAll, beforeAll, expect, it } from 'vitest';
import { base32Decode, timeStepAt, totpCode } from '../../src/auth/totp.js';
import { describeEachDialect } from '../support/test-board.js';
import { api, field, refreshCookieOf } from './support/api-client.js';
import { type BaudProcess, createHardeningBoard, type HardeningBoard } from './support/baud-process.js';

/**
 * A real `baud serve` logging at `trace` sees a whole session — passwords, access tokens,
 * refresh cookies, API keys, two-factor secrets and recovery codes, failures — and none of
 * those secrets reaches its output.
 */

const AREA = 'general';
const BOARD_CONFIG = {
  logging: { level: 'trace' },
  messageConferences: { main: { name: 'Main', areas: { [AREA]: { name: 'General' } } } },
};

// Letters, digits and dashes only, so a leak would appear verbatim even inside JSON-escaped log text.
const FIRST_PASSWORD = 'Lsec-first-Password-7f3a91';
const SECOND_PASSWORD = 'Lsec-second-Password-c08e42';
const WRONG_PASSWORD = 'Lsec-wrong-Password-5d2b66';
const THIRD_PASSWORD = 'Lsec-third-Password-9e4c17';

/** The parts of a secret that must not appear: the whole value and, for a JWT, its signature. */
function secretForms(label: string, value: string): Array<{ label: string; value: string }> {
  const forms = [{ label, value }];
  const jwtParts = value.split('.');
  if (jwtParts.length === 3 && jwtParts[2]) forms.push({ label: `${label} (JWT signature)`, value: jwtParts[2] });
  if (/^baud_[A-Za-z0-9_-]{43}$/.test(value))
    forms.push({ label: `${label} (random part)`, value: value.slice('baud_'.length) });
  return forms;
}

describeEachDialect('secrets in the logs', (dialect) => {
  let board: HardeningBoard;
  let server: BaudProcess;

  beforeAll(async () => {
    board = createHardeningBoard(dialect, BOARD_CONFIG);
    await board.addUsers([{ username: 'alice', password: FIRST_PASSWORD }]);
    server = await board.start();
  }, 120_000);
  afterAll(async () => {
    await board?.destroy();
  });

  it('writes no password, token, refresh cookie or API key to stdout or stderr at level trace', async () => {
    const secrets: Array<{ label: string; value: string }> = [
      { label: 'first password', value: FIRST_PASSWORD },
      { label: 'second password', value: SECOND_PASSWORD },
      { label: 'wrong password', value: WRONG_PASSWORD },
      { label: 'third password', value: THIRD_PASSWORD },
    ];
    const keep = (label: string, value: string) => {
      secrets.push(...secretForms(label, value));
      return value;
    };
    const { apiUrl } = server;
    const statuses: Record<string, number> = {};
    const note = (step: string, status: number, expected: number) => {
      statuses[step] = status;
      expect(status, step).toBe(expected);
    };

    // A failed login, then a good one.
    const failed = await api(apiUrl, '/auth/login', {
      method: 'POST',
      json: { username: 'alice', password: WRONG_PASSWORD },
    });
    note('failed login', failed.status, 401);
    const loggedIn = await api(apiUrl, '/auth/login', {
      method: 'POST',
      json: { username: 'alice', password: FIRST_PASSWORD },
    });
    note('login', loggedIn.status, 200);
    const firstToken = keep('first access token', field<string>(loggedIn.json, 'accessToken'));
    const firstRefresh = keep('first refresh token', refreshCookieOf(loggedIn));
    keep('first cookie header', `baud_refresh=${firstRefresh}`);

    // The access token on several requests, reading and writing.
    note('GET /users/me (token)', (await api(apiUrl, '/users/me', { token: firstToken })).status, 200);
    note(
      'GET area messages (token)',
      (await api(apiUrl, `/messages/areas/${AREA}/messages`, { token: firstToken })).status,
      200,
    );
    const posted = await api(apiUrl, `/messages/areas/${AREA}/messages`, {
      method: 'POST',
      token: firstToken,
      json: { subject: 'hello', message: 'posted with an access token' },
    });
    note('POST message (token)', posted.status, 201);
    note(
      'PUT /users/me (token)',
      (await api(apiUrl, '/users/me', { method: 'PUT', token: firstToken, json: { location: 'Somewhere' } })).status,
      200,
    );

    // Requests that fail: a malformed JSON body that carries the password, an unknown field
    // beside it, an unknown message, a bad credential.
    const malformed = await api(apiUrl, '/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"username":"alice","password":"${FIRST_PASSWORD}",}`,
    });
    note('malformed login body', malformed.status, 400);
    expect(malformed.text).not.toContain(FIRST_PASSWORD);
    const unknownField = await api(apiUrl, '/auth/login', {
      method: 'POST',
      json: { username: 'alice', password: FIRST_PASSWORD, remember: true },
    });
    note('login with an unknown field', unknownField.status, 400);
    note(
      'GET unknown message (token)',
      (await api(apiUrl, '/messages/00000000-0000-4000-8000-000000000000', { token: firstToken })).status,
      404,
    );
    note(
      'POST message with a bad body (token)',
      (
        await api(apiUrl, `/messages/areas/${AREA}/messages`, {
          method: 'POST',
          token: firstToken,
          json: { subject: '' },
        })
      ).status,
      400,
    );

    // Refresh with the cookie: a new pair; the old refresh token presented again is refused.
    const refreshed = await api(apiUrl, '/auth/refresh', {
      method: 'POST',
      headers: { cookie: `baud_refresh=${firstRefresh}` },
    });
    note('refresh', refreshed.status, 200);
    const secondToken = keep('second access token', field<string>(refreshed.json, 'accessToken'));
    const secondRefresh = keep('second refresh token', refreshCookieOf(refreshed));
    keep('second cookie header', `baud_refresh=${secondRefresh}`);
    note('GET /users/me (refreshed token)', (await api(apiUrl, '/users/me', { token: secondToken })).status, 200);
    const bogusRefresh = keep('made-up refresh token', 'Lsec-not-a-real-refresh-token-0b1c2d3e4f');
    note(
      'refresh with a made-up cookie',
      (await api(apiUrl, '/auth/refresh', { method: 'POST', headers: { cookie: `baud_refresh=${bogusRefresh}` } }))
        .status,
      401,
    );

    // An API key from the CLI, used in both headers.
    const generated = await board.cli([
      'rest',
      'api-key',
      'generate',
      'alice',
      '--label',
      'logs',
      '--scope',
      'read,write',
      '--json',
    ]);
    expect(generated.code, generated.stderr).toBe(0);
    const apiKey = keep('API key', field<string>(JSON.parse(generated.stdout), 'key'));
    note(
      'GET /users/me (X-Baud-API-Key)',
      (await api(apiUrl, '/users/me', { headers: { 'x-baud-api-key': apiKey } })).status,
      200,
    );
    note(
      'POST message (Authorization: Bearer <API key>)',
      (
        await api(apiUrl, `/messages/areas/${AREA}/messages`, {
          method: 'POST',
          token: apiKey,
          json: { subject: 'bot', message: 'posted with an API key' },
        })
      ).status,
      201,
    );
    const basic = keep('Basic credentials', Buffer.from(`alice:${FIRST_PASSWORD}`).toString('base64'));
    note(
      'GET /users/me (Authorization: Basic)',
      (await api(apiUrl, '/users/me', { headers: { authorization: `Basic ${basic}` } })).status,
      401,
    );
    const unknownKey = keep('unknown API key', `baud_${'Q'.repeat(43)}`);
    note('GET /users/me (unknown API key)', (await api(apiUrl, '/users/me', { token: unknownKey })).status, 401);

    // Logout; the ended session's access token is refused afterwards.
    note(
      'logout',
      (await api(apiUrl, '/auth/logout', { method: 'POST', headers: { cookie: `baud_refresh=${secondRefresh}` } }))
        .status,
      204,
    );
    note(
      'GET /users/me (token of the ended session)',
      (await api(apiUrl, '/users/me', { token: secondToken })).status,
      401,
    );

    // The operator changes the password with the CLI; the old one stops working, the new one works.
    const changed = await board.cli(['user', 'passwd', 'alice', '--password-stdin'], `${SECOND_PASSWORD}\n`);
    expect(changed.code, changed.stderr).toBe(0);
    note(
      'login with the old password',
      (await api(apiUrl, '/auth/login', { method: 'POST', json: { username: 'alice', password: FIRST_PASSWORD } }))
        .status,
      401,
    );
    const relogged = await api(apiUrl, '/auth/login', {
      method: 'POST',
      json: { username: 'alice', password: SECOND_PASSWORD },
    });
    note('login with the new password', relogged.status, 200);
    const thirdToken = keep('third access token', field<string>(relogged.json, 'accessToken'));
    const thirdRefresh = keep('third refresh token', refreshCookieOf(relogged));
    note('GET /users/me (third token)', (await api(apiUrl, '/users/me', { token: thirdToken })).status, 200);

    // Two-factor login: the shared secret, its otpauth URL and the recovery codes are secrets too.
    const enrolled = await api(apiUrl, '/users/me/totp', {
      method: 'POST',
      token: thirdToken,
      json: { password: SECOND_PASSWORD },
    });
    note('POST /users/me/totp', enrolled.status, 200);
    const totpSecret = keep('TOTP secret', field<string>(enrolled.json, 'secret'));
    keep('otpauth URL', field<string>(enrolled.json, 'otpauthUrl'));
    const totpKey = base32Decode(totpSecret) ?? Buffer.alloc(0);
    const confirmed = await api(apiUrl, '/users/me/totp/confirm', {
      method: 'POST',
      token: thirdToken,
      json: { code: totpCode(totpKey, timeStepAt(new Date())) },
    });
    note('POST /users/me/totp/confirm', confirmed.status, 200);
    const recoveryCodes = field<string[]>(confirmed.json, 'recoveryCodes').map((code, index) =>
      keep(`recovery code ${index + 1}`, code),
    );
    note(
      'login without the one-time code',
      (await api(apiUrl, '/auth/login', { method: 'POST', json: { username: 'alice', password: SECOND_PASSWORD } }))
        .status,
      401,
    );
    const wrongRecovery = keep('wrong recovery code', 'lsec-wrng-rcvy');
    note(
      'login with a wrong recovery code',
      (
        await api(apiUrl, '/auth/login', {
          method: 'POST',
          json: { username: 'alice', password: SECOND_PASSWORD, otp: wrongRecovery },
        })
      ).status,
      401,
    );
    note(
      'login with a recovery code',
      (
        await api(apiUrl, '/auth/login', {
          method: 'POST',
          json: { username: 'alice', password: SECOND_PASSWORD, otp: recoveryCodes[0] },
        })
      ).status,
      200,
    );
    note(
      'DELETE /users/me/totp',
      (
        await api(apiUrl, '/users/me/totp', {
          method: 'DELETE',
          token: thirdToken,
          json: { password: SECOND_PASSWORD, code: recoveryCodes[1] },
        })
      ).status,
      204,
    );
    // The user changes their own password: once with a wrong current one, then rightly.
    const changeOwn = (currentPassword: string) =>
      api(apiUrl, '/users/me/password', {
        method: 'PUT',
        token: thirdToken,
        json: { currentPassword, newPassword: THIRD_PASSWORD },
      });
    note('own password change with a wrong current password', (await changeOwn(WRONG_PASSWORD)).status, 403);
    note('own password change', (await changeOwn(SECOND_PASSWORD)).status, 204);
    note(
      'GET /users/me (the session of the change)',
      (await api(apiUrl, '/users/me', { token: thirdToken })).status,
      200,
    );
    note(
      'logout again',
      (await api(apiUrl, '/auth/logout', { method: 'POST', headers: { cookie: `baud_refresh=${thirdRefresh}` } }))
        .status,
      204,
    );

    // Stop the server so that every line is flushed (shutdown lines included), then scan
    // everything it wrote, and what the password-changing CLI run printed.
    expect(await server.terminate()).toEqual({ code: 0, signal: null });
    const serverLines = server.lines();
    const cliLines = [...changed.stdout.split('\n'), ...changed.stderr.split('\n')];
    const leaks: string[] = [];
    for (const [source, lines] of [
      ['server', serverLines],
      ['baud user passwd', cliLines],
    ] as const) {
      for (const [index, line] of lines.entries()) {
        for (const secret of secrets) {
          if (line.includes(secret.value))
            leaks.push(`${source} line ${index + 1}: ${secret.label}: ${line.slice(0, 300)}`);
        }
      }
    }

    // Not vacuous: the server logged every request, in JSON lines, at trace level: one line per
    // request once its answer was sent, with its status.
    const records = serverLines.flatMap((line) => {
      try {
        return [JSON.parse(line) as { level?: number; msg?: string; statusCode?: number }];
      } catch {
        return [];
      }
    });
    const requestLines = records.filter((record) => record.msg === 'request completed');
    const requestCount = Object.keys(statuses).length;
    expect(requestLines.length).toBeGreaterThanOrEqual(requestCount);
    expect(requestLines.filter((record) => typeof record.statusCode === 'number')).toEqual(requestLines);
    expect(records.filter((record) => record.msg === 'incoming request')).toEqual([]);
    const bytes = serverLines.reduce((total, line) => total + Buffer.byteLength(line) + 1, 0);

    console.log(
      `log-secrets [${dialect}]: ${requestCount} requests at level trace (${Object.values(statuses).filter((s) => s >= 400).length} failing), ` +
        `${serverLines.length} server lines (${records.length} JSON records, ${requestLines.length} request lines, ${bytes} bytes) ` +
        `scanned for ${secrets.length} secret strings (${secrets.map((secret) => secret.label).join(', ')}): ` +
        `${leaks.length} leaks`,
    );
    expect(leaks).toEqual([]);
  }, 120_000);
});
