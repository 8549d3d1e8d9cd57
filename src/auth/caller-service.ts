import type { UserCaller } from '../caller.js';
import type { Clock } from '../clock.js';
import { UnauthorizedError } from '../errors.js';
import type { UserService } from '../users/user-service.js';
import type { AccessTokens } from './access-tokens.js';
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

export function createCallerService(deps: {
  clock: Clock;
  accessTokens: AccessTokens;
  apiKeys: ApiKeyService;
  sessions: SessionStore;
  users: UserService;
}): CallerService {
  const { clock, accessTokens, apiKeys, sessions, users } = deps;

  return {
    async resolve(credential, { isSecure }) {
      if ('apiKey' in credential) {
        const key = await apiKeys.verify(credential.apiKey);
        const user = key && (await users.loadCallerUser(key.userId));
        if (!key || !user) throw new UnauthorizedError('The API key is unknown or revoked.', 'invalid_token');
        return { kind: 'user', user, via: 'apiKey', scopes: key.scopes, isSecure, session: null };
      }
      const claims = await accessTokens.verify(credential.accessToken);
      // The session is checked on every request, so logout takes effect at once rather than
      // when the 15-minute token expires.
      const session = claims && (await sessions.findLiveSession(claims.sessionId, claims.userId, clock.now()));
      const user = session && claims ? await users.loadCallerUser(claims.userId) : null;
      if (!session || !user) throw new UnauthorizedError('The access token is invalid or expired.', 'invalid_token');
      return { kind: 'user', user, via: 'token', scopes: new Set(['read', 'write']), isSecure, session };
    },
  };
}
