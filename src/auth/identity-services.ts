import type { Clock } from '../clock.js';
import type { Config } from '../config/load-config.js';
import type { Db } from '../db/database.js';
import { createProfileService } from '../users/profile-service.js';
import type { UserService } from '../users/user-service.js';
import type { AccessTokens } from './access-tokens.js';
import { createApiKeyService } from './api-key-service.js';
import { createAuthService } from './auth-service.js';
import { createLoginThrottle } from './login-throttle.js';
import { createRefreshTokenStore } from './refresh-tokens.js';
import { createSessionActivityStore } from './session-activity-store.js';

/**
 * The identity and access services of a board (login sessions, API keys, profiles), built
 * together because they share the token machinery. Spread into the board by `assembleBoard`.
 */
export function createIdentityServices(deps: {
  db: Db;
  config: Config;
  clock: Clock;
  users: UserService;
  accessTokens: AccessTokens;
  /** Derives each refresh token's successor (see `createRefreshTokenStore`). */
  refreshSuccessorSecret: Uint8Array;
}) {
  const { db, config, clock, users, accessTokens } = deps;
  const refreshTokens = createRefreshTokenStore({ db, clock, config, successorSecret: deps.refreshSuccessorSecret });
  const loginThrottle = createLoginThrottle({ db, clock, config });
  return {
    accessTokens,
    auth: createAuthService({ db, clock, config, accessTokens, refreshTokens, loginThrottle }),
    apiKeys: createApiKeyService({ db, clock, users }),
    profiles: createProfileService({ db }),
    sessionActivity: createSessionActivityStore({ db, clock }),
  };
}
