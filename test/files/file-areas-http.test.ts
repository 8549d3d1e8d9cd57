import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, createFileTestBoard, filePart, upload } from '../support/file-board.js';
import type { TestBoard } from '../support/test-board.js';
import { describeEachDialect } from '../support/test-board.js';

type Who = 'anonymous' | 'user' | 'sysop';

describeEachDialect('file areas', (dialect) => {
  let board: TestBoard;
  const auth: Record<Who, Record<string, string>> = { anonymous: {}, user: {}, sysop: {} };
  const fileIdIn: Record<string, number> = {};
  const get = (url: string, who: Who = 'anonymous') =>
    board.app.inject({ method: 'GET', url: `${API}${url}`, headers: auth[who] });

  beforeAll(async () => {
    board = await createFileTestBoard(dialect);
    auth.user = (await board.userWithToken('alice')).auth;
    auth.sysop = (await board.userWithToken('sysop', { groups: ['sysops'] })).auth;
    for (const areaTag of ['public_files', 'members', 'nodl', 'sysop_only']) {
      const response = await upload(
        board,
        areaTag,
        filePart(`${areaTag}.txt`, `content of ${areaTag}`, [
          { name: 'desc', value: '\u001b[31mRed\u001b[0m |07text' },
        ]),
        auth.sysop,
      );
      expect(response.statusCode).toBe(201);
      fileIdIn[areaTag] = response.json().fileId;
    }
  });
  afterAll(() => board.close());

  describe('GET /files/areas', () => {
    it('lists only allowlisted areas to anonymous callers', async () => {
      const response = await get('/files/areas');
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        data: [{ areaTag: 'public_files', name: 'Public files', desc: 'Free stuff', storageTag: 'main', fileCount: 1 }],
        meta: { count: 1, limit: 1, nextCursor: null },
        pagination: { next: null },
      });
    });

    it('lists the areas a user may read, in configuration order', async () => {
      const tags = (await get('/files/areas', 'user')).json().data.map((area: { areaTag: string }) => area.areaTag);
      expect(tags).toEqual(['public_files', 'members', 'nodl']);
    });

    it('lists every area to the sysop', async () => {
      const tags = (await get('/files/areas', 'sysop')).json().data.map((area: { areaTag: string }) => area.areaTag);
      expect(tags).toEqual(['public_files', 'members', 'nodl', 'sysop_only']);
    });

    it('keeps ANSI in area descriptions with stripAnsi=false', async () => {
      const response = await get('/files/areas?stripAnsi=false');
      expect(response.json().data[0].desc).toBe('\u001b[1;33mFree\u001b[0m stuff');
      expect((await get('/files/areas?stripAnsi=maybe')).statusCode).toBe(400);
    });
  });

  it('shows area detail with the first storage tag and the file count', async () => {
    const response = await get('/files/areas/members', 'user');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      areaTag: 'members',
      name: 'Members',
      desc: 'For members',
      storageTag: 'main',
      fileCount: 1,
    });
  });

  describe('visibility matrix', () => {
    // [who, areaTag, browse status, download status, upload status]
    const matrix: [Who, string, number, number, number][] = [
      ['anonymous', 'public_files', 200, 200, 401],
      ['anonymous', 'members', 401, 401, 401],
      ['anonymous', 'nodl', 401, 401, 401],
      ['anonymous', 'sysop_only', 401, 401, 401],
      ['user', 'public_files', 200, 200, 201],
      ['user', 'members', 200, 200, 403],
      ['user', 'nodl', 200, 403, 403],
      ['user', 'sysop_only', 403, 403, 403],
      ['sysop', 'public_files', 200, 200, 201],
      ['sysop', 'members', 200, 200, 201],
      ['sysop', 'nodl', 200, 200, 201],
      ['sysop', 'sysop_only', 200, 200, 201],
    ];
    it.each(matrix)('%s in %s: browse %i, download %i, upload %i', async (who, areaTag, browse, dl, up) => {
      const fileId = fileIdIn[areaTag];
      expect((await get(`/files/areas/${areaTag}`, who)).statusCode).toBe(browse);
      expect((await get(`/files/areas/${areaTag}/files`, who)).statusCode).toBe(browse);
      expect((await get(`/files/${fileId}`, who)).statusCode).toBe(browse);
      const download = await get(`/files/${fileId}/download`, who);
      expect(download.statusCode).toBe(dl);
      if (dl === 401) expect(download.headers['www-authenticate']).toBe('Bearer realm="baud"');
      const uploaded = await upload(board, areaTag, filePart('m.txt', `${who} ${areaTag} ${Math.random()}`), auth[who]);
      expect(uploaded.statusCode).toBe(up);
    });

    it('answers 404 for an unknown area whoever asks', async () => {
      for (const who of ['anonymous', 'user', 'sysop'] as const) {
        expect((await get('/files/areas/nope', who)).statusCode).toBe(404);
        expect((await get('/files/areas/nope/files', who)).statusCode).toBe(404);
      }
    });
  });

  describe('GET /files/areas/:areaTag/files', () => {
    it('pages newest first with a cursor, Link header and no duplicates', async () => {
      const ids: number[] = [];
      for (let i = 0; i < 5; i += 1) {
        const response = await upload(board, 'nodl', filePart(`page${i}.txt`, `page file ${i}`), auth.sysop);
        ids.push(response.json().fileId);
      }
      const first = await get('/files/areas/nodl/files?limit=3', 'user');
      expect(first.statusCode).toBe(200);
      const body = first.json();
      expect(body.data.map((file: { fileId: number }) => file.fileId)).toEqual(ids.slice(-3).reverse());
      expect(body.meta).toEqual({ count: 3, limit: 3, nextCursor: expect.any(String) });
      expect(body.pagination.next).toBe(body.meta.nextCursor);
      expect(first.headers.link).toContain('rel="next"');
      const second = await get(`/files/areas/nodl/files?limit=3&cursor=${body.meta.nextCursor}`, 'user');
      const rest = second.json();
      const secondIds = rest.data.map((file: { fileId: number }) => file.fileId);
      expect(secondIds.slice(0, 2)).toEqual([ids[1], ids[0]]);
      expect([...secondIds].sort((a, b) => b - a)).toEqual(secondIds);
      // Walk to the end: every file once, fileId descending.
      const all = [...body.data, ...rest.data].map((file: { fileId: number }) => file.fileId);
      let cursor = rest.meta.nextCursor;
      while (cursor) {
        const page = (await get(`/files/areas/nodl/files?limit=3&cursor=${cursor}`, 'user')).json();
        all.push(...page.data.map((file: { fileId: number }) => file.fileId));
        cursor = page.meta.nextCursor;
      }
      expect(new Set(all).size).toBe(all.length);
      expect([...all].sort((a, b) => b - a)).toEqual(all);
      expect(all).toContain(fileIdIn.nodl);
    });

    it('refuses a cursor of another area and a limit out of range with 400', async () => {
      const first = (await get('/files/areas/nodl/files?limit=1', 'user')).json();
      const foreign = await get(`/files/areas/members/files?cursor=${first.meta.nextCursor}`, 'user');
      expect(foreign.statusCode).toBe(400);
      expect((await get('/files/areas/nodl/files?limit=0', 'user')).statusCode).toBe(400);
      expect((await get('/files/areas/nodl/files?limit=101', 'user')).statusCode).toBe(400);
    });

    it('strips ANSI and pipe codes from desc by default, keeps them with stripAnsi=false', async () => {
      const find = (list: { data: { fileId: number; desc: string }[] }) =>
        list.data.find((file) => file.fileId === fileIdIn.members);
      const stripped = find((await get('/files/areas/members/files', 'user')).json());
      expect(stripped?.desc).toBe('Red text');
      const raw = find((await get('/files/areas/members/files?stripAnsi=false', 'user')).json());
      expect(raw?.desc).toBe('\u001b[31mRed\u001b[0m |07text');
      const detail = (await get(`/files/${fileIdIn.members}?stripAnsi=0`, 'user')).json();
      expect(detail.desc).toBe('\u001b[31mRed\u001b[0m |07text');
    });
  });

  it('documents the file routes in the OpenAPI document', async () => {
    const response = await board.app.inject({ method: 'GET', url: `${API}/openapi.json` });
    expect(response.statusCode).toBe(200);
    const paths = response.json().paths;
    expect(Object.keys(paths)).toEqual(
      expect.arrayContaining([
        `${API}/files/areas`,
        `${API}/files/areas/{areaTag}`,
        `${API}/files/areas/{areaTag}/files`,
        `${API}/files/{fileId}`,
        `${API}/files/{fileId}/download`,
      ]),
    );
    const uploadDoc = paths[`${API}/files/areas/{areaTag}`].post;
    expect(Object.keys(uploadDoc.requestBody.content)).toEqual(['multipart/form-data']);
    expect(Object.keys(uploadDoc.responses)).toEqual(
      expect.arrayContaining(['201', '401', '403', '404', '409', '413', '415']),
    );
    expect(Object.keys(paths[`${API}/files/{fileId}/download`].get.responses)).toEqual(
      expect.arrayContaining(['200', '206', '304', '416']),
    );
  });
});
