import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Db } from '../db/database.js';
import type { Tables } from '../db/schema.js';
import { UnauthorizedError } from '../errors.js';
import { hashSecretToken } from './api-keys.js';
import { liveSessionsQuery } from './sessions.js';

/** Lifetime of one refresh token (and of the cookie that carries it). */
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60;
const REFRESH_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const DAY_MS = 24 * 60 * 60 * 1000;

/** What the client sees of a login session: the family it belongs to and the new raw token. */
export interface IssuedRefreshToken {
  readonly familyId: string;
  readonly userId: number;
  /** The raw token: goes into the cookie, never into the database. */
  readonly refreshToken: string;
}

export interface NewFamilyInput {
  readonly userId: number;
  readonly isSecure: boolean;
  readonly clientAddress: string;
}

const invalidRefreshToken = () => new UnauthorizedError('The refresh token is invalid, expired or revoked.');

/**
 * Refresh tokens and their families (login sessions). A family starts at login and ends at
 * logout, at its absolute lifetime (`restApi.refreshFamilyMaxAgeDays`), or when the user is
 * disabled or changes password (`users.credentialsChangedAt` newer than the family). Each
 * refresh rotates the token; presenting an already rotated token revokes the whole family
 * (reuse detection, RFC 9700 §4.14), because only a thief or a replay holds an old token —
 * except within `restApi.refreshGraceSeconds` of its rotation while its successor is still
 * unused: then it gets that same successor again (RFC 9700 §4.14.2), so a client whose tabs
 * or retries refresh in parallel is not logged out.
 *
 * Only hashes are stored, so a successor is made recomputable instead of stored: it is
 * HMAC-SHA256(`successorSecret`, predecessor). Without the secret (kept in the database, like
 * the JWT secret) an old token tells nothing about its successor.
 */
export function createRefreshTokenStore(deps: { db: Db; clock: Clock; config: Config; successorSecret: Uint8Array }) {
  const { db, clock, config, successorSecret } = deps;
  const familyMaxAgeMs = config.contentServers.web.restApi.refreshFamilyMaxAgeDays * DAY_MS;
  const graceMs = config.contentServers.web.restApi.refreshGraceSeconds * 1000;

  const successorOf = (rawToken: string) => createHmac('sha256', successorSecret).update(rawToken).digest('base64url');

  async function insertToken(trx: Transaction<Tables>, familyId: string, now: Date, refreshToken: string) {
    await trx
      .insertInto('refreshTokens')
      .values({
        familyId,
        tokenHash: hashSecretToken(refreshToken),
        createdAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + REFRESH_TOKEN_TTL_SECONDS * 1000).toISOString(),
        rotatedAt: null,
      })
      .execute();
  }

  /** Marks a token rotated unless someone else already has; true when this call did. */
  async function claimRotation(trx: Transaction<Tables>, tokenId: number, nowIso: string): Promise<boolean> {
    const claimed = await trx
      .updateTable('refreshTokens')
      .set({ rotatedAt: nowIso })
      .where('id', '=', tokenId)
      .where('rotatedAt', 'is', null)
      .executeTakeFirst();
    return Number(claimed.numUpdatedRows) === 1;
  }

  async function rotationTimeOf(trx: Transaction<Tables>, tokenId: number): Promise<string | null> {
    const row = await trx.selectFrom('refreshTokens').select('rotatedAt').where('id', '=', tokenId).executeTakeFirst();
    return row?.rotatedAt ?? null;
  }

  /** Whether `rawToken` is a live token of `familyId` that has not been rotated yet. */
  async function isUnrotatedTokenOf(
    trx: Transaction<Tables>,
    familyId: string,
    rawToken: string,
    nowIso: string,
  ): Promise<boolean> {
    const row = await trx
      .selectFrom('refreshTokens')
      .select('id')
      .where('tokenHash', '=', hashSecretToken(rawToken))
      .where('familyId', '=', familyId)
      .where('rotatedAt', 'is', null)
      .where('expiresAt', '>', nowIso)
      .executeTakeFirst();
    return row !== undefined;
  }

  async function revokeFamily(trx: Transaction<Tables> | Db, familyId: string, now: Date): Promise<void> {
    await trx
      .updateTable('refreshFamilies')
      .set({ revokedAt: now.toISOString() })
      .where('id', '=', familyId)
      .where('revokedAt', 'is', null)
      .execute();
  }

  return {
    /** Starts a login session inside the caller's transaction (login writes more rows with it). */
    async createFamily(trx: Transaction<Tables>, input: NewFamilyInput): Promise<IssuedRefreshToken> {
      const now = clock.now();
      const familyId = randomUUID();
      await trx
        .insertInto('refreshFamilies')
        .values({
          id: familyId,
          userId: input.userId,
          createdAt: now.toISOString(),
          expiresAt: new Date(now.getTime() + familyMaxAgeMs).toISOString(),
          lastActivityAt: now.toISOString(),
          lastAction: 'Logging in',
          isSecure: input.isSecure ? 1 : 0,
          clientAddress: input.clientAddress,
          revokedAt: null,
        })
        .execute();
      const refreshToken = randomBytes(32).toString('base64url');
      await insertToken(trx, familyId, now, refreshToken);
      return { familyId, userId: input.userId, refreshToken };
    },

    /**
     * Ends the user's oldest live sessions so that at most `maxSessions` stand, `keptFamilyId`
     * (the one being started) always among them; dead sessions it meets are marked revoked
     * too. Runs in the login's transaction after the user's row is locked, so logins made in
     * parallel see each other's sessions and cannot exceed the cap together.
     */
    async endOldestSessions(
      trx: Transaction<Tables>,
      input: { readonly userId: number; readonly keptFamilyId: string; readonly maxSessions: number },
    ): Promise<void> {
      const now = clock.now();
      const newestOthers = liveSessionsQuery(trx, now)
        .select('refreshFamilies.id')
        .where('refreshFamilies.userId', '=', input.userId)
        .where('refreshFamilies.id', '!=', input.keptFamilyId)
        .orderBy('refreshFamilies.createdAt', 'desc')
        .orderBy('refreshFamilies.id', 'desc')
        .limit(input.maxSessions - 1);
      await trx
        .updateTable('refreshFamilies')
        .set({ revokedAt: now.toISOString() })
        .where('userId', '=', input.userId)
        .where('revokedAt', 'is', null)
        .where('id', '!=', input.keptFamilyId)
        .where('id', 'not in', newestOthers)
        .execute();
    },

    /**
     * Exchanges a live refresh token for its successor in the same family, or answers a
     * just-rotated one with the same successor (the grace window). Throws `UnauthorizedError`
     * for anything else; a rotated token outside the grace window also revokes its family.
     */
    async rotate(rawToken: string): Promise<IssuedRefreshToken> {
      if (!REFRESH_TOKEN_PATTERN.test(rawToken)) throw invalidRefreshToken();
      const now = clock.now();
      const nowIso = now.toISOString();
      // Reuse detection must survive the 401 it causes, so the outcome is returned, not thrown, from the transaction.
      const outcome = await db.transaction().execute(async (trx) => {
        const row = await trx
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
          .where('t.tokenHash', '=', hashSecretToken(rawToken))
          .executeTakeFirst();
        if (!row || row.revokedAt !== null) return null;
        const familyIsDead =
          row.familyExpiresAt <= nowIso || row.disabledAt !== null || row.credentialsChangedAt > row.familyCreatedAt;
        if (familyIsDead) {
          await revokeFamily(trx, row.familyId, now);
          return null;
        }
        if (row.tokenExpiresAt <= nowIso) return null;
        const issued = { familyId: row.familyId, userId: row.userId, refreshToken: successorOf(rawToken) };
        // Conditional on `rotatedAt is null`: of concurrent refreshes with one token exactly one
        // rotates it. The others wait for it (PostgreSQL's row lock; SQLite runs one write
        // transaction at a time), then read when it was rotated and go on as a replay.
        if (row.rotatedAt === null && (await claimRotation(trx, row.tokenId, nowIso))) {
          await insertToken(trx, row.familyId, now, issued.refreshToken);
          return issued;
        }
        const rotatedAt = row.rotatedAt ?? (await rotationTimeOf(trx, row.tokenId));
        const isWithinGrace = rotatedAt !== null && now.getTime() - Date.parse(rotatedAt) < graceMs;
        if (isWithinGrace && (await isUnrotatedTokenOf(trx, row.familyId, issued.refreshToken, nowIso))) return issued;
        await revokeFamily(trx, row.familyId, now);
        return null;
      });
      if (!outcome) throw invalidRefreshToken();
      return outcome;
    },

    /** Ends the session a token belongs to (rotated or not). Unknown tokens are ignored: logout is idempotent. */
    async revokeFamilyOf(rawToken: string): Promise<void> {
      if (!REFRESH_TOKEN_PATTERN.test(rawToken)) return;
      const row = await db
        .selectFrom('refreshTokens')
        .select('familyId')
        .where('tokenHash', '=', hashSecretToken(rawToken))
        .executeTakeFirst();
      if (row) await revokeFamily(db, row.familyId, clock.now());
    },

    /**
     * Deletes what can never be used again: expired tokens, and families that are revoked or
     * past their absolute lifetime (their tokens go with them).
     */
    async prune(): Promise<void> {
      const nowIso = clock.now().toISOString();
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('refreshTokens').where('expiresAt', '<=', nowIso).execute();
        const deadFamilies = trx
          .selectFrom('refreshFamilies')
          .select('id')
          .where((eb) => eb.or([eb('expiresAt', '<=', nowIso), eb('revokedAt', 'is not', null)]));
        await trx.deleteFrom('refreshTokens').where('familyId', 'in', deadFamilies).execute();
        await trx
          .deleteFrom('refreshFamilies')
          .where((eb) => eb.or([eb('expiresAt', '<=', nowIso), eb('revokedAt', 'is not', null)]))
          .execute();
      });
    },
  };
}

export type RefreshTokenStore = ReturnType<typeof createRefreshTokenStore>;
