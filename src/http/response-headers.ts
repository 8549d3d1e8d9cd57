import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ServiceUnavailableError } from '../errors.js';
import { type ApiMount, apiMountOf, BAUD_API, ENIGMA_API } from './api-prefix.js';
import { syncHook } from './sync-hook.js';

interface MountHeaders {
  readonly baseline: Readonly<Record<string, string>>;
  readonly credential: Readonly<Record<string, string>>;
}

/**
 * The headers of every answer under one mount. `Vary` names the request headers, besides the
 * URL, that decide what an answer holds: the credentials that mount accepts. A shared cache keys
 * on them, so it never hands an anonymous copy to a caller with a credential, or the reverse.
 */
function mountHeaders(mount: ApiMount): MountHeaders {
  const baseline = Object.freeze({ 'x-content-type-options': 'nosniff', vary: mount.credentialHeaders });
  return { baseline, credential: Object.freeze({ ...baseline, 'cache-control': 'no-store' }) };
}

const HEADERS_BY_MOUNT: ReadonlyMap<ApiMount, MountHeaders> = new Map(
  [BAUD_API, ENIGMA_API].map((mount) => [mount, mountHeaders(mount)] as const),
);
const headersOf = (mount: ApiMount) => HEADERS_BY_MOUNT.get(mount) ?? mountHeaders(mount);

/** Headers every response carries, whichever layer writes it (baud's names: no request to ask). */
export const BASELINE_HEADERS: Readonly<Record<string, string>> = headersOf(BAUD_API).baseline;

/** A node that is shutting down asks clients to come back this soon (another node may answer). */
const CLOSING_RETRY_AFTER_SECONDS = 5;

/**
 * Whether an answer may concern a credential or what only its holder may see: the caller was
 * authenticated, or the request carried a credential (even one refused, even on an unknown
 * path), or it went to the login routes, whose answers carry tokens.
 */
export function concernsCredentials(request: FastifyRequest, mount = apiMountOf(request)): boolean {
  // `caller` exists once the auth hook ran; unrouted answers (404, docs) have none.
  if ((request as { caller?: { kind: string } }).caller?.kind === 'user') return true;
  const { headers } = request;
  if (headers.authorization !== undefined || request.url.startsWith(mount.authPathPrefix)) return true;
  for (const name of mount.apiKeyHeaderNames) if (headers[name] !== undefined) return true;
  return false;
}

/**
 * Headers of every answer: `X-Content-Type-Options: nosniff` (no browser may guess a type: an
 * uploaded file must never run as HTML), `Vary` on the credential headers, and
 * `Cache-Control: no-store` on every answer that concerns credentials, so no shared cache keeps
 * what only their holder may see.
 */
export function answerHeaders(request: FastifyRequest, mount = apiMountOf(request)): Readonly<Record<string, string>> {
  const headers = headersOf(mount);
  return concernsCredentials(request, mount) ? headers.credential : headers.baseline;
}

/**
 * Sends {@link answerHeaders} and the request id on every answer that goes through the hooks.
 * A `Vary` set earlier (CORS: `Origin`) is kept, with the credential headers after it.
 */
export function installResponseHeaders(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const earlierVary = reply.getHeader('vary');
    const mount = apiMountOf(request);
    const { credentialHeaders } = mount;
    reply.header('x-request-id', request.id).headers(answerHeaders(request, mount));
    // An error raised in a later onSend hook runs these hooks again: append only once.
    if (typeof earlierVary === 'string' && !earlierVary.endsWith(credentialHeaders)) {
      reply.header('vary', `${earlierVary}, ${credentialHeaders}`);
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
          'server.shutting-down',
          'The board is shutting down; try again shortly.',
          CLOSING_RETRY_AFTER_SECONDS,
        );
      }
      return undefined;
    }),
  );
}
