import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { READER_CSP, READER_PATHS } from '../../src/http/reader-routes.js';
import { createTestBoard, type TestBoard } from '../support/test-board.js';

/** Issue 20: the web reader's page and assets as the server sends them. */
describe('the web reader at /', () => {
  let board: TestBoard;
  afterEach(async () => {
    await board.close();
  });

  const assetUrls = (html: string) =>
    [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1] ?? '');

  it('answers every reader path with the page under a strict Content-Security-Policy', async () => {
    board = await createTestBoard('sqlite');
    expect(board.app.servesReader).toBe(true);
    for (const pattern of READER_PATHS) {
      const url = pattern.replace(/:(\w+)/g, 'x1');
      const response = await board.app.inject({ url });
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.headers['content-security-policy']).toBe(READER_CSP);
      expect(response.headers['cache-control']).toBe('no-cache');
      expect(response.headers['x-frame-options']).toBe('DENY');
      expect(response.body).toContain('<div id="app">');
    }
    expect(READER_CSP).toContain("script-src 'self'");
    expect(READER_CSP).not.toContain('unsafe-inline');
    const page = (await board.app.inject({ url: '/' })).body;
    expect(page).not.toMatch(/<script>|<style>| style="/);
    expect(assetUrls(page)).toHaveLength(3);
  });

  it('serves hashed assets compressed, cached for a year, and their identity when nothing is accepted', async () => {
    board = await createTestBoard('sqlite');
    const page = (await board.app.inject({ url: '/' })).body;
    const script = assetUrls(page).find((url) => url.endsWith('.js')) ?? '';
    expect(script).toMatch(/^\/assets\/app-[A-Z0-9]{8}\.js$/);

    const brotli = await board.app.inject({ url: script, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(brotli.statusCode).toBe(200);
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotli.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(brotli.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(brotli.headers.vary).toContain('Accept-Encoding');

    const gzip = await board.app.inject({ url: script, headers: { 'accept-encoding': 'gzip' } });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    const identity = await board.app.inject({ url: script, headers: { 'accept-encoding': 'identity' } });
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(gunzipSync(gzip.rawPayload).equals(identity.rawPayload)).toBe(true);
    // The budget of issue 20: at most 150 KB of JavaScript, gzipped.
    expect(gzip.rawPayload.length).toBeLessThanOrEqual(150 * 1024);
  });

  it('answers an unknown asset and an unknown path with a 404 problem', async () => {
    board = await createTestBoard('sqlite');
    for (const url of ['/assets/app-00000000.js', '/nowhere', '/areas/general/nothing']) {
      const response = await board.app.inject({ url });
      expect(response.statusCode, url).toBe(404);
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    }
    const post = await board.app.inject({ method: 'POST', url: '/areas/general' });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('serves nothing at / when the reader is switched off, and leaves the API alone', async () => {
    board = await createTestBoard('sqlite', { config: { contentServers: { web: { reader: { enabled: false } } } } });
    expect((await board.app.inject({ url: '/' })).statusCode).toBe(404);
    expect((await board.app.inject({ url: '/_baud/api/v1/system/info' })).statusCode).toBe(200);
  });
});
