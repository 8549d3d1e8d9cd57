import { type Kysely, type Migration, sql } from 'kysely';
import type { Dialect } from './dialect.js';

/**
 * Threads: each message's thread root and its place in the thread (`threadPath`, see
 * src/messages/message-thread.ts), filled in for the messages already there by walking the
 * reply links from each root, and an index that makes every page of a thread a range scan.
 * A reply deeper than MAX_THREAD_DEPTH (100), or whose links do not lead to a root, starts a
 * thread of its own.
 */
export function threadsMigration(dialect: Dialect): Migration {
  const hex = (column: string) =>
    dialect === 'postgres' ? sql.raw(`lpad(to_hex(${column}), 8, '0')`) : sql.raw(`printf('%08x', ${column})`);
  return {
    // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
    async up(db: Kysely<any>) {
      await db.schema.alterTable('messages').addColumn('thread_root_id', 'integer').execute();
      // Byte order on PostgreSQL whatever the database's collation: the path is compared as text.
      await db.schema
        .alterTable('messages')
        .addColumn('thread_path', 'text', (column) =>
          dialect === 'postgres' ? column.modifyFront(sql`collate "C"`) : column,
        )
        .execute();
      await sql`
        WITH RECURSIVE tree(id, root_id, path, depth) AS (
          SELECT id, id, ${hex('id')}, 0 FROM messages WHERE reply_to_message_id IS NULL
          UNION ALL
          SELECT m.id, tree.root_id, tree.path || ${hex('m.id')}, tree.depth + 1
            FROM messages m JOIN tree ON m.reply_to_message_id = tree.id
           WHERE tree.depth < 100
        )
        UPDATE messages SET thread_root_id = tree.root_id, thread_path = tree.path
          FROM tree WHERE messages.id = tree.id`.execute(db);
      await sql`UPDATE messages SET thread_root_id = id, thread_path = ${hex('id')} WHERE thread_root_id IS NULL`.execute(
        db,
      );
      await db.schema
        .createIndex('messages_thread')
        .on('messages')
        .columns(['thread_root_id', 'thread_path'])
        .execute();
    },
  };
}
