import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.js';

// The SQLite connection on a worker thread (`baud message import`): the same answers, errors and
// transactions as the connection on the main thread.
describe('SQLite on a worker thread', () => {
  let dir: string;
  let database: Database;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'baud-sqlite-worker-'));
  });
  afterEach(async () => {
    await database?.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const open = async (name: string) => {
    database = await openDatabase(`sqlite:${path.join(dir, name)}`, { isSqliteOnWorkerThread: true });
    await sql`CREATE TABLE notes (id integer PRIMARY KEY, note_text text NOT NULL UNIQUE)`.execute(database.db);
    return database.db;
  };
  const notesIn = (file: string) => {
    const connection = new BetterSqlite3(path.join(dir, file), { readonly: true });
    try {
      return connection.prepare('SELECT id, note_text AS text FROM notes ORDER BY id').all();
    } finally {
      connection.close();
    }
  };

  it('runs statements there: rows, inserted ids, changed rows, and the connection set up as on the main thread', async () => {
    const db = await open('answers.db');
    const inserted = await sql`INSERT INTO notes (note_text) VALUES (${'one'}), (${'two'})`.execute(db);
    expect(inserted.insertId).toBe(2n);
    const updated = await sql`UPDATE notes SET note_text = note_text || '!'`.execute(db);
    expect(updated.numAffectedRows).toBe(2n);
    const { rows } = await sql<{ id: number; noteText: string }>`SELECT id, note_text FROM notes ORDER BY id`.execute(
      db,
    );
    // Through the board's camel-casing plugin, as every query of the board.
    expect(rows).toEqual([
      { id: 1, noteText: 'one!' },
      { id: 2, noteText: 'two!' },
    ]);
    const pragmas = await sql<{ value: unknown }>`SELECT journal_mode AS value FROM pragma_journal_mode
      UNION ALL SELECT foreign_keys FROM pragma_foreign_keys
      UNION ALL SELECT timeout FROM pragma_busy_timeout
      UNION ALL SELECT synchronous FROM pragma_synchronous`.execute(db);
    expect(pragmas.rows.map((row) => row.value)).toEqual(['wal', 1, 5000, 1]);
    const blob = Buffer.from([0, 1, 2, 255]);
    const { rows: blobs } = await sql<{ value: Buffer }>`SELECT ${blob} AS value`.execute(db);
    expect(Buffer.isBuffer(blobs[0]?.value)).toBe(true);
    expect(blobs[0]?.value.equals(blob)).toBe(true);
    // Written to the file itself: another connection reads them.
    expect(notesIn('answers.db')).toEqual([
      { id: 1, text: 'one!' },
      { id: 2, text: 'two!' },
    ]);
  });

  it('fails a statement with SQLite’s own error and code, and goes on', async () => {
    const db = await open('errors.db');
    await sql`INSERT INTO notes (note_text) VALUES ('same')`.execute(db);
    const failure = await sql`INSERT INTO notes (note_text) VALUES ('same')`
      .execute(db)
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(BetterSqlite3.SqliteError);
    expect(failure).toMatchObject({
      code: 'SQLITE_CONSTRAINT_UNIQUE',
      message: 'UNIQUE constraint failed: notes.note_text',
    });
    const syntax = await sql`SELEC 1`.execute(db).catch((error: unknown) => error);
    expect(syntax).toMatchObject({ code: 'SQLITE_ERROR', message: 'near "SELEC": syntax error' });
    expect((await sql<{ n: number }>`SELECT count(*) AS n FROM notes`.execute(db)).rows).toEqual([{ n: 1 }]);
  });

  it('commits a transaction whole, rolls a failed one back whole, and runs two at once one after the other', async () => {
    const db = await open('transactions.db');
    await db.transaction().execute(async (trx) => {
      await sql`INSERT INTO notes (note_text) VALUES ('kept')`.execute(trx);
    });
    const failed = db
      .transaction()
      .execute(async (trx) => {
        await sql`INSERT INTO notes (note_text) VALUES ('dropped')`.execute(trx);
        await sql`INSERT INTO notes (note_text) VALUES ('kept')`.execute(trx);
      })
      .catch((error: unknown) => error);
    expect(await failed).toMatchObject({ code: 'SQLITE_CONSTRAINT_UNIQUE' });
    // Each reads the count and writes after it: interleaved, both would write the same text.
    const counted = (tag: string) =>
      db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM notes`.execute(trx);
        await sql`INSERT INTO notes (note_text) VALUES (${`${tag} ${rows[0]?.n}`})`.execute(trx);
      });
    await Promise.all([
      counted('first'),
      counted('second'),
      sql`INSERT INTO notes (note_text) VALUES ('alone')`.execute(db),
    ]);
    expect(notesIn('transactions.db')).toEqual([
      { id: 1, text: 'kept' },
      { id: 2, text: 'first 1' },
      { id: 3, text: 'second 2' },
      { id: 4, text: 'alone' },
    ]);
  });

  it('says so when the file cannot be opened, and refuses statements once closed', async () => {
    // A directory where the file should be.
    const unopenable = await openDatabase(`sqlite:${dir}`, {
      isSqliteOnWorkerThread: true,
    });
    const failure = await sql`SELECT 1`.execute(unopenable.db).catch((error: unknown) => error);
    await unopenable.close();
    expect(failure).toBeInstanceOf(BetterSqlite3.SqliteError);
    expect(failure).toMatchObject({ code: 'SQLITE_CANTOPEN', message: 'unable to open database file' });
    const db = await open('closed.db');
    await database.close();
    await expect(sql`SELECT 1`.execute(db)).rejects.toThrow(/driver has already been destroyed/);
  });
});
