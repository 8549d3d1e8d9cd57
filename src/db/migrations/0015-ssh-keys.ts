import type { ColumnDefinitionBuilder, Kysely, Migration } from 'kysely';
import type { Dialect } from './dialect.js';

/**
 * The SSH public keys users register (`POST /users/me/ssh-keys`) to log in at the terminal
 * without a password. `key_data` is the public key blob (base64, as in an OpenSSH `.pub` line)
 * and `algorithm` its type (`ssh-ed25519`, `ecdsa-sha2-nistp256` …); `fingerprint` is OpenSSH's
 * `SHA256:` fingerprint of the blob. The SSH handshake asks "is this key one of this user's?",
 * so the key is found by (user_id, fingerprint): unique, which also refuses a user the same key
 * twice. Keys go with their user (cascade) and with every password change (the credential
 * service deletes them).
 */
export function sshKeysMigration(dialect: Dialect): Migration {
  const id = (column: ColumnDefinitionBuilder) =>
    dialect === 'postgres' ? column.primaryKey().generatedByDefaultAsIdentity() : column.primaryKey().autoIncrement();
  return {
    // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('ssh_keys')
        .addColumn('id', 'integer', id)
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('algorithm', 'text', (c) => c.notNull())
        .addColumn('key_data', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('label', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('ssh_keys_user_fingerprint')
        .on('ssh_keys')
        .columns(['user_id', 'fingerprint'])
        .unique()
        .execute();
    },
  };
}
