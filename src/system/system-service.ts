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

/** One active login session (decisions.md, "Node entry"). */
export interface NodeEntry {
  node: number;
  authenticated: boolean;
  action: string;
  isSecure: boolean;
  userId: number;
  username: string;
  location: string;
  affiliations: string;
  timeOnMinutes: number;
  connectedAt: string;
  lastActivityAt: string;
}

/** One interactive login (decisions.md, "Last-caller entry"). */
export interface LastCallerEntry {
  userId: number;
  username: string;
  location: string;
  affiliations: string;
  timestamp: string;
}

export const MAX_LAST_CALLERS = 50;
/** The node list's bound: every login is a session, so an unbounded list grows with logins. */
export const MAX_NODES = 100;

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

    /**
     * The `limit` (at most 100) most recently active sessions, numbered from 1 in the order
     * they logged in. Node numbers are positions in this list, not stable ids: HTTP sessions
     * have no fixed line to sit on.
     */
    async listNodes(limit = MAX_NODES): Promise<NodeEntry[]> {
      const now = clock.now();
      const mostRecentlyActive = activeSessionsQuery(db, now)
        .select([
          'refreshFamilies.id as sessionId',
          'refreshFamilies.createdAt',
          'refreshFamilies.lastActivityAt',
          'refreshFamilies.lastAction',
          'refreshFamilies.isSecure',
          'users.id as userId',
          'users.username',
          'users.location',
          'users.affiliations',
        ])
        .orderBy('refreshFamilies.lastActivityAt', 'desc')
        .orderBy('refreshFamilies.id', 'desc')
        .limit(Math.min(Math.max(1, limit), MAX_NODES));
      const rows = await db
        .selectFrom(mostRecentlyActive.as('nodes'))
        .selectAll()
        .orderBy('createdAt')
        .orderBy('sessionId')
        .execute();
      return rows.map((row, index) => ({
        node: index + 1,
        authenticated: true,
        action: row.lastAction,
        isSecure: row.isSecure === 1,
        userId: row.userId,
        username: row.username,
        location: row.location ?? '',
        affiliations: row.affiliations ?? '',
        timeOnMinutes: Math.max(0, Math.floor((now.getTime() - Date.parse(row.createdAt)) / 60_000)),
        connectedAt: row.createdAt,
        lastActivityAt: row.lastActivityAt,
      }));
    },

    /** The most recent interactive logins, newest first (at most 50). */
    async listLastCallers(limit = MAX_LAST_CALLERS): Promise<LastCallerEntry[]> {
      const rows = await db
        .selectFrom('calls')
        .innerJoin('users', 'users.id', 'calls.userId')
        .select(['users.id as userId', 'users.username', 'users.location', 'users.affiliations', 'calls.calledAt'])
        .orderBy('calls.id', 'desc')
        .limit(Math.min(Math.max(1, limit), MAX_LAST_CALLERS))
        .execute();
      return rows.map((row) => ({
        userId: row.userId,
        username: row.username,
        location: row.location ?? '',
        affiliations: row.affiliations ?? '',
        timestamp: row.calledAt,
      }));
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
