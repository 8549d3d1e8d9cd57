import type { Kysely, Migration } from 'kysely';

/**
 * Each webhook's window of test deliveries (`POST /webhooks/{id}/test`): when it opened and how
 * many tests it holds, kept in the database so every node counts against the same limit.
 */
export const webhookTestWindowMigration: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
  async up(db: Kysely<any>) {
    await db.schema.alterTable('webhooks').addColumn('test_window_started_at', 'text').execute();
    await db.schema
      .alterTable('webhooks')
      .addColumn('test_count', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
