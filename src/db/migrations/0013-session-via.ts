import type { Kysely, Migration } from 'kysely';

/**
 * Each login session records the way its user came in (`GET /users/me/sessions` shows it):
 * `api` for a login through the API (every session before this migration), `terminal` for one
 * the SSH or telnet edge begins.
 */
export const sessionViaMigration: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('refresh_families')
      .addColumn('via', 'text', (c) => c.notNull().defaultTo('api'))
      .execute();
  },
};
