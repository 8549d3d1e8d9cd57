import { type Kysely, type Migration, sql } from 'kysely';
import { indexAllMessages } from '../../messages/message-search-index.js';
import type { Dialect } from '../database.js';

/** Boards this big say how the index build is going (on stderr: stdout may be a CLI's JSON). */
const PROGRESS_FROM_MESSAGES = 20_000;

/**
 * Full-text search of messages (see src/messages/message-search-index.ts). An existing board's
 * messages are indexed here, 5,000 at a time; a big board prints its progress.
 */
export function searchMigration(dialect: Dialect): Migration {
  return {
    // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
    async up(db: Kysely<any>) {
      if (dialect === 'postgres') {
        await sql`CREATE TABLE message_search (
          message_id integer PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
          document tsvector NOT NULL)`.execute(db);
        await sql`CREATE INDEX message_search_document ON message_search USING gin (document)`.execute(db);
      } else {
        // Contentless (the text is in `messages`), deletable by rowid = the message id.
        await sql`CREATE VIRTUAL TABLE message_search USING fts5(
          text, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 0')`.execute(db);
      }
      let lastShown = 0;
      await indexAllMessages(db, dialect, (indexed, total) => {
        if (total < PROGRESS_FROM_MESSAGES || (indexed - lastShown < total / 20 && indexed < total)) return;
        lastShown = indexed;
        process.stderr.write(
          `building the search index: ${indexed.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} messages\n`,
        );
      });
    },
  };
}
