import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { FileService } from '../files/file-service.js';
import type { MessageService } from '../messages/message-service.js';
import type { UserService } from '../users/user-service.js';
import type { UserCard } from '../users/user-store.js';
import { BAUD_VERSION } from '../version.js';
import type { SystemStore } from './system-store.js';

export interface BoardInfo {
  readonly boardName: string;
  readonly version: string;
  readonly nodeCount: number;
  readonly closedSystem: boolean;
  readonly sysopName?: string;
  readonly uptimeSeconds: number;
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

/** One live login session as the node list shows it. */
export interface ActiveSession {
  readonly userId: number;
  readonly createdAt: string;
  readonly lastActivityAt: string;
  readonly lastAction: string;
  /** 1 when the session logged in over TLS (a column flag), else 0. */
  readonly isSecure: number;
}

/**
 * The board's live login sessions: `nodeCount` and the node list. Sessions are auth's (its
 * session store answers this); the system only counts and shows them.
 */
export interface ActiveSessions {
  /** Sessions alive at `now` and used recently enough to count as a node. */
  countActiveSessions(now: Date): Promise<number>;
  /** The `limit` most recently active of them, in the order they logged in. */
  listActiveSessions(now: Date, limit: number): Promise<readonly ActiveSession[]>;
}

export interface BoardStats {
  totalUsers: number;
  totalMessages: number;
  totalFiles: number;
  totalFileBytes: number;
  totalCalls: number;
  callsToday: number;
}

/** Board information, the node list, last callers and statistics. */
export interface SystemService {
  getInfo(): Promise<BoardInfo>;
  /**
   * The `limit` (at most 100) most recently active sessions, numbered from 1 in the order
   * they logged in. Node numbers are positions in this list, not stable ids: HTTP sessions
   * have no fixed line to sit on.
   */
  listNodes(limit?: number): Promise<NodeEntry[]>;
  /** The most recent interactive logins, newest first (at most 50). */
  listLastCallers(limit?: number): Promise<LastCallerEntry[]>;
  /** Totals come from the per-area counters, so stats stay cheap on a board with millions of rows. */
  getStats(): Promise<BoardStats>;
}

/** A user's card as the node list and last callers show it (no location is ''). */
function cardFields(card: UserCard): { username: string; location: string; affiliations: string } {
  return { username: card.username, location: card.location ?? '', affiliations: card.affiliations ?? '' };
}

/**
 * Counted from the database (shared by every node): the call log is the system's own; sessions,
 * users, messages and files are counted by their domains.
 */
export function createSystemService(deps: {
  config: Config;
  clock: Clock;
  store: SystemStore;
  sessions: ActiveSessions;
  users: Pick<UserService, 'countUsers' | 'cardsOf'>;
  messages: Pick<MessageService, 'countMessages'>;
  files: Pick<FileService, 'countFiles'>;
}): SystemService {
  const { config, clock, store, sessions, users, messages, files } = deps;
  const startedAt = clock.now();
  /**
   * The last answer, handed out again while it is still true: it changes once a second at
   * most, so the HTTP layer serialises and tags it once a second (see serializedAnswerSender).
   */
  let lastInfo: BoardInfo | null = null;

  /** Each row beside its user's card, in order (users are never deleted: every row has one). */
  async function withCards<Row extends { readonly userId: number }>(rows: readonly Row[]) {
    const cards = await users.cardsOf(rows.map((row) => row.userId));
    return rows.flatMap((row) => {
      const card = cards.get(row.userId);
      return card ? [{ row, card }] : [];
    });
  }

  return {
    async getInfo() {
      const now = clock.now();
      const nodeCount = await sessions.countActiveSessions(now);
      const uptimeSeconds = Math.max(0, Math.floor((now.getTime() - startedAt.getTime()) / 1000));
      if (lastInfo?.nodeCount === nodeCount && lastInfo.uptimeSeconds === uptimeSeconds) return lastInfo;
      lastInfo = {
        boardName: config.general.boardName,
        version: BAUD_VERSION,
        nodeCount,
        closedSystem: config.general.closedSystem,
        ...(config.general.sysopName ? { sysopName: config.general.sysopName } : {}),
        uptimeSeconds,
      };
      return lastInfo;
    },

    async listNodes(limit = MAX_NODES) {
      const now = clock.now();
      const rows = await sessions.listActiveSessions(now, Math.min(Math.max(1, limit), MAX_NODES));
      return (await withCards(rows)).map(({ row, card }, index) => ({
        node: index + 1,
        authenticated: true,
        action: row.lastAction,
        isSecure: row.isSecure === 1,
        userId: row.userId,
        ...cardFields(card),
        timeOnMinutes: Math.max(0, Math.floor((now.getTime() - Date.parse(row.createdAt)) / 60_000)),
        connectedAt: row.createdAt,
        lastActivityAt: row.lastActivityAt,
      }));
    },

    async listLastCallers(limit = MAX_LAST_CALLERS) {
      const calls = await store.listLastCalls(Math.min(Math.max(1, limit), MAX_LAST_CALLERS));
      return (await withCards(calls)).map(({ row, card }) => ({
        userId: row.userId,
        ...cardFields(card),
        timestamp: row.calledAt,
      }));
    },

    async getStats() {
      const now = clock.now();
      const startOfDay = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())).toISOString();
      const [totalUsers, totalMessages, fileTotals, calls] = await Promise.all([
        users.countUsers(),
        messages.countMessages(),
        files.countFiles(),
        store.countCalls(startOfDay),
      ]);
      return {
        totalUsers,
        totalMessages,
        totalFiles: fileTotals.fileCount,
        totalFileBytes: fileTotals.totalBytes,
        totalCalls: calls.total,
        callsToday: calls.today,
      };
    },
  };
}
