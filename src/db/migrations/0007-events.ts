import type { ColumnDefinitionBuilder, Kysely, Migration } from 'kysely';
import type { Dialect } from './dialect.js';

/**
 * The event log and webhooks. `events` is the durable log every stream and webhook reads: one
 * row per change, written in the change's own transaction, its id strictly increasing in commit
 * order (see appendEvent). A webhook keeps its own place in the log (`delivered_through`) and its
 * retry state, so one row says everything a node needs to claim and send its next delivery.
 */
export function eventsMigration(dialect: Dialect): Migration {
  const id = (column: ColumnDefinitionBuilder) =>
    dialect === 'postgres' ? column.primaryKey().generatedByDefaultAsIdentity() : column.primaryKey().autoIncrement();
  return {
    // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('events')
        .addColumn('id', 'integer', id)
        .addColumn('type', 'text', (c) => c.notNull())
        // The message or file area the event is about (null for logins): what ACS decides on.
        .addColumn('area_tag', 'text')
        // The user the event belongs to: a pointer's owner, the user who logged in.
        .addColumn('user_id', 'integer')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('events_created_at').on('events').column('created_at').execute();

      await db.schema
        .createTable('webhooks')
        .addColumn('id', 'integer', id)
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('areas', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        // The signing secret is derived from the board's webhook secret and this salt; never stored.
        .addColumn('secret_salt', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('deactivated_at', 'text')
        .addColumn('deactivation_reason', 'text')
        .addColumn('delivered_through', 'integer', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('failing_since', 'text')
        .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'text', (c) => c.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('lease_until', 'text')
        .execute();
      await db.schema.createIndex('webhooks_user').on('webhooks').column('user_id').execute();

      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'integer', id)
        .addColumn('webhook_id', 'integer', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
        .addColumn('event_id', 'integer', (c) => c.notNull())
        .addColumn('delivery_id', 'text', (c) => c.notNull())
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('attempted_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_webhook')
        .on('webhook_deliveries')
        .columns(['webhook_id', 'id'])
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_attempted_at')
        .on('webhook_deliveries')
        .column('attempted_at')
        .execute();
    },
  };
}
