import { type Kysely, type Migration, sql } from 'kysely';
import type { Dialect } from './dialect.js';

/**
 * PostgreSQL: `message_search` drops its foreign key to `messages`. A message's index row is
 * written and removed in the transactions that write and delete the message (message-writes.ts),
 * and messages are never deleted as rows, so the key guarded nothing those do not already keep;
 * its check — a lookup and a row lock in `messages` for every indexed message — was a tenth of
 * the server's work in a bulk import with the index (200,000 messages: 6.2 s of server CPU with
 * it, 5.6 s without; the import 5% faster, three alternated pairs). SQLite's FTS5 table never had
 * one. `file_search` keeps its key: files are deleted as rows, and the key's cascade goes with them.
 */
export function messageSearchKeyCheckMigration(dialect: Dialect): Migration {
  return {
    // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
    async up(db: Kysely<any>) {
      if (dialect !== 'postgres') return;
      // The name PostgreSQL gave the key declared in 0005's CREATE TABLE.
      await sql`ALTER TABLE message_search DROP CONSTRAINT IF EXISTS message_search_message_id_fkey`.execute(db);
    },
  };
}
