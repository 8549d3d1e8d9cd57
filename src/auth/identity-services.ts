import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { EventLog } from '../events/event-log.js';
import type { IdentityChanges } from '../identity-changes.js';
import type { SystemStore } from '../system/system-store.js';
import type { UserService } from '../users/user-service.js';
import type { UserStore } from '../users/user-store.js';
import type { WebhookStore } from '../webhooks/webhook-store.js';
import type { AccessTokens } from './access-tokens.js';
import { createApiKeyService } from './api-key-service.js';
import type { ApiKeyStore } from './api-key-store.js';
import { createAuthService } from './auth-service.js';
import { createCallerService } from './caller-service.js';
import { createCredentialService } from './credential-service.js';
import type { LoginAttemptStore } from './login-attempt-store.js';
import { createLoginThrottle } from './login-throttle.js';
import { createRefreshTokens } from './refresh-tokens.js';
import { createSessionActivityService } from './session-activity-service.js';
import type { SessionStore } from './session-store.js';

/**
 * The identity and access services of a board (callers, login sessions, passwords, API keys),
 * built together because they share the token machinery and the credential stores. Spread into
 * the board by `assembleBoard`.
 */
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
  };
  users: UserService;
  accessTokens: AccessTokens;
  /** Derives each refresh token's successor (see `createRefreshTokens`). */
  refreshSuccessorSecret: Uint8Array;
  /** What the stores report when a credential may stand for something else now. */
  identityChanges: IdentityChanges;
  /** Each login is recorded as a `user.login` event. */
  events: EventLog;
}) {
  const { config, clock, stores, users, accessTokens } = deps;
  const refreshTokens = createRefreshTokens({
    store: stores.sessions,
    clock,
    config,
    successorSecret: deps.refreshSuccessorSecret,
  });
  const loginThrottle = createLoginThrottle({ store: stores.loginAttempts, clock, config });
  const apiKeys = createApiKeyService({ store: stores.apiKeys, clock, users });
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
    credentials: createCredentialService({ users, stores, config, clock }),
    sessionActivity: createSessionActivityService({ sessions: stores.sessions, users: stores.users, clock }),
  };
}
