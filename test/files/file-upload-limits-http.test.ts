import { randomBytes } from 'node:crypto';
import { utimesSync, writeFileSync } from 'node:fs';
import http, { STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { openBoard } from '../../src/board.js';
import { INCOMING_DIRECTORY } from '../../src/files/file-storage.js';
import { UPLOAD_ENVELOPE_ALLOWANCE_BYTES } from '../../src/http/routes/file-routes.js';
import {
  API,
  createFileTestBoard,
  filePart,
  type RawUploadOutcome,
  rawUpload,
  storageDir,
  storageEntries,
  upload,
} from '../support/file-board.js';
import { buildMultipart, fileEnvelope } from '../support/multipart.js';
import { describeEachDialect, type TestBoard } from '../support/test-board.js';

const MAX_UPLOAD_BYTES = 1024;
// The whole body may hold this much: the file limit plus the room for fields and framing.
const MAX_BODY_BYTES = MAX_UPLOAD_BYTES + UPLOAD_ENVELOPE_ALLOWANCE_BYTES;
// What a server may have taken in beyond the byte that broke the limit before it answers: a
// socket read of 64 KiB, the request stream's 16 KiB buffer, chunks in flight. (The request line
// and headers, about 500 bytes, come on top: 1024 in the bounds below.)
const READ_AHEAD_BYTES = 128 * 1024;

/** The problem+json answer of a cut-off upload, and the connection closed after it. */
function expectCutOff(outcome: RawUploadOutcome, status: number, code: string, detail: string): void {
  expect(outcome.status).toBe(status);
  expect(outcome.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  expect(JSON.parse(outcome.body)).toEqual({
    type: `${API}/errors/${status}`,
    title: STATUS_CODES[status],
    status,
    detail,
    code,
  });
  expect(outcome.wasClosedByServer).toBe(true);
}

describeEachDialect('file upload limits', (dialect) => {
  let board: TestBoard;
  let user: { userId: number; auth: { authorization: string } };
  beforeAll(async () => {
    // A small upload limit and a JSON bodyLimit above it: the upload must be cut by the former.
    board = await createFileTestBoard(dialect, {
      fileBase: { maxUploadBytes: MAX_UPLOAD_BYTES },
      config: { contentServers: { web: { bodyLimitBytes: 4096 } } },
    });
    user = await board.userWithToken('alice');
    await board.app.listen({ port: 0, host: '127.0.0.1' });
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

  it('answers 413 to a Content-Length over the limit before reading a body byte, and closes', async () => {
    const before = storageEntries(board);
    const { contentType } = fileEnvelope('declared.bin');
    // The client announces 10 MiB and waits before sending any of it: only the header can decide.
    const outcome = await rawUpload(
      board,
      'public_files',
      { 'content-type': contentType, 'content-length': 10 * 1024 * 1024, ...user.auth },
      (_write, answered) => answered,
    );
    expectCutOff(
      outcome,
      413,
      'file.too-large',
      `The upload is larger than ${MAX_BODY_BYTES} bytes (the file limit plus room for the form fields).`,
    );
    expect(outcome.bodyBytesWritten).toBe(0);
    // The request line and headers only (about 500 bytes).
    expect(outcome.serverBytesRead).toBeLessThan(1024);
    expect(outcome.serverBytesReadAtAnswer).toBe(outcome.serverBytesRead);
    expect(storageEntries(board)).toEqual(before);
  });

  it('cuts off a client that keeps sending after the 413, after 2 s of dropping its bytes', async () => {
    const { head, contentType } = fileEnvelope('stubborn.bin');
    const startedMs = performance.now();
    const outcome = await rawUpload(
      board,
      'public_files',
      { 'content-type': contentType, 'content-length': 10 * 1024 * 1024, ...user.auth },
      async (write) => {
        if (!(await write(head))) return;
        // 4 KiB every 10 ms, never reading: 10 MiB would take 25 s.
        for (let sent = 0; sent < 10 * 1024 * 1024; sent += 4096) {
          await delay(10);
          if (!(await write(randomBytes(4096)))) return;
        }
      },
      { keepsSendingAfterAnswer: true },
    );
    expect(outcome.status).toBe(413);
    expect(outcome.wasClosedByServer).toBe(true);
    expect(performance.now() - startedMs).toBeLessThan(10_000);
    // About 2 s × 400 KiB/s, and never more than the 1 MiB a lingering close drops.
    expect(outcome.serverBytesRead).toBeLessThan(1024 + head.length + 1024 * 1024);
  });

  it('cuts off a client that blasts on after the 413 once it sent 1 MiB more', async () => {
    const { head, contentType } = fileEnvelope('blaster.bin');
    const chunk = Buffer.alloc(256 * 1024, 0x62);
    const declaredBytes = 64 * 1024 * 1024;
    const outcome = await rawUpload(
      board,
      'public_files',
      { 'content-type': contentType, 'content-length': declaredBytes, ...user.auth },
      async (write) => {
        if (!(await write(head))) return;
        for (let sent = 0; sent < declaredBytes; sent += chunk.length) {
          if (!(await write(chunk))) return;
        }
      },
      { keepsSendingAfterAnswer: true },
    );
    expect(outcome.status).toBe(413);
    expect(outcome.wasClosedByServer).toBe(true);
    // The dropped MiB, plus one socket read and the request's buffer: not the 64 MiB sent.
    expect(outcome.serverBytesRead).toBeLessThan(1024 * 1024 + READ_AHEAD_BYTES + 1024);
  });

  it('cuts a chunked upload off right after the file limit: 413, connection closed, nothing kept', async () => {
    const before = storageEntries(board);
    const { head, contentType } = fileEnvelope('endless.bin');
    const outcome = await rawUpload(
      board,
      'public_files',
      { 'content-type': contentType, 'transfer-encoding': 'chunked', ...user.auth },
      async (write) => {
        if (!(await write(head))) return;
        // 16 MiB, many times the limit, unless the server stops it.
        for (let sent = 0; sent < 16 * 1024 * 1024; sent += 16 * 1024) {
          if (!(await write(randomBytes(16 * 1024)))) return;
          await delay(2);
        }
      },
    );
    expectCutOff(outcome, 413, 'file.too-large', `The file is larger than the limit of ${MAX_UPLOAD_BYTES} bytes.`);
    expect(outcome.serverBytesReadAtAnswer).toBeLessThanOrEqual(
      1024 + MAX_UPLOAD_BYTES + head.length + READ_AHEAD_BYTES,
    );
    expect(storageEntries(board)).toEqual(before);
  });

  it('cuts a chunked body off once its bytes pass the limit even when no part ever starts', async () => {
    const before = storageEntries(board);
    const { contentType } = fileEnvelope('never.bin');
    // Bytes before the first boundary: the multipart parser skips them, only the byte count can stop them.
    const outcome = await rawUpload(
      board,
      'public_files',
      { 'content-type': contentType, 'transfer-encoding': 'chunked', ...user.auth },
      async (write) => {
        for (let sent = 0; sent < 16 * 1024 * 1024; sent += 16 * 1024) {
          if (!(await write(Buffer.alloc(16 * 1024, 0x2e)))) return;
          await delay(1);
        }
      },
    );
    expectCutOff(
      outcome,
      413,
      'file.too-large',
      `The upload is larger than ${MAX_BODY_BYTES} bytes (the file limit plus room for the form fields).`,
    );
    expect(outcome.serverBytesReadAtAnswer).toBeGreaterThan(MAX_BODY_BYTES);
    expect(outcome.serverBytesReadAtAnswer).toBeLessThanOrEqual(1024 + MAX_BODY_BYTES + READ_AHEAD_BYTES);
    expect(storageEntries(board)).toEqual(before);
  });

  it('refuses before reading the body: 401 for an anonymous upload', async () => {
    const response = await upload(board, 'public_files', filePart('anon.bin', randomBytes(10)));
    expect(response.statusCode).toBe(401);
  });

  it('leaves nothing behind when the client disconnects mid-upload', async () => {
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

describeEachDialect('stalled uploads', (dialect) => {
  let board: TestBoard;
  let user: { userId: number; auth: { authorization: string } };
  const temps = () => storageEntries(board).filter((name) => name.startsWith('.upload-'));
  beforeAll(async () => {
    board = await createFileTestBoard(dialect, {
      config: { contentServers: { web: { uploadIdleTimeoutSeconds: 1 } } },
    });
    user = await board.userWithToken('alice');
    await board.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => board.close());

  it('answers 408 after 1 s without a byte mid-file, and removes the temp file', async () => {
    const before = storageEntries(board);
    const { head, contentType } = fileEnvelope('stalled.bin');
    let lastByteMs = 0;
    let answerMs = 0;
    const outcome = await rawUpload(
      board,
      'public_files',
      { 'content-type': contentType, 'content-length': 100_000, ...user.auth },
      async (write, answered) => {
        await write(head);
        await write(randomBytes(5000));
        lastByteMs = performance.now();
        // The upload is under way: its bytes are going to a temp file.
        await vi.waitFor(() => expect(temps()).toHaveLength(1));
        await answered;
        answerMs = performance.now();
      },
    );
    expectCutOff(outcome, 408, 'request.timeout', 'The upload sent no data for 1 s.');
    expect(answerMs - lastByteMs).toBeGreaterThanOrEqual(950);
    expect(storageEntries(board)).toEqual(before);
    const files = await board.app.inject({ method: 'GET', url: `${API}/files/areas/public_files/files` });
    expect(files.json().data).toEqual([]);
  });

  it('answers 408 when the body never starts', async () => {
    const before = storageEntries(board);
    const { contentType } = fileEnvelope('never-sent.bin');
    const outcome = await rawUpload(
      board,
      'public_files',
      { 'content-type': contentType, 'content-length': 5000, ...user.auth },
      (_write, answered) => answered,
    );
    expectCutOff(outcome, 408, 'request.timeout', 'The upload sent no data for 1 s.');
    expect(outcome.serverBytesRead).toBeLessThan(1024);
    expect(storageEntries(board)).toEqual(before);
  });

  it('lets an upload that is slow but never silent for 1 s finish: 201', async () => {
    const content = randomBytes(3000);
    const { head, tail, contentType } = fileEnvelope('slow-but-steady.bin');
    const outcome = await rawUpload(
      board,
      'public_files',
      { 'content-type': contentType, 'content-length': head.length + content.length + tail.length, ...user.auth },
      async (write) => {
        await write(head);
        // Six pieces 400 ms apart: 2.4 s in all, never 1 s silent.
        for (let offset = 0; offset < content.length; offset += 500) {
          await delay(400);
          await write(content.subarray(offset, offset + 500));
        }
        await write(tail);
      },
    );
    expect(outcome.status).toBe(201);
    expect(JSON.parse(outcome.body)).toMatchObject({ fileName: 'slow-but-steady.bin', byteSize: 3000 });
    expect(outcome.wasClosedByServer).toBe(false);
    expect(temps()).toEqual([]);
  });
});
