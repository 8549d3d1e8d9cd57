import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database as BaudDatabase } from '../../src/db/database.js';
import { API, createMessageTestBoard, type MessageTestBoard } from '../messages/message-fixture.js';
import { createEnigmaCopies, enigmaMessageInsert } from '../support/enigma-copies.js';
import { describeEachDialect, fakeClock } from '../support/test-board.js';

/** Every regular file under `dir`, with its text. */
function filesUnder(dir: string): Array<{ file: string; text: string }> {
  return readdirSync(dir, { withFileTypes: true, recursive: true }).flatMap((entry) => {
    const file = path.join(entry.parentPath, entry.name);
    return entry.isFile() || entry.isSymbolicLink() ? [{ file, text: readFileSync(file, 'utf8') }] : [];
  });
}

const storedIds = async (database: BaudDatabase, table: 'files' | 'messages' | 'users', ids: number[]) =>
  (await database.db.selectFrom(table).select('id').where('id', 'in', ids).orderBy('id').execute()).map(
    (row) => row.id,
  );

/** Issue 29: `baud import enigma` of an ENiGMA½ board written by an attacker. */
describeEachDialect('baud import enigma, hostile boards', (dialect) => {
  let copies: ReturnType<typeof createEnigmaCopies>;
  beforeAll(() => {
    copies = createEnigmaCopies(dialect, 'baud-enigma-hostile29-');
  });
  afterAll(() => copies.cleanUp());

  it.each([
    ['copied', false],
    ['hard-linked (--link)', true],
  ])('never imports a host file through a symbolic link when %s', async (_mode, link) => {
    const secretDir = path.join(copies.dir, `secrets-${link}`);
    mkdirSync(secretDir);
    writeFileSync(path.join(secretDir, 'host-secret.txt'), 'the host’s secret');
    const source = copies.sourceCopy(`links-${link}`, (db, board) => {
      const pubFiles = path.join(board, 'file_base', 'pub_files');
      symlinkSync(path.join(secretDir, 'host-secret.txt'), path.join(pubFiles, 'innocent.txt'));
      symlinkSync(secretDir, path.join(pubFiles, 'more'));
      // A link to a file of the base itself is refused too: a link is never what ENiGMA½ stored.
      symlinkSync(path.join(pubFiles, 'bbs-etiquette.txt'), path.join(pubFiles, 'etiquette-again.txt'));
      const copy = (id: number, relPath: string | null, fileName: string) =>
        db.file
          .prepare(
            `INSERT INTO file (file_id, area_tag, file_sha256, file_name, storage_tag, storage_tag_rel_path, desc, desc_long, upload_timestamp)
             SELECT ?, area_tag, ?, ?, storage_tag, ?, desc, desc_long, upload_timestamp FROM file WHERE file_id = 26`,
          )
          .run(id, `${'0'.repeat(60)}${id}`, fileName, relPath);
      copy(911, null, 'innocent.txt');
      copy(912, 'more', 'host-secret.txt');
      copy(913, null, 'more/host-secret.txt');
      copy(914, null, 'etiquette-again.txt');
    });
    const database = await copies.freshDatabase();
    const storage = copies.storageOf(`links-${link}`);
    const summary = await copies.run(source, database, `links-${link}`, { link });
    expect(summary.counts.files).toMatchObject({ found: 35, imported: 30, skipped: 5 });
    expect(summary.skipped).toContainEqual({ kind: 'files', reason: 'its file is a symbolic link', count: 2 });
    expect(summary.skipped).toContainEqual({
      kind: 'files',
      reason: 'its path goes through a symbolic link',
      count: 2,
    });
    expect(await storedIds(database, 'files', [911, 912, 913, 914])).toEqual([]);
    const stored = [...filesUnder(storage.pub_files), ...filesUnder(storage.member_uploads)];
    expect(stored).toHaveLength(30);
    expect(stored.filter(({ text }) => text.includes('the host’s secret'))).toEqual([]);
  });
});

/** What the import says of an id baud cannot keep (ids 1 to 2^30; see docs/migrating-from-enigma.md). */
const ID_RANGE_REASON = 'its id is outside 1 to 1,073,741,824, the ids baud keeps';

describeEachDialect('baud import enigma, ids out of range', (dialect) => {
  let copies: ReturnType<typeof createEnigmaCopies>;
  beforeAll(() => {
    copies = createEnigmaCopies(dialect, 'baud-enigma-ids-');
  });
  afterAll(() => copies.cleanUp());

  it('reports and skips rows whose ids are ≤ 0 or past 2^30, and the board goes on posting after the import', async () => {
    const hugeIds = [2n ** 53n - 1n, 2n ** 32n, 2n ** 31n, 2n ** 30n + 1n, 0n, -5n];
    const source = copies.sourceCopy('ids', (db) => {
      for (const id of hugeIds) db.message.prepare(enigmaMessageInsert(id, 'pub_small', 0n)).run();
      db.message.prepare(enigmaMessageInsert(9401, 'pub_small', 2n ** 53n - 1n)).run();
      db.message.prepare(enigmaMessageInsert(2n ** 30n, 'pub_small', 0n)).run();
      db.user.prepare("INSERT INTO user (id, user_name) VALUES (?, 'frank'), (?, 'grace')").run(2n ** 40n, -1n);
      db.user
        .prepare(
          `INSERT INTO api_keys (id, user_id, key_hash, label, scope, created_at, revoked) VALUES (?, 2, ?, 'far', 'read', '2026-11-24T12:00:00.000Z', 0)`,
        )
        .run(2n ** 45n, 'e'.repeat(64));
      db.file
        .prepare(
          `INSERT INTO file (file_id, area_tag, file_sha256, file_name, storage_tag, desc, desc_long, upload_timestamp)
           SELECT ?, area_tag, ?, file_name, storage_tag, desc, desc_long, upload_timestamp FROM file WHERE file_id = 26`,
        )
        .run(2n ** 35n, '0'.repeat(64));
      db.message
        .prepare(
          'INSERT INTO user_message_area_last_read (user_id, area_tag, message_id) VALUES (2, ?, ?), (3, ?, 2101)',
        )
        .run('pub_small', 2n ** 40n, 'pub_small');
    });
    const database = await copies.freshDatabase();
    const summary = await copies.run(source, database, 'ids');
    expect(summary.counts.messages).toMatchObject({ found: 2190, imported: 2184, skipped: 6 });
    expect(summary.counts.users).toMatchObject({ found: 8, imported: 6, skipped: 2 });
    expect(summary.counts.apiKeys).toMatchObject({ skipped: 1 });
    expect(summary.counts.files).toMatchObject({ found: 32, skipped: 2 });
    expect(summary.counts.pointers).toMatchObject({ found: 2, imported: 1, skipped: 1 });
    for (const [kind, count] of [
      ['messages', 6],
      ['users', 2],
      ['apiKeys', 1],
      ['files', 1],
      ['pointers', 1],
    ] as const) {
      expect(summary.skipped).toContainEqual({ kind, reason: ID_RANGE_REASON, count });
    }
    const kept = await database.db
      .selectFrom('messages')
      .select(['id', 'replyToMessageId', 'threadPath'])
      .where('id', 'in', [9401, 2 ** 30])
      .orderBy('id')
      .execute();
    expect(kept).toEqual([
      { id: 9401, replyToMessageId: null, threadPath: '000024b9' },
      { id: 2 ** 30, replyToMessageId: null, threadPath: '40000000' },
    ]);
    // The counter moved to the highest kept id, not past the column: the next post takes the next id.
    const next = await database.db
      .insertInto('messages')
      .values({
        uuid: '9b1a4c3e-0000-4000-8000-00000000ffff',
        areaTag: 'pub_small',
        replyToMessageId: null,
        fromUserId: null,
        fromUserName: 'sysop',
        toUserName: 'All',
        subject: 'After the move',
        body: 'Still posting.',
        timestamp: '2026-11-24T12:00:00.000Z',
        threadRootId: 0,
        threadPath: '',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(next.id).toBe(2 ** 30 + 1);
  });
});

describeEachDialect('posting when the message ids run out', (dialect) => {
  let board: MessageTestBoard;
  beforeAll(async () => {
    board = await createMessageTestBoard(dialect, fakeClock());
  });
  afterAll(() => board.close());

  const post = () =>
    board.app.inject({
      method: 'POST',
      url: `${API}/messages/areas/general/messages`,
      headers: board.alice.auth,
      payload: { subject: 'One more', message: 'Is there room?' },
    });

  it('answers 503 problem+json, every time, once the counter reaches the last id a message can have', async () => {
    // A board whose counter an earlier import (before ids were bounded) moved to the end.
    if (dialect === 'postgres') {
      await sql`SELECT setval(pg_get_serial_sequence('messages', 'id'), 2147483647, true)`.execute(board.board.db);
    } else {
      await sql`INSERT INTO sqlite_sequence (name, seq) SELECT 'messages', 0
                WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'messages')`.execute(board.board.db);
      await sql`UPDATE sqlite_sequence SET seq = 9007199254740991 WHERE name = 'messages'`.execute(board.board.db);
    }
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const response = await post();
      expect(response.statusCode).toBe(503);
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(response.headers['retry-after']).toBe('3600');
      expect(response.json()).toMatchObject({
        status: 503,
        detail: 'The board has used every message id (up to 2147483647): no message can be posted.',
      });
    }
    expect(await board.board.db.selectFrom('messages').select('id').execute()).toEqual([]);
  });
});

describeEachDialect('baud import enigma, password hashes past the bound', (dialect) => {
  let copies: ReturnType<typeof createEnigmaCopies>;
  beforeAll(() => {
    copies = createEnigmaCopies(dialect, 'baud-enigma-pbkdf2-');
  });
  afterAll(() => copies.cleanUp());

  it('imports an account whose PBKDF2 would cost 10,000,000 iterations of a 1,024-byte key without a usable password, and names it', async () => {
    const source = copies.sourceCopy('pbkdf2', (db) => {
      const property = db.user.prepare('UPDATE user_property SET prop_value = ? WHERE user_id = 2 AND prop_name = ?');
      property.run(JSON.stringify({ iterations: 10_000_000, digest: 'sha512', keyLen: 1024, saltLen: 32 }), 'pw_hash_params');
      property.run('ab'.repeat(1024), 'pw_pbkdf2_dk');
    });
    const database = await copies.freshDatabase();
    const summary = await copies.run(source, database, 'pbkdf2');
    expect(summary.counts.users).toMatchObject({ found: 6, imported: 6, skipped: 0 });
    expect(summary.skipped).toContainEqual({
      kind: 'users',
      reason:
        'user 2 "alice": Cannot store the ENiGMA½ password hash: keyLen must be an integer from 1 to 256. Imported without a usable password: set one with `baud user passwd`',
      count: 1,
    });
    const alice = await database.db
      .selectFrom('users')
      .select('passwordHash')
      .where('id', '=', 2)
      .executeTakeFirstOrThrow();
    expect(alice.passwordHash).toBe('!no-password');
  });
});
