import type { Kysely, Migration } from 'kysely';

/**
 * Replaces the row-per-failure `login_failures` with one counter row per throttle subject, so
 * that an attempt can claim its slot with a single atomic upsert before the password is
 * checked (see `src/auth/login-throttle.ts`). Throttle state is short-lived: the old rows are
 * dropped, not carried over.
 */
export const loginAttemptsMigration: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('login_attempts')
      .addColumn('subject', 'text', (c) => c.primaryKey())
      .addColumn('window_started_at', 'text', (c) => c.notNull())
      .addColumn('attempt_count', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('login_attempts_window').on('login_attempts').column('window_started_at').execute();
    await db.schema.dropTable('login_failures').execute();
  },
};
