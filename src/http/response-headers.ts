import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ServiceUnavailableError } from '../errors.js';
import { API_PREFIX } from './api-prefix.js';
import { API_KEY_HEADER } from './auth-hook.js';
import { syncHook } from './sync-hook.js';

const AUTH_PREFIX = `${API_PREFIX}/auth/`;

/**
 * The request headers, besides the URL, that decide what an answer holds: the credentials.
 * A shared cache keys on them, so it never hands an anonymous copy to a caller with a
 * credential, or the reverse.
 */
const CREDENTIAL_VARY = 'Authorization, X-Baud-API-Key';

/** Headers every response carries, whichever layer writes it. */
export const BASELINE_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  vary: CREDENTIAL_VARY,
};
const CREDENTIAL_HEADERS: Readonly<Record<string, string>> = { ...BASELINE_HEADERS, 'cache-control': 'no-store' };

/** A node that is shutting down asks clients to come back this soon (another node may answer). */
const CLOSING_RETRY_AFTER_SECONDS = 5;

/**
 * Whether an answer may concern a credential or what only its holder may see: the caller was
 * authenticated, or the request carried a credential (even one refused, even on an unknown
 * path), or it went to the login routes, whose answers carry tokens.
 */
export function concernsCredentials(request: FastifyRequest): boolean {
  // `caller` exists once the auth hook ran; unrouted answers (404, docs) have none.
  if ((request as { caller?: { kind: string } }).caller?.kind === 'user') return true;
  const { headers } = request;
  return (
    headers.authorization !== undefined || headers[API_KEY_HEADER] !== undefined || request.url.startsWith(AUTH_PREFIX)
  );
}

/**
 * Headers of every answer: `X-Content-Type-Options: nosniff` (no browser may guess a type: an
 * uploaded file must never run as HTML), `Vary` on the credential headers, and
 * `Cache-Control: no-store` on every answer that concerns credentials, so no shared cache keeps
 * what only their holder may see.
 */
export function answerHeaders(request: FastifyRequest): Readonly<Record<string, string>> {
  return concernsCredentials(request) ? CREDENTIAL_HEADERS : BASELINE_HEADERS;
}

/**
 * Sends {@link answerHeaders} and the request id on every answer that goes through the hooks.
 * A `Vary` set earlier (CORS: `Origin`) is kept, with the credential headers after it.
 */
export function installResponseHeaders(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const earlierVary = reply.getHeader('vary');
    reply.header('x-request-id', request.id).headers(answerHeaders(request));
    // An error raised in a later onSend hook runs these hooks again: append only once.
    if (typeof earlierVary === 'string' && !earlierVary.endsWith(CREDENTIAL_VARY)) {
      reply.header('vary', `${earlierVary}, ${CREDENTIAL_VARY}`);
    }
    done(null, payload);
  });
}

/**
 * Once `app.close()` begins, requests still arriving on open connections get a 503 problem
 * with `Retry-After` and `Connection: close`, so a load balancer moves them to another node;
 * requests already in flight finish.
 */
export function refuseWhileClosing(app: FastifyInstance): void {
  let isClosing = false;
  app.addHook('preClose', async () => {
    isClosing = true;
  });
  app.addHook(
    'onRequest',
    syncHook(() => {
      if (isClosing) {
        throw new ServiceUnavailableError(
          'The board is shutting down; try again shortly.',
          CLOSING_RETRY_AFTER_SECONDS,
        );
      }
      return undefined;
    }),
  );
}
