import { createHash } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { TestBoard } from '../support/test-board.js';

export const API = '/_baud/api/v1';
export const PASSWORD = 'correct horse battery';

/** Logs in over HTTP; returns the response, the access token and the raw refresh cookie value. */
export async function login(
  board: TestBoard,
  username: string,
  password = PASSWORD,
  options: { remoteAddress?: string; forwardedFor?: string } = {},
) {
  const response = await board.app.inject({
    method: 'POST',
    url: `${API}/auth/login`,
    payload: { username, password },
    ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
    ...(options.forwardedFor ? { headers: { 'x-forwarded-for': options.forwardedFor } } : {}),
  });
  const accessToken: string | undefined = response.statusCode === 200 ? response.json().accessToken : undefined;
  return { response, accessToken, refreshToken: refreshCookieOf(response) };
}

/** The value of the `baud_refresh` cookie a response sets, if any. */
export function refreshCookieOf(response: LightMyRequestResponse): string | undefined {
  return response.cookies.find((cookie) => cookie.name === 'baud_refresh')?.value;
}

/** The raw Set-Cookie header for `baud_refresh`. */
export function refreshSetCookieHeader(response: LightMyRequestResponse): string | undefined {
  const header = response.headers['set-cookie'];
  return [header ?? []].flat().find((value) => value.startsWith('baud_refresh='));
}

export function refresh(board: TestBoard, refreshToken: string | undefined) {
  return board.app.inject({
    method: 'POST',
    url: `${API}/auth/refresh`,
    ...(refreshToken === undefined ? {} : { cookies: { baud_refresh: refreshToken } }),
  });
}

export function logout(board: TestBoard, refreshToken: string | undefined) {
  return board.app.inject({
    method: 'POST',
    url: `${API}/auth/logout`,
    ...(refreshToken === undefined ? {} : { cookies: { baud_refresh: refreshToken } }),
  });
}

export function getMe(board: TestBoard, headers: Record<string, string>) {
  return board.app.inject({ method: 'GET', url: `${API}/users/me`, headers });
}

export function bearer(token: string | undefined): Record<string, string> {
  return { authorization: `Bearer ${token ?? ''}` };
}

/**
 * Starts `board`'s app on a free port of 127.0.0.1 and returns the API base URL; the board's
 * `close` stops it. For tests that need truly parallel requests over many connections.
 */
export async function listenOnFreePort(board: TestBoard): Promise<string> {
  const address = await board.app.listen({ port: 0, host: '127.0.0.1' });
  return `${address}${API}`;
}

/** How many responses got each status, e.g. `{ 401: 10, 429: 290 }`. */
export function tallyStatuses(statuses: readonly number[]): Record<number, number> {
  const tally: Record<number, number> = {};
  for (const status of statuses) tally[status] = (tally[status] ?? 0) + 1;
  return tally;
}

/**
 * Inserts an API key the way `baud import enigma` carries one over (only the SHA-256 of the raw
 * key, as ENiGMA½ stored it), so tests can present the raw key.
 */
export async function insertImportedApiKey(
  board: TestBoard,
  userId: number,
  rawKey: string,
  scope: string,
  revoked = false,
): Promise<void> {
  const now = board.board.clock.now().toISOString();
  await board.board.db
    .insertInto('apiKeys')
    .values({
      userId,
      label: 'imported from ENiGMA½',
      scope,
      keyHash: createHash('sha256').update(rawKey).digest('hex'),
      createdAt: now,
      lastUsedAt: null,
      revokedAt: revoked ? now : null,
    })
    .execute();
}
