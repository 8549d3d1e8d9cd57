import etag from '@fastify/etag';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/load-config.js';
import { ifNoneMatchHits } from './download-headers.js';
import { concernsCredentials } from './response-headers.js';

/**
 * Put on an answer that must not get an ETag before the ETag plugin sees it: the plugin tags
 * every string or Buffer body that has no ETag yet, and skips one that has. Taken off again
 * right after the plugin, so no answer carries it; the body is never hashed for nothing.
 */
const NO_ETAG = '"-"';

/** `Cache-Control` of a public answer: proxies may keep it this long, then revalidate with the ETag. */
function publicCacheControl(publicCacheSeconds: number): string {
  return publicCacheSeconds === 0 ? 'public, no-cache' : `public, max-age=${publicCacheSeconds}`;
}

function isJsonBody(payload: unknown): payload is string | Buffer {
  return typeof payload === 'string' || Buffer.isBuffer(payload);
}

/**
 * Whether an answer gets a generated ETag: a 200 to GET or HEAD with a JSON body that sets no
 * cookie. Errors are never tagged (a 304 must not stand for a problem), nor are answers with
 * `Set-Cookie` (the login routes: a cookie must never be replayed from a cache).
 */
function isTaggable(request: FastifyRequest, reply: FastifyReply, payload: unknown): boolean {
  return (
    reply.statusCode === 200 &&
    (request.method === 'GET' || request.method === 'HEAD') &&
    isJsonBody(payload) &&
    !reply.hasHeader('set-cookie')
  );
}

/**
 * Conditional requests and caching of the API's JSON answers, for the routes of `api`:
 *
 * - every 200 to GET/HEAD with a JSON body gets a strong `ETag` (SHA-1 of the body, through
 *   @fastify/etag), and `If-None-Match` naming it (a list, `*` or a `W/` form: the weak
 *   comparison RFC 9110 §13.1.2 asks for) answers `304` with no body and the same headers;
 * - such an answer to an anonymous caller — who only gets a 200 where the public allowlist or
 *   the route's public toggle allows it — is `Cache-Control: public, max-age=<publicCacheSeconds>`
 *   (`public, no-cache` at 0), so a proxy may serve it to other anonymous callers.
 *
 * Answers that concern credentials keep the `no-store` of response-headers.ts; routes that set
 * their own ETag (downloads: the file's sha256) handle `If-None-Match` themselves and are left
 * as they are. Strong tags are right because baud never re-encodes a body.
 */
export async function installCaching(api: FastifyInstance, web: Config['contentServers']['web']): Promise<void> {
  const cacheControl = publicCacheControl(web.publicCacheSeconds);

  api.addHook('onSend', async (request, reply, payload) => {
    if (!isTaggable(request, reply, payload) && !reply.hasHeader('etag')) reply.header('etag', NO_ETAG);
  });
  // SHA-1 over fnv1a: on a 10 KB page (25 messages) SHA-1 took 7 µs and fnv1a 62–76 µs (it is
  // JavaScript, 32 bits wide, and easy to collide on purpose); on a 100-byte body all of SHA-1,
  // SHA-256, MD5 and fnv1a took 1–2 µs. SHA-256 cost 10% more than SHA-1 on the page; a
  // collision only makes a client keep its copy of the same URL, so SHA-1 is safe here.
  // The plugin's own 304 only knows a lone exact tag (no lists, no `*`): answered below instead.
  await api.register(etag, { algorithm: 'sha1', replyWith304: false });
  api.addHook('onSend', async (request, reply, payload) => {
    const tag = reply.getHeader('etag');
    if (tag === NO_ETAG) {
      reply.removeHeader('etag');
      return payload;
    }
    if (typeof tag !== 'string' || !isTaggable(request, reply, payload)) return payload;
    if (!concernsCredentials(request)) reply.header('cache-control', cacheControl);
    if (ifNoneMatchHits(request.headers['if-none-match'], tag)) {
      // A 304 carries only what lets a cache update its stored copy (RFC 9110 §15.4.5): no
      // Content-Type, no body, and a Content-Length only if it is the 200's (§8.6). A GET gets
      // none; a HEAD keeps its body here because Fastify's HEAD handler sizes it (the 200's
      // length) and then sends nothing.
      reply.code(304).removeHeader('content-type');
      return request.method === 'HEAD' ? payload : null;
    }
    return payload;
  });
}
