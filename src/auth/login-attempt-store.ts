import type { Transaction } from 'kysely';
import type { Db, Executor } from '../db/database.js';
import type { Tables } from '../db/schema.js';

/** A subject's throttle window as a slot request sees it. */
export interface SlotRequest {
  /** `user:<usernameKey>` or `ip:<address>`. */
  readonly subject: string;
  /** When a window opened now would start. */
  readonly now: string;
  /** A window that started at or before this is over: the request opens a new one. */
  readonly windowOverAt: string;
  /** Attempts a window holds. */
  readonly maxAttempts: number;
}

/** A subject's open window once an attempt took a slot in it. */
export interface TakenSlot {
  readonly windowStartedAt: string;
  /** Attempts the window holds, this one included. */
  readonly attemptCount: number;
}

export interface LoginAttemptStore {
  /** Runs `work` in one transaction; methods that take an executor join it. */
  transaction<T>(work: (trx: Transaction<Tables>) => Promise<T>): Promise<T>;
  /**
   * Takes a slot in the subject's window, opening a new window if the last one is over, in one
   * atomic upsert; returns the window's start and count, or undefined when the window is full
   * (then nothing changed). The row lock the upsert takes orders racing attempts.
   */
  takeSlot(trx: Executor, request: SlotRequest): Promise<TakenSlot | undefined>;
  /** When the subject's current window started (the subject has one). */
  windowStartOf(trx: Executor, subject: string): Promise<string>;
  /**
   * When the subject's window started if it is open (started after `windowOverAt`) and full;
   * undefined otherwise. A plain read: a refusal known before costly work (hashing a password),
   * while `takeSlot` stays the one that decides.
   */
  fullWindowStartOf(request: Omit<SlotRequest, 'now'>): Promise<string | undefined>;
  /** Forgets the subject's window. */
  deleteWindow(trx: Executor, subject: string): Promise<void>;
  /**
   * Gives back one slot of the subject's window if it is still the one that started at
   * `windowStartedAt`, and returns the window as that left it (undefined when it is gone).
   */
  giveBackSlot(trx: Executor, subject: string, windowStartedAt: string): Promise<TakenSlot | undefined>;
  /** Deletes the windows of subjects starting with `subjectPrefix` that started at or before `windowOverAt`. */
  deleteWindowsOver(windowOverAt: string, subjectPrefix: string): Promise<void>;
}

/** Every query of the login throttle's windows (`login_attempts`). */
export function createLoginAttemptStore(db: Db): LoginAttemptStore {
  return {
    transaction: (work) => db.transaction().execute(work),

    async takeSlot(trx, { subject, now, windowOverAt, maxAttempts }) {
      return trx
        .insertInto('loginAttempts')
        .values({ subject, windowStartedAt: now, attemptCount: 1 })
        .onConflict((conflict) =>
          conflict
            .column('subject')
            .doUpdateSet((eb) => {
              const windowIsOver = eb('loginAttempts.windowStartedAt', '<=', windowOverAt);
              return {
                windowStartedAt: eb
                  .case()
                  .when(windowIsOver)
                  .then(now)
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
                eb('loginAttempts.windowStartedAt', '<=', windowOverAt),
                eb('loginAttempts.attemptCount', '<', maxAttempts),
              ]),
            ),
        )
        .returning(['windowStartedAt', 'attemptCount'])
        .executeTakeFirst();
    },

    async windowStartOf(trx, subject) {
      const row = await trx
        .selectFrom('loginAttempts')
        .select('windowStartedAt')
        .where('subject', '=', subject)
        .executeTakeFirstOrThrow();
      return row.windowStartedAt;
    },

    async fullWindowStartOf({ subject, windowOverAt, maxAttempts }) {
      const row = await db
        .selectFrom('loginAttempts')
        .select('windowStartedAt')
        .where('subject', '=', subject)
        .where('windowStartedAt', '>', windowOverAt)
        .where('attemptCount', '>=', maxAttempts)
        .executeTakeFirst();
      return row?.windowStartedAt;
    },

    async deleteWindow(trx, subject) {
      await trx.deleteFrom('loginAttempts').where('subject', '=', subject).execute();
    },

    giveBackSlot: (trx, subject, windowStartedAt) =>
      trx
        .updateTable('loginAttempts')
        .set((eb) => ({ attemptCount: eb('attemptCount', '-', 1) }))
        .where('subject', '=', subject)
        .where('windowStartedAt', '=', windowStartedAt)
        .where('attemptCount', '>', 0)
        .returning(['windowStartedAt', 'attemptCount'])
        .executeTakeFirst(),

    async deleteWindowsOver(windowOverAt, subjectPrefix) {
      // The prefixes are plain words and a colon: nothing in them is a LIKE wildcard.
      await db
        .deleteFrom('loginAttempts')
        .where('windowStartedAt', '<=', windowOverAt)
        .where('subject', 'like', `${subjectPrefix}%`)
        .execute();
    },
  };
}
