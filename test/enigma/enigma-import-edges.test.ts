import { cpSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database as BaudDatabase, migrateToLatest, openDatabase } from '../../src/db/database.js';
import { importEnigmaBoard } from '../../src/enigma/enigma-import.js';
import { EnigmaSource } from '../../src/enigma/enigma-source.js';
import { copyEnigmaFileRow, createEnigmaCopies, enigmaMessageInsert } from '../support/enigma-copies.js';
import { ENIGMA_FIXTURE } from '../support/enigma-synthetic.js';
import { describeEachDialect } from '../support/test-board.js';

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

/** Review of `baud import enigma`: sources that must never leak, escape, crash or mix up accounts. */
describeEachDialect('baud import enigma, hostile and awkward sources', (dialect) => {
  let copies: ReturnType<typeof createEnigmaCopies>;
  let dir: string;
  beforeAll(() => {
    copies = createEnigmaCopies(dialect, 'baud-enigma-hostile-');
    dir = copies.dir;
  });
  afterAll(() => copies.cleanUp());

  const sourceCopy: ReturnType<typeof createEnigmaCopies>['sourceCopy'] = (name, change) =>
    copies.sourceCopy(name, change);
  const freshDatabase = () => copies.freshDatabase();
  const storageOf = (name: string) => copies.storageOf(name);
  const run = (source: EnigmaSource, database: BaudDatabase, name: string, batchSize?: number) =>
    copies.run(source, database, name, batchSize === undefined ? {} : { batchSize });
  const insertMessage = enigmaMessageInsert;
  const THREAD_NOTE = {
    kind: 'messages',
    reason: 'replies to a message that is missing or in another area: kept as a thread of its own',
  };

  it('starts a thread of its own for a reply whose parent, batches back, is private mail or in another area', async () => {
    const source = sourceCopy('cross-area', (db) => {
      db.message.prepare(insertMessage(9101, 'pub_small', 2169)).run(); // 2169: private mail
      db.message.prepare(insertMessage(9102, 'pub_small', 2106)).run(); // 2106: pub_secret_stuff
    });
    const database = await freshDatabase();
    // Batches of 12 of the fixture's 2,182 messages and the two replies: the replies' batch (from
    // 2173 on) holds neither parent. Batches of 2 took 17 s on PostgreSQL for the same check.
    const summary = await run(source, database, 'cross-area', 12);
    const replies = await database.db
      .selectFrom('messages')
      .select(['id', 'replyToMessageId', 'threadRootId'])
      .where('id', 'in', [9101, 9102])
      .orderBy('id')
      .execute();
    expect(replies).toEqual([
      { id: 9101, replyToMessageId: null, threadRootId: 9101 },
      { id: 9102, replyToMessageId: null, threadRootId: 9102 },
    ]);
    expect(summary.skipped).toContainEqual({ ...THREAD_NOTE, count: 2 });
  });

  it('places a new reply under its parent stored by an earlier run, in the same batch window', async () => {
    const database = await freshDatabase();
    await run(
      sourceCopy('rerun-1', () => {}),
      database,
      'rerun',
    );
    const source = sourceCopy('rerun-2', (db) => db.message.prepare(insertMessage(2183, 'pub_small', 2101)).run());
    const summary = await run(source, database, 'rerun');
    expect(summary.counts.messages).toMatchObject({ imported: 1, alreadyThere: 2182 });
    const reply = await database.db
      .selectFrom('messages')
      .select(['replyToMessageId', 'threadRootId'])
      .where('id', '=', 2183)
      .executeTakeFirstOrThrow();
    const parent = await database.db
      .selectFrom('messages')
      .select('threadRootId')
      .where('id', '=', 2101)
      .executeTakeFirstOrThrow();
    expect(reply).toEqual({ replyToMessageId: 2101, threadRootId: parent.threadRootId });
  });

  it('never reads a file outside its storage directory, or a directory, and goes on after one that fails', async () => {
    const secret = path.join(dir, 'host-secret.txt');
    writeFileSync(secret, 'the host’s secret');
    const source = sourceCopy('escape', (db) => {
      const copy = (id: number, relPath: string | null, fileName: string) =>
        copyEnigmaFileRow(db.file, id, relPath, fileName);
      copy(901, '../../..', 'host-secret.txt');
      copy(902, null, secret);
      copy(903, null, '../../../host-secret.txt');
      copy(904, null, '');
    });
    const database = await freshDatabase();
    const storage = storageOf('escape');
    // A leftover directory where file 24's bytes go: placing them fails, for that file only.
    mkdirSync(path.join(storage.pub_files, '24', 'leftover'), { recursive: true });
    const summary = await importEnigmaBoard(source, database, {
      dryRun: false,
      link: false,
      storageDirectories: storage,
    });
    expect(summary.counts.files).toMatchObject({ found: 35, imported: 29, skipped: 6 });
    expect(summary.skipped).toContainEqual({
      kind: 'files',
      reason: 'its path leads outside its storage directory',
      count: 3,
    });
    expect(summary.skipped).toContainEqual({ kind: 'files', reason: 'its path is not a regular file', count: 1 });
    expect(summary.skipped).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: 'files',
          reason: expect.stringMatching(/^its bytes could not be placed: E[A-Z]+$/),
        }),
      ]),
    );
    const stored = await database.db
      .selectFrom('files')
      .select('id')
      .where('id', 'in', [24, 901, 902, 903, 904])
      .execute();
    expect(stored).toEqual([]);
  });

  it('stores a safe file name, and a second file of the same name in an area under a free one', async () => {
    const source = sourceCopy('names', (db) => {
      const copy = (id: number, relPath: string | null, fileName: string) =>
        copyEnigmaFileRow(db.file, id, relPath, fileName);
      copy(905, 'more', 'bbs-etiquette.txt');
      copy(906, 'more', 'evil\u202Etxt.exe');
    });
    mkdirSync(path.join(source.dir, 'file_base', 'pub_files', 'more'));
    writeFileSync(path.join(source.dir, 'file_base', 'pub_files', 'more', 'bbs-etiquette.txt'), 'other rules');
    writeFileSync(path.join(source.dir, 'file_base', 'pub_files', 'more', 'evil\u202Etxt.exe'), 'not a text');
    const database = await freshDatabase();
    const summary = await run(source, database, 'names');
    expect(summary.counts.files).toMatchObject({ found: 33, imported: 32 });
    const names = await database.db
      .selectFrom('files')
      .select(['id', 'fileName'])
      .where('id', 'in', [26, 905, 906])
      .orderBy('id')
      .execute();
    expect(names).toEqual([
      { id: 26, fileName: 'bbs-etiquette.txt' },
      { id: 905, fileName: 'bbs-etiquette (2).txt' },
      { id: 906, fileName: 'eviltxt.exe' },
    ]);
    expect(summary.skipped).toContainEqual({
      kind: 'files',
      reason: 'the name of another file of its area: stored with a " (n)" suffix',
      count: 1,
    });
  });

  it('strips NUL from text, clamps huge counters and inserts 17,500 logins', async () => {
    const source = sourceCopy('crash', (db) => {
      db.message.prepare(insertMessage(9201, 'pub_small', 0)).run();
      db.message.prepare('UPDATE message SET subject = ? WHERE message_id = 9201').run('Nul\u0000here');
      db.user
        .prepare("DELETE FROM user_property WHERE user_id = 3 AND prop_name IN ('login_count', 'real_name')")
        .run();
      const property = db.user.prepare('INSERT INTO user_property (user_id, prop_name, prop_value) VALUES (3, ?, ?)');
      property.run('login_count', '99999999999');
      property.run('real_name', 'Bob\u0000Real');
      const login = db.system.prepare(
        "INSERT INTO system_event_log (timestamp, log_name, log_value) VALUES (?, 'user_login_history', '{\"userId\":1}')",
      );
      db.system.transaction(() => {
        for (let n = 0; n < 17_500; n += 1) login.run(new Date(Date.UTC(2020, 0, 1) + n * 60_000).toISOString());
      })();
    });
    const database = await freshDatabase();
    const summary = await run(source, database, 'crash');
    expect(summary.counts.calls).toMatchObject({ found: 17_508, imported: 17_508 });
    const message = await database.db
      .selectFrom('messages')
      .select('subject')
      .where('id', '=', 9201)
      .executeTakeFirstOrThrow();
    expect(message.subject).toBe('Nulhere');
    const bob = await database.db
      .selectFrom('users')
      .select(['realName', 'loginCount'])
      .where('id', '=', 3)
      .executeTakeFirstOrThrow();
    expect(bob).toEqual({ realName: 'BobReal', loginCount: 2 ** 31 - 1 });
    expect(summary.skipped).toContainEqual({
      kind: 'messages',
      reason: 'NUL characters in its text: removed',
      count: 1,
    });
  });

  it('moves the id counters past the source’s ids first, so a post made while importing never takes one', async () => {
    const source = sourceCopy('counters', (db) => db.message.prepare(insertMessage(9301, 'pub_small', 0)).run());
    const database = await freshDatabase();
    let walkIn: Promise<number> | undefined;
    await importEnigmaBoard(source, database, {
      dryRun: false,
      link: false,
      storageDirectories: storageOf('counters'),
      batchSize: 1000,
      onProgress: ({ kind, done }) => {
        if (kind === 'messages' && done === 1000 && !walkIn) {
          walkIn = database.db
            .insertInto('users')
            .values({
              username: 'walkin',
              usernameKey: 'walkin',
              passwordHash: '!',
              properties: '{}',
              createdAt: '2026-11-24T12:00:00.000Z',
              credentialsChangedAt: '2026-11-24T12:00:00.000Z',
            })
            .returning('id')
            .executeTakeFirstOrThrow()
            .then((row) => row.id);
        }
      },
    });
    expect(await walkIn).toBeGreaterThan(6);
    const next = await database.db
      .insertInto('messages')
      .values({
        uuid: '9b1a4c3e-0000-4000-8000-00000000ffff',
        areaTag: 'pub_small',
        replyToMessageId: null,
        fromUserId: null,
        fromUserName: 'walkin',
        toUserName: 'All',
        subject: 'Hi',
        body: 'Hello',
        timestamp: '2026-11-24T12:00:00.000Z',
        threadRootId: 0,
        threadPath: '',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(next.id).toBe(9302);
  });

  it('reports ids the board gave to its own users and posts between runs, and attaches nothing to them', async () => {
    const database = await freshDatabase();
    await run(
      sourceCopy('served-1', () => {}),
      database,
      'served',
    );
    // The board is served: someone signs up (user 7) and posts (message 2183).
    const mallory = await database.db
      .insertInto('users')
      .values({
        username: 'mallory',
        usernameKey: 'mallory',
        passwordHash: '!',
        properties: '{}',
        createdAt: '2026-11-24T12:00:00.000Z',
        credentialsChangedAt: '2026-11-24T12:00:00.000Z',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(mallory.id).toBe(7);
    await database.db
      .insertInto('messages')
      .values({
        id: 2183,
        uuid: '9b1a4c3e-0000-4000-8000-00000000aaaa',
        areaTag: 'pub_small',
        replyToMessageId: null,
        fromUserId: 7,
        fromUserName: 'mallory',
        toUserName: 'All',
        subject: 'Mine',
        body: 'My post',
        timestamp: '2026-11-24T12:00:00.000Z',
        threadRootId: 2183,
        threadPath: '00000887',
      })
      .execute();
    // Meanwhile ENiGMA½ went on too: frank (7) signs up, makes a key and posts 2183.
    const source = sourceCopy('served-2', (db) => {
      db.user.prepare("INSERT INTO user (id, user_name) VALUES (7, 'frank')").run();
      db.user
        .prepare(
          `INSERT INTO api_keys (user_id, key_hash, label, scope, created_at, revoked) VALUES (7, ?, 'frank', 'read', '2026-11-24T12:00:00.000Z', 0)`,
        )
        .run('f'.repeat(64));
      db.message.prepare(insertMessage(2183, 'pub_small', 0, 'Frank’s')).run();
      db.message
        .prepare(
          "INSERT INTO message_meta (message_id, meta_category, meta_name, meta_value) VALUES (2183, 'System', 'local_from_user_id', '7')",
        )
        .run();
    });
    const summary = await run(source, database, 'served');
    expect(summary.counts.users).toMatchObject({ imported: 0, alreadyThere: 6, skipped: 1 });
    expect(summary.counts.apiKeys).toMatchObject({ imported: 0, skipped: 1 });
    expect(summary.counts.messages).toMatchObject({ imported: 0, alreadyThere: 2182, skipped: 1 });
    expect(summary.skipped).toEqual(
      expect.arrayContaining([
        { kind: 'users', reason: 'its id belongs to another account on the board', count: 1 },
        { kind: 'apiKeys', reason: 'its user is not on the board', count: 1 },
        { kind: 'messages', reason: 'its id belongs to another message on the board', count: 1 },
      ]),
    );
    expect(await database.db.selectFrom('apiKeys').select('id').where('userId', '=', 7).execute()).toEqual([]);
    const post = await database.db
      .selectFrom('messages')
      .select(['subject', 'fromUserId'])
      .where('id', '=', 2183)
      .executeTakeFirstOrThrow();
    expect(post).toEqual({ subject: 'Mine', fromUserId: 7 });
  });
});
