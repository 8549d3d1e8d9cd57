import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Config } from '../config/load-config.js';
import { type ApiMount, apiMountOf } from './api-prefix.js';

/** The order methods are listed in; any other a route serves comes after these. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
const EXPOSED_HEADERS =
  'Link, Location, RateLimit-Limit, RateLimit-Policy, RateLimit-Remaining, RateLimit-Reset, Retry-After, WWW-Authenticate, X-Request-Id';
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** The request headers a script may send: the mount's API key headers among them (ENiGMA½'s too, under its prefix). */
function allowedHeaders(mount: ApiMount): string {
  return ['Authorization', 'Content-Type', ...mount.apiKeyHeaders, 'Range', 'If-None-Match'].join(', ');
}

/** Known methods in METHOD_ORDER, then the rest; OPTIONS (always allowed) last. */
function rank(method: string): number {
  if (method === 'OPTIONS') return METHOD_ORDER.length + 1;
  const index = METHOD_ORDER.indexOf(method);
  return index === -1 ? METHOD_ORDER.length : index;
}

function addVaryOrigin(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  const current = typeof vary === 'string' ? vary : Array.isArray(vary) ? vary.join(', ') : '';
  if (!/(^|,)\s*(origin|\*)\s*(,|$)/i.test(current)) reply.header('vary', current ? `${current}, Origin` : 'Origin');
}

/**
 * Cross-origin access per `restApi.corsAllowedOrigins`: `[]` sends no CORS header at all;
 * `["*"]` allows any origin without credentials; an explicit list echoes the matching origin
 * and allows credentials (the refresh cookie).
 *
 * Installed as a root `onRequest` hook *before* the auth hook, instead of with @fastify/cors:
 * a preflight is answered (204) before any credential check, so it can never be a 401; the
 * headers are on the reply before anything can fail, so a 401/403/429 reaches the browser's
 * script readable; and no catch-all `OPTIONS *` route is added, which would turn every
 * unknown path into a 405 in the app's method table.
 */
export function installCors(app: FastifyInstance, config: Config): void {
  const origins = config.contentServers.web.restApi.corsAllowedOrigins;
  if (origins.length === 0) return;
  const allowsAnyOrigin = origins.includes('*');
  const allowed = new Set(origins);
  // The methods a preflight allows are those the app's routes serve, gathered as they are added
  // (a hand-kept list had left out PATCH), so a new method is allowed the day a route uses it.
  const servedMethods = new Set<string>(['OPTIONS']);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) servedMethods.add(method.toUpperCase());
  });
  let allowedMethods: string | undefined;
  // Routes are all in place before the first request, so the list is built once then.
  const allowedMethodsHeader = () => {
    allowedMethods ??= [...servedMethods].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b)).join(', ');
    return allowedMethods;
  };

  app.addHook('onRequest', async (request, reply) => {
    // Every response may depend on Origin, so caches must key on it (even for refused origins).
    addVaryOrigin(reply);
    const origin = request.headers.origin;
    if (origin === undefined || (!allowsAnyOrigin && !allowed.has(origin))) return;
    if (allowsAnyOrigin) {
      reply.header('access-control-allow-origin', '*');
    } else {
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-allow-credentials', 'true');
    }
    reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      reply
        .code(204)
        .header('access-control-allow-methods', allowedMethodsHeader())
        .header('access-control-allow-headers', allowedHeaders(apiMountOf(request)))
        .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS))
        .header('content-length', '0')
        .send();
      return reply;
    }
  });
}
