import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, createFileTestBoard, filePart, storageEntries, storedPath, upload } from '../support/file-board.js';
import { buildMultipart } from '../support/multipart.js';
import type { TestBoard } from '../support/test-board.js';
import { describeEachDialect } from '../support/test-board.js';
import { buildZip, deflateRepeated } from '../support/zip-builder.js';

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

describeEachDialect('file upload', (dialect) => {
  let board: TestBoard;
  let user: { userId: number; auth: { authorization: string } };
  let sysop: { userId: number; auth: { authorization: string } };
  beforeAll(async () => {
    board = await createFileTestBoard(dialect);
    user = await board.userWithToken('alice');
    sysop = await board.userWithToken('sysop', { groups: ['sysops'] });
  });
  afterAll(() => board.close());

  describe('round trip', () => {
    it('stores an upload byte-exactly and downloads it back with the same sha256', async () => {
      const content = randomBytes(70_000);
      const response = await upload(board, 'public_files', filePart('random.bin', content), user.auth);
      expect(response.statusCode).toBe(201);
      const record = response.json();
      expect(response.headers.location).toBe(`${API}/files/${record.fileId}`);
      expect(record).toEqual({
        fileId: expect.any(Number),
        areaTag: 'public_files',
        fileName: 'random.bin',
        desc: 'random',
        descLong: '',
        byteSize: 70_000,
        uploadTimestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        uploadByUsername: 'alice',
        dlCount: 0,
        sha256: sha256(content),
        archiveType: null,
        hashTags: [],
        estReleaseYear: null,
      });
      // On disk under its fileId, never the client's name; no temp left over.
      expect(readFileSync(storedPath(board, 'main', record.fileId)).equals(content)).toBe(true);
      expect(storageEntries(board).some((name) => name.startsWith('.upload-'))).toBe(false);

      const download = await board.app.inject({ method: 'GET', url: `${API}/files/${record.fileId}/download` });
      expect(download.statusCode).toBe(200);
      expect(download.rawPayload.equals(content)).toBe(true);
      expect(sha256(download.rawPayload)).toBe(record.sha256);
      expect(download.headers['content-type']).toBe('application/octet-stream');
      expect(download.headers['content-length']).toBe('70000');
      expect(download.headers.etag).toBe(`"${record.sha256}"`);
      expect(download.headers['accept-ranges']).toBe('bytes');
      expect(download.headers['content-disposition']).toBe(
        `attachment; filename="random.bin"; filename*=UTF-8''random.bin`,
      );

      const detail = await board.app.inject({ method: 'GET', url: `${API}/files/${record.fileId}` });
      expect(detail.statusCode).toBe(200);
      expect(detail.json()).toEqual({ ...record, dlCount: expect.any(Number) });
    });

    it("raises the uploader's counters and the area's fileCount", async () => {
      const before = await board.board.db
        .selectFrom('users')
        .select(['uploadCount', 'uploadBytes'])
        .where('id', '=', user.userId)
        .executeTakeFirstOrThrow();
      const area = (await board.app.inject({ method: 'GET', url: `${API}/files/areas/public_files` })).json();
      const response = await upload(board, 'public_files', filePart('counted.txt', 'twelve bytes'), user.auth);
      expect(response.statusCode).toBe(201);
      const after = await board.board.db
        .selectFrom('users')
        .select(['uploadCount', 'uploadBytes'])
        .where('id', '=', user.userId)
        .executeTakeFirstOrThrow();
      expect(Number(after.uploadCount)).toBe(Number(before.uploadCount) + 1);
      expect(Number(after.uploadBytes)).toBe(Number(before.uploadBytes) + 12);
      const areaAfter = (await board.app.inject({ method: 'GET', url: `${API}/files/areas/public_files` })).json();
      expect(areaAfter.fileCount).toBe(area.fileCount + 1);
    });

    it('takes desc and hashTags form fields and finds years and #tags', async () => {
      const response = await upload(
        board,
        'public_files',
        filePart('tagged.txt', 'tagged content', [
          { name: 'desc', value: 'A #Demo from 1994' },
          { name: 'hashTags', value: 'amiga, #Scene,,' },
        ]),
        user.auth,
      );
      expect(response.statusCode).toBe(201);
      expect(response.json()).toMatchObject({
        desc: 'A #Demo from 1994',
        descLong: '',
        estReleaseYear: 1994,
        hashTags: ['demo', 'amiga', 'scene'],
      });
    });

    it('accepts desc before or after the file part', async () => {
      const { body, contentType } = buildMultipart([
        { name: 'file', fileName: 'after.txt', value: 'desc comes after' },
        { name: 'desc', value: 'late description' },
      ]);
      const response = await board.app.inject({
        method: 'POST',
        url: `${API}/files/areas/public_files`,
        headers: { 'content-type': contentType, ...user.auth },
        payload: body,
      });
      expect(response.statusCode).toBe(201);
      expect(response.json().desc).toBe('late description');
    });
  });

  describe('archive descriptions', () => {
    it('takes desc from FILE_ID.DIZ and descLong from the NFO', async () => {
      const zip = buildZip([
        { name: 'FILE_ID.DIZ', data: 'ACME demo #party (c) 1995' },
        { name: 'ACME.NFO', data: 'The long story' },
        { name: 'DEMO.EXE', data: randomBytes(100) },
      ]);
      const response = await upload(board, 'public_files', filePart('acme.zip', zip), user.auth);
      expect(response.statusCode).toBe(201);
      expect(response.json()).toMatchObject({
        fileName: 'acme.zip',
        desc: 'ACME demo #party (c) 1995',
        descLong: 'The long story',
        archiveType: 'application/zip',
        estReleaseYear: 1995,
        hashTags: ['party'],
      });
      const download = await board.app.inject({
        method: 'GET',
        url: `${API}/files/${response.json().fileId}/download`,
      });
      expect(download.headers['content-type']).toBe('application/zip');
    });

    it('answers with desc and descLong stripped of ANSI and pipe codes, like GET /files/{fileId}', async () => {
      const diz = '\u001b[1;31mRED\u001b[0m |14demo|07 1994';
      const zip = buildZip([{ name: 'FILE_ID.DIZ', data: diz }]);
      const response = await upload(board, 'public_files', filePart('ansi.zip', zip), user.auth);
      expect(response.statusCode).toBe(201);
      expect(response.json()).toMatchObject({ desc: 'RED demo 1994', descLong: 'RED demo 1994' });
      const record = await board.app.inject({ method: 'GET', url: `${API}/files/${response.json().fileId}` });
      expect(response.json()).toEqual(record.json());
    });

    it('answers with the raw DIZ text when ?stripAnsi=false', async () => {
      const diz = '\u001b[1;32mGREEN\u001b[0m |14raw|07';
      const zip = buildZip([{ name: 'FILE_ID.DIZ', data: diz }]);
      const { body, contentType } = buildMultipart(filePart('raw-ansi.zip', zip));
      const response = await board.app.inject({
        method: 'POST',
        url: `${API}/files/areas/public_files?stripAnsi=false`,
        headers: { 'content-type': contentType, ...user.auth },
        payload: body,
      });
      expect(response.statusCode).toBe(201);
      expect(response.json()).toMatchObject({ desc: diz, descLong: diz });
      const record = await board.app.inject({
        method: 'GET',
        url: `${API}/files/${response.json().fileId}?stripAnsi=false`,
      });
      expect(response.json()).toEqual(record.json());
    });

    it('falls back to the file name without extension when the zip has no DIZ', async () => {
      const zip = buildZip([{ name: 'README.TXT', data: 'read me' }]);
      const response = await upload(board, 'public_files', filePart('nodiz.zip', zip), user.auth);
      expect(response.statusCode).toBe(201);
      expect(response.json()).toMatchObject({ desc: 'nodiz', descLong: 'read me', archiveType: 'application/zip' });
    });

    it('lets the desc field override the DIZ (descLong still from the archive)', async () => {
      const zip = buildZip([{ name: 'file_id.diz', data: 'from the diz' }]);
      const response = await upload(
        board,
        'public_files',
        filePart('override.zip', zip, [{ name: 'desc', value: 'from the form' }]),
        user.auth,
      );
      expect(response.statusCode).toBe(201);
      expect(response.json()).toMatchObject({ desc: 'from the form', descLong: 'from the diz' });
    });

    it('survives a zip bomb: 201 with the DIZ read only up to its limit', async () => {
      const bomb = buildZip([
        { name: 'FILE_ID.DIZ', rawDeflate: deflateRepeated(Buffer.alloc(1024 * 1024, 0x41), 1024) },
      ]);
      const response = await upload(board, 'public_files', filePart('bomb.zip', bomb), user.auth);
      expect(response.statusCode).toBe(201);
      const record = response.json();
      expect(record.archiveType).toBe('application/zip');
      expect(record.desc.length).toBeLessThanOrEqual(64 * 1024);
    });

    it('drops NUL characters inside a DIZ (PostgreSQL text cannot hold them)', async () => {
      const zip = buildZip([{ name: 'FILE_ID.DIZ', data: Buffer.from('NUL\u0000inside 1996', 'latin1') }]);
      const response = await upload(board, 'public_files', filePart('nul-diz.zip', zip), user.auth);
      expect(response.statusCode).toBe(201);
      expect(response.json()).toMatchObject({ desc: 'NULinside 1996', descLong: 'NULinside 1996' });
    });

    it('survives a corrupt zip: 201 with the fallback description', async () => {
      const zip = buildZip([{ name: 'FILE_ID.DIZ', data: 'never read' }]);
      const corrupt = Buffer.concat([zip.subarray(0, 40), randomBytes(200)]);
      const response = await upload(board, 'public_files', filePart('broken.zip', corrupt), user.auth);
      expect(response.statusCode).toBe(201);
      expect(response.json()).toMatchObject({ desc: 'broken', descLong: '', archiveType: 'application/zip' });
    });
  });

  describe('duplicates and names', () => {
    it('refuses the same content in the same area with 409 naming the existing fileId', async () => {
      const content = randomBytes(500);
      const first = await upload(board, 'public_files', filePart('dup-a.bin', content), user.auth);
      expect(first.statusCode).toBe(201);
      const entriesBefore = storageEntries(board);
      const second = await upload(board, 'public_files', filePart('dup-b.bin', content), user.auth);
      expect(second.statusCode).toBe(409);
      expect(second.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(second.json().detail).toContain(`fileId ${first.json().fileId}`);
      expect(storageEntries(board)).toEqual(entriesBefore);
    });

    it('accepts the same content in another area', async () => {
      const content = randomBytes(300);
      expect((await upload(board, 'public_files', filePart('x.bin', content), user.auth)).statusCode).toBe(201);
      expect((await upload(board, 'members', filePart('x.bin', content), sysop.auth)).statusCode).toBe(201);
    });

    it('gives a clashing name a (2), (3) suffix', async () => {
      const names = [];
      for (let i = 0; i < 3; i += 1) {
        const response = await upload(board, 'public_files', filePart('same.tar.gz', randomBytes(64)), user.auth);
        expect(response.statusCode).toBe(201);
        names.push(response.json().fileName);
      }
      expect(names).toEqual(['same.tar.gz', 'same (2).tar.gz', 'same (3).tar.gz']);
    });

    it('sanitises ../../etc/passwd to its base name', async () => {
      const response = await upload(board, 'public_files', filePart('../../etc/passwd', 'root:x:0:0'), user.auth);
      expect(response.statusCode).toBe(201);
      expect(response.json().fileName).toBe('passwd');
      expect(storageEntries(board)).not.toContain('passwd');
    });

    it('removes control characters from the name', async () => {
      const response = await upload(board, 'public_files', filePart('bad\u0007na\u001bme\u202e.txt', 'ctl'), user.auth);
      expect(response.statusCode).toBe(201);
      expect(response.json().fileName).toBe('badname.txt');
    });

    it('shortens a very long name to 255 UTF-8 bytes, keeping the extension', async () => {
      const response = await upload(board, 'public_files', filePart(`${'ä'.repeat(300)}.zip`, 'long'), user.auth);
      expect(response.statusCode).toBe(201);
      const { fileName } = response.json();
      expect(Buffer.byteLength(fileName)).toBeLessThanOrEqual(255);
      expect(fileName.endsWith('.zip')).toBe(true);
      const download = await board.app.inject({
        method: 'GET',
        url: `${API}/files/${response.json().fileId}/download`,
      });
      expect(download.headers['content-disposition']).toBe(
        `attachment; filename="${'_'.repeat(125)}.zip"; filename*=UTF-8''${'%C3%A4'.repeat(125)}.zip`,
      );
    });

    it('names a file without a name "file"', async () => {
      const response = await upload(board, 'public_files', filePart('', 'nameless'), user.auth);
      expect(response.statusCode).toBe(201);
      expect(response.json().fileName).toBe('file');
    });
  });

  describe('bad uploads', () => {
    const expectNoTemp = () => {
      expect(storageEntries(board).filter((name) => name.startsWith('.upload-'))).toEqual([]);
    };

    it('answers 400 when there is no file part', async () => {
      const response = await upload(board, 'public_files', [{ name: 'desc', value: 'no file' }], user.auth);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({
        status: 400,
        errors: [{ pointer: '/body/file', message: 'is required' }],
      });
    });

    it('answers 400 for an empty file', async () => {
      const response = await upload(board, 'public_files', filePart('empty.txt', ''), user.auth);
      expect(response.statusCode).toBe(400);
      expectNoTemp();
    });

    it('answers 400 for a desc with a NUL character and keeps no file', async () => {
      const response = await upload(
        board,
        'public_files',
        filePart('nul-desc.txt', 'nul desc', [{ name: 'desc', value: 'bad\u0000desc' }]),
        user.auth,
      );
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({
        errors: [{ pointer: '/body/desc', message: 'must not contain NUL characters' }],
      });
      expectNoTemp();
    });

    it('answers 400 for an unknown field', async () => {
      const response = await upload(
        board,
        'public_files',
        filePart('f.txt', 'unknown field', [{ name: 'color', value: 'red' }]),
        user.auth,
      );
      expect(response.statusCode).toBe(400);
      expect(response.json().errors).toEqual([{ pointer: '/body/color', message: 'is not a known field' }]);
      expectNoTemp();
    });

    it('answers 400 for a file in another field', async () => {
      const response = await upload(
        board,
        'public_files',
        [{ name: 'upload', fileName: 'a.txt', value: 'x' }],
        user.auth,
      );
      expect(response.statusCode).toBe(400);
      expectNoTemp();
    });

    it('answers 400 for two files and keeps neither', async () => {
      const before = storageEntries(board);
      const response = await upload(
        board,
        'public_files',
        [
          { name: 'file', fileName: 'one.txt', value: 'first of two' },
          { name: 'file', fileName: 'two.txt', value: 'second of two' },
        ],
        user.auth,
      );
      expect(response.statusCode).toBe(400);
      expect(storageEntries(board)).toEqual(before);
    });

    it('answers 400 for a truncated multipart body and leaves no temp file', async () => {
      const { body, contentType } = buildMultipart(filePart('cut.bin', randomBytes(5000)));
      const response = await board.app.inject({
        method: 'POST',
        url: `${API}/files/areas/public_files`,
        headers: { 'content-type': contentType, ...user.auth },
        payload: body.subarray(0, 3000),
      });
      expect(response.statusCode).toBe(400);
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expectNoTemp();
    });

    it('answers 415 for a JSON body', async () => {
      const response = await board.app.inject({
        method: 'POST',
        url: `${API}/files/areas/public_files`,
        headers: { 'content-type': 'application/json', ...user.auth },
        payload: '{"file":"x"}',
      });
      expect(response.statusCode).toBe(415);
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    });

    it('answers 415 for a body without Content-Type', async () => {
      const response = await board.app.inject({
        method: 'POST',
        url: `${API}/files/areas/public_files`,
        headers: user.auth,
      });
      expect(response.statusCode).toBe(415);
    });

    it('answers 404 for an unknown area', async () => {
      const response = await upload(board, 'nowhere', filePart('a.txt', 'x'), user.auth);
      expect(response.statusCode).toBe(404);
    });

    it('answers 400 for a stripAnsi that is not a boolean and keeps no file', async () => {
      const before = storageEntries(board);
      const { body, contentType } = buildMultipart(filePart('maybe.txt', 'strip me maybe'));
      const response = await board.app.inject({
        method: 'POST',
        url: `${API}/files/areas/public_files?stripAnsi=maybe`,
        headers: { 'content-type': contentType, ...user.auth },
        payload: body,
      });
      expect(response.statusCode).toBe(400);
      const problem = response.json();
      expect(problem.status).toBe(400);
      expect(new Set(problem.errors.map((error: { pointer: string }) => error.pointer))).toEqual(
        new Set(['/query/stripAnsi']),
      );
      expect(storageEntries(board)).toEqual(before);
    });
  });
});
