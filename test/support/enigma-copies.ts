import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Dialect } from '../../src/db/database.js';
import { type Database as BaudDatabase, migrateToLatest, openDatabase } from '../../src/db/database.js';
import { type ImportOptions, importEnigmaBoard } from '../../src/enigma/enigma-import.js';
import { EnigmaSource } from '../../src/enigma/enigma-source.js';
import { ENIGMA_FIXTURE } from './enigma-synthetic.js';
import { dropSchema, POSTGRES_URL } from './test-board.js';

/** The databases of an ENiGMA½ board copy, open for writing while a test corrupts them. */
export type EnigmaDatabases = Record<'user' | 'message' | 'file' | 'system', Database.Database>;

/**
 * Copies of the ENiGMA½ fixture that a test changes (never the fixture itself), and empty baud
 * databases of `dialect` to import them into; `cleanUp` closes and removes everything.
 */
export function createEnigmaCopies(dialect: Dialect, prefix: string) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const schemas: string[] = [];
  const opened: Array<{ close(): unknown }> = [];

  /** A copy of the fixture with `change` applied to its databases (and file base), opened as a source. */
  function sourceCopy(name: string, change: (db: EnigmaDatabases, board: string) => void): EnigmaSource {
    const board = path.join(dir, name, 'enigma');
    cpSync(ENIGMA_FIXTURE, board, { recursive: true });
    const dbs: EnigmaDatabases = {
      user: new Database(path.join(board, 'db', 'user.sqlite3')),
      message: new Database(path.join(board, 'db', 'message.sqlite3')),
      file: new Database(path.join(board, 'db', 'file.sqlite3')),
      system: new Database(path.join(board, 'db', 'system.sqlite3')),
    };
    try {
      change(dbs, board);
    } finally {
      for (const db of Object.values(dbs)) db.close();
    }
    const source = EnigmaSource.open(board);
    opened.push(source);
    return source;
  }

  /** An empty, migrated baud database (PostgreSQL: a schema of its own). */
  async function freshDatabase(): Promise<BaudDatabase> {
    let url = 'sqlite::memory:';
    if (dialect === 'postgres') {
      const schema = `baud_test_${randomBytes(6).toString('hex')}`;
      schemas.push(schema);
      url = `${POSTGRES_URL}?schema=${schema}`;
    }
    const database = await openDatabase(url);
    opened.push(database);
    await migrateToLatest(database);
    return database;
  }

  /** baud's storage directories for the fixture's two storage tags, made under `name`. */
  function storageOf(name: string) {
    const storage = { pub_files: path.join(dir, name, 'pub'), member_uploads: path.join(dir, name, 'members') };
    for (const directory of Object.values(storage)) mkdirSync(directory, { recursive: true });
    return storage;
  }

  /** Imports `source` into `database`, its bytes into the storage of `name`. */
  const run = (source: EnigmaSource, database: BaudDatabase, name: string, options: Partial<ImportOptions> = {}) =>
    importEnigmaBoard(source, database, {
      dryRun: false,
      link: false,
      storageDirectories: storageOf(name),
      ...options,
    });

  async function cleanUp(): Promise<void> {
    for (const thing of opened.reverse()) await thing.close();
    for (const schema of schemas) await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  }

  return { dir, sourceCopy, freshDatabase, storageOf, run, cleanUp };
}

/** An INSERT of a plain message into ENiGMA½'s `message` table (the UUID is made from the id). */
export function enigmaMessageInsert(
  id: number | bigint,
  areaTag: string,
  replyTo: number | bigint,
  subject = `Message ${id}`,
) {
  const uuidTail = BigInt.asUintN(48, BigInt(id)).toString(16).padStart(12, '0');
  return `INSERT INTO message (message_id, area_tag, message_uuid, reply_to_message_id, to_user_name, from_user_name,
       subject, message, modified_timestamp) VALUES (${id}, '${areaTag}', '9b1a4c3e-0000-4000-8000-${uuidTail}',
       ${replyTo}, 'All', 'sysop', '${subject}', 'Body of ${id}.', '2026-11-20T10:00:00.000+00:00')`;
}

/**
 * Adds to ENiGMA½'s `file` table a copy of the fixture's file 26 under another id, name and
 * storage sub-path (null: the storage directory itself) — a row as a hostile or odd board has it.
 */
export function copyEnigmaFileRow(file: Database.Database, id: number, relPath: string | null, fileName: string): void {
  file
    .prepare(
      `INSERT INTO file (file_id, area_tag, file_sha256, file_name, storage_tag, storage_tag_rel_path, desc, desc_long, upload_timestamp)
       SELECT ?, area_tag, ?, ?, storage_tag, ?, desc, desc_long, upload_timestamp FROM file WHERE file_id = 26`,
    )
    .run(id, `${'0'.repeat(60)}${id}`, fileName, relPath);
}
