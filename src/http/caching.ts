import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/load-config.js';
import { ifNoneMatchHits } from './download-headers.js';
import { concernsCredentials } from './response-headers.js';

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
function isTaggable(request: FastifyRequest, reply: FastifyReply, payload: unknown): payload is string | Buffer {
  return (
    reply.statusCode === 200 &&
    (request.method === 'GET' || request.method === 'HEAD') &&
    isJsonBody(payload) &&
    !reply.hasHeader('set-cookie')
  );
}

/**
 * Conditional requests and caching of the API's JSON answers, for the routes of `api`, in one
 * onSend hook:
 *
 * - every 200 to GET/HEAD with a JSON body gets a strong `ETag` (SHA-1 of the body), and `If-None-Match` naming it (a list, `*` or a `W/` form: the weak
 *   comparison RFC 9110 §13.1.2 asks for) answers `304` with no body and the same headers;
 * - such an answer to an anonymous caller — who only gets a 200 where the public allowlist or
 *   the route's public toggle allows it — is `Cache-Control: public, max-age=<publicCacheSeconds>`
 *   (`public, no-cache` at 0), so a proxy may serve it to other anonymous callers.
 *
 * Answers that concern credentials keep the `no-store` of response-headers.ts. A JSON answer
 * whose route tagged it already keeps that tag; downloads (streams tagged with the file's
 * sha256) handle `If-None-Match` themselves and are left as they are. Strong tags are right
 * because baud never re-encodes a body.
 */
export function installCaching(api: FastifyInstance, web: Config['contentServers']['web']): void {
  const cacheControl = publicCacheControl(web.publicCacheSeconds);

  api.addHook('onSend', (request, reply, payload, done) => {
    if (!isTaggable(request, reply, payload)) {
      done(null, payload);
      return;
    }
    // A JSON answer may come tagged already (serialized-answer.ts: tagged once, sent many times).
    const presetTag = reply.getHeader('etag');
    const tag = typeof presetTag === 'string' ? presetTag : etagOf(payload);
    reply.header('etag', tag);
    if (!concernsCredentials(request)) reply.header('cache-control', cacheControl);
    if (!ifNoneMatchHits(request.headers['if-none-match'], tag)) {
      done(null, payload);
      return;
    }
    // A 304 carries only what lets a cache update its stored copy (RFC 9110 §15.4.5): no
    // Content-Type, no body, and a Content-Length only if it is the 200's (§8.6). A GET gets
    // none; a HEAD keeps its body here because Fastify's HEAD handler sizes it (the 200's
    // length) and then sends nothing.
    reply.code(304).removeHeader('content-type');
    done(null, request.method === 'HEAD' ? payload : null);
  });
}

/**
 * A strong tag from the SHA-1 of the body. SHA-1 over fnv1a: on a 10 KB page (25 messages)
 * SHA-1 took 7 µs and fnv1a 62–76 µs (it is JavaScript, 32 bits wide, and easy to collide on
 * purpose); on a 100-byte body every choice took 1–2 µs, most of it creating the hash object,
 * which the one-shot `crypto.hash` (Node 20.12+) skips. A collision only makes a client keep
 * its copy of the same URL, so SHA-1 is safe here.
 */
export function etagOf(body: string | Buffer): string {
  return `"${crypto.hash('sha1', body, 'base64')}"`;
}
