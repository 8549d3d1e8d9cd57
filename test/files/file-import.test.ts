import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestReceivedFile } from '../../src/files/file-import.js';
import { createFileStorage, type FileStorage, INCOMING_DIRECTORY } from '../../src/files/file-storage.js';
import type { FileStore } from '../../src/files/file-store.js';
import { fakeClock } from '../support/test-board.js';

describe('ingestReceivedFile', () => {
  let directory: string;
  /** Stored files and uploads in progress alike. */
  const storedFiles = () => [
    ...readdirSync(directory).filter((name) => name !== INCOMING_DIRECTORY),
    ...readdirSync(path.join(directory, INCOMING_DIRECTORY)),
  ];
  let storage: FileStorage;
  const clock = fakeClock();

  beforeEach(async () => {
    directory = mkdtempSync(path.join(tmpdir(), 'baud-ingest-'));
    storage = createFileStorage({ main: directory }, { clock, tempGraceMs: 0 });
    await storage.ensureDirectories();
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  const receive = () => storage.receive('main', Readable.from([Buffer.from('some bytes')]), 1000);

  it('removes the already renamed file when the transaction fails after the rename', async () => {
    const failingStore = {
      async insertFile(_file: unknown, afterInsert: (fileId: number) => Promise<void>) {
        await afterInsert(5);
        expect(storedFiles()).toEqual(['5']);
        throw new Error('commit failed');
      },
    } as unknown as FileStore;
    const input = { areaTag: 'a', received: await receive(), clientFileName: 'x.txt', uploadByUserId: null };
    await expect(
      ingestReceivedFile({ store: failingStore, storage, clock, onStored: async () => {} }, input),
    ).rejects.toThrow('commit failed');
    expect(storedFiles()).toEqual([]);
  });

  it('removes the temp file when the insert fails before the rename', async () => {
    const failingStore = {
      async insertFile() {
        throw new Error('insert failed');
      },
    } as unknown as FileStore;
    const input = { areaTag: 'a', received: await receive(), clientFileName: 'x.txt', uploadByUserId: null };
    await expect(
      ingestReceivedFile({ store: failingStore, storage, clock, onStored: async () => {} }, input),
    ).rejects.toThrow('insert failed');
    expect(storedFiles()).toEqual([]);
  });
});
