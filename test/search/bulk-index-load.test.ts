import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  sql,
} from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Executor } from '../../src/db/database.js';
import { indexMessages, insertIndexedMessages } from '../../src/messages/message-search-store.js';
import { addToIndex, documentMatch, mergePendingEntriesBeside } from '../../src/search/full-text-index.js';
import { parseSearchQuery } from '../../src/search/search-query.js';
import { ESC, MESSAGE_TEST_CONFIG, seedMessages } from '../messages/message-fixture.js';
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

/**
 * On SQLite most messages are indexed from their stored rows (FTS5 reads subject and body itself);
 * the rest — text with colour codes to strip, words SQLite would fold otherwise — from the text
 * made here. Either way a message's index entry is the one its text makes.
 */
describeEachDialect('messages indexed from their stored rows', (dialect) => {
  let board: TestBoard;
  let ids: number[];
  /** One of each kind, so that one batch holds documents of both paths. */
  const texts = [
    { subject: 'Plain modem talk', body: 'The quick brown fox jumps over the lazy dog at 2400 baud.\n-- a sig' },
    { subject: `${ESC}[1;31mRed${ESC}[0m alert`, body: 'modem |07pipe coloured|15 text' },
    { subject: 'Café', body: 'Straße naïve — Скорость модема' },
    { subject: 'Long', body: `${'a'.repeat(70)} short` },
    { subject: 'Tabs\tand\r\nbreaks', body: 'a|b is not a colour code; MODEM' },
  ];
  beforeAll(async () => {
    board = await createTestBoard(dialect, { config: MESSAGE_TEST_CONFIG });
    await seedMessages(board, 'general', texts.length);
    ids = (await board.board.db.selectFrom('messages').select('id').orderBy('id').execute()).map((row) => row.id);
    for (const [index, text] of texts.entries()) {
      await board.board.db
        .updateTable('messages')
        .set(text)
        .where('id', '=', ids[index] as number)
        .execute();
    }
    if (dialect === 'sqlite') {
      await sql`CREATE VIRTUAL TABLE temp.message_search_words USING fts5vocab(main, 'message_search', 'instance')`.execute(
        board.board.db,
      );
    }
  });
  afterAll(() => board.close());

  const storedMessages = () =>
    board.board.db.selectFrom('messages').select(['id', 'subject', 'body']).orderBy('id').execute();
  /** Every message's index entry: each word FTS5 keeps with its place, or PostgreSQL's tsvector. */
  const indexEntries = async () => {
    const { rows } =
      dialect === 'sqlite'
        ? await sql<{ id: number; entry: string }>`
            SELECT doc AS id, group_concat(term || ':' || "offset", ' ' ORDER BY "offset") AS entry
              FROM temp.message_search_words GROUP BY doc ORDER BY doc`.execute(board.board.db)
        : await sql<{ id: number; entry: string }>`
            SELECT message_id AS id, document::text AS entry FROM message_search ORDER BY message_id`.execute(
            board.board.db,
          );
    return rows;
  };

  it('gives every message the entry its text makes, whichever way it was indexed', async () => {
    const messages = await storedMessages();
    await sql`DELETE FROM message_search`.execute(board.board.db);
    await board.board.db.transaction().execute((trx) => indexMessages(trx, dialect, messages));
    const fromRows = await indexEntries();
    await sql`DELETE FROM message_search`.execute(board.board.db);
    await board.board.db.transaction().execute((trx) =>
      addToIndex(
        trx,
        dialect,
        'message_search',
        messages.map(({ id, subject, body }) => ({ id, fields: [subject, body] })),
      ),
    );
    expect(fromRows.map((row) => row.id)).toEqual(ids);
    expect(fromRows).toEqual(await indexEntries());
    expect(fromRows[0]?.entry).toContain('lazy');
    expect(fromRows[1]?.entry).not.toContain('31m');
    expect(fromRows[2]?.entry).toContain('strasse');
  });

  it.runIf(dialect === 'sqlite')(
    'refuses to index a message that is not stored, and the batch goes with it',
    async () => {
      await sql`DELETE FROM message_search`.execute(board.board.db);
      const missing = { id: (ids.at(-1) as number) + 1000, subject: 'Not stored', body: 'nowhere' };
      const messages = await storedMessages();
      await expect(
        board.board.db.transaction().execute((trx) => indexMessages(trx, dialect, [...messages, missing])),
      ).rejects.toThrow(
        // The plain text, the tabs and line breaks, and the missing one are read from rows; the rest go as text.
        'message_search: 3 documents to index from messages, 2 found there',
      );
      expect(await indexEntries()).toEqual([]);
    },
  );
});

describeEachDialect('merging the pending entries beside a bulk write', (dialect) => {
  let board: TestBoard;
  let ids: number[];
  beforeAll(async () => {
    board = await createTestBoard(dialect, { config: MESSAGE_TEST_CONFIG });
    await seedMessages(board, 'general', 150);
    ids = (await board.board.db.selectFrom('messages').select('id').orderBy('id').execute()).map((row) => row.id);
  });
  afterAll(() => board.close());

  /** Indexes these seeded messages, committed together as a bulk write does. */
  const indexInOneTransaction = (batch: readonly number[]) =>
    board.board.db.transaction().execute((trx) =>
      addToIndex(
        trx,
        dialect,
        'message_search',
        batch.map((id) => ({ id, fields: [`subject ${id}`, 'a body of words'] })),
      ),
    );
  /** Indexes the seeded messages again, in two committed bulk transactions. */
  const writeInBulk = async (afterEachBatch: () => void) => {
    await sql`DELETE FROM message_search`.execute(board.board.db);
    for (const batch of [ids.slice(0, 120), ids.slice(120)]) {
      await indexInOneTransaction(batch);
      afterEachBatch();
    }
  };
  /** Pages the merge took out of the pending list (PostgreSQL): what was still pending. */
  const mergedPages = async () => {
    const { rows } = await sql<{ pages: number }>`
      SELECT gin_clean_pending_list('message_search_document'::regclass) AS pages`.execute(board.board.db);
    return Number(rows[0]?.pages);
  };
  const indexedCount = async () => {
    const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM message_search`.execute(
      board.board.db,
    );
    return Number(rows[0]?.n);
  };

  it('leaves nothing pending once the write finishes, and every document indexed', async () => {
    if (dialect === 'postgres') {
      // Without the merges, a bulk write's entries stay in the list (its limit is raised for it).
      await writeInBulk(() => {});
      expect(await mergedPages()).toBeGreaterThan(0);
    }
    const merges = mergePendingEntriesBeside(board.board.db, dialect, 'message_search');
    await writeInBulk(() => merges.nudge());
    await merges.finish();
    if (dialect === 'postgres') expect(await mergedPages()).toBe(0);
    expect(await indexedCount()).toBe(150);
  });

  it('lets two bulk writes at once, each merging beside itself, index every document and leave nothing pending', async () => {
    await sql`DELETE FROM message_search`.execute(board.board.db);
    // Two importers (two processes of one board would do the same, each with its own pool).
    const writeAlone = async (slice: number[]) => {
      const merges = mergePendingEntriesBeside(board.board.db, dialect, 'message_search');
      for (let start = 0; start < slice.length; start += 25) {
        const batch = slice.slice(start, start + 25);
        await indexInOneTransaction(batch);
        merges.nudge();
      }
      await merges.finish();
    };
    await Promise.all([writeAlone(ids.filter((id) => id % 2 === 0)), writeAlone(ids.filter((id) => id % 2 === 1))]);
    if (dialect === 'postgres') expect(await mergedPages()).toBe(0);
    expect(await indexedCount()).toBe(150);
    const { rows } = await sql<{ n: number | string }>`
      SELECT count(*) AS n FROM message_search s WHERE ${documentMatch(dialect, 'message_search', parseSearchQuery('words')).condition}`.execute(
      board.board.db,
    );
    expect(Number(rows[0]?.n)).toBe(150);
  });

  it('leaves no index rows behind when storing the messages fails while their documents are indexed', async () => {
    await sql`DELETE FROM message_search`.execute(board.board.db);
    const refused = new Error('rows refused');
    const messages = ids.slice(0, 120).map((id) => ({ id, subject: `subject ${id}`, body: 'a body of words' }));
    await expect(
      board.board.db.transaction().execute((trx) =>
        insertIndexedMessages(trx, dialect, messages, async () => {
          await sql`SELECT 1`.execute(trx);
          throw refused;
        }),
      ),
    ).rejects.toBe(refused);
    expect(await indexedCount()).toBe(0);
  });

  it.runIf(dialect === 'postgres')('fails the write where a merge beside it failed', async () => {
    await sql`DROP INDEX message_search_document`.execute(board.board.db);
    try {
      const merges = mergePendingEntriesBeside(board.board.db, dialect, 'message_search');
      merges.nudge();
      await expect(merges.finish()).rejects.toThrow('relation "message_search_document" does not exist');
    } finally {
      await sql`CREATE INDEX message_search_document ON message_search USING gin (document)`.execute(board.board.db);
    }
  });
});

describe('merges beside a bulk write, one at a time', () => {
  /** A PostgreSQL database whose queries answer only when the test says so. */
  function databaseAnsweringOnCue() {
    const asked: Array<{ sql: string; answer: () => void }> = [];
    const connection: DatabaseConnection = {
      executeQuery: <R>(query: CompiledQuery) =>
        new Promise<QueryResult<R>>((resolve) => asked.push({ sql: query.sql, answer: () => resolve({ rows: [] }) })),
      streamQuery: () => {
        throw new Error('not streamed');
      },
    };
    const driver: Driver = {
      init: async () => {},
      acquireConnection: async () => connection,
      beginTransaction: async () => {},
      commitTransaction: async () => {},
      rollbackTransaction: async () => {},
      releaseConnection: async () => {},
      destroy: async () => {},
    };
    const db = new Kysely<unknown>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => driver,
        createIntrospector: (kysely) => new PostgresIntrospector(kysely),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
    }) as unknown as Executor;
    return { db, asked };
  }
  // Lets every promise that can settle settle (no clock involved).
  const settled = () => new Promise((resolve) => setImmediate(resolve));

  it('goes round once more when nudged during a merge, never runs two at once, and finish waits for the last', async () => {
    const { db, asked } = databaseAnsweringOnCue();
    const merges = mergePendingEntriesBeside(db, 'postgres', 'message_search');
    merges.nudge();
    await settled();
    expect(asked.map((query) => query.sql)).toEqual(['SELECT gin_clean_pending_list($1::regclass)']);
    merges.nudge();
    merges.nudge();
    await settled();
    expect(asked).toHaveLength(1);
    asked[0]?.answer();
    await settled();
    expect(asked).toHaveLength(2);
    asked[1]?.answer();
    await settled();
    expect(asked).toHaveLength(2);

    let isFinished = false;
    const finishing = merges.finish().then(() => {
      isFinished = true;
    });
    await settled();
    expect(asked).toHaveLength(3);
    expect(isFinished).toBe(false);
    asked[2]?.answer();
    await finishing;
    expect(asked).toHaveLength(3);
  });
});
