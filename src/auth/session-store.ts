import type { Transaction } from 'kysely';
import type { LiveSession } from '../caller.js';
import type { Db, Executor } from '../db/database.js';
import { prepareQuery } from '../db/prepared-query.js';
import type { Tables } from '../db/schema.js';
import type { IdentityChanges } from '../identity-changes.js';

/** A login session counts as an active node while it is alive and was used this recently. */
export const ACTIVE_SESSION_WINDOW_MS = 15 * 60 * 1000;

/**
 * How long one node reuses its count of active sessions (`nodeCount` of /system/info, asked on
 * every visit to a board's front page). This node's own session writes drop the count at once;
 * a login or logout on another node shows here within this bound.
 */
export const ACTIVE_SESSION_COUNT_MAX_AGE_MS = 1000;

/** The oldest last activity a session may have and still count as active at `now`. */
function activeSince(now: Date): string {
  return new Date(now.getTime() - ACTIVE_SESSION_WINDOW_MS).toISOString();
}

/** The ways into a login session: a login through the API, or one at the terminal (SSH, telnet). */
export const SESSION_VIAS = ['api', 'terminal'] as const;
export type SessionVia = (typeof SESSION_VIAS)[number];

/** A new login session (refresh family). */
export interface NewSession {
  readonly id: string;
  readonly userId: number;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly isSecure: boolean;
  readonly clientAddress: string;
  /** How the user came in; `api` unless the terminal begins the session. */
  readonly via?: SessionVia;
}

/** A live login session as its own user sees it listed. */
export interface UserSessionRow {
  readonly id: string;
  readonly createdAt: string;
  readonly lastActivityAt: string;
  readonly via: SessionVia;
}

export interface NewRefreshToken {
  readonly familyId: string;
  readonly tokenHash: string;
  readonly createdAt: string;
  readonly expiresAt: string;
}

/** A refresh token with its family and the family's user, as a rotation decides on it. */
export interface PresentedRefreshToken {
  readonly tokenId: number;
  readonly tokenExpiresAt: string;
  readonly rotatedAt: string | null;
  readonly familyId: string;
  readonly userId: number;
  readonly familyCreatedAt: string;
  readonly familyExpiresAt: string;
  readonly revokedAt: string | null;
  readonly disabledAt: string | null;
  readonly credentialsChangedAt: string;
}

/** An active session with what the node list shows of its user. */
export interface ActiveSessionRow {
  readonly sessionId: string;
  readonly createdAt: string;
  readonly lastActivityAt: string;
  readonly lastAction: string;
  readonly isSecure: number;
  readonly userId: number;
}

/** What a request did last in its session (the node list). */
export interface SessionActivityUpdate {
  readonly at: string;
  readonly action: string;
  readonly isSecure: boolean;
}

export interface SessionStore {
  /** Runs `work` in one transaction; methods that take an executor join it. */
  transaction<T>(work: (trx: Transaction<Tables>) => Promise<T>): Promise<T>;
  /** The session `sessionId` of `userId`, if it is alive at `now`. */
  findLiveSession(sessionId: string, userId: number, now: Date): Promise<LiveSession | undefined>;
  /** Live sessions used within `ACTIVE_SESSION_WINDOW_MS` of `now`: the board's `nodeCount`. */
  countActiveSessions(now: Date): Promise<number>;
  /** The `limit` most recently active sessions, in the order they logged in. */
  listActiveSessions(now: Date, limit: number): Promise<ActiveSessionRow[]>;
  /**
   * Records activity unless the session's `lastActivityAt` is no longer `session.lastActivityAt`:
   * of two requests racing here, only one writes. True when this call wrote.
   */
  recordActivity(session: LiveSession, update: SessionActivityUpdate): Promise<boolean>;
  insertSession(trx: Executor, session: NewSession): Promise<void>;
  insertRefreshToken(trx: Executor, token: NewRefreshToken): Promise<void>;
  /**
   * Revokes the user's sessions other than `keptSessionId` and the `keep - 1` newest live ones
   * (dead sessions it meets are marked revoked too).
   */
  revokeAllButNewestSessions(
    trx: Executor,
    input: { readonly userId: number; readonly keptSessionId: string; readonly keep: number; readonly now: Date },
  ): Promise<void>;
  findRefreshToken(trx: Executor, tokenHash: string): Promise<PresentedRefreshToken | undefined>;
  /** Marks a token rotated unless someone else already has; true when this call did. */
  claimRotation(trx: Executor, tokenId: number, rotatedAt: string): Promise<boolean>;
  rotationTimeOf(trx: Executor, tokenId: number): Promise<string | null>;
  /** Whether the token with `tokenHash` belongs to `familyId`, is unexpired at `now` and not rotated yet. */
  isUnrotatedTokenOf(trx: Executor, familyId: string, tokenHash: string, now: string): Promise<boolean>;
  /** Revokes the session a refresh token (rotated or not) belongs to; an unknown token changes nothing. */
  revokeSessionOfRefreshToken(tokenHash: string, revokedAt: string): Promise<void>;
  /** Revokes a session unless it already is (its first revocation time stays). */
  revokeSession(trx: Executor, sessionId: string, revokedAt: string): Promise<void>;
  /** Revokes every session of the user that is not revoked yet. */
  revokeUserSessions(trx: Executor, userId: number, revokedAt: string): Promise<void>;
  /** Revokes every session of the user but `keptSessionId` (a password change keeps the one it was made in). */
  revokeOtherSessions(trx: Executor, userId: number, keptSessionId: string, revokedAt: string): Promise<void>;
  /**
   * The user's live sessions at `now`, oldest first. At most `restApi.maxSessionsPerUser` are
   * alive (a login ends the oldest beyond), so this is one short list.
   */
  listUserSessions(userId: number, now: Date): Promise<UserSessionRow[]>;
  /**
   * Revokes the session `sessionId` if it is one of `userId`'s and alive at `now`; true when it
   * was (and is now revoked). Anyone else's session, or a dead one, is left as it is: false.
   */
  revokeLiveUserSession(userId: number, sessionId: string, now: Date): Promise<boolean>;
  /**
   * Deletes what can never be used again at `now`: expired tokens, and sessions that are
   * revoked or past their absolute lifetime (their tokens go with them).
   */
  pruneDead(now: string): Promise<void>;
}

/**
 * Every query of login sessions (`refresh_families`) and their refresh tokens. A session is
 * alive while it is not revoked, not past its absolute lifetime, and its user is enabled and
 * unchanged since the login (a password change or disabling ends every session): those last
 * two are the users table's columns, joined here because this is the one definition of "alive".
 */
export function createSessionStore(db: Db, identityChanges: IdentityChanges): SessionStore {
  /** `now` is an ISO timestamp (or a prepared query's parameter standing for one). */
  function liveSessionsQuery(executor: Executor, now: string) {
    return executor
      .selectFrom('refreshFamilies')
      .innerJoin('users', 'users.id', 'refreshFamilies.userId')
      .where('refreshFamilies.revokedAt', 'is', null)
      .where('refreshFamilies.expiresAt', '>', now)
      .where('users.disabledAt', 'is', null)
      .whereRef('users.credentialsChangedAt', '<=', 'refreshFamilies.createdAt');
  }

  function activeSessionsQuery(now: string, activeSince: string) {
    return liveSessionsQuery(db, now).where('refreshFamilies.lastActivityAt', '>', activeSince);
  }

  /** The request path asks these on every call: built once (see `prepareQuery`). */
  const liveSession = prepareQuery(db, (p: { sessionId: string; userId: number; now: string }) =>
    liveSessionsQuery(db, p.now)
      .select(['refreshFamilies.id', 'refreshFamilies.lastActivityAt'])
      .where('refreshFamilies.id', '=', p.sessionId)
      .where('refreshFamilies.userId', '=', p.userId),
  );
  const activeSessionCount = prepareQuery(db, (p: { now: string; activeSince: string }) =>
    activeSessionsQuery(p.now, p.activeSince).select((eb) => eb.fn.countAll<number>().as('nodeCount')),
  );

  const activityUpdate = prepareQuery(
    db,
    (p: { sessionId: string; seenAt: string; at: string; action: string; isSecure: number }) =>
      db
        .updateTable('refreshFamilies')
        .set({ lastActivityAt: p.at, lastAction: p.action, isSecure: p.isSecure })
        .where('id', '=', p.sessionId)
        .where('lastActivityAt', '=', p.seenAt),
  );

  /** The last count of active sessions, when and in which epoch it was asked for (see ACTIVE_SESSION_COUNT_MAX_AGE_MS). */
  let counted: { readonly atMs: number; readonly epoch: number; readonly count: Promise<number> } | null = null;
  /** Every write that can change which sessions are alive or active calls this. */
  function sessionsChanged(): void {
    identityChanges.changed();
  }

  async function revokeSession(trx: Executor, sessionId: string, revokedAt: string): Promise<void> {
    await trx
      .updateTable('refreshFamilies')
      .set({ revokedAt })
      .where('id', '=', sessionId)
      .where('revokedAt', 'is', null)
      .execute();
    sessionsChanged();
  }

  return {
    // Refresh rotations run here: whatever they changed is reported once it is committed.
    async transaction(work) {
      try {
        return await db.transaction().execute(work);
      } finally {
        sessionsChanged();
      }
    },

    findLiveSession: (sessionId, userId, now) => liveSession.first({ sessionId, userId, now: now.toISOString() }),

    countActiveSessions(now) {
      const atMs = now.getTime();
      const { epoch } = identityChanges;
      if (
        counted &&
        counted.epoch === epoch &&
        atMs >= counted.atMs &&
        atMs - counted.atMs < ACTIVE_SESSION_COUNT_MAX_AGE_MS
      ) {
        return counted.count;
      }
      const count = activeSessionCount
        .first({ now: now.toISOString(), activeSince: activeSince(now) })
        .then((row) => Number(row?.nodeCount ?? 0));
      // Requests arriving while it is counted share the one query; a failed count is not kept.
      const entry = { atMs, epoch, count };
      counted = entry;
      count.catch(() => {
        if (counted === entry) counted = null;
      });
      return count;
    },

    listActiveSessions(now, limit) {
      const mostRecentlyActive = activeSessionsQuery(now.toISOString(), activeSince(now))
        .select([
          'refreshFamilies.id as sessionId',
          'refreshFamilies.createdAt',
          'refreshFamilies.lastActivityAt',
          'refreshFamilies.lastAction',
          'refreshFamilies.isSecure',
          'refreshFamilies.userId',
        ])
        .orderBy('refreshFamilies.lastActivityAt', 'desc')
        .orderBy('refreshFamilies.id', 'desc')
        .limit(limit);
      return db
        .selectFrom(mostRecentlyActive.as('nodes'))
        .selectAll()
        .orderBy('createdAt')
        .orderBy('sessionId')
        .execute();
    },

    async recordActivity(session, update) {
      const { at, action } = update;
      const isSecure = update.isSecure ? 1 : 0;
      const updated = await activityUpdate.run({
        sessionId: session.id,
        seenAt: session.lastActivityAt,
        at,
        action,
        isSecure,
      });
      sessionsChanged();
      return updated === 1;
    },

    // Logins run this and the next in the user store's transaction, which reports the change once committed.
    async insertSession(trx, session) {
      await trx
        .insertInto('refreshFamilies')
        .values({
          id: session.id,
          userId: session.userId,
          createdAt: session.createdAt,
          expiresAt: session.expiresAt,
          lastActivityAt: session.createdAt,
          lastAction: 'Logging in',
          isSecure: session.isSecure ? 1 : 0,
          clientAddress: session.clientAddress,
          revokedAt: null,
          via: session.via ?? 'api',
        })
        .execute();
    },

    async insertRefreshToken(trx, token) {
      await trx
        .insertInto('refreshTokens')
        .values({ ...token, rotatedAt: null })
        .execute();
    },

    async revokeAllButNewestSessions(trx, input) {
      const newestOthers = liveSessionsQuery(trx, input.now.toISOString())
        .select('refreshFamilies.id')
        .where('refreshFamilies.userId', '=', input.userId)
        .where('refreshFamilies.id', '!=', input.keptSessionId)
        .orderBy('refreshFamilies.createdAt', 'desc')
        .orderBy('refreshFamilies.id', 'desc')
        .limit(input.keep - 1);
      await trx
        .updateTable('refreshFamilies')
        .set({ revokedAt: input.now.toISOString() })
        .where('userId', '=', input.userId)
        .where('revokedAt', 'is', null)
        .where('id', '!=', input.keptSessionId)
        .where('id', 'not in', newestOthers)
        .execute();
    },

    findRefreshToken: (trx, tokenHash) =>
      trx
        .selectFrom('refreshTokens as t')
        .innerJoin('refreshFamilies as f', 'f.id', 't.familyId')
        .innerJoin('users as u', 'u.id', 'f.userId')
        .select([
          't.id as tokenId',
          't.expiresAt as tokenExpiresAt',
          't.rotatedAt',
          'f.id as familyId',
          'f.userId',
          'f.createdAt as familyCreatedAt',
          'f.expiresAt as familyExpiresAt',
          'f.revokedAt',
          'u.disabledAt',
          'u.credentialsChangedAt',
        ])
        .where('t.tokenHash', '=', tokenHash)
        .executeTakeFirst(),

    async claimRotation(trx, tokenId, rotatedAt) {
      const claimed = await trx
        .updateTable('refreshTokens')
        .set({ rotatedAt })
        .where('id', '=', tokenId)
        .where('rotatedAt', 'is', null)
        .executeTakeFirst();
      return Number(claimed.numUpdatedRows) === 1;
    },

    async rotationTimeOf(trx, tokenId) {
      const row = await trx
        .selectFrom('refreshTokens')
        .select('rotatedAt')
        .where('id', '=', tokenId)
        .executeTakeFirst();
      return row?.rotatedAt ?? null;
    },

    async isUnrotatedTokenOf(trx, familyId, tokenHash, now) {
      const row = await trx
        .selectFrom('refreshTokens')
        .select('id')
        .where('tokenHash', '=', tokenHash)
        .where('familyId', '=', familyId)
        .where('rotatedAt', 'is', null)
        .where('expiresAt', '>', now)
        .executeTakeFirst();
      return row !== undefined;
    },

    async revokeSessionOfRefreshToken(tokenHash, revokedAt) {
      const row = await db
        .selectFrom('refreshTokens')
        .select('familyId')
        .where('tokenHash', '=', tokenHash)
        .executeTakeFirst();
      if (row) await revokeSession(db, row.familyId, revokedAt);
    },

    revokeSession,

    async revokeUserSessions(trx, userId, revokedAt) {
      await trx
        .updateTable('refreshFamilies')
        .set({ revokedAt })
        .where('userId', '=', userId)
        .where('revokedAt', 'is', null)
        .execute();
      sessionsChanged();
    },

    async revokeOtherSessions(trx, userId, keptSessionId, revokedAt) {
      await trx
        .updateTable('refreshFamilies')
        .set({ revokedAt })
        .where('userId', '=', userId)
        .where('id', '!=', keptSessionId)
        .where('revokedAt', 'is', null)
        .execute();
      sessionsChanged();
    },

    listUserSessions: (userId, now) =>
      liveSessionsQuery(db, now.toISOString())
        .select([
          'refreshFamilies.id',
          'refreshFamilies.createdAt',
          'refreshFamilies.lastActivityAt',
          'refreshFamilies.via',
        ])
        .where('refreshFamilies.userId', '=', userId)
        .orderBy('refreshFamilies.createdAt')
        .orderBy('refreshFamilies.id')
        .execute(),

    async revokeLiveUserSession(userId, sessionId, now) {
      const nowIso = now.toISOString();
      // One statement, so a session that dies between a check and the update is never counted as ended here.
      const live = liveSessionsQuery(db, nowIso)
        .select('refreshFamilies.id')
        .where('refreshFamilies.id', '=', sessionId)
        .where('refreshFamilies.userId', '=', userId);
      const revoked = await db
        .updateTable('refreshFamilies')
        .set({ revokedAt: nowIso })
        .where('id', 'in', live)
        // Checked again on the row itself: of two racing ends, PostgreSQL lets the second see the first.
        .where('revokedAt', 'is', null)
        .executeTakeFirst();
      const wasEnded = Number(revoked.numUpdatedRows) === 1;
      if (wasEnded) sessionsChanged();
      return wasEnded;
    },

    async pruneDead(now) {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('refreshTokens').where('expiresAt', '<=', now).execute();
        const deadFamilies = trx
          .selectFrom('refreshFamilies')
          .select('id')
          .where((eb) => eb.or([eb('expiresAt', '<=', now), eb('revokedAt', 'is not', null)]));
        await trx.deleteFrom('refreshTokens').where('familyId', 'in', deadFamilies).execute();
        await trx
          .deleteFrom('refreshFamilies')
          .where((eb) => eb.or([eb('expiresAt', '<=', now), eb('revokedAt', 'is not', null)]))
          .execute();
      });
    },
  };
}
