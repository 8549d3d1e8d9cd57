import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addToIndex } from '../../src/search/full-text-index.js';
import { MESSAGE_TEST_CONFIG, seedMessages } from '../messages/message-fixture.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

/**
 * A bulk load into the search index (an import's batch) gives PostgreSQL's GIN index a bigger
 * pending list and more memory to merge it with, for its own transaction only; a post's single
 * document leaves the server's settings alone.
 */
describeEachDialect('bulk loads into the search index', (dialect) => {
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect, { config: MESSAGE_TEST_CONFIG });
    // Messages to index again (the index refers to them on PostgreSQL).
    await seedMessages(board, 'general', 101);
    await sql`DELETE FROM message_search`.execute(board.board.db);
  });
  afterAll(() => board.close());

  const settings = async (executor: Parameters<typeof addToIndex>[0]) => {
    if (dialect === 'sqlite') return null;
    const { rows } = await sql<{ pending: string; work: string }>`
      SELECT current_setting('gin_pending_list_limit') AS pending, current_setting('work_mem') AS work`.execute(
      executor,
    );
    return rows[0];
  };

  it('raises the pending list and work memory within a bulk transaction only, and indexes every document', async () => {
    const ids = (await board.board.db.selectFrom('messages').select('id').orderBy('id').execute()).map((row) => row.id);
    const documents = (slice: number[]) => slice.map((id) => ({ id, fields: [`subject ${id}`, 'a body'] }));
    const defaults = await settings(board.board.db);
    const inside = await board.board.db.transaction().execute(async (trx) => {
      await addToIndex(trx, dialect, 'message_search', documents(ids.slice(0, 1)));
      const afterOne = await settings(trx);
      await addToIndex(trx, dialect, 'message_search', documents(ids.slice(1, 101)));
      return { afterOne, afterBulk: await settings(trx) };
    });
    if (dialect === 'postgres') {
      expect(inside.afterOne).toEqual(defaults);
      expect(inside.afterBulk).toEqual({ pending: '32MB', work: '32MB' });
      expect(await settings(board.board.db)).toEqual(defaults);
    }
    const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM message_search`.execute(
      board.board.db,
    );
    expect(Number(rows[0]?.n)).toBe(101);
  });
});
