import { type Kysely, type Migration, sql } from 'kysely';
import type { Dialect } from './dialect.js';

/** Message ids a backfill statement reads at a time. */
const IDS_PER_BATCH = 100_000;
/** The highest message id: PostgreSQL's highest integer, and the last the tree counts by block. */
const MAX_MESSAGE_ID = 2_147_483_647;

/**
 * New-scan counts in constant time: `message_live_counts`, a Fenwick tree per area of its live
 * messages by blocks of 32 ids (node 0: the live total; node i ≥ 1: the blocks at positions
 * (i − lowbit(i), i], where a message's position is id / 32 + 1), so that `unreadCount` never
 * counts the messages after a pointer. src/messages/message-live-counts.ts keeps it and
 * explains it; this migration is plain SQL on purpose (no domain code: migrations never
 * change once shipped).
 *
 * The existing messages are counted by id range: for each block of a range, the node of each
 * of the 27 levels k whose range holds it — position p lies in node ((p − 1) >> k) + 1) << k
 * when (p − 1) >> k is even — gets the block's count added.
 */
export function liveCountsMigration(dialect: Dialect): Migration {
  return {
    // biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('message_live_counts')
        .addColumn('area_tag', 'text', (c) => c.notNull())
        .addColumn('node', 'integer', (c) => c.notNull())
        .addColumn('live_count', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('message_live_counts_pk', ['area_tag', 'node'])
        // SQLite: the rows are the primary key's b-tree, so a node is one lookup, not two.
        .$call((table) => (dialect === 'sqlite' ? table.modifyEnd(sql`without rowid`) : table))
        .execute();

      const add = sql`ON CONFLICT (area_tag, node) DO UPDATE SET live_count = message_live_counts.live_count + excluded.live_count`;
      let from = await lowestIdAfter(db, null);
      while (from !== null) {
        // PostgreSQL's ids are 4-byte integers: a bound past them would not even bind.
        const last = Math.min(
          from + IDS_PER_BATCH - 1,
          dialect === 'postgres' ? MAX_MESSAGE_ID : Number.MAX_SAFE_INTEGER,
        );
        await sql`INSERT INTO message_live_counts (area_tag, node, live_count)
                  SELECT area_tag, 0, COUNT(*) FROM messages
                   WHERE deleted_at IS NULL AND id >= ${from} AND id <= ${last}
                   GROUP BY area_tag
                  ${add}`.execute(db);
        await sql`WITH RECURSIVE levels (k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM levels WHERE k < 26),
                  blocks (area_tag, block, live) AS (
                    SELECT area_tag, id / 32, COUNT(*) FROM messages
                     WHERE deleted_at IS NULL AND id >= ${from} AND id <= ${last} AND id >= 0 AND id <= ${MAX_MESSAGE_ID}
                     GROUP BY area_tag, id / 32)
                  INSERT INTO message_live_counts (area_tag, node, live_count)
                  SELECT area_tag, ((block >> k) + 1) << k, SUM(live) FROM blocks, levels
                   WHERE (block >> k) % 2 = 0
                   GROUP BY area_tag, ((block >> k) + 1) << k
                  ${add}`.execute(db);
        from = await lowestIdAfter(db, last);
      }
    },
  };
}

/** The lowest message id above `after` (null: the lowest of all), or null: the backfill skips gaps in the ids. */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the current table types
async function lowestIdAfter(db: Kysely<any>, after: number | null): Promise<number | null> {
  const { rows } = await sql<{ id: number | string | null }>`SELECT MIN(id) AS id FROM messages ${
    after === null ? sql`` : sql`WHERE id > ${after}`
  }`.execute(db);
  const id = rows[0]?.id;
  return id === null || id === undefined ? null : Number(id);
}
