import { cpSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database as BaudDatabase, migrateToLatest, openDatabase } from '../../src/db/database.js';
import { importEnigmaBoard } from '../../src/enigma/enigma-import.js';
import { EnigmaSource } from '../../src/enigma/enigma-source.js';
import { ENIGMA_FIXTURE } from '../support/enigma-synthetic.js';

/** Issue 21: what the import does with rows baud cannot serve as they are — reported, never dropped silently. */
describe('baud import enigma, odd rows', () => {
  let dir: string;
  let source: EnigmaSource;
  let database: BaudDatabase;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-enigma-edges-'));
    const board = path.join(dir, 'enigma');
    cpSync(ENIGMA_FIXTURE, board, { recursive: true });
    const users = new Database(path.join(board, 'db', 'user.sqlite3'));
    users.prepare("INSERT INTO user (id, user_name) VALUES (7, 'ALICE')").run();
    users.close();
    const messages = new Database(path.join(board, 'db', 'message.sqlite3'));
    messages
      .prepare(
        `INSERT INTO message (message_id, area_tag, message_uuid, reply_to_message_id, to_user_name, from_user_name,
           subject, message, modified_timestamp) VALUES (9001, 'ghost_area', '9b1a4c3e-0000-4000-8000-000000009001', 0,
           'All', 'sysop', 'Lost', 'In an area the config forgot.', '2026-11-20T10:00:00.000+00:00')`,
      )
      .run();
    messages
      .prepare(
        `INSERT INTO message (message_id, area_tag, message_uuid, reply_to_message_id, to_user_name, from_user_name,
           subject, message, modified_timestamp) VALUES (9002, 'pub_small', '9b1a4c3e-0000-4000-8000-000000009002', 8999,
           'All', 'sysop', 'Orphan', 'Replies to nothing.', '2026-11-20T11:00:00.000+00:00')`,
      )
      .run();
    messages.close();
    const files = new Database(path.join(board, 'db', 'file.sqlite3'));
    files
      .prepare(
        `INSERT INTO file (file_id, area_tag, file_sha256, file_name, storage_tag, desc, desc_long, upload_timestamp)
         SELECT 900, 'ghost_files', file_sha256, file_name, storage_tag, desc, desc_long, upload_timestamp FROM file WHERE file_id = 26`,
      )
      .run();
    files.close();
    source = EnigmaSource.open(board);
    database = await openDatabase('sqlite::memory:');
    await migrateToLatest(database);
  });
  afterAll(async () => {
    source.close();
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports a name twin, a message outside every area, an orphan reply and a file outside every area', async () => {
    const storage = { pub_files: path.join(dir, 'store', 'pub'), member_uploads: path.join(dir, 'store', 'members') };
    for (const directory of Object.values(storage)) mkdirSync(directory, { recursive: true });
    const summary = await importEnigmaBoard(source, database, {
      dryRun: false,
      link: false,
      storageDirectories: storage,
      now: () => new Date('2026-11-24T12:00:00.000Z'),
    });
    expect(summary.counts.users).toMatchObject({ found: 7, imported: 6, skipped: 1 });
    expect(summary.counts.messages).toMatchObject({ found: 2184, imported: 2184 });
    expect(summary.counts.files).toMatchObject({ found: 32, imported: 30, skipped: 2 });
    expect(summary.skipped).toEqual(
      expect.arrayContaining([
        {
          kind: 'users',
          reason: 'the same name as an earlier user but for letter case (baud tells them apart without case)',
          count: 1,
        },
        {
          kind: 'messages',
          reason: 'area "ghost_area" is not in ENiGMA½\'s configuration: kept, not served',
          count: 1,
        },
        {
          kind: 'messages',
          reason: 'replies to a message that is missing or in another area: kept as a thread of its own',
          count: 1,
        },
        { kind: 'files', reason: 'file area "ghost_files" is not in ENiGMA½\'s configuration', count: 1 },
      ]),
    );
    const orphan = await database.db
      .selectFrom('messages')
      .select(['replyToMessageId', 'threadRootId'])
      .where('id', '=', 9002)
      .executeTakeFirstOrThrow();
    expect(orphan).toEqual({ replyToMessageId: null, threadRootId: 9002 });
  });

  it('hard-links the files with --link: the stored file is the ENiGMA½ file itself', async () => {
    const linked = await openDatabase('sqlite::memory:');
    try {
      await migrateToLatest(linked);
      const storage = {
        pub_files: path.join(dir, 'linked', 'pub'),
        member_uploads: path.join(dir, 'linked', 'members'),
      };
      for (const directory of Object.values(storage)) mkdirSync(directory, { recursive: true });
      const summary = await importEnigmaBoard(source, linked, {
        dryRun: false,
        link: true,
        storageDirectories: storage,
      });
      expect(summary.counts.files.imported).toBe(30);
      const original = statSync(path.join(source.dir, 'file_base', 'pub_files', 'starfall12.zip'));
      const stored = statSync(path.join(storage.pub_files, '24'));
      expect(stored.ino).toBe(original.ino);
      expect(stored.nlink).toBeGreaterThanOrEqual(2);
    } finally {
      await linked.close();
    }
  });
});
