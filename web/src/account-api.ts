import { API_PREFIX } from '../../clients/typescript/src/index.js';
import type { LoginSession, SshKey, TotpEnrolment } from './api-types.js';
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

export async function listSshKeys(): Promise<readonly SshKey[]> {
  const { data } = await client.api.GET(`${API_PREFIX}/users/me/ssh-keys`);
  return data?.data ?? [];
}

/** Registers a public key (one OpenSSH line) for terminal logins; a blank label leaves it to the line's comment. */
export async function addSshKey(publicKey: string, label: string): Promise<SshKey> {
  const body = label.trim() === '' ? { publicKey } : { publicKey, label };
  const { data } = await client.api.POST(`${API_PREFIX}/users/me/ssh-keys`, { body });
  if (!data) throw new Error('POST /users/me/ssh-keys answered no key');
  return data;
}

/** Removes one of the caller's SSH keys: it logs in no more. */
export async function removeSshKey(id: number): Promise<void> {
  await client.api.DELETE(`${API_PREFIX}/users/me/ssh-keys/{id}`, { params: { path: { id } } });
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
