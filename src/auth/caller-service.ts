import type { UserCaller } from '../caller.js';
import type { Clock } from '../clock.js';
import { UnauthorizedError } from '../errors.js';
import { estimatedBytes, estimatedStringBytes } from '../estimated-bytes.js';
import type { IdentityChanges } from '../identity-changes.js';
import { createRecentCache } from '../recent-cache.js';
import type { UserService } from '../users/user-service.js';
import type { AccessTokenClaims, AccessTokens } from './access-tokens.js';
import type { ApiKeyService } from './api-key-service.js';
import type { SessionStore } from './session-store.js';

/** A credential as a request presents it; telling which kind it is is the HTTP layer's job. */
export type Credential = { readonly apiKey: string } | { readonly accessToken: string };

/** Who is behind a credential: the one answer the auth hook asks of the auth domain. */
export interface CallerService {
  /**
   * The user a credential stands for, with what it may do. An unknown or revoked API key, an
   * invalid or expired access token, a token whose session has ended, and a credential whose
   * user is gone or disabled are all `UnauthorizedError` (`invalid_token`).
   */
  resolve(credential: Credential, options: { readonly isSecure: boolean }): Promise<UserCaller>;
}

/**
 * How long a node answers "who is this credential" from memory. A logout, a revoked key, a
 * disabled account or a changed password on this node takes effect at once (the stores report
 * it through `IdentityChanges`); made on another node sharing the database, it takes effect
 * here within this bound. Expired access tokens are refused at once on every node: their
 * expiry is checked on every request.
 */
export const CALLER_CACHE_MAX_AGE_MS = 1000;

/**
 * The bytes the remembered callers may hold, counted with estimated-bytes.ts (credential and
 * caller: ~1.6 KB for an access token, ~1.2 KB for an API key). 4 MiB holds ~2,500 callers, and
 * an entry answers for a second only, so this is the callers active within one second; past
 * that the oldest goes first and its next request loads it again (two indexed reads).
 */
export const CALLER_CACHE_BYTES = 4 * 1024 * 1024;

export function createCallerService(deps: {
  clock: Clock;
  accessTokens: AccessTokens;
  apiKeys: ApiKeyService;
  sessions: SessionStore;
  users: UserService;
  identityChanges: IdentityChanges;
}): CallerService {
  const { clock, accessTokens, apiKeys, sessions, users, identityChanges } = deps;
  /** Keyed by the credential and whether the request came over TLS (part of the caller). */
  const cache = createRecentCache<UserCaller>({
    maxBytes: CALLER_CACHE_BYTES,
    sizeOf: (key, caller) => estimatedStringBytes(key) + estimatedBytes(caller),
    clock,
  });

  async function loadApiKeyCaller(apiKey: string, isSecure: boolean): Promise<UserCaller> {
    const key = await apiKeys.verify(apiKey);
    const user = key && (await users.loadCallerUser(key.userId));
    if (!key || !user)
      throw new UnauthorizedError('auth.invalid-api-key', 'The API key is unknown or revoked.', 'invalid_token');
    return { kind: 'user', user, via: 'apiKey', scopes: key.scopes, isSecure, session: null };
  }

  async function loadTokenCaller(claims: AccessTokenClaims, isSecure: boolean): Promise<UserCaller> {
    // The session is checked (within the cache's bound), so logout takes effect at once on this
    // node rather than when the 15-minute token expires.
    const session = await sessions.findLiveSession(claims.sessionId, claims.userId, clock.now());
    const user = session ? await users.loadCallerUser(claims.userId) : null;
    if (!session || !user)
      throw new UnauthorizedError('auth.invalid-token', 'The access token is invalid or expired.', 'invalid_token');
    return { kind: 'user', user, via: 'token', scopes: new Set(['read', 'write']), isSecure, session };
  }

  return {
    async resolve(credential, { isSecure }) {
      const nowMs = clock.now().getTime();
      let cacheKey: string;
      let load: () => Promise<UserCaller>;
      if ('apiKey' in credential) {
        cacheKey = `key ${isSecure} ${credential.apiKey}`;
        load = () => loadApiKeyCaller(credential.apiKey, isSecure);
      } else {
        // Verified on every request (a map lookup once verified), so an expired token never
        // rides on a remembered caller.
        const claims = await accessTokens.verify(credential.accessToken);
        if (!claims)
          throw new UnauthorizedError('auth.invalid-token', 'The access token is invalid or expired.', 'invalid_token');
        cacheKey = `token ${isSecure} ${credential.accessToken}`;
        load = () => loadTokenCaller(claims, isSecure);
      }
      const known = cache.get(cacheKey, identityChanges.epoch);
      if (known) return known;
      // The epoch before loading: a change made while loading makes the entry stale at once.
      const { epoch } = identityChanges;
      const caller = await load();
      cache.set(cacheKey, caller, { loadedAtMs: nowMs, expiresAtMs: nowMs + CALLER_CACHE_MAX_AGE_MS }, epoch);
      return caller;
    },
  };
}
