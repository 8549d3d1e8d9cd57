import { describe, expect, it } from 'vitest';
import { lostMigrationRace } from '../../src/db/database.js';

/** A migration is tried again only when it lost a race with another process. */
describe('which migration errors are tried again', () => {
  const postgres = (schema: string | null) => ({ dialect: 'postgres' as const, schema });
  const sqlite = { dialect: 'sqlite' as const, schema: null };
  const schemaGone = (schema: string) =>
    Object.assign(new Error(`schema "${schema}" does not exist`), { code: '3F000' });

  it("retries on PostgreSQL when another schema vanished during Kysely's introspection", () => {
    expect(lostMigrationRace(schemaGone('baud_test_other'), postgres('baud_test_mine'))).toBe(true);
    expect(lostMigrationRace(schemaGone('baud_test_other'), postgres(null))).toBe(true);
    // Seen in CI: another board's table dropped while the introspection read its columns.
    const columnGone = Object.assign(new Error('column "subject" of relation "messages" does not exist'), {
      code: '42703',
    });
    expect(lostMigrationRace(columnGone, postgres('baud_test_mine'))).toBe(true);
    // Seen in CI too: a table the introspection listed gone before it read it, named with its schema.
    const tableGone = (schema: string) =>
      Object.assign(new Error(`relation "${schema}.api_keys" does not exist`), { code: '42P01' });
    expect(lostMigrationRace(tableGone('baud_test_other'), postgres('baud_test_mine'))).toBe(true);
    expect(lostMigrationRace(tableGone('baud_test_mine'), postgres('baud_test_mine'))).toBe(true);
  });

  it('retries on SQLite when another process made the table first', () => {
    expect(lostMigrationRace(new Error('table "settings" already exists'), sqlite)).toBe(true);
    expect(lostMigrationRace(new Error('duplicate column name: thread_root_id'), sqlite)).toBe(true);
  });

  it('does not retry when our own schema is gone, or on any other error', () => {
    expect(lostMigrationRace(schemaGone('baud_test_mine'), postgres('baud_test_mine'))).toBe(false);
    const missingRelation = Object.assign(new Error('relation "x" does not exist'), { code: '42P01' });
    expect(lostMigrationRace(missingRelation, postgres(null))).toBe(false);
    expect(lostMigrationRace(new Error('table "settings" already exists'), postgres(null))).toBe(false);
    expect(lostMigrationRace(new Error('no such column: x'), sqlite)).toBe(false);
    expect(lostMigrationRace('not an error', sqlite)).toBe(false);
  });
});
