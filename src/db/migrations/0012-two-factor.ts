import type { Kysely, Migration } from 'kysely';

/**
 * Two-factor login with TOTP. `totp_credentials` holds one row per user who enrolled: the shared
 * secret sealed with a board key (never in the clear), its HMAC algorithm (`sha1`; `sha256` only
 * for ENiGMA½'s `rfc6238_TOTP` accounts), when it was confirmed (null: enrolled, not yet on) and
 * the last time step a code was accepted for, which refuses a code presented again: the
 * acceptance is a conditional update of that column, so two nodes accept one code once.
 * `totp_recovery_codes` holds the keyed hashes of the unused recovery codes; using one deletes it.
 */
export const twoFactorMigration: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('totp_credentials')
      .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
      .addColumn('sealed_secret', 'text', (c) => c.notNull())
      .addColumn('algorithm', 'text', (c) => c.notNull().defaultTo('sha1'))
      .addColumn('enrolled_at', 'text', (c) => c.notNull())
      .addColumn('confirmed_at', 'text')
      .addColumn('last_used_step', 'integer')
      .execute();
    await db.schema
      .createTable('totp_recovery_codes')
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('code_hash', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('totp_recovery_codes_pk', ['user_id', 'code_hash'])
      .execute();
  },
};
