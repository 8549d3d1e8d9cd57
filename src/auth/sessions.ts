import type { LiveSession } from '../caller.js';
import type { Db } from '../db/database.js';

/** A login session counts as an active node while it is alive and was used this recently. */
export const ACTIVE_SESSION_WINDOW_MS = 15 * 60 * 1000;

/**
 * Login sessions (refresh families, joined with their users) that still stand: not logged
 * out, not past their absolute lifetime, the account enabled and unchanged since the login
 * (a password change or disabling ends every session). The one definition of "alive".
 */
export function liveSessionsQuery(db: Db, now: Date) {
  return db
    .selectFrom('refreshFamilies')
    .innerJoin('users', 'users.id', 'refreshFamilies.userId')
    .where('refreshFamilies.revokedAt', 'is', null)
    .where('refreshFamilies.expiresAt', '>', now.toISOString())
    .where('users.disabledAt', 'is', null)
    .whereRef('users.credentialsChangedAt', '<=', 'refreshFamilies.createdAt');
}

/** Live sessions used in the last 15 minutes: the node list and `nodeCount`. */
export function activeSessionsQuery(db: Db, now: Date) {
  return liveSessionsQuery(db, now).where(
    'refreshFamilies.lastActivityAt',
    '>',
    new Date(now.getTime() - ACTIVE_SESSION_WINDOW_MS).toISOString(),
  );
}

/**
 * The session an access token was issued for, if it still stands. Checked on every token
 * request, so logout takes effect at once rather than when the 15-minute token expires.
 */
export async function findLiveSession(
  db: Db,
  sessionId: string,
  userId: number,
  now: Date,
): Promise<LiveSession | null> {
  const row = await liveSessionsQuery(db, now)
    .select(['refreshFamilies.id', 'refreshFamilies.lastActivityAt'])
    .where('refreshFamilies.id', '=', sessionId)
    .where('refreshFamilies.userId', '=', userId)
    .executeTakeFirst();
  return row ?? null;
}
