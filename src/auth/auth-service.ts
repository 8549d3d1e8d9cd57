import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Db } from '../db/database.js';
import { UnauthorizedError } from '../errors.js';
import { usernameKey } from '../users/username.js';
import type { AccessTokens, IssuedAccessToken } from './access-tokens.js';
import type { LoginThrottle } from './login-throttle.js';
import { verifyAgainstDummy, verifyPassword } from './passwords.js';
import type { RefreshTokenStore } from './refresh-tokens.js';

export interface LoginInput {
  readonly username: string;
  readonly password: string;
  readonly clientAddress: string;
  /** The request came over TLS (recorded on the session for the node list). */
  readonly isSecure: boolean;
}

/** What login and refresh hand back: the token response body and the refresh token for the cookie. */
export interface SessionTokens {
  readonly token: IssuedAccessToken;
  readonly refreshToken: string;
}

// Pruning deletes by timestamp over whole tables; once every few minutes per node is plenty.
const PRUNE_INTERVAL_MS = 10 * 60 * 1000;

/**
 * Interactive sign-in: login (password → session + tokens), refresh (rotation) and logout.
 * Unknown usernames, wrong passwords and disabled accounts all get the same 401 after the
 * same argon2 work, so a response never tells which one it was.
 */
export function createAuthService(deps: {
  db: Db;
  clock: Clock;
  config: Config;
  accessTokens: AccessTokens;
  refreshTokens: RefreshTokenStore;
  loginThrottle: LoginThrottle;
}) {
  const { db, clock, accessTokens, refreshTokens, loginThrottle } = deps;
  const { maxSessionsPerUser } = deps.config.contentServers.web.restApi;
  let lastPrunedAt = Number.NEGATIVE_INFINITY;

  async function pruneNowAndThen(): Promise<void> {
    const now = clock.now().getTime();
    if (now - lastPrunedAt < PRUNE_INTERVAL_MS) return;
    lastPrunedAt = now;
    await refreshTokens.prune();
    await loginThrottle.prune();
  }

  return {
    async login(input: LoginInput): Promise<SessionTokens> {
      const reservation = await loginThrottle.reserve({
        usernameKey: usernameKey(input.username),
        clientAddress: input.clientAddress,
      });
      const user = await db
        .selectFrom('users')
        .select(['id', 'passwordHash', 'disabledAt'])
        .where('usernameKey', '=', reservation.attempt.usernameKey)
        .executeTakeFirst();
      const passwordMatches = user
        ? await verifyPassword(user.passwordHash, input.password)
        : await verifyAgainstDummy(input.password);
      if (!user || !passwordMatches || user.disabledAt !== null) {
        // The slots the attempt reserved stay taken: they are the failure's record.
        throw new UnauthorizedError('The username or password is incorrect.');
      }
      const nowIso = clock.now().toISOString();
      const session = await db.transaction().execute(async (trx) => {
        // First, because it locks the user's row: the user's logins then run one after the
        // other (SQLite runs one write transaction at a time anyway), so the session cap
        // below counts the sessions of logins made in parallel too.
        await trx
          .updateTable('users')
          .set((eb) => ({ loginCount: eb('loginCount', '+', 1), lastLoginAt: nowIso }))
          .where('id', '=', user.id)
          .execute();
        await trx.insertInto('calls').values({ userId: user.id, calledAt: nowIso }).execute();
        const issued = await refreshTokens.createFamily(trx, {
          userId: user.id,
          isSecure: input.isSecure,
          clientAddress: input.clientAddress,
        });
        await refreshTokens.endOldestSessions(trx, {
          userId: user.id,
          keptFamilyId: issued.familyId,
          maxSessions: maxSessionsPerUser,
        });
        await loginThrottle.recordSuccess(trx, reservation);
        return issued;
      });
      await pruneNowAndThen();
      const token = await accessTokens.issue({ userId: user.id, sessionId: session.familyId });
      return { token, refreshToken: session.refreshToken };
    },

    /** Rotates the refresh token; a missing, dead or reused one is a 401. */
    async refresh(refreshToken: string | undefined): Promise<SessionTokens> {
      if (refreshToken === undefined || refreshToken === '') {
        throw new UnauthorizedError('No refresh token was presented.');
      }
      const session = await refreshTokens.rotate(refreshToken);
      const token = await accessTokens.issue({ userId: session.userId, sessionId: session.familyId });
      return { token, refreshToken: session.refreshToken };
    },

    /** Ends the session of `refreshToken`; without one (or with a dead one) there is nothing to do. */
    async logout(refreshToken: string | undefined): Promise<void> {
      if (refreshToken) await refreshTokens.revokeFamilyOf(refreshToken);
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
