import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_AREA_GLOBS } from '../../src/access/area-glob.js';
import { API, MESSAGE_TEST_CONFIG, seedMessages } from '../messages/message-fixture.js';
import { FILE_BASE_CONFIG, filePart, upload } from '../support/file-board.js';
import { openSse } from '../support/sse-client.js';
import { createTestBoard, deepMerge, describeEachDialect, type TestBoard } from '../support/test-board.js';

/**
 * Caller-supplied area globs are `*` and `?` only. An extglob of 19 characters
 * (`+(@(*|*))+(@(*|*))#`) used to block the event loop for over a second per request, and per
 * event on a stream that asked for it; braces and classes are refused the same way.
 */
const HOSTILE_GLOBS = [
  '+(@(*|*))+(@(*|*))#',
  '+(@(*|*))+(@(*|*))+(@(*|*))#',
  '{general,members}',
  'gen[a-z]ral',
  '!(secret)',
];
const GLOB_RULE = 'must be globs of 1 to 256 characters: letters, digits, "_", ".", "-" and the wildcards "*" and "?"';

describeEachDialect('caller-supplied area globs', (dialect) => {
  let board: TestBoard;
  let base: string;
  let alice: { authorization: string };

  const get = (url: string, headers: Record<string, string> = {}) =>
    board.app.inject({ method: 'GET', url: `${API}${url}`, headers });
  const badGlob = (pointer: string, glob: string) => ({
    type: `${API}/errors/400`,
    title: 'Bad Request',
    status: 400,
    detail: `${pointer} ${GLOB_RULE} (not "${glob}").`,
    code: 'area.invalid-glob',
    errors: [{ pointer, message: `${GLOB_RULE} (not "${glob}")` }],
  });

  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      config: deepMerge(MESSAGE_TEST_CONFIG, FILE_BASE_CONFIG),
    });
    alice = (await board.userWithToken('alice')).auth;
    const sysop = (await board.userWithToken('op', { groups: ['sysops'] })).auth;
    await seedMessages(board, 'general', [{ subject: 'General modem', body: 'a modem' }]);
    await seedMessages(board, 'members', [{ subject: 'Members modem', body: 'a modem' }]);
    const stored = await upload(
      board,
      'public_files',
      filePart('modem.txt', 'x', [{ name: 'desc', value: 'modem' }]),
      sysop,
    );
    expect(stored.statusCode).toBe(201);
    await board.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(board.app.server.address() as AddressInfo).port}${API}`;
  });
  afterAll(() => board.close());

  it.each(HOSTILE_GLOBS)('refuses the message search glob %s with 400', async (glob) => {
    const response = await get(`/messages/search?q=a&areaTag=${encodeURIComponent(glob)}`);
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(response.json()).toEqual(badGlob('/query/areaTag', glob));
  });

  it.each(HOSTILE_GLOBS)('refuses the file search glob %s with 400', async (glob) => {
    const response = await get(`/files/search?q=modem&areaTag=${encodeURIComponent(glob)}`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual(badGlob('/query/areaTag', glob));
  });

  it.each(HOSTILE_GLOBS)('refuses the event stream glob %s with 400 before the stream opens', async (glob) => {
    const stream = await openSse(`${base}/events?areas=general,${encodeURIComponent(glob)}`);
    await stream.ended;
    expect(stream.status).toBe(400);
    // The list is split at commas first: the problem names the first bad piece (`{general`).
    expect(stream.frames).toEqual([{ data: badGlob('/query/areas', glob.split(',')[0] ?? '') }]);
  });

  it.each(HOSTILE_GLOBS)('refuses the webhook glob %s with 400 and stores nothing', async (glob) => {
    const response = await board.app.inject({
      method: 'POST',
      url: `${API}/webhooks`,
      headers: alice,
      payload: { url: 'https://hooks.example.org/baud', events: ['message.created'], areas: ['general', glob] },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual(badGlob('/body/areas', glob));
    expect(await board.board.db.selectFrom('webhooks').select('id').execute()).toEqual([]);
  });

  it('refuses more than the documented number of globs with 400', async () => {
    const globs = Array.from({ length: MAX_AREA_GLOBS + 1 }, (_, index) => `area${index}*`).join(',');
    const stream = await openSse(`${base}/events?areas=${globs}`);
    await stream.ended;
    expect(stream.status).toBe(400);
    const message = `has ${MAX_AREA_GLOBS + 1} globs; at most ${MAX_AREA_GLOBS} are allowed`;
    expect(stream.frames).toEqual([
      {
        data: {
          type: `${API}/errors/400`,
          title: 'Bad Request',
          status: 400,
          detail: `/query/areas ${message}.`,
          code: 'area.invalid-glob',
          errors: [{ pointer: '/query/areas', message }],
        },
      },
    ]);
  });

  it('still narrows a search with * and ?', async () => {
    const subjects = async (glob: string) => {
      const response = await get(`/messages/search?q=modem&areaTag=${encodeURIComponent(glob)}`, alice);
      expect(response.statusCode, response.body).toBe(200);
      return (response.json() as { data: { subject: string }[] }).data.map((found) => found.subject);
    };
    expect(await subjects('*')).toEqual(['Members modem', 'General modem']);
    expect(await subjects('gen*')).toEqual(['General modem']);
    expect(await subjects('m?mbers')).toEqual(['Members modem']);
    expect(await subjects('*l')).toEqual(['General modem']);
    expect(await subjects('general?')).toEqual([]);
    const files = await get('/files/search?q=modem&areaTag=public_?iles');
    expect((files.json() as { data: { fileName: string }[] }).data.map((found) => found.fileName)).toEqual([
      'modem.txt',
    ]);
  });
});
