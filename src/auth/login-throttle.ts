import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Executor } from '../db/database.js';
import { TooManyRequestsError, wholeSecondsIn } from '../errors.js';
import type { LoginAttemptStore, TakenSlot } from './login-attempt-store.js';
import { type RateLimitQuota, rateLimitHeaders } from './rate-limit-headers.js';

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
  readonly addressWindow: TakenSlot;
  /** The account window the slot was taken from (see `withdraw`). */
  readonly accountWindow: TakenSlot;
  /** What the caller has left if the password is wrong: the attempt keeps both its slots. */
  readonly quotaIfFailed: RateLimitQuota;
}

/** A slot taken, or refused (how long until the full window ends). */
type SlotOutcome =
  | { readonly taken: TakenSlot; readonly retryAfterMs: 0 }
  | { readonly taken: null; readonly retryAfterMs: number };

/** Failed-login throttling per account and per client address (see `createLoginThrottle`). */
export interface LoginThrottle {
  /**
   * Takes the attempt's slots for its username and its address, or throws
   * `TooManyRequestsError` when either window is full, with Retry-After for the later of
   * the full ones (and the RateLimit headers: none remaining, reset at Retry-After). One
   * transaction: the throw rolls back a slot the other window gave. The account is always
   * locked before the address, so two attempts cannot deadlock.
   */
  reserve(attempt: LoginAttempt): Promise<LoginReservation>;
  /**
   * Settles a successful login, inside the login's transaction. The account's window is
   * forgiven: whoever knows the password is not guessing it. The address only gets back the
   * slot this login took, and only if that window is still open: a success is not a guess,
   * so many people behind one NAT can log in all day, but the address's failures stay
   * counted, so logging in to one's own account cannot wipe out guesses at other accounts.
   * Returns what the caller has left then: the address window, with the slot given back,
   * is the only one that limits.
   */
  recordSuccess(trx: Executor, reservation: LoginReservation): Promise<RateLimitQuota>;
  /**
   * Gives back both slots of an attempt that turned out not to be a guess, without forgiving
   * anything else: a login whose password was right but that still lacks its one-time code. The
   * account window is not ended (as `recordSuccess` ends it), or someone who knows the password
   * could wipe out the count of their guesses at the code. Returns what the caller has left.
   */
  withdraw(reservation: LoginReservation): Promise<RateLimitQuota>;
  /** Deletes windows that are over (the next attempt would open a new one anyway). */
  prune(): Promise<void>;
}

const ACCOUNT_PREFIX = 'user:';
const ADDRESS_PREFIX = 'ip:';
const accountSubject = (attempt: LoginAttempt) => `${ACCOUNT_PREFIX}${attempt.usernameKey}`;
const addressSubject = (attempt: LoginAttempt) => `${ADDRESS_PREFIX}${attempt.clientAddress}`;

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
export function createLoginThrottle(deps: { store: LoginAttemptStore; clock: Clock; config: Config }): LoginThrottle {
  const { store, clock } = deps;
  const { maxFailures, windowSeconds } = deps.config.contentServers.web.restApi.loginThrottle;
  const windowMs = windowSeconds * 1000;

  /**
   * Takes a slot in `subject`'s window (opening a new window if the last one is over) and
   * returns the window, or, when the window is full, how long until it ends. The upsert makes
   * a full window a no-op, and the row lock it takes orders racing attempts, so exactly
   * `maxFailures` of them get a slot on either database.
   */
  async function takeSlot(trx: Executor, subject: string, now: Date): Promise<SlotOutcome> {
    const windowOverAt = new Date(now.getTime() - windowMs).toISOString();
    const request = { subject, now: now.toISOString(), windowOverAt, maxAttempts: maxFailures };
    const taken = await store.takeSlot(trx, request);
    if (taken !== undefined) return { taken, retryAfterMs: 0 };
    const fullSince = await store.windowStartOf(trx, subject);
    return { taken: null, retryAfterMs: Date.parse(fullSince) + windowMs - now.getTime() };
  }

  const msUntilOver = (window: TakenSlot, now: Date) => Date.parse(window.windowStartedAt) + windowMs - now.getTime();

  /**
   * What the caller has left: the attempts of its own address's window. The account's window is
   * never shown — its count holds other people's guesses at that name, and a login ends it, so
   * showing it would let anyone watch an account's logins. It can still answer 429 first.
   */
  function quotaOf(addressWindow: TakenSlot | undefined, now: Date): RateLimitQuota {
    if (addressWindow === undefined) {
      return { limit: maxFailures, remaining: maxFailures, resetSeconds: windowSeconds, windowSeconds };
    }
    return {
      limit: maxFailures,
      remaining: Math.max(0, maxFailures - addressWindow.attemptCount),
      resetSeconds: wholeSecondsIn(msUntilOver(addressWindow, now) / 1000),
      windowSeconds,
    };
  }

  return {
    async reserve(attempt) {
      const now = clock.now();
      return store.transaction(async (trx) => {
        const account = await takeSlot(trx, accountSubject(attempt), now);
        const address = await takeSlot(trx, addressSubject(attempt), now);
        if (account.taken === null || address.taken === null) {
          const resetSeconds = wholeSecondsIn(Math.max(account.retryAfterMs, address.retryAfterMs) / 1000);
          throw new TooManyRequestsError(
            'rate-limit.exceeded',
            'Too many failed logins; try again later.',
            resetSeconds,
          ).withHeaders(rateLimitHeaders({ limit: maxFailures, remaining: 0, resetSeconds, windowSeconds }));
        }
        return {
          attempt,
          addressWindow: address.taken,
          accountWindow: account.taken,
          quotaIfFailed: quotaOf(address.taken, now),
        };
      });
    },

    async recordSuccess(trx, reservation) {
      const { attempt, addressWindow } = reservation;
      await store.deleteWindow(trx, accountSubject(attempt));
      // The window as the give-back left it (parallel logins from one address count too); none
      // when it ended meanwhile, and the next attempt opens a new one.
      const left = await store.giveBackSlot(trx, addressSubject(attempt), addressWindow.windowStartedAt);
      return quotaOf(left, clock.now());
    },

    async withdraw(reservation) {
      const { attempt, addressWindow, accountWindow } = reservation;
      return store.transaction(async (trx) => {
        await store.giveBackSlot(trx, accountSubject(attempt), accountWindow.windowStartedAt);
        const left = await store.giveBackSlot(trx, addressSubject(attempt), addressWindow.windowStartedAt);
        return quotaOf(left, clock.now());
      });
    },

    async prune() {
      // Only its own: the table also holds the registration windows, which last longer.
      const windowOverAt = new Date(clock.now().getTime() - windowMs).toISOString();
      await store.deleteWindowsOver(windowOverAt, ACCOUNT_PREFIX);
      await store.deleteWindowsOver(windowOverAt, ADDRESS_PREFIX);
    },
  };
}
