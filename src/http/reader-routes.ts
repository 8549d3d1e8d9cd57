import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ReaderAsset, ReaderAssets } from '../reader/reader-assets.js';

/**
 * The reader's own paths: its page answers every one of them and the script shows what the path
 * names, so each area, page, message and search has an address to bookmark. None can collide
 * with `/_baud/…` (API, docs, health).
 */
export const READER_PATHS = [
  '/',
  '/login',
  '/register',
  '/search',
  '/unread',
  '/profile',
  '/account',
  '/admin',
  '/admin/audit',
  '/conferences/:confTag',
  '/areas/:areaTag',
  '/areas/:areaTag/post',
  '/messages/:uuid',
  '/messages/:uuid/reply',
  '/threads/:uuid',
  '/files',
  '/files/areas/:areaTag',
  '/files/:fileId',
  '/users/:username',
  '/mail',
  '/mail/compose',
  '/mail/search',
  '/mail/blocked',
  '/mail/:uuid',
  '/mail/:uuid/reply',
] as const;

/**
 * The page may run only the board's own script and style, talk only to the board, and be framed
 * by nobody: no inline script or style exists to allow, so injected markup cannot run.
 */
export const READER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_HEADERS = {
  'content-security-policy': READER_CSP,
  'cache-control': 'no-cache',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

/** Hashed names change with their content: a year in any cache is safe. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';

/** The stored encoding the client accepts that is smallest: brotli, then gzip, then none. */
function sendEncoded(request: FastifyRequest, reply: FastifyReply, asset: ReaderAsset) {
  const accepted = request.headers['accept-encoding'] ?? '';
  const [encoding, body] = /\bbr\b/.test(accepted)
    ? (['br', asset.brotli] as const)
    : /\bgzip\b/.test(accepted)
      ? (['gzip', asset.gzip] as const)
      : ([null, asset.identity] as const);
  reply.header('content-type', asset.contentType).header('vary', 'Accept-Encoding');
  if (encoding !== null) reply.header('content-encoding', encoding);
  return reply.send(body);
}

/** Serves the web reader at `/`: its page on every reader path, its assets under `/assets/`. */
export function registerReaderRoutes(app: FastifyInstance, reader: ReaderAssets): void {
  const config = { access: 'public' as const };
  const schema = { hide: true };
  for (const url of READER_PATHS) {
    app.get(url, { config, schema }, (request, reply) =>
      sendEncoded(request, reply.headers(PAGE_HEADERS), reader.page),
    );
  }
  app.get<{ Params: { name: string } }>('/assets/:name', { config, schema }, (request, reply) => {
    const asset = reader.assets.get(request.params.name);
    if (asset === undefined) return reply.callNotFound();
    return sendEncoded(request, reply.header('cache-control', ASSET_CACHE), asset);
  });
}
