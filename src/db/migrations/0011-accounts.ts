import type { ColumnDefinitionBuilder, Kysely, Migration } from 'kysely';
import type { Dialect } from './dialect.js';

/**
 * Accounts people apply for (`POST /auth/register`) and the sysop's desk. A user row gains
 * `is_pending` (1 until a sysop approves; every existing account is active, so the default is 0)
 * and the note the applicant left for the sysop. `audit_log` records who changed which account,
 * when and how; it is only ever appended to and read newest first, by its id.
 *
 * Accepted registrations per address are counted in `login_attempts` (subject
 * `register:<address>`), whose fixed windows and atomic slot upsert are what that needs too.
 */
export function accountsMigration(dialect: Dialect): Migration {
  const id = (column: ColumnDefinitionBuilder) =>
    dialect === 'postgres' ? column.primaryKey().generatedByDefaultAsIdentity() : column.primaryKey().autoIncrement();
  return {
    // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('users')
        .addColumn('is_pending', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('users').addColumn('registration_note', 'text').execute();
      await db.schema
        .createTable('audit_log')
        .addColumn('id', 'integer', id)
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('actor', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('detail', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
