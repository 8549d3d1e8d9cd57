import { API_PREFIX } from '../../clients/typescript/src/index.js';
import type { LoginSession, TotpEnrolment } from './api-types.js';
import { client } from './session.js';

// The account calls of community.md "Your own account" and the desk's two-factor reset, through
// the typed client: each carries the access token and throws a BaudProblem on an error answer.

/** PUT /users/me/password → 204; a wrong current password is a 403, a bad new one a 400 on `newPassword`. */
export async function changePassword(currentPassword: string, newPassword: string): Promise<void> {
  await client.api.PUT(`${API_PREFIX}/users/me/password`, { body: { currentPassword, newPassword } });
}

export async function listSessions(): Promise<readonly LoginSession[]> {
  const { data } = await client.api.GET(`${API_PREFIX}/users/me/sessions`);
  return data?.data ?? [];
}

/** Ends one login session: its refresh token and access tokens stop working at once. */
export async function endSession(sessionId: string): Promise<void> {
  await client.api.DELETE(`${API_PREFIX}/users/me/sessions/{sessionId}`, { params: { path: { sessionId } } });
}

/** Starts two-factor enrolment: the secret to put in an authenticator app. */
export async function startTotp(password: string): Promise<TotpEnrolment> {
  const { data } = await client.api.POST(`${API_PREFIX}/users/me/totp`, { body: { password } });
  if (!data) throw new Error('POST /users/me/totp answered no enrolment');
  return data;
}

/** Turns two-factor login on with a code of the app; answers the ten recovery codes, shown only now. */
export async function confirmTotp(code: string): Promise<readonly string[]> {
  const { data } = await client.api.POST(`${API_PREFIX}/users/me/totp/confirm`, { body: { code } });
  return data?.recoveryCodes ?? [];
}

/** Turns two-factor login off; a recovery code may stand for `code`. */
export async function disableTotp(password: string, code: string): Promise<void> {
  await client.api.DELETE(`${API_PREFIX}/users/me/totp`, { body: { password, code } });
}

/** The desk's answer to a lost phone: turns the account's two-factor login off (sysops only). */
export async function resetTwoFactorOf(username: string): Promise<void> {
  await client.api.DELETE(`${API_PREFIX}/admin/users/{username}/totp`, { params: { path: { username } } });
}
