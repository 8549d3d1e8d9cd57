import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { importMessages } from '../../src/messages/message-import.js';
import { findMessages } from '../../src/messages/message-search-store.js';
import { MAX_THREAD_DEPTH } from '../../src/messages/message-thread.js';
import { parseSearchQuery } from '../../src/search/search-query.js';
import { openDatabaseAt } from '../support/database-at-migration.js';
import { describeEachDialect } from '../support/test-board.js';
import { API, createMessageTestBoard, linesOf, type MessageTestBoard, seedMessages } from './message-fixture.js';

interface ThreadItem {
  readonly messageId: number;
  readonly uuid: string;
  readonly subject: string;
  readonly depth: number;
  readonly replyCount: number;
}

interface ThreadPage {
  readonly data: ThreadItem[];
  readonly meta: { readonly nextCursor: string | null };
}

/** beyond-v1.md "Reading: threads": threadRootId and replyCount on a message, and its whole thread depth-first. */
describeEachDialect('threads', (dialect) => {
  let board: MessageTestBoard;
  /** subject → uuid and messageId of the messages posted below */
  const posted = new Map<string, { uuid: string; messageId: number }>();

  const get = (url: string, headers: Record<string, string> = board.alice.auth) =>
    board.app.inject({ method: 'GET', url: `${API}${url}`, headers });
  const post = async (subject: string, replyTo?: string) => {
    const response = await board.app.inject({
      method: 'POST',
      url: `${API}/messages/areas/general/messages`,
      headers: board.alice.auth,
      payload: {
        subject,
        message: `Text of ${subject}`,
        ...(replyTo ? { replyToMessageId: posted.get(replyTo)?.messageId } : {}),
      },
    });
    expect(response.statusCode).toBe(201);
    posted.set(subject, response.json());
  };
  const shape = (items: readonly ThreadItem[]) => items.map((item) => [item.subject, item.depth, item.replyCount]);
  async function wholeThread(uuid: string, limit: number): Promise<ThreadItem[]> {
    const items: ThreadItem[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const response = await get(`/messages/${uuid}/thread?${query}`);
      expect(response.statusCode).toBe(200);
      const page = response.json() as ThreadPage;
      items.push(...page.data);
      cursor = page.meta.nextCursor;
    } while (cursor !== null);
    return items;
  }

  beforeAll(async () => {
    board = await createMessageTestBoard(dialect);
    // A ─┬ B ── D ── E
    //    └ C ── F        (and G, a thread of its own)
    await post('A');
    await post('B', 'A');
    await post('C', 'A');
    await post('D', 'B');
    await post('G');
    await post('E', 'D');
    await post('F', 'C');
  });
  afterAll(() => board.close());

  const EXPECTED = [
    ['A', 0, 2],
    ['B', 1, 1],
    ['D', 2, 1],
    ['E', 3, 0],
    ['C', 1, 1],
    ['F', 2, 0],
  ];

  it('lists the whole thread depth-first from any of its messages, root first, replies oldest first', async () => {
    for (const member of ['A', 'E', 'C']) {
      const response = await get(`/messages/${posted.get(member)?.uuid}/thread`);
      expect(response.statusCode).toBe(200);
      expect(shape((response.json() as ThreadPage).data)).toEqual(EXPECTED);
    }
    expect(shape((await get(`/messages/${posted.get('G')?.uuid}/thread`)).json().data)).toEqual([['G', 0, 0]]);
  });

  it('gives every message its threadRootId and replyCount', async () => {
    const root = posted.get('A')?.messageId;
    for (const [subject, replyCount] of [
      ['A', 2],
      ['E', 0],
      ['C', 1],
    ] as const) {
      expect((await get(`/messages/${posted.get(subject)?.uuid}`)).json()).toMatchObject({
        threadRootId: root,
        replyCount,
      });
    }
    const g = posted.get('G');
    expect((await get(`/messages/${g?.uuid}`)).json().threadRootId).toBe(g?.messageId);
  });

  it('pages through a thread with cursors, never repeating or skipping, while replies arrive', async () => {
    const first = (await get(`/messages/${posted.get('A')?.uuid}/thread?limit=2`)).json() as ThreadPage;
    expect(shape(first.data)).toEqual(EXPECTED.slice(0, 2));
    // A reply to B arrives between pages: it sorts after D's subtree and before C.
    await post('H', 'B');
    const rest = await (async () => {
      const items: ThreadItem[] = [];
      let cursor = first.meta.nextCursor;
      while (cursor !== null) {
        const page = (
          await get(`/messages/${posted.get('A')?.uuid}/thread?limit=2&cursor=${encodeURIComponent(cursor)}`)
        ).json() as ThreadPage;
        items.push(...page.data);
        cursor = page.meta.nextCursor;
      }
      return items;
    })();
    expect(shape([...first.data, ...rest]).map(([subject, depth]) => [subject, depth])).toEqual([
      ['A', 0],
      ['B', 1],
      ['D', 2],
      ['E', 3],
      ['H', 2],
      ['C', 1],
      ['F', 2],
    ]);
    expect(await wholeThread(posted.get('F')?.uuid ?? '', 1)).toHaveLength(7);
  });

  it('leaves a deleted message out and keeps its replies where they were', async () => {
    const d = posted.get('D');
    expect(
      (await board.app.inject({ method: 'DELETE', url: `${API}/messages/${d?.uuid}`, headers: board.sysop.auth }))
        .statusCode,
    ).toBe(204);
    const items = await wholeThread(posted.get('A')?.uuid ?? '', 3);
    expect(shape(items)).toEqual([
      ['A', 0, 2],
      ['B', 1, 1],
      ['E', 3, 0],
      ['H', 2, 0],
      ['C', 1, 1],
      ['F', 2, 0],
    ]);
    // The deleted message's own thread is gone with it, as its detail is.
    expect((await get(`/messages/${d?.uuid}/thread`)).statusCode).toBe(404);
  });

  it('answers like the message itself: 404 unknown or blocked, 401 / 403 hidden by ACS, 400 bad uuid or foreign cursor', async () => {
    await seedMessages(board, 'secret', 1);
    await seedMessages(board, 'members', 1);
    const secret = await board.board.db
      .selectFrom('messages')
      .select('uuid')
      .where('areaTag', '=', 'secret')
      .executeTakeFirstOrThrow();
    const members = await board.board.db
      .selectFrom('messages')
      .select('uuid')
      .where('areaTag', '=', 'members')
      .executeTakeFirstOrThrow();
    expect((await get(`/messages/${secret.uuid}/thread`)).statusCode).toBe(403);
    expect((await get(`/messages/${members.uuid}/thread`, {})).statusCode).toBe(401);
    expect((await get('/messages/0190a5c4-0000-7000-8000-000000000000/thread')).statusCode).toBe(404);
    const bad = await get('/messages/not-a-uuid/thread');
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    // A cursor of another thread's pages is refused, not followed.
    const other = (await get(`/messages/${posted.get('A')?.uuid}/thread?limit=1`)).json() as ThreadPage;
    const foreign = await get(
      `/messages/${posted.get('G')?.uuid}/thread?cursor=${encodeURIComponent(other.meta.nextCursor ?? '')}`,
    );
    expect(foreign.statusCode).toBe(400);
  });

  it('builds threads from imported replies, across batches, and caps the depth', async () => {
    const chain = 110;
    const lines = Array.from({ length: chain }, (_, index) =>
      JSON.stringify({
        from: 'Chain',
        subject: `Link ${index}`,
        body: 'deeper',
        timestamp: '2021-01-01T00:00:00Z',
        ...(index > 0 ? { replyTo: index } : {}),
      }),
    );
    await importMessages(board.board, 'members', linesOf(lines), () => {}, { batchSize: 7 });
    const root = await board.board.db
      .selectFrom('messages')
      .select('uuid')
      .where('subject', '=', 'Link 0')
      .executeTakeFirstOrThrow();
    const items = await wholeThread(root.uuid, 100);
    expect(items.map((item) => item.subject)).toEqual(Array.from({ length: chain }, (_, index) => `Link ${index}`));
    // Depth grows by one per reply up to the cap; deeper replies sit beside their parent.
    expect(items.map((item) => item.depth)).toEqual(
      Array.from({ length: chain }, (_, index) => Math.min(index, MAX_THREAD_DEPTH)),
    );
  });

  it('pages a thread with an index range scan of (thread_root_id, thread_path)', async () => {
    const root = posted.get('A')?.messageId ?? 0;
    const compiled =
      sql`SELECT id FROM messages WHERE thread_root_id = ${root} AND deleted_at IS NULL AND thread_path > ${'00000001'} ORDER BY thread_path LIMIT 26`.compile(
        board.board.db,
      );
    if (dialect === 'sqlite') {
      const { rows } = await board.board.db.executeQuery<{ detail: string }>({
        ...compiled,
        sql: `EXPLAIN QUERY PLAN ${compiled.sql}`,
      });
      expect(rows.map((row) => row.detail)).toEqual([
        'SEARCH messages USING INDEX messages_thread (thread_root_id=? AND thread_path>?)',
      ]);
    } else {
      // A few rows: make the planner show the plan it picks for a big thread, in one transaction (one connection).
      const rows = await board.board.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL enable_seqscan = off`.execute(trx);
        await sql`SET LOCAL enable_bitmapscan = off`.execute(trx);
        return (await trx.executeQuery<{ 'QUERY PLAN': string }>({ ...compiled, sql: `EXPLAIN ${compiled.sql}` })).rows;
      });
      const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(plan).toContain('messages_thread');
      expect(plan).not.toContain('Sort');
    }
  });
});

/**
 * A board made before threads and search existed gets both when it migrates: the reply links
 * are walked from each root, and every message is indexed.
 */
describeEachDialect('threads migration on an existing board', (dialect) => {
  it('fills in threadRootId and the thread order of existing messages', async () => {
    const { database, upgrade, close } = await openDatabaseAt(dialect, '0003-new-scan');
    try {
      // 1 ← 2 ← 3, 1 ← 4, and 5 alone; 6 replies to a message that is gone.
      const insert = (id: number, replyTo: number | null) =>
        sql`INSERT INTO messages (id, uuid, area_tag, reply_to_message_id, from_user_name, to_user_name, subject, body, timestamp, network)
            VALUES (${id}, ${`00000000-0000-4000-8000-00000000000${id}`}, 'general', ${replyTo}, 'x', 'All', ${`m${id}`}, 'b', '2020-01-01T00:00:00.000Z', '{}')`.execute(
          database.db,
        );
      await insert(1, null);
      await insert(2, 1);
      await insert(3, 2);
      await insert(4, 1);
      await insert(5, null);
      await upgrade();
      const rows = await database.db
        .selectFrom('messages')
        .select(['id', 'threadRootId', 'threadPath'])
        .orderBy('threadPath')
        .execute();
      expect(rows).toEqual([
        { id: 1, threadRootId: 1, threadPath: '00000001' },
        { id: 2, threadRootId: 1, threadPath: '0000000100000002' },
        { id: 3, threadRootId: 1, threadPath: '000000010000000200000003' },
        { id: 4, threadRootId: 1, threadPath: '0000000100000004' },
        { id: 5, threadRootId: 5, threadPath: '00000005' },
      ]);
      // The search index is built for the messages already there (0005-search).
      const found = await findMessages(
        database.db,
        dialect,
        {
          query: parseSearchQuery('m3 OR m5'),
          areaTags: ['general'],
          from: null,
          to: null,
          since: null,
          until: null,
          sort: 'newest',
          beforeKey: null,
          bound: null,
          limit: 10,
        },
        new Map(),
      );
      expect(found.rows.map((message) => message.messageId)).toEqual([5, 3]);
    } finally {
      await close();
    }
  });
});
