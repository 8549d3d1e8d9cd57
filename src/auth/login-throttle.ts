import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Db } from '../db/database.js';
import { TooManyRequestsError } from '../errors.js';

/** Who a failed login is counted against: the account tried, and the address it came from. */
export interface LoginAttempt {
  /** The case-insensitive username key (see `usernameKey`). */
  readonly usernameKey: string;
  readonly clientAddress: string;
}

const accountSubject = (attempt: LoginAttempt) => `user:${attempt.usernameKey}`;
const addressSubject = (attempt: LoginAttempt) => `ip:${attempt.clientAddress}`;

function subjectsOf(attempt: LoginAttempt): string[] {
  return [accountSubject(attempt), addressSubject(attempt)];
}

/**
 * Failed-login throttling, kept in the database (`login_failures`) so every node sharing it
 * sees the same counts. Once `maxFailures` failures of one username, or from one address, fall
 * within the last `windowSeconds`, further attempts are refused with 429 until enough of
 * them age out of the window.
 */
export function createLoginThrottle(deps: { db: Db; clock: Clock; config: Config }) {
  const { db, clock } = deps;
  const { maxFailures, windowSeconds } = deps.config.contentServers.web.restApi.loginThrottle;
  const windowMs = windowSeconds * 1000;

  return {
    /** Throws `TooManyRequestsError` (with Retry-After) when either subject is over the limit. */
    async assertAllowed(attempt: LoginAttempt): Promise<void> {
      const now = clock.now();
      const windowStart = new Date(now.getTime() - windowMs).toISOString();
      let retryAfterMs = 0;
      for (const subject of subjectsOf(attempt)) {
        const failures = await db
          .selectFrom('loginFailures')
          .select('failedAt')
          .where('subject', '=', subject)
          .where('failedAt', '>', windowStart)
          .orderBy('failedAt', 'desc')
          .limit(maxFailures)
          .execute();
        const oldestCounted = failures[maxFailures - 1];
        if (oldestCounted === undefined) continue;
        // Below the limit again once the maxFailures-th newest failure leaves the window.
        retryAfterMs = Math.max(retryAfterMs, Date.parse(oldestCounted.failedAt) + windowMs - now.getTime());
      }
      if (retryAfterMs > 0) {
        throw new TooManyRequestsError(
          'Too many failed logins; try again later.',
          Math.max(1, Math.ceil(retryAfterMs / 1000)),
        );
      }
    },

    async recordFailure(attempt: LoginAttempt): Promise<void> {
      const failedAt = clock.now().toISOString();
      await db
        .insertInto('loginFailures')
        .values(subjectsOf(attempt).map((subject) => ({ subject, failedAt })))
        .execute();
    },

    /**
     * A successful login forgives the account's failures. The address keeps its count, so one
     * valid account cannot be used to reset an address that is guessing other passwords.
     */
    async forgiveAccount(attempt: LoginAttempt): Promise<void> {
      await db.deleteFrom('loginFailures').where('subject', '=', accountSubject(attempt)).execute();
    },

    /** Deletes failures that no longer count. */
    async prune(): Promise<void> {
      const windowStart = new Date(clock.now().getTime() - windowMs).toISOString();
      await db.deleteFrom('loginFailures').where('failedAt', '<=', windowStart).execute();
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
