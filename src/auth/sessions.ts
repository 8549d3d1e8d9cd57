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
