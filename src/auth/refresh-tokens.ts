import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Executor } from '../db/database.js';
import { UnauthorizedError } from '../errors.js';
import { hashSecretToken } from './api-keys.js';
import type { SessionStore, SessionVia } from './session-store.js';

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
  /** How the user came in (`GET /users/me/sessions` shows it); `api` unless the terminal says so. */
  readonly via?: SessionVia;
}

/** Login sessions seen through their refresh tokens: start, rotate, end. */
export interface RefreshTokens {
  /** Starts a login session inside the caller's transaction (login writes more rows with it). */
  createFamily(trx: Executor, input: NewFamilyInput): Promise<IssuedRefreshToken>;
  /**
   * Ends the user's oldest live sessions so that at most `maxSessions` stand, `keptFamilyId`
   * (the one being started) always among them; dead sessions it meets are marked revoked
   * too. Runs in the login's transaction after the user's row is locked, so logins made in
   * parallel see each other's sessions and cannot exceed the cap together.
   */
  endOldestSessions(
    trx: Executor,
    input: { readonly userId: number; readonly keptFamilyId: string; readonly maxSessions: number },
  ): Promise<void>;
  /**
   * Exchanges a live refresh token for its successor in the same family, or answers a
   * just-rotated one with the same successor (the grace window). Throws `UnauthorizedError`
   * for anything else; a rotated token outside the grace window also revokes its family.
   */
  rotate(rawToken: string): Promise<IssuedRefreshToken>;
  /** Ends the session a token belongs to (rotated or not). Unknown tokens are ignored: logout is idempotent. */
  revokeFamilyOf(rawToken: string): Promise<void>;
  /**
   * Deletes what can never be used again: expired tokens, and families that are revoked or
   * past their absolute lifetime (their tokens go with them).
   */
  prune(): Promise<void>;
}

const invalidRefreshToken = () =>
  new UnauthorizedError('auth.invalid-refresh-token', 'The refresh token is invalid, expired or revoked.');

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
export function createRefreshTokens(deps: {
  store: SessionStore;
  clock: Clock;
  config: Config;
  successorSecret: Uint8Array;
}): RefreshTokens {
  const { store, clock, config, successorSecret } = deps;
  const familyMaxAgeMs = config.contentServers.web.restApi.refreshFamilyMaxAgeDays * DAY_MS;
  const graceMs = config.contentServers.web.restApi.refreshGraceSeconds * 1000;

  const successorOf = (rawToken: string) => createHmac('sha256', successorSecret).update(rawToken).digest('base64url');

  async function insertToken(trx: Executor, familyId: string, now: Date, refreshToken: string) {
    await store.insertRefreshToken(trx, {
      familyId,
      tokenHash: hashSecretToken(refreshToken),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + REFRESH_TOKEN_TTL_SECONDS * 1000).toISOString(),
    });
  }

  return {
    async createFamily(trx, input) {
      const now = clock.now();
      const familyId = randomUUID();
      await store.insertSession(trx, {
        id: familyId,
        userId: input.userId,
        createdAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + familyMaxAgeMs).toISOString(),
        isSecure: input.isSecure,
        clientAddress: input.clientAddress,
        ...(input.via === undefined ? {} : { via: input.via }),
      });
      const refreshToken = randomBytes(32).toString('base64url');
      await insertToken(trx, familyId, now, refreshToken);
      return { familyId, userId: input.userId, refreshToken };
    },

    async endOldestSessions(trx, input) {
      await store.revokeAllButNewestSessions(trx, {
        userId: input.userId,
        keptSessionId: input.keptFamilyId,
        keep: input.maxSessions,
        now: clock.now(),
      });
    },

    async rotate(rawToken) {
      if (!REFRESH_TOKEN_PATTERN.test(rawToken)) throw invalidRefreshToken();
      const now = clock.now();
      const nowIso = now.toISOString();
      // Reuse detection must survive the 401 it causes, so the outcome is returned, not thrown, from the transaction.
      const outcome = await store.transaction(async (trx) => {
        const row = await store.findRefreshToken(trx, hashSecretToken(rawToken));
        if (!row || row.revokedAt !== null) return null;
        const familyIsDead =
          row.familyExpiresAt <= nowIso || row.disabledAt !== null || row.credentialsChangedAt > row.familyCreatedAt;
        if (familyIsDead) {
          await store.revokeSession(trx, row.familyId, nowIso);
          return null;
        }
        if (row.tokenExpiresAt <= nowIso) return null;
        const issued = { familyId: row.familyId, userId: row.userId, refreshToken: successorOf(rawToken) };
        // Conditional on `rotatedAt is null`: of concurrent refreshes with one token exactly one
        // rotates it. The others wait for it (PostgreSQL's row lock; SQLite runs one write
        // transaction at a time), then read when it was rotated and go on as a replay.
        if (row.rotatedAt === null && (await store.claimRotation(trx, row.tokenId, nowIso))) {
          await insertToken(trx, row.familyId, now, issued.refreshToken);
          return issued;
        }
        const rotatedAt = row.rotatedAt ?? (await store.rotationTimeOf(trx, row.tokenId));
        const isWithinGrace = rotatedAt !== null && now.getTime() - Date.parse(rotatedAt) < graceMs;
        const successorHash = hashSecretToken(issued.refreshToken);
        if (isWithinGrace && (await store.isUnrotatedTokenOf(trx, row.familyId, successorHash, nowIso))) return issued;
        await store.revokeSession(trx, row.familyId, nowIso);
        return null;
      });
      if (!outcome) throw invalidRefreshToken();
      return outcome;
    },

    async revokeFamilyOf(rawToken) {
      if (!REFRESH_TOKEN_PATTERN.test(rawToken)) return;
      await store.revokeSessionOfRefreshToken(hashSecretToken(rawToken), clock.now().toISOString());
    },

    prune: () => store.pruneDead(clock.now().toISOString()),
  };
}
