import type { Transaction } from 'kysely';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Db } from '../db/database.js';
import type { Tables } from '../db/schema.js';
import { TooManyRequestsError } from '../errors.js';

/** Who a login attempt is counted against: the account tried, and the address it came from. */
export interface LoginAttempt {
  /** The case-insensitive username key (see `usernameKey`). */
  readonly usernameKey: string;
  readonly clientAddress: string;
}

/** An attempt that holds a slot in both its windows; its password may now be checked. */
export interface LoginReservation {
  readonly attempt: LoginAttempt;
  /** The address window the slot was taken from (a success gives back that slot only). */
  readonly addressWindowStartedAt: string;
}

/** A slot taken (its window's start), or refused (how long until the full window ends). */
type SlotOutcome =
  | { readonly windowStartedAt: string; readonly retryAfterMs: 0 }
  | { readonly windowStartedAt: null; readonly retryAfterMs: number };

const accountSubject = (attempt: LoginAttempt) => `user:${attempt.usernameKey}`;
const addressSubject = (attempt: LoginAttempt) => `ip:${attempt.clientAddress}`;

/**
 * Failed-login throttling, kept in the database (`login_attempts`) so every node sharing it
 * sees the same counts. Each username and each client address has a window that opens at its
 * first attempt and lasts `windowSeconds`; at most `maxFailures` attempts per window get their
 * password checked, the rest are refused with 429 until the window ends. Windows are fixed, not
 * sliding: a guesser may spend one window just before it ends and the next just after, but
 * over time gets no more than `maxFailures` guesses per `windowSeconds`.
 *
 * An attempt takes its slot *before* the password is checked, with one atomic upsert per
 * subject, so parallel guesses cannot all pass a count that none of them has added to yet
 * (check-then-count let 27 of 300 parallel guesses through on PostgreSQL). A failure simply
 * keeps its slots; `recordSuccess` settles a success.
 */
export function createLoginThrottle(deps: { db: Db; clock: Clock; config: Config }) {
  const { db, clock } = deps;
  const { maxFailures, windowSeconds } = deps.config.contentServers.web.restApi.loginThrottle;
  const windowMs = windowSeconds * 1000;

  /**
   * Takes a slot in `subject`'s window (opening a new window if the last one is over) and
   * returns the window's start, or, when the window is full, how long until it ends. The
   * upsert's `where` makes a full window a no-op, and the row lock it takes orders racing
   * attempts, so exactly `maxFailures` of them get a slot on either database.
   */
  async function takeSlot(trx: Transaction<Tables>, subject: string, now: Date): Promise<SlotOutcome> {
    const nowIso = now.toISOString();
    const windowStartIso = new Date(now.getTime() - windowMs).toISOString();
    const taken = await trx
      .insertInto('loginAttempts')
      .values({ subject, windowStartedAt: nowIso, attemptCount: 1 })
      .onConflict((conflict) =>
        conflict
          .column('subject')
          .doUpdateSet((eb) => {
            const windowIsOver = eb('loginAttempts.windowStartedAt', '<=', windowStartIso);
            return {
              windowStartedAt: eb
                .case()
                .when(windowIsOver)
                .then(nowIso)
                .else(eb.ref('loginAttempts.windowStartedAt'))
                .end(),
              attemptCount: eb
                .case()
                .when(windowIsOver)
                .then(eb.lit(1))
                .else(eb('loginAttempts.attemptCount', '+', 1))
                .end(),
            };
          })
          .where((eb) =>
            eb.or([
              eb('loginAttempts.windowStartedAt', '<=', windowStartIso),
              eb('loginAttempts.attemptCount', '<', maxFailures),
            ]),
          ),
      )
      .returning('windowStartedAt')
      .executeTakeFirst();
    if (taken) return { windowStartedAt: taken.windowStartedAt, retryAfterMs: 0 };
    const full = await trx
      .selectFrom('loginAttempts')
      .select('windowStartedAt')
      .where('subject', '=', subject)
      .executeTakeFirstOrThrow();
    return { windowStartedAt: null, retryAfterMs: Date.parse(full.windowStartedAt) + windowMs - now.getTime() };
  }

  return {
    /**
     * Takes the attempt's slots for its username and its address, or throws
     * `TooManyRequestsError` when either window is full, with Retry-After for the later of
     * the full ones. One transaction: the throw rolls back a slot the other window gave. The
     * account is always locked before the address, so two attempts cannot deadlock.
     */
    async reserve(attempt: LoginAttempt): Promise<LoginReservation> {
      const now = clock.now();
      return db.transaction().execute(async (trx) => {
        const account = await takeSlot(trx, accountSubject(attempt), now);
        const address = await takeSlot(trx, addressSubject(attempt), now);
        if (account.windowStartedAt === null || address.windowStartedAt === null) {
          const retryAfterMs = Math.max(account.retryAfterMs, address.retryAfterMs);
          throw new TooManyRequestsError('Too many failed logins; try again later.', retryAfterMs / 1000);
        }
        return { attempt, addressWindowStartedAt: address.windowStartedAt };
      });
    },

    /**
     * Settles a successful login, inside the login's transaction. The account's window is
     * forgiven: whoever knows the password is not guessing it. The address only gets back the
     * slot this login took, and only if that window is still open: a success is not a guess,
     * so many people behind one NAT can log in all day, but the address's failures stay
     * counted, so logging in to one's own account cannot wipe out guesses at other accounts.
     */
    async recordSuccess(trx: Transaction<Tables>, reservation: LoginReservation): Promise<void> {
      const { attempt, addressWindowStartedAt } = reservation;
      await trx.deleteFrom('loginAttempts').where('subject', '=', accountSubject(attempt)).execute();
      await trx
        .updateTable('loginAttempts')
        .set((eb) => ({ attemptCount: eb('attemptCount', '-', 1) }))
        .where('subject', '=', addressSubject(attempt))
        .where('windowStartedAt', '=', addressWindowStartedAt)
        .where('attemptCount', '>', 0)
        .execute();
    },

    /** Deletes windows that are over (the next attempt would open a new one anyway). */
    async prune(): Promise<void> {
      const windowStart = new Date(clock.now().getTime() - windowMs).toISOString();
      await db.deleteFrom('loginAttempts').where('windowStartedAt', '<=', windowStart).execute();
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
