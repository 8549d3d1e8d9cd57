import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { MailBox } from '../../src/mail/mail-store.js';
import { boxPageQuery, mailboxDrivenSearch } from '../../src/mail/mail-store.js';
import { MAX_MESSAGE_ID } from '../../src/messages/message-rules.js';
import { parseQueryParameter } from '../../src/search/search-query.js';
import { createTestBoard, describeEachDialect, type TestBoard } from '../support/test-board.js';

/** The big mailbox: as many mails as issue 33 names. */
const BIG = 100_000;
const SMALL = 10;

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Index Name'?: string;
  readonly 'Relation Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

const nodesOf = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];

/**
 * A box of 100,000 mails pages like one of 10 (issue 33, item 6): every page of a box — the
 * first, the deepest, the unread ones among 100,000 read — is a range scan of one key prefix
 * joined to its mails by primary key; never a scan of the mailbox, never a sort.
 */
describeEachDialect('mailbox query plans', (dialect) => {
  let board: TestBoard;
  let bigId = 0;
  let smallId = 0;

  beforeAll(async () => {
    board = await createTestBoard(dialect);
    bigId = (await board.userWithToken('big')).userId;
    smallId = (await board.userWithToken('small')).userId;
    const { db } = board.board;
    // Rows made by the database itself: 100,000 round trips would be the test's whole time.
    const series =
      dialect === 'postgres'
        ? sql`SELECT generate_series(1, ${BIG + SMALL}) AS n`
        : sql`WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${BIG + SMALL}) SELECT n FROM s`;
    await sql`INSERT INTO messages (id, uuid, area_tag, from_user_id, from_user_name, to_user_name, subject, body,
                timestamp, network, thread_root_id, thread_path)
              SELECT n, ${dialect === 'postgres' ? sql`'00000000-0000-4000-8000-' || lpad(n::text, 12, '0')` : sql`printf('00000000-0000-4000-8000-%012d', n)`},
                'private_mail', NULL, 'x', 'y', 's', 'b', '2026-01-01T00:00:00.000Z', '{}', n,
                ${dialect === 'postgres' ? sql`lpad(to_hex(n), 8, '0')` : sql`printf('%08x', n)`}
                FROM (${series}) AS series`.execute(db);
    await sql`INSERT INTO mailbox_entries (user_id, box, message_id, is_read)
              SELECT CASE WHEN n <= ${BIG} THEN ${sql.lit(bigId)} ELSE ${sql.lit(smallId)} END, 'inbox', n,
                     CASE WHEN n % 1000 = 0 THEN 0 ELSE 1 END
                FROM (${series}) AS series`.execute(db);
    await sql`INSERT INTO mailbox_entries (user_id, box, message_id, is_read)
              SELECT ${sql.lit(bigId)}, 'sent', n, 1 FROM (${series}) AS series WHERE n <= ${BIG}`.execute(db);
    if (dialect === 'postgres') await sql`ANALYZE messages, mailbox_entries`.execute(db);
  }, 120_000);
  afterAll(async () => {
    await board?.close();
  });

  it.each([
    ['page 1 of the 100,000-mail inbox', 'big', 'inbox', false, MAX_MESSAGE_ID],
    ['the deepest page of the 100,000-mail inbox', 'big', 'inbox', false, 30],
    ['page 1 of the 100,000-mail sent box', 'big', 'sent', false, MAX_MESSAGE_ID],
    ['page 1 of the 10-mail inbox', 'small', 'inbox', false, MAX_MESSAGE_ID],
    ['the unread page among 100,000 mails, 100 of them unread', 'big', 'inbox', true, MAX_MESSAGE_ID],
    ['a deep unread page among 100,000 mails', 'big', 'inbox', true, 5_000],
  ])('reads %s by one index range scan, walked backwards, and primary key lookups', async (_what, who, box, unreadOnly, atMostId) => {
    const userId = who === 'big' ? bigId : smallId;
    const compiled = boxPageQuery(
      board.board.db,
      { userId, atMostId: atMostId as number, limit: 26 },
      box as MailBox,
      unreadOnly as boolean,
    ).compile();
    const explain = dialect === 'sqlite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN (FORMAT JSON)';
    const { rows } = await board.board.db.executeQuery<Record<string, unknown>>({
      ...compiled,
      sql: `${explain} ${compiled.sql}`,
    });
    const index = unreadOnly ? 'mailbox_unread' : 'mailbox_entries_pk';
    if (dialect === 'sqlite') {
      const lines = rows.map((row) => String(row.detail));
      expect(lines).toEqual([
        unreadOnly
          ? 'SEARCH e USING COVERING INDEX mailbox_unread (user_id=? AND message_id<?)'
          : expect.stringMatching(
              /^SEARCH e USING (PRIMARY KEY|INDEX sqlite_autoindex_mailbox_entries_1) \(user_id=\? AND box=\? AND message_id<\?\)$/,
            ),
        'SEARCH m USING INTEGER PRIMARY KEY (rowid=?)',
        'SEARCH p USING INTEGER PRIMARY KEY (rowid=?) LEFT-JOIN',
      ]);
      return;
    }
    const nodes = nodesOf((rows[0]?.['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan);
    expect(nodes[0]?.['Node Type']).toBe('Limit');
    expect(nodes.map((node) => node['Node Type'])).not.toContainEqual(
      expect.stringMatching(/^(Seq Scan|Sort|Bitmap Heap Scan|Hash)/),
    );
    const entries = nodes.find((node) => node['Relation Name'] === 'mailbox_entries');
    expect(entries?.['Index Name']).toBe(index === 'mailbox_entries_pk' ? 'mailbox_entries_pk' : 'mailbox_unread');
    for (const read of nodes.filter((node) => node['Relation Name'] === 'messages')) {
      expect(read['Index Name']).toBe('messages_pkey');
    }
  });

  it('counts the unread mail of /users/me by one primary key lookup', async () => {
    const { db } = board.board;
    await db
      .insertInto('mailCounts')
      .values({ userId: bigId, unreadCount: BIG / 1000 })
      .execute();
    const compiled = db.selectFrom('mailCounts').select('unreadCount').where('userId', '=', bigId).compile();
    const explain = dialect === 'sqlite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN (FORMAT JSON)';
    const { rows } = await db.executeQuery<Record<string, unknown>>({ ...compiled, sql: `${explain} ${compiled.sql}` });
    if (dialect === 'sqlite') {
      expect(rows.map((row) => row.detail)).toEqual(['SEARCH mail_counts USING INTEGER PRIMARY KEY (rowid=?)']);
    } else {
      const nodes = nodesOf((rows[0]?.['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan);
      expect(nodes.map((node) => node['Node Type'])).toEqual([expect.stringMatching(/^Index (Only )?Scan$/)]);
    }
    expect(await board.board.mail.unreadCount({ kind: 'user', user: { id: bigId } } as never)).toBe(BIG / 1000);
  });

  it('searches a small mailbox from its entries, testing each mail against the index by its id', async () => {
    const { db } = board.board;
    // A word in every message of the board (a million, on a real one): the walk must not see them.
    if (dialect === 'postgres') {
      await sql`INSERT INTO message_search (message_id, document)
                SELECT id, to_tsvector('simple', 'common word') FROM messages`.execute(db);
      await sql`ANALYZE message_search`.execute(db);
    } else {
      await sql`INSERT INTO message_search (rowid, text) SELECT id, 'common word' FROM messages`.execute(db);
    }
    const compiled = mailboxDrivenSearch(dialect, {
      userId: smallId,
      query: parseQueryParameter('common'),
      beforeId: null,
      limit: 26,
    }).compile(db);
    const explain = dialect === 'sqlite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN (FORMAT JSON)';
    const { rows } = await db.executeQuery<Record<string, unknown>>({ ...compiled, sql: `${explain} ${compiled.sql}` });
    if (dialect === 'sqlite') {
      const lines = rows.map((row) => String(row.detail));
      // The entries first; then each mail and its index row by id (FTS5's idxStr "=": rowid equality).
      const entries = lines.findIndex((line) => line.includes('mailbox_entries') || line.startsWith('SCAN h'));
      const index = lines.findIndex((line) => line.startsWith('SCAN s VIRTUAL TABLE'));
      expect(entries).toBeGreaterThanOrEqual(0);
      expect(index).toBeGreaterThan(entries);
      expect(lines[index]).toMatch(/^SCAN s VIRTUAL TABLE INDEX \d+:.*=/);
    } else {
      const nodes = nodesOf((rows[0]?.['QUERY PLAN'] as [{ Plan: PlanNode }])[0].Plan);
      const searchReads = nodes.filter((node) => node['Relation Name'] === 'message_search');
      expect(searchReads.map((node) => [node['Node Type'], node['Index Name']])).toEqual([
        [expect.stringMatching(/^Index (Only )?Scan$/), 'message_search_pkey'],
      ]);
    }
    const found = await board.board.db.executeQuery(compiled);
    expect(found.rows).toHaveLength(SMALL);

    // Through the service: the small mailbox searched from its entries, the big one (past
    // MAILBOX_DRIVEN_SEARCH_MAX) from the index; each finds its own mail only, newest first.
    const search = (userId: number) =>
      board.board.mail.searchMail({ kind: 'user', user: { id: userId } } as never, 'common', {
        limit: 25,
        afterKey: null,
      });
    const ids = async (userId: number) => (await search(userId)).items.map((mail) => mail.messageId);
    expect(await ids(smallId)).toEqual(Array.from({ length: SMALL }, (_, index) => BIG + SMALL - index));
    expect(await ids(bigId)).toEqual(Array.from({ length: 25 }, (_, index) => BIG - index));
  });
});
