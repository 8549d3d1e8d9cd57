import { activeSessionsQuery } from '../auth/sessions.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Db } from '../db/database.js';
import type { UserService } from '../users/user-service.js';
import { BAUD_VERSION } from '../version.js';

export interface BoardInfo {
  boardName: string;
  version: string;
  nodeCount: number;
  closedSystem: boolean;
  sysopName?: string;
  uptimeSeconds: number;
}

export interface BoardStats {
  totalUsers: number;
  totalMessages: number;
  totalFiles: number;
  totalFileBytes: number;
  totalCalls: number;
  callsToday: number;
}

/** Board information and statistics, all counted from the database (shared by every node). */
export function createSystemService(deps: { db: Db; config: Config; clock: Clock; users: UserService }) {
  const { db, config, clock, users } = deps;
  const startedAt = clock.now();

  return {
    async getInfo(): Promise<BoardInfo> {
      const now = clock.now();
      const { nodeCount } = await activeSessionsQuery(db, now)
        .select((eb) => eb.fn.countAll<number>().as('nodeCount'))
        .executeTakeFirstOrThrow();
      return {
        boardName: config.general.boardName,
        version: BAUD_VERSION,
        nodeCount: Number(nodeCount),
        closedSystem: config.general.closedSystem,
        ...(config.general.sysopName ? { sysopName: config.general.sysopName } : {}),
        uptimeSeconds: Math.max(0, Math.floor((now.getTime() - startedAt.getTime()) / 1000)),
      };
    },

    /** Totals come from the per-area counters, so stats stay cheap on a board with millions of rows. */
    async getStats(): Promise<BoardStats> {
      const now = clock.now();
      const startOfDay = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())).toISOString();
      const [totalUsers, messages, files, calls] = await Promise.all([
        users.countUsers(),
        db
          .selectFrom('messageAreas')
          .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('messageCount'), eb.lit(0)).as('total'))
          .executeTakeFirstOrThrow(),
        db
          .selectFrom('fileAreas')
          .select((eb) => [
            eb.fn.coalesce(eb.fn.sum<number>('fileCount'), eb.lit(0)).as('count'),
            eb.fn.coalesce(eb.fn.sum<number>('totalBytes'), eb.lit(0)).as('bytes'),
          ])
          .executeTakeFirstOrThrow(),
        db
          .selectFrom('calls')
          .select((eb) => [
            eb.fn.countAll<number>().as('total'),
            eb.fn.count<number>(eb.case().when('calledAt', '>=', startOfDay).then(1).end()).as('today'),
          ])
          .executeTakeFirstOrThrow(),
      ]);
      return {
        totalUsers,
        totalMessages: Number(messages.total),
        totalFiles: Number(files.count),
        totalFileBytes: Number(files.bytes),
        totalCalls: Number(calls.total),
        callsToday: Number(calls.today),
      };
    },
  };
}
