import { base32Decode, timeStepAt, totpCode } from '../src/auth/totp.js';
import type { Account } from './board-under-test.js';
import { JSON_HEADERS, logIn, requestJson, requestOnce } from './http-client.js';

/** A login with a TOTP code beside one without, one request at a time, in the same minute. */
export interface TwoFactorLoginCost {
  /** Median time of a password-only login. */
  readonly plainLoginMs: number;
  /** Median time of a login with password and a fresh TOTP code (two-factor login on). */
  readonly totpLoginMs: number;
  /** `totpLoginMs ÷ plainLoginMs`: what asking the code adds to a login. */
  readonly ratio: number;
  readonly rounds: number;
}

// A code is accepted once, and never one of an earlier step than the last accepted: a user
// confirms with the previous step's code and then logs in with the current step's and the next
// one's (one step of skew is accepted either way), so each account gives two measured logins.
const LOGINS_PER_ACCOUNT = 2;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/**
 * Times `rounds` password-only logins of `plain` and `rounds` logins with a TOTP code,
 * alternating, over the API, one at a time, on accounts with two-factor login on made for it
 * (`newAccount`). Load scenarios cannot log in with TOTP: a load driver repeats one body, and a
 * code works once.
 */
export async function measureTwoFactorLogin(options: {
  readonly apiUrl: string;
  readonly plain: Account;
  readonly newAccount: (username: string) => Promise<Account>;
  readonly rounds: number;
}): Promise<TwoFactorLoginCost> {
  const { apiUrl, plain, rounds } = options;
  const codeAt = (key: Buffer, stepOffset: number) => totpCode(key, timeStepAt(new Date()) + stepOffset);
  const enrolled: Array<{ account: Account; key: Buffer }> = [];
  for (let index = 0; index < Math.ceil(rounds / LOGINS_PER_ACCOUNT); index += 1) {
    const account = await options.newAccount(`bench-totp-${index}`);
    const headers = {
      ...JSON_HEADERS,
      authorization: `Bearer ${await logIn(apiUrl, account.username, account.password)}`,
    };
    const { secret } = await requestJson<{ secret: string }>(`${apiUrl}/users/me/totp`, 200, {
      method: 'POST',
      headers,
      body: JSON.stringify({ password: account.password }),
    });
    const key = base32Decode(secret);
    if (!key) throw new Error(`the enrolment's secret is not base32: ${secret}`);
    await requestJson(`${apiUrl}/users/me/totp/confirm`, 200, {
      method: 'POST',
      headers,
      body: JSON.stringify({ code: codeAt(key, -1) }),
    });
    enrolled.push({ account, key });
  }

  const timedLogin = async (body: Record<string, string>): Promise<number> => {
    const started = performance.now();
    const response = await requestOnce(`${apiUrl}/auth/login`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify(body),
    });
    const ms = performance.now() - started;
    if (response.status !== 200) {
      throw new Error(`a measured login answered ${response.status}: ${response.body.toString().slice(0, 300)}`);
    }
    return ms;
  };
  const plainTimes: number[] = [];
  const totpTimes: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    plainTimes.push(await timedLogin({ username: plain.username, password: plain.password }));
    const user = enrolled[Math.floor(round / LOGINS_PER_ACCOUNT)];
    if (!user) throw new Error(`no enrolled account for round ${round}`);
    const { account, key } = user;
    const otp = codeAt(key, round % LOGINS_PER_ACCOUNT);
    totpTimes.push(await timedLogin({ username: account.username, password: account.password, otp }));
  }
  const plainLoginMs = median(plainTimes);
  const totpLoginMs = median(totpTimes);
  return { plainLoginMs, totpLoginMs, ratio: totpLoginMs / plainLoginMs, rounds };
}
