import type { ColumnDefinitionBuilder, Kysely, Migration } from 'kysely';
import type { Dialect } from './dialect.js';

/**
 * The board's tables. Listing indexes lead with the area column and end with the id so that
 * every message or file page is a keyset range scan (`area = ? AND id > ? ORDER BY id`).
 */
export function initialMigration(dialect: Dialect): Migration {
  const id = (column: ColumnDefinitionBuilder) =>
    dialect === 'postgres' ? column.primaryKey().generatedByDefaultAsIdentity() : column.primaryKey().autoIncrement();
  return {
    // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('settings')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('users')
        .addColumn('id', 'integer', id)
        .addColumn('username', 'text', (c) => c.notNull())
        .addColumn('username_key', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('email_address', 'text')
        .addColumn('real_name', 'text')
        .addColumn('location', 'text')
        .addColumn('affiliations', 'text')
        .addColumn('web_address', 'text')
        .addColumn('auto_signature', 'text')
        .addColumn('properties', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('disabled_at', 'text')
        .addColumn('credentials_changed_at', 'text', (c) => c.notNull())
        .addColumn('last_login_at', 'text')
        .addColumn('login_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('post_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('upload_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('upload_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('download_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('download_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('achievement_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('achievement_points', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('minutes_online', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();

      await db.schema
        .createTable('user_groups')
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('group_name', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('user_groups_pk', ['user_id', 'group_name'])
        .execute();

      await db.schema
        .createTable('refresh_families')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('last_activity_at', 'text', (c) => c.notNull())
        .addColumn('last_action', 'text', (c) => c.notNull())
        .addColumn('is_secure', 'integer', (c) => c.notNull())
        .addColumn('client_address', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema
        .createIndex('refresh_families_activity')
        .on('refresh_families')
        .columns(['last_activity_at'])
        .execute();
      await db.schema.createIndex('refresh_families_user').on('refresh_families').columns(['user_id']).execute();

      await db.schema
        .createTable('refresh_tokens')
        .addColumn('id', 'integer', id)
        .addColumn('family_id', 'text', (c) => c.notNull().references('refresh_families.id').onDelete('cascade'))
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('rotated_at', 'text')
        .execute();
      await db.schema.createIndex('refresh_tokens_family').on('refresh_tokens').columns(['family_id']).execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'integer', id)
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('label', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute();

      await db.schema
        .createTable('login_failures')
        .addColumn('id', 'integer', id)
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('failed_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('login_failures_subject')
        .on('login_failures')
        .columns(['subject', 'failed_at'])
        .execute();

      await db.schema
        .createTable('calls')
        .addColumn('id', 'integer', id)
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('called_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('calls_called_at').on('calls').columns(['called_at']).execute();

      await db.schema
        .createTable('message_areas')
        .addColumn('area_tag', 'text', (c) => c.primaryKey())
        .addColumn('message_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_message_at', 'text')
        .execute();

      await db.schema
        .createTable('messages')
        .addColumn('id', 'integer', id)
        .addColumn('uuid', 'text', (c) => c.notNull().unique())
        .addColumn('area_tag', 'text', (c) => c.notNull())
        .addColumn('reply_to_message_id', 'integer', (c) => c.references('messages.id').onDelete('set null'))
        .addColumn('from_user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('from_user_name', 'text', (c) => c.notNull())
        .addColumn('to_user_name', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('timestamp', 'text', (c) => c.notNull())
        .addColumn('network', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('deleted_at', 'text')
        .execute();
      await db.schema.createIndex('messages_area_id').on('messages').columns(['area_tag', 'id']).execute();
      await db.schema.createIndex('messages_reply_to').on('messages').columns(['reply_to_message_id']).execute();

      await db.schema
        .createTable('file_areas')
        .addColumn('area_tag', 'text', (c) => c.primaryKey())
        .addColumn('file_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('total_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();

      await db.schema
        .createTable('files')
        .addColumn('id', 'integer', id)
        .addColumn('area_tag', 'text', (c) => c.notNull())
        .addColumn('storage_tag', 'text', (c) => c.notNull())
        .addColumn('file_name', 'text', (c) => c.notNull())
        .addColumn('desc', 'text', (c) => c.notNull())
        .addColumn('desc_long', 'text', (c) => c.notNull())
        .addColumn('byte_size', 'bigint', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('upload_timestamp', 'text', (c) => c.notNull())
        .addColumn('upload_by_user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('dl_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('archive_type', 'text')
        .addColumn('hash_tags', 'text', (c) => c.notNull())
        .addColumn('est_release_year', 'integer')
        .addUniqueConstraint('files_area_sha256', ['area_tag', 'sha256'])
        .addUniqueConstraint('files_area_file_name', ['area_tag', 'file_name'])
        .execute();
      await db.schema.createIndex('files_area_id').on('files').columns(['area_tag', 'id']).execute();
    },
  };
}
