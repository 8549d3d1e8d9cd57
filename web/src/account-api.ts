import { API_PREFIX } from '../../clients/typescript/src/index.js';
import type { LoginSession, TotpEnrolment } from './api-types.js';
import { client } from './session.js';

/** A call through the typed client's transport (credentials, refresh, problems thrown) by a path it does not list yet. */
type Call = (path: string, init: { params?: object; body?: unknown }) => Promise<{ data?: unknown }>;

/**
 * The account calls of community.md "Accounts" that came after the client's types: the own
 * password, two-factor login and login sessions, and the desk's two-factor reset. Each call goes
 * through `client.api`, so it carries the access token and throws a BaudProblem like every
 * other; only its path is not in the client's types yet (api-types.ts).
 */
function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE'): Call {
  return client.api[method] as unknown as Call;
}

/** PUT /users/me/password → 204; a wrong current password is a 403, a bad new one a 400 on `newPassword`. */
export async function changePassword(currentPassword: string, newPassword: string): Promise<void> {
  await call('PUT')(`${API_PREFIX}/users/me/password`, { body: { currentPassword, newPassword } });
}

export async function listSessions(): Promise<readonly LoginSession[]> {
  const { data } = await call('GET')(`${API_PREFIX}/users/me/sessions`, {});
  return (data as { data: LoginSession[] }).data;
}

/** Ends one login session: its refresh token and access tokens stop working at once. */
export async function endSession(id: string): Promise<void> {
  await call('DELETE')(`${API_PREFIX}/users/me/sessions/${encodeURIComponent(id)}`, {});
}

/** Starts two-factor enrolment: the secret to put in an authenticator app. */
export async function startTotp(password: string): Promise<TotpEnrolment> {
  const { data } = await call('POST')(`${API_PREFIX}/users/me/totp`, { body: { password } });
  return data as TotpEnrolment;
}

/** Turns two-factor login on with a code of the app; answers the ten recovery codes, shown only now. */
export async function confirmTotp(code: string): Promise<readonly string[]> {
  const { data } = await call('POST')(`${API_PREFIX}/users/me/totp/confirm`, { body: { code } });
  return (data as { recoveryCodes: string[] }).recoveryCodes;
}

/** Turns two-factor login off; a recovery code may stand for `code`. */
export async function disableTotp(password: string, code: string): Promise<void> {
  await call('DELETE')(`${API_PREFIX}/users/me/totp`, { body: { password, code } });
}

/** The desk's answer to a lost phone: turns the account's two-factor login off (sysops only). */
export async function resetTwoFactorOf(username: string): Promise<void> {
  await call('DELETE')(`${API_PREFIX}/admin/users/${encodeURIComponent(username)}/totp`, {});
}
