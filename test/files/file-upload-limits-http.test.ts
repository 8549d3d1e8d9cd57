import { randomBytes } from 'node:crypto';
import { utimesSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { openBoard } from '../../src/board.js';
import { INCOMING_DIRECTORY } from '../../src/files/file-storage.js';
import { API, createFileTestBoard, filePart, storageDir, storageEntries, upload } from '../support/file-board.js';
import { buildMultipart } from '../support/multipart.js';
import type { TestBoard } from '../support/test-board.js';
import { describeEachDialect } from '../support/test-board.js';

describeEachDialect('file upload limits', (dialect) => {
  let board: TestBoard;
  let user: { userId: number; auth: { authorization: string } };
  beforeAll(async () => {
    // A small upload limit and a JSON bodyLimit above it: the upload must be cut by the former.
    board = await createFileTestBoard(dialect, {
      fileBase: { maxUploadBytes: 1024 },
      config: { contentServers: { web: { bodyLimitBytes: 4096 } } },
    });
    user = await board.userWithToken('alice');
  });
  afterAll(() => board.close());

  it('accepts a file of exactly maxUploadBytes', async () => {
    const response = await upload(board, 'public_files', filePart('exact.bin', randomBytes(1024)), user.auth);
    expect(response.statusCode).toBe(201);
    expect(response.json().byteSize).toBe(1024);
  });

  it('answers 413 one byte over the limit and leaves no file or temp behind', async () => {
    const before = storageEntries(board);
    const response = await upload(board, 'public_files', filePart('big.bin', randomBytes(1025)), user.auth);
    expect(response.statusCode).toBe(413);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(response.json()).toMatchObject({ status: 413, title: 'Payload Too Large' });
    expect(storageEntries(board)).toEqual(before);
  });

  it('answers 413 for a file far over the limit (and over bodyLimit)', async () => {
    const before = storageEntries(board);
    const response = await upload(board, 'public_files', filePart('huge.bin', randomBytes(100_000)), user.auth);
    expect(response.statusCode).toBe(413);
    expect(storageEntries(board)).toEqual(before);
    const files = (await board.app.inject({ method: 'GET', url: `${API}/files/areas/public_files/files` })).json();
    expect(files.data.map((file: { fileName: string }) => file.fileName)).toEqual(['exact.bin']);
  });

  it('refuses before reading the body: 401 for an anonymous upload', async () => {
    const response = await upload(board, 'public_files', filePart('anon.bin', randomBytes(10)));
    expect(response.statusCode).toBe(401);
  });

  it('leaves nothing behind when the client disconnects mid-upload', async () => {
    await board.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = board.app.server.address() as AddressInfo;
    const before = storageEntries(board);
    // Under the limit, so only the disconnect can stop it.
    const { body, contentType } = buildMultipart(filePart('aborted.bin', randomBytes(1000)));
    const request = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: `${API}/files/areas/public_files`,
      headers: { 'content-type': contentType, 'content-length': body.length, ...user.auth },
    });
    request.on('error', () => {});
    request.write(body.subarray(0, Math.floor(body.length / 2)));
    // Wait until the server has opened the temp file, then drop the connection.
    await vi.waitFor(() => expect(storageEntries(board).some((name) => name.startsWith('.upload-'))).toBe(true));
    request.destroy();
    await vi.waitFor(() => expect(storageEntries(board)).toEqual(before));
    const files = (await board.app.inject({ method: 'GET', url: `${API}/files/areas/public_files/files` })).json();
    expect(files.data.map((file: { fileName: string }) => file.fileName)).toEqual(['exact.bin']);
  });

  it('removes temp files older than the grace period at start-up, keeps fresh ones', async () => {
    const directory = path.join(storageDir(board, 'main'), INCOMING_DIRECTORY);
    const stale = path.join(directory, '.upload-stale.part');
    const fresh = path.join(directory, '.upload-fresh.part');
    writeFileSync(stale, 'left by a crash');
    writeFileSync(fresh, 'another node is receiving this');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600 * 1000);
    utimesSync(stale, twoHoursAgo, twoHoursAgo);
    const restarted = await openBoard(board.config);
    try {
      const entries = storageEntries(board);
      expect(entries).not.toContain('.upload-stale.part');
      expect(entries).toContain('.upload-fresh.part');
    } finally {
      await restarted.close();
    }
  });
});
