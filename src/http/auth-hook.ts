import type { FastifyInstance, FastifyRequest } from 'fastify';
import { looksLikeApiKey } from '../auth/api-keys.js';
import type { Credential } from '../auth/caller-service.js';
import type { Board } from '../board.js';
import { anonymousCaller, type Caller, type Scope } from '../caller.js';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import { apiMountOf } from './api-prefix.js';
import type { RouteAccess } from './route-access.js';
import { syncHook } from './sync-hook.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling: resolved once per request, before any handler runs. */
    caller: Caller;
    /** The credential `caller` was resolved from (null: anonymous), for a long request to check again. */
    credential: Credential | null;
  }
}

function requiredScope(method: string): Scope {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

/**
 * The raw credential of a request: an API key, an access token, or none. A value in an API key
 * header is a key whatever its form (ENiGMA½'s keys have no `baud_` prefix).
 */
function credentialOf(request: FastifyRequest): Credential | null {
  const { headers } = request;
  const apiMount = apiMountOf(request);
  for (const header of apiMount.apiKeyHeaderNames) {
    const headerKey = headers[header];
    if (typeof headerKey === 'string' && headerKey !== '') return { apiKey: headerKey };
  }
  const authorization = headers.authorization;
  if (authorization === undefined || authorization === '') return null;
  const match = /^Bearer +(\S+)\s*$/i.exec(authorization);
  if (!match?.[1])
    throw new UnauthorizedError('auth.unsupported-scheme', 'Only Bearer credentials are accepted.', 'invalid_token');
  return looksLikeApiKey(match[1]) ? { apiKey: match[1] } : { accessToken: match[1] };
}

function assertRouteAccess(board: Board, access: RouteAccess, caller: Caller): void {
  if (caller.kind === 'user' || access === 'public' || access === 'ownCredentials') return;
  if (access !== 'authenticated' && board.config.contentServers.web.restApi.system.public[access.publicToggle]) return;
  throw new UnauthorizedError('auth.required');
}

/** The checks a caller with a credential must pass once the auth domain has resolved it. */
function assertCallerMay(board: Board, request: FastifyRequest, access: RouteAccess, caller: Caller): void {
  if (caller.kind === 'user' && !caller.scopes.has(requiredScope(request.method))) {
    throw new ForbiddenError(
      'auth.scope-insufficient',
      `This API key's scope does not allow ${request.method} requests.`,
    );
  }
  assertRouteAccess(board, access, caller);
}

/**
 * The one place credentials are handled: resolves `request.caller` from `X-Baud-API-Key` (also
 * `X-Enigma-API-Key` under ENiGMA½'s prefix) or `Authorization: Bearer` (under both prefixes, a
 * value shaped like a key baud or ENiGMA½ issues is an API key, as spec 5.3 allows; anything else
 * is a JWT), refuses
 * bad credentials with 401, key scopes that do not cover the method with 403, and routes whose
 * access rule the caller does not meet with 401.
 */
export function installAuthHook(app: FastifyInstance, board: Board): void {
  app.decorateRequest<Caller, 'caller'>('caller', null as unknown as Caller);
  app.decorateRequest('credential', null);
  app.addHook(
    'onRequest',
    syncHook((request) => {
      const isSecure = request.protocol === 'https';
      request.caller = anonymousCaller(isSecure);
      // Unknown routes answer 404/405 whoever asks; a bad credential there is beside the point.
      if (request.is404) return;
      const access = request.routeOptions.config.access ?? 'authenticated';
      // Login, refresh and logout carry their own credentials (password, refresh cookie): a stale
      // access token a client attaches to every request must not stop it from getting a fresh one.
      if (access === 'ownCredentials') return;
      const credential = credentialOf(request);
      request.credential = credential;
      if (!credential) {
        assertCallerMay(board, request, access, request.caller);
        return;
      }
      return board.callers.resolve(credential, { isSecure }).then((caller) => {
        request.caller = caller;
        assertCallerMay(board, request, access, caller);
      });
    }),
  );
}
