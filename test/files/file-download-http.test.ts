import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { API, createFileTestBoard, filePart, storedPath, upload } from '../support/file-board.js';
import type { TestBoard } from '../support/test-board.js';
import { describeEachDialect } from '../support/test-board.js';

const CONTENT = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz'); // 36 bytes

describeEachDialect('file download', (dialect) => {
  let board: TestBoard;
  let user: { userId: number; auth: { authorization: string } };
  let fileId: number;
  let sha256: string;
  const download = (headers: Record<string, string> = {}, id = fileId) =>
    board.app.inject({ method: 'GET', url: `${API}/files/${id}/download`, headers });

  beforeAll(async () => {
    board = await createFileTestBoard(dialect);
    user = await board.userWithToken('alice');
    const response = await upload(board, 'public_files', filePart("Grüße (x)'s.txt", CONTENT), user.auth);
    expect(response.statusCode).toBe(201);
    ({ fileId, sha256 } = response.json());
  });
  afterAll(() => board.close());

  it('sends type, RFC 6266 disposition with an ASCII fallback, length, ETag', async () => {
    const response = await download();
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain');
    expect(response.headers['content-disposition']).toBe(
      `attachment; filename="Gr__e (x)'s.txt"; filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%28x%29%27s.txt`,
    );
    expect(response.headers['content-length']).toBe('36');
    expect(response.headers.etag).toBe(`"${sha256}"`);
    expect(response.rawPayload.equals(CONTENT)).toBe(true);
  });

  describe('ranges', () => {
    it('serves bytes=0-9 as 206 with Content-Range', async () => {
      const response = await download({ range: 'bytes=0-9' });
      expect(response.statusCode).toBe(206);
      expect(response.headers['content-range']).toBe('bytes 0-9/36');
      expect(response.headers['content-length']).toBe('10');
      expect(response.body).toBe('0123456789');
    });

    it('serves a suffix range bytes=-5', async () => {
      const response = await download({ range: 'bytes=-5' });
      expect(response.statusCode).toBe(206);
      expect(response.headers['content-range']).toBe('bytes 31-35/36');
      expect(response.body).toBe('vwxyz');
    });

    it('serves an open-ended range bytes=30-', async () => {
      const response = await download({ range: 'bytes=30-' });
      expect(response.statusCode).toBe(206);
      expect(response.headers['content-range']).toBe('bytes 30-35/36');
      expect(response.body).toBe('uvwxyz');
    });

    it('clamps an end past the file', async () => {
      const response = await download({ range: 'bytes=34-1000' });
      expect(response.statusCode).toBe(206);
      expect(response.headers['content-range']).toBe('bytes 34-35/36');
      expect(response.body).toBe('yz');
    });

    it('answers 416 with Content-Range: bytes */size for a range past the end', async () => {
      const response = await download({ range: 'bytes=36-40' });
      expect(response.statusCode).toBe(416);
      expect(response.headers['content-range']).toBe('bytes */36');
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(response.json()).toMatchObject({ status: 416, title: 'Range Not Satisfiable' });
    });

    it.each([
      ['a start past the end with no end', 'bytes=999999999-'],
      ['a start exactly at the end', 'bytes=36-'],
      ['an empty suffix', 'bytes=-0'],
      ['a 30-digit start', `bytes=${'9'.repeat(30)}-`],
      ['a 30-digit start and end', `bytes=${'9'.repeat(30)}-${'9'.repeat(31)}`],
    ])('answers 416 for %s (%s)', async (_name, range) => {
      const response = await download({ range });
      expect(response.statusCode).toBe(416);
      expect(response.headers['content-range']).toBe('bytes */36');
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(response.json()).toEqual({
        type: `${API}/errors/416`,
        title: 'Range Not Satisfiable',
        status: 416,
        detail: "The range is outside the file's 36 bytes.",
        code: 'file.range-not-satisfiable',
      });
    });

    it('answers 416 for an unsatisfiable range over a real connection too', async () => {
      const address = await board.app.listen({ port: 0, host: '127.0.0.1' });
      const response = await fetch(`${address}${API}/files/${fileId}/download`, {
        headers: { range: 'bytes=999999999-' },
      });
      expect(response.status).toBe(416);
      expect(response.headers.get('content-range')).toBe('bytes */36');
      expect(((await response.json()) as { status: number }).status).toBe(416);
    });

    it('serves a 30-digit suffix as the whole file in a 206', async () => {
      const response = await download({ range: `bytes=-${'9'.repeat(30)}` });
      expect(response.statusCode).toBe(206);
      expect(response.headers['content-range']).toBe('bytes 0-35/36');
      expect(response.rawPayload.equals(CONTENT)).toBe(true);
    });

    it.each([
      ['an end before the start', 'bytes=5-2'],
      ['an end before a start past the end', 'bytes=999999999-40'],
      ['30-digit ends, the last one smaller', `bytes=1${'0'.repeat(28)}1-1${'0'.repeat(29)}`],
      ['a range without numbers', 'bytes=-'],
      ['a negative start', 'bytes=--5'],
      ['another unit', 'lines=1-2'],
    ])('ignores a syntactically invalid Range: %s (%s)', async (_name, range) => {
      const response = await download({ range });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-range']).toBeUndefined();
      expect(response.rawPayload.equals(CONTENT)).toBe(true);
    });

    it('serves the full file for a multi-range request', async () => {
      const response = await download({ range: 'bytes=0-1,5-6' });
      expect(response.statusCode).toBe(200);
      expect(response.rawPayload.equals(CONTENT)).toBe(true);
    });

    it('ignores Range when If-Range names another ETag', async () => {
      const response = await download({ range: 'bytes=0-1', 'if-range': '"other"' });
      expect(response.statusCode).toBe(200);
      const matching = await download({ range: 'bytes=0-1', 'if-range': `"${sha256}"` });
      expect(matching.statusCode).toBe(206);
    });
  });

  it('answers If-None-Match with the ETag with 304 and no body', async () => {
    const response = await download({ 'if-none-match': `"${sha256}"` });
    expect(response.statusCode).toBe(304);
    expect(response.body).toBe('');
    expect(response.headers.etag).toBe(`"${sha256}"`);
    expect((await download({ 'if-none-match': '"something-else"' })).statusCode).toBe(200);
    expect((await download({ 'if-none-match': `W/"${sha256}", "x"` })).statusCode).toBe(304);
  });

  it("counts a full download (dlCount and the user's counters) but not a 206 or a 304", async () => {
    // A file of its own: downloads in earlier tests are counted asynchronously.
    const created = await upload(
      board,
      'public_files',
      filePart('counted.txt', Buffer.from(CONTENT).reverse()),
      user.auth,
    );
    const fileId = created.json().fileId;
    const download = (headers: Record<string, string> = {}) =>
      board.app.inject({ method: 'GET', url: `${API}/files/${fileId}/download`, headers });
    const dlCount = async () =>
      Number(
        (await board.board.db.selectFrom('files').select('dlCount').where('id', '=', fileId).executeTakeFirstOrThrow())
          .dlCount,
      );
    const before = await dlCount();
    expect(before).toBe(0);
    const userBefore = await board.board.db
      .selectFrom('users')
      .select(['downloadCount', 'downloadBytes'])
      .where('id', '=', user.userId)
      .executeTakeFirstOrThrow();
    expect((await download({ ...user.auth })).statusCode).toBe(200);
    await vi.waitFor(async () => expect(await dlCount()).toBe(before + 1));
    const userAfter = await board.board.db
      .selectFrom('users')
      .select(['downloadCount', 'downloadBytes'])
      .where('id', '=', user.userId)
      .executeTakeFirstOrThrow();
    expect(Number(userAfter.downloadCount)).toBe(Number(userBefore.downloadCount) + 1);
    expect(Number(userAfter.downloadBytes)).toBe(Number(userBefore.downloadBytes) + CONTENT.length);

    expect((await download({ range: 'bytes=0-35' })).statusCode).toBe(206);
    expect((await download({ 'if-none-match': `"${created.json().sha256}"` })).statusCode).toBe(304);
    expect((await board.app.inject({ method: 'HEAD', url: `${API}/files/${fileId}/download` })).statusCode).toBe(200);
    // Give a wrongly counted download the chance to land before checking it did not.
    await new Promise((resolve) => setImmediate(resolve));
    expect(await dlCount()).toBe(before + 1);
    const record = await board.app.inject({ method: 'GET', url: `${API}/files/${fileId}` });
    expect(record.json().dlCount).toBe(before + 1);
  });

  it('answers 404 problem (not 500) when the bytes are missing on disk', async () => {
    const response = await upload(board, 'public_files', filePart('vanishing.txt', 'soon gone'), user.auth);
    const id = response.json().fileId;
    rmSync(storedPath(board, 'main', id));
    const missing = await download({}, id);
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(missing.json().detail).toBe(`The content of file ${id} is missing.`);
  });

  it('answers 404 for an unknown file and 400 for a non-numeric id', async () => {
    expect((await download({}, 999_999)).statusCode).toBe(404);
    // Beyond a PostgreSQL integer: refused by the schema instead of failing in the database.
    expect((await download({}, 2 ** 31)).statusCode).toBe(400);
    const record = await board.app.inject({ method: 'GET', url: `${API}/files/${2 ** 31}` });
    expect(record.statusCode).toBe(400);
    const bad = await board.app.inject({ method: 'GET', url: `${API}/files/abc/download` });
    expect(bad.statusCode).toBe(400);
  });
});
