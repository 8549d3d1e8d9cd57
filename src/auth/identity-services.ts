import type { AuditStore } from '../audit/audit-store.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { EventLog } from '../events/event-log.js';
import type { IdentityChanges } from '../identity-changes.js';
import type { SystemStore } from '../system/system-store.js';
import type { UserService } from '../users/user-service.js';
import type { UserStore } from '../users/user-store.js';
import type { WebhookStore } from '../webhooks/webhook-store.js';
import type { AccessTokens } from './access-tokens.js';
import { type ApiKeyService, createApiKeyService } from './api-key-service.js';
import type { ApiKeyStore } from './api-key-store.js';
import { type AuthService, createAuthService } from './auth-service.js';
import { type CallerService, createCallerService } from './caller-service.js';
import { type CredentialService, createCredentialService } from './credential-service.js';
import type { LoginAttemptStore } from './login-attempt-store.js';
import { createLoginSessionService, type LoginSessionService } from './login-session-service.js';
import { createLoginThrottle } from './login-throttle.js';
import { createPasswordConfirmation } from './password-confirmation.js';
import { createRefreshTokens } from './refresh-tokens.js';
import { createRegistrationService, type RegistrationService } from './registration-service.js';
import { createSessionActivityService, type SessionActivityService } from './session-activity-service.js';
import type { SessionStore } from './session-store.js';
import { createSshKeyService, type SshKeyService } from './ssh-key-service.js';
import type { SshKeyStore } from './ssh-key-store.js';
import type { TwoFactorKeys } from './two-factor-keys.js';
import { createTwoFactorService, type TwoFactorService } from './two-factor-service.js';
import type { TwoFactorStore } from './two-factor-store.js';

/**
 * The identity and access services of a board (callers, login sessions, passwords, API keys),
 * built together because they share the token machinery and the credential stores. Spread into
 * the board by `assembleBoard`.
 */
/** The services that say who a caller is and what their credentials are. */
export interface IdentityServices {
  readonly accessTokens: AccessTokens;
  /** Logins, refreshes and logouts. */
  readonly auth: AuthService;
  readonly apiKeys: ApiKeyService;
  /** Who a request's credential stands for. */
  readonly callers: CallerService;
  /** Passwords, and what ends with them. */
  readonly credentials: CredentialService;
  /** A user's own login sessions: listing and ending them. */
  readonly loginSessions: LoginSessionService;
  /** People applying for an account. */
  readonly registration: RegistrationService;
  /** When the callers of each session were last seen. */
  readonly sessionActivity: SessionActivityService;
  /** The SSH public keys users log in with at the terminal. */
  readonly sshKeys: SshKeyService;
  /** Two-factor login (TOTP): enrolment, turning it off, what a login asks. */
  readonly twoFactor: TwoFactorService;
}

export function createIdentityServices(deps: {
  config: Config;
  clock: Clock;
  stores: {
    readonly users: UserStore;
    readonly apiKeys: ApiKeyStore;
    readonly sessions: SessionStore;
    readonly loginAttempts: LoginAttemptStore;
    readonly system: SystemStore;
    /** A password change deactivates the user's webhooks (see `createCredentialService`). */
    readonly webhooks: Pick<WebhookStore, 'deactivateOwnedBy'>;
    /** Each registration, password change, API key or SSH key given or taken and change to two-factor login is audited. */
    readonly audit: AuditStore;
    readonly twoFactor: TwoFactorStore;
    /** A password change removes the user's SSH keys (see `createCredentialService`). */
    readonly sshKeys: SshKeyStore;
  };
  users: UserService;
  accessTokens: AccessTokens;
  /** Derives each refresh token's successor (see `createRefreshTokens`). */
  refreshSuccessorSecret: Uint8Array;
  /** Seal the TOTP secrets and hash the recovery codes (see `createTwoFactorKeys`). */
  twoFactorKeys: TwoFactorKeys;
  /** What the stores report when a credential may stand for something else now. */
  identityChanges: IdentityChanges;
  /** Each login is recorded as a `user.login` event, each registration as `user.registered`. */
  events: EventLog;
}): IdentityServices {
  const { config, clock, stores, users, accessTokens } = deps;
  const refreshTokens = createRefreshTokens({
    store: stores.sessions,
    clock,
    config,
    successorSecret: deps.refreshSuccessorSecret,
  });
  const loginThrottle = createLoginThrottle({ store: stores.loginAttempts, clock, config });
  const apiKeys = createApiKeyService({ store: stores.apiKeys, clock, users, audit: stores.audit });
  const sshKeys = createSshKeyService({ store: stores.sshKeys, users: stores.users, audit: stores.audit, clock });
  const passwords = createPasswordConfirmation({ users: stores.users, loginThrottle });
  const credentials = createCredentialService({ users, stores, loginThrottle, passwords, config, clock });
  const twoFactor = createTwoFactorService({
    config,
    clock,
    keys: deps.twoFactorKeys,
    stores,
    passwords,
    loginThrottle,
  });
  return {
    accessTokens,
    auth: createAuthService({
      clock,
      config,
      users: stores.users,
      calls: stores.system,
      events: deps.events,
      accessTokens,
      refreshTokens,
      loginThrottle,
      twoFactor,
      sshKeys,
    }),
    apiKeys,
    callers: createCallerService({
      clock,
      accessTokens,
      apiKeys,
      sessions: stores.sessions,
      users,
      identityChanges: deps.identityChanges,
    }),
    credentials,
    loginSessions: createLoginSessionService({ sessions: stores.sessions, clock }),
    registration: createRegistrationService({
      config,
      clock,
      credentials,
      windows: stores.loginAttempts,
      audit: stores.audit,
      events: deps.events,
    }),
    sessionActivity: createSessionActivityService({ sessions: stores.sessions, users: stores.users, clock }),
    sshKeys,
    twoFactor,
  };
}
