import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { openDatabaseAt } from '../support/database-at-migration.js';
import { describeEachDialect } from '../support/test-board.js';

/** Sessions begun before 0013 were all logins through the API: they say so after it. */
describeEachDialect('0013-session-via on an existing board', (dialect) => {
  it("marks the login sessions already there as 'api'", async () => {
    const { database, upgrade, close } = await openDatabaseAt(dialect, '0011-accounts');
    try {
      await sql`INSERT INTO users (username, username_key, password_hash, created_at, credentials_changed_at)
                VALUES ('old', 'old', 'x', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`.execute(
        database.db,
      );
      await sql`INSERT INTO refresh_families (id, user_id, created_at, expires_at, last_activity_at, last_action,
                  is_secure, client_address)
                SELECT 'before-0013', id, '2026-01-02T00:00:00.000Z', '2026-04-01T00:00:00.000Z',
                  '2026-01-02T00:00:00.000Z', 'Logging in', 0, '192.0.2.1' FROM users`.execute(database.db);
      await upgrade();
      const rows = await database.db.selectFrom('refreshFamilies').select(['id', 'via']).execute();
      expect(rows).toEqual([{ id: 'before-0013', via: 'api' }]);
    } finally {
      await close();
    }
  });
});
