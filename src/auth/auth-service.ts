import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Executor } from '../db/database.js';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import type { EventLog } from '../events/event-log.js';
import type { SystemStore } from '../system/system-store.js';
import type { LoginCredentials, UserStore } from '../users/user-store.js';
import { usernameKey } from '../users/username.js';
import type { AccessTokens, IssuedAccessToken } from './access-tokens.js';
import type { LoginReservation, LoginThrottle } from './login-throttle.js';
import { hashPassword, needsRehash, verifyAgainstDummy, verifyPassword } from './passwords.js';
import { type RateLimitQuota, rateLimitHeaders } from './rate-limit-headers.js';
import type { RefreshTokens } from './refresh-tokens.js';
import type { SessionVia } from './session-store.js';
import type { SshKeyService } from './ssh-key-service.js';
import type { TwoFactorService } from './two-factor-service.js';

export interface LoginInput {
  readonly username: string;
  readonly password: string;
  readonly clientAddress: string;
  /** The request came over TLS (recorded on the session for the node list). */
  readonly isSecure: boolean;
  /** The one-time code (or a recovery code) of an account with two-factor login on. */
  readonly otp?: string | undefined;
  /** Where the caller logs in from (the session list shows it): the API unless said otherwise. */
  readonly via?: SessionVia;
}

/**
 * A terminal login proven with an SSH key: the SSH server verified the handshake's signature
 * with `keyData`, the public key blob of type `algorithm` (`rsa-sha2-256` counts as `ssh-rsa`).
 */
export interface SshKeyLoginInput {
  readonly username: string;
  readonly algorithm: string;
  readonly keyData: Buffer;
  readonly clientAddress: string;
  readonly isSecure: boolean;
  /** The one-time code (or a recovery code) of an account with two-factor login on. */
  readonly otp?: string | undefined;
}

/** What login and refresh hand back: the token response body and the refresh token for the cookie. */
export interface SessionTokens {
  readonly token: IssuedAccessToken;
  readonly refreshToken: string;
}

/** What a login hands back: the session's tokens, and what the caller's login attempts have left. */
export interface LoginResult extends SessionTokens {
  readonly loginQuota: RateLimitQuota;
}

// Pruning deletes by timestamp over whole tables; once every few minutes per node is plenty.
const PRUNE_INTERVAL_MS = 10 * 60 * 1000;

/**
 * Interactive sign-in: login (password → session + tokens), refresh (rotation) and logout.
 * Unknown usernames, wrong passwords and disabled accounts all get the same 401 after the
 * same argon2 work, so a response never tells which one it was (an imported ENiGMA½ hash costs
 * more until the first login replaces it with argon2id; see `verifyAgainstDummy`).
 */
export interface AuthService {
  /**
   * Throttled (see `LoginThrottle`): a 401 carries the RateLimit headers of what the caller
   * has left after the failure, a 429 those of the refusal; a success returns them as `loginQuota`.
   * With two-factor login on, a right password without `otp` is a 401 `auth.otp-required`
   * (`otpRequired: true`) that gives its throttle slots back; a wrong, replayed or used-up code
   * is a 401 `auth.invalid-otp` that keeps them, as a wrong password does.
   */
  login(input: LoginInput): Promise<LoginResult>;
  /**
   * A login proven by a signature the SSH server verified with a key the user registered
   * (`SshKeyService`): everything `login` does after the password — pending and locked
   * accounts refused, two-factor login asked (the same 401 `auth.otp-required` and
   * `auth.invalid-otp`), the call log, the `user.login` event, a session `via: 'terminal'`, the
   * session cap, the throttle settled. Throttled as `login` is; a key not (or no longer)
   * registered to the user, or an unknown user, is the 401 `auth.invalid-credentials` of a
   * wrong password, and counts as one.
   */
  loginWithSshKey(input: SshKeyLoginInput): Promise<LoginResult>;
  /** Rotates the refresh token; a missing, dead or reused one is a 401. */
  refresh(refreshToken: string | undefined): Promise<SessionTokens>;
  /** Ends the session of `refreshToken`; without one (or with a dead one) there is nothing to do. */
  logout(refreshToken: string | undefined): Promise<void>;
}

export function createAuthService(deps: {
  clock: Clock;
  config: Config;
  /** Login reads the account, counts the login and locks the user's row (see `login`). */
  users: UserStore;
  /** Every login is a call in the board's call log (last callers, call statistics). */
  calls: SystemStore;
  /** Every login is a `user.login` event: a last-callers entry. */
  events: EventLog;
  accessTokens: AccessTokens;
  refreshTokens: RefreshTokens;
  loginThrottle: LoginThrottle;
  /** The second factor a login asks for when the account has it on. */
  twoFactor: Pick<TwoFactorService, 'secondFactorOf' | 'spend'>;
  /** The keys an SSH key login may be proven with. */
  sshKeys: Pick<SshKeyService, 'registeredKey'>;
}): AuthService {
  const { clock, users, calls, events, accessTokens, refreshTokens, loginThrottle, twoFactor, sshKeys } = deps;
  const { maxSessionsPerUser } = deps.config.contentServers.web.restApi;
  let lastPrunedAt = Number.NEGATIVE_INFINITY;

  async function pruneNowAndThen(): Promise<void> {
    const now = clock.now().getTime();
    if (now - lastPrunedAt < PRUNE_INTERVAL_MS) return;
    lastPrunedAt = now;
    await refreshTokens.prune();
    await loginThrottle.prune();
  }

  /** The 401 of a login whose proof failed; the slots the attempt reserved stay taken: they are the failure's record. */
  const refusedBy = (reservation: LoginReservation) =>
    new UnauthorizedError('auth.invalid-credentials', 'The username or password is incorrect.').withHeaders(
      rateLimitHeaders(reservation.quotaIfFailed),
    );

  /**
   * Everything a login does once its proof (a password, a signature with a registered key)
   * was checked against `user`, the account as the proof found it: the account's state, the
   * second factor, and the session. `isStillProven` runs in the login's transaction, under the
   * user's row lock, and refuses the login when the proof no longer holds (a key removed
   * meanwhile); `upgradedHash` makes the hash that replaces the one a password was checked
   * against (ENiGMA½'s, or argon2id of older parameters).
   */
  async function completeLogin(
    reservation: LoginReservation,
    user: LoginCredentials,
    input: { clientAddress: string; isSecure: boolean; otp?: string | undefined; via?: SessionVia | undefined },
    proof: { upgradedHash?: () => Promise<string>; isStillProven?: (trx: Executor) => Promise<boolean> } = {},
  ): Promise<LoginResult> {
    // Said only to whoever proved who they are: to anyone else a pending name answers as any other.
    if (user.isPending === 1) {
      throw new ForbiddenError('auth.account-pending', 'This account awaits approval by the sysop.').withHeaders(
        rateLimitHeaders(reservation.quotaIfFailed),
      );
    }
    // Asked only of whoever proved who they are: to anyone else the account answers as any other.
    const secondFactor = await twoFactor.secondFactorOf(user.id);
    if (secondFactor && input.otp === undefined) {
      // Not a guess: its slots go back, so a login in two steps costs what one in one step does.
      const left = await loginThrottle.withdraw(reservation);
      throw new UnauthorizedError('auth.otp-required')
        .withHeaders(rateLimitHeaders(left))
        .withMembers({ otpRequired: true });
    }
    const refusedOtp = () =>
      new UnauthorizedError('auth.invalid-otp').withHeaders(rateLimitHeaders(reservation.quotaIfFailed));
    const otpProof = secondFactor && input.otp !== undefined ? secondFactor.proofOf(input.otp, clock.now()) : null;
    if (secondFactor && otpProof === null) throw refusedOtp();
    // Hashed before the transaction, which holds the user's row lock.
    const upgradedHash = await proof.upgradedHash?.();
    const nowIso = clock.now().toISOString();
    const card = (await users.cardsOf([user.id])).get(user.id);
    const { session, loginQuota } = await users.transaction(async (trx) => {
      // First, because it locks the user's row: the user's logins then run one after the
      // other (SQLite runs one write transaction at a time anyway), so the session cap
      // below counts the sessions of logins made in parallel too.
      // A lock or a password change that committed since the proof was checked wins: nothing
      // of this login is written, so no session outlives the change that should have ended it.
      // (Two first logins racing after an import, one upgrading the hash: the other is refused
      // and its retry logs in.)
      if (!(await users.recordLogin(trx, user.id, nowIso, user.passwordHash))) throw refusedBy(reservation);
      if (proof.isStillProven && !(await proof.isStillProven(trx))) throw refusedBy(reservation);
      // Spent under the row lock, with the login: a code presented twice at once lets in one
      // login, on any node, and a login that fails after this point leaves the code unspent.
      if (otpProof && !(await twoFactor.spend(trx, { id: user.id, username: card?.username ?? '' }, otpProof, nowIso)))
        throw refusedOtp();
      if (upgradedHash !== undefined) await users.replacePasswordHash(trx, user.id, user.passwordHash, upgradedHash);
      await calls.recordCall(trx, user.id, nowIso);
      const issued = await refreshTokens.createFamily(trx, {
        userId: user.id,
        isSecure: input.isSecure,
        clientAddress: input.clientAddress,
        ...(input.via === undefined ? {} : { via: input.via }),
      });
      await refreshTokens.endOldestSessions(trx, {
        userId: user.id,
        keptFamilyId: issued.familyId,
        maxSessions: maxSessionsPerUser,
      });
      const loginQuota = await loginThrottle.recordSuccess(trx, reservation);
      await events.append(trx, {
        type: 'user.login',
        areaTag: null,
        userId: user.id,
        data: {
          userId: user.id,
          username: card?.username ?? '',
          location: card?.location ?? '',
          affiliations: card?.affiliations ?? '',
          timestamp: nowIso,
        },
      });
      return { session: issued, loginQuota };
    });
    await pruneNowAndThen();
    const token = await accessTokens.issue({ userId: user.id, sessionId: session.familyId });
    return { token, refreshToken: session.refreshToken, loginQuota };
  }

  return {
    async login(input) {
      const reservation = await loginThrottle.reserve({
        usernameKey: usernameKey(input.username),
        clientAddress: input.clientAddress,
      });
      const user = await users.findLoginCredentials(reservation.attempt.usernameKey);
      const passwordMatches = user
        ? await verifyPassword(user.passwordHash, input.password)
        : await verifyAgainstDummy(input.password);
      if (!user || !passwordMatches || user.disabledAt !== null) throw refusedBy(reservation);
      const upgradedHash = needsRehash(user.passwordHash) ? () => hashPassword(input.password) : undefined;
      return completeLogin(reservation, user, input, upgradedHash ? { upgradedHash } : {});
    },

    async loginWithSshKey(input) {
      // No account's name holds a NUL (usernames refuse control characters), and PostgreSQL's text cannot.
      if (input.username.includes('\u0000')) throw new UnauthorizedError('auth.invalid-credentials');
      const reservation = await loginThrottle.reserve({
        usernameKey: usernameKey(input.username),
        clientAddress: input.clientAddress,
      });
      const user = await users.findLoginCredentials(reservation.attempt.usernameKey);
      const key = user ? await sshKeys.registeredKey(user.id, input.algorithm, input.keyData) : null;
      if (!user || !key || user.disabledAt !== null) throw refusedBy(reservation);
      const { algorithm, keyData } = input;
      return completeLogin(
        reservation,
        user,
        { ...input, via: 'terminal' },
        // Removed since the handshake (by its owner, or with a password change): no login.
        {
          isStillProven: async (trx) => (await sshKeys.registeredKey(user.id, algorithm, keyData, trx))?.id === key.id,
        },
      );
    },

    async refresh(refreshToken) {
      if (refreshToken === undefined || refreshToken === '') {
        throw new UnauthorizedError('auth.refresh-token-missing', 'No refresh token was presented.');
      }
      const session = await refreshTokens.rotate(refreshToken);
      const token = await accessTokens.issue({ userId: session.userId, sessionId: session.familyId });
      return { token, refreshToken: session.refreshToken };
    },

    async logout(refreshToken) {
      if (refreshToken) await refreshTokens.revokeFamilyOf(refreshToken);
    },
  };
}
