import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ServiceUnavailableError } from '../errors.js';
import { BASELINE_HEADERS } from './problem.js';

/** A node that is shutting down asks clients to come back this soon (another node may answer). */
const CLOSING_RETRY_AFTER_SECONDS = 5;

function isAuthenticated(request: FastifyRequest): boolean {
  // `caller` exists once the auth hook ran; unrouted answers (404, docs) have none.
  return (request as { caller?: { kind: string } }).caller?.kind === 'user';
}

/**
 * Headers of every answer: the request id, `X-Content-Type-Options: nosniff` (no browser may
 * guess a type: an uploaded file must never run as HTML), and `Cache-Control: no-store` on
 * every answer to an authenticated caller, so no shared cache keeps what only they may see.
 */
export function installResponseHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id).headers(BASELINE_HEADERS);
    if (isAuthenticated(request)) reply.header('cache-control', 'no-store');
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
  app.addHook('onRequest', async () => {
    if (isClosing) {
      throw new ServiceUnavailableError('The board is shutting down; try again shortly.', CLOSING_RETRY_AFTER_SECONDS);
    }
  });
}
