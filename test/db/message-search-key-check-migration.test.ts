import { sql } from 'kysely';
import { expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openDatabaseAt } from '../support/database-at-migration.js';
import { describeEachDialect } from '../support/test-board.js';

/** The foreign keys of `table` (PostgreSQL), as "column → table". */
async function foreignKeysOf(db: Database['db'], table: string): Promise<string[]> {
  const { rows } = await sql<{ key: string }>`
    SELECT a.attname || ' → ' || c.confrelid::regclass::text AS key
      FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
     WHERE c.contype = 'f' AND c.conrelid = ${table}::regclass`.execute(db);
  return rows.map((row) => row.key);
}

describeEachDialect('0018-message-search-key-check on an existing board', (dialect) => {
  it("drops message_search's key to messages on PostgreSQL, keeps file_search's to files, and leaves SQLite's index as it was", async () => {
    const { database, upgrade, close } = await openDatabaseAt(dialect, '0017-ftn-echomail');
    try {
      const indexedCount = async () =>
        Number(
          (await sql<{ count: number }>`SELECT count(*) AS count FROM message_search`.execute(database.db)).rows[0]
            ?.count,
        );
      if (dialect === 'postgres') {
        expect(await foreignKeysOf(database.db, 'message_search')).toEqual(['message_id → messages']);
      }
      await upgrade();
      expect(await indexedCount()).toBe(0);
      if (dialect === 'postgres') {
        expect(await foreignKeysOf(database.db, 'message_search')).toEqual([]);
        expect(await foreignKeysOf(database.db, 'file_search')).toEqual(['file_id → files']);
      }
    } finally {
      await close();
    }
  });
});
