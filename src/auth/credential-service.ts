import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Executor } from '../db/database.js';
import { BadRequestError } from '../errors.js';
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
import { hashPassword } from './passwords.js';
import type { SessionStore } from './session-store.js';

/**
 * An account as it is opened: its name and first password, plus `users.defaultGroups` and
 * `groups`; an application (`isPending`) joins no group until it is approved.
 */
export type NewAccountInput = Omit<NewUserInput, 'passwordHash'> & { readonly password: string };

/** What a password change ended beyond sessions and keys, for the operator to hear. */
export interface PasswordReset {
  readonly webhooksDeactivated: number;
}

/** Why a webhook stopped when its owner's password was reset (shown with the webhook). */
export const PASSWORD_RESET_REASON = "its owner's password was reset";

/**
 * A user's credentials: where a new password is checked and hashed, and where what stood behind
 * the old one ends (login sessions, API keys). The account itself (name, groups, disabling) is
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
   * sessions (their refresh families die) and API keys (revoked); and the user's webhooks are
   * deactivated, since one made with a stolen credential would go on delivering (their owner
   * sees why and may switch them on again). One transaction, so nothing outlives a password
   * change that took effect.
   */
  setPassword(username: string, password: string): Promise<PasswordReset>;
}

export function createCredentialService(deps: {
  users: UserService;
  stores: {
    readonly users: UserStore;
    readonly apiKeys: ApiKeyStore;
    readonly sessions: Pick<SessionStore, 'revokeUserSessions'>;
    readonly webhooks: Pick<WebhookStore, 'deactivateOwnedBy'>;
  };
  config: Config;
  clock: Clock;
}): CredentialService {
  const { users, stores, config, clock } = deps;

  function assertValidPassword(password: string): void {
    const minLength = config.users.passwordMinLength;
    if ([...password].length < minLength) {
      throw new BadRequestError('user.password-too-short', `password must be at least ${minLength} characters`, [
        { pointer: '/password', message: `must be at least ${minLength} characters` },
      ]);
    }
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
        // The new hash moves `credentialsChangedAt`: every login session begun before it ends.
        await stores.users.setPasswordHash(trx, row.id, passwordHash, now);
        await stores.apiKeys.revokeUserKeys(trx, row.id, now);
        return {
          webhooksDeactivated: await stores.webhooks.deactivateOwnedBy(trx, row.id, now, PASSWORD_RESET_REASON),
        };
      });
    },
  };
}
