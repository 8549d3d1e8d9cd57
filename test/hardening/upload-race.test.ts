import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { API, createFileTestBoard, filePart, storageEntries } from '../support/file-board.js';
import { buildMultipart, type FormPart } from '../support/multipart.js';
import { describeEachDialect, type TestBoard } from '../support/test-board.js';

/**
 * Many uploads into one file area at the same moment, over real HTTP (parallel connections,
 * not `inject`, which runs requests one at a time through the same event-loop turn order):
 * names get exact ` (n)` suffixes, the same content is stored once, counters are exact.
 */

const AREA = 'public_files';

interface UploadAnswer {
  readonly status: number;
  readonly body: { fileId?: number; fileName?: string; detail?: string };
}

describeEachDialect('parallel uploads into one area', (dialect) => {
  let board: TestBoard;
  let baseUrl: string;

  beforeAll(async () => {
    board = await createFileTestBoard(dialect);
    baseUrl = await board.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => board.close());

  async function postUpload(auth: { authorization: string }, parts: readonly FormPart[]): Promise<UploadAnswer> {
    const { body, contentType } = buildMultipart(parts);
    const response = await fetch(`${baseUrl}${API}/files/areas/${AREA}`, {
      method: 'POST',
      headers: { 'content-type': contentType, ...auth },
      body,
    });
    return { status: response.status, body: (await response.json()) as UploadAnswer['body'] };
  }

  async function areaFileCount(): Promise<number> {
    const response = await board.app.inject({ method: 'GET', url: `${API}/files/areas/${AREA}` });
    return (response.json() as { fileCount: number }).fileCount;
  }

  async function uploadCounters(userId: number) {
    const row = await board.board.db
      .selectFrom('users')
      .select(['uploadCount', 'uploadBytes'])
      .where('id', '=', userId)
      .executeTakeFirstOrThrow();
    return { uploadCount: Number(row.uploadCount), uploadBytes: Number(row.uploadBytes) };
  }

  it.each([
    10, 30,
  ])('gives %i simultaneous uploads of one name (different content) each its own suffix', async (count) => {
    const uploader = await board.userWithToken(`namer${count}`);
    const fileCountBefore = await areaFileCount();
    const size = 2000;
    const answers = await Promise.all(
      Array.from({ length: count }, () => postUpload(uploader.auth, filePart(`x${count}.zip`, randomBytes(size)))),
    );

    expect(answers.filter((answer) => answer.status !== 201)).toEqual([]);
    const names = answers.map((answer) => answer.body.fileName).sort();
    const expected = [`x${count}.zip`, ...Array.from({ length: count - 1 }, (_, i) => `x${count} (${i + 2}).zip`)];
    expect(names).toEqual(expected.sort());
    expect(new Set(answers.map((answer) => answer.body.fileId)).size).toBe(count);
    expect(await areaFileCount()).toBe(fileCountBefore + count);
    expect(await uploadCounters(uploader.userId)).toEqual({ uploadCount: count, uploadBytes: count * size });
    // Every temp file was renamed to its fileId: nothing in progress remains.
    expect(storageEntries(board).filter((name) => name.startsWith('.upload-'))).toEqual([]);
  });

  it('stores 10 simultaneous uploads of the same content once: one 201, nine 409 naming its fileId', async () => {
    const uploader = await board.userWithToken('twin');
    const fileCountBefore = await areaFileCount();
    const entriesBefore = storageEntries(board);
    const content = randomBytes(3000);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, index) => postUpload(uploader.auth, filePart(`twin-${index}.bin`, content))),
    );

    const created = answers.filter((answer) => answer.status === 201);
    expect(created).toHaveLength(1);
    const fileId = created[0]?.body.fileId;
    const conflicts = answers.filter((answer) => answer.status === 409);
    expect(conflicts).toHaveLength(9);
    for (const conflict of conflicts) {
      expect(conflict.body.detail).toBe(`The same file is already in file area "${AREA}" as fileId ${fileId}.`);
    }
    expect(await areaFileCount()).toBe(fileCountBefore + 1);
    expect(await uploadCounters(uploader.userId)).toEqual({ uploadCount: 1, uploadBytes: 3000 });
    // One stored file, no temp files of the refused nine.
    expect(storageEntries(board)).toEqual([...entriesBefore, String(fileId)].sort());
  });
});
