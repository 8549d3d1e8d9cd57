import type { AuditStore } from '../audit/audit-store.js';
import type { Caller } from '../caller.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Executor } from '../db/database.js';
import { BadRequestError, ForbiddenError, UnauthorizedError } from '../errors.js';
import {
  type AlsoInTransaction,
  findUserNamed,
  type NewUserInput,
  type UserService,
  type UserSummary,
} from '../users/user-service.js';
import type { UserStore } from '../users/user-store.js';
import { assertValidUsername } from '../users/username.js';
import type { WebhookStore } from '../webhooks/webhook-store.js';
import type { ApiKeyStore } from './api-key-store.js';
import type { LoginThrottle } from './login-throttle.js';
import type { PasswordConfirmation } from './password-confirmation.js';
import { hashPassword } from './passwords.js';
import { type RateLimitQuota, rateLimitHeaders } from './rate-limit-headers.js';
import type { SessionStore } from './session-store.js';
import type { SshKeyStore } from './ssh-key-store.js';

/**
 * An account as it is opened: its name and first password, plus `users.defaultGroups` and
 * `groups`; an application (`isPending`) joins no group until it is approved.
 */
export type NewAccountInput = Omit<NewUserInput, 'passwordHash'> & { readonly password: string };

/** What a password change ended beyond sessions and keys, for the operator to hear. */
export interface PasswordReset {
  readonly webhooksDeactivated: number;
}

/** What a password change ended, as the audit log tells it (the SSH keys are not the operator's concern). */
interface EndedWithPassword extends PasswordReset {
  readonly sshKeysRemoved: number;
}

/** `PUT /users/me/password`: the password the caller has now, and the one they want. */
export interface OwnPasswordChange {
  readonly currentPassword: string;
  readonly newPassword: string;
  /** Where the request came from: a wrong current password counts against it as a failed login does. */
  readonly clientAddress: string;
}

/** Why a webhook stopped when its owner's password was reset (shown with the webhook). */
export const PASSWORD_RESET_REASON = "its owner's password was reset";

/**
 * A user's credentials: where a new password is checked and hashed, and where what stood behind
 * the old one ends (login sessions, API keys, SSH keys). The account itself (name, groups, disabling) is
 * the users domain's; the CLI and the API both come here to open an account or set a password.
 */
export interface CredentialService {
  /**
   * Opens an account with its first password, writing `alsoInTransaction` in the same
   * transaction. Too short → BadRequestError; name clashes → ConflictError.
   */
  createAccount(input: NewAccountInput, alsoInTransaction?: AlsoInTransaction): Promise<UserSummary>;
  /**
   * Ends every login session of the user inside `trx`, the transaction of what ends them (a
   * lock): their refresh families are revoked for good, and the access tokens issued for them
   * die with them, since every request checks the token's session.
   */
  endSessions(trx: Executor, userId: number, at: string): Promise<void>;
  /**
   * Sets a new password. Every credential the old one stood behind ends with it: login
   * sessions (their refresh families die), API keys (revoked) and SSH keys (removed: a new
   * password ends every other credential, so one added by whoever stole the old password goes
   * too; the user adds theirs again); and the user's webhooks are
   * deactivated, since one made with a stolen credential would go on delivering (their owner
   * sees why and may switch them on again). One transaction, so nothing outlives a password
   * change that took effect. This is the operator's reset (`baud user passwd`): the audit log
   * records it as the console's.
   */
  setPassword(username: string, password: string): Promise<PasswordReset>;
  /**
   * The caller changes their own password. Only in a login session (an API key → 403
   * `account.login-session-required`). A new password that breaks the rules → 400 before
   * anything else. The current password is confirmed as a login checks one (see
   * PasswordConfirmation: a wrong one → 403 `auth.password-incorrect`, counted in the login
   * throttle; a full window → 429 before any check). Then everything the old password stood
   * behind ends as with `setPassword`, SSH keys too, except the session the change is made in. Two changes racing: the first wins; the second's current
   * password is no longer current (403). Returns what the caller's address has left.
   */
  changeOwnPassword(caller: Caller, change: OwnPasswordChange): Promise<RateLimitQuota>;
}

export function createCredentialService(deps: {
  users: UserService;
  stores: {
    readonly users: UserStore;
    readonly apiKeys: ApiKeyStore;
    readonly sessions: Pick<SessionStore, 'revokeUserSessions' | 'revokeOtherSessions'>;
    readonly webhooks: Pick<WebhookStore, 'deactivateOwnedBy'>;
    readonly sshKeys: Pick<SshKeyStore, 'deleteAllOfUser'>;
    /** Every password change is audited. */
    readonly audit: AuditStore;
  };
  /** A wrong current password is a failed login: it spends an attempt of the same windows. */
  loginThrottle: LoginThrottle;
  passwords: PasswordConfirmation;
  config: Config;
  clock: Clock;
}): CredentialService {
  const { users, stores, loginThrottle, passwords, config, clock } = deps;

  /** `pointer`: where the password is in the request (`/password`, `/newPassword`). */
  function assertValidPassword(password: string, pointer = '/password'): void {
    const minLength = config.users.passwordMinLength;
    if ([...password].length < minLength) {
      throw new BadRequestError('user.password-too-short', `password must be at least ${minLength} characters`, [
        { pointer, message: `must be at least ${minLength} characters` },
      ]);
    }
  }

  /**
   * The one place where what stood behind a password ends, inside `trx`, the transaction that
   * replaced it: the user's login sessions but `keptSessionId` (the one an own change is made
   * in), every API key and SSH key, and the user's webhooks (deactivated, with the reason shown).
   */
  async function endWhatThePasswordStoodBehind(
    trx: Executor,
    userId: number,
    at: string,
    keptSessionId: string | null,
  ): Promise<EndedWithPassword> {
    if (keptSessionId === null) await stores.sessions.revokeUserSessions(trx, userId, at);
    else await stores.sessions.revokeOtherSessions(trx, userId, keptSessionId, at);
    await stores.apiKeys.revokeUserKeys(trx, userId, at);
    const sshKeysRemoved = await stores.sshKeys.deleteAllOfUser(trx, userId);
    const webhooksDeactivated = await stores.webhooks.deactivateOwnedBy(trx, userId, at, PASSWORD_RESET_REASON);
    return { webhooksDeactivated, sshKeysRemoved };
  }

  /** What the audit log says a password change ended. */
  function endedDetail(sessions: string, ended: EndedWithPassword): string {
    const counted = (count: number, what: string, done: string) =>
      count === 0 ? '' : `; ${count} ${what}${count === 1 ? '' : 's'} ${done}`;
    return (
      `${sessions} ended, API keys revoked` +
      counted(ended.sshKeysRemoved, 'SSH key', 'removed') +
      counted(ended.webhooksDeactivated, 'webhook', 'deactivated')
    );
  }

  return {
    async createAccount({ password, ...account }, alsoInTransaction) {
      // Both checked before the password is hashed: a bad request costs no hash.
      assertValidUsername(account.username);
      assertValidPassword(password);
      return users.createUser({ ...account, passwordHash: await hashPassword(password) }, alsoInTransaction);
    },

    endSessions: (trx, userId, at) => stores.sessions.revokeUserSessions(trx, userId, at),

    async setPassword(username, password) {
      assertValidPassword(password);
      const row = await findUserNamed(stores.users, username);
      const passwordHash = await hashPassword(password);
      const now = clock.now().toISOString();
      return stores.users.transaction(async (trx) => {
        // The new hash moves `credentialsChangedAt` too: a session begun before it is dead even
        // if its row were missed.
        await stores.users.setPasswordHash(trx, row.id, passwordHash, now);
        const ended = await endWhatThePasswordStoodBehind(trx, row.id, now, null);
        await stores.audit.record(trx, {
          at: now,
          actor: null,
          action: 'user.password-changed',
          target: row.username,
          detail: `set at the console; ${endedDetail('login sessions', ended)}`,
        });
        return { webhooksDeactivated: ended.webhooksDeactivated };
      });
    },

    async changeOwnPassword(caller, change) {
      if (caller.kind === 'anonymous') throw new UnauthorizedError('auth.required');
      if (caller.session === null) {
        throw new ForbiddenError(
          'account.login-session-required',
          'Only a login session may change the password, not an API key: log in and send its access token.',
        );
      }
      const { user, session } = caller;
      // Before the throttle and any hash: a bad new password costs neither an attempt nor a hash.
      assertValidPassword(change.newPassword, '/newPassword');
      const confirmed = await passwords.confirm(user, change.currentPassword, change.clientAddress);
      const { reservation } = confirmed;
      const passwordHash = await hashPassword(change.newPassword);
      const at = clock.now().toISOString();
      return stores.users.transaction(async (trx) => {
        // Only over the hash the current password was checked against: of two changes racing,
        // the second finds another hash, and the password it gave is no longer the current one.
        // `credentialsChangedAt` stays: it would end the session the change is made in too.
        if (!(await stores.users.replacePasswordHash(trx, user.id, confirmed.passwordHash, passwordHash))) {
          // The attempt keeps the slots it reserved: they are the failure's record, as at login.
          throw new ForbiddenError('auth.password-incorrect').withHeaders(rateLimitHeaders(reservation.quotaIfFailed));
        }
        const ended = await endWhatThePasswordStoodBehind(trx, user.id, at, session.id);
        const quota = await loginThrottle.recordSuccess(trx, reservation);
        await stores.audit.record(trx, {
          at,
          actor: user.username,
          action: 'user.password-changed',
          target: user.username,
          detail: `changed by the user; ${endedDetail('other login sessions', ended)}`,
        });
        return quota;
      });
    },
  };
}
