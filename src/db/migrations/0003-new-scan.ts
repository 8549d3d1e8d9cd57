import { type Kysely, type Migration, sql } from 'kysely';

/**
 * New-scan: each user's last-read pointer per message area, and an index of the live
 * messages of each area by id, so that "messages after my pointer" is an index-only range
 * count (`unreadCount`) and the unread page an index range scan, however big the area.
 */
export const newScanMigration: Migration = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('message_pointers')
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('area_tag', 'text', (c) => c.notNull())
      .addColumn('last_read_message_id', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('message_pointers_pk', ['user_id', 'area_tag'])
      .execute();
    await db.schema
      .createIndex('messages_area_live')
      .on('messages')
      .columns(['area_tag', 'id'])
      .where(sql.ref('deleted_at'), 'is', null)
      .execute();
  },
};
