import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Migrator } from 'kysely';
import { boardMigrator, type Database, type Dialect, lostMigrationRace, openDatabase } from '../../src/db/database.js';
import { dropSchema, POSTGRES_URL } from './test-board.js';

/** A board's database as an older baud left it, to be filled by hand and then upgraded. */
export interface DatabaseAtMigration {
  readonly database: Database;
  /** Runs every later migration, as a newer baud does at start-up. */
  upgrade(): Promise<void>;
  /** Closes the database and removes its file or schema. */
  close(): Promise<void>;
}

/** A new SQLite file or PostgreSQL schema migrated up to and including `migration`. */
export async function openDatabaseAt(dialect: Dialect, migration: string): Promise<DatabaseAtMigration> {
  const dir = mkdtempSync(path.join(tmpdir(), 'baud-old-board-'));
  const schema = `baud_old_board_${randomBytes(6).toString('hex')}`;
  const url = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'old.db')}` : `${POSTGRES_URL}?schema=${schema}`;
  const database = await openDatabase(url, { poolSize: 2 });
  const migrator = boardMigrator(database);
  // As migrateToLatest does: another test file dropping its schema meanwhile is no failure of ours.
  const migrate = async (run: () => ReturnType<Migrator['migrateToLatest']>) => {
    for (let attempt = 1; ; attempt += 1) {
      const { error } = await run();
      if (!error) return;
      if (attempt === 5 || !lostMigrationRace(error, database)) throw error;
    }
  };
  const close = async () => {
    await database.close();
    if (dialect === 'postgres') await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await migrate(() => migrator.migrateTo(migration));
  } catch (error) {
    await close();
    throw error;
  }
  return { database, upgrade: () => migrate(() => migrator.migrateToLatest()), close };
}
