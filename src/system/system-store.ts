import type { Db, Executor } from '../db/database.js';

/** One interactive login. */
export interface CallRow {
  readonly userId: number;
  readonly calledAt: string;
}

export interface CallCounts {
  readonly total: number;
  /** Calls since the start of the day asked for. */
  readonly today: number;
}

export interface SystemStore {
  /** Logs a call; takes the login's transaction, so a failed login logs nothing. */
  recordCall(trx: Executor, userId: number, calledAt: string): Promise<void>;
  /** The `limit` most recent calls, newest first. */
  listLastCalls(limit: number): Promise<CallRow[]>;
  countCalls(startOfDay: string): Promise<CallCounts>;
}

/**
 * Every query of the board's call log (`calls`), the one table of the system domain: a row
 * per interactive login, for the last-callers list and the call statistics. What the list
 * shows of each caller comes from the users domain.
 */
export function createSystemStore(db: Db): SystemStore {
  return {
    async recordCall(trx, userId, calledAt) {
      await trx.insertInto('calls').values({ userId, calledAt }).execute();
    },

    listLastCalls: (limit) =>
      db.selectFrom('calls').select(['userId', 'calledAt']).orderBy('id', 'desc').limit(limit).execute(),

    async countCalls(startOfDay) {
      const calls = await db
        .selectFrom('calls')
        .select((eb) => [
          eb.fn.countAll<number>().as('total'),
          eb.fn.count<number>(eb.case().when('calledAt', '>=', startOfDay).then(1).end()).as('today'),
        ])
        .executeTakeFirstOrThrow();
      return { total: Number(calls.total), today: Number(calls.today) };
    },
  };
}
