import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Migrator, sql } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { boardMigrator, type Database, lostMigrationRace, openDatabase } from '../../src/db/database.js';
import { addToLiveCounts } from '../../src/messages/message-live-counts.js';
import { createMessageStore } from '../../src/messages/message-store.js';
import { describeEachDialect, dropSchema, POSTGRES_URL } from '../support/test-board.js';

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
  const dir = mkdtempSync(path.join(tmpdir(), 'baud-live-counts-'));
  const schema = `baud_live_counts_${randomBytes(6).toString('hex')}`;
  afterAll(async () => {
    if (dialect === 'postgres') await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts the live messages already there, by the nodes the code keeps, in batches over gaps in the ids', async () => {
    const url = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'old.db')}` : `${POSTGRES_URL}?schema=${schema}`;
    const database = await openDatabase(url, { poolSize: 2 });
    try {
      const migrator = boardMigrator(database);
      // As migrateToLatest does: another test file dropping its schema meanwhile is no failure of ours.
      const migrate = async (run: () => ReturnType<Migrator['migrateToLatest']>) => {
        for (let attempt = 1; ; attempt += 1) {
          const { error } = await run();
          if (!error) return;
          if (attempt === 5 || !lostMigrationRace(error, database)) throw error;
        }
      };
      await migrate(() => migrator.migrateTo('0008-one-area-index'));
      for (const { id, areaTag, isDeleted } of EXISTING) {
        await sql`INSERT INTO messages (id, uuid, area_tag, from_user_name, to_user_name, subject, body, timestamp,
                    network, thread_root_id, thread_path, deleted_at)
                  VALUES (${id}, ${`00000000-0000-4000-8000-${String(id).padStart(12, '0')}`}, ${areaTag}, 'x', 'All',
                    's', 'b', '2020-01-01T00:00:00.000Z', '{}', ${id}, ${String(id)},
                    ${isDeleted ? '2021-01-01T00:00:00.000Z' : null})`.execute(database.db);
      }
      await migrate(() => migrator.migrateToLatest());

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
      for (const areaTag of ['general', 'files', 'netmail', 'nowhere']) {
        for (const pointer of [-1, 0, 1, 31, 32, 33, 69, 70, 99_999, 100_000, 250_016, 999_999_999, 2_147_483_646]) {
          const expected = EXISTING.filter(
            (message) => message.areaTag === areaTag && !message.isDeleted && message.id > pointer,
          ).length;
          expect({ areaTag, pointer, count: await store.countLiveAfter(areaTag, pointer) }).toEqual({
            areaTag,
            pointer,
            count: expected,
          });
        }
      }
    } finally {
      await database.close();
    }
  });
});
