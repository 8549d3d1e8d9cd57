import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import type { Database } from '../../src/db/database.js';
import { addToLiveCounts } from '../../src/messages/message-live-counts.js';
import { createMessageStore } from '../../src/messages/message-store.js';
import { openDatabaseAt } from '../support/database-at-migration.js';
import { describeEachDialect } from '../support/test-board.js';

/** Messages of a board made before 0009: three areas, ids with gaps wider than a backfill batch, some deleted. */
const EXISTING = [
  ...Array.from({ length: 70 }, (_, index) => ({ id: index + 1, areaTag: index % 3 === 0 ? 'general' : 'files' })),
  { id: 99_999, areaTag: 'general' },
  { id: 100_000, areaTag: 'general' },
  { id: 100_001, areaTag: 'files' },
  { id: 250_017, areaTag: 'general' },
  { id: 1_000_000_000, areaTag: 'general' },
  { id: 2_147_483_647, areaTag: 'netmail' },
].map((message) => ({ ...message, isDeleted: message.id % 7 === 0 }));

type NodeRow = { areaTag: string; node: number; liveCount: number };

async function nodesOf(database: Database): Promise<NodeRow[]> {
  const rows = await database.db
    .selectFrom('messageLiveCounts')
    .select(['areaTag', 'node', 'liveCount'])
    .where('liveCount', '<>', 0)
    .orderBy('areaTag')
    .orderBy('node')
    .execute();
  return rows.map((row) => ({ ...row, node: Number(row.node), liveCount: Number(row.liveCount) }));
}

/**
 * A board with messages gets its live counts when it migrates to 0009: the same nodes the
 * code keeps from then on (so later posts and deletions add to the right ones), and exact counts.
 */
describeEachDialect('0009-live-counts on an existing board', (dialect) => {
  it('counts the live messages already there, by the nodes the code keeps, in batches over gaps in the ids', async () => {
    const { database, upgrade, close } = await openDatabaseAt(dialect, '0008-one-area-index');
    try {
      for (const { id, areaTag, isDeleted } of EXISTING) {
        await sql`INSERT INTO messages (id, uuid, area_tag, from_user_name, to_user_name, subject, body, timestamp,
                    network, thread_root_id, thread_path, deleted_at)
                  VALUES (${id}, ${`00000000-0000-4000-8000-${String(id).padStart(12, '0')}`}, ${areaTag}, 'x', 'All',
                    's', 'b', '2020-01-01T00:00:00.000Z', '{}', ${id}, ${String(id)},
                    ${isDeleted ? '2021-01-01T00:00:00.000Z' : null})`.execute(database.db);
      }
      await upgrade();

      const migrated = await nodesOf(database);
      await database.db.deleteFrom('messageLiveCounts').execute();
      await addToLiveCounts(
        database.db,
        EXISTING.filter((message) => !message.isDeleted),
        1,
      );
      expect(migrated).toEqual(await nodesOf(database));
      expect(migrated.find((row) => row.areaTag === 'general' && row.node === 0)?.liveCount).toBe(
        EXISTING.filter((message) => message.areaTag === 'general' && !message.isDeleted).length,
      );

      const store = createMessageStore(database, systemClock);
      const now = new Date().toISOString();
      const { id: userId } = await database.db
        .insertInto('users')
        .values({
          username: 'reader',
          usernameKey: 'reader',
          passwordHash: 'x',
          createdAt: now,
          credentialsChangedAt: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      for (const areaTag of ['general', 'files', 'netmail', 'nowhere']) {
        for (const pointer of [-1, 0, 1, 31, 32, 33, 69, 70, 99_999, 100_000, 250_016, 999_999_999, 2_147_483_646]) {
          const expected = EXISTING.filter(
            (message) => message.areaTag === areaTag && !message.isDeleted && message.id > pointer,
          ).length;
          await store.setPointer(userId, areaTag, pointer, now);
          const counted = (await store.pointersWithUnread(userId, [areaTag])).get(areaTag);
          expect({ areaTag, pointer, counted }).toEqual({
            areaTag,
            pointer,
            counted: { lastReadMessageId: pointer, unreadCount: expected },
          });
        }
      }
    } finally {
      await close();
    }
  });
});
