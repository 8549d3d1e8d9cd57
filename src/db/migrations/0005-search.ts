import type { Kysely, Migration } from 'kysely';
import { indexAllFiles } from '../../files/file-search-index.js';
import { indexAllMessages } from '../../messages/message-search-index.js';
import type { Dialect } from '../database.js';
import { createFullTextIndex } from '../full-text-index.js';

/** Boards this big say how the index build is going (on stderr: stdout may be a CLI's JSON). */
const PROGRESS_FROM_MESSAGES = 20_000;

/**
 * Full-text search of messages and files (see src/db/full-text-index.ts). An existing board's
 * messages and files are indexed here; a big board prints its progress.
 */
export function searchMigration(dialect: Dialect): Migration {
  return {
    // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
    async up(db: Kysely<any>) {
      await createFullTextIndex(db, dialect, 'message_search');
      await createFullTextIndex(db, dialect, 'file_search');
      let lastShown = 0;
      await indexAllMessages(db, dialect, (indexed, total) => {
        if (total < PROGRESS_FROM_MESSAGES || (indexed - lastShown < total / 20 && indexed < total)) return;
        lastShown = indexed;
        process.stderr.write(
          `building the search index: ${indexed.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} messages\n`,
        );
      });
      await indexAllFiles(db, dialect);
    },
  };
}
