import type { Db } from '../db/database.js';

/** A login session counts as an active node while it is alive and was used this recently. */
export const ACTIVE_SESSION_WINDOW_MS = 15 * 60 * 1000;

/** Login sessions (refresh families) that are alive and were used in the last 15 minutes. */
export function activeSessionsQuery(db: Db, now: Date) {
  const nowIso = now.toISOString();
  return db
    .selectFrom('refreshFamilies')
    .where('revokedAt', 'is', null)
    .where('expiresAt', '>', nowIso)
    .where('lastActivityAt', '>', new Date(now.getTime() - ACTIVE_SESSION_WINDOW_MS).toISOString());
}

/**
 * Whether the login session an access token was issued for still stands: not logged out,
 * not past its absolute lifetime, and not older than the user's last password change or
 * disabling. Checked on every token request, so logout takes effect at once rather than
 * when the 15-minute token expires.
 */
export async function isSessionAlive(db: Db, sessionId: string, userId: number, now: Date): Promise<boolean> {
  const row = await db
    .selectFrom('refreshFamilies as f')
    .innerJoin('users as u', 'u.id', 'f.userId')
    .select('f.id')
    .where('f.id', '=', sessionId)
    .where('f.userId', '=', userId)
    .where('f.revokedAt', 'is', null)
    .where('f.expiresAt', '>', now.toISOString())
    .whereRef('u.credentialsChangedAt', '<=', 'f.createdAt')
    .executeTakeFirst();
  return row !== undefined;
}
