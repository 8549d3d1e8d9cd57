import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { importMessages } from '../../src/messages/message-import.js';
import { pointersWithUnreadQuery } from '../../src/messages/message-live-counts.js';
import { areaPageQuery, newestAreaPageQuery, threadPageQuery } from '../../src/messages/message-reads.js';
import { MAX_MESSAGE_ID } from '../../src/messages/message-rules.js';
import { linesOf } from '../messages/message-fixture.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

const MESSAGES = 4000;

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Index Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}

/**
 * The database choices, checked: a page of an area — the first, the deepest, in a big area or
 * a small one — is an index range scan right after `baud message import` (which brings
 * PostgreSQL's statistics up to date), and every pooled PostgreSQL connection cancels a
 * statement that runs past `database.statementTimeoutSeconds`.
 */
describeEachDialect('query plans and statement limits', (dialect) => {
  let board: TestBoard;
  beforeAll(async () => {
    board = await createTestBoard(dialect, {
      config: {
        ...(dialect === 'postgres' ? { database: { statementTimeoutSeconds: 1 } } : {}),
        messageConferences: {
          main: { name: 'Main', areas: { big: { name: 'Big' }, small: { name: 'Small' }, talk: { name: 'Talk' } } },
        },
      },
    });
    const line = (n: number) =>
      JSON.stringify({ from: 'Importer', subject: `Message ${n}`, body: 'Text', timestamp: '2024-01-01T00:00:00Z' });
    await importMessages(board.board, 'small', linesOf(Array.from({ length: 200 }, (_, n) => line(n))));
    await importMessages(board.board, 'big', linesOf(Array.from({ length: MESSAGES }, (_, n) => line(n))));
    // One thread: a chain 30 deep, and every other message a reply to one of the chain's.
    const reply = (n: number) => {
      const replyTo = n === 0 ? undefined : n < 30 ? n : (n % 29) + 1;
      return JSON.stringify({ ...JSON.parse(line(n)), ...(replyTo === undefined ? {} : { replyTo }) });
    };
    await importMessages(board.board, 'talk', linesOf(Array.from({ length: 600 }, (_, n) => reply(n))));
    threadRootId = MESSAGES + 200 + 1;
  });
  let threadRootId = 0;
  afterAll(async () => {
    await board?.close();
  });

  const pageQuery = (areaTag: string, afterKey: number) =>
    areaPageQuery(board.board.db, { areaTag, afterKey, limit: 26 }).compile();

  /** PostgreSQL's plan of one page query, as the nodes of its tree. */
  async function postgresPlanOf(areaTag: string, afterKey: number): Promise<PlanNode[]> {
    const compiled = pageQuery(areaTag, afterKey);
    const { rows } = await board.board.db.executeQuery<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>({
      ...compiled,
      sql: `EXPLAIN (FORMAT JSON) ${compiled.sql}`,
    });
    return nodesOf((rows[0]?.['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan);
  }

  /** SQLite's plan of one page query, as its lines (`SEARCH messages USING INDEX …`). */
  async function sqlitePlanOf(areaTag: string, afterKey: number): Promise<string[]> {
    const compiled = pageQuery(areaTag, afterKey);
    const { rows } = await board.board.db.executeQuery<{ detail: string }>({
      ...compiled,
      sql: `EXPLAIN QUERY PLAN ${compiled.sql}`,
    });
    return rows.map((row) => row.detail);
  }

  it.each([
    ['the deep end of the big area', 'big', MESSAGES + 200 - 20],
    ['the first page of the big area', 'big', 0],
    ['the first page of the small area, imported first', 'small', 0],
    ['the middle of the small area', 'small', 100],
  ])('reads %s right after the import with an index range scan and no sort', async (_what, areaTag, afterKey) => {
    if (dialect === 'sqlite') {
      const plan = await sqlitePlanOf(areaTag as string, afterKey as number);
      expect(plan).toHaveLength(1);
      expect(plan[0]).toMatch(/^SEARCH messages USING INDEX messages_area_live \(area_tag=\? AND id>\?\)$/);
      return;
    }
    const nodes = await postgresPlanOf(areaTag as string, afterKey as number);
    expect(nodes.map((node) => node['Node Type'])).toEqual(['Limit', 'Index Scan']);
    // (area_tag, id) of the live messages, or the primary key when the page's id range is the narrower one.
    expect(['messages_area_live', 'messages_pkey']).toContain(nodes[1]?.['Index Name']);
  });

  it.each([
    ['the newest page of the big area', 'big', 0, MAX_MESSAGE_ID],
    ['the deep end of the big area, newest first', 'big', 0, 200 + 20],
    ['the newest page of the small area, imported first', 'small', 0, MAX_MESSAGE_ID],
    ['the middle of the small area, newest first', 'small', 0, 100],
    ['the newest unread page, the pointer in the middle of the big area', 'big', 200 + MESSAGES / 2, MAX_MESSAGE_ID],
  ])('reads %s right after the import with an index range scan walked backwards and no sort', async (_what, areaTag, aboveId, atMostId) => {
    const compiled = newestAreaPageQuery(board.board.db, {
      areaTag: areaTag as string,
      aboveId: aboveId as number,
      atMostId: atMostId as number,
      limit: 26,
    }).compile();
    const explain = dialect === 'sqlite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN (FORMAT JSON)';
    const { rows } = await board.board.db.executeQuery<Record<string, unknown>>({
      ...compiled,
      sql: `${explain} ${compiled.sql}`,
    });
    if (dialect === 'sqlite') {
      // One line: no "USE TEMP B-TREE FOR ORDER BY", so SQLite walks the index from its high end.
      expect(rows.map((row) => row.detail)).toEqual([
        'SEARCH messages USING INDEX messages_area_live (area_tag=? AND id>? AND id<?)',
      ]);
      return;
    }
    const nodes = nodesOf((rows[0]?.['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan) as (PlanNode & {
      'Scan Direction'?: string;
    })[];
    expect(nodes.map((node) => node['Node Type'])).toEqual(['Limit', 'Index Scan']);
    // As in the oldest order: the primary key when the area holds most of the ids in the page's range.
    expect(['messages_area_live', 'messages_pkey']).toContain(nodes[1]?.['Index Name']);
    expect(nodes[1]?.['Scan Direction']).toBe('Backward');
  });

  it.each([
    ['the first page', null],
    ['a deep page', 4000 + 200 + 550],
  ])('reads %s of a thread with index range scans: the thread index, and the live-reply index to count replies', async (_what, afterId) => {
    const compiled = threadPageQuery(board.board.db, { threadRootId, afterId, limit: 26 }).compile();
    const explain = dialect === 'sqlite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN (FORMAT JSON)';
    const { rows } = await board.board.db.executeQuery<Record<string, unknown>>({
      ...compiled,
      sql: `${explain} ${compiled.sql}`,
    });
    const indexes =
      dialect === 'sqlite'
        ? rows.flatMap((row) => /USING (?:COVERING )?INDEX (\w+)/.exec(String(row.detail))?.[1] ?? [])
        : nodesOf((rows[0]?.['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan).flatMap(
            (node) => node['Index Name'] ?? [],
          );
    expect(indexes).toContain('messages_thread');
    expect(indexes).toContain('messages_reply_live');
    expect(rows.map((row) => JSON.stringify(row))).not.toContainEqual(
      expect.stringMatching(/SCAN messages|Seq Scan|TEMP B-TREE/),
    );
  });

  it.each([
    ['before the first message', 0],
    ['in the middle of the big area', 200 + MESSAGES / 2],
    ['at its last message', 200 + MESSAGES],
    ['past every id (imported)', MAX_MESSAGE_ID],
  ])('counts the unread messages with the pointer %s by key lookups and at most one block of ids, never the messages after it', async (_where, pointer) => {
    const { userId } = await board.userWithToken(`reader${pointer}`);
    await board.board.db
      .insertInto('messagePointers')
      .values({ userId, areaTag: 'big', lastReadMessageId: pointer, updatedAt: '2026-01-01T00:00:00.000Z' })
      .execute();
    const compiled = pointersWithUnreadQuery(board.board.db, dialect, { userId, areaTags: ['big'] }).compile();
    const explain = dialect === 'sqlite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN (FORMAT JSON)';
    const { rows } = await board.board.db.executeQuery<Record<string, unknown>>({
      ...compiled,
      sql: `${explain} ${compiled.sql}`,
    });
    if (dialect === 'sqlite') {
      const reads = rows.map((row) => String(row.detail)).filter((detail) => /^(SEARCH|SCAN) /.test(detail));
      expect(new Set(reads)).toEqual(
        new Set([
          'SEARCH message_pointers USING INDEX sqlite_autoindex_message_pointers_1 (user_id=? AND area_tag=?)',
          // The total and each node the pointer names: lookups of the whole primary key.
          'SEARCH c USING PRIMARY KEY (area_tag=? AND node=?)',
          // …summed from the at most 28 rows those lookups found.
          'SCAN nodes',
          // Bounded on both sides: the ids of the pointer's block.
          'SEARCH m USING INDEX messages_area_live (area_tag=? AND id>? AND id<?)',
        ]),
      );
      return;
    }
    const nodes = nodesOf((rows[0]?.['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan) as (PlanNode & {
      'Relation Name'?: string;
      'Index Cond'?: string;
    })[];
    const reads = nodes.filter((node) => node['Relation Name'] !== undefined);
    // The pointer, the total and one lookup per bit a position may have (27), the pointer's block.
    expect(reads.map((read) => read['Relation Name']).sort()).toEqual([
      ...Array.from({ length: 28 }, () => 'message_live_counts'),
      'message_pointers',
      'messages',
    ]);
    for (const read of reads) {
      expect(read['Node Type']).toMatch(/^Index (Only )?Scan$/);
      const condition = {
        message_pointers: /^\(\(user_id = .+\) AND \(area_tag = .+\)\)$/,
        message_live_counts: /^\(\(area_tag = .+\) AND \(node = .+\)\)$/,
        messages: /id > .+ AND .*id <= /,
      }[read['Relation Name'] as string];
      expect(read['Index Cond']).toMatch(condition as RegExp);
    }
  });

  it('cancels a statement that runs past the statement timeout (PostgreSQL)', async () => {
    if (dialect === 'sqlite') return; // SQLite runs in-process: there is no server-side timeout
    await expect(sql`SELECT pg_sleep(1.5)`.execute(board.board.db)).rejects.toMatchObject({ code: '57014' });
    // The connection is still good for the next query.
    expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(board.board.db)).rows).toEqual([{ one: 1 }]);
  });
});
