import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database as BaudDatabase } from '../../src/db/database.js';
import { API, createMessageTestBoard, type MessageTestBoard } from '../messages/message-fixture.js';
import { copyEnigmaFileRow, createEnigmaCopies, enigmaMessageInsert } from '../support/enigma-copies.js';
import { ENIGMA_FIXTURE } from '../support/enigma-synthetic.js';
import { runBaud } from '../support/run-baud.js';
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
        copyEnigmaFileRow(db.file, id, relPath, fileName);
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
      property.run(
        JSON.stringify({ iterations: 10_000_000, digest: 'sha512', keyLen: 1024, saltLen: 32 }),
        'pw_hash_params',
      );
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

describeEachDialect('baud import enigma, rows the API would refuse', (dialect) => {
  let copies: ReturnType<typeof createEnigmaCopies>;
  beforeAll(() => {
    copies = createEnigmaCopies(dialect, 'baud-enigma-rows-');
  });
  afterAll(() => copies.cleanUp());

  it('skips names, subjects, bodies, UUIDs and BLOBs posting or signing up would refuse, empties a javascript: web address, and says why', async () => {
    const source = copies.sourceCopy('rows', (db) => {
      const user = db.user.prepare('INSERT INTO user (id, user_name) VALUES (?, ?)');
      user.run(7, '');
      user.run(8, 'x');
      user.run(9, '12345');
      user.run(10, 'ali\tce');
      user.run(11, 'nimda\u202E');
      user.run(12, 'alice ');
      user.run(13, Buffer.from('blob-user'));
      db.user
        .prepare(
          "UPDATE user_property SET prop_value = 'javascript:alert(1)' WHERE user_id = 3 AND prop_name = 'web_address'",
        )
        .run();
      db.user.prepare('UPDATE api_keys SET label = ? WHERE id = (SELECT MIN(id) FROM api_keys)').run(Buffer.from('k'));
      const message = (id: number) => db.message.prepare(enigmaMessageInsert(id, 'pub_small', 0)).run();
      for (const id of [9501, 9502, 9503, 9504, 9505]) message(id);
      const set = db.message.prepare(
        'UPDATE message SET subject = ?, message = ?, message_uuid = ? WHERE message_id = ?',
      );
      const uuid = (id: number) => `9b1a4c3e-0000-4000-8000-${id.toString(16).padStart(12, '0')}`;
      set.run('s'.repeat(5000), 'Body', uuid(9501), 9501);
      set.run('Big', 'b'.repeat(400 * 1024), uuid(9502), 9502);
      set.run(Buffer.from('Blob subject'), 'Body', uuid(9503), 9503);
      set.run('Blank', ' \r\n\t ', uuid(9504), 9504);
      set.run('Odd UUID', 'Body', 'not-a-uuid', 9505);
      db.file
        .prepare(
          `INSERT INTO file (file_id, area_tag, file_sha256, file_name, storage_tag, desc, desc_long, upload_timestamp)
           SELECT 915, area_tag, ?, ?, storage_tag, desc, desc_long, upload_timestamp FROM file WHERE file_id = 26`,
        )
        .run('1'.repeat(64), Buffer.from('bbs-etiquette.txt'));
    });
    const database = await copies.freshDatabase();
    const summary = await copies.run(source, database, 'rows');
    expect(summary.counts.users).toMatchObject({ found: 13, imported: 6, skipped: 7 });
    expect(summary.counts.messages).toMatchObject({ found: 2187, imported: 2182, skipped: 5 });
    expect(summary.counts.apiKeys).toMatchObject({ skipped: 1 });
    expect(summary.counts.files).toMatchObject({ found: 32, imported: 30, skipped: 2 });
    const reasons = [
      ['users', 'username must be 2 to 32 characters', 2],
      ['users', 'username must not be all digits', 1],
      ['users', 'username must not contain control characters', 1],
      ['users', 'username must not contain invisible or text-direction characters', 1],
      ['users', 'username must not start or end with a space', 1],
      ['users', 'user_name: not text (a BLOB or a number where ENiGMA½ writes text)', 1],
      // bob's javascript: and erin's gopher:// (the fixture's own): PUT /users/me takes neither.
      ['users', 'webAddress must be an http:// or https:// URL: left empty', 2],
      ['apiKeys', 'label: not text (a BLOB or a number where ENiGMA½ writes text)', 1],
      ['messages', 'subject must be at most 72 characters', 1],
      ['messages', 'body must be at most 65536 bytes of UTF-8', 1],
      ['messages', 'subject: not text (a BLOB or a number where ENiGMA½ writes text)', 1],
      ['messages', 'body must not be empty', 1],
      ['messages', 'its message_uuid is not a UUID', 1],
      ['files', 'file_name: not text (a BLOB or a number where ENiGMA½ writes text)', 1],
    ] as const;
    for (const [kind, reason, count] of reasons) expect(summary.skipped).toContainEqual({ kind, reason, count });
    expect(await storedIds(database, 'users', [7, 8, 9, 10, 11, 12, 13])).toEqual([]);
    expect(await storedIds(database, 'messages', [9501, 9502, 9503, 9504, 9505])).toEqual([]);
    const bob = await database.db
      .selectFrom('users')
      .select(['username', 'webAddress'])
      .where('id', '=', 3)
      .executeTakeFirstOrThrow();
    expect(bob).toEqual({ username: 'bob', webAddress: null });
  });
});

describe('baud import enigma, an ACS baud cannot parse', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-enigma-acs-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('stops before writing anything, naming the area, instead of writing a board that will not start', async () => {
    const source = path.join(dir, 'enigma');
    cpSync(ENIGMA_FIXTURE, source, { recursive: true });
    const enigmaConfig = path.join(source, 'config', 'config.hjson');
    const original = readFileSync(enigmaConfig, 'utf8');
    const broken = original.replace(
      "pub_small: { name: 'Public Small', desc: 'Small public area', sort: 1 }",
      "pub_small: { name: 'Public Small', desc: 'Small public area', sort: 1, acs: { read: 'GM[users' } }",
    );
    expect(broken).not.toBe(original);
    writeFileSync(enigmaConfig, broken);
    const configPath = path.join(dir, 'board', 'config.hjson');
    mkdirSync(path.dirname(configPath));
    const configText = `{ database: { url: "sqlite:${path.join(dir, 'board', 'baud.db')}" }, logging: { level: "silent" } }\n`;
    writeFileSync(configPath, configText);

    const result = await runBaud(['import', 'enigma', source, '--config', configPath], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'configuration: invalid ACS for messageConferences.public_conf.areas.pub_small.acs.read: unclosed "[" at position 2',
    );
    expect(readFileSync(configPath, 'utf8')).toBe(configText);
    expect(readdirSync(path.dirname(configPath))).toEqual(['config.hjson']);
    expect(existsSync(path.join(dir, 'board', 'baud.db'))).toBe(false);
  });
});
