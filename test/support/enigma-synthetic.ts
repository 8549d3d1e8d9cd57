import { chmodSync, cpSync, readdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

/** The ENiGMA½ board of test/fixtures (its README describes it). */
export const ENIGMA_FIXTURE = path.resolve(import.meta.dirname, '../fixtures/enigma-board');

/** Messages per transaction: big enough that commits cost nothing, small enough to report progress. */
const ROWS_PER_TRANSACTION = 50_000;

export interface SyntheticBoardOptions {
  /** Hears the number of messages in the copy after each transaction. */
  readonly onProgress?: (messages: number) => void;
}

/**
 * The UUID of synthetic message `id`: version 4 in form, but made from the id (its last 12
 * hex digits), so every copy's UUID is unique, never one of the fixture's (those are version 5),
 * and a test can compute it.
 */
export function syntheticMessageUuid(id: number): string {
  return `00000000-0000-4000-8000-${id.toString(16).padStart(12, '0')}`;
}

/** The fixture is read-only on disk (so no test changes it); its copy must be writable. */
function makeWritable(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) makeWritable(full);
    else chmodSync(full, 0o644);
  }
}

/**
 * Copies the ENiGMA½ fixture board to `targetDir` and fills the copy's `db/message.sqlite3` up
 * to `messageCount` messages by copying the fixture's messages (and their `message_meta` rows)
 * over and over: copy k adds k × (highest fixture id) to every id, so ids continue after the
 * highest; replies inside the fixture point into their own copy, so every thread exists once
 * per copy; area tags, authors, bodies and timestamps stay, and the subject gets ` #k` (cut
 * short first where it would pass the 72 characters a subject may have). The
 * last copy may be partial (the fixture's first messages in id order).
 *
 * Fast enough for a million messages (seconds, not minutes): each copy is one
 * `INSERT … SELECT` from a temp snapshot of the fixture's rows, so rows never cross into
 * JavaScript, and the triggers that feed ENiGMA½'s FTS4 table are dropped first (baud's import
 * never reads `message_fts`, so the copies are not in it).
 *
 * @example
 *   buildSyntheticEnigmaBoard('/tmp/big-board', 1_000_000, { onProgress: (n) => console.error(n) });
 */
export function buildSyntheticEnigmaBoard(
  targetDir: string,
  messageCount: number,
  options: SyntheticBoardOptions = {},
): void {
  cpSync(ENIGMA_FIXTURE, targetDir, { recursive: true });
  makeWritable(targetDir);
  const db = new Database(path.join(targetDir, 'db', 'message.sqlite3'));
  try {
    // A throwaway board: no journal, no fsync (a crash just means building it again).
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -65536');
    const triggers = db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'message'`)
      .pluck()
      .all() as string[];
    for (const name of triggers) db.exec(`DROP TRIGGER "${name}"`);

    db.function('synthetic_uuid', { deterministic: true }, (id) => syntheticMessageUuid(Number(id)));
    db.exec(`CREATE TEMP TABLE template_message AS SELECT * FROM main.message;
             CREATE TEMP TABLE template_meta AS SELECT * FROM main.message_meta ORDER BY message_id, rowid;`);
    const templateIds = db
      .prepare('SELECT message_id FROM template_message ORDER BY message_id')
      .pluck()
      .all() as number[];
    const span = templateIds.at(-1) ?? 0;
    const firstId = templateIds[0] ?? 0;
    if (templateIds.length === 0 || messageCount < templateIds.length) {
      throw new RangeError(`the fixture has ${templateIds.length} messages: ask for at least as many`);
    }

    // Columns listed (not *): the copy's own column order must not matter.
    const copyMessages = db.prepare(
      `INSERT INTO main.message (message_id, area_tag, message_uuid, reply_to_message_id, to_user_name,
                                 from_user_name, subject, message, modified_timestamp, view_count)
       SELECT message_id + :offset, area_tag,
              synthetic_uuid(message_id + :offset),
              CASE WHEN reply_to_message_id BETWEEN :firstId AND :lastId THEN reply_to_message_id + :offset
                   ELSE reply_to_message_id END,
              to_user_name, from_user_name, substr(subject, 1, 72 - length(:suffix)) || :suffix, message,
              modified_timestamp, view_count
         FROM template_message WHERE message_id <= :upTo ORDER BY message_id`,
    );
    const copyMeta = db.prepare(
      `INSERT INTO main.message_meta (message_id, meta_category, meta_name, meta_value)
       SELECT message_id + :offset, meta_category, meta_name, meta_value
         FROM template_meta WHERE message_id <= :upTo ORDER BY rowid`,
    );

    // Whole copies per transaction (only the board's last copy may be partial).
    const copiesPerTransaction = Math.max(1, Math.round(ROWS_PER_TRANSACTION / templateIds.length));
    let count = templateIds.length;
    let copy = 0;
    const addCopies = db.transaction(() => {
      for (let done = 0; done < copiesPerTransaction && count < messageCount; done += 1) {
        copy += 1;
        const rows = Math.min(templateIds.length, messageCount - count);
        // The last template message of this copy: the fixture's last but in a partial copy.
        const upTo = templateIds[rows - 1] ?? span;
        const offset = copy * span;
        copyMessages.run({ offset, suffix: ` #${copy}`, firstId, lastId: span, upTo });
        copyMeta.run({ offset, upTo });
        count += rows;
      }
    });
    while (count < messageCount) {
      addCopies();
      options.onProgress?.(count);
    }
  } finally {
    db.close();
  }
}
