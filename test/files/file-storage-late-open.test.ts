import { randomBytes } from 'node:crypto';
import fs, { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { Busboy } from '@fastify/busboy';
import { afterEach, expect, it, vi } from 'vitest';
import { PayloadTooLargeError } from '../../src/errors.js';
import { createFileStorage, INCOMING_DIRECTORY } from '../../src/files/file-storage.js';
import { buildMultipart } from '../support/multipart.js';
import { fakeClock } from '../support/test-board.js';

type OpenFunction = (
  path: fs.PathLike,
  flags: fs.OpenMode,
  mode: fs.Mode | undefined,
  callback: (error: NodeJS.ErrnoException | null, fd: number) => void,
) => void;

/** When set, each write stream file storage creates opens its file through the function this makes for it. */
const sinkOpen = vi.hoisted(() => ({ current: null as ((sink: { destroyed: boolean }) => OpenFunction) | null }));

vi.mock('node:fs', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs')>();
  const createWriteStream: typeof original.createWriteStream = (target, options) => {
    const openerFor = sinkOpen.current;
    if (openerFor === null || typeof options !== 'object') return original.createWriteStream(target, options);
    const sink = { destroyed: false };
    const stream = original.createWriteStream(target, { ...options, fs: { ...original, open: openerFor(sink) } });
    Object.defineProperty(sink, 'destroyed', { get: () => stream.destroyed });
    return stream;
  };
  return { ...original, default: { ...original, createWriteStream }, createWriteStream };
});

let root = '';
afterEach(() => {
  sinkOpen.current = null;
  if (root !== '') rmSync(root, { recursive: true, force: true });
});

// Found by the fuzz suite on a loaded machine: Node's pipeline() settles once the failing
// streams are done, before the temp file's write stream has finished opening; that open then
// created the temp file after receive() had removed it, and every refused upload could leave
// an empty `.upload-*.part` behind until the next start-up sweep.
it('leaves no temp file when the upload fails before its temp file has finished opening', async () => {
  root = mkdtempSync(path.join(tmpdir(), 'baud-storage-late-open-'));
  const storage = createFileStorage({ main: root }, { clock: fakeClock(new Date()), tempGraceMs: 60_000 });
  await storage.ensureDirectories();
  const { body, contentType } = buildMultipart([{ name: 'file', fileName: 'big.bin', value: randomBytes(2000) }]);
  const parser = new Busboy({ headers: { 'content-type': contentType } });
  const source = await new Promise<Readable>((resolve) => {
    parser.on('file', (_name: string, file: Readable) => resolve(file));
    parser.end(body);
  });
  let hasOpened!: () => void;
  const opened = new Promise<void>((resolve) => {
    hasOpened = resolve;
  });
  let hasSettled = false;
  // The open waits until receive() has settled — as a busy thread pool can make it wait — or,
  // where receive() waits for it, until the failed pipeline has torn the sink and the source
  // down and ten more turns of the event loop have passed.
  sinkOpen.current = (sink) => (target, flags, mode, callback) => {
    void (async () => {
      let turnsSinceTornDown = 0;
      while (!hasSettled && !(sink.destroyed && source.closed && ++turnsSinceTornDown > 10)) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      fs.open(target, flags, mode, (error, fd) => {
        callback(error, fd);
        hasOpened();
      });
    })();
  };

  const receiving = storage.receive('main', source, 1000);
  void receiving
    .catch(() => {})
    .finally(() => {
      hasSettled = true;
    });
  await expect(receiving).rejects.toBeInstanceOf(PayloadTooLargeError);
  await opened;
  expect(readdirSync(path.join(root, INCOMING_DIRECTORY))).toEqual([]);
});
