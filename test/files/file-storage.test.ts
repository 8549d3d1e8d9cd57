import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PayloadTooLargeError } from '../../src/errors.js';
import { createFileStorage, type FileStorage, INCOMING_DIRECTORY } from '../../src/files/file-storage.js';
import { fakeClock } from '../support/test-board.js';

describe('file storage', () => {
  let root: string;
  let directory: string;
  /** Stored files and uploads in progress, as one sorted list. */
  const entries = () =>
    [
      ...readdirSync(directory).filter((name) => name !== INCOMING_DIRECTORY),
      ...readdirSync(path.join(directory, INCOMING_DIRECTORY)),
    ].sort();
  let storage: FileStorage;
  const clock = fakeClock(new Date());

  beforeEach(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'baud-storage-'));
    directory = path.join(root, 'nested', 'main');
    storage = createFileStorage({ main: directory }, { clock, tempGraceMs: 60_000 });
    await storage.ensureDirectories();
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('creates missing directories', () => {
    expect(existsSync(directory)).toBe(true);
  });

  it('receives a stream with its size, sha256 and head, and commits it under the fileId', async () => {
    const content = randomBytes(300_000);
    const received = await storage.receive(
      'main',
      Readable.from([content.subarray(0, 1000), content.subarray(1000)]),
      1e6,
    );
    expect(received.byteSize).toBe(300_000);
    expect(received.sha256).toBe(createHash('sha256').update(content).digest('hex'));
    expect(received.head.equals(content.subarray(0, 265))).toBe(true);
    expect(path.basename(received.tempPath)).toMatch(/^\.upload-[0-9a-f-]{36}\.part$/);
    await storage.commit(received, 42);
    expect(entries()).toEqual(['42']);
    expect(readFileSync(path.join(directory, '42')).equals(content)).toBe(true);
  });

  it('aborts past maxBytes with PayloadTooLargeError and removes the temp file', async () => {
    const source = Readable.from([randomBytes(600), randomBytes(600)]);
    await expect(storage.receive('main', source, 1000)).rejects.toBeInstanceOf(PayloadTooLargeError);
    expect(entries()).toEqual([]);
  });

  it('removes the temp file when the source fails', async () => {
    const source = new Readable({
      read() {
        this.push(randomBytes(100));
        this.destroy(new Error('client went away'));
      },
    });
    await expect(storage.receive('main', source, 1000)).rejects.toThrow('client went away');
    expect(entries()).toEqual([]);
  });

  it('opens whole files and inclusive ranges, and null for a missing file', async () => {
    const received = await storage.receive('main', Readable.from([Buffer.from('0123456789')]), 100);
    await storage.commit(received, 7);
    const whole = await storage.open('main', 7);
    expect(whole && (await text(whole))).toBe('0123456789');
    const range = await storage.open('main', 7, { start: 2, end: 4 });
    expect(range && (await text(range))).toBe('234');
    expect(await storage.open('main', 8)).toBeNull();
    await storage.remove('main', 7);
    await storage.remove('main', 7);
    expect(entries()).toEqual([]);
  });

  it('removes only temp files older than the grace period', async () => {
    const old = path.join(directory, INCOMING_DIRECTORY, '.upload-old.part');
    const young = path.join(directory, INCOMING_DIRECTORY, '.upload-young.part');
    writeFileSync(old, 'x');
    writeFileSync(young, 'x');
    writeFileSync(path.join(directory, '12'), 'a stored file');
    const longAgo = new Date(clock.now().getTime() - 120_000);
    utimesSync(old, longAgo, longAgo);
    expect(await storage.removeLeftoverTemps()).toBe(1);
    expect(entries()).toEqual(['.upload-young.part', '12']);
  });

  it('refuses unknown storage tags and invalid file ids', async () => {
    expect(() => storage.pathOf('nope', 1)).toThrow('unknown storage tag');
    expect(() => storage.pathOf('main', 0)).toThrow('invalid fileId');
  });
});
